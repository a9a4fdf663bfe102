//! Exporters: pure functions from results to other formats.

pub mod json;

pub use json::{interval_json, iperf3_json, start_json};
