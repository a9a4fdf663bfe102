//! `linerate tune`: generate a profile derived from the path (every value with its formula),
//! and on Linux or FreeBSD apply it (journaled, read back, restored on failure), on Linux
//! persist it as a sysctl.d drop-in, or roll an apply back.

#[cfg(not(any(target_os = "linux", target_os = "freebsd")))]
mod elsewhere;
#[cfg(target_os = "freebsd")]
mod freebsd;
mod live;

// The live side on this OS: Linux's `/proc/sys` (`live`), FreeBSD's `sysctl(3)`, or a refusal.
#[cfg(not(any(target_os = "linux", target_os = "freebsd")))]
use self::elsewhere as backend;
#[cfg(target_os = "freebsd")]
use self::freebsd as backend;
#[cfg(target_os = "linux")]
use self::live as backend;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use linerate_tuning::profile::{self, Profile};
use linerate_tuning::render::{self, Format};
use linerate_tuning::{Context, Os, Role, Version};
use linerate_units::{BitRate, ByteSize, Duration};

use crate::output;

/// The OS `--os` defaults to: the one this binary runs on, so `tune --apply` on a FreeBSD
/// router tunes FreeBSD.
const DEFAULT_OS: &str = if cfg!(target_os = "freebsd") {
    "freebsd"
} else {
    "linux"
};

/// Arguments of `linerate tune`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  linerate tune --rate 10G --rtt 80ms
  linerate tune --os freebsd --role router --rate 10G --rtt 1ms --iface ix0
  linerate tune --rate 10G --rtt 80ms --dry-run
  linerate tune --rate 10G --rtt 80ms --apply
  linerate tune --rollback")]
pub struct Args {
    /// Target OS: linux, freebsd, openbsd, windows
    #[arg(long, default_value = DEFAULT_OS)]
    pub os: Os,
    /// Role: host, router, firewall, web, vpn
    #[arg(long, default_value = "host")]
    pub role: Role,
    /// Path rate, e.g. 10G
    #[arg(long, value_name = "RATE", value_parser = BitRate::parse_with_unit, allow_hyphen_values = true)]
    pub rate: Option<BitRate>,
    /// Path round-trip time, e.g. 80ms
    #[arg(long, value_name = "DURATION", value_parser = Duration::parse_with_unit, allow_hyphen_values = true)]
    pub rtt: Option<Duration>,
    /// RAM of the target (default: this host's, for --os linux on Linux)
    #[arg(long, value_name = "SIZE", value_parser = ByteSize::parse_with_unit, allow_hyphen_values = true)]
    pub ram: Option<ByteSize>,
    /// CPU cores of the target (default: this host's, for --os linux on Linux)
    #[arg(long)]
    pub cores: Option<u32>,
    /// Target kernel/OS version (default: the running kernel for --os linux, else the catalogue's)
    #[arg(long, value_name = "VERSION")]
    pub kernel: Option<Version>,
    /// Link MTU in bytes (68-65535)
    #[arg(long, default_value_t = 1500, value_parser = clap::value_parser!(u32).range(68..=65535))]
    pub mtu: u32,
    /// Concurrent flows a firewall must track (sizes conntrack / pf states)
    #[arg(long)]
    pub flows: Option<u64>,
    /// Forwarding interface to name in rc.conf (repeatable; FreeBSD router/firewall)
    #[arg(long = "iface", value_name = "IFACE")]
    pub ifaces: Vec<String>,
    /// Output format: sysctl.d, tuned, freebsd, openbsd, powershell (default: the OS's)
    #[arg(long)]
    pub format: Option<Format>,
    /// Write the generated files into this directory instead of printing them
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Machine-readable output (schema linerate.tune/1, linerate.apply/1, linerate.rollback/1)
    #[arg(long)]
    pub json: bool,
    /// Apply the sysctls now through /proc/sys (Linux) or sysctl(3) (FreeBSD, loader tunables
    /// into /boot/loader.conf.d/linerate.conf), journaled and read back
    #[arg(long, conflicts_with = "dry_run")]
    pub apply: bool,
    /// Show what --apply would change (old → new per key) and change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Write the sysctl.d drop-in (90-linerate.conf) atomically
    #[arg(long)]
    pub persist: bool,
    /// Directory --persist writes into
    #[arg(long, value_name = "DIR", default_value = "/etc/sysctl.d")]
    pub sysctl_dir: PathBuf,
    /// Journal directory for --apply and --rollback
    #[arg(long, value_name = "DIR", default_value = linerate_tuning::apply::journal::DEFAULT_DIR)]
    pub journal_dir: PathBuf,
    /// Apply inside this network namespace: only per-namespace keys; others are listed as skipped
    #[arg(long, value_name = "NAME")]
    pub netns: Option<String>,
    /// Apply exactly these settings instead of a generated profile (repeatable); a key that
    /// cannot be set in the target namespace is an error
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Undo an apply: the given journal, or the newest one in --journal-dir
    #[arg(long, value_name = "JOURNAL", num_args = 0..=1)]
    pub rollback: Option<Option<PathBuf>>,
}

#[derive(Debug, serde::Serialize)]
struct TuneReport<'a> {
    schema: &'static str,
    profile: &'a Profile,
    files: &'a [render::RenderedFile],
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(journal) = &args.rollback {
        return backend::rollback(&args, journal.as_deref());
    }
    let live_action = args.apply || args.dry_run || args.persist;
    if live_action && Some(args.os) != Os::running() {
        bail!(
            "--apply, --dry-run and --persist change this host ({}); for {} install the generated files",
            linerate_sys::os::this_os(),
            args.os
        );
    }
    if args.persist && args.netns.is_some() {
        bail!("--persist writes the host's sysctl.d drop-in; it cannot be combined with --netns");
    }
    if !args.set.is_empty() {
        if !live_action {
            bail!("--set needs --apply, --dry-run or --persist");
        }
        let pairs = linerate_tuning::apply::parse_set(&args.set)?;
        return backend::act(&args, &pairs, true, None);
    }
    let ctx = context(&args);
    let profile = profile::generate(&ctx)?;
    if live_action {
        let pairs: Vec<(String, String)> = profile
            .of(profile::Target::Sysctl)
            .map(|s| (s.key.clone(), s.value.clone()))
            .collect();
        return backend::act(&args, &pairs, false, Some(&profile));
    }
    let format = args.format.unwrap_or_else(|| Format::default_for(args.os));
    let files = render::render(&profile, format).map_err(anyhow::Error::msg)?;
    if let Some(dir) = &args.output {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for f in &files {
            let name = f.path.rsplit('/').next().unwrap_or(&f.path);
            let path = dir.join(name);
            linerate_sys::atomic_write(&path, f.content.as_bytes())
                .with_context(|| format!("cannot write {}", path.display()))?;
            if !args.json {
                println!("wrote {}", path.display());
            }
        }
    }
    if args.json {
        output::print_json(&TuneReport {
            schema: "linerate.tune/1",
            profile: &profile,
            files: &files,
        })?;
    } else if args.output.is_none() {
        let many = files.len() > 1;
        let mut text = String::new();
        for f in &files {
            if many {
                text.push_str(&format!("==> {} <==\n", f.path));
            }
            text.push_str(&f.content);
            if many {
                text.push('\n');
            }
        }
        output::print_text(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn context(args: &Args) -> Context {
    let mut ctx = Context::new(args.os);
    if let Some(v) = &args.kernel {
        ctx.version = v.clone();
    }
    crate::cmd::plausible::warn(args.ram, args.rtt);
    ctx.ram = args.ram;
    ctx.cores = args.cores;
    ctx.role = Some(args.role);
    ctx.rate = args.rate;
    ctx.rtt = args.rtt;
    ctx.mtu = args.mtu;
    ctx.flows = args.flows;
    ctx.ifaces = args.ifaces.clone();
    ctx.fill_from_local_host(&linerate_probe::LocalHost::read(), args.kernel.is_some());
    ctx
}
