//! The stored side of `lab run`: the experiment is begun in the store before the first run
//! (the store hands out its identity, `NAME-N`, and marks it running), every run is stored as
//! it ends, and at the end it is marked complete, or interrupted when a signal (or an error)
//! stopped it. Each run goes with the host's snapshot (taken once, when the experiment
//! begins) and its test bed and measure ([`LabRun`]: topology, links, the emulator that ran,
//! the tunnel's implementation, the value the lab compared), which reports show. What to tell
//! the user about it lives here too: the stored name, the next commands, and what an
//! interruption kept and how to remove it.

use anyhow::Context as _;
use linerate_lab::experiment::Experiment as LabExperiment;
use linerate_lab::runner::{Measure, RunDocument, RunRecord};
use linerate_report::lab_run::{self, LabRun};
use linerate_store::{Experiment, ExperimentPlan, ExperimentRef, ExperimentStatus};

use crate::cmd::history::db::{StoreRunArgs, store_measured_run};

/// An experiment being stored (or not, with `--no-store`).
pub struct Recorder {
    args: StoreRunArgs,
    /// The stored experiment; `None` with `--no-store`.
    experiment: Option<Experiment>,
    /// Runs stored so far.
    pub stored: usize,
    /// The store failed: no more runs are stored, the error is reported at the end.
    pub error: Option<anyhow::Error>,
    sweep: Option<linerate_lab::experiment::Sweep>,
    /// This host's snapshot (JSON), stored with every run.
    host: Option<serde_json::Value>,
    /// Each variant's test bed: lab, topology, links.
    beds: Vec<Bed>,
}

/// What a variant's lab is, before it runs.
struct Bed {
    lab: String,
    topology: String,
    links: Vec<String>,
    workload: String,
}

impl Bed {
    fn of(v: &linerate_lab::experiment::Variant) -> Bed {
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
        }
    }
}

impl Recorder {
    /// Begins the experiment in the store (unless `--no-store`).
    pub fn begin(args: &StoreRunArgs, exp: &LabExperiment) -> anyhow::Result<Recorder> {
        let experiment = if args.no_store {
            None
        } else {
            let mut store = args.db.open()?;
            let plan = ExperimentPlan {
                variants: exp.variants.iter().map(|v| v.name.clone()).collect(),
                repetitions: exp.repetitions,
            };
            Some(store.begin_experiment(&exp.name, &plan).with_context(|| {
                format!(
                    "storing experiment {} in {}",
                    exp.name,
                    store.path().display()
                )
            })?)
        };
        // The host does not change during an experiment: one snapshot serves every run (the
        // store keeps it once, by its hash).
        let host = experiment.as_ref().and_then(|_| {
            serde_json::to_value(linerate_probe::HostSnapshot::capture(
                &linerate_probe::ProbeRoots::live(),
            ))
            .ok()
        });
        Ok(Recorder {
            args: args.clone(),
            experiment,
            stored: 0,
            error: None,
            sweep: exp.sweep.clone(),
            host,
            beds: exp.variants.iter().map(Bed::of).collect(),
        })
    }

    /// The stored id (`window-buffers-3`), when stored.
    pub fn id(&self) -> Option<&str> {
        self.experiment.as_ref().map(|e| e.id.as_str())
    }

    /// Stores one finished run as a repetition of its variant, with its profile (and the
    /// sampling rate) when it was profiled.
    pub fn record(&mut self, r: &RunRecord, profile: Option<(linerate_profile::Captured, u64)>) {
        let (Some(exp), Some((m, doc)), None) = (
            &self.experiment,
            r.measure
                .as_ref()
                .and_then(|m| Some((m, m.document.as_ref()?))),
            &self.error,
        ) else {
            return;
        };
        let mut doc = doc.clone();
        if let (RunDocument::Iperf3(doc), Some(bed)) = (&mut doc, self.beds.get(r.slot.variant)) {
            match serde_json::to_value(bed.lab_run(r, m)) {
                Ok(v) => {
                    doc.linerate
                        .get_or_insert_with(Default::default)
                        .extra
                        .insert(lab_run::KEY.to_owned(), v);
                }
                Err(e) => {
                    self.error = Some(anyhow::Error::new(e).context("the run's lab facts"));
                    return;
                }
            }
        }
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
        let stored = match doc {
            RunDocument::Iperf3(doc) => {
                store_measured_run(&self.args, &doc, self.host.clone(), Some(experiment))
            }
            RunDocument::Rfc2544(doc) => {
                super::rfc2544::store::store_run(&self.args, &doc, self.host.clone(), experiment)
            }
        };
        match stored {
            Ok(Some(id)) => {
                self.stored += 1;
                if let Some((p, frequency_hz)) = profile {
                    if let Err(e) = self.store_profile(id, &p, frequency_hz) {
                        self.error = Some(e);
                    }
                }
            }
            Ok(None) => {}
            Err(e) => self.error = Some(e),
        }
    }

    fn store_profile(
        &self,
        id: linerate_store::RunId,
        p: &linerate_profile::Captured,
        frequency_hz: u64,
    ) -> anyhow::Result<()> {
        let mut store = self.args.db.open()?;
        let profile = linerate_store::RunProfile {
            event: p.event.name().to_owned(),
            frequency_hz,
            samples: p.folded.samples(),
            breakdown: p.attribution.breakdown().to_stored()?,
            folded: p.folded.text(),
        };
        store
            .insert_profile(id, &profile)
            .with_context(|| format!("storing run {id}'s profile in {}", store.path().display()))
    }

    /// Marks the experiment complete, or interrupted.
    pub fn finish(&mut self, status: ExperimentStatus) -> anyhow::Result<()> {
        let Some(exp) = &mut self.experiment else {
            return Ok(());
        };
        let mut store = self.args.db.open()?;
        store
            .finish_experiment(&exp.id, status)
            .with_context(|| format!("marking experiment {} {status}", exp.id))?;
        exp.status = status;
        Ok(())
    }

    /// The closing lines of a finished experiment: where it is stored and what to run next.
    /// The name stands for the newest instance; when another run of the same name started
    /// since, the id is named instead.
    pub fn closing(&self) -> String {
        let Some(exp) = &self.experiment else {
            return "not stored (--no-store)\n".to_owned();
        };
        let newest = self
            .args
            .db
            .open_if_exists()
            .ok()
            .flatten()
            .and_then(|s| s.resolve_experiment(&exp.name).ok())
            .is_some_and(|e| e.id == exp.id);
        let name = if newest { &exp.name } else { &exp.id };
        format!(
            "stored {} run(s) as experiment {} ({})\n\
             next: linerate compare --experiment {name}\n      \
             linerate report --experiment {name} -o {}.html\n      \
             linerate experiments {}\n",
            self.stored, exp.id, exp.status, exp.id, exp.name
        )
    }

    /// What an interruption after `done` of `planned` runs kept, and how to remove it.
    pub fn interrupted(&self, signal: &str, done: usize, planned: usize) -> String {
        let head = format!(
            "interrupted by {signal} after {done} of {planned} runs (the run under way does \
             not count); the lab was removed"
        );
        match &self.experiment {
            Some(exp) if self.stored > 0 => format!(
                "{head}.\nkept: {} run(s) as experiment {}, marked interrupted: `linerate compare` \
                 refuses it unless --allow-incomplete.\nremove them: linerate experiments \
                 --remove {}\n",
                self.stored, exp.id, exp.id
            ),
            Some(exp) => format!(
                "{head}; no run was finished, so nothing was kept (experiment {} is empty, \
                 marked interrupted: linerate experiments --remove {} drops it).\n",
                exp.id, exp.id
            ),
            None => format!("{head}; nothing was stored (--no-store).\n"),
        }
    }
}
