//! `linerate profile`: where the CPU time goes. Samples call stacks on every CPU (or of one
//! process) through `perf_event_open` (hardware cycles where the machine has a PMU, the
//! software `cpu-clock` otherwise, and the output says which), for a duration, until Ctrl-C,
//! or while a command runs; resolves kernel frames from `/proc/kallsyms` and user frames to
//! `module+offset`; prints the top functions (self and total share of the samples) and writes
//! folded stacks and a flame graph SVG (drawn by the inferno crate).

#[cfg(target_os = "linux")]
pub mod attribution;
#[cfg(target_os = "linux")]
pub mod capture;
// Reading stored profiles (compare, report) works everywhere; taking one needs Linux.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub mod flame;
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub mod fold;
#[cfg(target_os = "linux")]
mod kallsyms;
#[cfg(target_os = "linux")]
mod maps;
pub mod shares;

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
    anyhow::bail!(
        "linerate profile needs Linux: it samples through perf_event_open, which {} does not \
         have (on FreeBSD, pmcstat samples CPU_CLK_UNHALTED_CORE)",
        std::env::consts::OS
    )
}

#[cfg(target_os = "linux")]
pub use linux::run;

#[cfg(target_os = "linux")]
mod linux {
    use std::io::Write as _;
    use std::process::{Child, ExitCode};
    use std::time::Instant;

    use anyhow::Context;
    use linerate_sys::perf::Target;

    use super::Args;
    use super::attribution::Breakdown;
    use super::capture::{Capture, online_cpus};
    use super::fold::{Folded, TopFunction};
    use crate::output;
    use crate::stop::{self, Stop};

    /// The JSON document (schema linerate.profile/1).
    #[derive(Debug, serde::Serialize)]
    struct Report {
        schema: &'static str,
        event: &'static str,
        frequency_hz: u64,
        target: String,
        cpus: usize,
        duration_s: f64,
        samples: u64,
        lost: u64,
        kernel_symbols: usize,
        top: Vec<TopFunction>,
        #[serde(flatten)]
        breakdown: Breakdown,
    }

    pub fn run(args: Args) -> anyhow::Result<ExitCode> {
        let stop = Stop::install()?;
        let target = args.pid.map_or(Target::System, Target::Process);
        let cpus = match &args.cpu {
            None => online_cpus()?,
            Some(list) => chosen_cpus(list, &online_cpus()?)?,
        };
        let capture = Capture::start(target, &cpus, args.frequency)?;
        let mut child: Option<Child> = match args.command.split_first() {
            // With --json the command's output goes to stderr: stdout is the JSON alone.
            Some((prog, rest)) => match std::process::Command::new(prog)
                .args(rest)
                .stdout(if args.json {
                    std::process::Stdio::from(std::io::stderr())
                } else {
                    std::process::Stdio::inherit()
                })
                .spawn()
            {
                Ok(c) => Some(c),
                Err(e) => {
                    let _ = capture.finish();
                    return Err(e).with_context(|| format!("starting {}", prog.to_string_lossy()));
                }
            },
            None => None,
        };
        let started = Instant::now();
        let end = args
            .duration
            .map(|d| started + std::time::Duration::from(d));
        let mut status = None;
        loop {
            let tick = Instant::now() + std::time::Duration::from_millis(50);
            stop.sleep_until(end.map_or(tick, |e| e.min(tick)));
            if let Some(c) = child.as_mut() {
                if let Some(s) = c.try_wait().context("waiting for the command")? {
                    status = Some(s);
                    break;
                }
            }
            if stop.requested() || end.is_some_and(|e| Instant::now() >= e) {
                break;
            }
            if let Target::Process(p) = target {
                if !std::path::Path::new(&format!("/proc/{p}")).exists() {
                    break;
                }
            }
        }
        let captured = capture.finish()?;
        let mut stopped_command = false;
        if let Some(mut c) = child.take() {
            if status.is_none() {
                stopped_command = true;
                // Stopped by a signal or the duration first: the command goes too.
                let _ = linerate_sys::process::kill(c.id(), linerate_sys::signal::Signal::SIGTERM);
                status = c.wait().ok();
            }
        }
        write_outputs(&args, &captured.folded)?;
        let folded = &captured.folded;
        let top = folded.top(usize::try_from(args.top).unwrap_or(usize::MAX));
        let report = Report {
            schema: "linerate.profile/1",
            event: captured.event.name(),
            frequency_hz: args.frequency,
            target: match target {
                Target::System => "system".to_owned(),
                Target::Process(p) => format!("pid {p}"),
            },
            cpus: cpus.len(),
            duration_s: (captured.seconds * 1000.0).round() / 1000.0,
            samples: folded.samples(),
            lost: captured.lost,
            kernel_symbols: captured.kernel_symbols,
            top,
            breakdown: captured.attribution.breakdown(),
        };
        if args.json {
            output::print_json(&report)?;
        } else {
            output::print_text(&text(&report))?;
        }
        if let Some(s) = status.filter(|s| !s.success() && !stopped_command) {
            output::warn(&format!("the profiled command exited with {s}"));
        }
        if captured.kernel_symbols == 0 {
            output::warn(
                "/proc/kallsyms shows no addresses (not root?): kernel frames are unnamed",
            );
        }
        match stop.signal() {
            Some(sig) => Ok(stop::exit_code(sig)),
            None => Ok(ExitCode::SUCCESS),
        }
    }

    /// The CPUs of `--cpu LIST`, each of which must be online.
    fn chosen_cpus(list: &str, online: &[u32]) -> anyhow::Result<Vec<u32>> {
        let mut cpus = super::capture::parse_cpu_list(list)
            .map_err(|e| anyhow::anyhow!("--cpu {list:?}: {e} (a list such as 0 or 0-3,6)"))?;
        cpus.sort_unstable();
        cpus.dedup();
        if let Some(c) = cpus.iter().find(|c| !online.contains(c)) {
            anyhow::bail!(
                "--cpu {list}: CPU {c} is not online (online: {})",
                online
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            );
        }
        Ok(cpus)
    }

    fn write_outputs(args: &Args, folded: &Folded) -> anyhow::Result<()> {
        if let Some(path) = &args.folded {
            linerate_sys::atomic_write(path, folded.text().as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
        }
        if let Some(path) = &args.flamegraph {
            let svg = super::flame::draw(folded, "linerate profile")?;
            linerate_sys::atomic_write(path, &svg)
                .with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(())
    }

    fn text(r: &Report) -> String {
        let mut out = Vec::new();
        let _ = writeln!(
            out,
            "{} samples of {} at {} Hz on {} CPUs ({}), {:.1} s; {} lost",
            r.samples, r.event, r.frequency_hz, r.cpus, r.target, r.duration_s, r.lost
        );
        if r.event == "cpu-clock" {
            let _ = writeln!(
                out,
                "event: software cpu-clock (no hardware PMU for cycles here)"
            );
        }
        let _ = writeln!(out, "\n  self%  total%  function");
        for t in &r.top {
            let _ = writeln!(
                out,
                "{:>7.2} {:>7.2}  {}",
                t.self_percent, t.total_percent, t.function
            );
        }
        let b = &r.breakdown;
        let list = |v: &[super::attribution::Share]| {
            v.iter()
                .map(|s| format!("{} {:.1}%", s.name, s.percent))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(out, "\nper CPU: {}", list(&b.by_cpu));
        let _ = writeln!(out, "where: {}", list(&b.by_context));
        if !b.by_subsystem.is_empty() {
            let _ = writeln!(
                out,
                "subsystems (inclusive, overlapping): {}",
                list(&b.by_subsystem)
            );
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    #[cfg(test)]
    mod tests {
        use super::super::capture::parse_cpu_list;

        #[test]
        fn cpu_lists_parse() {
            assert_eq!(parse_cpu_list("0-3,6").expect("valid"), vec![0, 1, 2, 3, 6]);
            assert_eq!(parse_cpu_list("0").expect("valid"), vec![0]);
            assert!(parse_cpu_list("x").is_err());
            assert!(parse_cpu_list("").is_err());
        }

        #[test]
        fn chosen_cpus_must_be_online() {
            use super::chosen_cpus;
            assert_eq!(chosen_cpus("1,0,1", &[0, 1]).expect("valid"), vec![0, 1]);
            let e = chosen_cpus("0-2", &[0, 1]).expect_err("cpu 2 offline");
            assert!(
                e.to_string().contains("CPU 2 is not online (online: 0,1)"),
                "{e}"
            );
            assert!(
                chosen_cpus("a", &[0])
                    .expect_err("bad")
                    .to_string()
                    .contains("--cpu")
            );
        }
    }
}
