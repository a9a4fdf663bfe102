//! `tune --apply`, `--dry-run` and `--rollback` on FreeBSD: run-time sysctls through
//! `sysctl(3)` with the journal, read-back and restore Linux uses, loader tunables into
//! `/boot/loader.conf.d/linerate.conf` (needs a reboot), rc.conf variables and commands listed
//! as not applied. `--persist` and `--netns` are Linux's and say why.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::bail;
use linerate_sys::os::NotOnThisOs;
use linerate_tuning::apply::freebsd::{self, LiveSysctls, Paths, Request, SysctlBackend};
use linerate_tuning::apply::{ApplyOptions, journal};
use linerate_tuning::profile::Profile;

use super::Args;
use super::live::{ApplyReport, describe, print_rollback};
use crate::output;

fn refuse_linux_only(args: &Args) -> anyhow::Result<()> {
    if args.netns.is_some() {
        return Err(NotOnThisOs::linux("--netns", "it names a network namespace")
            .instead(
                "run linerate tune inside the jail (jexec JAIL linerate tune …) to change a vnet \
                 jail's settings",
            )
            .into());
    }
    if args.persist {
        return Err(NotOnThisOs::linux(
            "--persist",
            "it writes a sysctl.d drop-in, which FreeBSD does not read",
        )
        .instead(format!(
            "its run-time sysctls persist in /etc/sysctl.conf or /etc/sysctl.conf.local, files \
             linerate does not edit; --apply sets them now (and writes the loader tunables to \
             {}), and --format freebsd --output DIR writes the lines to merge",
            freebsd::LOADER_DROPIN
        ))
        .into());
    }
    Ok(())
}

/// Plans and applies `pairs` (or the profile's settings) on this FreeBSD host.
pub fn act(
    args: &Args,
    pairs: &[(String, String)],
    explicit: bool,
    profile: Option<&Profile>,
) -> anyhow::Result<ExitCode> {
    refuse_linux_only(args)?;
    let mut backend = SysctlBackend::new(LiveSysctls);
    let request = match profile {
        Some(p) if !explicit => Request::from_profile(p),
        _ => Request::from_pairs(&mut backend, pairs)?,
    };
    let opts = ApplyOptions {
        journal_dir: args.journal_dir.clone(),
        explicit,
        dry_run: args.dry_run,
    };
    let done = freebsd::apply(&mut backend, &request, &opts, &Paths::live(&opts))?;
    if args.json {
        output::print_json(&ApplyReport {
            schema: "linerate.apply/1",
            dry_run: args.dry_run,
            applied: Some(&done),
            persisted: None,
        })?;
    } else {
        let mut text = String::new();
        describe(&mut text, &done, args.dry_run);
        if done.boot_file.as_ref().is_some_and(|b| b.changed) && !args.dry_run {
            let _ = writeln!(text, "reboot for the boot file's tunables to take effect");
        }
        output::print_text(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `--rollback [JOURNAL]`: the sysctls back through `sysctl(3)`, the loader drop-in back as it
/// was (removed if the apply created it).
pub fn rollback(args: &Args, journal: Option<&Path>) -> anyhow::Result<ExitCode> {
    if args.apply || args.dry_run || args.persist || !args.set.is_empty() {
        bail!("--rollback cannot be combined with --apply, --dry-run, --persist or --set");
    }
    refuse_linux_only(args)?;
    let path = match journal {
        Some(p) => p.to_path_buf(),
        None => journal::latest(&args.journal_dir)?,
    };
    let done = freebsd::rollback_path(&mut SysctlBackend::new(LiveSysctls), &path)?;
    print_rollback(args.json, &path, &done)?;
    Ok(ExitCode::SUCCESS)
}
