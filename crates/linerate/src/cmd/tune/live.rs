//! The live side of `tune`: dry-run, apply, persist and rollback. Linux's are here (through
//! `/proc/sys`, on the host or in a network namespace); FreeBSD's (`sysctl(3)` and the loader
//! drop-in) are in `tune/freebsd.rs` and share the reports and their rendering.

use std::fmt::Write as _;
#[cfg(target_os = "linux")]
use std::path::Path;
#[cfg(target_os = "linux")]
use std::process::ExitCode;

#[cfg(target_os = "linux")]
use anyhow::bail;
use linerate_tuning::apply;
#[cfg(target_os = "linux")]
use linerate_tuning::apply::{ApplyOptions, Where, journal};
#[cfg(target_os = "linux")]
use linerate_tuning::profile::Profile;
#[cfg(target_os = "linux")]
use linerate_tuning::render;

#[cfg(target_os = "linux")]
use super::Args;
#[cfg(target_os = "linux")]
use crate::output;

#[derive(Debug, serde::Serialize)]
pub(super) struct ApplyReport<'a> {
    pub schema: &'static str,
    pub dry_run: bool,
    pub applied: Option<&'a apply::Applied>,
    pub persisted: Option<String>,
}

/// Plans, applies and/or persists `pairs`.
#[cfg(target_os = "linux")]
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
            None => render::sysctl_d_for_pairs(pairs),
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

pub(super) fn describe(out: &mut String, done: &apply::Applied, dry_run: bool) {
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
    if let Some(b) = &done.boot_file {
        let verb = match (b.changed, dry_run) {
            (false, _) => "already holds",
            (true, true) => "would write",
            (true, false) => "wrote",
        };
        let _ = writeln!(
            out,
            "boot file {} ({verb}; needs reboot):",
            b.path.display()
        );
        for (k, v) in &b.settings {
            let _ = writeln!(out, "  {k}=\"{v}\"");
        }
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
pub(super) struct RollbackReport<'a> {
    pub schema: &'static str,
    pub rolled_back: &'a apply::RolledBack,
}

/// `--rollback [JOURNAL]`.
#[cfg(target_os = "linux")]
pub fn rollback(args: &Args, journal: Option<&Path>) -> anyhow::Result<ExitCode> {
    if args.apply || args.dry_run || args.persist || !args.set.is_empty() {
        bail!("--rollback cannot be combined with --apply, --dry-run, --persist or --set");
    }
    let path = match journal {
        Some(p) => p.to_path_buf(),
        None => journal::latest(&args.journal_dir)?,
    };
    let done = apply::rollback_file(&path, args.netns.as_deref())?;
    print_rollback(args.json, &path, &done)?;
    Ok(ExitCode::SUCCESS)
}

/// Prints what a rollback did (Linux and FreeBSD alike).
pub(super) fn print_rollback(
    json: bool,
    path: &std::path::Path,
    done: &apply::RolledBack,
) -> anyhow::Result<()> {
    if json {
        return crate::output::print_json(&RollbackReport {
            schema: "linerate.rollback/1",
            rolled_back: done,
        });
    }
    let place = done.netns.as_ref().map_or("the host".to_string(), |n| {
        format!("network namespace {}", n.name)
    });
    let mut text = format!("rolled back {} in {place}:\n", path.display());
    for c in &done.restored {
        let _ = writeln!(text, "  {}: {} → {}", c.key, c.old, c.new);
    }
    for f in &done.files {
        let _ = writeln!(
            text,
            "  {}: restored as it was before the apply",
            f.display()
        );
    }
    crate::output::print_text(&text)
}
