//! ministat's two-sample t test: Student's t with pooled variance, the difference of means
//! with its confidence interval, and the same as a percentage of the baseline mean with
//! current FreeBSD's ratio-aware relative error.
//!
//! The critical t is the exact quantile ([`compare`], what linerate's comparisons use at any
//! confidence level) or ministat's printed table ([`compare_ministat`], only where the output
//! must be ministat's digit for digit: `linerate stat`).
#![deny(missing_docs)]

use serde::{Deserialize, Serialize};

use crate::StatsError;
use crate::printf::{format_f, format_g};
use crate::student::Confidence;
use crate::summary::Summary;
use crate::ttable::ministat_t;

/// Where the critical t value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TSource {
    /// The exact Student's t quantile for the degrees of freedom.
    Exact,
    /// ministat's printed table (3 decimals, df 1–100, then the normal row), so results print
    /// the digits ministat prints. Only for ministat's six levels.
    MinistatTable,
}

/// The outcome of comparing one data set with a baseline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The confidence level of the test.
    pub confidence: Confidence,
    /// Where `t` came from.
    pub t_source: TSource,
    /// Degrees of freedom, n₁ + n₂ − 2.
    pub df: f64,
    /// The two-sided critical t value at `confidence` for `df`.
    pub t: f64,
    /// Pooled standard deviation √(((n₁−1)V₁ + (n₂−1)V₂) / (n₁+n₂−2)).
    pub pooled_sd: f64,
    /// mean(other) − mean(baseline).
    pub difference: f64,
    /// Half-width of the confidence interval of `difference`: t · s · √(1/n₁ + 1/n₂).
    pub error: f64,
    /// `difference` as a percentage of the baseline mean.
    pub percent: f64,
    /// Half-width of the confidence interval of `percent` (current FreeBSD's formula, which
    /// accounts for the ratio of the means).
    pub percent_error: f64,
    /// Whether |difference| > error: a difference is proven at `confidence`.
    pub significant: bool,
}

/// Compares `other` with `baseline` at `confidence`, with the exact t quantile.
///
/// Both sets need at least 2 values (and together 3) for the result to be finite; with fewer,
/// the numbers are NaN and `significant` is false.
///
/// ```
/// use linerate_stats::{compare, Confidence, Summary};
/// let base = Summary::of(&[10.0, 11.0, 12.0, 10.5, 11.5]);
/// let new = Summary::of(&[13.0, 14.0, 12.5, 13.5, 14.5]);
/// let c = compare(&base, &new, Confidence::P95);
/// assert!(c.significant);
/// assert_eq!(c.difference, 2.5);
/// assert!(c.verdict().starts_with("Difference at 95.0% confidence\n"));
/// ```
#[must_use]
pub fn compare(baseline: &Summary, other: &Summary, confidence: Confidence) -> Comparison {
    let df = degrees_of_freedom(baseline, other);
    let t = if df > 0.0 {
        confidence.critical_t(df)
    } else {
        f64::NAN
    };
    build(baseline, other, confidence, TSource::Exact, df, t)
}

/// Compares as ministat does, with ministat's table of t values, so the printed digits match
/// ministat's.
///
/// # Errors
/// [`StatsError::MinistatConfidence`] when `confidence` is not one of ministat's six levels.
pub fn compare_ministat(
    baseline: &Summary,
    other: &Summary,
    confidence: Confidence,
) -> Result<Comparison, StatsError> {
    compare_with(baseline, other, confidence, TSource::MinistatTable)
}

/// Compares with the chosen source of t values.
///
/// # Errors
/// [`StatsError::MinistatConfidence`] for [`TSource::MinistatTable`] at a level ministat's
/// table lacks.
pub fn compare_with(
    baseline: &Summary,
    other: &Summary,
    confidence: Confidence,
    t_source: TSource,
) -> Result<Comparison, StatsError> {
    match t_source {
        TSource::Exact => Ok(compare(baseline, other, confidence)),
        TSource::MinistatTable => {
            let column = confidence
                .ministat_column()
                .ok_or(StatsError::MinistatConfidence(confidence.percent()))?;
            let dof = (baseline.n + other.n).saturating_sub(2);
            let t = ministat_t(column, dof);
            Ok(build(
                baseline,
                other,
                confidence,
                t_source,
                degrees_of_freedom(baseline, other),
                t,
            ))
        }
    }
}

fn degrees_of_freedom(baseline: &Summary, other: &Summary) -> f64 {
    (baseline.n + other.n) as f64 - 2.0
}

/// The arithmetic, in ministat's order of operations (so results agree to the last bit):
/// set 1 is `other`, set 2 the `baseline`.
fn build(
    baseline: &Summary,
    other: &Summary,
    confidence: Confidence,
    t_source: TSource,
    df: f64,
    t: f64,
) -> Comparison {
    let (n1, n2) = (other.n as f64, baseline.n as f64);
    let (v1, v2) = (other.variance, baseline.variance);
    let (a1, a2) = (other.mean, baseline.mean);
    let pooled_sd = (((n1 - 1.0) * v1 + (n2 - 1.0) * v2) / (n1 + n2 - 2.0)).sqrt();
    let s = pooled_sd * (1.0 / n1 + 1.0 / n2).sqrt();
    let difference = a1 - a2;
    let error = t * s;
    let mut relative = (n1 - 1.0) * v1 + (n2 - 1.0) * v2 * (a1 * a1) / (a2 * a2);
    relative *= (n1 + n2) / (n1 * n2 * (n1 + n2 - 2.0));
    let relative = t * relative.sqrt();
    Comparison {
        confidence,
        t_source,
        df,
        t,
        pooled_sd,
        difference,
        error,
        percent: difference * 100.0 / a2,
        percent_error: relative * 100.0 / a2,
        significant: difference.abs() > error,
    }
}

impl Comparison {
    /// The verdict in ministat's words, one or four lines, each ending in a newline (detail lines start with a tab):
    ///
    /// ```text
    /// Difference at 95.0% confidence
    ///     2.4 +/- 1.96363
    ///     2400% +/- 1963.63%
    ///     (Student's t, pooled s = 1)
    /// ```
    /// or `No difference proven at 95.0% confidence`.
    #[must_use]
    pub fn verdict(&self) -> String {
        let level = format_f(self.confidence.percent(), 1);
        if self.significant {
            format!(
                "Difference at {level}% confidence\n\t{} +/- {}\n\t{}% +/- {}%\n\t(Student's t, pooled s = {})\n",
                format_g(self.difference, 6),
                format_g(self.error, 6),
                format_g(self.percent, 6),
                format_g(self.percent_error, 6),
                format_g(self.pooled_sd, 6),
            )
        } else {
            format!("No difference proven at {level}% confidence\n")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(values: &[f64]) -> Summary {
        Summary::of(values)
    }

    #[test]
    fn matches_ministat_example() {
        // ministat prints for {1,2,3,4} against {0.5,0.5,0.5}... worked by hand:
        // n1=4 V1=5/3, n2=3 V2=0; s² = (3·5/3)/5 = 1; e = 2.571·1·√(1/4+1/3).
        let base = summary(&[0.5, 0.5, 0.5]);
        let other = summary(&[1.0, 2.0, 3.0, 4.0]);
        let c = compare_ministat(&base, &other, Confidence::P95).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.t, 2.571);
        assert_eq!(c.pooled_sd, 1.0);
        assert_eq!(c.difference, 2.0);
        assert!((c.error - 2.571 * (7.0_f64 / 12.0).sqrt()).abs() < 1e-15);
        assert!(c.significant);
        assert_eq!(
            c.verdict(),
            "Difference at 95.0% confidence\n\t2 +/- 1.96363\n\t400% +/- 392.727%\n\t(Student's t, pooled s = 1)\n"
        );
    }

    #[test]
    fn no_difference() {
        let base = summary(&[1.0, 2.0, 3.0]);
        let other = summary(&[1.5, 2.5, 3.5]);
        let c = compare(&base, &other, Confidence::P99_5);
        assert!(!c.significant);
        assert_eq!(c.verdict(), "No difference proven at 99.5% confidence\n");
        assert_eq!(c.t_source, TSource::Exact);
    }

    #[test]
    fn exact_and_table_agree_to_table_precision() {
        let base = summary(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        let other = summary(&[2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
        let exact = compare(&base, &other, Confidence::P95);
        let table =
            compare_ministat(&base, &other, Confidence::P95).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(exact.df, 9.0);
        assert!((exact.t - table.t).abs() < 0.0005);
        assert!(
            compare_ministat(&base, &other, Confidence::new(97.0).unwrap_or_default()).is_err()
        );
    }

    #[test]
    fn too_few_values_is_not_significant() {
        let c = compare(&summary(&[1.0]), &summary(&[5.0]), Confidence::P95);
        assert!(!c.significant);
        assert!(c.t.is_nan());
    }
}
