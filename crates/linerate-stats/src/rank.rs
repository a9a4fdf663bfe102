//! Rank tests: the Mann–Whitney U (Wilcoxon rank-sum) test, for data a t test describes
//! badly (skewed latencies, outliers). It compares whole distributions by rank, so it states
//! the difference of medians rather than of means.
//!
//! The p-value is exact (the U distribution counted by generating function) for small sets
//! without ties, and otherwise the normal approximation with tie and continuity corrections.
#![deny(missing_docs)]

use serde::{Deserialize, Serialize};

use crate::Sample;
use crate::printf::{format_f, format_g};
use crate::special::normal_sf;
use crate::student::Confidence;

/// Above this many values in total (or with any tie) the normal approximation is used.
pub const EXACT_MAX_TOTAL: usize = 100;

/// How the p-value was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PValueMethod {
    /// The exact distribution of U (small sets, no ties).
    Exact,
    /// The normal approximation with tie and continuity corrections.
    NormalApproximation,
}

/// The result of a two-sided Mann–Whitney U test of `other` against `baseline`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// The confidence level the verdict is stated at.
    pub confidence: Confidence,
    /// Size of the baseline set.
    pub n_baseline: usize,
    /// Size of the other set.
    pub n_other: usize,
    /// U of the other set: the number of (other, baseline) pairs where the other value is
    /// larger, ties counting ½. n_baseline·n_other/2 when the sets are alike.
    pub u: f64,
    /// The standardized statistic (with tie and continuity corrections).
    pub z: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// How `p_value` was computed.
    pub method: PValueMethod,
    /// median(other) − median(baseline).
    pub median_difference: f64,
    /// `median_difference` as a percentage of the baseline median.
    pub median_percent: f64,
    /// Whether p < 1 − confidence: a difference is proven at `confidence`.
    pub significant: bool,
}

/// Two-sided Mann–Whitney U test of `other` against `baseline`.
///
/// ```
/// use linerate_stats::{rank::mann_whitney, Confidence, Sample};
/// let base = Sample::new(vec![1.0, 2.0, 3.0, 4.0, 5.0]);
/// let other = Sample::new(vec![6.0, 7.0, 8.0, 9.0, 10.0]);
/// let test = mann_whitney(&base, &other, Confidence::P95);
/// assert_eq!(test.u, 25.0);
/// assert!((test.p_value - 2.0 / 252.0).abs() < 1e-15);
/// assert!(test.significant);
/// ```
#[must_use]
pub fn mann_whitney(baseline: &Sample, other: &Sample, confidence: Confidence) -> MannWhitney {
    let ranks = rank_sums(baseline.sorted(), other.sorted());
    let (n1, n2) = (baseline.len(), other.len());
    let (f1, f2) = (n1 as f64, n2 as f64);
    let total = f1 + f2;
    let u = ranks.other - f2 * (f2 + 1.0) / 2.0;
    let mean = f1 * f2 / 2.0;
    let tie_term = ranks.tie_cubes / (total * (total - 1.0));
    let variance = f1 * f2 / 12.0 * ((total + 1.0) - tie_term);
    let deviation = u - mean;
    let corrected = (deviation.abs() - 0.5).max(0.0).copysign(deviation);
    let z = corrected / variance.sqrt();
    let exact = !ranks.ties && n1 + n2 <= EXACT_MAX_TOTAL && n1 > 0 && n2 > 0;
    let (p_value, method) = if exact {
        (exact_two_sided_p(n1, n2, u), PValueMethod::Exact)
    } else {
        (
            (2.0 * normal_sf(z.abs())).min(1.0),
            PValueMethod::NormalApproximation,
        )
    };
    let (base_median, other_median) = (baseline.summary().median, other.summary().median);
    let median_difference = other_median - base_median;
    MannWhitney {
        confidence,
        n_baseline: n1,
        n_other: n2,
        u,
        z,
        p_value,
        method,
        median_difference,
        median_percent: median_difference * 100.0 / base_median,
        significant: p_value < 1.0 - confidence.percent() / 100.0,
    }
}

impl MannWhitney {
    /// The verdict in ministat's style (detail lines start with a tab):
    ///
    /// ```text
    /// Difference at 95.0% confidence
    ///     5 (median difference)
    ///     166.667% (of the baseline median)
    ///     (Mann-Whitney U = 25, p = 0.00793651, exact)
    /// ```
    /// or `No difference proven at 95.0% confidence` followed by the test line.
    #[must_use]
    pub fn verdict(&self) -> String {
        let level = format_f(self.confidence.percent(), 1);
        let method = match self.method {
            PValueMethod::Exact => "exact".to_owned(),
            PValueMethod::NormalApproximation => format!("z = {}", format_g(self.z, 6)),
        };
        let test = format!(
            "\t(Mann-Whitney U = {}, p = {}, {method})\n",
            format_g(self.u, 6),
            format_g(self.p_value, 6)
        );
        if self.significant {
            format!(
                "Difference at {level}% confidence\n\t{} (median difference)\n\t{}% (of the baseline median)\n{test}",
                format_g(self.median_difference, 6),
                format_g(self.median_percent, 6),
            )
        } else {
            format!("No difference proven at {level}% confidence\n{test}")
        }
    }
}

struct RankSums {
    /// Sum of the (mid-)ranks of the other set's values in the pooled sample.
    other: f64,
    /// Σ (t³ − t) over groups of t tied values.
    tie_cubes: f64,
    /// Whether any value occurs more than once in the pooled sample.
    ties: bool,
}

/// Merges two ascending slices, giving each run of equal values its mid-rank.
fn rank_sums(baseline: &[f64], other: &[f64]) -> RankSums {
    let (mut i, mut j) = (0, 0);
    let mut rank_before = 0.0_f64;
    let mut sums = RankSums {
        other: 0.0,
        tie_cubes: 0.0,
        ties: false,
    };
    while i < baseline.len() || j < other.len() {
        let value = match (baseline.get(i), other.get(j)) {
            (Some(&a), Some(&b)) => a.min(b),
            (Some(&a), None) => a,
            (None, Some(&b)) => b,
            (None, None) => break,
        };
        let start_i = i;
        while baseline.get(i).is_some_and(|&a| a == value) {
            i += 1;
        }
        let start_j = j;
        while other.get(j).is_some_and(|&b| b == value) {
            j += 1;
        }
        let in_other = (j - start_j) as f64;
        let group = (i - start_i) as f64 + in_other;
        if group == 0.0 {
            // NaN never equals itself: rank it alone so the loop advances.
            if i < baseline.len() && (j >= other.len() || baseline[i].is_nan()) {
                i += 1;
                rank_before += 1.0;
            } else {
                j += 1;
                rank_before += 1.0;
                sums.other += rank_before;
            }
            continue;
        }
        let mid_rank = rank_before + (group + 1.0) / 2.0;
        sums.other += mid_rank * in_other;
        if group > 1.0 {
            sums.ties = true;
            sums.tie_cubes += group * group * group - group;
        }
        rank_before += group;
    }
    sums
}

/// Exact two-sided p-value of U for sizes n1, n2 without ties: the counts of each U value are
/// the coefficients of the Gaussian binomial [n1+n2 choose n1](q).
fn exact_two_sided_p(n1: usize, n2: usize, u: f64) -> f64 {
    let counts = u_distribution(n1, n2);
    let total: f64 = counts.iter().map(|&c| c as f64).sum();
    // U is an integer here (no ties); round away float noise.
    let observed = u.round().max(0.0) as usize;
    let lower: f64 = counts.iter().take(observed + 1).map(|&c| c as f64).sum();
    let upper: f64 = counts.iter().skip(observed).map(|&c| c as f64).sum();
    (2.0 * lower.min(upper) / total).min(1.0)
}

/// Number of arrangements giving each U = 0 … n1·n2, as Π_{i=1}^{n1} (1 − q^{n2+i}) / (1 − qⁱ).
fn u_distribution(n1: usize, n2: usize) -> Vec<i128> {
    let degree = n1 * n2;
    let mut poly = vec![0_i128; degree + 1];
    poly[0] = 1;
    for i in 1..=n1 {
        // Multiply by (1 − q^(n2+i)) …
        let shift = n2 + i;
        for k in (shift..=degree).rev() {
            poly[k] -= poly[k - shift];
        }
        // … and divide by (1 − qⁱ) (exact: the quotient is a polynomial).
        for k in i..=degree {
            poly[k] += poly[k - i];
        }
    }
    poly
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(values: &[f64]) -> Sample {
        Sample::new(values.to_vec())
    }

    #[test]
    fn u_distribution_small_case() {
        // n1 = n2 = 2: U ∈ {0,1,2,3,4} with counts 1,1,2,1,1 (C(4,2) = 6 arrangements).
        assert_eq!(u_distribution(2, 2), vec![1, 1, 2, 1, 1]);
        let counts = u_distribution(10, 12);
        assert_eq!(counts.iter().sum::<i128>(), 646_646); // C(22, 10)
        assert!(counts.iter().all(|&c| c > 0));
    }

    #[test]
    fn exact_test_known_p() {
        // Sets interleaved: 1 3 5 | 2 4 6 → U(other) = 6 of 9, p = 0.7 (SciPy, method='exact').
        let test = mann_whitney(
            &sample(&[1.0, 3.0, 5.0]),
            &sample(&[2.0, 4.0, 6.0]),
            Confidence::P95,
        );
        assert_eq!(test.u, 6.0);
        assert_eq!(test.method, PValueMethod::Exact);
        assert!((test.p_value - 0.7).abs() < 1e-12);
        assert!(!test.significant);
        assert!(
            test.verdict()
                .starts_with("No difference proven at 95.0% confidence\n")
        );
    }

    #[test]
    fn ties_use_normal_approximation() {
        let base = sample(&[1.0, 2.0, 2.0, 3.0, 4.0, 4.0, 5.0]);
        let other = sample(&[4.0, 5.0, 5.0, 6.0, 7.0, 8.0, 8.0]);
        let test = mann_whitney(&base, &other, Confidence::P95);
        assert_eq!(test.method, PValueMethod::NormalApproximation);
        // SciPy: mannwhitneyu(other, base, use_continuity=True, method='asymptotic').
        assert_eq!(test.u, 46.0);
        assert!(
            (test.p_value - 0.006_662_414_542_754_305).abs() < 1e-12,
            "{}",
            test.p_value
        );
        assert!(test.significant);
        assert_eq!(test.median_difference, 3.0);
    }

    #[test]
    fn large_samples_agree_with_normal_theory() {
        // Identical sets: U = n²/2 exactly, z = 0, p = 1.
        let values: Vec<f64> = (0..1000).map(f64::from).collect();
        let test = mann_whitney(&sample(&values), &sample(&values), Confidence::P95);
        assert_eq!(test.u, 500_000.0);
        assert_eq!(test.p_value, 1.0);
    }

    #[test]
    fn nan_values_do_not_hang() {
        let test = mann_whitney(
            &sample(&[1.0, f64::NAN, 3.0]),
            &sample(&[f64::NAN, 2.0]),
            Confidence::P95,
        );
        assert!(test.u.is_finite());
    }
}
