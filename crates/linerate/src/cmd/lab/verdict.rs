//! A comparison engine verdict as one line for people, in the values' own unit:
//! `bdp-sized  +362.1 ± 3.2 Mbit/s  (+70.6 % ± 1.0 %)  proven at 95 %`.
//! `lab run` prints one per variant against the baseline (ministat's exact wording stays in
//! `stat`).

use linerate_stats::comparison::TestOutcome;
use linerate_units::human::{Digits, Prefix, number};
use linerate_units::{BitRate, PacketRate};

/// `value` and `error` in the unit `unit` (`bit/s` or `packet/s`), at the prefix that suits
/// the larger of the two: `+362.1 ± 3.2 Mbit/s`. `error` `None` prints the value alone.
fn signed_with_error(value: f64, error: Option<f64>, unit: &str) -> String {
    let scale = value.abs().max(error.unwrap_or(0.0));
    let prefix = Prefix::largest_si(scale);
    let sign = if value < 0.0 { "-" } else { "+" };
    let digits = Digits::Decimals(1);
    if unit == "transaction/s" {
        // No human unit of its own: the report's scale and label (`k transactions/s`).
        let (div, label) = linerate_report::Unit::TransactionRate.axis(scale);
        let n = |x: f64| number(x / div, digits);
        return match error {
            Some(e) => format!("{sign}{} ± {} {label}", n(value.abs()), n(e)),
            None => format!("{sign}{} {label}", n(value.abs())),
        };
    }
    let shown = |x: f64| match unit {
        "bit/s" => BitRate::from_bps_f64(x)
            .human()
            .prefix(prefix)
            .digits(digits),
        "packet/s" => PacketRate::from_pps(x)
            .human()
            .prefix(prefix)
            .digits(digits),
        _ => BitRate::from_bps_f64(x)
            .human()
            .prefix(prefix)
            .digits(digits),
    };
    let magnitude = number(value.abs() / prefix.factor(), digits);
    match error {
        Some(e) => format!("{sign}{magnitude} ± {}", shown(e)),
        None => format!("{sign}{}", shown(value.abs())),
    }
}

/// One line: the difference from the baseline with its confidence interval, the relative
/// difference, and whether it is proven at the confidence level. `label` is padded to
/// `width`.
pub fn line(label: &str, width: usize, outcome: &TestOutcome, unit: &str) -> String {
    let level = number(outcome.confidence().percent(), Digits::Max(1));
    let proven = if outcome.significant() {
        format!("proven at {level} %")
    } else {
        format!("no difference proven at {level} %")
    };
    let percent = |p: f64| {
        format!(
            "{}{}",
            if p < 0.0 { "-" } else { "+" },
            number(p.abs(), Digits::Decimals(1))
        )
    };
    match (outcome.error(), outcome.percent_error()) {
        (Some(e), Some(pe)) => format!(
            "{label:<width$}  {}  ({} % ± {} %)  {proven}",
            signed_with_error(outcome.difference(), Some(e), unit),
            percent(outcome.percent()),
            number(pe, Digits::Decimals(1)),
        ),
        // The rank test states a difference of medians, without an interval.
        _ => format!(
            "{label:<width$}  median {}  ({} %)  {proven}",
            signed_with_error(outcome.difference(), None, unit),
            percent(outcome.percent()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linerate_stats::{Confidence, Summary, compare};

    #[test]
    fn a_difference_reads_in_the_values_unit() {
        let base = Summary::of(&[512.0e6, 513.0e6, 511.0e6]);
        let other = Summary::of(&[874.0e6, 875.0e6, 873.5e6]);
        let c = compare(&base, &other, Confidence::P95);
        let text = line("bdp-sized", 9, &TestOutcome::StudentT(c), "bit/s");
        assert!(text.starts_with("bdp-sized  +362.2 ± "), "{text}");
        assert!(text.contains(" Mbit/s  (+70.7 % ± "), "{text}");
        assert!(text.ends_with("  proven at 95 %"), "{text}");
        let worse = compare(&other, &base, Confidence::P95);
        let text = line("64KiB", 9, &TestOutcome::StudentT(worse), "bit/s");
        assert!(text.starts_with("64KiB      -362.2 ± "), "{text}");
        let same = compare(
            &base,
            &Summary::of(&[512.5e6, 511.0e6, 513.0e6]),
            Confidence::P95,
        );
        let text = line("default", 7, &TestOutcome::StudentT(same), "bit/s");
        let rr = compare(
            &Summary::of(&[12_000.0, 12_100.0, 11_900.0]),
            &Summary::of(&[13_000.0, 13_050.0, 12_950.0]),
            Confidence::P95,
        );
        let rr = line("rr", 2, &TestOutcome::StudentT(rr), "transaction/s");
        assert!(
            rr.starts_with("rr  +1.0 ± 0.2 k transactions/s  (+8.3 % ± "),
            "{rr}"
        );
        assert!(text.ends_with("no difference proven at 95 %"), "{text}");
        assert!(
            !text.contains("e+0") && !text.contains("e-0"),
            "no float exponents: {text}"
        );
    }
}
