//! Network tuning knowledge: the knob catalogue (data per OS), lint rules, profile generation
//! and the applier (Linux and FreeBSD). Pure except the applier's backends.
//!
//! - [`catalogue`]: what each knob is (type, unit, defaults per version, scope, harms, source).
//! - [`inventory`]: which keys exist at all, per OS and version, each list with its source.
//! - [`parse`]: settings files → entries; [`lint`]: entries → [`Finding`]s.
//! - [`hardware`]: a host snapshot (read by `linerate-probe`) → hardware [`Finding`]s, bus
//!   checks and packet-rate limits. [`Finding`] and [`Role`] are leaf modules every rule shares.
//! - [`profile`]: inputs → a derived [`profile::Profile`]; [`render`]: profile → files.
//! - [`buffers`]: the one Linux TCP buffer answer (`calc bdp`, `tune` and `lint` share it).
//! - [`vpn`]: a measured tunnel (a stored `lab run`) → the vpn role's [`Finding`]s.
//! - [`apply`]: journaled, read-back-verified writes through a [`apply::Backend`]
//!   (in memory for tests, `/proc/sys` for real, inside a named network namespace if asked;
//!   `sysctl(3)` and the loader drop-in on FreeBSD, [`apply::freebsd`]).
//!
//! Severity policy of every rule ([`lint`] has the details): **error** = the setting will fail
//! or does harm; **warning** = a measurable cost or risk, with its formula and threshold in the
//! message; **info** = style, redundancy, or outside linerate's knowledge. A key linerate does
//! not know is `info[unchecked]`; "no such key" needs evidence from the [`inventory`].

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod apply;
pub mod audit;
pub mod buffers;
pub mod catalogue;
pub mod context;
pub mod finding;
pub mod formula;
pub mod hardware;
pub mod inventory;
pub mod lint;
mod near;
pub mod os;
pub mod parse;
pub mod profile;
pub mod render;
mod role;
pub mod value;
pub mod vpn;
mod wording;

pub use context::Context;
pub use finding::{Finding, Fix, Location, Severity};
pub use os::{Os, Version};
pub use role::Role;
