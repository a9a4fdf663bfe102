//! The two-sample Kolmogorov–Smirnov test over distributions given as ascending
//! `(value, count)` steps, so it runs on streamed, binned data without the samples.
//!
//! Why Kolmogorov–Smirnov and not Mann–Whitney for response-time logs: Mann–Whitney asks
//! whether one sample tends to be larger than the other (a location shift); tuning often
//! changes the *shape* instead: the tail shrinks while the median stays put, or the share under
//! 100 ms jumps. KS compares the whole cumulative distributions (`D` is the largest vertical
//! gap between them) and so sees either. It needs only the sorted counts, which a histogram
//! already has.
//!
//! The p-value uses the asymptotic Kolmogorov distribution
//! `Q(λ) = 2 Σ_{k≥1} (-1)^(k-1) exp(-2k²λ²)` at `λ = (√nₑ + 0.12 + 0.11/√nₑ)·D` with
//! `nₑ = n₁n₂/(n₁+n₂)`: Stephens' (1970) small-sample correction, good to a few percent
//! from `nₑ ≈ 4` up. Ties (quantised log times) make the test conservative: the p-value is, if
//! anything, too large, so a "difference" it reports is real.

/// The outcome of a two-sample KS test.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct KsTest {
    /// Samples in the first distribution.
    pub n1: u64,
    /// Samples in the second distribution.
    pub n2: u64,
    /// The statistic: the largest `|F₁(x) - F₂(x)|`, in `[0, 1]`.
    pub d: f64,
    /// A value `x` where the largest gap occurs.
    pub at: u64,
    /// `F₂(at) - F₁(at)`: positive when the second distribution has more of its mass at or
    /// below `at` (it is faster there, for response times).
    pub signed_gap: f64,
    /// `λ = (√nₑ + 0.12 + 0.11/√nₑ)·D`.
    pub lambda: f64,
    /// The probability of a gap at least this large if both came from one distribution.
    pub p_value: f64,
}

impl KsTest {
    /// Whether the distributions differ at significance `alpha` (0.05 for 95 % confidence).
    pub fn differs(&self, alpha: f64) -> bool {
        self.p_value < alpha
    }
}

/// The complementary CDF of the Kolmogorov distribution, `P(K > λ)`.
pub fn kolmogorov_sf(lambda: f64) -> f64 {
    if lambda.is_nan() || lambda <= 0.0 {
        return 1.0;
    }
    if lambda < 1.18 {
        // The alternating series converges slowly here; use the Jacobi-theta form of the CDF,
        // P(K <= λ) = √(2π)/λ · Σ_{k≥1} exp(-(2k-1)²π²/(8λ²)).
        let t = std::f64::consts::PI * std::f64::consts::PI / (8.0 * lambda * lambda);
        let mut sum = 0.0;
        for k in 1..=20u32 {
            let odd = f64::from(2 * k - 1);
            let term = (-odd * odd * t).exp();
            sum += term;
            if term < 1e-17 * sum {
                break;
            }
        }
        let cdf = (2.0 * std::f64::consts::PI).sqrt() / lambda * sum;
        (1.0 - cdf).clamp(0.0, 1.0)
    } else {
        let mut sum = 0.0;
        let mut sign = 1.0;
        for k in 1..=100u32 {
            let kf = f64::from(k);
            let term = (-2.0 * kf * kf * lambda * lambda).exp();
            sum += sign * term;
            if term < 1e-17 * sum.abs() || term == 0.0 {
                break;
            }
            sign = -sign;
        }
        (2.0 * sum).clamp(0.0, 1.0)
    }
}

/// Runs the test on two distributions given as `(value, count)` steps in ascending value
/// order (duplicates of a value are allowed and add up). Returns `None` if either is empty.
pub fn two_sample<A, B>(first: A, second: B) -> Option<KsTest>
where
    A: IntoIterator<Item = (u64, u64)>,
    A::IntoIter: Clone,
    B: IntoIterator<Item = (u64, u64)>,
    B::IntoIter: Clone,
{
    let first = first.into_iter();
    let second = second.into_iter();
    let n1: u64 = first.clone().map(|(_, n)| n).sum();
    let n2: u64 = second.clone().map(|(_, n)| n).sum();
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let mut a = first.peekable();
    let mut b = second.peekable();
    let (mut c1, mut c2) = (0u64, 0u64);
    // The gap in units of 1/(n1·n2), in integers so that equal distributions give exactly 0.
    let (mut best, mut best_at, mut best_signed) = (0u128, 0u64, 0i128);
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(&(x, _)), Some(&(y, _))) => x.min(y),
            (Some(&(x, _)), None) => x,
            (None, Some(&(y, _))) => y,
            (None, None) => break,
        };
        while let Some(&(x, n)) = a.peek() {
            if x != next {
                break;
            }
            c1 += n;
            a.next();
        }
        while let Some(&(y, n)) = b.peek() {
            if y != next {
                break;
            }
            c2 += n;
            b.next();
        }
        let signed = i128::from(c2) * i128::from(n1) - i128::from(c1) * i128::from(n2);
        if signed.unsigned_abs() > best {
            best = signed.unsigned_abs();
            best_at = next;
            best_signed = signed;
        }
    }
    let scale = n1 as f64 * n2 as f64;
    let d = best as f64 / scale;
    let ne = scale / (n1 as f64 + n2 as f64);
    let sqrt_ne = ne.sqrt();
    let lambda = (sqrt_ne + 0.12 + 0.11 / sqrt_ne) * d;
    Some(KsTest {
        n1,
        n2,
        d,
        at: best_at,
        signed_gap: best_signed as f64 / scale,
        lambda,
        p_value: kolmogorov_sf(lambda),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ones(values: &[u64]) -> Vec<(u64, u64)> {
        values.iter().map(|&v| (v, 1)).collect()
    }

    #[test]
    fn kolmogorov_sf_matches_reference_values() {
        // P(K > λ), reference values of the Kolmogorov distribution (scipy's kstwobign.sf).
        let known = [
            (0.3, 0.999_990_694_198_665_5),
            (0.5, 0.963_945_243_664_875_1),
            (0.8, 0.544_142_411_574_198_1),
            (1.0, 0.269_999_671_677_354_56),
            (1.2238, 0.100_023_427_835_677_82),
            (1.3581, 0.049_999_630_431_667_4),
            (1.6276, 0.010_001_537_333_060_776),
            (1.9495, 0.000_999_801_979_025_898_1),
            (2.5, 7.453_306_344_157_342e-6),
        ];
        for (lambda, want) in known {
            let got = kolmogorov_sf(lambda);
            assert!(
                (got - want).abs() <= 1e-12 + 1e-9 * want,
                "λ {lambda}: {got} vs {want}"
            );
        }
        assert_eq!(kolmogorov_sf(0.0), 1.0);
        assert_eq!(kolmogorov_sf(-1.0), 1.0);
        assert!(kolmogorov_sf(40.0) >= 0.0);
        // both series agree where they meet
        let (below, above) = (kolmogorov_sf(1.18 - 1e-12), kolmogorov_sf(1.18));
        assert!((below - above).abs() < 1e-12);
    }

    #[test]
    fn separated_samples_have_d_one() {
        let t = two_sample(ones(&[1, 2, 3, 4, 5]), ones(&[6, 7, 8, 9, 10])).expect("non-empty");
        assert_eq!(t.d, 1.0);
        assert_eq!(t.at, 5);
        assert_eq!(t.signed_gap, -1.0);
        // nₑ = 2.5: λ = (√2.5 + 0.12 + 0.11/√2.5)·1
        let lambda = 2.5f64.sqrt() + 0.12 + 0.11 / 2.5f64.sqrt();
        assert!((t.lambda - lambda).abs() < 1e-12);
        assert!((t.p_value - kolmogorov_sf(lambda)).abs() < 1e-15);
        assert!(t.p_value < 0.01);
    }

    #[test]
    fn identical_samples_have_d_zero_and_p_one() {
        let a = vec![(10, 3), (20, 5), (30, 2)];
        let t = two_sample(a.clone(), a).expect("non-empty");
        assert_eq!(t.d, 0.0);
        assert_eq!(t.p_value, 1.0);
        assert!(!t.differs(0.05));
    }

    #[test]
    fn d_is_computed_after_all_ties_at_a_value() {
        // F1 jumps to 0.5 at 1; F2 jumps to 0.5 at 1 as well: no gap there, though a naive
        // walk that steps one sample at a time would see one.
        let t = two_sample(vec![(1, 2), (3, 2)], vec![(1, 1), (1, 1), (2, 2)]).expect("x");
        // F1: 1→.5, 2→.5, 3→1 ; F2: 1→.5, 2→1, 3→1: D = .5 at 2
        assert_eq!(t.d, 0.5);
        assert_eq!(t.at, 2);
        assert!(t.signed_gap > 0.0);
    }

    #[test]
    fn hand_computed_example() {
        // a = 0.61 0.29 0.06 0.59 -1.73 -0.74 0.51 -0.56 0.39 1.64 0.05 -0.06 0.64 -0.82 0.37
        //     1.77 1.09 -1.28 2.36 1.31 1.05 -0.32 -0.4 1.06 -2.47 (n = 25)
        // b = 2.20 1.66 1.38 0.20 0.36 0.00 0.96 1.56 0.44 1.50 -0.30 0.66 2.31 3.29 -0.27
        //     -0.37 0.38 0.70 0.52 -0.71 (n = 20), times 100 as integers, shifted by 300.
        let a = [
            61, 29, 6, 59, -173, -74, 51, -56, 39, 164, 5, -6, 64, -82, 37, 177, 109, -128, 236,
            131, 105, -32, -40, 106, -247,
        ];
        let b = [
            220, 166, 138, 20, 36, 0, 96, 156, 44, 150, -30, 66, 231, 329, -27, -37, 38, 70, 52,
            -71,
        ];
        let shift = |v: &[i64]| {
            let mut s: Vec<u64> = v.iter().map(|&x| (x + 300) as u64).collect();
            s.sort_unstable();
            ones(&s)
        };
        let t = two_sample(shift(&a), shift(&b)).expect("non-empty");
        // brute force over every point
        let (sa, sb) = (shift(&a), shift(&b));
        let mut d: f64 = 0.0;
        for &(x, _) in sa.iter().chain(&sb) {
            let fa = sa.iter().filter(|(v, _)| *v <= x).count() as f64 / 25.0;
            let fb = sb.iter().filter(|(v, _)| *v <= x).count() as f64 / 20.0;
            d = d.max((fa - fb).abs());
        }
        assert!((t.d - d).abs() < 1e-12);
        assert!((t.d - 0.23).abs() < 1e-12, "{}", t.d);
        let ne: f64 = 25.0 * 20.0 / 45.0;
        let lambda = (ne.sqrt() + 0.12 + 0.11 / ne.sqrt()) * 0.23;
        assert!((t.p_value - kolmogorov_sf(lambda)).abs() < 1e-15);
        // λ ≈ 0.80186: p = 0.54112 (scipy: kstwobign.sf(0.8018566666666668)); no difference
        assert!(
            (t.p_value - 0.541_124_553_721_674_7).abs() < 1e-9,
            "{}",
            t.p_value
        );
        assert!(!t.differs(0.05));
    }

    #[test]
    fn empty_input_has_no_test() {
        assert!(two_sample(Vec::new(), ones(&[1])).is_none());
    }
}
