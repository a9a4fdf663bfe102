//! Decimal times (`0.012`, `5123`, `.5`) in any unit, to whole nanoseconds: the one number
//! parser of every format. Exponents and signs are refused, not guessed.

use crate::reason::Reason;

/// Parses a non-negative decimal (`0.012`, `5123`, `1.5e-3` is refused) in units of `unit_ns`
/// nanoseconds, rounding to the nearest nanosecond.
pub fn parse_decimal(token: &[u8], unit_ns: u64) -> Result<u64, Reason> {
    match parse_decimal_fast(token, unit_ns) {
        Some(ns) => Ok(ns),
        None => parse_decimal_general(token, unit_ns),
    }
}

/// Any decimal in any unit, in 128-bit arithmetic, rounding to the nearest nanosecond.
fn parse_decimal_general(token: &[u8], unit_ns: u64) -> Result<u64, Reason> {
    let mut mantissa: u128 = 0;
    let mut scale: u128 = 1;
    let mut seen_dot = false;
    let mut digits = 0;
    for &b in token {
        match b {
            b'0'..=b'9' => {
                digits += 1;
                if digits > 30 {
                    return Err(Reason::TimeOutOfRange);
                }
                mantissa = mantissa * 10 + u128::from(b - b'0');
                if seen_dot {
                    scale *= 10;
                }
            }
            b'.' if !seen_dot => seen_dot = true,
            _ => return Err(Reason::NonNumericTime),
        }
    }
    if digits == 0 {
        return Err(Reason::NonNumericTime);
    }
    // u64 arithmetic for the common case; 128-bit division is a library call
    if let (Ok(m), Ok(sc)) = (u64::try_from(mantissa), u64::try_from(scale)) {
        if let Some(product) = m.checked_mul(unit_ns).and_then(|p| p.checked_add(sc / 2)) {
            return Ok(product / sc);
        }
    }
    let ns = (mantissa * u128::from(unit_ns) + scale / 2) / scale;
    u64::try_from(ns).map_err(|_| Reason::TimeOutOfRange)
}

const POW10: [u64; 10] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
];

/// The common case without a division: at most 18 digits, a unit that is a power of ten
/// (s, ms, µs, ns) and no more decimals than the unit has below it (`0.012` s = 12 000 000 ns).
#[inline]
fn parse_decimal_fast(token: &[u8], unit_ns: u64) -> Option<u64> {
    if token.is_empty() || token.len() > 18 {
        return None;
    }
    let unit_exp = POW10.iter().position(|&p| p == unit_ns)?;
    let mut value = 0u64;
    let mut dot = None;
    for (i, &b) in token.iter().enumerate() {
        match b {
            b'0'..=b'9' => value = value * 10 + u64::from(b - b'0'),
            b'.' if dot.is_none() => dot = Some(i),
            _ => return None,
        }
    }
    let digits = token.len() - usize::from(dot.is_some());
    if digits == 0 {
        return None;
    }
    let decimals = dot.map_or(0, |i| token.len() - i - 1);
    value.checked_mul(*POW10.get(unit_exp.checked_sub(decimals)?)?)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn decimals_in_any_unit() {
        let s = 1_000_000_000;
        assert_eq!(parse_decimal(b"0.012", s), Ok(12_000_000));
        assert_eq!(parse_decimal(b"12", s), Ok(12_000_000_000));
        assert_eq!(parse_decimal(b"1.", s), Ok(1_000_000_000));
        assert_eq!(parse_decimal(b".5", s), Ok(500_000_000));
        assert_eq!(parse_decimal(b"5123", 1_000), Ok(5_123_000));
        assert_eq!(parse_decimal(b"0.0000000004", s), Ok(0));
        assert_eq!(parse_decimal(b"0.0000000005", s), Ok(1));
        for bad in [&b"-"[..], b"", b".", b"1.2.3", b"-1", b"1e3", b"0x10"] {
            assert_eq!(
                parse_decimal(bad, s),
                Err(Reason::NonNumericTime),
                "{bad:?}"
            );
        }
        // Numbers, but more nanoseconds than a u64 holds: out of range, not clamped.
        for big in [
            &b"99999999999999999999"[..],
            b"18446744074",
            b"1234567890123456789012345678901",
        ] {
            assert_eq!(
                parse_decimal(big, s),
                Err(Reason::TimeOutOfRange),
                "{big:?}"
            );
        }
        assert_eq!(parse_decimal(b"18446744073.709551615", s), Ok(u64::MAX));
    }

    proptest! {
        #[test]
        fn fast_and_general_decimals_agree(int in 0u64..1_000_000, frac in 0u64..1_000_000_000, decimals in 0usize..10, unit in 0usize..10) {
            let unit_ns = POW10[unit];
            let text = if decimals == 0 {
                format!("{int}")
            } else {
                format!("{int}.{:0width$}", frac % POW10[decimals], width = decimals)
            };
            let general = parse_decimal_general(text.as_bytes(), unit_ns);
            if let Some(fast) = parse_decimal_fast(text.as_bytes(), unit_ns) {
                prop_assert_eq!(Ok(fast), general, "{}", text);
            }
            prop_assert_eq!(parse_decimal(text.as_bytes(), unit_ns), general);
        }
    }
}
