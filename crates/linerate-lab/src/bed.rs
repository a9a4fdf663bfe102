//! A test bed is an interface, not namespaces: the experiment runner talks to a [`TestBed`]
//! whose nodes can start a program ([`Node`]), apply and roll back a variant's settings, and
//! say what they are. The namespace lab (a fresh lab per run, [`crate::runner::LabBed`]) and
//! real hosts over OpenSSH ([`crate::hosts::HostsBed`]) are its two implementations; the same
//! schedule, summary, store and report serve both.

use std::process::{Child, Command, Stdio};

use crate::LabError;
use crate::experiment::{Experiment, Variant};
use crate::netns::Netns;
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

/// One measurement of a workload.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Measure {
    /// The value (higher is better for throughput and packet rate).
    pub value: f64,
    /// Its unit: `bit/s` or `packet/s`.
    pub unit: &'static str,
    /// How long the load actually ran.
    pub seconds: f64,
    /// The load's own result document, for the results store.
    #[serde(skip)]
    pub document: Option<RunDocument>,
}

/// What a run's load reports, as the results store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub enum RunDocument {
    /// An iperf3-schema document (the traffic engine, iperf3, the frame generator's pps runs).
    Iperf3(Box<linerate_iperf3::Document>),
    /// An RFC 2544 result (`rfc2544` workloads), stored as `lab rfc2544` stores its own.
    Rfc2544(Box<linerate_store::rfc2544::Rfc2544Run>),
}

impl RunDocument {
    /// The iperf3-schema document, when it is one.
    pub fn iperf3(&self) -> Option<&linerate_iperf3::Document> {
        match self {
            RunDocument::Iperf3(d) => Some(d),
            RunDocument::Rfc2544(_) => None,
        }
    }

    /// The iperf3-schema document, when it is one.
    pub fn iperf3_mut(&mut self) -> Option<&mut linerate_iperf3::Document> {
        match self {
            RunDocument::Iperf3(d) => Some(d),
            RunDocument::Rfc2544(_) => None,
        }
    }
}

/// The tunnel of one run: which implementation ran and what the path measured.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunTunnel {
    /// `openvpn`, `wireguard`.
    pub kind: &'static str,
    /// Which implementation ran, with its version (`wireguard-go 0.0.20220316`, `kernel`).
    pub implementation: String,
    /// The tunnel interface's MTU read back from `gen`.
    pub interface_mtu: Option<u32>,
    /// TCP_MAXSEG of the load's control connection through the tunnel (bytes of payload per
    /// segment, TCP options such as timestamps excluded), when the load reports it.
    pub tcp_maxseg: Option<u64>,
    /// The smallest link MTU under the tunnel.
    pub link_mtu: u32,
    /// What the tunnel on `gen` showed after the load (socket buffers, tun queue and drops).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed: Option<crate::tunnel::observe::TunnelObservation>,
}
