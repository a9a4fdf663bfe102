//! Student's t distribution: the CDF and exact quantiles for any (also fractional) degrees of
//! freedom, and the confidence levels comparisons are stated at.
#![deny(missing_docs)]

use serde::{Deserialize, Serialize};

use crate::StatsError;
use crate::special::regularized_incomplete_beta_complement;

/// P(T ≤ t) for Student's t with `df` degrees of freedom (df > 0).
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
/// Found by bracketing and bisection on [`t_cdf`], which rests on the regularized incomplete
/// beta function: relative error ~1e-14 up to 10⁵ degrees of freedom, growing to ~1e-10 at 10⁷
/// and ~5e-9 at 10⁹ (where the quantile is within 1e-5 of the normal one anyway). Returns NaN for `p` outside (0, 1)
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

/// The t > 0 with P(|T| > t) = `tail`, for 0 < tail < 1.
fn upper_critical(tail: f64, df: f64) -> f64 {
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
            (0.975, 1e6, 1.959_966_356_813),
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
                // Above ~10⁵ df the continued fraction works near its turning point and loses
                // digits (still ~1e-11).
                let tolerance = if df < 1e5 { 1e-14 } else { 1e-10 };
                assert!((t_cdf(t, df) - p).abs() < tolerance, "df {df} p {p}");
            }
        }
    }

    #[test]
    fn huge_df_approaches_normal() {
        // qt(0.975, ν) ≈ z + (z³ + z)/(4ν).
        let z = 1.959_963_984_540_054;
        for df in [1e7, 1e9] {
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
