//! `lab run --profile`: every run of every variant is profiled — every CPU sampled while the
//! workload runs (so the generator, the router's softirqs and the receiver all show) — and
//! the profile is handed to the recorder, which stores it with the run.

use std::cell::RefCell;

use linerate_profile::cpus::online_cpus;
use linerate_profile::{Capture, Captured, ProfileError, Target};
use linerate_store::RunProfile;

use crate::LabError;
use crate::experiment::Workload;
use crate::runner::{Load, Measure};
use crate::state::LabState;

/// Why runs cannot be profiled here.
#[derive(Debug, thiserror::Error)]
pub enum ProfiledError {
    /// The online CPUs could not be read.
    #[error(transparent)]
    Cpus(ProfileError),
    /// Sampling cannot start (the exact reason is the source).
    #[error("lab run --profile")]
    Start(#[source] ProfileError),
    /// The trial sample could not be finished.
    #[error(transparent)]
    Finish(ProfileError),
}

/// A run's profile as the store keeps it, sampled at `frequency_hz` per CPU.
///
/// # Errors
/// The attribution does not serialise.
pub fn stored(p: &Captured, frequency_hz: u64) -> Result<RunProfile, ProfileError> {
    Ok(RunProfile {
        event: p.event.name().to_owned(),
        frequency_hz,
        samples: p.folded.samples(),
        breakdown: p.attribution.breakdown().to_stored()?,
        folded: p.folded.text(),
    })
}

/// `err` and its causes, `what: why: reason`.
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    text
}

/// A load whose runs are profiled.
pub struct Profiled<'a> {
    inner: &'a dyn Load,
    /// Told when a run's profile is lost (the run itself counts).
    warn: &'a dyn Fn(&str),
    cpus: Vec<u32>,
    frequency: u64,
    /// The last run's profile, until the recorder takes it.
    last: RefCell<Option<Captured>>,
}

impl<'a> Profiled<'a> {
    /// Checks that sampling works here (with the exact reason when it does not) before any
    /// lab is built; `warn` is told when a run's profile is lost.
    ///
    /// # Errors
    /// Sampling does not work here.
    pub fn new(
        inner: &'a dyn Load,
        frequency: u64,
        warn: &'a dyn Fn(&str),
    ) -> Result<Profiled<'a>, ProfiledError> {
        let cpus = online_cpus().map_err(ProfiledError::Cpus)?;
        Capture::start(Target::System, &cpus, frequency)
            .map_err(ProfiledError::Start)?
            .finish()
            .map_err(ProfiledError::Finish)?;
        Ok(Profiled {
            inner,
            warn,
            cpus,
            frequency,
            last: RefCell::new(None),
        })
    }

    /// The profile of the run that just ended.
    pub fn take(&self) -> Option<Captured> {
        self.last.borrow_mut().take()
    }

    /// The sampling rate, per CPU.
    pub fn frequency(&self) -> u64 {
        self.frequency
    }
}

impl Load for Profiled<'_> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn check(&self, workload: &Workload) -> Result<(), LabError> {
        self.inner.check(workload)
    }

    fn run(
        &self,
        lab: &LabState,
        workload: &Workload,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<Measure, LabError> {
        self.last.borrow_mut().take();
        let capture = Capture::start(Target::System, &self.cpus, self.frequency).map_err(|e| {
            LabError::Io {
                what: format!("start profiling the run: {}", chain(&e)),
                source: std::io::Error::other("perf_event_open"),
            }
        })?;
        let measured = self.inner.run(lab, workload, interrupted);
        match capture.finish() {
            Ok(c) => *self.last.borrow_mut() = Some(c),
            Err(e) => (self.warn)(&format!("the run's profile was lost: {}", chain(&e))),
        }
        measured
    }
}
