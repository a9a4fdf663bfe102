//! ministat's output as a document (`linerate stat --json`): every number of the text
//! output, the test used and the confidence. Schema `linerate.stat/1`; NaN (for example the
//! stddev of identical values' mean noise, or an undefined ratio) is written as `null`.

use crate::comparison::TestOutcome;
use crate::ministat::{Dataset, Options, Test, compare_sets};
use crate::rank::MannWhitney;
use crate::{Comparison, Summary};
use serde::Serialize;

/// The schema name and version.
pub const SCHEMA: &str = "linerate.stat/1";

/// The document.
#[derive(Debug, Serialize)]
pub struct Report {
    schema: &'static str,
    /// Confidence level in percent.
    confidence: f64,
    /// The test comparing each set with the first.
    test: Test,
    sets: Vec<SetReport>,
    /// One per set after the first, against the first; empty with `-n`.
    comparisons: Vec<ComparisonReport>,
}

#[derive(Debug, Serialize)]
struct SetReport {
    name: String,
    symbol: char,
    #[serde(flatten)]
    summary: Summary,
}

#[derive(Debug, Serialize)]
struct ComparisonReport {
    /// Index of the compared set in `sets`.
    set: usize,
    /// Index of the baseline set (always 0, the first).
    baseline: usize,
    significant: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    student_t: Option<Comparison>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mann_whitney: Option<MannWhitney>,
}

/// The document of `sets` compared as `options` say.
pub fn report(sets: &[Dataset<'_>], options: &Options) -> Report {
    let symbols = crate::ministat::SYMBOLS;
    let mut comparisons = Vec::new();
    if options.compare {
        if let Some(first) = sets.first() {
            for (index, set) in sets.iter().enumerate().skip(1) {
                let outcome =
                    compare_sets(first.sample, set.sample, options.confidence, options.test);
                let (student_t, mann_whitney) = match outcome {
                    TestOutcome::StudentT(c) => (Some(c), None),
                    TestOutcome::MannWhitney(m) => (None, Some(m)),
                };
                comparisons.push(ComparisonReport {
                    set: index,
                    baseline: 0,
                    significant: outcome.significant(),
                    student_t,
                    mann_whitney,
                });
            }
        }
    }
    Report {
        schema: SCHEMA,
        confidence: options.confidence.percent(),
        test: options.test,
        sets: sets
            .iter()
            .enumerate()
            .map(|(index, set)| SetReport {
                name: set.name.to_owned(),
                symbol: char::from(symbols[(index + 1) % symbols.len()]),
                summary: set.sample.summary(),
            })
            .collect(),
        comparisons,
    }
}
