//! A finished experiment's numbers: each variant's values and statistics, and its verdict
//! against the baseline from linerate-stats' comparison engine (one value per repetition,
//! Student's t).

use linerate_stats::comparison::{self, Group, Options, Repetition, SampleKind, Verdict};
use linerate_stats::{Confidence, Summary};

use super::{ExperimentResult, RunRecord, VariantResult};
use crate::experiment::Experiment;

/// How the lab compares variants: Student's t at `confidence` with exact quantiles, as
/// `compare` and `report` do ([`Options::student_t`]), so the same runs get the same digits.
#[must_use]
pub fn comparison_options(confidence: Confidence) -> Options {
    Options::student_t(confidence)
}

/// Each variant's successful values in schedule order, its failures, and its verdict
/// against the first variant.
pub(super) fn variants(
    exp: &Experiment,
    runs: &[RunRecord],
    confidence: Confidence,
) -> Vec<VariantResult> {
    let mut variants: Vec<VariantResult> = exp
        .variants
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let mine: Vec<&RunRecord> = runs.iter().filter(|r| r.slot.variant == i).collect();
            let values: Vec<f64> = mine
                .iter()
                .filter_map(|r| r.measure.as_ref().map(|m| m.value))
                .collect();
            VariantResult {
                name: v.name.clone(),
                unit: mine.iter().find_map(|r| r.measure.as_ref().map(|m| m.unit)),
                summary: Summary::of(&values),
                values,
                failed: mine.iter().filter(|r| r.measure.is_none()).count(),
                vs_baseline: None,
            }
        })
        .collect();
    let analysis = analyse(&variants, confidence);
    for (variant, verdict) in variants.iter_mut().skip(1).zip(analysis.verdicts) {
        variant.vs_baseline = comparable(&analysis.sets, &verdict).then_some(verdict);
    }
    variants
}

impl ExperimentResult {
    /// Variant `other` against variant `baseline` (indexes into `variants`) at the
    /// experiment's confidence; `None` with fewer than two values on either side or an index
    /// out of range.
    #[must_use]
    pub fn verdict(&self, baseline: usize, other: usize) -> Option<Verdict> {
        let analysis = analyse(&self.variants, self.confidence);
        let verdict = analysis.verdict(baseline, other)?;
        comparable(&analysis.sets, &verdict).then_some(verdict)
    }
}

fn analyse(variants: &[VariantResult], confidence: Confidence) -> comparison::Analysis {
    let groups: Vec<Group> = variants
        .iter()
        .map(|v| Group {
            label: v.name.clone(),
            repetitions: v.values.iter().map(|&x| Repetition::value(x)).collect(),
        })
        .collect();
    comparison::analyse(
        &groups,
        SampleKind::PerRepetition,
        &comparison_options(confidence),
    )
}

/// A t test needs two values on each side for a spread to pool.
fn comparable(sets: &[comparison::SetStats], verdict: &Verdict) -> bool {
    [verdict.baseline, verdict.other]
        .iter()
        .all(|&i| sets.get(i).is_some_and(|s| s.summary.n >= 2))
}

/// `vs_baseline` in JSON: the Student's t comparison, as before the engine existed.
pub(super) fn student_t<S: serde::Serializer>(
    verdict: &Option<Verdict>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(
        &verdict.as_ref().and_then(|v| v.outcome.student_t()),
        serializer,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variant(name: &str, values: &[f64]) -> VariantResult {
        VariantResult {
            name: name.into(),
            unit: Some("bit/s"),
            values: values.to_vec(),
            failed: 0,
            summary: Summary::of(values),
            vs_baseline: None,
        }
    }

    fn result(confidence: Confidence, variants: Vec<VariantResult>) -> ExperimentResult {
        ExperimentResult {
            schema: super::super::SCHEMA,
            experiment: "e".into(),
            lab: "x".into(),
            load: "iperf3",
            confidence,
            runs: vec![],
            variants,
            interrupted: None,
        }
    }

    #[test]
    fn verdicts_need_two_values_a_side_and_follow_the_confidence() {
        let r = result(
            Confidence::P95,
            vec![
                variant("base", &[100.0, 102.0, 101.0]),
                variant("one", &[150.0]),
                variant("more", &[104.0, 106.0, 105.0]),
            ],
        );
        assert!(r.verdict(0, 1).is_none());
        let Some(v) = r.verdict(0, 2) else {
            panic!("two sets of three values are comparable")
        };
        // Same values as `linerate_stats::compare` at 95 %, the lab's rule before the engine.
        let direct = linerate_stats::compare(
            &r.variants[0].summary,
            &r.variants[2].summary,
            Confidence::P95,
        );
        assert_eq!(v.outcome.student_t(), Some(&direct));
        assert!(v.outcome.significant());
        assert!(r.verdict(0, 3).is_none());
        // A difference of 4 with s = 1, n = 3 a side: t = 4/(1·√(2/3)) ≈ 4.90, proven at
        // 99 % (t* = 4.604, df 4) but not at 99.5 % (t* = 5.598).
        let strict = result(
            Confidence::new(99.5).unwrap_or_default(),
            r.variants.clone(),
        );
        assert!(
            strict
                .verdict(0, 2)
                .is_some_and(|v| !v.outcome.significant())
        );
        let p99 = result(Confidence::P99, r.variants.clone());
        assert!(p99.verdict(0, 2).is_some_and(|v| v.outcome.significant()));
    }

    #[test]
    fn json_keeps_the_student_t_comparison() {
        let mut r = result(
            Confidence::P95,
            vec![variant("base", &[1.0, 2.0]), variant("b", &[3.0, 4.0])],
        );
        r.variants[1].vs_baseline = r.verdict(0, 1);
        let json = serde_json::to_value(&r).unwrap_or_default();
        let expected = serde_json::to_value(linerate_stats::compare(
            &r.variants[0].summary,
            &r.variants[1].summary,
            Confidence::P95,
        ))
        .unwrap_or_default();
        assert_eq!(json["variants"][1]["vs_baseline"], expected);
        assert!(json["variants"][0]["vs_baseline"].is_null());
        assert_eq!(json["confidence"], 95.0);
    }
}
