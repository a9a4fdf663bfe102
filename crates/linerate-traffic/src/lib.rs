//! The traffic engine: the iperf3-compatible control channel, a server that runs many tests at
//! once, a client, one OS thread per TCP or UDP stream, interval sampling and the results model.
//!
//! Nothing here prints: the client returns a [`RunResult`] and emits [`Event`]s through a
//! callback; the server reports what it does through a log callback. The binary renders both.
//! [`iperf3_json::document`] turns a result into iperf3's `--json` document (typed by
//! `linerate-iperf3`), the exchange format other tools (and the results store) read.
//!
//! The modules depend on each other without cycles (`tests/module_dag.rs` checks it), from
//! the bottom: [`config`] (what is asked: protocol, direction, modes and their options) and the
//! leaves beside it (`error`, `cpu`, `latency`, `affinity`, [`frame`]: raw frames for the
//! frame generator, [`rx_tally`]: counting them); [`generator`] (the frame generator and its
//! receive counter) over those; [`protocol`] (the wire) and
//! [`sockopt`]; [`datagram`] (the pps datagram); [`flow`] (what a stream is and counts); the
//! workers [`pps`] and [`rr`]; [`stream`] (the threads that run streams); [`result`],
//! [`sampler`], [`evidence`] (what the test samples to explain its rate), [`modes`] (checks
//! and the modes' figures), [`exchange`]; and on top [`client`], [`server`], [`iperf3_json`]
//! and [`frame_counter`] (a receive counter on another host, through its server).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod affinity;
pub mod client;
pub mod config;
pub mod cpu;
pub mod datagram;
pub mod error;
pub mod event;
pub mod evidence;
pub mod exchange;
pub mod flow;
pub mod frame;
pub mod frame_counter;
pub mod gate;
pub mod generator;
pub mod iperf3_json;
pub mod latency;
pub mod modes;
pub mod pps;
pub mod protocol;
pub mod result;
pub mod rr;
pub mod rx_tally;
pub mod sampler;
pub mod server;
pub mod sockopt;
pub mod stream;

pub use client::run_client;
pub use config::{ClientConfig, Direction, Protocol};
pub use error::TrafficError;
pub use event::Event;
pub use result::RunResult;
pub use server::{Server, ServerConfig, ServerLog};

/// The version of linerate's protocol extension (the `"linerate"` JSON key).
pub const EXTENSION_VERSION: u32 = 1;

/// The version string of this engine, sent to peers.
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");
