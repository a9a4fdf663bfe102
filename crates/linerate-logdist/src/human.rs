//! Times for people, as the reports and the comparison's verdict print them: three
//! significant digits in the unit that suits the value (`850 µs`, `12.3 ms`, `1.5 s`).

/// A time in nanoseconds with three significant digits: `850 µs`, `12.3 ms`, `1.5 s`.
pub fn time(ns: u64) -> String {
    time_s(ns as f64 / 1e9)
}

/// A time in seconds with three significant digits.
pub fn time_s(s: f64) -> String {
    let (value, unit) = if s == 0.0 {
        return "0".to_owned();
    } else if s.abs() >= 1.0 {
        (s, "s")
    } else if s.abs() >= 1e-3 {
        (s * 1e3, "ms")
    } else if s.abs() >= 1e-6 {
        (s * 1e6, "µs")
    } else {
        (s * 1e9, "ns")
    };
    let digits = if value.abs() >= 100.0 {
        0
    } else if value.abs() >= 10.0 {
        1
    } else {
        2
    };
    let text = format!("{value:.digits$}");
    // 1.50 → 1.5, 2.00 → 2: keep it short but never drop integer zeros
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    };
    format!("{text} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_have_three_significant_digits() {
        let cases = [
            (0, "0"),
            (1, "1 ns"),
            (850_000, "850 µs"),
            (12_345_678, "12.3 ms"),
            (100_000_000, "100 ms"),
            (1_500_000_000, "1.5 s"),
            (1_234_000_000, "1.23 s"),
            (2_000_000_000, "2 s"),
            (6_000_000_000, "6 s"),
            (123_400_000_000, "123 s"),
            (999, "999 ns"),
            (1_000, "1 µs"),
        ];
        for (ns, want) in cases {
            assert_eq!(time(ns), want, "{ns}");
        }
        assert_eq!(time_s(-0.0123), "-12.3 ms");
    }
}
