//! C `printf` number formatting (`%g`, `%.Ng`, `%W.Pg`, `%.Nf`) for output that must match
//! C programs such as ministat byte for byte.
//!
//! Rust's float formatting is exact (correctly rounded, ties to even), as glibc's is, so the
//! digits agree; this module only reproduces C's choice between fixed and exponent notation,
//! its trailing-zero removal and its `e+XX` exponent.
#![deny(missing_docs)]

/// Formats `value` like C's `%.{precision}g`.
///
/// ```
/// use linerate_stats::printf::format_g;
/// assert_eq!(format_g(2.4, 6), "2.4");
/// assert_eq!(format_g(1963.6257, 6), "1963.63");
/// assert_eq!(format_g(0.000012345, 6), "1.2345e-05");
/// assert_eq!(format_g(1e100, 6), "1e+100");
/// ```
#[must_use]
pub fn format_g(value: f64, precision: usize) -> String {
    let precision = precision.max(1);
    let sign = if value.is_sign_negative() { "-" } else { "" };
    if value.is_nan() {
        return format!("{sign}nan");
    }
    if value.is_infinite() {
        return format!("{sign}inf");
    }
    let magnitude = value.abs();
    let scientific = format!("{:.*e}", precision - 1, magnitude);
    let (mantissa, exponent) = split_exponent(&scientific);
    let precision_i = i64::try_from(precision).unwrap_or(i64::MAX);
    let body = if exponent < precision_i && exponent >= -4 {
        let decimals = usize::try_from(precision_i - 1 - exponent).unwrap_or(0);
        strip_zeros(&format!("{magnitude:.decimals$}")).to_owned()
    } else {
        let mantissa = strip_zeros(mantissa);
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{exp_sign}{:02}", exponent.unsigned_abs())
    };
    format!("{sign}{body}")
}

/// Formats `value` like C's `%{width}.{precision}g` (right-aligned, space padded).
#[must_use]
pub fn format_g_width(value: f64, width: usize, precision: usize) -> String {
    format!("{:>width$}", format_g(value, precision))
}

/// Formats `value` like C's `%.{decimals}f`.
#[must_use]
pub fn format_f(value: f64, decimals: usize) -> String {
    let sign = if value.is_sign_negative() { "-" } else { "" };
    if value.is_nan() {
        return format!("{sign}nan");
    }
    if value.is_infinite() {
        return format!("{sign}inf");
    }
    format!("{sign}{:.decimals$}", value.abs())
}

/// Splits Rust's `{:e}` output (`1.2345e-5`) into mantissa and exponent.
fn split_exponent(scientific: &str) -> (&str, i64) {
    match scientific.split_once('e') {
        Some((mantissa, exponent)) => (mantissa, exponent.parse().unwrap_or(0)),
        None => (scientific, 0),
    }
}

/// Removes trailing zeros after a decimal point, and the point itself if nothing follows.
fn strip_zeros(digits: &str) -> &str {
    if digits.contains('.') {
        digits.trim_end_matches('0').trim_end_matches('.')
    } else {
        digits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_matches_c_printf() {
        // Expected strings are what glibc's printf("%g") prints.
        let cases: &[(f64, usize, &str)] = &[
            (0.0, 6, "0"),
            (-0.0, 6, "-0"),
            (1.0, 6, "1"),
            (100_000.0, 6, "100000"),
            (1_000_000.0, 6, "1e+06"),
            (123_456.5, 6, "123456"),
            (123_457.5, 6, "123458"),
            (0.0001, 6, "0.0001"),
            (0.000_099_999_9, 6, "9.99999e-05"),
            (0.000_099_999_99, 6, "0.0001"),
            (999_999.5, 6, "1e+06"),
            (2.5, 1, "2"),
            (3.5, 1, "4"),
            (-1.5e-300, 6, "-1.5e-300"),
            (1e100, 6, "1e+100"),
            (f64::INFINITY, 6, "inf"),
            (f64::NEG_INFINITY, 6, "-inf"),
            (1.290_994_448_735_805_6, 8, "1.2909944"),
            (12_345_678.9, 8, "12345679"),
            (123_456_789.0, 8, "1.2345679e+08"),
            (0.1, 0, "0.1"),
        ];
        for &(value, precision, expected) in cases {
            assert_eq!(
                format_g(value, precision),
                expected,
                "{value} %.{precision}g"
            );
        }
    }

    #[test]
    fn width_and_fixed() {
        assert_eq!(format_g_width(2.5, 13, 8), "          2.5");
        assert_eq!(format_f(95.0, 1), "95.0");
        assert_eq!(format_f(99.5, 1), "99.5");
        assert_eq!(format_f(-0.0, 1), "-0.0");
    }
}
