//! Experiments as the store keeps them: a name the user chose (`window-buffers`), an instance
//! number the store hands out (so the stored id is `window-buffers-3`, and two experiments
//! started in the same second are two), the plan, and whether it finished.

use serde::{Deserialize, Serialize};

/// How far an experiment got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExperimentStatus {
    /// Started and not (yet) finished: still running, or its runner was killed.
    Running,
    /// Every planned run was made.
    Complete,
    /// Stopped by a signal (Ctrl-C, SIGTERM) before its last run.
    Interrupted,
    /// Stored before linerate recorded completeness (schema 3 and older).
    Unknown,
}

impl ExperimentStatus {
    /// The stored spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Complete => "complete",
            Self::Interrupted => "interrupted",
            Self::Unknown => "unknown",
        }
    }

    /// Reads the stored spelling.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "running" => Self::Running,
            "complete" => Self::Complete,
            "interrupted" => Self::Interrupted,
            "unknown" => Self::Unknown,
            _ => return None,
        })
    }

    /// Whether the experiment is known not to have finished.
    #[must_use]
    pub fn is_incomplete(self) -> bool {
        matches!(self, Self::Running | Self::Interrupted)
    }
}

impl std::fmt::Display for ExperimentStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an experiment set out to measure.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExperimentPlan {
    /// The variants, baseline first.
    pub variants: Vec<String>,
    /// Repetitions of each variant.
    pub repetitions: u32,
}

/// How many runs of one variant are stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VariantRuns {
    /// The variant.
    pub variant: String,
    /// Its stored runs.
    pub runs: u32,
}

/// One stored experiment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Experiment {
    /// The stored id (`window-buffers-3`): what runs refer to.
    pub id: String,
    /// The name the user chose (`window-buffers`).
    pub name: String,
    /// Its number among the experiments of that name, from 1.
    pub instance: u32,
    /// How far it got.
    pub status: ExperimentStatus,
    /// When it started, Unix seconds.
    pub created_at: i64,
    /// When it was marked complete or interrupted, Unix seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<i64>,
    /// The plan, when the runner recorded one (imports do not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<ExperimentPlan>,
    /// The process that runs it (a `running` experiment whose process is gone was killed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The stored runs per variant, in the order they were first measured.
    pub variants: Vec<VariantRuns>,
}

impl Experiment {
    /// Stored runs in all.
    #[must_use]
    pub fn runs(&self) -> u32 {
        self.variants.iter().map(|v| v.runs).sum()
    }

    /// Runs the plan asked for, when there is a plan.
    #[must_use]
    pub fn planned_runs(&self) -> Option<u32> {
        let plan = self.plan.as_ref()?;
        u32::try_from(plan.variants.len())
            .ok()?
            .checked_mul(plan.repetitions)
    }

    /// Whether it is marked running but its runner process is gone (it was killed): known on
    /// Linux, where /proc tells; `None` where it cannot be told (no process recorded, another
    /// OS) or it is not marked running.
    #[must_use]
    pub fn runner_gone(&self) -> Option<bool> {
        match (self.status, self.pid) {
            (ExperimentStatus::Running, Some(pid)) if cfg!(target_os = "linux") => {
                Some(!std::path::Path::new("/proc").join(pid.to_string()).exists())
            }
            _ => None,
        }
    }
}

/// The edit distance between two names (insertions, deletions, substitutions), for "did you
/// mean".
#[must_use]
pub fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(above + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

/// The names among `names` close to `wanted`: a small edit distance, or one containing the
/// other; closest first.
#[must_use]
pub fn close_names<'a>(wanted: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let limit = (wanted.chars().count() / 3).max(2);
    let mut close: Vec<(usize, String)> = names
        .into_iter()
        .filter_map(|n| {
            let d = distance(wanted, n);
            (d <= limit || n.contains(wanted) || wanted.contains(n)).then(|| (d, n.to_owned()))
        })
        .collect();
    close.sort();
    close.dedup_by(|a, b| a.1 == b.1);
    close.into_iter().map(|(_, n)| n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_and_close_names() {
        assert_eq!(distance("window-buffers", "window-buffers"), 0);
        assert_eq!(distance("window-buffer", "window-buffers"), 1);
        assert_eq!(distance("bbbr", "bbr"), 1);
        assert_eq!(distance("", "abc"), 3);
        let names = ["window-buffers", "rmem-sweep", "short"];
        assert_eq!(close_names("window-bufers", names), ["window-buffers"]);
        assert_eq!(close_names("window", names), ["window-buffers"]);
        assert!(close_names("zzz", names).is_empty());
    }

    #[test]
    fn statuses_round_trip() {
        for s in [
            ExperimentStatus::Running,
            ExperimentStatus::Complete,
            ExperimentStatus::Interrupted,
            ExperimentStatus::Unknown,
        ] {
            assert_eq!(ExperimentStatus::parse(s.as_str()), Some(s));
        }
        assert!(ExperimentStatus::Running.is_incomplete());
        assert!(!ExperimentStatus::Unknown.is_incomplete());
    }
}
