//! `linerate lab rfc2544 NAME`: RFC 2544 throughput of a `router` lab's DUT per frame size.
//! The flags become the plan of the one RFC 2544 procedure (`linerate_lab::rfc2544::procedure`,
//! which `lab run`'s `rfc2544` workload runs too) on the lab's namespaces; its progress is
//! shown on standard error, its result rendered as a table (`rfc2544/render.rs`) or JSON and
//! stored as an experiment (one run per frame size, `rfc2544/store.rs`) that `linerate report`
//! charts.

mod render;

use std::process::ExitCode;

use anyhow::{Context as _, bail};
use linerate_calc::ethernet::FrameSpec;
use linerate_lab::rfc2544::bed::LinkRate;
use linerate_lab::rfc2544::namespaces::Namespaces;
use linerate_lab::rfc2544::procedure::{self, Plan, Progress, Throughput};
use linerate_lab::rfc2544::search;
use linerate_lab::{LabName, StateDir};
use linerate_store::rfc2544::{FrameResult, SearchMethod, Settings};
use linerate_units::{BitRate, Duration, PacketRate, Percent};
use serde::Serialize;

use crate::output;
use crate::stop::Stop;

/// The JSON schema of the results.
pub const SCHEMA: &str = linerate_store::rfc2544::SCHEMA;

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
recv's interface.

Examples:
  linerate lab up demo --topology router
  linerate lab rfc2544 demo
  linerate lab rfc2544 demo --frame 64,512,1518,imix --trial 10s
  linerate lab rfc2544 demo --frame 64 --trial 2s --initial-trial 500ms --pdr 0.1% --json")]
pub struct Args {
    /// Lab name (a router lab)
    #[arg(value_parser = parse_name)]
    name: LabName,
    /// Frame sizes with FCS, searched one after the other: 64, 1518, imix, or a list
    #[arg(
        long,
        value_name = "FRAMES",
        default_value = "64,512,1518,imix",
        value_delimiter = ','
    )]
    frame: Vec<FrameSpec>,
    /// Duration of the final trials
    #[arg(long, value_name = "DURATION", default_value = "10s",
          value_parser = Duration::parse_with_unit, allow_hyphen_values = true)]
    trial: Duration,
    /// Duration of the first phase's trials
    #[arg(long, value_name = "DURATION", default_value = "1s",
          value_parser = Duration::parse_with_unit, allow_hyphen_values = true)]
    initial_trial: Duration,
    /// Phases of the search (trial duration grows, width halves, from one to the next)
    #[arg(long, value_name = "N", default_value_t = search::DEFAULT_PHASES,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(search::MAX_PHASES)))]
    phases: u32,
    /// Width goal: the final lower and upper bounds are at most this far apart
    #[arg(
        long,
        value_name = "PERCENT",
        default_value = "0.5%",
        allow_hyphen_values = true
    )]
    width: Percent,
    /// Loss ratio of PDR (partial drop rate); NDR allows none
    #[arg(
        long,
        value_name = "PERCENT",
        default_value = "0.5%",
        allow_hyphen_values = true
    )]
    pdr: Percent,
    /// Final trials at --trial each bound must pass
    #[arg(long, value_name = "N", default_value_t = search::DEFAULT_REPEATS,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(search::MAX_REPEATS)))]
    repeat: u32,
    /// Most trials of one search (it stops unconverged there)
    #[arg(long, value_name = "N", default_value_t = search::DEFAULT_MAX_TRIALS,
          value_parser = clap::value_parser!(u32).range(2..=1000))]
    max_trials: u32,
    /// Link rate for line rate and % of it [default: the lab's l0 rate, else 10 Gbit/s, what
    /// veth reports]
    #[arg(long, value_name = "RATE", value_parser = BitRate::parse_with_unit,
          allow_hyphen_values = true)]
    line_rate: Option<BitRate>,
    /// Duration of the generator-ceiling measurement into the sink
    #[arg(long, value_name = "DURATION", default_value = "2s",
          value_parser = Duration::parse_with_unit, allow_hyphen_values = true)]
    headroom_trial: Duration,
    /// Duration of each latency trial [default: --trial]
    #[arg(long, value_name = "DURATION", value_parser = Duration::parse_with_unit,
          allow_hyphen_values = true)]
    latency_trial: Option<Duration>,
    /// No latency trials at 10/50/90 % of NDR (they take three more trials per frame size)
    #[arg(long, conflicts_with = "latency_trial")]
    no_latency: bool,
    /// Search method: mlr (MLRsearch-style) or binary (the plain RFC 2544 binary search, one
    /// goal after the other, every trial at --trial: for comparison)
    #[arg(long, value_enum, default_value = "mlr")]
    search: Method,
    /// Highest load of the search: ceiling (the line rate or the generator's ceiling into the
    /// sink, whichever is lower) or line (the line rate, where a plain RFC 2544 search starts;
    /// loads the generator cannot make count as lost)
    #[arg(long, value_enum, value_name = "FROM", default_value = "ceiling")]
    max_load: MaxLoad,
    /// Sending threads of the generator
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..=64))]
    threads: u16,
    /// No progress lines on standard error
    #[arg(short, long)]
    quiet: bool,
    /// Print the results as JSON (schema linerate.rfc2544/1)
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: crate::cmd::history::db::StoreRunArgs,
}

/// How the throughput is searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Method {
    /// MLRsearch-style: both goals at once, short trials first
    Mlr,
    /// Plain binary search per goal at the final trial duration
    Binary,
}

/// Where the search starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum MaxLoad {
    /// The line rate or the generator's ceiling, whichever is lower
    Ceiling,
    /// The line rate
    Line,
}

fn parse_name(s: &str) -> Result<LabName, String> {
    s.parse::<LabName>().map_err(|e| e.to_string())
}

/// The whole result as `--json` prints it (`linerate.rfc2544/1`).
#[derive(Debug, Clone, Serialize)]
pub struct Report<'a> {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// The lab.
    pub lab: &'a str,
    /// Link rate used for line rate, bits/s (L1).
    pub link_bps: f64,
    /// Where the link rate came from.
    pub link_source: &'a str,
    /// Search settings.
    pub settings: &'a Settings,
    /// Per frame size, in the order asked.
    pub results: &'a [FrameResult],
    /// The stored experiment, when stored.
    pub stored_as: Option<String>,
}

impl<'a> Report<'a> {
    fn of(t: &'a Throughput) -> Report<'a> {
        Report {
            schema: SCHEMA,
            lab: &t.lab,
            link_bps: t.link.rate.as_f64(),
            link_source: &t.link.source,
            settings: &t.settings,
            results: &t.results,
            stored_as: None,
        }
    }
}

/// The procedure's plan from the flags (checked here, so an error names the flag).
fn plan(a: &Args) -> anyhow::Result<Plan> {
    let trial_s = a.trial.as_secs_f64();
    let initial_s = a.initial_trial.as_secs_f64();
    if trial_s <= 0.0 || initial_s <= 0.0 || a.headroom_trial.as_secs_f64() <= 0.0 {
        bail!("--trial, --initial-trial and --headroom-trial must be longer than zero");
    }
    if initial_s > trial_s {
        bail!(
            "--initial-trial {} is longer than --trial {}",
            a.initial_trial,
            a.trial
        );
    }
    let width = a.width.fraction();
    if !(width > 0.0 && width < search::MAX_WIDTH) {
        bail!(
            "--width {}: must be more than 0 and less than {} %",
            a.width,
            search::MAX_WIDTH * 100.0
        );
    }
    let pdr = a.pdr.fraction();
    if !(pdr > 0.0 && pdr < 1.0) {
        bail!("--pdr {}: must be more than 0 and less than 100 %", a.pdr);
    }
    Ok(Plan {
        frames: a.frame.clone(),
        settings: Settings {
            trial_s,
            initial_trial_s: initial_s,
            phases: a.phases,
            width,
            pdr_loss_ratio: pdr,
            repeat: a.repeat,
            threads: a.threads,
            search: match a.search {
                Method::Mlr => SearchMethod::Mlr,
                Method::Binary => SearchMethod::Binary,
            },
            latency: !a.no_latency,
        },
        max_trials: a.max_trials,
        max_load: match a.max_load {
            MaxLoad::Ceiling => procedure::MaxLoad::Ceiling,
            MaxLoad::Line => procedure::MaxLoad::Line,
        },
        ceiling_trial_s: a.headroom_trial.as_secs_f64(),
        latency_trial_s: a.latency_trial.map_or(trial_s, |d| d.as_secs_f64()),
        link_rate: a.line_rate.map(|rate| LinkRate {
            rate,
            source: "--line-rate".into(),
        }),
    })
}

/// One progress line (for standard error).
fn progress_line(p: &Progress<'_>) -> String {
    let human = |pps: f64| PacketRate::from_pps(pps).human();
    match p {
        Progress::WarmingUp { frame } => format!("frame {frame}: warming up the path"),
        Progress::Ceiling {
            frame,
            sent_pps,
            received_pps,
        } => format!(
            "frame {frame}: the generator alone reaches {} into the sink ({} sent)",
            human(*received_pps),
            human(*sent_pps)
        ),
        Progress::NoCeiling { frame } => {
            format!("frame {frame}: the generator's own ceiling cannot be measured here")
        }
        Progress::Trial {
            load,
            duration,
            counted: c,
            offered,
            short,
            ..
        } => {
            let lost = offered.saturating_sub(c.received) as f64 / (*offered).max(1) as f64 * 100.0;
            let load = human(*load);
            if *short {
                format!(
                    "  trial {load} for {duration:.2} s: the generator sent {} of {offered} \
                     frames (short twice; the rest count as lost), received {} ({lost:.4} % lost)",
                    c.sent, c.received
                )
            } else {
                format!(
                    "  trial {load} for {duration:.2} s: sent {}, received {} ({lost:.4} % lost)",
                    c.sent, c.received
                )
            }
        }
    }
}

/// Runs `linerate lab rfc2544`.
pub fn run(dir: &StateDir, a: Args) -> anyhow::Result<ExitCode> {
    if !linerate_sys::is_root() {
        bail!(
            "linerate lab rfc2544 needs root (it enters the lab's namespaces and opens packet sockets)"
        );
    }
    let plan = plan(&a)?;
    let state = linerate_lab::control::load(dir, &a.name)?;
    let binary = std::env::current_exe().context("locate the linerate executable")?;
    let stop = Stop::install()?;
    let interrupted = || stop.requested();
    let mut bed = Namespaces::router(dir, &state, binary, a.threads, &interrupted)?;
    if let Some(r) = bed.restored() {
        // Said even with --quiet: the lab was not as the last run should have left it.
        eprintln!("linerate: lab {}: {r}", a.name);
    }
    let mut say = |p: &Progress<'_>| {
        if !a.quiet {
            eprintln!("{}", progress_line(p));
        }
    };
    let throughput = match procedure::run(&mut bed, &plan, &interrupted, &mut say) {
        Ok(t) => t,
        Err(_) if stop.requested() => {
            return Ok(crate::stop::exit_code(
                stop.signal()
                    .unwrap_or(linerate_sys::signal::Signal::SIGINT),
            ));
        }
        Err(e) => {
            return Err(
                anyhow::Error::new(e).context(format!("RFC 2544 throughput of lab {}", a.name))
            );
        }
    };
    let mut report = Report::of(&throughput);
    if let Some(sig) = stop.signal() {
        output::print_text(&render::text(&report))?;
        eprintln!(
            "linerate: stopped by {}; nothing was stored",
            crate::stop::name(sig)
        );
        return Ok(crate::stop::exit_code(sig));
    }
    report.stored_as = match super::record::store_at(&a.store)? {
        Some(at) => {
            linerate_lab::record::record_rfc2544(&at, &throughput, super::record::host_snapshot())?
        }
        None => None,
    };
    if a.json {
        output::print_json(&report)?;
    } else {
        let mut text = render::text(&report);
        match &report.stored_as {
            Some(id) => text.push_str(&format!(
                "\nstored as experiment {id}\nnext: linerate report --experiment {id} -o {id}.html\n"
            )),
            None => text.push_str("\nnot stored (--no-store)\n"),
        }
        output::print_text(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}
