//! What a report covers and compares, from the command's choice of runs: an experiment's
//! variants (compared when each has enough repetitions, one value per repetition), a listing
//! (the last N runs, the runs since a time, to a peer: shown and charted over time, never
//! compared, since they may be anything), or groups of runs by id (compared). The result is
//! the [`ReportInput`] that [`crate::build`] turns into the page.

use linerate_stats::Confidence;
use linerate_stats::comparison::SampleKind;
use linerate_store::{ExperimentStatus, RunFilter, RunRecord, Store, StoreError};

use crate::groups::{self, Group, GroupError, MIN_REPETITIONS};
use crate::profiles::{self, ProfilesError};
use crate::verdicts::{self, VerdictError};
use crate::{ReportInput, Sweep, SweepPoint, SweepSeries, format};

/// Per-run charts for at most this many runs.
const MAX_RUN_CHARTS: usize = 24;

/// The runs a report is about.
#[derive(Debug, Clone, Copy)]
pub enum Selection<'a> {
    /// An experiment by name, id or `NAME-N`.
    Experiment(&'a str),
    /// Stored runs by filter, newest last.
    Listing {
        /// The last N runs.
        last: Option<usize>,
        /// Runs started at or after this time, Unix seconds.
        since: Option<i64>,
        /// Runs to this peer.
        peer: Option<&'a str>,
    },
    /// Groups of run ids, as `compare` takes them (`1,2,3 4,5,6`).
    Runs(&'a [String]),
}

/// Why the report's input could not be put together.
#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    /// The groups could not be found or read.
    #[error(transparent)]
    Groups(#[from] GroupError),
    /// The comparison could not be made.
    #[error(transparent)]
    Verdict(#[from] VerdictError),
    /// The stored profiles could not be read or drawn.
    #[error(transparent)]
    Profiles(#[from] ProfilesError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A listing found no run.
    #[error("{what}: none in {database}")]
    NoRuns {
        /// The listing, as its title says it.
        what: String,
        /// The database searched.
        database: String,
    },
}

/// The report's input, and what the reader should be warned of.
#[derive(Debug)]
pub struct Selected {
    /// What [`crate::build`] draws.
    pub input: ReportInput,
    /// Warnings for the terminal (an experiment that cannot prove a difference as it stands).
    pub warnings: Vec<String>,
}

/// Puts together the report of `selection` in `store`, made at `now` (Unix seconds), titled
/// `title` or after what it covers.
///
/// # Errors
/// No such runs or experiment, an empty listing, or a store, comparison or profile failure.
pub fn report_input(
    store: &Store,
    selection: Selection<'_>,
    confidence: Confidence,
    title: Option<String>,
    now: i64,
) -> Result<Selected, SelectError> {
    let mut warnings = Vec::new();
    let (groups, default_title) = match selection {
        Selection::Experiment(exp) => {
            let found = groups::experiment_groups(store, exp)?;
            if let Some(why) = found.shortfall() {
                warnings.push(format!(
                    "{why}: the report shows the runs, and compares only variants with {} or more",
                    MIN_REPETITIONS
                ));
            }
            let title = match found.experiment.status {
                ExperimentStatus::Complete | ExperimentStatus::Unknown => {
                    format!("Experiment {}", found.experiment.id)
                }
                status => format!("Experiment {} ({status})", found.experiment.id),
            };
            (found.groups, title)
        }
        Selection::Listing { last, since, peer } => {
            let listed = store.list(&RunFilter {
                last,
                since,
                peer: peer.map(str::to_owned),
                ..RunFilter::default()
            })?;
            let mut what = match (last, since) {
                (Some(n), _) => format!("The last {n} runs"),
                (None, Some(since)) => format!("Runs since {}", format::utc(since)),
                (None, None) => "Runs".to_owned(),
            };
            if let Some(p) = peer {
                what.push_str(&format!(" to {p}"));
            }
            if listed.is_empty() {
                return Err(SelectError::NoRuns {
                    what,
                    database: store.path().display().to_string(),
                });
            }
            let ids: Vec<Vec<_>> = listed.iter().map(|r| vec![r.id]).collect();
            (
                groups::load_groups(store, &ids)?,
                format!("{what} ({})", listed.len()),
            )
        }
        Selection::Runs(runs) => {
            let ids = groups::parse_groups(runs)?;
            (
                groups::load_groups(store, &ids)?,
                "linerate report".to_owned(),
            )
        }
    };
    // The last N runs may be anything (tcp and udp, other peers): only runs the user chose,
    // or an experiment's variants, are compared.
    let comparison = match selection {
        Selection::Listing { .. } => None,
        Selection::Experiment(_) => {
            // Its variants with enough repetitions, one value per repetition.
            let comparable: Vec<Group> = groups
                .iter()
                .filter(|g| g.runs.len() >= MIN_REPETITIONS)
                .cloned()
                .collect();
            match comparable.first() {
                Some(b) if Some(&b.label) == groups.first().map(|g| &g.label) => {
                    verdicts::compare_groups(
                        &comparable,
                        confidence,
                        Some(SampleKind::PerRepetition),
                    )?
                }
                _ => None,
            }
        }
        Selection::Runs(_) => verdicts::compare_groups(&groups, confidence, None)?,
    };
    let comparison_title = match (selection, groups.first()) {
        (Selection::Experiment(_), Some(base)) => format!("Variants compared with {}", base.label),
        (_, Some(base)) => format!("Runs compared with {}", base.label),
        _ => String::new(),
    };
    let sweep = match selection {
        Selection::Listing { .. } => history(&groups),
        _ => verdicts::sweep(&groups, comparison.as_ref()),
    };
    let profiles = match selection {
        Selection::Experiment(_) => profiles::section(store, &groups, confidence)?,
        _ => None,
    };
    let runs = groups
        .iter()
        .flat_map(|g| g.runs.iter().cloned())
        .collect::<Vec<_>>();
    Ok(Selected {
        input: ReportInput {
            title: title.unwrap_or(default_title),
            generated_at: now,
            database: Some(store.path().display().to_string()),
            comparison: comparison.as_ref().map(|c| c.for_report(&comparison_title)),
            sweep,
            runs,
            max_run_charts: MAX_RUN_CHARTS,
            profiles,
        },
        warnings,
    })
}

/// A path's history: each run's value (in the metric the runs share: receiver-side
/// throughput unless they are all pps or all rr runs) against the hours since the first run
/// listed (drawn as the sweep chart is).
fn history(groups: &[Group]) -> Option<Sweep> {
    let runs: Vec<&RunRecord> = groups
        .iter()
        .flat_map(|g| g.runs.iter().map(|(_, r)| r))
        .collect();
    let first = runs.iter().map(|r| r.started_at).min()?;
    if runs.len() < 2 {
        return None;
    }
    let metric = groups::metric(groups);
    let mut points: Vec<SweepPoint> = runs
        .iter()
        .filter_map(|r| {
            Some(SweepPoint {
                x: (r.started_at - first) as f64 / 3600.0,
                mean: metric.value(r).ok().flatten()?,
                ci: None,
            })
        })
        .collect();
    points.sort_by(|a, b| a.x.total_cmp(&b.x));
    Some(Sweep {
        label: format!("hours since {}", format::utc(first)),
        metric,
        series: vec![SweepSeries::single(points)],
    })
}
