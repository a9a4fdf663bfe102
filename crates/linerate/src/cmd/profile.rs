//! `linerate profile`: where the CPU time goes. Samples call stacks on every CPU (or of one
//! process) through `perf_event_open` (hardware cycles where the machine has a PMU, the
//! software `cpu-clock` otherwise, and the output says which), for a duration, until Ctrl-C,
//! or while a command runs; resolves kernel frames from `/proc/kallsyms` and user frames to
//! `module+offset`; prints the top functions (self and total share of the samples) and writes
//! folded stacks and a flame graph SVG. The sampling and its resolution are
//! `linerate-profile`'s; the flame graph is drawn by `linerate-report`.

use linerate_units::Duration;
use std::ffi::OsString;
use std::path::PathBuf;

/// Arguments of `linerate profile`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Sampling needs root (or CAP_PERFMON, or kernel.perf_event_paranoid at most \
-1 for every CPU, 1 for one process's kernel stacks). Without -t and without a command it \
samples until Ctrl-C.

Examples:
  linerate profile -t 10s
  linerate profile -t 5s --folded out.folded --flamegraph out.svg
  linerate profile --json -- linerate client 198.18.0.2 -t 10s
  linerate profile -t 1s -- sh -c 'while :; do :; done'
  linerate profile --pid 1234 -t 30s --frequency 999
  linerate profile --cpu 1 -t 5s"
)]
pub struct Args {
    /// How long to sample, e.g. 10s; with a command, it is stopped (SIGTERM) if it runs longer
    /// [default: until the command exits, or Ctrl-C]
    #[arg(short = 't', long, value_name = "DURATION", allow_hyphen_values = true)]
    duration: Option<Duration>,

    /// Samples per second on each CPU (1 to 10000)
    #[arg(
        long,
        value_name = "HZ",
        default_value_t = 99,
        value_parser = clap::value_parser!(u64).range(1..=10000)
    )]
    frequency: u64,

    /// Sample this process only (and the children it forks from then on), not every CPU
    #[arg(long, value_name = "PID", value_parser = clap::value_parser!(i32).range(1..), conflicts_with = "command")]
    pid: Option<i32>,

    /// Sample only these CPUs (`0`, `0-3,6`), e.g. the ones a NIC's queues interrupt
    /// [default: every online CPU]
    #[arg(long, value_name = "LIST")]
    cpu: Option<String>,

    /// Write the folded stacks (stackcollapse format, `root;…;leaf COUNT` per line) to FILE
    #[arg(long, value_name = "FILE")]
    folded: Option<PathBuf>,

    /// Write a flame graph (SVG, self-contained, searchable) to FILE
    #[arg(long, value_name = "FILE")]
    flamegraph: Option<PathBuf>,

    /// Print JSON (schema linerate.profile/1) instead of the text table; the command's own
    /// standard output then goes to standard error
    #[arg(long)]
    json: bool,

    /// How many functions the top list shows
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=100000))]
    top: u64,

    /// A command to run: sampling (every CPU, or --pid) lasts until it exits
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

#[cfg(not(target_os = "linux"))]
pub fn run(_args: Args) -> anyhow::Result<std::process::ExitCode> {
    Err(linerate_profile::ProfileError::NeedsLinux {
        os: std::env::consts::OS,
    }
    .into())
}

#[cfg(target_os = "linux")]
pub use linux::run;

#[cfg(target_os = "linux")]
mod linux;
