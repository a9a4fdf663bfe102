//! Why not line rate: the evidence a test sampled (`linerate_iperf3::evidence`: `TCP_INFO`
//! limit clocks, windows, loss, CPU per side) and the path's ceiling (computed by
//! `linerate-calc`) turned, by pure functions, into the limit that held each stream and the
//! test — at the ceiling, receive window, send buffer, congestion or loss, CPU, the
//! application, or unknown — each with its evidence figures and the share of the test it held;
//! and, for a limit a setting lifts, the prescription from the same code `calc bdp` and `tune`
//! use (`linerate_tuning::buffers`), so the three give one answer.
//!
//! No I/O and no terminal output: the binary, the lab and the report call these functions on
//! data they already have.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod dut;
pub mod tcp;
pub mod udp;
