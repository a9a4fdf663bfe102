//! Whether values taken one after another are independent: the lag-1 autocorrelation and the
//! band it stays within for independent values.

/// The lag-1 autocorrelation coefficient r₁ = Σ(xᵢ−x̄)(xᵢ₊₁−x̄) / Σ(xᵢ−x̄)²; `None` below 3
/// values or when all values are equal.
#[must_use]
pub fn lag1_autocorrelation(values: &[f64]) -> Option<f64> {
    if values.len() < 3 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let denom: f64 = values.iter().map(|x| (x - mean) * (x - mean)).sum();
    if denom <= 0.0 || !denom.is_finite() {
        return None;
    }
    let num: f64 = values
        .windows(2)
        .map(|w| (w[0] - mean) * (w[1] - mean))
        .sum();
    Some(num / denom)
}

/// ±1.96/√n: r₁ of `n` independent values lies within this band 95 % of the time (r₁ is
/// approximately normal with variance 1/n). Beyond it the values are autocorrelated.
#[must_use]
pub fn independence_band(n: usize) -> f64 {
    1.96 / (n as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn autocorrelation_of_known_series() {
        // Alternating series: r1 = -1 * (n-1)/n for ±1.
        let alt = [1.0, -1.0, 1.0, -1.0, 1.0, -1.0];
        let r = lag1_autocorrelation(&alt).unwrap_or(f64::NAN);
        assert!((r - (-5.0 / 6.0)).abs() < 1e-12, "{r}");
        // A trend is strongly positively autocorrelated.
        let trend: Vec<f64> = (0..20).map(f64::from).collect();
        assert!(lag1_autocorrelation(&trend).unwrap_or(0.0) > 0.8);
        assert_eq!(lag1_autocorrelation(&[1.0, 1.0, 1.0]), None);
        assert_eq!(lag1_autocorrelation(&[1.0, 2.0]), None);
        assert_eq!(lag1_autocorrelation(&[1.0, f64::NAN, 2.0]), None);
    }

    #[test]
    fn band_shrinks_with_the_square_root_of_n() {
        assert!((independence_band(100) - 0.196).abs() < 1e-15);
        assert!((independence_band(4) - 0.98).abs() < 1e-15);
    }
}
