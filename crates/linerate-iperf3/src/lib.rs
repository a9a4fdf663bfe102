//! iperf3's JSON schema as types, defined once for every crate that writes or reads it.
//!
//! - [`Document`]: one `--json` document: [`Start`], [`Interval`]s, [`End`], the server's
//!   output, and linerate's extension object [`Linerate`]. linerate's client writes it, the
//!   results store imports it (also from real iperf3 3.x files), the lab runner reads its
//!   load generator's with it.
//! - [`stream`]: files of documents and `--json-stream` events.
//! - [`exchange`]: the control channel's parameters and results messages.
//! - [`evidence`]: what a test samples to explain its rate (`linerate.evidence`, and a
//!   linerate server's side in its results).
//! - [`udp_drops`], [`udp_limit`]: a UDP test's drop counters per side and the verdict on where its
//!   datagrams were lost (`linerate.udp_limit`).
//!
//! The types follow what iperf3 writes, not one version of it: everything another version may
//! leave out is an `Option` (or empty), keys this schema does not know are kept in each
//! object's `extra` map and written back, and numbers are read the ways iperf3 writes them
//! (see `de`). A value that is present with the wrong type is an [`Error`] that names its place
//! (`end.sum_sent.bytes: expected a non-negative integer, found the string "ten"`).
//!
//! This crate sits below the traffic engine, the store and the lab, which do not depend on
//! each other; it depends on serde only (with `serde_path_to_error` to name an error's place).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod cost;
mod de;
mod document;
pub mod dut_limit;
mod end;
mod error;
pub mod evidence;
pub mod exchange;
mod interval;
pub mod limit;
pub mod linerate;
mod start;
pub mod stream;
pub mod udp_drops;
pub mod udp_limit;

pub use document::Document;
pub use end::{CpuUtilization, End, EndReport, EndStream};
pub use error::Error;
pub use interval::{Interval, IntervalReport};
pub use linerate::Linerate;
pub use start::{Connected, HostPort, Start, TestStart, Timestamp};
