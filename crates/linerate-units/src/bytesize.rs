//! Byte sizes: buffers, windows, frames, memory.

use std::fmt;
use std::str::FromStr;

use crate::decimal::split_prefix;
use crate::human::{Family, Human};
use crate::{BitRate, ParseError};

const WHAT: &str = "a size";
const EXPECTED: &str = "a size in bytes such as 64, 1500B, 256K, 16MiB or 4KiB";

/// A number of bytes. `K` = 1000, `Ki` = 1024 (see the crate docs).
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
pub struct ByteSize(u64);

impl ByteSize {
    /// Zero bytes.
    pub const ZERO: ByteSize = ByteSize(0);

    /// `n` bytes.
    pub const fn from_bytes(n: u64) -> Self {
        ByteSize(n)
    }

    /// `n` KiB (2¹⁰ bytes).
    pub const fn from_kib(n: u64) -> Self {
        ByteSize(n << 10)
    }

    /// `n` MiB (2²⁰ bytes).
    pub const fn from_mib(n: u64) -> Self {
        ByteSize(n << 20)
    }

    /// `n` GiB (2³⁰ bytes).
    pub const fn from_gib(n: u64) -> Self {
        ByteSize(n << 30)
    }

    /// A size from a fractional byte count, rounded up to a whole byte (a buffer that must hold
    /// 1.2 bytes needs 2); NaN and negatives become zero.
    pub fn from_bytes_f64(n: f64) -> Self {
        if n.is_nan() || n <= 0.0 {
            ByteSize(0)
        } else if n >= u64::MAX as f64 {
            ByteSize(u64::MAX)
        } else {
            ByteSize(n.ceil() as u64)
        }
    }

    /// The number of bytes.
    pub const fn bytes(self) -> u64 {
        self.0
    }

    /// The number of bits.
    pub const fn bits(self) -> u128 {
        self.0 as u128 * 8
    }

    /// Bytes as a float.
    pub fn as_f64(self) -> f64 {
        self.0 as f64
    }

    /// The rate at which this many bytes are moved in `seconds`.
    pub fn per_seconds(self, seconds: f64) -> BitRate {
        if seconds <= 0.0 {
            return BitRate::ZERO;
        }
        BitRate::from_bps_f64(self.0 as f64 * 8.0 / seconds)
    }
}

impl ByteSize {
    /// This size for people: `64 KiB`, `10 GB`, `1.5 kB` (see [`crate::human`]; the prefix
    /// family follows the rule in the crate docs unless one is chosen).
    pub fn human(self) -> Human {
        Human::bytes(self.0)
    }
}

/// Exact, in the family that prints it most simply (`16 MiB`, `10 GB`, `1.5 kB`). A precision
/// rounds, and above 1 KiB in binary prefixes, as memory is read (`{:.1}` → `31.3 GiB`).
impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let human = self.human().exact();
        let human = if f.precision().is_some() && self.0 >= 1024 {
            human.family(Family::Binary)
        } else {
            human
        };
        fmt::Display::fmt(&human, f)
    }
}

impl FromStr for ByteSize {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (input, number, unit) = crate::decimal::parse_quantity(s, WHAT, EXPECTED)?;
        let (prefix, base) = split_prefix(unit);
        let digits = input[..input.len() - unit.len()].trim_end();
        match base {
            "" | "B" | "byte" | "bytes" | "Byte" | "Bytes" => {}
            "b" | "bit" | "bits" | "Bit" | "Bits" => {
                return Err(ParseError::UnknownUnit {
                    input: input.to_owned(),
                    unit: unit.to_owned(),
                    what: WHAT,
                    hint: format!(
                        "sizes are in bytes ('b' is a bit, 'B' a byte): write {digits}{}B",
                        prefix.text
                    ),
                });
            }
            u if u.ends_with("/s") || u.ends_with("ps") => {
                return Err(ParseError::UnknownUnit {
                    input: input.to_owned(),
                    unit: unit.to_owned(),
                    what: WHAT,
                    hint: "that is a rate; a size is written 64, 256K, 16MiB".into(),
                });
            }
            _ => {
                return Err(ParseError::UnknownUnit {
                    input: input.to_owned(),
                    unit: unit.to_owned(),
                    what: WHAT,
                    hint:
                        "expected B after an optional k, M, G, T (×1000) or Ki, Mi, Gi, Ti (×1024)"
                            .into(),
                });
            }
        }
        let (value, exact) =
            number
                .scaled(prefix.factor, 1)
                .ok_or_else(|| ParseError::OutOfRange {
                    input: input.to_owned(),
                    what: WHAT,
                    reason: "larger than 16 EiB",
                })?;
        if !exact {
            return Err(ParseError::OutOfRange {
                input: input.to_owned(),
                what: WHAT,
                reason: "not a whole number of bytes",
            });
        }
        let value = u64::try_from(value).map_err(|_| ParseError::OutOfRange {
            input: input.to_owned(),
            what: WHAT,
            reason: "larger than 16 EiB",
        })?;
        Ok(ByteSize(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn p(s: &str) -> u64 {
        s.parse::<ByteSize>().unwrap().bytes()
    }

    #[test]
    fn parses_si_and_iec_apart() {
        assert_eq!(p("64"), 64);
        assert_eq!(p("1500B"), 1500);
        assert_eq!(p("256K"), 256_000);
        assert_eq!(p("256kB"), 256_000);
        assert_eq!(p("256KiB"), 262_144);
        assert_eq!(p("256Ki"), 262_144);
        assert_eq!(p("16MiB"), 16_777_216);
        assert_eq!(p("4KiB"), 4096);
        assert_eq!(p("1.5K"), 1500);
        assert_eq!(p("0.5KiB"), 512);
        assert_eq!(p("2 GiB"), 2 << 30);
    }

    #[test]
    fn refuses_bits_rates_and_fractions() {
        let e = "10Mb".parse::<ByteSize>().unwrap_err().to_string();
        assert!(e.contains("write 10MB"), "{e}");
        let e = "10Mbit/s".parse::<ByteSize>().unwrap_err().to_string();
        assert!(e.contains("rate"), "{e}");
        let e = "0.3KiB".parse::<ByteSize>().unwrap_err().to_string();
        assert!(e.contains("whole number"), "{e}");
        assert!("lots".parse::<ByteSize>().is_err());
        assert!("-5".parse::<ByteSize>().is_err());
    }

    #[test]
    fn prints_exactly_over_a_grid() {
        let grid = [
            (0, "0 B"),
            (64, "64 B"),
            (1000, "1 kB"),
            (1024, "1 KiB"),
            (1500, "1.5 kB"),
            (131_072, "128 KiB"),
            (212_992, "208 KiB"),
            (4_194_304, "4 MiB"),
            (33_554_432, "32 MiB"),
            (5_000_000, "5 MB"),
            (1001, "1.001 kB"),
            // Whole in SI prints SI, though also a multiple of 1024 (was 9765625 KiB).
            (10_000_000_000, "10 GB"),
            (128_000, "128 kB"),
            (1536, "1.5 KiB"),
        ];
        for (n, text) in grid {
            assert_eq!(ByteSize::from_bytes(n).to_string(), text);
        }
        assert_eq!(format!("{:.1}", ByteSize::from_bytes(5_000_000)), "4.8 MiB");
    }

    proptest! {
        #[test]
        fn print_parse_round_trip(n in any::<u64>()) {
            let b = ByteSize::from_bytes(n);
            prop_assert_eq!(b.to_string().parse::<ByteSize>().unwrap(), b);
        }

        #[test]
        fn parser_never_panics(s in ".{0,24}") {
            let _ = s.parse::<ByteSize>();
        }
    }
}
