//! Which stored runs form the groups a comparison uses (shared by `compare` and `report`),
//! and their values for the comparison engine in linerate-stats, which chooses the samples:
//! single runs on their **per-interval throughput**, repeated runs (an experiment's variants,
//! or ids joined by commas) on **one value per repetition**.

use std::collections::BTreeMap;

use anyhow::Context;
use linerate_stats::comparison;
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

/// The groups as the comparison engine sees them: each run's receiver-side throughput over
/// the whole test, its per-interval throughput (the forward-direction sum, omitted warm-up
/// excluded) and which test measured it.
pub fn engine_groups(groups: &[Group]) -> Vec<comparison::Group> {
    groups
        .iter()
        .map(|g| comparison::Group {
            label: g.label.clone(),
            repetitions: g
                .runs
                .iter()
                .map(|(_, r)| comparison::Repetition {
                    value: r.summary.received_bps,
                    intervals: r
                        .throughput_series()
                        .iter()
                        .map(|s| s.bits_per_second)
                        .collect(),
                    test: Some(format!("{} {}", r.mode, r.direction.as_str())),
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_parse_with_commas() {
        let g = parse_groups(&["1,2,3".into(), "4".into()]).unwrap_or_default();
        assert_eq!(g, vec![vec![RunId(1), RunId(2), RunId(3)], vec![RunId(4)]]);
        assert!(parse_groups(&["x".into()]).is_err());
        assert!(parse_groups(&["0".into()]).is_err());
    }
}
