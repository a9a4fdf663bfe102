//! Network tuning knowledge: the knob catalogue (data per OS), lint rules, profile generation
//! and the Linux applier. Pure except the applier's backend.
//!
//! - [`catalogue`]: what each knob is (type, unit, defaults per version, scope, harms, source).
//! - [`parse`]: settings files → entries; [`lint`]: entries → [`Finding`]s.
//! - [`profile`]: inputs → a derived [`profile::Profile`]; [`render`]: profile → files.
//! - [`apply`]: journaled, read-back-verified writes through a [`apply::Backend`]
//!   (in memory for tests, `/proc/sys` for real, inside a named network namespace if asked).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod apply;
pub mod audit;
pub mod catalogue;
pub mod context;
pub mod finding;
pub mod formula;
pub mod lint;
pub mod os;
pub mod parse;
pub mod profile;
pub mod render;
pub mod value;

pub use context::{Context, Role};
pub use finding::{Finding, Fix, Location, Severity};
pub use os::{Os, Version};
