//! The comparison itself: descriptive statistics, confidence intervals and Student's t
//! verdicts from linerate-stats, each data set against the first (the baseline).

use linerate_report::format::rate_scale;
use linerate_stats::compare::{TSource, compare_with};
use linerate_stats::ministat::{self, Dataset};
use linerate_stats::{Comparison, Confidence, Sample, Summary, compare};

use super::analysis::{self, Group, SampleKind};

/// One data set's statistics, bits/s.
#[derive(Debug, Clone)]
pub struct SetStats {
    /// The group's label.
    pub label: String,
    /// The runs in it.
    pub runs: Vec<linerate_store::RunId>,
    /// n, min, max, median, mean, stddev.
    pub summary: Summary,
    /// The confidence interval of the mean (n ≥ 2).
    pub ci: Option<(f64, f64)>,
    /// Lag-1 autocorrelation of the values in order (per-interval samples).
    pub lag1: Option<f64>,
    /// The sweep value of the group.
    pub sweep: Option<f64>,
}

/// One set against the baseline.
#[derive(Debug, Clone)]
pub struct PairVerdict {
    /// The set compared with the baseline.
    pub label: String,
    /// Student's t result.
    pub comparison: Comparison,
}

/// The whole comparison.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Which samples were compared.
    pub kind: SampleKind,
    /// The confidence level.
    pub confidence: Confidence,
    /// One per group, the baseline first.
    pub sets: Vec<SetStats>,
    /// Every set after the first against the first.
    pub pairs: Vec<PairVerdict>,
    /// Too few samples, autocorrelation.
    pub warnings: Vec<String>,
    /// Display scale: divisor and unit for the values.
    pub scale: (f64, &'static str),
    /// ministat's output over the scaled values.
    pub ministat: String,
}

/// Compares every group with the first. `None` with fewer than two groups.
pub fn compare_groups(groups: &[Group], confidence: f64) -> anyhow::Result<Option<Outcome>> {
    if groups.len() < 2 {
        return Ok(None);
    }
    let confidence =
        Confidence::new(confidence).map_err(|e| anyhow::anyhow!("--confidence: {e}"))?;
    let (kind, data) = analysis::data_sets(groups);
    if let Some(empty) = data.iter().find(|d| d.values.is_empty()) {
        anyhow::bail!(
            "{} has no throughput samples to compare (no intervals outside the warm-up)",
            empty.label
        );
    }
    let max = data
        .iter()
        .flat_map(|d| d.values.iter().copied())
        .fold(0.0_f64, f64::max);
    let scale = rate_scale(max);
    let sets: Vec<SetStats> = data
        .iter()
        .zip(groups)
        .map(|(d, g)| {
            let summary = Summary::of(&d.values);
            SetStats {
                label: d.label.clone(),
                runs: g.runs.iter().map(|(id, _)| *id).collect(),
                ci: mean_interval(&summary, confidence),
                lag1: analysis::lag1_autocorrelation(&d.values),
                sweep: g.sweep.as_ref().map(|s| s.0),
                summary,
            }
        })
        .collect();
    // The same t as the ministat rendering below uses, so the numbers agree digit for digit.
    let source = if confidence.ministat_column().is_some() {
        TSource::MinistatTable
    } else {
        TSource::Exact
    };
    let base = sets[0].summary;
    let pairs = sets[1..]
        .iter()
        .map(|s| PairVerdict {
            label: s.label.clone(),
            comparison: compare_with(&base, &s.summary, confidence, source)
                .unwrap_or_else(|_| compare(&base, &s.summary, confidence)),
        })
        .collect();
    let samples: Vec<Sample> = data
        .iter()
        .map(|d| Sample::new(d.values.iter().map(|v| v / scale.0).collect()))
        .collect();
    let names: Vec<String> = data.iter().map(|d| d.label.clone()).collect();
    let datasets: Vec<Dataset<'_>> = names
        .iter()
        .zip(&samples)
        .map(|(name, sample)| Dataset { name, sample })
        .collect();
    let ministat = ministat::render(
        &datasets,
        &ministat::Options {
            confidence,
            ..ministat::Options::default()
        },
    );
    let mut warnings = analysis::warnings(kind, &data);
    let mut tests: Vec<String> = groups
        .iter()
        .flat_map(|g| g.runs.iter())
        .map(|(_, r)| format!("{} {}", r.mode, r.direction.as_str()))
        .collect();
    tests.sort();
    tests.dedup();
    if tests.len() > 1 {
        warnings.push(format!(
            "the runs are different tests ({}): a difference may say more about the test than about the system",
            tests.join(", ")
        ));
    }
    Ok(Some(Outcome {
        kind,
        confidence,
        warnings,
        sets,
        pairs,
        scale,
        ministat,
    }))
}

/// mean ± t·s/√n at `confidence`; `None` below two values.
fn mean_interval(s: &Summary, confidence: Confidence) -> Option<(f64, f64)> {
    if s.n < 2 || !s.stddev.is_finite() {
        return None;
    }
    #[allow(clippy::cast_precision_loss)]
    let n = s.n as f64;
    let half = confidence.critical_t(n - 1.0) * s.stddev / n.sqrt();
    Some((s.mean - half, s.mean + half))
}

impl Outcome {
    /// The report's comparison section.
    pub fn for_report(&self, title: &str) -> linerate_report::Comparison {
        let mut verdicts = self.ministat.clone();
        verdicts.push('\n');
        verdicts.push_str(&self.differences());
        linerate_report::Comparison {
            title: title.to_owned(),
            samples: format!(
                "{}. Student's t at {}% confidence; the ministat table below is in {}.",
                self.kind.describe(),
                self.confidence.percent(),
                self.scale.1
            ),
            confidence: self.confidence.percent(),
            bars: self
                .sets
                .iter()
                .map(|s| linerate_report::Bar {
                    label: s.label.clone(),
                    mean: s.summary.mean,
                    ci: s.ci,
                })
                .collect(),
            verdicts,
            warnings: self.warnings.clone(),
        }
    }

    /// One line per set against the baseline: difference with its confidence interval.
    pub fn differences(&self) -> String {
        let (div, unit) = self.scale;
        let base = &self.sets[0].label;
        let level = self.confidence.percent();
        let mut out = String::new();
        for p in &self.pairs {
            let c = &p.comparison;
            let verdict = if c.significant {
                format!("difference proven at {level}% confidence")
            } else {
                format!("no difference proven at {level}% confidence")
            };
            out.push_str(&format!(
                "{} vs {base}: {:+.2} ± {:.2} {unit} ({:+.2}% ± {:.2}%), interval [{:.2}, {:.2}] {unit}: {verdict}\n",
                p.label,
                c.difference / div,
                c.error / div,
                c.percent,
                c.percent_error,
                (c.difference - c.error) / div,
                (c.difference + c.error) / div,
            ));
        }
        out
    }

    /// The JSON document (schema `linerate.compare/1`), values in bits/s.
    pub fn json(&self) -> serde_json::Value {
        let finite = |v: f64| v.is_finite().then_some(v);
        let sets: Vec<serde_json::Value> = self
            .sets
            .iter()
            .map(|s| {
                serde_json::json!({
                    "label": s.label,
                    "runs": s.runs,
                    "n": s.summary.n,
                    "min": finite(s.summary.min),
                    "max": finite(s.summary.max),
                    "median": finite(s.summary.median),
                    "mean": finite(s.summary.mean),
                    "stddev": finite(s.summary.stddev),
                    "ci_low": s.ci.map(|c| c.0),
                    "ci_high": s.ci.map(|c| c.1),
                    "lag1_autocorrelation": s.lag1,
                    "sweep_value": s.sweep,
                })
            })
            .collect();
        let comparisons: Vec<serde_json::Value> = self
            .pairs
            .iter()
            .map(|p| {
                let c = &p.comparison;
                serde_json::json!({
                    "baseline": self.sets[0].label,
                    "other": p.label,
                    "test": "student-t",
                    "t_source": c.t_source,
                    "df": c.df,
                    "t": finite(c.t),
                    "difference": finite(c.difference),
                    "error": finite(c.error),
                    "ci_low": finite(c.difference - c.error),
                    "ci_high": finite(c.difference + c.error),
                    "percent": finite(c.percent),
                    "percent_error": finite(c.percent_error),
                    "pooled_sd": finite(c.pooled_sd),
                    "significant": c.significant,
                    "verdict": c.verdict(),
                })
            })
            .collect();
        serde_json::json!({
            "schema": "linerate.compare/1",
            "samples": self.kind,
            "samples_description": self.kind.describe(),
            "confidence": self.confidence.percent(),
            "unit": "bit/s",
            "sets": sets,
            "comparisons": comparisons,
            "warnings": self.warnings,
        })
    }

    /// Whether any set differs from the baseline.
    pub fn any_difference(&self) -> bool {
        self.pairs.iter().any(|p| p.comparison.significant)
    }
}

/// The sweep curve of an experiment whose variants carry numeric sweep values, with the
/// confidence interval of each mean.
pub fn sweep(groups: &[Group], outcome: Option<&Outcome>) -> Option<linerate_report::Sweep> {
    let mut label = None;
    let mut points = Vec::new();
    for g in groups {
        let (x, l) = g.sweep.clone()?;
        label.get_or_insert(l);
        let values: Vec<f64> = g.runs.iter().map(|(_, r)| r.summary.received_bps).collect();
        let summary = Summary::of(&values);
        let ci = outcome
            .and_then(|o| o.sets.iter().find(|s| s.label == g.label))
            .and_then(|s| s.ci);
        points.push(linerate_report::SweepPoint {
            x,
            mean: summary.mean,
            ci,
        });
    }
    (points.len() >= 2).then(|| linerate_report::Sweep {
        label: label.unwrap_or_default(),
        points,
    })
}
