//! The stored side of an experiment: it is begun in the results store before the first run
//! (the store hands out its identity, `NAME-N`, and marks it running), every run is stored as
//! it ends, and at the end it is marked complete, or interrupted when a signal (or an error)
//! stopped it. Each run goes with the host's snapshot (taken once, when the experiment
//! begins) and its test bed and measure ([`LabRun`]: topology, links, the emulator that ran,
//! the tunnel's implementation, the value the lab compared), which reports show; an RFC 2544
//! run is stored in its own shape ([`Rfc2544Run`]). RFC 2544 results of `lab rfc2544` are
//! stored through [`record_rfc2544`].
//!
//! The caller decides where the database is and whether to store at all: `None` is
//! `--no-store`. No terminal output: what to tell the user is the caller's.

use std::path::PathBuf;

use linerate_store::lab_run::{self, LabRun};
use linerate_store::rfc2544::{Rfc2544Error, Rfc2544Run};
use linerate_store::{
    Experiment, ExperimentPlan, ExperimentRef, ExperimentStatus, HostRef, MeasuredRun,
    MeasuredRunError, RunContext, RunId, RunProfile, RunSource, Store, StoreError,
};

use crate::experiment::{Experiment as LabExperiment, Sweep, Variant};
use crate::rfc2544::procedure::Throughput;
use crate::runner::{Measure, RunDocument, RunRecord};

/// Why storing failed.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The database could not be opened.
    #[error("cannot open the results database")]
    Open(#[source] Box<StoreError>),
    /// A store operation failed.
    #[error("{what} in {}", path.display())]
    Store {
        /// What was being stored.
        what: String,
        /// The database file.
        path: PathBuf,
        /// What the store said.
        #[source]
        error: Box<StoreError>,
    },
    /// A measured run's document did not store.
    #[error(transparent)]
    Measured(Box<MeasuredRunError>),
    /// An RFC 2544 result did not turn into a stored run.
    #[error("frame {frame}'s result")]
    Rfc2544 {
        /// The frame size.
        frame: String,
        /// Why.
        #[source]
        error: Box<Rfc2544Error>,
    },
    /// The run's lab facts did not serialise.
    #[error("the run's lab facts")]
    LabFacts(#[source] serde_json::Error),
}

/// Where runs are stored, and what every stored run says about how it was measured.
#[derive(Debug, Clone)]
pub struct StoreAt {
    /// The database file (created and migrated if needed).
    pub path: PathBuf,
    /// The command line that measured the runs.
    pub command_line: String,
    /// The measuring tool and its version (`linerate 0.1.0`).
    pub tool: String,
}

impl StoreAt {
    fn open(&self) -> Result<Store, RecordError> {
        Store::open(&self.path).map_err(|e| RecordError::Open(Box::new(e)))
    }

    fn context(&self, experiment: ExperimentRef, host: Option<serde_json::Value>) -> RunContext {
        let mut context = RunContext::new(RunSource::Lab);
        context.command_line = Some(self.command_line.clone());
        context.tool = Some(self.tool.clone());
        context.host = host.map(HostRef::of_snapshot);
        context.experiment = Some(experiment);
        context
    }

    fn failed(&self, what: impl Into<String>) -> impl FnOnce(StoreError) -> RecordError {
        let (what, path) = (what.into(), self.path.clone());
        move |error| RecordError::Store {
            what,
            path,
            error: Box::new(error),
        }
    }
}

/// What a variant's lab is, before it runs.
#[derive(Debug)]
struct Bed {
    lab: String,
    topology: String,
    links: Vec<String>,
    workload: String,
}

impl Bed {
    fn of(v: &Variant) -> Bed {
        Bed {
            lab: v.spec.name.to_string(),
            topology: v.spec.topology.to_string(),
            links: v
                .spec
                .links
                .iter()
                .enumerate()
                .filter_map(|(i, l)| {
                    let e = l.emulation.as_ref()?;
                    Some(format!(
                        "l{i}: mtu {}, fwd {} | rev {}",
                        l.mtu,
                        e[0].describe(),
                        e[1].describe()
                    ))
                })
                .collect(),
            workload: serde_json::to_value(v.workload.mode)
                .ok()
                .and_then(|m| m.as_str().map(str::to_owned))
                .unwrap_or_default(),
        }
    }

    /// The run's lab facts: this bed, the emulator and tunnel that ran, and what it measured.
    fn lab_run(&self, r: &RunRecord, m: &Measure) -> LabRun {
        LabRun {
            lab: self.lab.clone(),
            topology: self.topology.clone(),
            emulator: r
                .emulator
                .map_or_else(|| "unknown".to_owned(), |e| e.to_string()),
            links: self.links.clone(),
            tunnel: r
                .tunnel
                .as_ref()
                .map(|t| format!("{}: {}", t.kind, t.implementation)),
            workload: self.workload.clone(),
            value: m.value,
            unit: m.unit.to_owned(),
            hosts: Vec::new(),
        }
    }
}

/// The facts of real hosts, as a stored run carries them.
#[derive(Debug, Clone)]
struct OnHosts {
    /// The bed's name (`hosts gen=… recv=…`).
    name: String,
    /// One line per host.
    lines: Vec<String>,
}

/// An experiment being stored (or not, when there is no store).
#[derive(Debug)]
pub struct Recorder {
    store: Option<StoreAt>,
    /// The stored experiment; `None` without a store.
    experiment: Option<Experiment>,
    /// Runs stored so far.
    pub stored: usize,
    /// The store failed: no more runs are stored, the error is reported at the end.
    pub error: Option<RecordError>,
    sweep: Option<Sweep>,
    /// The host's snapshot (JSON), stored with every run.
    host: Option<serde_json::Value>,
    /// Each variant's test bed: lab, topology, links.
    beds: Vec<Bed>,
    /// The hosts, when the runs go between real hosts.
    hosts: Option<OnHosts>,
}

impl Recorder {
    /// Begins `exp` in the store (`None`: nothing is stored); `host` is the snapshot every run
    /// is stored with (the host does not change during an experiment: the store keeps it
    /// once, by its hash).
    ///
    /// # Errors
    /// The database cannot be opened, or the experiment not begun in it.
    pub fn begin(
        store: Option<StoreAt>,
        exp: &LabExperiment,
        host: Option<serde_json::Value>,
    ) -> Result<Recorder, RecordError> {
        let experiment = match &store {
            None => None,
            Some(at) => {
                let plan = ExperimentPlan {
                    variants: exp.variants.iter().map(|v| v.name.clone()).collect(),
                    repetitions: exp.repetitions,
                };
                Some(
                    at.open()?
                        .begin_experiment(&exp.name, &plan)
                        .map_err(at.failed(format!("storing experiment {}", exp.name)))?,
                )
            }
        };
        Ok(Recorder {
            host: experiment.as_ref().and(host),
            store,
            experiment,
            stored: 0,
            error: None,
            sweep: exp.sweep.clone(),
            beds: exp.variants.iter().map(Bed::of).collect(),
            hosts: None,
        })
    }

    /// The runs go between real hosts (`bed`, named so in results): every stored run says so
    /// and carries each host's facts.
    pub fn on_hosts(&mut self, bed: String, facts: &[crate::hosts::HostFacts]) {
        self.hosts = Some(OnHosts {
            name: bed,
            lines: facts.iter().map(crate::hosts::HostFacts::line).collect(),
        });
    }

    /// The stored experiment, when there is a store.
    pub fn experiment(&self) -> Option<&Experiment> {
        self.experiment.as_ref()
    }

    /// The database, when there is one.
    pub fn store(&self) -> Option<&StoreAt> {
        self.store.as_ref()
    }

    /// Stores one finished run as a repetition of its variant, with its profile when it was
    /// profiled; returns its id. A failure is kept in [`Recorder::error`] and stops storing.
    pub fn record(&mut self, r: &RunRecord, profile: Option<RunProfile>) -> Option<RunId> {
        match self.try_record(r, profile) {
            Ok(id) => id,
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }

    fn try_record(
        &mut self,
        r: &RunRecord,
        profile: Option<RunProfile>,
    ) -> Result<Option<RunId>, RecordError> {
        let (Some(at), Some(exp), Some((m, doc)), None) = (
            &self.store,
            &self.experiment,
            r.measure
                .as_ref()
                .and_then(|m| Some((m, m.document.as_ref()?))),
            &self.error,
        ) else {
            return Ok(None);
        };
        let experiment = ExperimentRef {
            experiment: exp.id.clone(),
            variant: r.variant.clone(),
            repetition: r.slot.repetition + 1,
            sweep_value: self
                .sweep
                .as_ref()
                // A grid sweep repeats the values once per base variant.
                .and_then(|s| s.values.get(r.slot.variant % s.values.len().max(1)))
                .and_then(|v| v.parse::<f64>().ok()),
            sweep_label: self.sweep.as_ref().map(|s| s.parameter.clone()),
        };
        let id = match doc {
            RunDocument::Iperf3(doc) => {
                let mut doc = doc.clone();
                if let Some(bed) = self.beds.get(r.slot.variant) {
                    let mut lab = bed.lab_run(r, m);
                    if let Some(h) = &self.hosts {
                        lab.lab = h.name.clone();
                        lab.topology = "hosts".to_owned();
                        lab.emulator = "none (real hosts)".to_owned();
                        lab.hosts = h.lines.clone();
                    }
                    let facts = serde_json::to_value(lab).map_err(RecordError::LabFacts)?;
                    doc.linerate
                        .get_or_insert_with(Default::default)
                        .extra
                        .insert(lab_run::KEY.to_owned(), facts);
                }
                let run = MeasuredRun {
                    document: &doc,
                    command_line: at.command_line.clone(),
                    tool: at.tool.clone(),
                    host_snapshot: self.host.clone(),
                    experiment: Some(experiment),
                };
                linerate_store::store_measured_run(&at.path, run)
                    .map_err(|e| RecordError::Measured(Box::new(e)))?
            }
            RunDocument::Rfc2544(doc) => {
                let context = at.context(experiment, self.host.clone());
                insert_rfc2544(at, &mut at.open()?, doc, context)?
            }
        };
        self.stored += 1;
        if let Some(p) = profile {
            at.open()?
                .insert_profile(id, &p)
                .map_err(at.failed(format!("storing run {id}'s profile")))?;
        }
        Ok(Some(id))
    }

    /// Marks the experiment `status` (complete, or interrupted).
    ///
    /// # Errors
    /// The database cannot be opened or written.
    pub fn finish(&mut self, status: ExperimentStatus) -> Result<(), RecordError> {
        let (Some(at), Some(exp)) = (&self.store, &mut self.experiment) else {
            return Ok(());
        };
        at.open()?
            .finish_experiment(&exp.id, status)
            .map_err(at.failed(format!("marking experiment {} {status}", exp.id)))?;
        exp.status = status;
        Ok(())
    }
}

fn insert_rfc2544(
    at: &StoreAt,
    store: &mut Store,
    doc: &Rfc2544Run,
    context: RunContext,
) -> Result<RunId, RecordError> {
    let frame = doc.result.frame.clone();
    let run = doc
        .record(context, now())
        .map_err(|error| RecordError::Rfc2544 {
            frame: frame.clone(),
            error: Box::new(error),
        })?;
    store
        .insert_run(&run)
        .map_err(at.failed(format!("storing frame {frame}'s result")))
}

/// Stores RFC 2544 results as the experiment `name` (`lab rfc2544`'s `rfc2544-LAB`,
/// `rfc2544`'s `rfc2544-TX-RX` or its `--name`; one variant per frame size, one run each;
/// `host` the snapshot they are stored with); returns the experiment's id, or `None` when
/// there is nothing to store.
///
/// # Errors
/// The database cannot be opened or written.
pub fn record_rfc2544(
    at: &StoreAt,
    t: &Throughput,
    name: &str,
    host: Option<serde_json::Value>,
) -> Result<Option<String>, RecordError> {
    if t.results.is_empty() {
        return Ok(None);
    }
    let mut store = at.open()?;
    let plan = ExperimentPlan {
        variants: t.results.iter().map(|r| r.frame.clone()).collect(),
        repetitions: 1,
    };
    let exp = store
        .begin_experiment(name, &plan)
        .map_err(at.failed(format!("storing experiment {name}")))?;
    for doc in t.documents() {
        let experiment = ExperimentRef {
            experiment: exp.id.clone(),
            variant: doc.result.frame.clone(),
            repetition: 1,
            sweep_value: Some(doc.result.frame_bytes),
            sweep_label: Some("frame (bytes)".into()),
        };
        insert_rfc2544(at, &mut store, &doc, at.context(experiment, host.clone()))?;
    }
    store
        .finish_experiment(&exp.id, ExperimentStatus::Complete)
        .map_err(at.failed(format!("marking experiment {} complete", exp.id)))?;
    Ok(Some(exp.id))
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}
