//! The experiment runner: for each slot of the interleaved schedule (A B C A B C …) it builds
//! the variant's lab, applies its firewall, runs the workload through a [`Load`] and removes
//! the lab again, then summarises each variant.
//!
//! Why a fresh lab per run rather than one lab for the whole experiment: bring-up costs ~10 ms,
//! and a fresh set of namespaces means no state leaks between runs or variants — cached TCP
//! metrics (ssthresh per destination), conntrack entries, neighbour state, or a previous
//! variant's sysctls. Stop signals (Ctrl-C, SIGTERM, SIGHUP) end the current run early (it
//! does not count) and tear the lab down; the runs finished before are returned, marked
//! [`ExperimentResult::interrupted`]. After `kill -9`, `linerate lab down NAME` removes what is
//! left.

mod engine;
mod frames;
mod iperf3;
mod summary;

pub use engine::Engine;
pub(crate) use engine::run_client_server;
pub use iperf3::Iperf3;
pub use summary::comparison_options;

pub(crate) use crate::child::wait_bounded;

use linerate_stats::Confidence;
use linerate_stats::comparison::Verdict;

pub use crate::bed::{Measure, RunDocument, RunTunnel};
use crate::bed::{RunFacts, TestBed};
use crate::build::{self, UpOptions};
use crate::experiment::schedule::{self, Slot};
use crate::experiment::{Experiment, Workload};
use crate::state::LabState;
use crate::{LabError, control, firewall, netns, teardown};
use linerate_sys::signal::{self, STOP_SIGNALS};

/// Schema tag of a run's results.
pub const SCHEMA: &str = "linerate.lab-run/1";

/// Something that generates the workload between `gen` and `recv` of a lab and measures it.
/// The traffic engine plugs in here; [`Iperf3`] is the stand-in until then.
pub trait Load {
    /// Name for reports.
    fn name(&self) -> &'static str;
    /// Refuses workloads it cannot run, before anything is built.
    fn check(&self, workload: &Workload) -> Result<(), LabError>;
    /// Runs `workload` once on `lab`; returns early (with an error) when `interrupted` says so.
    fn run(
        &self,
        lab: &LabState,
        workload: &Workload,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<Measure, LabError>;
}

/// One run in the schedule.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunRecord {
    /// Where it was in the schedule.
    pub slot: Slot,
    /// The variant's name.
    pub variant: String,
    /// The measurement, when the run succeeded.
    pub measure: Option<Measure>,
    /// Why the run does not count.
    pub error: Option<String>,
    /// The tunnel the load went through, when the lab had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tunnel: Option<RunTunnel>,
    /// How the run's lab emulated its links (what `emulator = "auto"` chose); `None` when the
    /// lab was not built.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emulator: Option<crate::state::EmulatorKind>,
}

/// A variant's measurements.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VariantResult {
    /// The variant.
    pub name: String,
    /// Unit of the values.
    pub unit: Option<&'static str>,
    /// Values of the runs that counted, in schedule order.
    pub values: Vec<f64>,
    /// Runs that failed.
    pub failed: usize,
    /// Descriptive statistics of `values`.
    pub summary: linerate_stats::Summary,
    /// Against the baseline (the first variant), Student's t at the experiment's confidence
    /// with exact quantiles; `None` for the baseline or with fewer than two values on either
    /// side. Written to JSON as the Student's t comparison.
    #[serde(serialize_with = "summary::student_t")]
    pub vs_baseline: Option<Verdict>,
}

/// The result of an experiment.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ExperimentResult {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// The experiment.
    pub experiment: String,
    /// The lab name used.
    pub lab: String,
    /// The load generator.
    pub load: &'static str,
    /// The confidence level of the comparisons.
    pub confidence: Confidence,
    /// Every run, in order.
    pub runs: Vec<RunRecord>,
    /// Per variant; the first is the baseline.
    pub variants: Vec<VariantResult>,
    /// The signal that stopped the experiment before its last run (`runs` are those finished
    /// before it); `None` when every run was made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<i32>,
}

/// How much a run's duration may differ from the configured one and still count (share).
const DURATION_TOLERANCE: f64 = 0.2;
/// Extra seconds a run may last beyond the tolerance.
const DURATION_SLACK_S: f64 = 1.0;

/// Runs `exp` on a fresh namespace lab per run and compares each variant with the baseline
/// at `confidence`; `progress` sees each run as it ends (run index, total).
pub fn run(
    exp: &Experiment,
    opts: &UpOptions,
    load: &dyn Load,
    confidence: Confidence,
    progress: &mut dyn FnMut(&RunRecord, usize, usize),
) -> Result<ExperimentResult, LabError> {
    let mut bed = LabBed {
        opts,
        load,
        name: exp.lab_name.to_string(),
    };
    run_on(exp, &mut bed, load.name(), confidence, progress)
}

/// Runs `exp` on `bed` (its variants interleaved and repeated) and compares each variant with
/// the baseline at `confidence`; `load` names the load generator in the result. The bed is
/// restored at the end whatever happened (a stop signal, an error).
pub fn run_on(
    exp: &Experiment,
    bed: &mut dyn TestBed,
    load: &'static str,
    confidence: Confidence,
    progress: &mut dyn FnMut(&RunRecord, usize, usize),
) -> Result<ExperimentResult, LabError> {
    bed.check(exp)?;
    let order = schedule::interleaved(exp.variants.len(), exp.repetitions);
    let mut runs = Vec::with_capacity(order.len());
    let blocked = signal::Blocked::new(&STOP_SIGNALS);
    let pending = std::cell::Cell::new(None);
    let interrupted = || {
        if pending.get().is_none() {
            pending.set(signal::take_pending(&STOP_SIGNALS).map(|s| s as i32));
        }
        pending.get().is_some()
    };
    let mut outcome = Ok(());
    for (i, slot) in order.iter().enumerate() {
        if interrupted() {
            break;
        }
        let variant = &exp.variants[slot.variant];
        let mut facts = RunFacts::default();
        let record = match bed.one_run(variant, &interrupted, &mut facts) {
            Ok(Ok(m)) => {
                let RunFacts {
                    mut tunnel,
                    emulator,
                } = facts;
                let want = variant.workload.duration.as_secs_f64();
                // The receiver's clock also covers draining the path's queue: allow some slack.
                // A run that ended early does not count; one that ran long (draining the path's
                // queue, a loaded machine) only when far off.
                let short = m.seconds < want * (1.0 - DURATION_TOLERANCE);
                let long = m.seconds > want * (1.0 + DURATION_TOLERANCE) + DURATION_SLACK_S;
                let error =
                    (short || long).then(|| format!("ran {:.2} s instead of {want} s", m.seconds));
                let mut m = m;
                if let Some(t) = tunnel.as_mut() {
                    let document = m.document.as_mut().and_then(RunDocument::iperf3_mut);
                    t.tcp_maxseg = document.as_ref().and_then(|d| d.start.tcp_mss_default);
                    // The stored document carries the tunnel too (its `linerate` object keeps
                    // keys it does not know), so the store knows which implementation ran.
                    if let Some(ext) = document.and_then(|d| d.linerate.as_mut())
                        && let Ok(v) = serde_json::to_value(&*t)
                    {
                        ext.extra.insert("tunnel".into(), v);
                    }
                }
                RunRecord {
                    slot: *slot,
                    variant: variant.name.clone(),
                    measure: error.is_none().then_some(m),
                    error,
                    tunnel,
                    emulator,
                }
            }
            Ok(Err(e)) => RunRecord {
                slot: *slot,
                variant: variant.name.clone(),
                measure: None,
                error: Some(e.to_string()),
                tunnel: facts.tunnel,
                emulator: facts.emulator,
            },
            // A stop signal during a lab's bring-up (which removed what it made) stops the
            // experiment like one during a run: the runs before it are the result.
            Err(LabError::Interrupted(sig)) => {
                pending.set(Some(sig));
                break;
            }
            Err(e) => {
                outcome = Err(e);
                break;
            }
        };
        if interrupted() {
            break;
        }
        progress(&record, i + 1, order.len());
        runs.push(record);
    }
    // Restored with the stop signals still blocked: a second Ctrl-C does not cut it short.
    let restored = bed.finish();
    drop(blocked);
    outcome?;
    restored?;
    let variants = summary::variants(exp, &runs, confidence);
    Ok(ExperimentResult {
        schema: SCHEMA,
        experiment: exp.name.clone(),
        lab: bed.name(),
        load,
        confidence,
        runs,
        variants,
        interrupted: pending.get(),
    })
}

/// The namespace lab as a test bed: every run on a fresh lab, built for the variant and
/// removed after the run, the load run in its `gen` and `recv`.
struct LabBed<'a> {
    opts: &'a UpOptions,
    load: &'a dyn Load,
    name: String,
}

impl TestBed for LabBed<'_> {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn check(&mut self, exp: &Experiment) -> Result<(), LabError> {
        if !linerate_sys::is_root() {
            return Err(LabError::NotRoot);
        }
        for v in &exp.variants {
            self.load.check(&v.workload)?;
        }
        Ok(())
    }

    /// Builds the variant's lab, runs the load once, removes the lab.
    fn one_run(
        &mut self,
        variant: &crate::experiment::Variant,
        interrupted: &dyn Fn() -> bool,
        facts: &mut RunFacts,
    ) -> Result<Result<Measure, LabError>, LabError> {
        let opts = self.opts;
        let report = build::up(&variant.spec, opts)?;
        let state = report.state;
        facts.emulator = Some(state.emulator);
        facts.tunnel = state.tunnel.as_ref().map(|t| RunTunnel {
            kind: t.spec.kind(),
            implementation: t.implementation.clone(),
            interface_mtu: t.mtu,
            tcp_maxseg: None,
            link_mtu: t.link_mtu,
            observed: None,
        });
        let result = (|| {
            if let Some(fw) = &variant.firewall {
                let node = control::default_firewall_node(&state);
                let ns = netns::Netns::open(control::node_netns(&state, node)?)?;
                firewall::apply(&ns, node, fw)?;
            }
            self.load.run(&state, &variant.workload, interrupted)
        })();
        if let (Some(t), Some(run)) = (state.tunnel.as_ref(), facts.tunnel.as_mut()) {
            run.observed = Some(crate::tunnel::observe::observe(t));
        }
        teardown::down(&opts.state_dir, &variant.spec.name)?;
        Ok(result)
    }

    fn finish(&mut self) -> Result<(), LabError> {
        Ok(())
    }
}
