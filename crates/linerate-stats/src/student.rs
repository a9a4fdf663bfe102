//! Student's t distribution: the CDF and exact quantiles for any (also fractional) degrees of
//! freedom, and the confidence levels comparisons are stated at.
#![deny(missing_docs)]

use serde::{Deserialize, Serialize};

use crate::StatsError;
use crate::special::{normal_sf, regularized_incomplete_beta_complement};

/// P(T ≤ t) for Student's t with `df` degrees of freedom (df > 0).
///
/// Absolute error ~1e-15 up to 10⁵ degrees of freedom; beyond, the continued fraction of the
/// incomplete beta function loses digits (~1e-11 at 10⁷).
#[must_use]
pub fn t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return if t > 0.0 { 1.0 } else { 0.0 };
    }
    let half_tail = 0.5 * two_sided_tail(t.abs(), df);
    if t >= 0.0 { 1.0 - half_tail } else { half_tail }
}

/// P(|T| > t) for t ≥ 0: I_x(df/2, 1/2) with x = df / (df + t²).
fn two_sided_tail(t: f64, df: f64) -> f64 {
    // Both x = df/(df+t²) and 1−x = t²/(df+t²) are passed: at huge df, 1−x is tiny.
    let t2 = t * t;
    regularized_incomplete_beta_complement(df / (df + t2), t2 / (df + t2), 0.5 * df, 0.5)
}

/// The quantile function (inverse CDF) of Student's t: the `t` with P(T ≤ t) = `p`.
///
/// Below 10⁵ degrees of freedom: bracketing and bisection on [`t_cdf`], which rests on the
/// regularized incomplete beta function; from 10⁵ on, the Cornish–Fisher expansion around the
/// normal quantile. Relative error ~1e-14 throughout. Returns NaN for `p` outside (0, 1)
/// or `df` ≤ 0.
///
/// ```
/// use linerate_stats::student::t_quantile;
/// assert!((t_quantile(0.975, 10.0) - 2.228_138_851_986_274).abs() < 1e-12);
/// ```
#[must_use]
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if !(p > 0.0 && p < 1.0) || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if p == 0.5 {
        return 0.0;
    }
    // Solve on the upper half with the two-sided tail, then mirror.
    let upper = p > 0.5;
    let tail = if upper { 2.0 * (1.0 - p) } else { 2.0 * p };
    let t = upper_critical(tail, df);
    if upper { t } else { -t }
}

/// From this many degrees of freedom on, quantiles come from the Cornish–Fisher expansion
/// around the normal quantile (its first omitted term is below 1e-18 here), where the
/// incomplete beta continued fraction would lose digits.
const EXPANSION_MIN_DF: f64 = 1e5;

/// The t > 0 with P(|T| > t) = `tail`, for 0 < tail < 1.
fn upper_critical(tail: f64, df: f64) -> f64 {
    if df >= EXPANSION_MIN_DF {
        return cornish_fisher(normal_upper_quantile(0.5 * tail), df);
    }
    let mut lo = 0.0_f64;
    let mut hi = 1.0_f64;
    while two_sided_tail(hi, df) > tail {
        lo = hi;
        hi *= 2.0;
        if hi > 1e300 {
            return f64::INFINITY;
        }
    }
    // Bisection: the tail is monotone in t; stop when the bracket cannot shrink further.
    for _ in 0..2000 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if two_sided_tail(mid, df) > tail {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Student's t quantile from the normal quantile `z` for large `df` (Abramowitz & Stegun
/// 26.7.5, terms to ν⁻⁴).
fn cornish_fisher(z: f64, df: f64) -> f64 {
    let z2 = z * z;
    let g1 = z * (z2 + 1.0) / 4.0;
    let g2 = z * ((5.0 * z2 + 16.0) * z2 + 3.0) / 96.0;
    let g3 = z * (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) / 384.0;
    let g4 = z * ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) / 92160.0;
    let inv = 1.0 / df;
    z + inv * (g1 + inv * (g2 + inv * (g3 + inv * g4)))
}

/// The z > 0 with P(Z > z) = `q` for the standard normal, 0 < q < ½: Newton's method on the
/// upper tail, which is convex there, so iterates from 0 climb monotonically to the root.
fn normal_upper_quantile(q: f64) -> f64 {
    let density = |z: f64| (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let mut z = 0.0_f64;
    for _ in 0..200 {
        let step = (normal_sf(z) - q) / density(z);
        if !step.is_finite() {
            break;
        }
        z += step;
        if step.abs() <= 1e-16 * z.abs() {
            break;
        }
    }
    z
}

/// A two-sided confidence level in percent, 0 < level < 100.
///
/// ministat accepts only six levels (see [`Confidence::MINISTAT_LEVELS`] and
/// [`Confidence::ministat`]); linerate's own comparisons accept any level.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Confidence(f64);

impl Confidence {
    /// 80 %.
    pub const P80: Self = Self(80.0);
    /// 90 %.
    pub const P90: Self = Self(90.0);
    /// 95 %, ministat's default.
    pub const P95: Self = Self(95.0);
    /// 98 %.
    pub const P98: Self = Self(98.0);
    /// 99 %.
    pub const P99: Self = Self(99.0);
    /// 99.5 %.
    pub const P99_5: Self = Self(99.5);

    /// The levels ministat's `-c` accepts, in its table's column order.
    pub const MINISTAT_LEVELS: [Self; 6] = [
        Self::P80,
        Self::P90,
        Self::P95,
        Self::P98,
        Self::P99,
        Self::P99_5,
    ];

    /// Any level strictly between 0 and 100 percent.
    ///
    /// # Errors
    /// [`StatsError::Confidence`] when `percent` is not in (0, 100).
    pub fn new(percent: f64) -> Result<Self, StatsError> {
        if percent > 0.0 && percent < 100.0 {
            Ok(Self(percent))
        } else {
            Err(StatsError::Confidence(percent))
        }
    }

    /// One of ministat's six levels (80, 90, 95, 98, 99, 99.5), compared exactly as ministat
    /// does (so `95`, `95.0` and `9.5e1` are all 95).
    ///
    /// # Errors
    /// [`StatsError::MinistatConfidence`] for any other value.
    pub fn ministat(percent: f64) -> Result<Self, StatsError> {
        Self::MINISTAT_LEVELS
            .into_iter()
            .find(|level| level.0 == percent)
            .ok_or(StatsError::MinistatConfidence(percent))
    }

    /// The level in percent (95.0 for 95 %).
    #[must_use]
    pub fn percent(self) -> f64 {
        self.0
    }

    /// The column of ministat's t table for this level, if it is one of ministat's six.
    #[must_use]
    pub fn ministat_column(self) -> Option<usize> {
        Self::MINISTAT_LEVELS
            .iter()
            .position(|level| level.0 == self.0)
    }

    /// The exact two-sided critical value t* with P(|T| ≤ t*) = level, for `df` degrees of
    /// freedom.
    #[must_use]
    pub fn critical_t(self, df: f64) -> f64 {
        upper_critical(1.0 - self.0 / 100.0, df)
    }
}

impl Default for Confidence {
    fn default() -> Self {
        Self::P95
    }
}

impl TryFrom<f64> for Confidence {
    type Error = StatsError;
    fn try_from(percent: f64) -> Result<Self, StatsError> {
        Self::new(percent)
    }
}

impl From<Confidence> for f64 {
    fn from(confidence: Confidence) -> f64 {
        confidence.0
    }
}

impl std::fmt::Display for Confidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}%", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_match_published_values() {
        // Reference values to 12+ digits (R: qt(p, df)).
        let cases = [
            (0.975, 1.0, 12.706_204_736_174_7),
            (0.975, 2.0, 4.302_652_729_749_46),
            (0.975, 10.0, 2.228_138_851_986_27),
            (0.995, 30.0, 2.749_995_653_567_9),
            (0.9, 5.0, 1.475_884_048_824_33),
            (0.999, 1.0, 318.308_838_985_9),
            (0.975, 1e6, 1.959_966_356_814_107),
            (0.975, 99_999.0, 1.959_987_707_771_844),
            (0.9995, 2e5, 3.290_575_380_798_574),
            (0.975, 0.5, 164.557_673_480_488),
            (0.9995, 7.0, 5.407_882_520_861_83),
        ];
        for (p, df, expected) in cases {
            let got = t_quantile(p, df);
            assert!(
                (got - expected).abs() <= 1e-11 * expected,
                "qt({p}, {df}) = {got}, expected {expected}"
            );
            assert!((t_quantile(1.0 - p, df) + expected).abs() <= 1e-11 * expected);
        }
        assert_eq!(t_quantile(0.5, 7.0), 0.0);
        assert!(t_quantile(1.0, 7.0).is_nan());
        assert!(t_quantile(0.5, 0.0).is_nan());
    }

    #[test]
    fn cdf_inverts_quantile() {
        for df in [1.0, 2.5, 7.0, 40.0, 1234.0, 2e7] {
            for p in [0.6, 0.9, 0.95, 0.975, 0.99, 0.9995] {
                let t = t_quantile(p, df);
                // t_cdf itself (the continued fraction) loses digits above ~10⁵ df.
                let tolerance = if df < 1e5 { 1e-14 } else { 1e-10 };
                assert!((t_cdf(t, df) - p).abs() < tolerance, "df {df} p {p}");
            }
        }
    }

    #[test]
    fn huge_df_approaches_normal() {
        // qt(0.975, ν) ≈ z + (z³ + z)/(4ν).
        let z = 1.959_963_984_540_054;
        for df in [1e7, 1e9, 1e12] {
            let expected = z + (z * z * z + z) / (4.0 * df);
            let got = Confidence::P95.critical_t(df);
            // The continued fraction loses digits at huge df (documented on t_quantile).
            assert!(
                (got - expected).abs() < 1e-8,
                "df {df}: {got} vs {expected}"
            );
        }
    }

    #[test]
    fn confidence_levels() {
        assert_eq!(Confidence::ministat(95.0).ok(), Some(Confidence::P95));
        assert_eq!(Confidence::P99_5.ministat_column(), Some(5));
        assert!(Confidence::ministat(97.0).is_err());
        assert!(Confidence::new(100.0).is_err());
        assert!(Confidence::new(f64::NAN).is_err());
        assert_eq!(
            Confidence::new(97.5).map(Confidence::ministat_column).ok(),
            Some(None)
        );
    }
}
