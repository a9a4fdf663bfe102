//! The one comparison engine behind `linerate compare`, `linerate report` and `linerate lab
//! run`: which samples stand for each group ([`SampleKind`]), each set's statistics and the
//! confidence interval of its mean, a [`Verdict`] for each set against the baseline (the
//! first) by Student's t or the Mann–Whitney rank test at any confidence level, and typed
//! [`Warning`]s about the samples (too few values, autocorrelated intervals, different tests)
//! that the caller words.
//!
//! It knows nothing of stored runs or traffic results: callers map their runs to [`Group`]s of
//! plain values.
//!
//! ```
//! use linerate_stats::comparison::{Group, Options, Repetition, SampleKind, analyse};
//! let group = |label: &str, values: &[f64]| Group {
//!     label: label.into(),
//!     repetitions: values.iter().map(|&v| Repetition::value(v)).collect(),
//! };
//! let groups = [
//!     group("baseline", &[10.0, 11.0, 12.0, 10.5, 11.5]),
//!     group("tuned", &[13.0, 14.0, 12.5, 13.5, 14.5]),
//! ];
//! let analysis = analyse(&groups, SampleKind::PerRepetition, &Options::default());
//! assert!(analysis.verdicts[0].outcome.significant());
//! assert_eq!(analysis.verdicts[0].outcome.difference(), 2.5);
//! assert!(analysis.warnings.is_empty());
//! ```
#![deny(missing_docs)]

mod autocorrelation;
mod samples;
#[cfg(test)]
mod tests;
mod verdict;
mod warning;

pub use autocorrelation::{independence_band, lag1_autocorrelation};
pub use samples::{Group, Repetition, SampleKind};
pub use verdict::{Test, TestOutcome, Verdict, test_pair};
pub use warning::{MIN_VALUES, SetSize, Warning};

use serde::{Deserialize, Serialize};

use crate::Sample;
use crate::ministat_ttest::TSource;
use crate::student::Confidence;
use crate::summary::Summary;

/// How the sets are compared.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Options {
    /// The confidence level of every verdict and interval.
    pub confidence: Confidence,
    /// Student's t (differences of means) or the rank test (skewed data).
    pub test: Test,
    /// Where Student's t takes its critical value: the exact quantile (linerate's own
    /// comparisons: `compare`, `report`, `lab run`) or ministat's printed table (only `linerate
    /// stat`, so it prints ministat's digits; at a level the table lacks, the exact quantile).
    pub t_source: TSource,
}

impl Options {
    /// Student's t at `confidence` with the exact quantile: how `compare`, `report` and `lab
    /// run` compare, so the same runs get the same digits from each.
    #[must_use]
    pub fn student_t(confidence: Confidence) -> Self {
        Self {
            confidence,
            test: Test::StudentT,
            t_source: TSource::Exact,
        }
    }
}

impl Default for Options {
    /// Student's t at 95 % with the exact quantile ([`Options::student_t`]).
    fn default() -> Self {
        Self::student_t(Confidence::P95)
    }
}

/// One set's samples and statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct SetStats {
    /// The group's label.
    pub label: String,
    /// The values compared, in measurement order.
    pub values: Vec<f64>,
    /// n, min, max, median, mean, stddev of `values`.
    pub summary: Summary,
    /// The confidence interval of the mean (exact t quantile, n − 1 degrees of freedom);
    /// `None` below two values.
    pub ci: Option<(f64, f64)>,
    /// The lag-1 autocorrelation of `values` in order; `None` below three values or when all
    /// are equal.
    pub lag1: Option<f64>,
    /// The distinct tests that measured the set, sorted.
    pub tests: Vec<String>,
}

/// The whole comparison: every set's statistics, each set after the first against the
/// first, and the warnings about all the sets.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    /// Which samples were compared.
    pub kind: SampleKind,
    /// How.
    pub options: Options,
    /// One per group, in the groups' order; the first is the baseline.
    pub sets: Vec<SetStats>,
    /// Set i + 1 against set 0, for every set after the first.
    pub verdicts: Vec<Verdict>,
    /// Warnings about the sets together, in the order: too few values, autocorrelation (set
    /// by set), different tests.
    pub warnings: Vec<Warning>,
}

/// Compares every group with the first, on the samples `kind` chooses (see
/// [`SampleKind::for_groups`] for the usual rule).
///
/// Never fails: an empty or one-value set gets statistics of NaN and verdicts that prove
/// nothing; callers refuse such sets where that is the better answer.
#[must_use]
pub fn analyse(groups: &[Group], kind: SampleKind, options: &Options) -> Analysis {
    let sets: Vec<SetStats> = groups
        .iter()
        .map(|g| set_stats(g, kind, options.confidence))
        .collect();
    let all: Vec<&SetStats> = sets.iter().collect();
    let warnings = warning::check(kind, &all);
    let verdicts = (1..sets.len())
        .filter_map(|other| verdict_between(&sets, kind, options, 0, other))
        .collect();
    Analysis {
        kind,
        options: *options,
        sets,
        verdicts,
        warnings,
    }
}

impl Analysis {
    /// `other` against `baseline` (indexes into [`Analysis::sets`]), for pairs beyond the
    /// baseline's (a sweep's best value against the runner-up); `None` for an index out of
    /// range.
    #[must_use]
    pub fn verdict(&self, baseline: usize, other: usize) -> Option<Verdict> {
        verdict_between(&self.sets, self.kind, &self.options, baseline, other)
    }

    /// Whether any verdict proves a difference.
    #[must_use]
    pub fn any_difference(&self) -> bool {
        self.verdicts.iter().any(|v| v.outcome.significant())
    }
}

fn set_stats(group: &Group, kind: SampleKind, confidence: Confidence) -> SetStats {
    let values = kind.values(group);
    let summary = Summary::of(&values);
    let mut tests: Vec<String> = group
        .repetitions
        .iter()
        .filter_map(|r| r.test.clone())
        .collect();
    tests.sort();
    tests.dedup();
    SetStats {
        label: group.label.clone(),
        ci: mean_interval(&summary, confidence),
        lag1: lag1_autocorrelation(&values),
        summary,
        values,
        tests,
    }
}

/// mean ± t·s/√n at `confidence`; `None` below two values.
fn mean_interval(s: &Summary, confidence: Confidence) -> Option<(f64, f64)> {
    if s.n < 2 || !s.stddev.is_finite() {
        return None;
    }
    let n = s.n as f64;
    let half = confidence.critical_t(n - 1.0) * s.stddev / n.sqrt();
    Some((s.mean - half, s.mean + half))
}

fn verdict_between(
    sets: &[SetStats],
    kind: SampleKind,
    options: &Options,
    baseline: usize,
    other: usize,
) -> Option<Verdict> {
    let (b, o) = (sets.get(baseline)?, sets.get(other)?);
    let outcome = test_pair(
        &Sample::new(b.values.clone()),
        &Sample::new(o.values.clone()),
        options,
    );
    Some(Verdict {
        baseline,
        other,
        outcome,
        warnings: warning::check(kind, &[b, o]),
    })
}
