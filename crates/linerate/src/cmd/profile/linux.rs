//! `linerate profile` on Linux: the flags turned into a session of `linerate-profile`, its
//! result written (folded stacks, flame graph) and rendered (text table or JSON).

use std::io::Write as _;
use std::process::{Command, ExitCode, Stdio};

use anyhow::Context;
use linerate_profile::session::{self, Session};
use linerate_profile::{Breakdown, Folded, ProfileError, Share, Target, TopFunction, cpus};

use super::Args;
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
        None => cpus::online_cpus()?,
        Some(list) => cpus::chosen(list, &cpus::online_cpus()?)?,
    };
    let command = args.command.split_first().map(|(prog, rest)| {
        let mut c = Command::new(prog);
        // With --json the command's output goes to stderr: stdout is the JSON alone.
        c.args(rest).stdout(if args.json {
            Stdio::from(std::io::stderr())
        } else {
            Stdio::inherit()
        });
        c
    });
    let requested = || stop.requested();
    let finished = session::run(Session {
        target,
        cpus: &cpus,
        frequency: args.frequency,
        duration: args.duration.map(std::time::Duration::from),
        command,
        stop: &requested,
    })
    .map_err(|e| match e {
        ProfileError::NoSuchProcess { .. } => anyhow::Error::new(e).context("--pid"),
        e => e.into(),
    })?;
    let captured = &finished.captured;
    write_outputs(&args, &captured.folded)?;
    let folded = &captured.folded;
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
        top: folded.top(usize::try_from(args.top).unwrap_or(usize::MAX)),
        breakdown: captured.attribution.breakdown(),
    };
    if args.json {
        output::print_json(&report)?;
    } else {
        output::print_text(&text(&report))?;
    }
    if let Some(s) = finished
        .command_status
        .filter(|s| !s.success() && !finished.command_stopped)
    {
        output::warn(&format!("the profiled command exited with {s}"));
    }
    if captured.kernel_symbols == 0 {
        output::warn("/proc/kallsyms shows no addresses (not root?): kernel frames are unnamed");
    }
    match stop.signal() {
        Some(sig) => Ok(stop::exit_code(sig)),
        None => Ok(ExitCode::SUCCESS),
    }
}

fn write_outputs(args: &Args, folded: &Folded) -> anyhow::Result<()> {
    if let Some(path) = &args.folded {
        linerate_sys::atomic_write(path, folded.text().as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = &args.flamegraph {
        let svg = linerate_report::flame::draw(&folded.text(), "linerate profile")?;
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
    let list = |v: &[Share]| {
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
