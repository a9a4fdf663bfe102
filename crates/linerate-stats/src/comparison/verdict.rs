//! The verdict on one pair of sets: the test's outcome at the confidence level, read through
//! one vocabulary (difference, its interval, relative difference, significance) whichever test
//! ran, and the warnings that concern the two sets.

use serde::{Deserialize, Serialize};

use super::Options;
use super::warning::Warning;
use crate::Sample;
use crate::ministat_ttest::{Comparison, compare, compare_with};
use crate::rank::{MannWhitney, mann_whitney};
use crate::student::Confidence;

/// Which test compares a set with the baseline.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Test {
    /// Student's t with pooled variance (ministat's): the difference of means.
    #[default]
    StudentT,
    /// The Mann–Whitney U rank test: for skewed data, the difference of medians.
    MannWhitney,
}

/// What the test found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TestOutcome {
    /// Student's t.
    StudentT(Comparison),
    /// Mann–Whitney U.
    MannWhitney(MannWhitney),
}

/// Runs the test `options` name on `other` against `baseline`.
#[must_use]
pub fn test_pair(baseline: &Sample, other: &Sample, options: &Options) -> TestOutcome {
    match options.test {
        Test::StudentT => {
            let (base, new) = (baseline.summary(), other.summary());
            // ministat's table has six levels; at any other the exact quantile answers.
            let comparison = compare_with(&base, &new, options.confidence, options.t_source)
                .unwrap_or_else(|_| compare(&base, &new, options.confidence));
            TestOutcome::StudentT(comparison)
        }
        Test::MannWhitney => {
            TestOutcome::MannWhitney(mann_whitney(baseline, other, options.confidence))
        }
    }
}

impl TestOutcome {
    /// The test that ran.
    #[must_use]
    pub fn test(&self) -> Test {
        match self {
            Self::StudentT(_) => Test::StudentT,
            Self::MannWhitney(_) => Test::MannWhitney,
        }
    }

    /// The confidence level of the verdict.
    #[must_use]
    pub fn confidence(&self) -> Confidence {
        match self {
            Self::StudentT(c) => c.confidence,
            Self::MannWhitney(m) => m.confidence,
        }
    }

    /// Whether a difference is proven at the confidence level.
    #[must_use]
    pub fn significant(&self) -> bool {
        match self {
            Self::StudentT(c) => c.significant,
            Self::MannWhitney(m) => m.significant,
        }
    }

    /// other − baseline: of the means (Student's t) or of the medians (rank test).
    #[must_use]
    pub fn difference(&self) -> f64 {
        match self {
            Self::StudentT(c) => c.difference,
            Self::MannWhitney(m) => m.median_difference,
        }
    }

    /// Half-width of the confidence interval of [`Self::difference`]; the rank test states
    /// none.
    #[must_use]
    pub fn error(&self) -> Option<f64> {
        match self {
            Self::StudentT(c) => Some(c.error),
            Self::MannWhitney(_) => None,
        }
    }

    /// The confidence interval of [`Self::difference`], low to high.
    #[must_use]
    pub fn interval(&self) -> Option<(f64, f64)> {
        let (d, e) = (self.difference(), self.error()?);
        Some((d - e, d + e))
    }

    /// [`Self::difference`] as a percentage of the baseline's mean (or median).
    #[must_use]
    pub fn percent(&self) -> f64 {
        match self {
            Self::StudentT(c) => c.percent,
            Self::MannWhitney(m) => m.median_percent,
        }
    }

    /// Half-width of the confidence interval of [`Self::percent`] (Student's t only).
    #[must_use]
    pub fn percent_error(&self) -> Option<f64> {
        match self {
            Self::StudentT(c) => Some(c.percent_error),
            Self::MannWhitney(_) => None,
        }
    }

    /// The verdict lines in ministat's wording.
    #[must_use]
    pub fn verdict(&self) -> String {
        match self {
            Self::StudentT(c) => c.verdict(),
            Self::MannWhitney(m) => m.verdict(),
        }
    }

    /// Student's t details, when that test ran.
    #[must_use]
    pub fn student_t(&self) -> Option<&Comparison> {
        match self {
            Self::StudentT(c) => Some(c),
            Self::MannWhitney(_) => None,
        }
    }

    /// Mann–Whitney details, when that test ran.
    #[must_use]
    pub fn mann_whitney(&self) -> Option<&MannWhitney> {
        match self {
            Self::StudentT(_) => None,
            Self::MannWhitney(m) => Some(m),
        }
    }
}

/// One set against another.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Index of the baseline set.
    pub baseline: usize,
    /// Index of the set compared with it.
    pub other: usize,
    /// The test's outcome.
    pub outcome: TestOutcome,
    /// The warnings about these two sets.
    pub warnings: Vec<Warning>,
}
