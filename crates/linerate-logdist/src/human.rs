//! Times for people, as the reports and the comparison's verdict print them: three
//! significant digits in the unit that suits the value (`850 µs`, `12.3 ms`, `1.5 s`).

/// A time in nanoseconds with three significant digits: `850 µs`, `12.3 ms`, `1.5 s`.
pub fn time(ns: u64) -> String {
    time_s(ns as f64 / 1e9)
}

/// A time in seconds with at most three significant digits, through the workspace's one
/// formatter (`linerate_units::human`); zero is `0`, a negative time keeps its sign.
pub fn time_s(s: f64) -> String {
    if s == 0.0 {
        return "0".to_owned();
    }
    let text = linerate_units::human::seconds(s.abs())
        .digits(linerate_units::human::Digits::MaxSignificant(3))
        .to_string();
    if s < 0.0 { format!("-{text}") } else { text }
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
