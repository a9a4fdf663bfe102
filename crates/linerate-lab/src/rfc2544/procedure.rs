//! The RFC 2544 throughput procedure, the one `lab rfc2544` and `lab run`'s `rfc2544`
//! workload both run, on any [`TestBed`]. Per frame size: a warm-up through the DUT; the
//! generator's own ceiling into a sink (when the bed can measure it); the search
//! ([`super::search`]) for NDR and PDR up to the line rate or that ceiling; then, unless
//! told not to, one-way latency at 10, 50 and 90 % of NDR. A result the generator may have
//! set is marked generator-bound, by one rule ([`generator_bound`]).
//!
//! Progress reaches the caller as [`Progress`] events, never as prints; a stop asked for
//! between frame sizes ends the procedure with the sizes measured so far, one asked for during
//! a trial ends it with an error.

use std::time::Instant;

use linerate_calc::ethernet::{Duplex, FrameSpec, frame_rate};
use linerate_store::rfc2544::{
    self, FrameResult, LatencyAt, Rfc2544Run, SearchMethod, Settings, Trial,
};

use super::bed::{Counted, LinkRate, TestBed};
use super::search::{self, Config, Measurer, Outcome};
use crate::LabError;

/// A result within this share of the generator's ceiling is the generator's, not the DUT's.
pub const GENERATOR_BOUND: f64 = 0.9;

/// The trial the DUT's CPU is profiled in, seconds.
const DUT_PROFILE_S: f64 = 2.0;

/// The DUT is profiled at this multiple of the lowest load that lost frames (at most the
/// search's highest load): just above NDR a CPU-bound DUT is busy only most of the time (it
/// drops in bursts), a quarter above it its busy core is full, while a DUT that drops by rule
/// or shaper stays as idle as before — the two verdicts stand apart.
const DUT_PROFILE_OVERLOAD: f64 = 1.25;

/// Loads of the latency trials, as shares of NDR.
pub const LATENCY_LOADS: [f64; 3] = [0.1, 0.5, 0.9];

/// A trial whose generator sent less than this share of the load's frames fell short.
const SHORT: f64 = 0.98;

/// Where the search starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxLoad {
    /// The line rate or the generator's ceiling, whichever is lower.
    Ceiling,
    /// The line rate (where a plain RFC 2544 search starts; loads the generator cannot make
    /// count as lost).
    Line,
}

/// What to measure and how.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Frame sizes, measured one after the other.
    pub frames: Vec<FrameSpec>,
    /// The search's settings (stored with each result).
    pub settings: Settings,
    /// Most trials of one search (it stops unconverged there).
    pub max_trials: u32,
    /// Where the search starts.
    pub max_load: MaxLoad,
    /// Length of the generator-ceiling measurement, seconds.
    pub ceiling_trial_s: f64,
    /// Length of each latency trial, seconds.
    pub latency_trial_s: f64,
    /// The link rate for line rate, when the caller knows it better than the test bed.
    pub link_rate: Option<LinkRate>,
}

/// What the procedure is doing, for the caller to show.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress<'a> {
    /// Warming up the path for `frame`.
    WarmingUp {
        /// The frame size.
        frame: FrameSpec,
    },
    /// The generator's ceiling for `frame`: what it sent and what reached the sink.
    Ceiling {
        /// The frame size.
        frame: FrameSpec,
        /// Frames/s sent.
        sent_pps: f64,
        /// Frames/s counted at the sink.
        received_pps: f64,
    },
    /// The test bed cannot measure the generator's ceiling.
    NoCeiling {
        /// The frame size.
        frame: FrameSpec,
    },
    /// A search trial ended.
    Trial {
        /// The frame size.
        frame: FrameSpec,
        /// Its load, frames/s.
        load: f64,
        /// Its duration, seconds.
        duration: f64,
        /// What it counted.
        counted: &'a Counted,
        /// Frames the load offered (more than sent when the generator fell short).
        offered: u64,
        /// The generator fell short of the load twice (the missing frames count as lost).
        short: bool,
    },
}

/// The procedure's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Throughput {
    /// The test bed's name.
    pub lab: String,
    /// The link rate used for line rate.
    pub link: LinkRate,
    /// The search's settings.
    pub settings: Settings,
    /// What the test bed repaired before the first trial.
    pub repaired: Option<String>,
    /// How the clocks of one-way latency were judged (a receiver on another host).
    pub clock: Option<String>,
    /// Per frame size measured, in the order asked.
    pub results: Vec<FrameResult>,
    /// Whether every frame size was measured (false when a stop came between sizes).
    pub complete: bool,
}

impl Throughput {
    /// One stored document per frame size.
    pub fn documents(&self) -> Vec<Rfc2544Run> {
        self.results
            .iter()
            .map(|r| Rfc2544Run {
                schema: rfc2544::SCHEMA.into(),
                lab: self.lab.clone(),
                link_bps: self.link.rate.as_f64(),
                link_source: self.link.source.clone(),
                settings: self.settings.clone(),
                repaired: self.repaired.clone(),
                clock: self.clock.clone(),
                result: r.clone(),
            })
            .collect()
    }
}

/// Runs the plan on `bed`. `interrupted` says a stop was asked for; `progress` sees each step.
pub fn run(
    bed: &mut dyn TestBed,
    plan: &Plan,
    interrupted: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> Result<Throughput, LabError> {
    let link = plan.link_rate.clone().unwrap_or_else(|| bed.link_rate());
    let mut results = Vec::new();
    let mut complete = true;
    for (i, &spec) in plan.frames.iter().enumerate() {
        results.push(frame(bed, plan, &link, spec, interrupted, progress)?);
        if interrupted() && i + 1 < plan.frames.len() {
            complete = false;
            break;
        }
    }
    Ok(Throughput {
        lab: bed.name(),
        link,
        settings: plan.settings.clone(),
        repaired: bed.repaired(),
        clock: bed.clock(),
        results,
        complete,
    })
}

/// One frame size: warm-up, ceiling, search, latency.
fn frame(
    bed: &mut dyn TestBed,
    plan: &Plan,
    link: &LinkRate,
    spec: FrameSpec,
    interrupted: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> Result<FrameResult, LabError> {
    let s = &plan.settings;
    let line = frame_rate(link.rate, spec, Duplex::Full);
    progress(&Progress::WarmingUp { frame: spec });
    bed.warm_up(spec)?;
    let ceiling = match bed.generator_ceiling(spec, plan.ceiling_trial_s)? {
        Some(c) => {
            let secs = c.seconds.max(1e-9);
            let received_pps = c.received as f64 / secs;
            progress(&Progress::Ceiling {
                frame: spec,
                sent_pps: c.sent as f64 / secs,
                received_pps,
            });
            if received_pps <= 0.0 {
                return Err(LabError::Io {
                    what: format!("frame {spec}: no frame of the generator reached the sink"),
                    source: std::io::Error::from(std::io::ErrorKind::NotConnected),
                });
            }
            Some(received_pps)
        }
        None => {
            progress(&Progress::NoCeiling { frame: spec });
            None
        }
    };
    let line_pps = line.frames_per_second.pps();
    let max_load = match (plan.max_load, ceiling) {
        (MaxLoad::Ceiling, Some(c)) => line_pps.min(c),
        _ => line_pps,
    };
    let cfg = Config {
        goals: search::ndr_and_pdr(s.pdr_loss_ratio),
        min_load: search::min_load_for(max_load),
        max_load,
        initial_duration: s.initial_trial_s,
        final_duration: s.trial_s,
        phases: s.phases,
        width: s.width,
        final_repeats: s.repeat,
        max_trials: plan.max_trials,
    };
    let started = Instant::now();
    let mut offers = Offers {
        bed: &mut *bed,
        frame: spec,
        interrupted,
        progress: &mut *progress,
        ring_drops: 0,
        details: Vec::new(),
    };
    let outcome = match s.search {
        SearchMethod::Mlr => search::search(&cfg, &mut offers, &mut |_| {})?,
        SearchMethod::Binary => search::binary(&cfg, &mut offers, &mut |_| {})?,
    };
    let (ring_drops, details) = (offers.ring_drops, offers.details);
    let search_seconds = started.elapsed().as_secs_f64();
    let ndr = outcome.goals[0].lower.unwrap_or(0.0);
    let pdr = outcome.goals[1].lower.unwrap_or(0.0).max(ndr);
    let mut latency_us = Vec::new();
    if s.latency && ndr > 0.0 {
        for share in LATENCY_LOADS {
            let load = ndr * share;
            let c = bed.trial(spec, Some(load), plan.latency_trial_s)?;
            latency_us.push(LatencyAt {
                ndr_percent: share * 100.0,
                load_pps: load,
                lost: c.sent.saturating_sub(c.received),
                latency: c.latency,
            });
        }
    }
    let trials = trials(&outcome, &details);
    let generator_bound_reason = generator_bound(ndr, ceiling, outcome.goals[0].upper, &trials);
    // The DUT may be the limit — not generator-bound, or a generator that fell short far
    // below its own ceiling (on one host the DUT's forwarding can run in the sender's
    // softirq, on its CPU): where the CPU goes a quarter above the lowest load that lost
    // frames (DUT_PROFILE_OVERLOAD), in a trial of DUT_PROFILE_S.
    let below_ceiling = ceiling.is_some_and(|c| ndr < c * GENERATOR_BOUND);
    let dut_limit = match outcome.goals[0].upper {
        Some(upper) if !interrupted() && (generator_bound_reason.is_none() || below_ceiling) => bed
            .dut_limit(
                spec,
                (upper * DUT_PROFILE_OVERLOAD).min(max_load).max(upper),
                s.trial_s.min(DUT_PROFILE_S),
            )?
            .map(|l| {
                if generator_bound_reason.is_some() {
                    linerate_explain::dut::generator_short(l)
                } else {
                    l
                }
            }),
        _ => None,
    };
    let rate = |pps: f64| rfc2544::rate(pps, line.frame_bytes, line.wire_bytes, line_pps);
    Ok(FrameResult {
        frame: spec.to_string(),
        frame_bytes: line.frame_bytes,
        line_rate_pps: line_pps,
        ndr_pps: ndr,
        pdr_pps: pdr,
        ndr: rate(ndr),
        pdr: rate(pdr),
        ndr_upper_pps: outcome.goals[0].upper,
        pdr_upper_pps: outcome.goals[1].upper,
        latency_us,
        generator_ceiling_pps: ceiling,
        generator_bound: generator_bound_reason.is_some(),
        generator_bound_reason,
        converged: outcome.converged,
        trial_count: outcome.trials.len(),
        trial_seconds: outcome.trial_seconds(),
        search_seconds,
        ring_drops,
        trials,
        dut_limit,
    })
}

/// The search's trials as stored, with what the generator actually sent in each.
fn trials(outcome: &Outcome, details: &[(u64, bool)]) -> Vec<Trial> {
    outcome
        .trials
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let (generator_sent, generator_short) =
                details.get(i).copied().unwrap_or((t.sent, false));
            Trial {
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
        .collect()
}

/// Why a result may be the generator's rather than the DUT's, or `None`:
/// - NDR is within 10 % ([`GENERATOR_BOUND`]) of the generator's ceiling into a sink, or, when
///   the test bed could not measure that ceiling, of the most the generator sent in any trial;
/// - or the load just above NDR failed only because the generator could not send it (the DUT
///   forwarded every frame it did send).
pub fn generator_bound(
    ndr: f64,
    ceiling: Option<f64>,
    ndr_upper: Option<f64>,
    trials: &[Trial],
) -> Option<String> {
    let short_above = ndr_upper.is_some_and(|u| {
        let mut failed = trials
            .iter()
            .filter(|t| t.load_pps == u && t.loss_ratio > 0.0)
            .peekable();
        failed.peek().is_some()
            && failed.all(|t| t.generator_short && t.received >= t.generator_sent)
    });
    let near = match ceiling {
        Some(c) => (ndr >= c * GENERATOR_BOUND).then(|| {
            format!(
                "NDR {ndr:.0} fps is within 10 % of what the generator alone sends into a sink \
                 ({c:.0} fps)"
            )
        }),
        None => {
            let most = trials
                .iter()
                .map(|t| t.generator_sent as f64 / t.duration_s.max(1e-9))
                .fold(0.0, f64::max);
            (ndr > 0.0 && ndr >= most * GENERATOR_BOUND).then(|| {
                format!(
                    "NDR {ndr:.0} fps is within 10 % of the most the generator sent in any trial \
                     ({most:.0} fps), and its own ceiling is unknown (not measured on this test \
                     bed): possibly the generator's limit, not the DUT's"
                )
            })
        }
    };
    near.or_else(|| {
        short_above.then(|| {
            format!(
                "above NDR the generator could not send the load ({:.0} fps), and the DUT \
                 forwarded every frame it did send",
                ndr_upper.unwrap_or(0.0)
            )
        })
    })
}

/// The search's trials on the test bed, keeping what the search does not (ring drops, what
/// the generator actually sent).
struct Offers<'a> {
    bed: &'a mut dyn TestBed,
    frame: FrameSpec,
    interrupted: &'a dyn Fn() -> bool,
    progress: &'a mut dyn FnMut(&Progress<'_>),
    ring_drops: u64,
    /// Per trial, in order: frames actually sent, and whether the generator fell short.
    details: Vec<(u64, bool)>,
}

impl Measurer for Offers<'_> {
    type Error = LabError;

    /// A trial at `load` frames/s with what the load offered. A generator that fell short of
    /// the load (under 98 % of its frames sent) did not offer it; on a shared machine that may
    /// be a passing stall, so the trial is run once more, and when it falls short again the
    /// frames it did not send count as offered (and lost), so a load the generator cannot
    /// make is never called forwarded.
    fn measure(&mut self, load: f64, duration: f64) -> Result<(u64, u64), LabError> {
        let mut attempts = 0;
        let (c, offered, short) = loop {
            if (self.interrupted)() {
                return Err(LabError::Stopped);
            }
            let c = self.bed.trial(self.frame, Some(load), duration)?;
            attempts += 1;
            let intended = (load * c.seconds.max(duration * 0.5)).round() as u64;
            if (c.sent as f64) >= intended as f64 * SHORT {
                let sent = c.sent;
                break (c, sent, false);
            }
            if attempts >= 2 || (self.interrupted)() {
                break (c, intended, true);
            }
        };
        self.ring_drops += c.ring_drops;
        self.details.push((c.sent, short));
        (self.progress)(&Progress::Trial {
            frame: self.frame,
            load,
            duration,
            counted: &c,
            offered,
            short,
        });
        Ok((offered, c.received))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(load: f64, sent: u64, received: u64, generator_sent: u64, short: bool) -> Trial {
        Trial {
            load_pps: load,
            duration_s: 1.0,
            sent,
            received,
            loss_ratio: sent.saturating_sub(received) as f64 / sent.max(1) as f64,
            phase: 0,
            generator_sent,
            generator_short: short,
        }
    }

    #[test]
    fn ndr_near_the_ceiling_is_generator_bound() {
        let why = generator_bound(95_000.0, Some(100_000.0), None, &[]).expect("bound");
        assert!(why.contains("within 10 %"), "{why}");
        assert_eq!(generator_bound(50_000.0, Some(100_000.0), None, &[]), None);
    }

    #[test]
    fn a_failure_above_ndr_only_from_a_short_generator_is_generator_bound() {
        // At 60 kfps the generator sent 50 k frames and the DUT forwarded all of them.
        let trials = [
            trial(50_000.0, 50_000, 50_000, 50_000, false),
            trial(60_000.0, 60_000, 50_000, 50_000, true),
        ];
        let why = generator_bound(50_000.0, Some(1e6), Some(60_000.0), &trials).expect("bound");
        assert!(why.contains("could not send"), "{why}");
        // The DUT lost frames the generator did send: the DUT's limit.
        let trials = [trial(60_000.0, 60_000, 40_000, 50_000, true)];
        assert_eq!(
            generator_bound(50_000.0, Some(1e6), Some(60_000.0), &trials),
            None
        );
    }

    #[test]
    fn without_a_ceiling_ndr_near_the_most_sent_is_possibly_generator_bound() {
        let trials = [
            trial(100_000.0, 100_000, 100_000, 100_000, false),
            trial(200_000.0, 200_000, 100_000, 100_000, true),
        ];
        let why = generator_bound(95_000.0, None, Some(200_000.0), &trials).expect("bound");
        assert!(why.contains("ceiling is unknown"), "{why}");
        // A DUT far below what the generator sent.
        let trials = [trial(1e6, 1_000_000, 50_000, 1_000_000, false)];
        assert_eq!(generator_bound(50_000.0, None, Some(1e6), &trials), None);
    }

    /// A test bed whose DUT forwards at most `limit` frames/s and whose generator sends at
    /// most `generator` frames/s.
    struct Simulated {
        limit: f64,
        generator: f64,
        sink: bool,
        trials: usize,
    }

    impl TestBed for Simulated {
        fn name(&self) -> String {
            "sim".into()
        }
        fn link_rate(&self) -> LinkRate {
            LinkRate {
                rate: linerate_units::BitRate::from_bps_f64(10e9),
                source: "simulated".into(),
            }
        }
        fn warm_up(&mut self, _: FrameSpec) -> Result<(), LabError> {
            Ok(())
        }
        fn generator_ceiling(
            &mut self,
            _: FrameSpec,
            secs: f64,
        ) -> Result<Option<Counted>, LabError> {
            Ok(self.sink.then(|| {
                let n = (self.generator * secs) as u64;
                Counted {
                    sent: n,
                    seconds: secs,
                    received: n,
                    ring_drops: 0,
                    latency: None,
                }
            }))
        }
        fn trial(
            &mut self,
            _: FrameSpec,
            load: Option<f64>,
            secs: f64,
        ) -> Result<Counted, LabError> {
            self.trials += 1;
            let rate = load.unwrap_or(f64::MAX).min(self.generator);
            let sent = (rate * secs).round() as u64;
            let received = sent.min((self.limit * secs).round() as u64);
            Ok(Counted {
                sent,
                seconds: secs,
                received,
                ring_drops: 0,
                latency: Some(rfc2544::Latency {
                    min: 1.0,
                    p50: 2.0,
                    p90: 3.0,
                    p99: 4.0,
                    max: 5.0,
                }),
            })
        }
    }

    fn plan(latency: bool) -> Plan {
        Plan {
            frames: vec![FrameSpec::Size(linerate_units::ByteSize::from_bytes(64))],
            settings: Settings {
                trial_s: 2.0,
                initial_trial_s: 0.5,
                phases: 2,
                width: 0.005,
                pdr_loss_ratio: 0.005,
                repeat: 2,
                threads: 1,
                search: SearchMethod::Mlr,
                latency,
            },
            max_trials: 60,
            max_load: MaxLoad::Ceiling,
            ceiling_trial_s: 1.0,
            latency_trial_s: 1.0,
            link_rate: None,
        }
    }

    #[test]
    fn the_procedure_finds_a_dut_s_limit_with_latency_at_three_loads() {
        let mut bed = Simulated {
            limit: 50_000.0,
            generator: 500_000.0,
            sink: true,
            trials: 0,
        };
        let mut steps = Vec::new();
        let out = run(&mut bed, &plan(true), &|| false, &mut |p| {
            steps.push(format!("{p:?}"))
        })
        .expect("run");
        let r = &out.results[0];
        assert!((r.ndr_pps - 50_000.0).abs() <= 50_000.0 * 0.005, "{r:?}");
        assert!(!r.generator_bound, "{r:?}");
        assert_eq!(r.generator_ceiling_pps, Some(500_000.0));
        let loads: Vec<f64> = r.latency_us.iter().map(|l| l.ndr_percent).collect();
        assert_eq!(loads, [10.0, 50.0, 90.0]);
        assert!(steps[0].starts_with("WarmingUp"), "{steps:?}");
        assert!(steps[1].starts_with("Ceiling"), "{steps:?}");
        assert_eq!(steps.len(), 2 + r.trial_count, "{steps:?}");
        assert_eq!(out.documents()[0].result, *r);
    }

    #[test]
    fn latency_can_be_left_out_and_an_unknown_ceiling_is_said() {
        let mut bed = Simulated {
            limit: 1e9,
            generator: 100_000.0,
            sink: false,
            trials: 0,
        };
        let out = run(&mut bed, &plan(false), &|| false, &mut |_| {}).expect("run");
        let r = &out.results[0];
        assert!(r.latency_us.is_empty());
        // No latency trials: only the search's, a trial the generator fell short of run twice.
        let short = r.trials.iter().filter(|t| t.generator_short).count();
        assert_eq!(bed.trials, r.trial_count + short);
        assert_eq!(r.generator_ceiling_pps, None);
        // The generator, not the DUT, is the limit here.
        assert!(r.generator_bound, "{r:?}");
    }

    #[test]
    fn a_stop_before_a_trial_ends_the_procedure_with_an_error() {
        let mut bed = Simulated {
            limit: 50_000.0,
            generator: 500_000.0,
            sink: true,
            trials: 0,
        };
        let err = run(&mut bed, &plan(true), &|| true, &mut |_| {}).expect_err("stopped");
        assert!(matches!(err, LabError::Stopped), "{err}");
        assert_eq!(bed.trials, 0);
    }
}
