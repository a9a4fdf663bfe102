//! Placeholder until linerate-stats lands: no comparison is drawn.

use super::analysis::Group;

/// The comparison of groups.
#[derive(Debug, Clone)]
pub struct Outcome {}

impl Outcome {
    pub fn for_report(&self) -> linerate_report::Comparison {
        linerate_report::Comparison::default()
    }
}

pub fn compare_groups(_groups: &[Group], _confidence: f64) -> anyhow::Result<Option<Outcome>> {
    Ok(None)
}

pub fn sweep(_groups: &[Group], _outcome: Option<&Outcome>) -> Option<linerate_report::Sweep> {
    None
}
