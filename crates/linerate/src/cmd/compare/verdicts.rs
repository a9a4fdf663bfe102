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

/// The sweep curve of an experiment whose variants carry numeric sweep values.
pub fn sweep(groups: &[Group], _outcome: Option<&Outcome>) -> Option<linerate_report::Sweep> {
    let mut label = None;
    let mut points = Vec::new();
    for g in groups {
        let (x, l) = g.sweep.clone()?;
        label.get_or_insert(l);
        let values: Vec<f64> = g.runs.iter().map(|(_, r)| r.summary.received_bps).collect();
        #[allow(clippy::cast_precision_loss)]
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        points.push(linerate_report::SweepPoint { x, mean, ci: None });
    }
    (points.len() >= 2).then(|| linerate_report::Sweep {
        label: label.unwrap_or_default(),
        points,
    })
}
