//! Exporters: pure functions from results to other formats.

pub mod json;

pub use json::{document, interval, start};
