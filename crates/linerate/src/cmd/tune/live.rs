//! The live side of `tune`: dry-run, apply, persist and rollback.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::bail;
use linerate_tuning::apply::{self, ApplyOptions, Where, journal};
use linerate_tuning::profile::Profile;
use linerate_tuning::render;

use super::Args;
use crate::output;

#[derive(Debug, serde::Serialize)]
struct ApplyReport<'a> {
    schema: &'static str,
    dry_run: bool,
    applied: Option<&'a apply::Applied>,
    persisted: Option<String>,
}

/// Plans, applies and/or persists `pairs`.
pub fn act(
    args: &Args,
    pairs: &[(String, String)],
    explicit: bool,
    profile: Option<&Profile>,
) -> anyhow::Result<ExitCode> {
    let place = match &args.netns {
        Some(name) => Where::Netns(name.clone()),
        None => Where::Host,
    };
    let mut text = String::new();
    let mut applied = None;
    if args.apply || args.dry_run {
        let opts = ApplyOptions {
            journal_dir: args.journal_dir.clone(),
            explicit,
            dry_run: args.dry_run,
        };
        let done = apply::apply_in(&place, pairs, &opts)?;
        describe(&mut text, &done, args.dry_run);
        applied = Some(done);
    }
    let mut persisted = None;
    if args.persist {
        let content = match profile {
            Some(p) => render::render(p, render::Format::SysctlD)
                .map_err(anyhow::Error::msg)?
                .into_iter()
                .map(|f| f.content)
                .collect::<String>(),
            None => {
                let mut c = format!(
                    "# {}\n# Written by linerate tune --persist --set.\n",
                    render::SYSCTL_D_PATH
                );
                for (k, v) in pairs {
                    let _ = writeln!(c, "{k} = {v}");
                }
                c
            }
        };
        let path = apply::persist(&args.sysctl_dir, &content).map_err(|e| {
            anyhow::anyhow!(
                "cannot write {}/90-linerate.conf: {e}",
                args.sysctl_dir.display()
            )
        })?;
        let _ = writeln!(text, "persisted: {}", path.display());
        persisted = Some(path.display().to_string());
    }
    if args.json {
        output::print_json(&ApplyReport {
            schema: "linerate.apply/1",
            dry_run: args.dry_run,
            applied: applied.as_ref(),
            persisted,
        })?;
    } else {
        output::print_text(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn describe(out: &mut String, done: &apply::Applied, dry_run: bool) {
    let place = done.netns.as_ref().map_or("the host".to_string(), |n| {
        format!("network namespace {}", n.name)
    });
    let verb = if dry_run { "would change" } else { "changed" };
    let _ = writeln!(out, "{verb} in {place}:");
    if done.plan.changes.is_empty() {
        let _ = writeln!(out, "  nothing: every value is already as asked");
    }
    for c in &done.plan.changes {
        let _ = writeln!(out, "  {}: {} → {}", c.key, c.old, c.new);
    }
    for k in &done.plan.unchanged {
        let _ = writeln!(out, "  {k}: unchanged");
    }
    for s in &done.plan.skipped {
        let _ = writeln!(out, "  skipped {} = {}: {}", s.key, s.value, s.reason);
    }
    if let Some(j) = &done.journal {
        let _ = writeln!(
            out,
            "journal: {} (undo with linerate tune --rollback {})",
            j.display(),
            j.display()
        );
    }
}

#[derive(Debug, serde::Serialize)]
struct RollbackReport<'a> {
    schema: &'static str,
    rolled_back: &'a apply::RolledBack,
}

/// `--rollback [JOURNAL]`.
pub fn rollback(args: &Args, journal: Option<&Path>) -> anyhow::Result<ExitCode> {
    if args.apply || args.dry_run || args.persist || !args.set.is_empty() {
        bail!("--rollback cannot be combined with --apply, --dry-run, --persist or --set");
    }
    let path = match journal {
        Some(p) => p.to_path_buf(),
        None => journal::latest(&args.journal_dir)?,
    };
    let done = apply::rollback_file(&path, args.netns.as_deref())?;
    if args.json {
        output::print_json(&RollbackReport {
            schema: "linerate.rollback/1",
            rolled_back: &done,
        })?;
    } else {
        let place = done.netns.as_ref().map_or("the host".to_string(), |n| {
            format!("network namespace {}", n.name)
        });
        let mut text = format!("rolled back {} in {place}:\n", path.display());
        for c in &done.restored {
            let _ = writeln!(text, "  {}: {} → {}", c.key, c.old, c.new);
        }
        output::print_text(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}
