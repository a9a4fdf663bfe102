//! Which functions' (and subsystems') share of the CPU samples changed between two variants
//! of an experiment, with a confidence from the repetitions: each run's profile gives one
//! share per function, and the shares of the variant's runs are compared with the baseline's
//! by Student's t, as the runs' throughput is — never one profile against one profile.

use std::collections::{BTreeSet, HashMap};

use linerate_stats::{Confidence, Summary, compare};

use crate::fold::Folded;

/// Functions below this mean self share (in both groups) are not compared: a handful of
/// samples says nothing.
const MIN_SHARE: f64 = 0.005;

/// One function's (or subsystem's) share in the baseline and the variant, in percent of the
/// samples.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ShareChange {
    /// The function or subsystem.
    pub name: String,
    /// Its mean share over the baseline's runs.
    pub baseline_percent: f64,
    /// Its mean share over the variant's runs.
    pub variant_percent: f64,
    /// variant − baseline, percentage points.
    pub difference_points: f64,
    /// Half-width of the confidence interval of the difference, percentage points.
    pub error_points: f64,
    /// Whether the difference is proven at the confidence.
    pub significant: bool,
}

impl ShareChange {
    /// `grew`, `shrank`, or `no difference proven`.
    pub fn word(&self) -> &'static str {
        match (self.significant, self.difference_points > 0.0) {
            (true, true) => "grew",
            (true, false) => "shrank",
            (false, _) => "no difference proven",
        }
    }
}

/// Compares per-run shares (`name → share 0..1` per run) of `variant` with `baseline`; both
/// need two runs or more. The proven changes come first, largest first, then the others.
pub fn compare_shares(
    baseline: &[HashMap<String, f64>],
    variant: &[HashMap<String, f64>],
    confidence: Confidence,
    min_share: f64,
) -> Vec<ShareChange> {
    if baseline.len() < 2 || variant.len() < 2 {
        return Vec::new();
    }
    let mean = |runs: &[HashMap<String, f64>], name: &str| {
        runs.iter()
            .map(|r| r.get(name).copied().unwrap_or(0.0))
            .sum::<f64>()
            / runs.len() as f64
    };
    let names: BTreeSet<&String> = baseline
        .iter()
        .chain(variant)
        .flat_map(HashMap::keys)
        .collect();
    let mut out: Vec<ShareChange> = names
        .into_iter()
        .filter(|n| mean(baseline, n) >= min_share || mean(variant, n) >= min_share)
        .map(|name| {
            let values = |runs: &[HashMap<String, f64>]| -> Vec<f64> {
                runs.iter()
                    .map(|r| r.get(name).copied().unwrap_or(0.0) * 100.0)
                    .collect()
            };
            let (b, v) = (
                Summary::of(&values(baseline)),
                Summary::of(&values(variant)),
            );
            let c = compare(&b, &v, confidence);
            ShareChange {
                name: name.clone(),
                baseline_percent: round2(b.mean),
                variant_percent: round2(v.mean),
                difference_points: round2(c.difference),
                error_points: round2(c.error),
                significant: c.significant,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.significant.cmp(&a.significant).then(
            b.difference_points
                .abs()
                .total_cmp(&a.difference_points.abs())
                .then(a.name.cmp(&b.name)),
        )
    });
    out
}

/// Function self shares of each run's folded stacks, compared (see [`compare_shares`]).
pub fn compare_functions(
    baseline: &[Folded],
    variant: &[Folded],
    confidence: Confidence,
) -> Vec<ShareChange> {
    let shares = |runs: &[Folded]| -> Vec<HashMap<String, f64>> {
        runs.iter().map(Folded::self_shares).collect()
    };
    compare_shares(&shares(baseline), &shares(variant), confidence, MIN_SHARE)
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(a: u64, b: u64) -> Folded {
        Folded::parse(&format!("dut;nft_do_chain {a}\ndut;ip_forward {b}\n")).expect("valid")
    }

    #[test]
    fn a_share_that_grows_in_every_repetition_is_proven() {
        let base = [folded(1, 99), folded(2, 98), folded(1, 99)];
        let more = [folded(30, 70), folded(32, 68), folded(29, 71)];
        let changes = compare_functions(&base, &more, Confidence::P95);
        let nft = changes
            .iter()
            .find(|c| c.name == "nft_do_chain")
            .expect("listed");
        assert!(nft.significant, "{nft:?}");
        assert_eq!(nft.word(), "grew");
        assert!((nft.variant_percent - 30.33).abs() < 0.01, "{nft:?}");
        let fwd = changes
            .iter()
            .find(|c| c.name == "ip_forward")
            .expect("listed");
        assert_eq!(fwd.word(), "shrank");
    }

    #[test]
    fn noise_is_not_a_change_and_one_profile_is_not_evidence() {
        let base = [folded(10, 90), folded(20, 80)];
        let same = [folded(20, 80), folded(10, 90)];
        assert!(
            compare_functions(&base, &same, Confidence::P95)
                .iter()
                .all(|c| !c.significant)
        );
        assert!(compare_functions(&base[..1], &same, Confidence::P95).is_empty());
    }
}
