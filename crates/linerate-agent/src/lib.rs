//! The engine of `linerate agent`, one node of a measurement mesh: it serves tests (the
//! linerate server, which iperf3 clients can use too), runs scheduled tests to its peers (TCP
//! throughput both ways, UDP loss at a set rate, rr latency), and exposes the results on
//! `/metrics` for Prometheus.
//!
//! One test at a time, in either role: a gate shared by the server and the scheduler keeps a
//! scheduled test and a served one from sharing the host. A peer that answers "busy" is
//! retried after a random back-off (as pScheduler avoids colliding tests), so two agents that
//! chose the same moment to test each other do not lock step. Schedules are jittered (±10 %).
//! A reload (the caller raises a flag, on SIGHUP) reads the configuration again; a bad one is
//! reported (file, line, key) and the agent keeps the one it runs.
//!
//! Nothing here prints, stores or installs signal handlers: [`run`] takes the stop and reload
//! flags as parameters and hands every finished test's result document and every line of its
//! log to a [`Sink`] the caller implements.
//!
//! The modules, from the bottom: [`dns`] (A/AAAA and SRV lookups), [`config`] (the mesh file,
//! and the peers it names resolved into targets), [`metrics`] (the Prometheus registry),
//! `sink` (what the agent reports), `http` (the `/metrics` endpoint), `schedule` (jobs,
//! back-off, reload) and `agent` (the servers, threads and main loop).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod agent;
pub mod config;
pub mod dns;
mod http;
pub mod metrics;
mod schedule;
mod sink;

pub use agent::{AgentError, run};
pub use config::{Config, ConfigError, TestMode, load};
pub use sink::{Event, Sink};
