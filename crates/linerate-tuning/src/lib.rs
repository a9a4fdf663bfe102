//! Network tuning knowledge: the knob catalogue (data per OS), lint rules, profile generation
//! and the Linux applier. Pure except the applier's backend.
//!
//! - [`catalogue`]: what each knob is (type, unit, defaults per version, scope, harms, source).
//! - [`parse`]: settings files → entries; [`lint`]: entries → [`Finding`]s.
//! - [`hardware`]: a host snapshot (read by `linerate-probe`) → hardware [`Finding`]s, bus
//!   checks and packet-rate limits. [`Finding`] and [`Role`] are leaf modules every rule shares.
//! - [`profile`]: inputs → a derived [`profile::Profile`]; [`render`]: profile → files.
//! - [`apply`]: journaled, read-back-verified writes through a [`apply::Backend`]
//!   (in memory for tests, `/proc/sys` for real, inside a named network namespace if asked).

#![deny(missing_docs)]

pub mod apply;
pub mod audit;
pub mod catalogue;
pub mod context;
pub mod finding;
pub mod formula;
pub mod hardware;
pub mod lint;
pub mod os;
pub mod parse;
pub mod profile;
pub mod render;
mod role;
pub mod value;

pub use context::Context;
pub use finding::{Finding, Fix, Location, Severity};
pub use os::{Os, Version};
pub use role::Role;
