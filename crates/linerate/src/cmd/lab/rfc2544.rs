//! `linerate lab rfc2544 NAME`: RFC 2544 throughput of a `router` lab's DUT per frame size, by
//! the MLRsearch-style search (`linerate_lab::rfc2544::search`): NDR and PDR in one pass, then
//! one-way latency at 10/50/90 % of NDR. Before each search the generator's own ceiling is
//! measured into a sink, and a result within 10 % of it is marked generator-bound. The results
//! are stored as an experiment (one run per frame size) that `linerate report` charts.

mod render;
mod store;

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context as _, bail};
use linerate_calc::ethernet::{Duplex, FrameRate, FrameSpec, frame_rate};
use linerate_lab::rfc2544::search::{self, Config, Measurer, Outcome};
use linerate_lab::rfc2544::trial::{self, Counter, LabPath, Latency};
use linerate_lab::{LabName, StateDir};
use linerate_units::{BitRate, Duration, Percent};
use serde::Serialize;

use crate::output;
use crate::stop::Stop;

/// The JSON schema of the results.
pub const SCHEMA: &str = "linerate.rfc2544/1";

/// A result within this share of the generator's ceiling is the generator's, not the DUT's.
const GENERATOR_BOUND: f64 = 0.9;

/// Loads of the latency trials, as shares of NDR.
const LATENCY_LOADS: [f64; 3] = [0.1, 0.5, 0.9];

/// Arguments of `linerate lab rfc2544`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Per frame size: the generator's ceiling into a sink (the DUT with forwarding off), then the \
search (MLRsearch-style: the first trial at the maximum load measures the forwarding rate; \
short trials narrow NDR and PDR together, the trial growing from --initial-trial to --trial \
over --phases phases while the width goal halves to --width; each final bound holds for \
--repeat trials of --trial), then one-way latency at 10/50/90 % of NDR. A result within 10 % \
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
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

/// A rate at one frame size, in the three ways the table shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Rate {
    /// Frames per second.
    pub pps: f64,
    /// Bits/s counting preamble, SFD and inter-frame gap.
    pub l1_bps: f64,
    /// Bits/s of frames (FCS included).
    pub l2_bps: f64,
    /// Share of the line rate, percent.
    pub line_rate_percent: f64,
}

fn rate(line: &FrameRate, pps: f64) -> Rate {
    Rate {
        pps,
        l1_bps: pps * line.wire_bytes * 8.0,
        l2_bps: pps * line.frame_bytes * 8.0,
        line_rate_percent: pps / line.frames_per_second.pps() * 100.0,
    }
}

/// Latency at one load.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyAt {
    /// The load as a share of NDR, percent.
    pub ndr_percent: f64,
    /// The load, frames/s.
    pub load_pps: f64,
    /// Frames lost in the trial.
    pub lost: u64,
    /// Percentiles (absent when no frame arrived).
    #[serde(flatten)]
    pub latency: Option<Latency>,
}

/// One trial as the JSON lists it.
#[derive(Debug, Clone, Serialize)]
pub struct TrialJson {
    /// Intended load.
    pub load_pps: f64,
    /// Duration, seconds.
    pub duration_s: f64,
    /// Frames offered (sent, or the intended count when the generator fell short).
    pub sent: u64,
    /// Frames counted at recv.
    pub received: u64,
    /// Lost share.
    pub loss_ratio: f64,
    /// Search phase (0-based).
    pub phase: u32,
    /// Frames the generator actually sent.
    pub generator_sent: u64,
    /// The generator sent under 98 % of the load's frames: the missing ones count as lost,
    /// but the DUT did not lose them.
    pub generator_short: bool,
}

/// The result for one frame size.
#[derive(Debug, Clone, Serialize)]
pub struct FrameResult {
    /// `64`, `imix`.
    pub frame: String,
    /// L2 bytes per frame (the mean for IMIX).
    pub frame_bytes: f64,
    /// Frames/s at line rate.
    pub line_rate_pps: f64,
    /// NDR, frames/s (0 when even the lowest load lost frames).
    pub ndr_pps: f64,
    /// PDR, frames/s.
    pub pdr_pps: f64,
    /// NDR in the three units.
    pub ndr: Rate,
    /// PDR in the three units.
    pub pdr: Rate,
    /// The lowest load that lost frames (NDR's upper bound); absent when none did.
    pub ndr_upper_pps: Option<f64>,
    /// PDR's upper bound.
    pub pdr_upper_pps: Option<f64>,
    /// One-way latency at 10/50/90 % of NDR, microseconds.
    pub latency_us: Vec<LatencyAt>,
    /// The generator alone into a sink, frames/s.
    pub generator_ceiling_pps: f64,
    /// The result is the generator's, not the DUT's: NDR is within 10 % of the generator's
    /// ceiling, or the load above NDR failed only because the generator fell short.
    pub generator_bound: bool,
    /// Why, when generator-bound.
    pub generator_bound_reason: Option<String>,
    /// The search met its width goal.
    pub converged: bool,
    /// Trials of the search (latency and ceiling trials not counted).
    pub trial_count: usize,
    /// Sum of the search trials' durations, seconds.
    pub trial_seconds: f64,
    /// Wall time of the search, seconds.
    pub search_seconds: f64,
    /// Frames the receive ring dropped over the search (counted as loss).
    pub ring_drops: u64,
    /// Every search trial.
    pub trials: Vec<TrialJson>,
}

/// The whole result (`linerate.rfc2544/1`).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// The lab.
    pub lab: String,
    /// Link rate used for line rate, bits/s (L1).
    pub link_bps: f64,
    /// Where the link rate came from.
    pub link_source: String,
    /// Search settings.
    pub settings: Settings,
    /// Per frame size, in the order asked.
    pub results: Vec<FrameResult>,
    /// The stored experiment, when stored.
    pub stored_as: Option<String>,
}

/// The search's settings, for the record.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// Final trial, seconds.
    pub trial_s: f64,
    /// First phase's trial, seconds.
    pub initial_trial_s: f64,
    /// Phases.
    pub phases: u32,
    /// Width goal, relative.
    pub width: f64,
    /// PDR's loss ratio.
    pub pdr_loss_ratio: f64,
    /// Final trials per bound.
    pub repeat: u32,
    /// Generator threads.
    pub threads: u16,
    /// `mlr` or `binary`.
    pub search: &'static str,
}

/// Trials on the lab for one frame size, keeping what the search does not (ring drops).
struct LabMeasurer<'a> {
    path: &'a LabPath,
    frame: String,
    stop: &'a Stop,
    ring_drops: u64,
    quiet: bool,
    /// Per trial, in order: frames actually sent, and whether the generator fell short.
    details: Vec<(u64, bool)>,
}

impl Measurer for LabMeasurer<'_> {
    type Error = anyhow::Error;
    fn measure(&mut self, load: f64, duration: f64) -> anyhow::Result<(u64, u64)> {
        if self.stop.requested() {
            bail!("stopped by a signal");
        }
        let (c, offered, short) = trial::offered(self.path, &self.frame, load, duration, &|| {
            self.stop.requested()
        })?;
        self.ring_drops += c.ring_drops;
        self.details.push((c.sent, short));
        if !self.quiet {
            let lost = offered.saturating_sub(c.received) as f64 / offered.max(1) as f64 * 100.0;
            let load = linerate_units::PacketRate::from_pps(load).human();
            if short {
                eprintln!(
                    "  trial {load} for {duration:.2} s: the generator sent {} of {offered} \
                     frames (short twice; the rest count as lost), received {} ({lost:.4} % lost)",
                    c.sent, c.received
                );
            } else {
                eprintln!(
                    "  trial {load} for {duration:.2} s: sent {}, received {} ({lost:.4} % lost)",
                    c.sent, c.received
                );
            }
        }
        Ok((offered, c.received))
    }
}

/// The link rate: the flag, else l0's emulated rate toward recv, else veth's 10 Gbit/s.
fn link_rate(a: &Args, state: &linerate_lab::LabState) -> (BitRate, String) {
    if let Some(r) = a.line_rate {
        return (r, "--line-rate".into());
    }
    let emulated = state
        .links
        .iter()
        .find(|l| l.id == "l0")
        .and_then(|l| l.fwd.as_ref())
        .and_then(|i| i.rate);
    match emulated {
        Some(r) => (r, "the lab's l0 rate".into()),
        None => (
            BitRate::from_bps_f64(10e9),
            "veth's nominal 10 Gbit/s (the lab's links have no rate)".into(),
        ),
    }
}

fn frame_arg(spec: FrameSpec) -> String {
    match spec {
        FrameSpec::Imix => "imix".into(),
        FrameSpec::Size(s) => s.bytes().to_string(),
    }
}

/// Runs `linerate lab rfc2544`.
pub fn run(dir: &StateDir, a: Args) -> anyhow::Result<ExitCode> {
    if !linerate_sys::is_root() {
        bail!(
            "linerate lab rfc2544 needs root (it enters the lab's namespaces and opens packet sockets)"
        );
    }
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
    let state = linerate_lab::control::load(dir, &a.name)?;
    let binary = std::env::current_exe().context("locate the linerate executable")?;
    let path = LabPath::of(dir, &state, binary, a.threads)?;
    if let Some(r) = &path.restored {
        // Said even with --quiet: the lab was not as the last run should have left it.
        eprintln!("linerate: lab {}: {r}", a.name);
    }
    let (link, link_source) = link_rate(&a, &state);
    let stop = Stop::install()?;
    let settings = Settings {
        trial_s,
        initial_trial_s: initial_s,
        phases: a.phases,
        width,
        pdr_loss_ratio: pdr,
        repeat: a.repeat,
        threads: a.threads,
        search: match a.search {
            Method::Mlr => "mlr",
            Method::Binary => "binary",
        },
    };
    let latency_s = a.latency_trial.map_or(trial_s, |d| d.as_secs_f64());
    let mut results = Vec::new();
    for &spec in &a.frame {
        let frame = frame_arg(spec);
        let line = frame_rate(link, spec, Duplex::Full);
        let say = |s: String| {
            if !a.quiet {
                eprintln!("{s}");
            }
        };
        say(format!("frame {frame}: warming up the path"));
        trial::warm_up(&path, &frame, &|| stop.requested())?;
        let ceiling =
            trial::generator_ceiling(&path, &frame, a.headroom_trial.as_secs_f64(), &|| {
                stop.requested()
            })?;
        let ceiling_pps = ceiling.received as f64 / ceiling.seconds.max(1e-9);
        say(format!(
            "frame {frame}: the generator alone reaches {} into the sink ({} sent)",
            linerate_units::PacketRate::from_pps(ceiling_pps).human(),
            linerate_units::PacketRate::from_pps(ceiling.sent as f64 / ceiling.seconds.max(1e-9))
                .human()
        ));
        if ceiling_pps <= 0.0 {
            bail!("frame {frame}: no frame of the generator reached the sink");
        }
        let max_load = match a.max_load {
            MaxLoad::Ceiling => line.frames_per_second.pps().min(ceiling_pps),
            MaxLoad::Line => line.frames_per_second.pps(),
        };
        let cfg = Config {
            goals: search::ndr_and_pdr(pdr),
            min_load: search::min_load_for(max_load),
            max_load,
            initial_duration: initial_s,
            final_duration: trial_s,
            phases: a.phases,
            width,
            final_repeats: a.repeat,
            max_trials: a.max_trials,
        };
        let started = Instant::now();
        let mut m = LabMeasurer {
            path: &path,
            frame: frame.clone(),
            stop: &stop,
            ring_drops: 0,
            quiet: a.quiet,
            details: Vec::new(),
        };
        let searched = match a.search {
            Method::Mlr => search::search(&cfg, &mut m, &mut |_| {}),
            Method::Binary => search::binary(&cfg, &mut m, &mut |_| {}),
        };
        let outcome = match searched {
            Ok(o) => o,
            Err(e) if stop.requested() => {
                let _ = e;
                return Ok(crate::stop::exit_code(
                    stop.signal()
                        .unwrap_or(linerate_sys::signal::Signal::SIGINT),
                ));
            }
            Err(e) => return Err(e.context(format!("frame {frame}: a trial failed"))),
        };
        let search_seconds = started.elapsed().as_secs_f64();
        let ndr = outcome.goals[0].lower.unwrap_or(0.0);
        let pdr_pps = outcome.goals[1].lower.unwrap_or(0.0).max(ndr);
        let mut latency = Vec::new();
        if ndr > 0.0 {
            for share in LATENCY_LOADS {
                let load = ndr * share;
                let c = trial::run(&path, &frame, Some(load), latency_s, Counter::Recv, &|| {
                    stop.requested()
                })?;
                latency.push(LatencyAt {
                    ndr_percent: share * 100.0,
                    load_pps: load,
                    lost: c.sent.saturating_sub(c.received),
                    latency: c.latency,
                });
            }
        }
        results.push(frame_result(
            &frame,
            &line,
            ndr,
            pdr_pps,
            &outcome,
            latency,
            ceiling_pps,
            search_seconds,
            m.ring_drops,
            &m.details,
        ));
        if stop.requested() {
            break;
        }
    }
    let mut report = Report {
        schema: SCHEMA,
        lab: a.name.to_string(),
        link_bps: link.as_f64(),
        link_source,
        settings,
        results,
        stored_as: None,
    };
    if let Some(sig) = stop.signal() {
        output::print_text(&render::text(&report))?;
        eprintln!(
            "linerate: stopped by {}; nothing was stored",
            crate::stop::name(sig)
        );
        return Ok(crate::stop::exit_code(sig));
    }
    report.stored_as = store::record(&a.store, &report)?;
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

#[allow(clippy::too_many_arguments)]
fn frame_result(
    frame: &str,
    line: &FrameRate,
    ndr: f64,
    pdr: f64,
    outcome: &Outcome,
    latency_us: Vec<LatencyAt>,
    ceiling: f64,
    search_seconds: f64,
    ring_drops: u64,
    details: &[(u64, bool)],
) -> FrameResult {
    let trials: Vec<TrialJson> = outcome
        .trials
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let (generator_sent, generator_short) =
                details.get(i).copied().unwrap_or((t.sent, false));
            TrialJson {
                load_pps: t.load,
                duration_s: t.duration,
                sent: t.sent,
                received: t.received,
                loss_ratio: t.loss_ratio(),
                phase: t.phase,
                generator_sent,
                generator_short,
            }
        })
        .collect();
    // The load just above NDR failed only because the generator could not send it (the DUT
    // forwarded every frame it got): the generator is the limit.
    let short_above = outcome.goals[0].upper.is_some_and(|u| {
        let mut failed = trials
            .iter()
            .filter(|t| t.load_pps == u && t.loss_ratio > 0.0)
            .peekable();
        failed.peek().is_some()
            && failed.all(|t| t.generator_short && t.received >= t.generator_sent)
    });
    let near_ceiling = ndr >= ceiling * GENERATOR_BOUND;
    let generator_bound = (near_ceiling || short_above).then(|| {
        if near_ceiling {
            format!(
                "NDR {ndr:.0} fps is within 10 % of what the generator alone sends into a sink ({ceiling:.0} fps)"
            )
        } else {
            format!(
                "above NDR the generator could not send the load ({:.0} fps), and the DUT forwarded every frame it did send",
                outcome.goals[0].upper.unwrap_or(0.0)
            )
        }
    });
    FrameResult {
        frame: frame.to_owned(),
        frame_bytes: line.frame_bytes,
        line_rate_pps: line.frames_per_second.pps(),
        ndr_pps: ndr,
        pdr_pps: pdr,
        ndr: rate(line, ndr),
        pdr: rate(line, pdr),
        ndr_upper_pps: outcome.goals[0].upper,
        pdr_upper_pps: outcome.goals[1].upper,
        latency_us,
        generator_ceiling_pps: ceiling,
        generator_bound: generator_bound.is_some(),
        generator_bound_reason: generator_bound,
        converged: outcome.converged,
        trial_count: outcome.trials.len(),
        trial_seconds: outcome.trial_seconds(),
        search_seconds,
        ring_drops,
        trials,
    }
}
