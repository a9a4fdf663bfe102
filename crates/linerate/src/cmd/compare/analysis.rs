//! Which samples a comparison uses, and the checks on them (shared by `compare` and
//! `report`).
//!
//! - Single runs are compared on their **per-interval throughput** (the forward-direction sum,
//!   omitted warm-up excluded). Consecutive intervals of one TCP flow are rarely independent,
//!   so the lag-1 autocorrelation is checked and a warning given when it is significant.
//! - Repeated runs (an experiment's variants, or ids joined by commas) are compared on **one
//!   value per repetition**: each run's receiver-side throughput. These are independent when
//!   the repetitions were interleaved, which is what Student's t assumes.

use std::collections::BTreeMap;

use anyhow::Context;
use linerate_store::{RunId, RunRecord, Store};

/// A group of runs compared as one data set: one run, or the repetitions of one variant.
#[derive(Debug, Clone)]
pub struct Group {
    /// `run 3`, `runs 1,2,3` or the variant's name.
    pub label: String,
    /// The runs, in measurement order.
    pub runs: Vec<(RunId, RunRecord)>,
    /// For sweeps: the swept value of this variant, and its label.
    pub sweep: Option<(f64, String)>,
}

/// What a data set holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SampleKind {
    /// Per-interval throughput of one run.
    PerInterval,
    /// One throughput value per repetition.
    PerRepetition,
}

impl SampleKind {
    /// Says in words which samples were compared.
    pub fn describe(self) -> &'static str {
        match self {
            SampleKind::PerInterval => {
                "per-interval throughput of each run (the sum over streams for every reporting interval, warm-up excluded)"
            }
            SampleKind::PerRepetition => {
                "one value per repetition: each run's receiver-side throughput over the whole test"
            }
        }
    }
}

/// The data set of a group.
#[derive(Debug, Clone)]
pub struct DataSet {
    /// The group's label.
    pub label: String,
    /// The values, bits/s.
    pub values: Vec<f64>,
}

/// Parses `1 2 3` or `1,2,3 4,5,6` into groups of run ids.
pub fn parse_groups(args: &[String]) -> anyhow::Result<Vec<Vec<RunId>>> {
    let mut groups = Vec::new();
    for arg in args {
        let mut group = Vec::new();
        for part in arg.split(',').filter(|p| !p.trim().is_empty()) {
            let id: RunId = part
                .trim()
                .parse()
                .map_err(|e: String| anyhow::anyhow!("{e}"))?;
            group.push(id);
        }
        if group.is_empty() {
            anyhow::bail!("`{arg}` names no run");
        }
        groups.push(group);
    }
    Ok(groups)
}

/// Loads the runs of each group.
pub fn load_groups(store: &Store, ids: &[Vec<RunId>]) -> anyhow::Result<Vec<Group>> {
    ids.iter()
        .map(|group| {
            let runs = group
                .iter()
                .map(|&id| Ok((id, store.run(id)?)))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let label = if group.len() == 1 {
                format!("run {}", group[0])
            } else {
                let ids: Vec<String> = group.iter().map(ToString::to_string).collect();
                format!("runs {}", ids.join(","))
            };
            Ok(Group {
                label,
                runs,
                sweep: None,
            })
        })
        .collect()
}

/// An experiment's runs grouped by variant, in the order the variants were first measured
/// (a variant named `baseline` goes first: it is what the others are compared with).
pub fn experiment_groups(store: &Store, experiment: &str) -> anyhow::Result<Vec<Group>> {
    let ids = store.experiment_run_ids(experiment)?;
    if ids.is_empty() {
        anyhow::bail!(
            "no runs of experiment `{experiment}` in {} (see `linerate history`)",
            store.path().display()
        );
    }
    let mut order: Vec<String> = Vec::new();
    let mut by_variant: BTreeMap<String, Group> = BTreeMap::new();
    for id in ids {
        let run = store
            .run(id)
            .with_context(|| format!("reading run {id} of experiment {experiment}"))?;
        let Some(exp) = run.experiment.clone() else {
            continue;
        };
        let group = by_variant.entry(exp.variant.clone()).or_insert_with(|| {
            order.push(exp.variant.clone());
            Group {
                label: exp.variant.clone(),
                runs: Vec::new(),
                sweep: exp
                    .sweep_value
                    .map(|v| (v, exp.sweep_label.clone().unwrap_or_else(|| "value".into()))),
            }
        });
        group.runs.push((id, run));
    }
    if let Some(pos) = order.iter().position(|v| v == "baseline") {
        let b = order.remove(pos);
        order.insert(0, b);
    }
    Ok(order
        .into_iter()
        .filter_map(|v| by_variant.remove(&v))
        .collect())
}

/// The data sets to compare, and what they hold: per-interval when every group is a single
/// run, otherwise one value per repetition.
pub fn data_sets(groups: &[Group]) -> (SampleKind, Vec<DataSet>) {
    let kind = if groups.iter().all(|g| g.runs.len() == 1) {
        SampleKind::PerInterval
    } else {
        SampleKind::PerRepetition
    };
    let sets = groups
        .iter()
        .map(|g| DataSet {
            label: g.label.clone(),
            values: match kind {
                SampleKind::PerInterval => g
                    .runs
                    .iter()
                    .flat_map(|(_, r)| r.throughput_series())
                    .map(|s| s.bits_per_second)
                    .collect(),
                SampleKind::PerRepetition => {
                    g.runs.iter().map(|(_, r)| r.summary.received_bps).collect()
                }
            },
        })
        .collect();
    (kind, sets)
}

/// The lag-1 autocorrelation coefficient r₁ = Σ(xᵢ−x̄)(xᵢ₊₁−x̄) / Σ(xᵢ−x̄)²; `None` below 3
/// values or when all values are equal.
pub fn lag1_autocorrelation(values: &[f64]) -> Option<f64> {
    if values.len() < 3 {
        return None;
    }
    #[allow(clippy::cast_precision_loss)]
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let denom: f64 = values.iter().map(|x| (x - mean) * (x - mean)).sum();
    if denom <= 0.0 {
        return None;
    }
    let num: f64 = values
        .windows(2)
        .map(|w| (w[0] - mean) * (w[1] - mean))
        .sum();
    Some(num / denom)
}

/// Fewer values than this per data set and the verdict is weak whatever it says.
pub const MIN_SAMPLES: usize = 5;

/// Warnings about the data sets: too few values; per-interval samples that are
/// autocorrelated (|r₁| above the 95% band ±1.96/√n of independent values).
pub fn warnings(kind: SampleKind, sets: &[DataSet]) -> Vec<String> {
    let mut out = Vec::new();
    let few: Vec<String> = sets
        .iter()
        .filter(|s| s.values.len() < MIN_SAMPLES)
        .map(|s| format!("{} ({})", s.label, s.values.len()))
        .collect();
    if !few.is_empty() {
        out.push(format!(
            "too few values for a trustworthy verdict in {}: aim for {MIN_SAMPLES} or more{}",
            few.join(", "),
            match kind {
                SampleKind::PerInterval => " (run longer, or repeat the runs)",
                SampleKind::PerRepetition => " repetitions",
            }
        ));
    }
    if kind == SampleKind::PerInterval {
        for set in sets {
            let Some(r1) = lag1_autocorrelation(&set.values) else {
                continue;
            };
            #[allow(clippy::cast_precision_loss)]
            let band = 1.96 / (set.values.len() as f64).sqrt();
            if r1.abs() > band {
                out.push(format!(
                    "{}: consecutive intervals are autocorrelated (lag-1 r = {r1:.2}, beyond ±{band:.2}); they are not independent, so the confidence is overstated — repeat the run and compare one value per repetition",
                    set.label
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn autocorrelation_of_known_series() {
        // Alternating series: r1 = -1 * (n-1)/n for ±1.
        let alt = [1.0, -1.0, 1.0, -1.0, 1.0, -1.0];
        let r = lag1_autocorrelation(&alt).unwrap_or(f64::NAN);
        assert!((r - (-5.0 / 6.0)).abs() < 1e-12, "{r}");
        // A trend is strongly positively autocorrelated.
        let trend: Vec<f64> = (0..20).map(f64::from).collect();
        assert!(lag1_autocorrelation(&trend).unwrap_or(0.0) > 0.8);
        assert_eq!(lag1_autocorrelation(&[1.0, 1.0, 1.0]), None);
        assert_eq!(lag1_autocorrelation(&[1.0, 2.0]), None);
    }

    #[test]
    fn groups_parse_with_commas() {
        let g = parse_groups(&["1,2,3".into(), "4".into()]).unwrap_or_default();
        assert_eq!(g, vec![vec![RunId(1), RunId(2), RunId(3)], vec![RunId(4)]]);
        assert!(parse_groups(&["x".into()]).is_err());
        assert!(parse_groups(&["0".into()]).is_err());
    }

    #[test]
    fn warns_about_few_and_autocorrelated_samples() {
        let sets = [
            DataSet {
                label: "a".into(),
                values: vec![1.0, 2.0],
            },
            DataSet {
                label: "b".into(),
                values: (0..30).map(f64::from).collect(),
            },
        ];
        let w = warnings(SampleKind::PerInterval, &sets);
        assert!(
            w.iter().any(|w| w == "too few values for a trustworthy verdict in a (2): aim for 5 or more (run longer, or repeat the runs)"),
            "{w:?}"
        );
        assert!(
            w.iter()
                .any(|w| w.starts_with("b: consecutive intervals are autocorrelated")),
            "{w:?}"
        );
        assert!(warnings(SampleKind::PerRepetition, &sets[1..]).is_empty());
    }
}
