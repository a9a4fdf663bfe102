//! The comparison itself, through linerate-stats' comparison engine: each data set against
//! the first (the baseline), Student's t at the confidence asked for with ministat's table
//! where it has the level (so the numbers agree with ministat digit for digit), and the
//! engine's results rendered for `compare` (text, JSON) and `report`.

use linerate_report::format::rate_scale;
use linerate_stats::comparison::{self, Analysis, Options, SampleKind, TestOutcome};
use linerate_stats::ministat::{self, Dataset};
use linerate_stats::{Confidence, Sample, Summary, TSource};
use linerate_store::RunId;

use super::analysis::{self, Group};
use super::words;

/// The whole comparison.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The engine's analysis: sets, verdicts against the first, warnings.
    pub analysis: Analysis,
    /// The runs of each set.
    pub runs: Vec<Vec<RunId>>,
    /// The sweep value of each set.
    pub sweep: Vec<Option<f64>>,
    /// Display scale: divisor and unit for the values.
    pub scale: (f64, &'static str),
    /// ministat's output over the scaled values.
    pub ministat: String,
    /// The values are RFC 2544 NDRs, frames/s (else bit/s).
    pub frames: bool,
}

/// Compares every group with the first. `None` with fewer than two groups. `kind` chooses the
/// samples; `None` lets the groups decide (single runs per interval, groups per repetition).
/// An experiment's variants are always compared per repetition: interval samples are
/// autocorrelated and never prove a difference between variants.
pub fn compare_groups(
    groups: &[Group],
    confidence: f64,
    kind: Option<SampleKind>,
) -> anyhow::Result<Option<Outcome>> {
    if groups.len() < 2 {
        return Ok(None);
    }
    let confidence =
        Confidence::new(confidence).map_err(|e| anyhow::anyhow!("--confidence: {e}"))?;
    let options = Options {
        confidence,
        test: comparison::Test::StudentT,
        t_source: TSource::MinistatTable,
    };
    let engine_groups = analysis::engine_groups(groups);
    let kind = kind.unwrap_or_else(|| SampleKind::for_groups(&engine_groups));
    let analysis = comparison::analyse(&engine_groups, kind, &options);
    if let Some(empty) = analysis.sets.iter().find(|s| s.values.is_empty()) {
        anyhow::bail!(
            "{} has no throughput samples to compare (no intervals outside the warm-up)",
            empty.label
        );
    }
    let max = analysis
        .sets
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .fold(0.0_f64, f64::max);
    let frames = rfc2544_groups(groups);
    let scale = if frames {
        linerate_report::rfc2544::scale(max)
    } else {
        rate_scale(max)
    };
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
        scale,
        ministat,
        frames,
    }))
}

/// Whether every run of the groups is an RFC 2544 run (compared by NDR, frames/s).
fn rfc2544_groups(groups: &[Group]) -> bool {
    let mut runs = groups.iter().flat_map(|g| g.runs.iter());
    runs.clone().next().is_some() && runs.all(|(_, r)| linerate_report::rfc2544::is_rfc2544(r))
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

    /// What was compared, in words.
    pub fn describe(&self) -> &'static str {
        if self.frames {
            words::describe_ndr()
        } else {
            words::describe(self.kind())
        }
    }

    /// The engine's warnings, in words.
    pub fn warnings(&self) -> Vec<String> {
        self.analysis.warnings.iter().map(words::warning).collect()
    }

    /// The report's comparison section.
    pub fn for_report(&self, title: &str) -> linerate_report::Comparison {
        let mut verdicts = self.ministat.clone();
        verdicts.push('\n');
        verdicts.push_str(&self.differences());
        linerate_report::Comparison {
            title: title.to_owned(),
            samples: format!(
                "{}. Student's t at {}% confidence; the ministat table below is in {}.",
                self.describe(),
                self.confidence().percent(),
                self.scale.1
            ),
            confidence: self.confidence().percent(),
            bars: self
                .analysis
                .sets
                .iter()
                .map(|s| linerate_report::Bar {
                    label: s.label.clone(),
                    mean: s.summary.mean,
                    ci: s.ci,
                })
                .collect(),
            verdicts,
            warnings: self.warnings(),
            frames: self.frames,
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

    /// The JSON document (schema `linerate.compare/1`), values in bits/s (RFC 2544 runs: NDR in
    /// frames/s).
    pub fn json(&self) -> serde_json::Value {
        let finite = |v: f64| v.is_finite().then_some(v);
        let sets: Vec<serde_json::Value> = self
            .analysis
            .sets
            .iter()
            .zip(self.runs.iter().zip(&self.sweep))
            .map(|(s, (runs, sweep))| {
                serde_json::json!({
                    "label": s.label,
                    "runs": runs,
                    "n": s.summary.n,
                    "min": finite(s.summary.min),
                    "max": finite(s.summary.max),
                    "median": finite(s.summary.median),
                    "mean": finite(s.summary.mean),
                    "stddev": finite(s.summary.stddev),
                    "ci_low": s.ci.map(|c| c.0),
                    "ci_high": s.ci.map(|c| c.1),
                    "lag1_autocorrelation": s.lag1,
                    "sweep_value": sweep,
                })
            })
            .collect();
        let labels = |v: &comparison::Verdict| {
            let sets = &self.analysis.sets;
            (sets[v.baseline].label.clone(), sets[v.other].label.clone())
        };
        let comparisons: Vec<serde_json::Value> = self
            .analysis
            .verdicts
            .iter()
            .map(|v| {
                let (baseline, other) = labels(v);
                match &v.outcome {
                    TestOutcome::StudentT(c) => serde_json::json!({
                        "baseline": baseline,
                        "other": other,
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
                    }),
                    TestOutcome::MannWhitney(m) => serde_json::json!({
                        "baseline": baseline,
                        "other": other,
                        "test": "mann-whitney",
                        "u": finite(m.u),
                        "z": finite(m.z),
                        "p_value": finite(m.p_value),
                        "p_method": m.method,
                        "difference": finite(m.median_difference),
                        "percent": finite(m.median_percent),
                        "significant": m.significant,
                        "verdict": m.verdict(),
                    }),
                }
            })
            .collect();
        serde_json::json!({
            "schema": "linerate.compare/1",
            "samples": self.kind(),
            "samples_description": words::describe(self.kind()),
            "confidence": self.confidence().percent(),
            "unit": if self.frames { "frame/s" } else { "bit/s" },
            "sets": sets,
            "comparisons": comparisons,
            "warnings": self.warnings(),
        })
    }

    /// Whether any set differs from the baseline.
    pub fn any_difference(&self) -> bool {
        self.analysis.any_difference()
    }
}

/// The sweep curves of an experiment whose variants carry numeric sweep values, with the
/// confidence interval of each mean: one curve, or for a grid sweep (`lab run` names its
/// variants `BASE PARAMETER=VALUE`, e.g. tun-mtu × cipher) one curve per base variant.
pub fn sweep(groups: &[Group], outcome: Option<&Outcome>) -> Option<linerate_report::Sweep> {
    // RFC 2544 results against frame size are the report's NDR/PDR chart.
    if rfc2544_groups(groups) {
        return None;
    }
    let mut label = None;
    let mut series: Vec<linerate_report::SweepSeries> = Vec::new();
    for g in groups {
        let (x, l) = g.sweep.clone()?;
        let values: Vec<f64> = g.runs.iter().map(|(_, r)| r.summary.received_bps).collect();
        let summary = Summary::of(&values);
        let ci = outcome
            .and_then(|o| o.analysis.sets.iter().find(|s| s.label == g.label))
            .and_then(|s| s.ci);
        let point = linerate_report::SweepPoint {
            x,
            mean: summary.mean,
            ci,
        };
        let base = grid_base(&g.label, &l).unwrap_or("mean");
        label.get_or_insert(l);
        match series.iter_mut().find(|s| s.name == base) {
            Some(s) => s.points.push(point),
            None => series.push(linerate_report::SweepSeries {
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
    (points >= 2).then(|| linerate_report::Sweep {
        label: label.unwrap_or_default(),
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
