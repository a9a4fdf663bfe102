//! `linerate audit`: judge the live host's (or a `sysctl -a` snapshot's) settings with the lint
//! rules, plus recommendations for the stated role and path.
//!
//! The report is one list of [`Finding`]s. Settings findings come from `linerate-tuning`;
//! hardware findings (NICs, bus, IRQs: tuning's hardware rules over a `linerate-probe`
//! snapshot) are appended to the same list in [`collect`], so rendering, `--json` and
//! `--fail-on` treat both alike.

mod vpn;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use linerate_tuning::{Context, Finding, Os, Role, audit, hardware};

use crate::cmd::lint::report;
use crate::cmd::lint::target::TargetArgs;
use crate::output;
use linerate_tuning::finding::{FailOn, Summary, sort};

/// Arguments of `linerate audit`.
#[derive(Debug, clap::Args)]
#[command(after_help = concat!(
    "Severity: error = the setting will fail (no such key on the target version, a value the \
     kernel rejects, a read-only key) or does harm; warning = a measurable cost or risk, shown \
     with its formula and threshold; info = style, redundancy, or outside linerate's knowledge \
     (a key with no rules, or one linerate cannot place, is info[unchecked], never an error).\n\n",
    "Exit status: 0 nothing at or above --fail-on, 1 findings, 2 usage or I/O error.\n\n",
    "Examples:\n",
    "  linerate audit --role router --rate 10G --rtt 1ms\n",
    "  linerate audit --role vpn --db runs.db\n",
    "  linerate audit --snapshot-out host.json\n",
    "  linerate audit --snapshot sysctl-a.txt --host-snapshot host.json",
))]
pub struct Args {
    /// Audit a `sysctl -a` dump (from any OS) instead of the live host
    #[arg(long, value_name = "FILE")]
    pub snapshot: Option<PathBuf>,
    /// Judge the hardware of a saved host snapshot (`linerate.host-snapshot/1`, from
    /// `--snapshot-out` or `linerate nic --snapshot-out`) instead of this host's; a FreeBSD
    /// `sysctl -a` dump works too, and then its settings are judged as well
    #[arg(long, value_name = "FILE")]
    pub host_snapshot: Option<PathBuf>,
    /// Save this host's snapshot (NICs, bus, CPUs, IRQs, softnet) for offline audits
    #[arg(long, value_name = "FILE")]
    pub snapshot_out: Option<PathBuf>,
    /// Judge settings only, not NICs, bus and CPUs
    #[arg(long)]
    pub no_hardware: bool,
    /// OS of the snapshot (default: detected)
    #[arg(long)]
    pub os: Option<Os>,
    /// Audit the settings inside this network namespace (Linux)
    #[arg(long, value_name = "NAME", conflicts_with = "snapshot")]
    pub netns: Option<String>,
    #[command(flatten)]
    pub target: TargetArgs,
    /// With --role vpn: the results database whose newest tunnel run (`lab run` through a
    /// tunnel) is judged with the settings
    #[command(flatten)]
    pub db: crate::cmd::history::db::DbArgs,
    /// Exit 1 when a finding is at or above: error, warning, info, never
    #[arg(long, default_value = "error", value_name = "SEVERITY")]
    pub fail_on: FailOn,
    /// Machine-readable output (schema linerate.audit/1)
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, serde::Serialize)]
struct AuditReport<'a> {
    schema: &'static str,
    source: String,
    context: &'a Context,
    summary: Summary,
    findings: &'a [Finding],
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (source, ctx, mut findings) = collect(&args)?;
    sort(&mut findings);
    if args.json {
        output::print_json(&AuditReport {
            schema: "linerate.audit/1",
            source,
            context: &ctx,
            summary: Summary::of(&findings),
            findings: &findings,
        })?;
    } else {
        let mut text = format!(
            "audit of {source}: {} {}{}\n\n",
            ctx.os,
            ctx.version,
            ctx.role.map(|r| format!(", role {r}")).unwrap_or_default()
        );
        text.push_str(&report::render(&findings, "(values in force)"));
        output::print_text(&text)?;
    }
    Ok(if args.fail_on.tripped(&findings) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Whether `path` holds `sysctl` text rather than a saved JSON snapshot (unreadable files are
/// left to the loader, which names the error).
fn is_sysctl_text(path: &std::path::Path) -> bool {
    std::fs::read(path).is_ok_and(|b| !String::from_utf8_lossy(&b).trim_start().starts_with('{'))
}

/// Builds the audit: where the values came from, the context used, and every finding.
fn collect(args: &Args) -> anyhow::Result<(String, Context, Vec<Finding>)> {
    // A FreeBSD `sysctl -a` given as the host snapshot carries that host's settings too: judge
    // them from it, not this host's.
    let host_dump = match (&args.snapshot, &args.host_snapshot) {
        (None, Some(p)) if is_sysctl_text(p) => Some(p),
        _ => None,
    };
    if host_dump.is_some() && args.netns.is_some() {
        bail!(
            "--host-snapshot with a sysctl dump judges that dump's settings; it cannot be combined with --netns"
        );
    }
    let (source, ctx, entries) = match args.snapshot.as_ref().or(host_dump) {
        Some(path) => {
            let name = path.display().to_string();
            let bytes = std::fs::read(path).with_context(|| format!("cannot read {name}"))?;
            let (os, entries) = audit::source::dump(&name, &bytes, args.os)?;
            (
                format!("snapshot {name}"),
                context(args, os, false),
                entries,
            )
        }
        None => {
            let (source, os, entries) = audit::source::live(args.netns.as_deref())?;
            (source, context(args, os, true), entries)
        }
    };
    let mut findings = audit::audit(&entries, &ctx)?;
    if ctx.role == Some(Role::Vpn) {
        let store = args.db.open_if_exists()?;
        let run = match &store {
            Some(s) => vpn::newest_tunnel_run(s)?,
            None => None,
        };
        let path = args.db.path()?.display().to_string();
        findings.extend(linerate_tuning::vpn::findings(
            run.as_ref(),
            &entries,
            &path,
        ));
    }
    // Hardware findings (tuning's hardware rules over a linerate-probe snapshot) join the same
    // list: a saved host snapshot, or this host when its live settings are audited.
    let live_host = args.snapshot.is_none() && args.netns.is_none() && host_dump.is_none();
    let host = match &args.host_snapshot {
        Some(path) => Some(linerate_probe::HostSnapshot::read_file(path)?),
        // --snapshot-out captures this host even when its hardware is not judged.
        None if live_host && (!args.no_hardware || args.snapshot_out.is_some()) => Some(
            linerate_probe::HostSnapshot::capture(&linerate_probe::ProbeRoots::live()),
        ),
        None => None,
    };
    if let Some(host) = host {
        if let Some(path) = &args.snapshot_out {
            host.save(path).context("--snapshot-out")?;
        }
        if !args.no_hardware {
            let role = ctx.role.unwrap_or(Role::Host);
            let hw = hardware::HardwareContext::for_snapshot(&host, role);
            findings.extend(hardware::hardware_findings(&host, &hw));
        }
    } else if args.snapshot_out.is_some() {
        bail!(
            "--snapshot-out saves this host's snapshot: it cannot be combined with --snapshot or --netns"
        );
    }
    Ok((source, ctx, findings))
}

fn context(args: &Args, os: Os, live: bool) -> Context {
    let mut ctx = args.target.context(os);
    if live {
        ctx.fill_from_local_host(
            &linerate_probe::LocalHost::read(),
            args.target.kernel.is_some(),
        );
    }
    ctx
}
