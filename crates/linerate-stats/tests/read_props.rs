//! Property tests of the ministat reader: it never panics on any bytes, and reads back
//! exactly the values written in any of the forms C's `strtod` accepts.

#![forbid(unsafe_code)]

use linerate_stats::read::{Format, parse_c_double, read_values};
use proptest::prelude::*;

fn format_strategy() -> impl Strategy<Value = Format> {
    (
        1_usize..5,
        prop::collection::vec(
            prop::sample::select(vec![b' ', b'\t', b',', b';', b'#', b'x']),
            1..3,
        ),
    )
        .prop_map(|(column, delimiters)| Format { column, delimiters })
}

/// C99 hex-float text of a finite f64: `-0x1.<13 hex digits>p<exp>` (or the subnormal form).
fn hex_float(value: f64) -> String {
    let bits = value.to_bits();
    let sign = if bits >> 63 == 1 { "-" } else { "" };
    let exponent = ((bits >> 52) & 0x7ff) as i64;
    let fraction = bits & ((1 << 52) - 1);
    if exponent == 0 {
        format!("{sign}0x0.{fraction:013x}p-1022")
    } else {
        format!("{sign}0x1.{fraction:013x}p{}", exponent - 1023)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn never_panics_on_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..600), format in format_strategy()) {
        let lines = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
        if let Ok(values) = read_values(&bytes[..], &format) {
            prop_assert!(values.len() <= lines);
        }
    }

    #[test]
    fn never_panics_on_number_like_text(text in "[-+ 0-9.eEpPxXa-fA-FinNtyI()_#\t\r\n]{0,80}") {
        let _ = read_values(text.as_bytes(), &Format::default());
        for token in text.split_whitespace() {
            let _ = parse_c_double(token.as_bytes());
        }
    }

    #[test]
    fn reads_back_every_written_value(values in prop::collection::vec(any::<f64>().prop_filter("finite", |v| v.is_finite()), 1..50), style in 0_u8..4) {
        let text: String = values
            .iter()
            .map(|v| match style {
                0 => format!("{v}\n"),
                1 => format!("{v:e}\r\n"),
                2 => format!("  {}\t# comment\n", hex_float(*v)),
                _ => format!("{v:?}\n"),
            })
            .collect();
        let got = read_values(text.as_bytes(), &Format::default()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(got.len(), values.len());
        for (got, want) in got.iter().zip(&values) {
            prop_assert_eq!(got.to_bits(), want.to_bits(), "{} -> {}", want, got);
        }
    }

    #[test]
    fn short_decimals_parse_exactly(mantissa in 0_u64..1_000_000_000_000_000, decimals in 0_usize..20, negative in any::<bool>()) {
        let digits = mantissa.to_string();
        let text = if decimals == 0 {
            digits
        } else if decimals >= digits.len() {
            format!("0.{}{digits}", "0".repeat(decimals - digits.len()))
        } else {
            format!("{}.{}", &digits[..digits.len() - decimals], &digits[digits.len() - decimals..])
        };
        let text = if negative { format!("-{text}") } else { text };
        let expected: f64 = text.parse().map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(parse_c_double(text.as_bytes()).map(f64::to_bits), Some(expected.to_bits()), "{}", text);
    }
}
