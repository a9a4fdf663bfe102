//! `linerate lab rfc2544 NAME`: RFC 2544 throughput of a `router` lab's DUT per frame size.
//! The search's flags (shared with `linerate rfc2544`, `cmd/rfc2544/search.rs`) become the
//! plan of the one RFC 2544 procedure (`linerate_lab::rfc2544::procedure`, which `lab run`'s
//! `rfc2544` workload runs too) on the lab's namespaces; progress, rendering and storing (an
//! experiment `rfc2544-LAB`, one run per frame size, which `linerate report` charts) are
//! `cmd/rfc2544/measure.rs`'s, the same for every test bed.

use std::process::ExitCode;

use anyhow::{Context as _, bail};
use linerate_lab::rfc2544::namespaces::Namespaces;
use linerate_lab::{LabName, StateDir};

use crate::cmd::rfc2544::{measure, search};
use crate::stop::Stop;

/// Arguments of `linerate lab rfc2544`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Per frame size: the generator's ceiling into a sink (the DUT with forwarding off), then the \
search (MLRsearch-style: the first trial at the maximum load measures the forwarding rate; \
short trials narrow NDR and PDR together, the trial growing from --initial-trial to --trial \
over --phases phases while the width goal halves to --width; each final bound holds for \
--repeat trials of --trial), then one-way latency at 10/50/90 % of NDR (--no-latency skips \
it). A result within 10 % \
of the generator's ceiling is marked generator-bound: it measures the generator, not the DUT. \
Loss is frames sent by `linerate gen` minus frames counted by `linerate gen --receive` on \
recv's interface. One measurement of a lab at a time: a second one (lab rfc2544, or lab run's \
frame workloads) is refused, naming the first (pid, command, since when); a lock its holder \
left by dying is taken over, and said.

Examples:
  linerate lab up demo --topology router
  linerate lab rfc2544 demo
  linerate lab rfc2544 demo --frame 64,512,1518,imix --trial 10s
  linerate lab rfc2544 demo --frame 64 --trial 2s --initial-trial 500ms --pdr 0.1% --json")]
pub struct Args {
    /// Lab name (a router lab)
    #[arg(value_parser = parse_name)]
    name: LabName,
    #[command(flatten)]
    search: search::SearchArgs,
}

fn parse_name(s: &str) -> Result<LabName, String> {
    s.parse::<LabName>().map_err(|e| e.to_string())
}

/// Runs `linerate lab rfc2544`.
pub fn run(dir: &StateDir, a: Args) -> anyhow::Result<ExitCode> {
    if !linerate_sys::is_root() {
        bail!(
            "linerate lab rfc2544 needs root (it enters the lab's namespaces and opens packet sockets)"
        );
    }
    let plan = search::plan(&a.search)?;
    let state = linerate_lab::control::load(dir, &a.name)?;
    let binary = std::env::current_exe().context("locate the linerate executable")?;
    let stop = Stop::install()?;
    let interrupted = || stop.requested();
    let mut bed = Namespaces::router(dir, &state, binary, a.search.threads, &interrupted)?;
    let bed = measure::Bed {
        bed: &mut bed,
        experiment: format!("rfc2544-{}", a.name),
        title: format!("lab {} (gen → dut → recv)", a.name),
        path: "gen → recv".into(),
        context: format!("RFC 2544 throughput of lab {}", a.name),
    };
    measure::run(bed, &plan, &a.search, &stop)
}
