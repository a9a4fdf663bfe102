//! Statistics for measurements: descriptive statistics, Student's t with exact quantiles,
//! ministat-compatible comparison and rendering, distributions and rank tests.
//!
//! The pieces, in the order a comparison uses them:
//! - [`sample::Sample`] holds one data set (sorted, with its input-order sum) and
//!   [`summary::Summary`] its descriptive statistics (n, min, max, median, mean, stddev),
//!   computed as current FreeBSD ministat does (two-pass variance, even-n median = mean of the
//!   two middle values).
//! - [`student`] gives Student's t (CDF, exact quantiles) and [`student::Confidence`];
//!   [`ttable`] holds ministat's own printed table, used only where output must be ministat's
//!   digit for digit (`linerate stat`).
//! - [`ministat_ttest`] is ministat's two-sample t test (pooled variance, its difference, error
//!   and relative error), with exact quantiles ([`compare`]) or ministat's table
//!   ([`compare_ministat`]); [`ministat_ttest::Comparison::verdict`] words it as ministat does.
//! - [`rank`] is the Mann–Whitney U test for skewed data (latencies).
//! - [`comparison`] is the engine `compare`, `report` and `lab run` share: which samples
//!   stand for a group of runs, Student's t or rank verdicts against the baseline at any
//!   confidence level, and typed warnings (too few values, autocorrelated intervals).
//! - [`read`] parses ministat's input format (and C's `strtod`/`strtol` rules for its
//!   arguments), [`sets`] reads `linerate stat`'s files into samples; [`ministat`] renders ministat's output (plot,
//!   bars, table, verdicts) as a `String`; [`printf`] formats numbers as C's `printf` does
//!   (`%g`, `%f`), which they share.
//! - [`distribution`] is a streaming log-linear histogram (bounded memory, stated precision)
//!   and exact counts, with nearest-rank percentiles; [`ks`] is the two-sample
//!   Kolmogorov–Smirnov test over them (`linerate logdist --compare`).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod comparison;
pub mod distribution;
pub mod ks;
pub mod ministat;
pub mod ministat_ttest;
pub mod printf;
pub mod rank;
pub mod read;
pub mod sample;
pub mod sets;
pub mod special;
pub mod student;
pub mod summary;
pub mod ttable;

pub use ministat_ttest::{Comparison, TSource, compare, compare_ministat};
pub use sample::Sample;
pub use student::Confidence;
pub use summary::Summary;

/// Errors of the statistics functions.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    /// A confidence level outside (0, 100) percent.
    #[error("confidence level {0}% is not between 0 and 100")]
    Confidence(f64),
    /// A confidence level ministat's table does not have.
    #[error("No support for confidence level {0} (ministat's levels: 80, 90, 95, 98, 99, 99.5)")]
    MinistatConfidence(f64),
    /// Too few values for the statistic asked for.
    #[error("{needed} values needed, {got} given")]
    TooFewValues {
        /// How many values the statistic needs.
        needed: usize,
        /// How many it got.
        got: usize,
    },
}
