//! The comparison itself, through linerate-stats' comparison engine: each data set against
//! the first (the baseline), Student's t at the confidence asked for with the exact quantile
//! (as `lab run`, so the same runs get the same digits from both; ministat's table is for
//! `linerate stat` only), in the runs' metric, and the engine's results rendered for `compare`
//! (text; [`json`] its document) and `report`.

pub mod json;

use linerate_stats::comparison::{self, Analysis, Options, SampleKind};
use linerate_stats::ministat::{self, Dataset};
use linerate_stats::{Confidence, Sample, Summary};
use linerate_store::RunId;

use crate::chart::{Bar, SweepPoint, SweepSeries};
use crate::groups::{self, Group, GroupError};
use crate::html::{Comparison, Sweep};
use crate::metric::Metric;
use crate::words;

/// Why a comparison could not be made.
#[derive(Debug, thiserror::Error)]
pub enum VerdictError {
    /// The groups' values could not be read.
    #[error(transparent)]
    Groups(#[from] GroupError),
    /// A set without samples.
    #[error("{label} has no {quantity} samples to compare (no intervals outside the warm-up)")]
    NoSamples {
        /// The set.
        label: String,
        /// The metric's quantity.
        quantity: &'static str,
    },
}

/// The whole comparison.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The engine's analysis: sets, verdicts against the first, warnings.
    pub analysis: Analysis,
    /// What the values are.
    pub metric: Metric,
    /// The runs of each set.
    pub runs: Vec<Vec<RunId>>,
    /// The sweep value of each set.
    pub sweep: Vec<Option<f64>>,
    /// Display scale: divisor and unit for the values.
    pub scale: (f64, &'static str),
    /// ministat's output over the scaled values (its verdicts with the exact quantile too).
    pub ministat: String,
}

/// Compares every group with the first, in the metric the groups' runs share. `None` with
/// fewer than two groups. `kind` chooses the samples; `None` lets the groups decide (single
/// runs per interval, groups per repetition). An experiment's variants are always compared
/// per repetition: interval samples are autocorrelated and never prove a difference between
/// variants.
///
/// # Errors
/// A run without a value in the metric, or a set without samples.
pub fn compare_groups(
    groups: &[Group],
    confidence: Confidence,
    kind: Option<SampleKind>,
) -> Result<Option<Outcome>, VerdictError> {
    if groups.len() < 2 {
        return Ok(None);
    }
    let options = Options::student_t(confidence);
    let metric = groups::metric(groups);
    let engine_groups = groups::engine_groups(groups, metric)?;
    let kind = kind.unwrap_or_else(|| SampleKind::for_groups(&engine_groups));
    let analysis = comparison::analyse(&engine_groups, kind, &options);
    if let Some(empty) = analysis.sets.iter().find(|s| s.values.is_empty()) {
        return Err(VerdictError::NoSamples {
            label: empty.label.clone(),
            quantity: metric.quantity(),
        });
    }
    let max = analysis
        .sets
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .fold(0.0_f64, f64::max);
    let scale = metric.unit().axis(max);
    let samples: Vec<Sample> = analysis
        .sets
        .iter()
        .map(|s| Sample::new(s.values.iter().map(|v| v / scale.0).collect()))
        .collect();
    let datasets: Vec<Dataset<'_>> = analysis
        .sets
        .iter()
        .zip(&samples)
        .map(|(set, sample)| Dataset {
            name: &set.label,
            sample,
        })
        .collect();
    let ministat = ministat::render(
        &datasets,
        &ministat::Options {
            confidence,
            test: options.test,
            t_source: options.t_source,
            ..ministat::Options::default()
        },
    );
    Ok(Some(Outcome {
        runs: groups
            .iter()
            .map(|g| g.runs.iter().map(|(id, _)| *id).collect())
            .collect(),
        sweep: groups
            .iter()
            .map(|g| g.sweep.as_ref().map(|s| s.0))
            .collect(),
        analysis,
        metric,
        scale,
        ministat,
    }))
}

impl Outcome {
    /// Which samples were compared.
    pub fn kind(&self) -> SampleKind {
        self.analysis.kind
    }

    /// The confidence level of every verdict and interval.
    pub fn confidence(&self) -> Confidence {
        self.analysis.options.confidence
    }

    /// The engine's warnings, in words.
    pub fn warnings(&self) -> Vec<String> {
        self.analysis.warnings.iter().map(words::warning).collect()
    }

    /// Which samples were compared, in words.
    pub fn samples(&self) -> String {
        words::describe(self.kind(), self.metric)
    }

    /// The report's comparison section.
    pub fn for_report(&self, title: &str) -> Comparison {
        let mut verdicts = self.ministat.clone();
        verdicts.push('\n');
        verdicts.push_str(&self.differences());
        Comparison {
            title: title.to_owned(),
            samples: format!(
                "{}. Student's t at {}% confidence; the ministat table below is in {}.",
                self.samples(),
                self.confidence().percent(),
                self.scale.1
            ),
            confidence: self.confidence().percent(),
            metric: self.metric,
            bars: self
                .analysis
                .sets
                .iter()
                .map(|s| Bar {
                    label: s.label.clone(),
                    mean: s.summary.mean,
                    ci: s.ci,
                })
                .collect(),
            verdicts,
            warnings: self.warnings(),
        }
    }

    /// One line per set against the baseline: difference with its confidence interval.
    pub fn differences(&self) -> String {
        let (div, unit) = self.scale;
        let sets = &self.analysis.sets;
        let mut out = String::new();
        for v in &self.analysis.verdicts {
            let (label, base) = (&sets[v.other].label, &sets[v.baseline].label);
            let o = &v.outcome;
            let level = o.confidence().percent();
            let verdict = if o.significant() {
                format!("difference proven at {level}% confidence")
            } else {
                format!("no difference proven at {level}% confidence")
            };
            let (d, percent) = (o.difference(), o.percent());
            out.push_str(&match (o.error(), o.percent_error()) {
                (Some(e), Some(percent_error)) => format!(
                    "{label} vs {base}: {:+.2} ± {:.2} {unit} ({percent:+.2}% ± {percent_error:.2}%), interval [{:.2}, {:.2}] {unit}: {verdict}\n",
                    d / div,
                    e / div,
                    (d - e) / div,
                    (d + e) / div,
                ),
                // The rank test states the difference of medians, without an interval.
                _ => format!(
                    "{label} vs {base}: median {:+.2} {unit} ({percent:+.2}%): {verdict}\n",
                    d / div
                ),
            });
        }
        out
    }

    /// Whether any set differs from the baseline.
    pub fn any_difference(&self) -> bool {
        self.analysis.any_difference()
    }
}

/// The sweep curves of an experiment whose variants carry numeric sweep values, with the
/// confidence interval of each mean: one curve, or for a grid sweep (`lab run` names its
/// variants `BASE PARAMETER=VALUE`, e.g. tun-mtu × cipher) one curve per base variant.
/// The curves are in the metric the runs share; a run without a value in it is left out of
/// its variant's mean.
pub fn sweep(groups: &[Group], outcome: Option<&Outcome>) -> Option<Sweep> {
    let metric = outcome.map_or_else(|| groups::metric(groups), |o| o.metric);
    let mut label = None;
    let mut series: Vec<SweepSeries> = Vec::new();
    for g in groups {
        let (x, l) = g.sweep.clone()?;
        let values: Vec<f64> = g
            .runs
            .iter()
            .filter_map(|(_, r)| metric.value(r).ok().flatten())
            .collect();
        let summary = Summary::of(&values);
        let ci = outcome
            .and_then(|o| o.analysis.sets.iter().find(|s| s.label == g.label))
            .and_then(|s| s.ci);
        let point = SweepPoint {
            x,
            mean: summary.mean,
            ci,
        };
        let base = grid_base(&g.label, &l).unwrap_or("mean");
        label.get_or_insert(l);
        match series.iter_mut().find(|s| s.name == base) {
            Some(s) => s.points.push(point),
            None => series.push(SweepSeries {
                name: base.to_owned(),
                points: vec![point],
            }),
        }
    }
    // Variants that share a value but not a base (a sweep whose names do not say the base)
    // would zig-zag on one line: draw none.
    for s in &series {
        let mut xs: Vec<f64> = s.points.iter().map(|p| p.x).collect();
        xs.sort_by(f64::total_cmp);
        if xs.windows(2).any(|w| w[0] == w[1]) {
            return None;
        }
    }
    let points: usize = series.iter().map(|s| s.points.len()).sum();
    (points >= 2).then(|| Sweep {
        label: label.unwrap_or_default(),
        metric,
        series,
    })
}

/// The base variant of a grid sweep's variant `BASE PARAMETER=VALUE` (`AES-256-GCM
/// tunnel.tun-mtu=1500` → `AES-256-GCM`); `None` for a plain sweep's `PARAMETER=VALUE`.
fn grid_base<'a>(variant: &'a str, parameter: &str) -> Option<&'a str> {
    let (base, last) = variant.rsplit_once(' ')?;
    let value = last.strip_prefix(parameter)?.strip_prefix('=')?;
    (!base.is_empty() && !value.is_empty()).then_some(base)
}

#[cfg(test)]
mod tests {
    use super::grid_base;

    #[test]
    fn a_grid_variant_names_its_base_and_a_plain_sweep_none() {
        assert_eq!(
            grid_base("AES-256-GCM tunnel.tun-mtu=1500", "tunnel.tun-mtu"),
            Some("AES-256-GCM")
        );
        assert_eq!(
            grid_base("my cipher tunnel.tun-mtu=9000", "tunnel.tun-mtu"),
            Some("my cipher")
        );
        assert_eq!(grid_base("tunnel.tun-mtu=1500", "tunnel.tun-mtu"), None);
        assert_eq!(grid_base("AES tunnel.tun-mtu=", "tunnel.tun-mtu"), None);
        assert_eq!(grid_base("AES link.mtu=1500", "tunnel.tun-mtu"), None);
    }
}
