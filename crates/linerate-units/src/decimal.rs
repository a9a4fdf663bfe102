//! Exact decimal arithmetic for parsing ("1.5G" is exactly 1 500 000 000, not a float's guess)
//! and exact printing of a value divided by a power of 10 or of 1024.

/// A non-negative decimal number `mantissa × 10^exponent` as written by a user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Decimal {
    pub negative: bool,
    pub mantissa: u128,
    pub exponent: i32,
}

/// Significant digits kept from the input; beyond this, digits are dropped (they cannot matter
/// for a u64 result).
const MAX_DIGITS: u32 = 36;

impl Decimal {
    /// Splits `input` into a leading number and the unit text after it (spaces between them are
    /// allowed). Returns `None` when the text does not start with a number.
    pub fn split(input: &str) -> Option<(Decimal, &str)> {
        let bytes = input.as_bytes();
        let mut i = 0;
        let mut negative = false;
        if let Some(&c) = bytes.first() {
            if c == b'-' || c == b'+' {
                negative = c == b'-';
                i = 1;
            }
        }
        let mut mantissa: u128 = 0;
        let mut exponent: i32 = 0;
        let mut digits = 0u32;
        let mut seen_digit = false;
        let mut seen_dot = false;
        while i < bytes.len() {
            let c = bytes[i];
            if c.is_ascii_digit() {
                seen_digit = true;
                if mantissa == 0 && c == b'0' {
                    if seen_dot {
                        exponent -= 1;
                    }
                } else if digits < MAX_DIGITS {
                    mantissa = mantissa * 10 + u128::from(c - b'0');
                    digits += 1;
                    if seen_dot {
                        exponent -= 1;
                    }
                } else if !seen_dot {
                    exponent += 1;
                }
            } else if c == b'.' && !seen_dot {
                seen_dot = true;
            } else {
                break;
            }
            i += 1;
        }
        if !seen_digit {
            return None;
        }
        // Optional exponent: e/E followed by an optional sign and at least one digit.
        if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
            let mut j = i + 1;
            let mut exp_negative = false;
            if j < bytes.len() && (bytes[j] == b'-' || bytes[j] == b'+') {
                exp_negative = bytes[j] == b'-';
                j += 1;
            }
            let start = j;
            let mut e: i32 = 0;
            while j < bytes.len() && bytes[j].is_ascii_digit() {
                e = e
                    .saturating_mul(10)
                    .saturating_add(i32::from(bytes[j] - b'0'));
                j += 1;
            }
            if j > start {
                let e = e.min(10_000);
                exponent = exponent.saturating_add(if exp_negative { -e } else { e });
                i = j;
            }
        }
        let rest = input[i..].trim_start();
        Some((
            Decimal {
                negative,
                mantissa,
                exponent,
            },
            rest,
        ))
    }

    /// The value times `num / den`, as `(quotient, remainder_is_zero)`, or `None` on overflow.
    /// The quotient is rounded to the nearest integer (half away from zero).
    pub fn scaled(&self, num: u128, den: u128) -> Option<(u128, bool)> {
        if self.mantissa == 0 {
            return Some((0, true));
        }
        let (n, d) = if self.exponent >= 0 {
            let p = 10u128.checked_pow(self.exponent.unsigned_abs())?;
            (self.mantissa.checked_mul(p)?.checked_mul(num)?, den)
        } else {
            let Some(p) = 10u128.checked_pow(self.exponent.unsigned_abs()) else {
                // So many fractional digits that the value rounds to zero.
                return Some((0, false));
            };
            match den.checked_mul(p) {
                Some(d) => (self.mantissa.checked_mul(num)?, d),
                None => return Some((0, false)),
            }
        };
        let q = n / d;
        let r = n % d;
        let rounded = if r >= d - r { q + 1 } else { q };
        Some((rounded, r == 0))
    }

    /// The value as a float (for quantities stored as `f64`), correctly rounded: `0.3` is the
    /// double nearest 0.3, not `3 × 0.1` (0.30000000000000004).
    pub fn to_f64(self) -> f64 {
        self.times_power_of_ten(0)
    }

    /// The value times `10^shift` as a float, rounded once (a prefix such as M is a shift of 6).
    pub fn times_power_of_ten(self, shift: i32) -> f64 {
        let sign = if self.negative { "-" } else { "" };
        let exponent = i64::from(self.exponent) + i64::from(shift);
        // Rust's float parser rounds correctly; the text is always a valid float literal.
        format!("{sign}{}e{exponent}", self.mantissa)
            .parse()
            .unwrap_or(f64::NAN)
    }
}

/// The common first step of every quantity's parser: trims `s`, refuses empty, non-numeric
/// and negative input, and returns the trimmed input, its number and the unit text after it.
pub(crate) fn parse_quantity<'a>(
    s: &'a str,
    what: &'static str,
    expected: &'static str,
) -> Result<(&'a str, Decimal, &'a str), crate::ParseError> {
    let input = s.trim();
    if input.is_empty() {
        return Err(crate::ParseError::Empty { expected });
    }
    let Some((number, unit)) = Decimal::split(input) else {
        return Err(crate::ParseError::NotANumber {
            input: input.to_owned(),
            expected,
        });
    };
    if number.negative && number.mantissa != 0 {
        return Err(crate::ParseError::Negative {
            input: input.to_owned(),
            what,
        });
    }
    Ok((input, number, unit))
}

/// `value / divisor` printed exactly in decimal, trailing zeros trimmed. `divisor` must be a
/// power of 10 or a power of 2 so the expansion terminates.
pub(crate) fn exact_ratio(value: u128, divisor: u128) -> String {
    let mut out = (value / divisor).to_string();
    let mut rem = value % divisor;
    if rem != 0 {
        out.push('.');
        // Terminates: divisor = 2^a·5^b, so at most max(a, b) digits.
        while rem != 0 {
            rem *= 10;
            let digit = rem / divisor;
            out.push(char::from(b'0' + digit as u8));
            rem %= divisor;
        }
    }
    out
}

/// Writes `text` honouring the formatter's width, fill and alignment (default: left), but not
/// its precision: for quantities the precision has already rounded the number.
pub(crate) fn pad(f: &mut std::fmt::Formatter<'_>, text: &str) -> std::fmt::Result {
    use std::fmt::{Alignment, Write};
    let len = text.chars().count();
    let width = f.width().unwrap_or(0);
    if len >= width {
        return f.write_str(text);
    }
    let fill = width - len;
    let (before, after) = match f.align() {
        Some(Alignment::Right) => (fill, 0),
        Some(Alignment::Center) => (fill / 2, fill - fill / 2),
        _ => (0, fill),
    };
    let c = f.fill();
    for _ in 0..before {
        f.write_char(c)?;
    }
    f.write_str(text)?;
    for _ in 0..after {
        f.write_char(c)?;
    }
    Ok(())
}

/// Moves the decimal point of a plain decimal string (no exponent) `places` to the left:
/// `shift_left("1488095.238", 6)` is `"1.488095238"`. Exact, unlike dividing a float.
pub(crate) fn shift_left(plain: &str, places: usize) -> String {
    let (int, frac) = plain.split_once('.').unwrap_or((plain, ""));
    let int = int.trim_start_matches('0');
    let mut digits = String::with_capacity(int.len() + frac.len() + places);
    if int.len() <= places {
        digits.push_str("0.");
        digits.extend(std::iter::repeat_n('0', places - int.len()));
        digits.push_str(int);
    } else {
        digits.push_str(&int[..int.len() - places]);
        digits.push('.');
        digits.push_str(&int[int.len() - places..]);
    }
    digits.push_str(frac);
    let trimmed = digits.trim_end_matches('0').trim_end_matches('.');
    if trimmed.is_empty() {
        "0".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// A unit prefix: its text and the factor it stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Prefix {
    pub text: &'static str,
    pub factor: u128,
    pub binary: bool,
}

pub(crate) const SI: [Prefix; 5] = [
    Prefix {
        text: "",
        factor: 1,
        binary: false,
    },
    Prefix {
        text: "k",
        factor: 1_000,
        binary: false,
    },
    Prefix {
        text: "M",
        factor: 1_000_000,
        binary: false,
    },
    Prefix {
        text: "G",
        factor: 1_000_000_000,
        binary: false,
    },
    Prefix {
        text: "T",
        factor: 1_000_000_000_000,
        binary: false,
    },
];

pub(crate) const IEC: [Prefix; 4] = [
    Prefix {
        text: "Ki",
        factor: 1 << 10,
        binary: true,
    },
    Prefix {
        text: "Mi",
        factor: 1 << 20,
        binary: true,
    },
    Prefix {
        text: "Gi",
        factor: 1 << 30,
        binary: true,
    },
    Prefix {
        text: "Ti",
        factor: 1 << 40,
        binary: true,
    },
];

/// Splits a unit such as `Gbit/s` or `KiB` into its prefix and the base unit after it.
/// Accepts `k`/`K`, `M`/`m`, `G`/`g`, `T`/`t` (SI) and `Ki`, `Mi`, `Gi`, `Ti` (IEC, also with a
/// lower-case first letter). The empty prefix is returned when none matches.
pub(crate) fn split_prefix(unit: &str) -> (Prefix, &str) {
    let mut chars = unit.chars();
    let Some(first) = chars.next() else {
        return (SI[0], unit);
    };
    let si = match first {
        'k' | 'K' => Some(SI[1]),
        'M' | 'm' => Some(SI[2]),
        'G' | 'g' => Some(SI[3]),
        'T' | 't' => Some(SI[4]),
        _ => None,
    };
    let Some(si) = si else {
        return (SI[0], unit);
    };
    let rest = &unit[1..];
    if let Some(after_i) = rest.strip_prefix('i') {
        let iec = IEC.iter().find(|p| p.factor == binary_of(si.factor));
        if let Some(iec) = iec {
            return (*iec, after_i);
        }
    }
    (si, rest)
}

fn binary_of(si_factor: u128) -> u128 {
    match si_factor {
        1_000 => 1 << 10,
        1_000_000 => 1 << 20,
        1_000_000_000 => 1 << 30,
        _ => 1 << 40,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_numbers_and_units() {
        let (d, u) = Decimal::split("1.5Gbit/s").unwrap();
        assert_eq!((d.mantissa, d.exponent, u), (15, -1, "Gbit/s"));
        let (d, u) = Decimal::split("40 ms").unwrap();
        assert_eq!((d.mantissa, d.exponent, u), (40, 0, "ms"));
        let (d, u) = Decimal::split("1e3").unwrap();
        assert_eq!((d.mantissa, d.exponent, u), (1, 3, ""));
        let (d, _) = Decimal::split("0.000250").unwrap();
        assert_eq!(d.scaled(1_000_000, 1).unwrap(), (250, true));
        assert!(Decimal::split("G").is_none());
        assert!(Decimal::split(".").is_none());
        assert!(Decimal::split("").is_none());
    }

    #[test]
    fn scaling_rounds_and_reports_exactness() {
        let (d, _) = Decimal::split("1.5").unwrap();
        assert_eq!(d.scaled(1000, 1), Some((1500, true)));
        let (d, _) = Decimal::split("0.3").unwrap();
        assert_eq!(d.scaled(1024, 1), Some((307, false)));
        let (d, _) = Decimal::split("99999999999999999999999999999").unwrap();
        assert_eq!(d.scaled(1_000_000_000_000, 1), None);
    }

    #[test]
    fn floats_are_correctly_rounded() {
        let f = |text: &str| Decimal::split(text).map(|(d, _)| d.to_f64());
        assert_eq!(f("0.3"), Some(0.3));
        assert_eq!(f("14.88"), Some(14.88));
        assert_eq!(f("1e-20"), Some(1e-20));
        assert_eq!(
            f("123456789012345678901234567890"),
            Some(1.2345678901234568e29)
        );
        let m = Decimal::split("14.88").map(|(d, _)| d.times_power_of_ten(6));
        assert_eq!(m, Some(14_880_000.0));
    }

    #[test]
    fn exact_ratios_terminate() {
        assert_eq!(exact_ratio(1_500, 1_000), "1.5");
        assert_eq!(exact_ratio(1_536, 1_024), "1.5");
        assert_eq!(exact_ratio(1, 1_024), "0.0009765625");
        assert_eq!(exact_ratio(7, 1), "7");
    }

    #[test]
    fn shifts_decimal_points() {
        assert_eq!(shift_left("1488095.238", 6), "1.488095238");
        assert_eq!(shift_left("81274", 3), "81.274");
        assert_eq!(shift_left("5", 3), "0.005");
        assert_eq!(shift_left("1000", 3), "1");
        assert_eq!(shift_left("0", 0), "0");
    }

    #[test]
    fn prefixes() {
        assert_eq!(split_prefix("Gbit/s").0.factor, 1_000_000_000);
        assert_eq!(split_prefix("KiB"), (IEC[0], "B"));
        assert_eq!(split_prefix("MiB").0.factor, 1 << 20);
        assert_eq!(split_prefix("bps").0.factor, 1);
        assert_eq!(split_prefix("mbit").0.factor, 1_000_000);
    }
}
