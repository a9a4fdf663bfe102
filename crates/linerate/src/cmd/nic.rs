//! `linerate nic`: the NIC inventory (driver, link, bus verdict, queues, rings, offloads, IRQs,
//! what bounds packet rate), and `--watch`, live per-queue rates.

mod freebsd;
mod render;
mod watch;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use linerate_probe::{HostSnapshot, ProbeRoots};
use linerate_tuning::Role;
use linerate_tuning::hardware::{self, HardwareContext};
use linerate_units::Duration;

use crate::output;

/// Arguments of `linerate nic`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  linerate nic\n  linerate nic eth0 --json\n  \
                        linerate nic --watch eth0 eth1 -i 1s\n  \
                        linerate nic --watch --count 10 --json-stream\n  \
                        linerate nic --snapshot-out host.json\n  \
                        linerate nic --snapshot-in host.json --findings --role router"
)]
pub struct Args {
    /// Interfaces to show (default: all)
    #[arg(value_name = "IFACE")]
    pub interfaces: Vec<String>,

    /// Print the inventory as JSON (schema linerate.nic/1)
    #[arg(long, conflicts_with_all = ["watch"])]
    pub json: bool,

    /// Also judge the hardware for a role and print the findings
    #[arg(long, conflicts_with = "watch")]
    pub findings: bool,

    /// The host's role for --findings: host, router, firewall, web, vpn
    #[arg(long, default_value = "host", value_parser = parse_role)]
    pub role: Role,

    /// Save the captured host snapshot as JSON (schema linerate.host-snapshot/1)
    #[arg(long, value_name = "FILE", conflicts_with = "watch")]
    pub snapshot_out: Option<PathBuf>,

    /// Show a saved snapshot instead of the live host (or a FreeBSD `sysctl -a` dump taken on
    /// a router: its NICs, queues and CPUs)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["watch", "sysfs_root", "procfs_root"])]
    pub snapshot_in: Option<PathBuf>,

    /// Live per-queue packet and bit rates, drops, errors and softnet counters
    #[arg(long)]
    pub watch: bool,

    /// Sampling interval for --watch
    #[arg(
        short = 'i',
        long,
        default_value = "1s",
        value_name = "DURATION",
        allow_hyphen_values = true
    )]
    pub interval: Duration,

    /// Stop --watch after N intervals
    #[arg(long, value_name = "N", requires = "watch",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,

    /// Stop --watch after this long
    #[arg(
        short = 't',
        long,
        value_name = "DURATION",
        requires = "watch",
        allow_hyphen_values = true
    )]
    pub duration: Option<Duration>,

    /// With --watch: one JSON object per interval per line (schema linerate.nic-watch/1)
    #[arg(long, requires = "watch")]
    pub json_stream: bool,

    /// Read sysfs from this directory instead of /sys (captured trees, tests)
    #[arg(long, hide = true, value_name = "DIR")]
    pub sysfs_root: Option<PathBuf>,

    /// Read procfs from this directory instead of /proc (captured trees, tests)
    #[arg(long, hide = true, value_name = "DIR")]
    pub procfs_root: Option<PathBuf>,
}

fn parse_role(s: &str) -> Result<Role, String> {
    s.parse()
}

impl Args {
    fn roots(&self) -> anyhow::Result<ProbeRoots> {
        match (&self.sysfs_root, &self.procfs_root) {
            (None, None) => Ok(ProbeRoots::live()),
            (sys, proc) => {
                let sys = sys.clone().unwrap_or_else(|| PathBuf::from("/sys"));
                let proc = proc.clone().unwrap_or_else(|| PathBuf::from("/proc"));
                for (flag, dir) in [("--sysfs-root", &sys), ("--procfs-root", &proc)] {
                    if !dir.is_dir() {
                        bail!("{flag} {}: not a directory", dir.display());
                    }
                }
                Ok(ProbeRoots::captured(sys, proc))
            }
        }
    }
}

/// The `--json` document.
#[derive(serde::Serialize)]
struct NicReport<'a> {
    schema: &'static str,
    snapshot: &'a HostSnapshot,
    bus: Vec<hardware::BusCheck>,
    limits: std::collections::BTreeMap<String, Vec<hardware::Limit>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    findings: Option<Vec<linerate_tuning::Finding>>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.interval.as_secs_f64() <= 0.0 {
        bail!("--interval {}: must be greater than zero", args.interval);
    }
    if let Some(d) = args.duration.filter(|d| d.as_secs_f64() <= 0.0) {
        bail!("--duration {d}: must be greater than zero");
    }
    let roots = args.roots()?;
    if args.watch {
        return watch::run(&args, roots);
    }
    let mut snapshot = match &args.snapshot_in {
        Some(path) => HostSnapshot::read_file(path)?,
        None => HostSnapshot::capture(&roots),
    };
    if let Some(path) = &args.snapshot_out {
        snapshot.save(path).context("--snapshot-out")?;
    }
    snapshot.keep_interfaces(&args.interfaces)?;
    let findings = args.findings.then(|| {
        let ctx = HardwareContext::for_snapshot(&snapshot, args.role);
        hardware::hardware_findings(&snapshot, &ctx)
    });
    if args.json {
        let report = NicReport {
            schema: "linerate.nic/1",
            bus: hardware::bus_checks(&snapshot),
            limits: snapshot
                .interfaces()
                .iter()
                .map(|i| (i.name.clone(), hardware::packet_rate_limits(&snapshot, i)))
                .collect(),
            snapshot: &snapshot,
            findings,
        };
        output::print_json(&report)?;
    } else {
        let mut text = render::inventory(&snapshot);
        if let Some(findings) = &findings {
            text.push_str(&render::findings(findings, args.role));
        }
        output::print_text(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}
