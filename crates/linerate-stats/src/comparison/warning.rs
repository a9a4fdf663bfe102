//! What makes a verdict weaker than its confidence level says, as data: the caller words it.

use serde::Serialize;

use super::SetStats;
use super::autocorrelation::independence_band;
use super::samples::SampleKind;

/// Fewer values than this per data set and the verdict is weak whatever it says.
pub const MIN_VALUES: usize = 5;

/// A set named with its number of values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SetSize {
    /// The set's label.
    pub label: String,
    /// Its number of values.
    pub n: usize,
}

/// A reason to trust a comparison less.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "warning", rename_all = "kebab-case")]
pub enum Warning {
    /// Sets with fewer than `minimum` values.
    TooFewValues {
        /// The sets concerned, in order.
        sets: Vec<SetSize>,
        /// [`MIN_VALUES`].
        minimum: usize,
        /// What the values are (the remedy differs: run longer, or repeat more).
        kind: SampleKind,
    },
    /// Per-interval values whose lag-1 autocorrelation lies beyond the band of independent
    /// values: they are not independent, so the confidence is overstated.
    Autocorrelated {
        /// The set's label.
        set: String,
        /// Its lag-1 autocorrelation.
        r1: f64,
        /// The band ±`band` of independent values.
        band: f64,
    },
    /// The values come from different tests (`tcp send`, `udp send`).
    DifferentTests {
        /// The tests, sorted.
        tests: Vec<String>,
    },
}

/// The warnings about `sets` compared together.
pub(super) fn check(kind: SampleKind, sets: &[&SetStats]) -> Vec<Warning> {
    let mut out = Vec::new();
    let few: Vec<SetSize> = sets
        .iter()
        .filter(|s| s.values.len() < MIN_VALUES)
        .map(|s| SetSize {
            label: s.label.clone(),
            n: s.values.len(),
        })
        .collect();
    if !few.is_empty() {
        out.push(Warning::TooFewValues {
            sets: few,
            minimum: MIN_VALUES,
            kind,
        });
    }
    // Repetitions are independent by design (interleaved); only intervals are checked.
    if kind == SampleKind::PerInterval {
        for set in sets {
            let Some(r1) = set.lag1 else { continue };
            let band = independence_band(set.values.len());
            if r1.abs() > band {
                out.push(Warning::Autocorrelated {
                    set: set.label.clone(),
                    r1,
                    band,
                });
            }
        }
    }
    let mut tests: Vec<String> = sets.iter().flat_map(|s| s.tests.iter().cloned()).collect();
    tests.sort();
    tests.dedup();
    if tests.len() > 1 {
        out.push(Warning::DifferentTests { tests });
    }
    out
}
