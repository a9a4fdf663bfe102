//! Bit rates: link speeds, throughput, pacing targets.

use std::fmt;
use std::str::FromStr;

use crate::decimal::split_prefix;
use crate::human::Human;
use crate::{ByteSize, ParseError};

const WHAT: &str = "a bit rate";
const EXPECTED: &str = "a bit rate such as 10G, 940Mbit/s, 1.5Gbps or 125MB/s";

/// A rate in bits per second. SI prefixes only (`10G` = 10 000 000 000 bit/s).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(transparent)]
pub struct BitRate(u64);

impl BitRate {
    /// Zero bits per second.
    pub const ZERO: BitRate = BitRate(0);

    /// A rate of `bits` bits per second.
    pub const fn from_bps(bits: u64) -> Self {
        BitRate(bits)
    }

    /// A rate of `n` kbit/s (10³).
    pub const fn from_kbps(n: u64) -> Self {
        BitRate(n * 1_000)
    }

    /// A rate of `n` Mbit/s (10⁶).
    pub const fn from_mbps(n: u64) -> Self {
        BitRate(n * 1_000_000)
    }

    /// A rate of `n` Gbit/s (10⁹).
    pub const fn from_gbps(n: u64) -> Self {
        BitRate(n * 1_000_000_000)
    }

    /// A rate of `bytes` bytes per second.
    pub const fn from_bytes_per_sec(bytes: u64) -> Self {
        BitRate(bytes.saturating_mul(8))
    }

    /// A rate from a (possibly fractional) number of bits per second, rounded to the nearest
    /// bit/s and clamped to the representable range; NaN becomes zero.
    pub fn from_bps_f64(bits: f64) -> Self {
        if bits.is_nan() || bits <= 0.0 {
            BitRate(0)
        } else if bits >= u64::MAX as f64 {
            BitRate(u64::MAX)
        } else {
            BitRate(bits.round() as u64)
        }
    }

    /// Bits per second.
    pub const fn bps(self) -> u64 {
        self.0
    }

    /// Bits per second as a float, for arithmetic.
    pub fn as_f64(self) -> f64 {
        self.0 as f64
    }

    /// Bytes per second as a float.
    pub fn bytes_per_sec(self) -> f64 {
        self.0 as f64 / 8.0
    }

    /// How many bytes flow in `seconds` at this rate (e.g. a bandwidth-delay product).
    pub fn bytes_in(self, seconds: f64) -> ByteSize {
        ByteSize::from_bytes_f64(self.bytes_per_sec() * seconds)
    }
}

impl BitRate {
    /// This rate for people: `9.41 Gbit/s` (see [`crate::human`] for the digits, prefix and
    /// exact forms).
    pub fn human(self) -> Human {
        Human::bits_per_sec(self.0)
    }

    /// This rate in bytes per second for people: `264 MB/s` (bus figures, disk-like rates).
    pub fn human_bytes_per_sec(self) -> Human {
        Human::bytes_per_sec_of_bits(self.0)
    }
}

/// Exact (`1.234567891 Gbit/s`); a precision rounds (`{:.2}` → `1.23 Gbit/s`).
impl fmt::Display for BitRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.human().exact(), f)
    }
}

impl FromStr for BitRate {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (input, number, unit) = crate::decimal::parse_quantity(s, WHAT, EXPECTED)?;
        let (prefix, base) = split_prefix(unit);
        let digits = &input[..input.len() - unit.len()].trim_end();
        let bits_per_unit: u128 = match base {
            "" | "b" | "bit" | "bits" | "b/s" | "bit/s" | "bits/s" | "bps" | "Bit" | "Bit/s"
            | "Bits/s" => 1,
            "B/s" | "byte/s" | "bytes/s" | "Byte/s" | "Bytes/s" => 8,
            "B" | "byte" | "bytes" | "Byte" | "Bytes" => {
                return Err(ParseError::Ambiguous {
                    input: input.to_owned(),
                    what: WHAT,
                    hint: format!(
                        "'{unit}' is a size in bytes, not a rate; write {digits}{p} for {digits} {p}bit/s, \
                         or {digits}{p}B/s for bytes per second",
                        p = prefix.text.trim_end_matches('i'),
                    ),
                });
            }
            "Bps" => {
                return Err(ParseError::Ambiguous {
                    input: input.to_owned(),
                    what: WHAT,
                    hint: format!(
                        "'Bps' is read as bits by some tools and bytes by others; write \
                         {digits}{p}bit/s for bits or {digits}{p}B/s for bytes per second",
                        p = prefix.text.trim_end_matches('i'),
                    ),
                });
            }
            "pps" | "p/s" | "fps" => {
                return Err(ParseError::UnknownUnit {
                    input: input.to_owned(),
                    unit: unit.to_owned(),
                    what: WHAT,
                    hint: "that is a packet rate; a bit rate is written 10G or 940Mbit/s".into(),
                });
            }
            _ => {
                return Err(ParseError::UnknownUnit {
                    input: input.to_owned(),
                    unit: unit.to_owned(),
                    what: WHAT,
                    hint: "expected bit/s, bps, b/s or B/s after an optional k, M, G or T".into(),
                });
            }
        };
        if prefix.binary {
            let si = prefix.text.trim_end_matches('i').to_uppercase();
            let mut hint =
                format!("bit rates use SI prefixes (k = 1000): write {digits}{si}{base}");
            // What the binary prefix meant, exactly, so that following the suggestion does not
            // change the value unnoticed (10Gibit/s is 7 % more than 10Gbit/s).
            let exact = number
                .scaled(prefix.factor * bits_per_unit, 1)
                .filter(|&(_, exact)| exact)
                .and_then(|(bits, _)| u64::try_from(bits).ok());
            if let Some(bits) = exact {
                let exact = BitRate(bits).to_string().replace(' ', "");
                hint = format!("{hint}, or {exact} for exactly {input}");
            }
            return Err(ParseError::UnknownUnit {
                input: input.to_owned(),
                unit: unit.to_owned(),
                what: WHAT,
                hint,
            });
        }
        let value = number
            .scaled(prefix.factor * bits_per_unit, 1)
            .map(|(v, _)| v)
            .and_then(|v| u64::try_from(v).ok())
            .ok_or_else(|| ParseError::OutOfRange {
                input: input.to_owned(),
                what: WHAT,
                reason: "larger than 18 Ebit/s",
            })?;
        Ok(BitRate(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn p(s: &str) -> u64 {
        s.parse::<BitRate>().unwrap().bps()
    }

    #[test]
    fn parses_the_forms_operators_write() {
        assert_eq!(p("10G"), 10_000_000_000);
        assert_eq!(p("10Gbit/s"), 10_000_000_000);
        assert_eq!(p("1.5Gbps"), 1_500_000_000);
        assert_eq!(p("940M"), 940_000_000);
        assert_eq!(p("100m"), 100_000_000);
        assert_eq!(p("64"), 64);
        assert_eq!(p("10 Gbit/s"), 10_000_000_000);
        assert_eq!(p("125MB/s"), 1_000_000_000);
        assert_eq!(p("1e9"), 1_000_000_000);
        assert_eq!(p("100kbit"), 100_000);
        assert_eq!(p("0"), 0);
    }

    #[test]
    fn refuses_bytes_and_ambiguity_with_a_suggestion() {
        let e = "10GB".parse::<BitRate>().unwrap_err().to_string();
        assert!(e.contains("write 10G for 10 Gbit/s"), "{e}");
        assert!(e.contains("10GB/s"), "{e}");
        let e = "10GBps".parse::<BitRate>().unwrap_err().to_string();
        assert!(e.contains("ambiguous"), "{e}");
        let e = "10Gibit/s".parse::<BitRate>().unwrap_err().to_string();
        assert!(e.contains("SI prefixes"), "{e}");
        // The suggestions say what the binary prefix meant, exactly.
        assert!(
            e.contains("write 10Gbit/s, or 10.73741824Gbit/s for exactly 10Gibit/s"),
            "{e}"
        );
        let e = "10GiB/s".parse::<BitRate>().unwrap_err().to_string();
        assert!(
            e.contains("write 10GB/s, or 85.89934592Gbit/s for exactly 10GiB/s"),
            "{e}"
        );
        assert_eq!(p("85.89934592Gbit/s"), 80 << 30);
        let e = "10Mpps".parse::<BitRate>().unwrap_err().to_string();
        assert!(e.contains("packet rate"), "{e}");
        assert!("fast".parse::<BitRate>().is_err());
        assert!("-1G".parse::<BitRate>().is_err());
        assert!("".parse::<BitRate>().is_err());
        assert!("99999999T".parse::<BitRate>().is_err());
    }

    #[test]
    fn prints_exactly_over_a_grid() {
        let grid = [
            (0, "0 bit/s"),
            (999, "999 bit/s"),
            (1_000, "1 kbit/s"),
            (1_500, "1.5 kbit/s"),
            (940_000_000, "940 Mbit/s"),
            (1_500_000_000, "1.5 Gbit/s"),
            (10_000_000_000, "10 Gbit/s"),
            (400_000_000_000, "400 Gbit/s"),
            (1_234_567_891, "1.234567891 Gbit/s"),
        ];
        for (bps, text) in grid {
            assert_eq!(BitRate::from_bps(bps).to_string(), text);
        }
        assert_eq!(
            format!("{:.2}", BitRate::from_bps(1_234_567_891)),
            "1.23 Gbit/s"
        );
        assert_eq!(format!("{:>12}", BitRate::from_gbps(1)), "    1 Gbit/s");
    }

    #[test]
    fn bdp_in_bytes() {
        assert_eq!(BitRate::from_gbps(1).bytes_in(0.040).bytes(), 5_000_000);
    }

    proptest! {
        #[test]
        fn print_parse_round_trip(bps in any::<u64>()) {
            let r = BitRate::from_bps(bps);
            prop_assert_eq!(r.to_string().parse::<BitRate>().unwrap(), r);
        }

        #[test]
        fn parser_never_panics(s in ".{0,24}") {
            let _ = s.parse::<BitRate>();
        }
    }
}
