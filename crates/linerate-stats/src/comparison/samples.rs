//! Which samples stand for a group of runs.
//!
//! - Single runs are compared on their **per-interval** values (the caller leaves out the
//!   warm-up). Consecutive intervals of one TCP flow are rarely independent, so their lag-1
//!   autocorrelation is checked (see [`super::Warning::Autocorrelated`]).
//! - Repeated runs (an experiment's variants, a group of runs) are compared on **one value per
//!   repetition**. These are independent when the repetitions were interleaved, which is what
//!   Student's t assumes.

use serde::{Deserialize, Serialize};

/// One run of a group: its value over the whole run and its per-interval values.
#[derive(Debug, Clone, PartialEq)]
pub struct Repetition {
    /// The run's value over the whole test (for throughput: the receiver-side rate).
    pub value: f64,
    /// The run's per-interval values in order, warm-up excluded.
    pub intervals: Vec<f64>,
    /// What measured it (`tcp send`); repetitions measured by different tests are warned
    /// about. `None` when the caller has nothing to say.
    pub test: Option<String>,
}

impl Repetition {
    /// A repetition known only by its whole-run value.
    #[must_use]
    pub fn value(value: f64) -> Self {
        Self {
            value,
            intervals: Vec::new(),
            test: None,
        }
    }
}

/// The runs compared as one data set: one run, or the repetitions of one variant.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// `run 3`, `runs 1,2,3` or the variant's name.
    pub label: String,
    /// The runs, in measurement order.
    pub repetitions: Vec<Repetition>,
}

/// What a data set holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SampleKind {
    /// The per-interval values of each run.
    PerInterval,
    /// One value per repetition.
    PerRepetition,
}

impl SampleKind {
    /// The rule `compare` and `report` follow: per-interval when every group is a single
    /// run, otherwise one value per repetition.
    #[must_use]
    pub fn for_groups(groups: &[Group]) -> Self {
        if groups.iter().all(|g| g.repetitions.len() == 1) {
            Self::PerInterval
        } else {
            Self::PerRepetition
        }
    }

    /// The values of `group` this kind compares, in measurement order.
    #[must_use]
    pub fn values(self, group: &Group) -> Vec<f64> {
        match self {
            Self::PerInterval => group
                .repetitions
                .iter()
                .flat_map(|r| r.intervals.iter().copied())
                .collect(),
            Self::PerRepetition => group.repetitions.iter().map(|r| r.value).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(value: f64, intervals: &[f64]) -> Repetition {
        Repetition {
            value,
            intervals: intervals.to_vec(),
            test: None,
        }
    }

    #[test]
    fn single_runs_are_per_interval_groups_per_repetition() {
        let single = Group {
            label: "run 1".into(),
            repetitions: vec![run(10.0, &[9.0, 11.0])],
        };
        let repeated = Group {
            label: "runs 2,3".into(),
            repetitions: vec![run(20.0, &[19.0, 21.0]), run(22.0, &[21.0, 23.0])],
        };
        let both_single = [single.clone(), single.clone()];
        assert_eq!(
            SampleKind::for_groups(&both_single),
            SampleKind::PerInterval
        );
        assert_eq!(SampleKind::PerInterval.values(&single), [9.0, 11.0]);
        let mixed = [single.clone(), repeated.clone()];
        assert_eq!(SampleKind::for_groups(&mixed), SampleKind::PerRepetition);
        assert_eq!(SampleKind::PerRepetition.values(&single), [10.0]);
        assert_eq!(SampleKind::PerRepetition.values(&repeated), [20.0, 22.0]);
        // Per-interval over several runs keeps measurement order.
        assert_eq!(
            SampleKind::PerInterval.values(&repeated),
            [19.0, 21.0, 21.0, 23.0]
        );
    }
}
