//! Which stored runs form the groups a comparison uses (`compare`, `report`), and their values
//! for the comparison engine in linerate-stats, which chooses the samples: single runs on
//! their **per-interval** values, repeated runs (an experiment's variants, or ids joined by
//! commas) on **one value per repetition**; both in the runs' [`Metric`].
//!
//! Only store queries and the engine's input: it lives beside the report (not in the store)
//! because it speaks the comparison engine's types and the metrics' reading of a run.

use std::collections::BTreeMap;
use std::path::PathBuf;

use linerate_stats::comparison;
use linerate_store::{Experiment, ExperimentStatus, RunId, RunRecord, Store, StoreError};

use crate::metric::Metric;
use linerate_store::lab_run::LabRunError;

/// Why the groups could not be formed.
#[derive(Debug, thiserror::Error)]
pub enum GroupError {
    /// An argument that is not a run id.
    #[error("{0}")]
    NotARun(String),
    /// An argument with no id in it (`,`).
    #[error("`{0}` names no run")]
    Empty(String),
    /// The store failed (or has no such run).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A run of an experiment could not be read.
    #[error("reading run {id} of experiment {experiment}: {source}")]
    ExperimentRun {
        /// The run.
        id: RunId,
        /// The experiment.
        experiment: String,
        /// What the store said.
        source: StoreError,
    },
    /// The experiment has no runs.
    #[error("experiment {experiment} has no stored runs ({status}, in {})", database.display())]
    NoRuns {
        /// The experiment.
        experiment: String,
        /// Its status.
        status: ExperimentStatus,
        /// The database.
        database: PathBuf,
    },
    /// A run's stored value does not read.
    #[error("run {id}: {source}")]
    Value {
        /// The run.
        id: RunId,
        /// What is wrong with it.
        source: LabRunError,
    },
    /// An experiment that cannot prove a difference as it stands, compared only on request.
    #[error(
        "{why}. Not compared: such a verdict would not be evidence (--allow-incomplete compares \
         the variants with {MIN_REPETITIONS} or more runs)"
    )]
    Incomplete {
        /// Why (its [`ExperimentGroups::shortfall`]).
        why: String,
    },
    /// The baseline has too few repetitions for anything to be compared with it.
    #[error(
        "the baseline {baseline} of experiment {experiment} has fewer than {MIN_REPETITIONS} \
         repetitions: there is nothing to compare the other variants with"
    )]
    BaselineShort {
        /// The baseline's label.
        baseline: String,
        /// The experiment.
        experiment: String,
    },
    /// A run without a value in the comparison's metric.
    #[error("run {id} ({mode}) has no {quantity} to compare")]
    NoValue {
        /// The run.
        id: RunId,
        /// Its mode.
        mode: String,
        /// The metric's quantity.
        quantity: &'static str,
    },
}

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
///
/// # Errors
/// An argument that is not a run id, or names none.
pub fn parse_groups(args: &[String]) -> Result<Vec<Vec<RunId>>, GroupError> {
    let mut groups = Vec::new();
    for arg in args {
        let mut group = Vec::new();
        for part in arg.split(',').filter(|p| !p.trim().is_empty()) {
            let id: RunId = part.trim().parse().map_err(GroupError::NotARun)?;
            group.push(id);
        }
        if group.is_empty() {
            return Err(GroupError::Empty(arg.clone()));
        }
        groups.push(group);
    }
    Ok(groups)
}

/// Loads the runs of each group.
///
/// # Errors
/// A run the store does not have, or a failing store.
pub fn load_groups(store: &Store, ids: &[Vec<RunId>]) -> Result<Vec<Group>, GroupError> {
    ids.iter()
        .map(|group| {
            let runs = group
                .iter()
                .map(|&id| Ok((id, store.run(id)?)))
                .collect::<Result<Vec<_>, GroupError>>()?;
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

/// An experiment as stored, with its runs grouped by variant.
#[derive(Debug, Clone)]
pub struct ExperimentGroups {
    /// The experiment the name resolved to.
    pub experiment: Experiment,
    /// Its variants' runs, baseline first.
    pub groups: Vec<Group>,
}

/// The fewest repetitions of a variant that give a spread to compare (Student's t).
pub const MIN_REPETITIONS: usize = 2;

impl ExperimentGroups {
    /// Why this experiment cannot prove a difference as it stands (it did not complete, or a
    /// variant has fewer than [`MIN_REPETITIONS`] runs); `None` when it can.
    pub fn shortfall(&self) -> Option<String> {
        let e = &self.experiment;
        let planned = e.planned_runs().map_or(String::new(), |p| {
            format!(" ({} of {p} planned runs stored)", e.runs())
        });
        let mut why = Vec::new();
        match e.status {
            ExperimentStatus::Running => why.push(format!(
                "experiment {} did not complete{planned}: it is marked running ({})",
                e.id,
                running_why(e)
            )),
            ExperimentStatus::Interrupted => {
                why.push(format!("experiment {} was interrupted{planned}", e.id));
            }
            ExperimentStatus::Complete | ExperimentStatus::Unknown => {}
        }
        let mut missing: Vec<String> = e
            .plan
            .iter()
            .flat_map(|p| p.variants.iter())
            .filter(|v| !self.groups.iter().any(|g| &g.label == *v))
            .map(|v| format!("{v} (none)"))
            .collect();
        missing.extend(
            self.groups
                .iter()
                .filter(|g| g.runs.len() < MIN_REPETITIONS)
                .map(|g| format!("{} ({})", g.label, g.runs.len())),
        );
        if !missing.is_empty() {
            why.push(format!(
                "a comparison needs at least {MIN_REPETITIONS} repetitions of every variant, \
                 and these have fewer: {}",
                missing.join(", ")
            ));
        }
        (!why.is_empty()).then(|| why.join("; "))
    }

    /// The groups a comparison can use: those with at least [`MIN_REPETITIONS`] runs (what
    /// `--allow-incomplete` compares), and the labels left out.
    pub fn comparable(&self) -> (Vec<Group>, Vec<String>) {
        let (keep, drop): (Vec<&Group>, Vec<&Group>) = self
            .groups
            .iter()
            .partition(|g| g.runs.len() >= MIN_REPETITIONS);
        (
            keep.into_iter().cloned().collect(),
            drop.into_iter().map(|g| g.label.clone()).collect(),
        )
    }
}

impl ExperimentGroups {
    /// The groups `compare --experiment` compares, and notes on what it left out: an
    /// incomplete experiment is refused unless `allow_incomplete` (then its variants with
    /// [`MIN_REPETITIONS`] runs or more are compared, the baseline among them).
    ///
    /// # Errors
    /// [`GroupError::Incomplete`] (not allowed), [`GroupError::BaselineShort`].
    pub fn for_comparison(
        &self,
        allow_incomplete: bool,
    ) -> Result<(Vec<Group>, Vec<String>), GroupError> {
        let mut notes = Vec::new();
        if let Some(why) = self.shortfall() {
            if !allow_incomplete {
                return Err(GroupError::Incomplete { why });
            }
            notes.push(format!("{why}; compared anyway (--allow-incomplete)"));
        }
        let (groups, left_out) = self.comparable();
        if !left_out.is_empty() {
            notes.push(format!(
                "left out (fewer than {} repetitions): {}",
                MIN_REPETITIONS,
                left_out.join(", ")
            ));
        }
        if groups.first().map(|g| &g.label) != self.groups.first().map(|g| &g.label) {
            return Err(GroupError::BaselineShort {
                baseline: self
                    .groups
                    .first()
                    .map_or_else(|| "?".to_owned(), |g| g.label.clone()),
                experiment: self.experiment.id.clone(),
            });
        }
        Ok((groups, notes))
    }
}

/// A note per group with runs that ended early (partial): their numbers cover only the time
/// they ran.
pub fn partial_notes(groups: &[Group]) -> Vec<String> {
    groups
        .iter()
        .filter_map(|g| {
            let partial: Vec<String> = g
                .runs
                .iter()
                .filter(|(_, r)| r.partial)
                .map(|(id, _)| id.to_string())
                .collect();
            (!partial.is_empty()).then(|| {
                format!(
                    "{}: run(s) {} ended early (partial): their numbers cover only the time they ran",
                    g.label,
                    partial.join(", ")
                )
            })
        })
        .collect()
}

/// Whether a `running` experiment's process is still there (on Linux, where /proc tells).
fn running_why(e: &Experiment) -> String {
    match (e.pid, e.runner_gone()) {
        (Some(pid), Some(false)) => format!("process {pid} may still be running it"),
        (Some(pid), Some(true)) => format!("its runner, process {pid}, is gone: it was killed"),
        _ => "still running, or its runner was killed".to_owned(),
    }
}

/// An experiment's runs grouped by variant, in the order the variants were first measured
/// (the plan's first variant, else one named `baseline`, goes first: it is what the others
/// are compared with). `wanted` is a name (its newest instance), an id or `NAME-N`.
///
/// # Errors
/// No such experiment, one without runs, or a failing store.
pub fn experiment_groups(store: &Store, wanted: &str) -> Result<ExperimentGroups, GroupError> {
    let found = store.resolve_experiment(wanted)?;
    let experiment = found.id.as_str();
    let ids = store.experiment_run_ids(experiment)?;
    if ids.is_empty() {
        return Err(GroupError::NoRuns {
            experiment: experiment.to_owned(),
            status: found.status,
            database: store.path().to_owned(),
        });
    }
    let mut order: Vec<String> = Vec::new();
    let mut by_variant: BTreeMap<String, Group> = BTreeMap::new();
    for id in ids {
        let run = store.run(id).map_err(|source| GroupError::ExperimentRun {
            id,
            experiment: experiment.to_owned(),
            source,
        })?;
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
    // The plan names the baseline (its first variant); without one, a variant named
    // `baseline` goes first.
    let first = found
        .plan
        .as_ref()
        .and_then(|p| p.variants.first().cloned())
        .unwrap_or_else(|| "baseline".to_owned());
    if let Some(pos) = order.iter().position(|v| *v == first) {
        let b = order.remove(pos);
        order.insert(0, b);
    }
    let groups = order
        .into_iter()
        .filter_map(|v| by_variant.remove(&v))
        .collect();
    Ok(ExperimentGroups {
        experiment: found,
        groups,
    })
}

/// The metric the groups' runs share (throughput when they differ).
pub fn metric(groups: &[Group]) -> Metric {
    Metric::of_runs(groups.iter().flat_map(|g| g.runs.iter().map(|(_, r)| r)))
}

/// The groups as the comparison engine sees them, in `metric`: each run's value over the
/// whole test, its values interval by interval (forward direction, warm-up excluded) and
/// which test measured it.
///
/// # Errors
/// A run without a value in `metric`, or whose stored lab facts do not read.
pub fn engine_groups(
    groups: &[Group],
    metric: Metric,
) -> Result<Vec<comparison::Group>, GroupError> {
    groups
        .iter()
        .map(|g| {
            let repetitions = g
                .runs
                .iter()
                .map(|(id, r)| {
                    let value = metric
                        .value(r)
                        .map_err(|source| GroupError::Value { id: *id, source })?
                        .ok_or_else(|| GroupError::NoValue {
                            id: *id,
                            mode: r.mode.clone(),
                            quantity: metric.quantity(),
                        })?;
                    Ok(comparison::Repetition {
                        value,
                        intervals: metric.series(r).iter().map(|s| s.value).collect(),
                        test: Some(format!("{} {}", r.mode, r.direction.as_str())),
                    })
                })
                .collect::<Result<Vec<_>, GroupError>>()?;
            Ok(comparison::Group {
                label: g.label.clone(),
                repetitions,
            })
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
        assert_eq!(
            parse_groups(&[",".into()]).err().map(|e| e.to_string()),
            Some("`,` names no run".into())
        );
    }
}
