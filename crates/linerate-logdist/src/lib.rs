//! The log engine of `linerate logdist`: response-time distributions from web-server access
//! logs, the way calomel's script drew them ("71 % of objects under 100 ms before, 95 %
//! after"), with percentiles, a reason for every skipped line, and an honest before/after
//! comparison.
//!
//! **Owns**: log formats and their detection ([`format`](mod@format)), byte-level line parsing (NCSA
//! access logs, JSON lines, a user regex), the filters ([`filter`], [`clock`]), reading plain,
//! gzip and standard input in big chunks ([`input`]) on several threads, the data set's
//! histograms and skip counts ([`dataset`], [`analyze`]), and the results as serialisable
//! data ([`summary`], [`compare`]: percentiles, shares, the Kolmogorov–Smirnov test).
//!
//! **Does not own**: the command line, text and JSON printing, charts and files (the
//! `linerate` binary, which draws charts with `linerate-report`), nor drawing progress: a
//! read reports through the [`progress::Progress`] trait and the caller shows it (or not).
//! Errors are typed ([`Error`]); nothing here prints or exits.
//!
//! **May depend on**: `linerate-stats` (distributions, the KS test) and parsing crates
//! (regex, memchr, flate2, serde). Not on the binary, the terminal, or another engine.
//!
//! Module order, each using only those before it: [`reason`] → `decimal` → [`clock`] →
//! [`filter`] → `access`, `json` → `parse` → [`format`](mod@format) → [`progress`] → [`input`] →
//! [`dataset`] → `parallel` → [`analyze`] → [`human`] → [`summary`] → [`compare`]
//! ([`error`] sits beside them, knowing only [`reason`]).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod access;
pub mod analyze;
pub mod clock;
pub mod compare;
pub mod dataset;
mod decimal;
pub mod error;
pub mod filter;
pub mod format;
pub mod human;
pub mod input;
mod json;
mod parallel;
mod parse;
pub mod progress;
pub mod reason;
pub mod settings;
pub mod summary;

pub use analyze::read;
pub use compare::Comparison;
pub use dataset::{DataSet, Plan};
pub use error::{Error, LayoutError};
pub use filter::Filters;
pub use format::{FieldChoice, Format};
pub use input::Source;
pub use progress::{NoProgress, Progress};
pub use reason::{Outcome, Reason};
pub use summary::{Report, Summary};
