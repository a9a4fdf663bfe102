//! Network tuning knowledge: the knob catalogue (data per OS), lint rules, profile generation
//! and the Linux applier. Pure except the applier's backend.

pub mod finding;

pub use finding::{Finding, Fix, Location, Severity};
