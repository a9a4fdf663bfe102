//! The comparison as a document (`linerate compare --json`, schema `linerate.compare/1`),
//! values in the metric's base unit (`unit`: `bit/s`, `packet/s` or `transaction/s`).

use linerate_stats::comparison::{self, TestOutcome};

use super::Outcome;

/// The JSON document of a comparison.
pub fn document(outcome: &Outcome) -> serde_json::Value {
    let finite = |v: f64| v.is_finite().then_some(v);
    let sets: Vec<serde_json::Value> = outcome
        .analysis
        .sets
        .iter()
        .zip(outcome.runs.iter().zip(&outcome.sweep))
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
        let sets = &outcome.analysis.sets;
        (sets[v.baseline].label.clone(), sets[v.other].label.clone())
    };
    let comparisons: Vec<serde_json::Value> = outcome
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
        "samples": outcome.kind(),
        "samples_description": outcome.samples(),
        "confidence": outcome.confidence().percent(),
        "metric": outcome.metric.quantity(),
        "unit": outcome.metric.unit().name(),
        "sets": sets,
        "comparisons": comparisons,
        "warnings": outcome.warnings(),
    })
}
