//! A test bed is an interface, not namespaces: the experiment runner talks to a [`TestBed`]
//! whose nodes can start a program ([`Node`]), apply and roll back a variant's settings, and
//! say what they are. The namespace lab (a fresh lab per run, [`crate::runner::LabBed`]) and
//! real hosts over OpenSSH ([`crate::hosts::HostsBed`]) are its two implementations; the same
//! schedule, summary, store and report serve both.

use std::process::{Child, Command, Stdio};

use crate::LabError;
use crate::experiment::{Experiment, Variant};
use crate::netns::Netns;
use crate::runner::{Measure, RunTunnel};
use crate::state::EmulatorKind;

/// A place a program can be started: a lab's namespace, a host over ssh.
pub trait Node {
    /// Its name in messages (`recv`, `recv (root@b)`).
    fn label(&self) -> String;
    /// Starts `program args` there, stdin closed, stderr discarded, stdout as `stdout` says.
    fn spawn(&self, program: &str, args: &[String], stdout: Stdio) -> Result<Child, LabError>;
}

/// What a run's bed tells the run's record besides the measure.
#[derive(Debug, Default)]
pub struct RunFacts {
    /// The tunnel the load went through (labs with a tunnel).
    pub tunnel: Option<RunTunnel>,
    /// How the lab emulated its links (labs).
    pub emulator: Option<EmulatorKind>,
}

/// Where an experiment's runs happen.
pub trait TestBed {
    /// Its name as results show it (the lab's name, `hosts gen=… recv=…`).
    fn name(&self) -> String;
    /// Refuses, before anything changes, what this bed cannot run.
    fn check(&mut self, exp: &Experiment) -> Result<(), LabError>;
    /// Prepares `variant`, runs its workload once and undoes the variant again. The outer
    /// error aborts the experiment (the bed could not be prepared or restored); the inner one
    /// only fails this run.
    fn one_run(
        &mut self,
        variant: &Variant,
        interrupted: &dyn Fn() -> bool,
        facts: &mut RunFacts,
    ) -> Result<Result<Measure, LabError>, LabError>;
    /// Restores everything the bed changed (called at the end, after an error or a signal).
    fn finish(&mut self) -> Result<(), LabError>;
}

/// A node of a lab: its network namespace (children start in the namespace of the thread
/// that spawns them).
pub struct NetnsNode {
    /// The node's name.
    pub name: String,
    /// Its namespace.
    pub ns: Netns,
}

impl Node for NetnsNode {
    fn label(&self) -> String {
        self.name.clone()
    }

    fn spawn(&self, program: &str, args: &[String], stdout: Stdio) -> Result<Child, LabError> {
        self.ns.run(|| {
            Command::new(program)
                .args(args)
                .stdin(Stdio::null())
                .stdout(stdout)
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| {
                    if e.kind() == std::io::ErrorKind::NotFound {
                        LabError::MissingTool {
                            tool: program.to_owned(),
                            package: program.to_owned(),
                        }
                    } else {
                        LabError::Io {
                            what: format!("start {program}"),
                            source: e,
                        }
                    }
                })
        })
    }
}
