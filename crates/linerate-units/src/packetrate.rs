//! Packet (frame) rates.

use std::fmt;
use std::str::FromStr;

use crate::ParseError;
use crate::decimal::split_prefix;
use crate::human::Human;

const WHAT: &str = "a packet rate";
const EXPECTED: &str = "a packet rate such as 14.88M, 1.5Mpps or 300kpps";

/// Packets (or frames) per second. Fractional: 1 Gbit/s of 64-byte frames is 1 488 095.238 pps.
#[derive(
    Debug, Clone, Copy, PartialEq, PartialOrd, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct PacketRate(f64);

impl PacketRate {
    /// `pps` packets per second (negative and NaN become zero).
    pub fn from_pps(pps: f64) -> Self {
        if pps.is_nan() || pps < 0.0 {
            PacketRate(0.0)
        } else {
            PacketRate(pps)
        }
    }

    /// Packets per second.
    pub fn pps(self) -> f64 {
        self.0
    }
}

impl PacketRate {
    /// This rate for people: `1.25 Mpps` (see [`crate::human`]).
    pub fn human(self) -> Human {
        Human::packets(self.0)
    }
}

/// Exact (`1.488095238 Mpps`); a precision rounds (`{:.2}` → `1.49 Mpps`).
impl fmt::Display for PacketRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.human().exact(), f)
    }
}

impl FromStr for PacketRate {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (input, number, unit) = crate::decimal::parse_quantity(s, WHAT, EXPECTED)?;
        let (prefix, base) = split_prefix(unit);
        match base {
            "" | "pps" | "p/s" | "fps" | "packets/s" | "frames/s" => {}
            _ => {
                return Err(ParseError::UnknownUnit {
                    input: input.to_owned(),
                    unit: unit.to_owned(),
                    what: WHAT,
                    hint: "expected pps after an optional k, M or G (e.g. 14.88Mpps)".into(),
                });
            }
        }
        if prefix.binary {
            return Err(ParseError::UnknownUnit {
                input: input.to_owned(),
                unit: unit.to_owned(),
                what: WHAT,
                hint: "packet rates use SI prefixes (k = 1000)".into(),
            });
        }
        // SI prefixes are powers of ten: shift the decimal point, then round once.
        let shift = prefix.factor.checked_ilog10().unwrap_or(0) as i32;
        let value = number.times_power_of_ten(shift);
        if !value.is_finite() {
            return Err(ParseError::OutOfRange {
                input: input.to_owned(),
                what: WHAT,
                reason: "too large",
            });
        }
        Ok(PacketRate(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_and_prints() {
        assert_eq!("14.88M".parse::<PacketRate>().unwrap().pps(), 14_880_000.0);
        assert_eq!("300kpps".parse::<PacketRate>().unwrap().pps(), 300_000.0);
        assert_eq!("64".parse::<PacketRate>().unwrap().pps(), 64.0);
        assert_eq!(
            PacketRate::from_pps(1_488_095.238).to_string(),
            "1.488095238 Mpps"
        );
        assert_eq!(
            format!("{:.2}", PacketRate::from_pps(81_274.3)),
            "81.27 kpps"
        );
        assert_eq!(PacketRate::from_pps(0.0).to_string(), "0 pps");
        assert!("10G bit/s".parse::<PacketRate>().is_err());
        assert!("1Mipps".parse::<PacketRate>().is_err());
    }

    proptest! {
        #[test]
        fn print_parse_round_trip(pps in 0.0f64..1e13) {
            let r = PacketRate::from_pps(pps);
            let back = r.to_string().parse::<PacketRate>().unwrap().pps();
            prop_assert!((back - pps).abs() <= pps * 1e-12, "{} -> {}", pps, back);
        }
    }
}
