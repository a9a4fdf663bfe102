//! The throughput search: MLRsearch-style (FD.io CSIT; IETF "Multiple Loss Ratio Search"),
//! pure logic over a [`Measurer`] that runs one trial at a load for a duration.
//!
//! The facts of the method it follows: several loss ratios (NDR = 0, PDR = 0.5 %) are searched
//! in one pass, every trial classifying the load for each of them; the search goes through
//! phases whose trial duration grows geometrically from a short initial one to the final one
//! while the width goal halves, so most trials are short and only the last phase pays the full
//! duration; the first trial at the maximum load measures the forwarding rate, which starts the
//! search near the answer instead of at the middle of the whole range; a lower bound found with
//! shorter trials is re-measured at the phase's longer duration, and a bound that no longer
//! holds is searched for outward with a step that doubles each time (external search). A
//! trial's loss at any duration makes its load an upper bound (a longer trial would lose as
//! well); a lower bound needs trials at the phase's own duration, `final_repeats` of them in
//! the final phase, each without more loss than its goal allows.
//!
//! linerate's own addition: every failing trial estimates its goal's answer as the rate the
//! device forwarded over 1 − the goal's loss ratio (exact for a device that forwards a fixed
//! rate and drops the rest, RFC 2544's model), and the next load is a quarter of the width
//! under that estimate, within the bounds and never less than halving them; a load one width
//! above a lower bound that the estimate puts within a width of the answer often proves NDR's
//! upper bound and PDR's lower bound at once. On rate-limited devices this takes a third of the
//! plain binary search's trials or fewer; on devices whose loss grows gently it falls back to
//! halving and costs no more than the binary search (both in the tests below).
//!
//! [`binary_search`] is the plain RFC 2544 search (one goal at a time, every trial at the
//! final duration, halving the whole range): what the trial counts are compared against.

/// One loss-ratio goal: NDR has ratio 0, PDR e.g. 0.005.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Goal {
    /// `ndr`, `pdr`.
    pub name: String,
    /// The highest loss ratio a trial may have at a load that counts as forwarded.
    pub loss_ratio: f64,
}

/// The search's parameters. Loads are frames per second.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Config {
    /// The goals, searched together.
    pub goals: Vec<Goal>,
    /// The lowest load tried; below it the result is "none".
    pub min_load: f64,
    /// The highest load tried (the line rate, or the generator's ceiling if lower).
    pub max_load: f64,
    /// Trial duration of the first phase, seconds.
    pub initial_duration: f64,
    /// Trial duration of the final phase, seconds.
    pub final_duration: f64,
    /// Phases in all (at least 1: only the final one).
    pub phases: u32,
    /// Relative width goal of the final phase: (upper − lower) / upper.
    pub width: f64,
    /// Trials at the final duration a lower bound needs, all within the goal.
    pub final_repeats: u32,
    /// A bound on the number of trials (the search stops unconverged at it).
    pub max_trials: u32,
}

/// Phases of a search when not told otherwise (`lab rfc2544 --phases`, `lab run`'s workload).
pub const DEFAULT_PHASES: u32 = 2;
/// Final trials each lower bound must pass when not told otherwise.
pub const DEFAULT_REPEATS: u32 = 2;
/// Relative width goal of the final phase when not told otherwise.
pub const DEFAULT_WIDTH: f64 = 0.005;
/// PDR's loss ratio when not told otherwise.
pub const DEFAULT_PDR: f64 = 0.005;
/// Most trials of one search when not told otherwise.
pub const DEFAULT_MAX_TRIALS: u32 = 60;
/// Most phases a search may be asked for.
pub const MAX_PHASES: u32 = 10;
/// Most final trials a bound may be asked to pass.
pub const MAX_REPEATS: u32 = 20;
/// A width goal must be less than this (a relative width of half the load or more is no search).
pub const MAX_WIDTH: f64 = 0.5;

/// The two goals of RFC 2544 practice: NDR (no loss) and PDR (at most `pdr_loss_ratio`).
pub fn ndr_and_pdr(pdr_loss_ratio: f64) -> Vec<Goal> {
    vec![
        Goal {
            name: "ndr".into(),
            loss_ratio: 0.0,
        },
        Goal {
            name: "pdr".into(),
            loss_ratio: pdr_loss_ratio,
        },
    ]
}

/// The lowest load worth a trial when the highest is `max_load`: a ten-thousandth of it, at
/// least 10 frames/s.
pub fn min_load_for(max_load: f64) -> f64 {
    (max_load / 10_000.0).max(10.0)
}

/// One trial's outcome.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Trial {
    /// Intended load, frames/s.
    pub load: f64,
    /// Its duration, seconds.
    pub duration: f64,
    /// Frames sent.
    pub sent: u64,
    /// Frames received.
    pub received: u64,
    /// The phase it belonged to (0-based).
    pub phase: u32,
}

impl Trial {
    /// Lost frames over sent frames (0 when nothing was sent).
    pub fn loss_ratio(&self) -> f64 {
        if self.sent == 0 {
            return 1.0;
        }
        self.sent.saturating_sub(self.received) as f64 / self.sent as f64
    }

    /// Frames forwarded per second.
    pub fn forwarding_rate(&self) -> f64 {
        self.received as f64 / self.duration.max(1e-9)
    }
}

/// What runs trials: the lab's generator and receiver, or a simulated device in tests.
pub trait Measurer {
    /// Error of a trial that could not be run (it aborts the search).
    type Error;
    /// Offers `load` frames/s for `duration` seconds and counts what arrived.
    fn measure(&mut self, load: f64, duration: f64) -> Result<(u64, u64), Self::Error>;
}

/// One goal's answer.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct GoalResult {
    /// The goal.
    pub goal: Goal,
    /// The highest load found forwarded within the goal (the conditional throughput), frames/s;
    /// `None` when even the lowest load lost too much.
    pub lower: Option<f64>,
    /// The lowest load found losing more than the goal allows; `None` when the maximum load
    /// was forwarded within the goal.
    pub upper: Option<f64>,
}

/// The search's answer.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Outcome {
    /// Per goal, in the order given.
    pub goals: Vec<GoalResult>,
    /// Every trial, in order.
    pub trials: Vec<Trial>,
    /// Whether every goal met the width goal (false when `max_trials` stopped it).
    pub converged: bool,
}

impl Outcome {
    /// Sum of the trials' durations, seconds.
    pub fn trial_seconds(&self) -> f64 {
        self.trials.iter().map(|t| t.duration).sum()
    }
}

impl Config {
    /// Trial duration of phase `p`: geometric from the initial to the final duration.
    pub fn duration(&self, p: u32) -> f64 {
        let last = self.phases.max(1) - 1;
        if last == 0 || p >= last {
            return self.final_duration;
        }
        let ratio = self.final_duration / self.initial_duration.max(1e-9);
        self.initial_duration * ratio.powf(f64::from(p) / f64::from(last))
    }

    /// Width goal of phase `p`: the final width, doubled for each phase still to come.
    pub fn phase_width(&self, p: u32) -> f64 {
        let last = self.phases.max(1) - 1;
        (self.width * 2f64.powi(last.saturating_sub(p) as i32)).min(0.5)
    }
}

/// Where one goal stands in a phase.
struct Bounds {
    lower: Option<f64>,
    upper: Option<f64>,
    /// A load that passed at a shorter duration and still waits to be re-measured.
    stale_lower: Option<f64>,
    /// A load that passed at this phase's duration but has fewer than the needed trials.
    unproven_lower: Option<f64>,
}

fn bounds(trials: &[Trial], goal: &Goal, min_duration: f64, needed: u32) -> Bounds {
    let ok = |t: &Trial| t.loss_ratio() <= goal.loss_ratio + 1e-12;
    // Any loss at a load, at any duration, makes it an upper bound.
    let upper = trials
        .iter()
        .filter(|t| !ok(t))
        .map(|t| t.load)
        .fold(None, |m: Option<f64>, l| Some(m.map_or(l, |m| m.min(l))));
    let below = |l: f64| upper.is_none_or(|u| l < u);
    let mut lower = None;
    let mut unproven_lower = None;
    let mut stale_lower = None;
    for t in trials.iter().filter(|t| ok(t) && below(t.load)) {
        let full = trials
            .iter()
            .filter(|u| u.load == t.load && u.duration >= min_duration * 0.999 && ok(u))
            .count() as u32;
        let slot = if full >= needed {
            &mut lower
        } else if full > 0 {
            &mut unproven_lower
        } else {
            &mut stale_lower
        };
        if slot.is_none_or(|l| t.load > l) {
            *slot = Some(t.load);
        }
    }
    // Only candidates above the proven lower bound are worth a trial.
    let above = |c: Option<f64>| c.filter(|c| lower.is_none_or(|l| *c > l));
    Bounds {
        lower,
        upper,
        stale_lower: above(stale_lower),
        unproven_lower: above(unproven_lower),
    }
}

/// Runs the search. Trials come from `measurer`; `progress` sees each as it ends.
pub fn search<M: Measurer>(
    cfg: &Config,
    measurer: &mut M,
    progress: &mut dyn FnMut(&Trial),
) -> Result<Outcome, M::Error> {
    let mut trials: Vec<Trial> = Vec::new();
    let phases = cfg.phases.max(1);
    let mut run = |trials: &mut Vec<Trial>, load: f64, duration: f64, phase: u32| {
        let (sent, received) = measurer.measure(load, duration)?;
        let t = Trial {
            load,
            duration,
            sent,
            received,
            phase,
        };
        progress(&t);
        trials.push(t);
        Ok::<(), M::Error>(())
    };
    // The first trial, at the maximum load, measures the forwarding rate.
    run(&mut trials, cfg.max_load, cfg.duration(0), 0)?;
    let mut converged = false;
    'phases: for phase in 0..phases {
        let duration = cfg.duration(phase);
        let width = cfg.phase_width(phase);
        let needed = if phase + 1 == phases {
            cfg.final_repeats.max(1)
        } else {
            1
        };
        // Consecutive outward steps per goal in this phase (the step doubles each time).
        let mut steps_down = vec![0i32; cfg.goals.len()];
        let mut steps_up = vec![0i32; cfg.goals.len()];
        loop {
            if trials.len() >= cfg.max_trials as usize {
                break 'phases;
            }
            let mut next = None;
            for (g, goal) in cfg.goals.iter().enumerate() {
                let b = bounds(&trials, goal, duration, needed);
                if let Some(load) = candidate(
                    cfg,
                    &b,
                    goal_estimate(&trials, goal),
                    width,
                    &mut steps_down[g],
                    &mut steps_up[g],
                ) {
                    next = Some(load);
                    break;
                }
            }
            let Some(load) = next else {
                if phase + 1 == phases {
                    converged = true;
                }
                break;
            };
            run(&mut trials, load, duration, phase)?;
        }
    }
    let last = cfg.duration(phases - 1);
    let needed = cfg.final_repeats.max(1);
    let goals = cfg
        .goals
        .iter()
        .map(|goal| {
            let b = bounds(&trials, goal, last, needed);
            GoalResult {
                goal: goal.clone(),
                lower: b.lower,
                upper: b.upper,
            }
        })
        .collect();
    Ok(Outcome {
        goals,
        trials,
        converged,
    })
}

/// The load at which a trial that lost more than `goal` allows would have lost just that much,
/// if the device forwards a fixed rate and drops the rest (the RFC 2544 device): the rate it
/// forwarded, over 1 − the goal's loss ratio. Always below the trial's load.
fn estimate(t: &Trial, goal: &Goal) -> f64 {
    t.forwarding_rate() / (1.0 - goal.loss_ratio).max(1e-9)
}

/// The estimate of goal `goal`'s answer from the trials: from the lowest failing load among the
/// longest failing trials (a short trial's queue flatters the device, so the longest say
/// most). `None` when nothing failed.
fn goal_estimate(trials: &[Trial], goal: &Goal) -> Option<f64> {
    let failing = || {
        trials
            .iter()
            .filter(|t| t.loss_ratio() > goal.loss_ratio + 1e-12)
    };
    let longest = failing()
        .map(|t| t.duration)
        .fold(None, |m: Option<f64>, d| Some(m.map_or(d, |m| m.max(d))))?;
    failing()
        .filter(|t| t.duration >= longest * 0.999)
        .min_by(|a, b| a.load.total_cmp(&b.load))
        .map(|t| estimate(t, goal))
}

/// The next load for goal `g`, or `None` when its bounds meet the phase's width goal.
///
/// Below the lowest failing load the next load is the goal's estimate (what the failing
/// trials forwarded), a quarter of the width under it so that it likely holds, but at least
/// half the width under the upper bound, that margin doubling with each consecutive failure
/// (so a device whose loss does not follow the estimate still costs few trials). Above a
/// proven lower bound that the estimate says is within the width of the answer, the next load
/// is one width above it, the step doubling while loads keep holding: one failure there ends
/// the goal.
///
/// `steps_down` and `steps_up` are the goal's consecutive steps each way (its margin's and its
/// step's doublings).
fn candidate(
    cfg: &Config,
    b: &Bounds,
    estimate: Option<f64>,
    width: f64,
    steps_down: &mut i32,
    steps_up: &mut i32,
) -> Option<f64> {
    let narrow = |lo: f64, hi: f64| (hi - lo) / hi <= width * (1.0 + 1e-9);
    // A lower bound waiting for more trials at this duration: repeat it.
    if let Some(l) = b.unproven_lower {
        return Some(l);
    }
    let step_up = |lo: f64, k: i32| lo * (1.0 + width * 2f64.powi(k));
    match (b.lower, b.upper) {
        (Some(lo), Some(hi)) if narrow(lo, hi) => None,
        (Some(lo), None) if lo >= cfg.max_load => None,
        (None, Some(hi)) if hi <= cfg.min_load => None,
        (lo, None) => {
            // Nothing failed: re-measure what held at a shorter duration, else step up.
            if let Some(l) = b.stale_lower {
                return Some(l);
            }
            let lo = lo.unwrap_or(cfg.min_load);
            *steps_down = 0;
            let next = step_up(lo, *steps_up).min(cfg.max_load);
            *steps_up += 1;
            Some(next)
        }
        (lo, Some(hi)) => {
            let e = estimate.unwrap_or(hi).min(hi);
            if let Some(lo) = lo
                && e > lo
                && e <= lo / (1.0 - width)
            {
                // The answer is within a width above the lower bound, by the estimate.
                *steps_down = 0;
                let next = step_up(lo, *steps_up).min((lo + hi) / 2.0);
                *steps_up += 1;
                return Some(next);
            }
            *steps_up = 0;
            // The first failure in a phase is often the shorter phase's flattering estimate
            // meeting a longer trial: the margin grows from the second on.
            let margin = (width / 2.0 * 2f64.powi((*steps_down - 1).max(0))).min(0.9);
            let next = (e * (1.0 - width / 4.0)).min(hi * (1.0 - margin));
            // A load that held in a shorter trial and that the estimate does not doubt is
            // re-measured at this phase's duration first.
            if let Some(st) = b.stale_lower
                && st <= next
            {
                return Some(st);
            }
            *steps_down += 1;
            Some(match lo {
                // Between the bounds the estimate may cut the range, never less than in half
                // (far apart, halved geometrically, so decades cost what one does).
                Some(lo) => {
                    let half = if (hi - lo) / hi > 4.0 * width {
                        (lo * hi).sqrt()
                    } else {
                        (lo + hi) / 2.0
                    };
                    if next > lo { next.min(half) } else { half }
                }
                None => next.max(cfg.min_load),
            })
        }
    }
}

/// The plain RFC 2544 binary search for one goal: every trial at `duration`, the range
/// [`min_load`, `max_load`] halved until (upper − lower) / upper ≤ `width`.
pub fn binary_search<M: Measurer>(
    goal: &Goal,
    min_load: f64,
    max_load: f64,
    duration: f64,
    width: f64,
    measurer: &mut M,
) -> Result<(Option<f64>, Vec<Trial>), M::Error> {
    let mut trials = Vec::new();
    let mut lo: Option<f64> = None;
    let mut hi = max_load;
    let mut load = max_load;
    for _ in 0..64 {
        let (sent, received) = measurer.measure(load, duration)?;
        let t = Trial {
            load,
            duration,
            sent,
            received,
            phase: 0,
        };
        let ok = t.loss_ratio() <= goal.loss_ratio + 1e-12;
        trials.push(t);
        if ok {
            lo = Some(load);
            if load >= max_load {
                break;
            }
        } else {
            hi = load;
        }
        let l = lo.unwrap_or(min_load);
        if (hi - l) / hi <= width || hi <= min_load {
            break;
        }
        load = (l + hi) / 2.0;
    }
    Ok((lo, trials))
}

/// The plain binary search for every goal of `cfg`, one after the other, all trials at the
/// final duration with the final width goal: the [`Outcome`] `search` would give, for
/// comparing trial counts and times.
pub fn binary<M: Measurer>(
    cfg: &Config,
    measurer: &mut M,
    progress: &mut dyn FnMut(&Trial),
) -> Result<Outcome, M::Error> {
    let mut trials: Vec<Trial> = Vec::new();
    let mut goals = Vec::new();
    for goal in &cfg.goals {
        let mut counted = Counting {
            inner: &mut *measurer,
            progress: &mut *progress,
            duration: cfg.final_duration,
        };
        let (lower, mine) = binary_search(
            goal,
            cfg.min_load,
            cfg.max_load,
            cfg.final_duration,
            cfg.width,
            &mut counted,
        )?;
        let upper = mine
            .iter()
            .filter(|t| t.loss_ratio() > goal.loss_ratio + 1e-12)
            .map(|t| t.load)
            .fold(None, |m: Option<f64>, l| Some(m.map_or(l, |m| m.min(l))));
        trials.extend(mine);
        goals.push(GoalResult {
            goal: goal.clone(),
            lower,
            upper,
        });
    }
    Ok(Outcome {
        goals,
        trials,
        converged: true,
    })
}

/// A measurer that shows each trial to `progress` as it ends.
struct Counting<'a, M> {
    inner: &'a mut M,
    progress: &'a mut dyn FnMut(&Trial),
    duration: f64,
}

impl<M: Measurer> Measurer for Counting<'_, M> {
    type Error = M::Error;
    fn measure(&mut self, load: f64, duration: f64) -> Result<(u64, u64), M::Error> {
        let (sent, received) = self.inner.measure(load, duration)?;
        let t = Trial {
            load,
            duration: self.duration,
            sent,
            received,
            phase: 0,
        };
        (self.progress)(&t);
        Ok((sent, received))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device that forwards `capacity` frames/s plus what its `buffer` absorbs in a trial,
    /// and drops the rest: deterministic, and kinder to short trials, as real queues are.
    struct Simulated {
        capacity: f64,
        buffer: f64,
    }

    impl Measurer for Simulated {
        type Error = std::convert::Infallible;
        fn measure(&mut self, load: f64, duration: f64) -> Result<(u64, u64), Self::Error> {
            let sent = (load * duration).round() as u64;
            let can = (self.capacity * duration + self.buffer).round() as u64;
            Ok((sent, sent.min(can)))
        }
    }

    fn config(max_load: f64) -> Config {
        Config {
            goals: ndr_and_pdr(0.005),
            min_load: 1000.0,
            max_load,
            initial_duration: 1.0,
            final_duration: 10.0,
            phases: DEFAULT_PHASES,
            width: 0.005,
            final_repeats: 2,
            max_trials: 100,
        }
    }

    fn dut() -> Simulated {
        Simulated {
            capacity: 50_000.0,
            buffer: 1000.0,
        }
    }

    #[test]
    fn phases_grow_the_duration_and_narrow_the_width() {
        let c = Config {
            phases: 3,
            ..config(1e6)
        };
        assert_eq!(c.duration(0), 1.0);
        assert!((c.duration(1) - 10f64.sqrt()).abs() < 1e-9);
        assert_eq!(c.duration(2), 10.0);
        assert!((c.phase_width(0) - 0.02).abs() < 1e-12);
        assert!((c.phase_width(2) - 0.005).abs() < 1e-12);
    }

    #[test]
    fn finds_ndr_and_pdr_of_a_simulated_device_in_one_pass() {
        let c = config(14_880_952.0);
        let out = search(&c, &mut dut(), &mut |_| {}).unwrap();
        assert!(out.converged, "{out:#?}");
        // At 10 s the device forwards 50 000/s + 100/s from its buffer without loss.
        let ndr = out.goals[0].lower.unwrap();
        let true_ndr = 50_100.0;
        assert!(
            ndr <= true_ndr && ndr >= true_ndr * (1.0 - 0.005),
            "ndr {ndr}"
        );
        let upper = out.goals[0].upper.unwrap();
        assert!(upper > true_ndr && (upper - ndr) / upper <= 0.005);
        // PDR: loss 0.5 % at load L when 50 100 = 0.995 L.
        let pdr = out.goals[1].lower.unwrap();
        let true_pdr = 50_100.0 / 0.995;
        assert!(
            pdr <= true_pdr && pdr >= true_pdr * (1.0 - 0.005),
            "pdr {pdr}"
        );
        // The final bounds were each measured final_repeats times at the final duration.
        let at = |l: f64| {
            out.trials
                .iter()
                .filter(|t| t.load == l && t.duration == 10.0)
                .count()
        };
        assert!(at(ndr) >= 2 && at(pdr) >= 2);
    }

    #[test]
    fn needs_fewer_trials_and_far_less_time_than_plain_binary_search() {
        let c = config(14_880_952.0);
        let out = search(&c, &mut dut(), &mut |_| {}).unwrap();
        let b = binary(&c, &mut dut(), &mut |_| {}).unwrap();
        let plain_trials = b.trials.len();
        let plain_seconds = b.trial_seconds();
        let plain: Vec<f64> = b.goals.iter().map(|g| g.lower.unwrap()).collect();
        assert_eq!(
            plain_trials, 34,
            "the plain search's trials over 14.88 Mpps to 0.5 %"
        );
        // Both find the same answers (within the width)…
        for (g, p) in out.goals.iter().zip(&plain) {
            let l = g.lower.unwrap();
            assert!((l - p).abs() / p <= 0.01, "{l} vs {p}");
        }
        // …the search in under a third of the trials and of the trial time.
        assert!(
            out.trials.len() * 3 < plain_trials,
            "search {} trials, binary {plain_trials}",
            out.trials.len()
        );
        assert!(
            out.trial_seconds() * 3.0 < plain_seconds,
            "search {} s, binary {plain_seconds} s",
            out.trial_seconds()
        );
    }

    #[test]
    fn a_device_that_forwards_everything_gives_the_maximum() {
        let c = config(100_000.0);
        let mut fast = Simulated {
            capacity: 1e9,
            buffer: 0.0,
        };
        let out = search(&c, &mut fast, &mut |_| {}).unwrap();
        assert!(out.converged);
        assert_eq!(out.goals[0].lower, Some(100_000.0));
        assert_eq!(out.goals[0].upper, None);
        // One trial per phase at the maximum, plus the final repeat.
        assert!(out.trials.len() <= 5, "{}", out.trials.len());
    }

    #[test]
    fn a_device_that_loses_everything_gives_none() {
        let c = config(100_000.0);
        let mut dead = Simulated {
            capacity: 0.0,
            buffer: 0.0,
        };
        let out = search(&c, &mut dead, &mut |_| {}).unwrap();
        assert_eq!(out.goals[0].lower, None);
        assert_eq!(out.goals[1].lower, None);
        assert!(out.trials.len() < 40, "{}", out.trials.len());
    }

    /// A device with one bad trial (a stall of the machine) at trial number `bad`.
    struct Stalling {
        inner: Simulated,
        trial: usize,
        bad: usize,
    }

    impl Measurer for Stalling {
        type Error = std::convert::Infallible;
        fn measure(&mut self, load: f64, duration: f64) -> Result<(u64, u64), Self::Error> {
            self.trial += 1;
            let (sent, received) = self.inner.measure(load, duration)?;
            Ok(if self.trial == self.bad {
                (sent, received * 9 / 10)
            } else {
                (sent, received)
            })
        }
    }

    #[test]
    fn a_stall_costs_a_bounded_number_of_trials_and_errs_low() {
        let c = config(14_880_952.0);
        for bad in 2..12 {
            let mut m = Stalling {
                inner: dut(),
                trial: 0,
                bad,
            };
            let out = search(&c, &mut m, &mut |_| {}).unwrap();
            assert!(out.converged, "stall at trial {bad}: {out:#?}");
            assert!(
                out.trials.len() <= 40,
                "stall at {bad}: {} trials",
                out.trials.len()
            );
            // A stall can only make a load look worse: never an NDR above the truth.
            let ndr = out.goals[0].lower.unwrap_or(0.0);
            assert!(ndr <= 50_100.0, "stall at {bad}: ndr {ndr}");
        }
    }

    #[test]
    fn the_trial_bound_stops_the_search_unconverged() {
        let mut c = config(14_880_952.0);
        c.max_trials = 3;
        let out = search(&c, &mut dut(), &mut |_| {}).unwrap();
        assert_eq!(out.trials.len(), 3);
        assert!(!out.converged);
    }

    /// A device of another shape: loss that grows gently above `capacity` (`gentle` × the
    /// overload: a queue that drops early, a policer that shares), with `background` loss at
    /// every load.
    struct Shaped {
        capacity: f64,
        gentle: f64,
        background: f64,
    }

    impl Measurer for Shaped {
        type Error = std::convert::Infallible;
        fn measure(&mut self, load: f64, duration: f64) -> Result<(u64, u64), Self::Error> {
            let sent = (load * duration).round() as u64;
            let over = (load / self.capacity - 1.0).max(0.0) * self.gentle;
            let kept = (1.0 - over.min(1.0)) * (1.0 - self.background);
            Ok((sent, (sent as f64 * kept) as u64))
        }
    }

    /// The estimate (what failing trials forwarded) is what makes the search cheap on devices
    /// that forward a fixed rate; on devices it misjudges the search still converges, to the
    /// answers the binary search finds, in no more trials than the binary search.
    #[test]
    fn costs_under_a_third_of_binary_on_rate_limited_devices_and_never_more_on_others() {
        let c = config(14_880_952.0);
        // Capacity, queue, and the share of the binary search's trials the search may take:
        // a third far below line rate (the 50 kpps DUT), where the binary search
        // halves many times; half near it, where the binary search is lucky.
        let fixed = [
            (5e3, 0.0, 3),
            (50e3, 1000.0, 3),
            (1e6, 100_000.0, 2),
            (10e6, 0.0, 2),
            (14.8e6, 0.0, 2),
        ];
        for (capacity, buffer, share) in fixed {
            let dut = || Simulated { capacity, buffer };
            let out = search(&c, &mut dut(), &mut |_| {}).unwrap();
            let b = binary(&c, &mut dut(), &mut |_| {}).unwrap();
            assert!(out.converged);
            assert!(
                out.trials.len() * share < b.trials.len(),
                "capacity {capacity}: search {} trials, binary {}",
                out.trials.len(),
                b.trials.len()
            );
        }
        let shaped = [(0.1, 0.0), (0.01, 0.0), (0.0, 0.001), (0.0, 0.01)];
        for (gentle, background) in shaped {
            let dut = || Shaped {
                capacity: 50e3,
                gentle,
                background,
            };
            let out = search(&c, &mut dut(), &mut |_| {}).unwrap();
            let b = binary(&c, &mut dut(), &mut |_| {}).unwrap();
            assert!(out.converged);
            assert!(
                out.trials.len() <= b.trials.len(),
                "gentle {gentle} background {background}: search {} trials, binary {}",
                out.trials.len(),
                b.trials.len()
            );
            for (s, p) in out.goals.iter().zip(&b.goals) {
                match (s.lower, p.lower) {
                    (Some(s), Some(p)) => assert!((s - p).abs() / p <= 0.01, "{s} vs {p}"),
                    (s, p) => assert_eq!(s, p),
                }
            }
        }
    }
}
