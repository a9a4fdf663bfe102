//! Descriptive statistics of one data set, computed as current FreeBSD ministat does.
#![deny(missing_docs)]

use serde::{Deserialize, Serialize};

/// n, min, max, median, mean, variance and standard deviation of a data set.
///
/// - mean: the input-order sum divided by n;
/// - variance: the sample variance (n − 1), two passes (mean first, then the squared
///   deviations summed over the sorted values): never negative, and 0 for equal values
///   whenever their mean is exact (a one-pass formula can go negative, and Debian's 2015
///   ministat then prints `-nan`);
/// - median: the middle value, or for even n the mean of the two middle values (current
///   FreeBSD; Debian's 2015 ministat takes the upper one).
///
/// With n = 0 every statistic is NaN; with n = 1 the variance and stddev are NaN.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Median.
    pub median: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample variance (divides by n − 1).
    pub variance: f64,
    /// Sample standard deviation, √variance.
    pub stddev: f64,
}

impl Summary {
    /// The statistics of `values` in any order (copies and sorts them; for large sets build a
    /// [`crate::Sample`] instead, which sorts in place).
    ///
    /// ```
    /// use linerate_stats::Summary;
    /// let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]);
    /// assert_eq!((s.n, s.min, s.max, s.median, s.mean), (4, 1.0, 4.0, 2.5, 2.5));
    /// assert!((s.stddev - 1.290_994_448_735_805_6).abs() < 1e-15);
    /// ```
    #[must_use]
    pub fn of(values: &[f64]) -> Self {
        let sum = values.iter().sum();
        let mut sorted = values.to_vec();
        sorted.sort_unstable_by(f64::total_cmp);
        Self::of_sorted(&sorted, sum)
    }

    /// The statistics of ascending `sorted` values whose input-order sum is `sum`.
    #[must_use]
    pub fn of_sorted(sorted: &[f64], sum: f64) -> Self {
        let n = sorted.len();
        let (Some(&min), Some(&max)) = (sorted.first(), sorted.last()) else {
            return Self {
                n: 0,
                min: f64::NAN,
                max: f64::NAN,
                median: f64::NAN,
                mean: f64::NAN,
                variance: f64::NAN,
                stddev: f64::NAN,
            };
        };
        let count = n as f64;
        let mean = sum / count;
        let middle = n / 2;
        let median = if n % 2 == 0 {
            (sorted[middle] + sorted[middle - 1]) / 2.0
        } else {
            sorted[middle]
        };
        let squares: f64 = sorted.iter().map(|&x| (x - mean) * (x - mean)).sum();
        let variance = squares / (count - 1.0);
        Self {
            n,
            min,
            max,
            median,
            mean,
            variance,
            stddev: variance.sqrt(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_have_zero_spread() {
        let s = Summary::of(&[2.5, 2.5, 2.5, 2.5]);
        assert_eq!(s.variance, 0.0);
        assert_eq!(s.median, 2.5);
        // The mean of three 0.1s rounds to 0.10000000000000002, so two passes leave a tiny
        // positive variance (as FreeBSD prints); a one-pass variance goes negative (and
        // Debian's 2015 ministat prints -nan).
        let s = Summary::of(&[0.1, 0.1, 0.1]);
        assert!(s.variance >= 0.0 && s.stddev < 1e-16);
    }

    #[test]
    fn odd_and_even_median() {
        assert_eq!(Summary::of(&[5.0, 1.0, 3.0]).median, 3.0);
        assert_eq!(Summary::of(&[5.0, 1.0, 3.0, 4.0]).median, 3.5);
    }

    #[test]
    fn known_variance() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sum of squares 32, sample variance 32/7.
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(s.mean, 5.0);
        assert!((s.variance - 32.0 / 7.0).abs() < 1e-15);
    }

    #[test]
    fn empty_and_single() {
        let empty = Summary::of(&[]);
        assert_eq!(empty.n, 0);
        assert!(empty.mean.is_nan());
        let one = Summary::of(&[2.0]);
        assert_eq!(one.mean, 2.0);
        assert!(one.stddev.is_nan());
    }
}
