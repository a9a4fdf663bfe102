//! `lab run --profile`: every run of every variant is profiled — every CPU sampled while the
//! workload runs (so the generator, the router's softirqs and the receiver all show) — and
//! the profile is handed to the recorder, which stores it with the run.

use std::cell::RefCell;

use anyhow::Context as _;
use linerate_lab::LabError;
use linerate_lab::experiment::Workload;
use linerate_lab::runner::{Load, Measure};
use linerate_lab::state::LabState;
use linerate_profile::cpus::online_cpus;
use linerate_profile::{Capture, Captured, Target};

/// A load whose runs are profiled.
pub struct Profiled<'a> {
    inner: &'a dyn Load,
    cpus: Vec<u32>,
    frequency: u64,
    /// The last run's profile, until the recorder takes it.
    last: RefCell<Option<Captured>>,
}

impl<'a> Profiled<'a> {
    /// Checks that sampling works here (with the exact reason when it does not) before any
    /// lab is built.
    pub fn new(inner: &'a dyn Load, frequency: u64) -> anyhow::Result<Profiled<'a>> {
        let cpus = online_cpus()?;
        Capture::start(Target::System, &cpus, frequency)
            .context("lab run --profile")?
            .finish()?;
        Ok(Profiled {
            inner,
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
                what: format!("start profiling the run: {:#}", anyhow::Error::new(e)),
                source: std::io::Error::other("perf_event_open"),
            }
        })?;
        let measured = self.inner.run(lab, workload, interrupted);
        match capture.finish() {
            Ok(c) => *self.last.borrow_mut() = Some(c),
            Err(e) => crate::output::warn(&format!(
                "the run's profile was lost: {:#}",
                anyhow::Error::new(e)
            )),
        }
        measured
    }
}
