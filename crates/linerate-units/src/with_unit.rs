//! The command line's rule for bare numbers: a value the user types must carry its unit.
//!
//! `--rtt 80` read as 80 seconds, `--ram 8` as 8 bytes: a bare number is a silent guess, and
//! the guess is wrong as often as it is right. So a flag parses its value with
//! [`Duration::parse_with_unit`] (and the same for sizes, rates and packet rates), which
//! refuses a bare number with the likely form (`'80' needs a unit: 80ms?`). Zero needs no
//! unit. The lenient [`std::str::FromStr`] (a bare number is the base unit) stays for data
//! files and for the flags where a bare number is the user's habit: iperf3's `-t -O -i`
//! (seconds) and `-l -w -n` (bytes), ministat's flags.

use std::str::FromStr;

use crate::decimal::Decimal;
use crate::{BitRate, ByteSize, Duration, PacketRate, ParseError};

/// A quantity whose command-line spelling must name its unit.
pub trait WithUnit: FromStr<Err = ParseError> {
    /// What to suggest for the bare number `number` (as typed): `80ms?`.
    fn suggest(number: &str, value: f64) -> String;
}

/// Parses `s` as a `T`, refusing a bare number other than zero (see the module docs).
pub fn parse_with_unit<T: WithUnit>(s: &str) -> Result<T, ParseError> {
    let input = s.trim();
    if let Some((number, unit)) = Decimal::split(input) {
        if unit.is_empty() && number.mantissa != 0 && !number.negative {
            return Err(ParseError::NeedsUnit {
                input: input.to_owned(),
                hint: T::suggest(input, number.to_f64()),
            });
        }
    }
    input.parse()
}

impl WithUnit for Duration {
    fn suggest(n: &str, _: f64) -> String {
        format!("{n}ms? (or {n}s, {n}us)")
    }
}

impl WithUnit for ByteSize {
    fn suggest(n: &str, value: f64) -> String {
        if value >= 1024.0 && value.fract() == 0.0 {
            // A byte count: offer it exactly, and in the largest binary prefix that divides it.
            let bytes = value as u64;
            let binary = [(30, "GiB"), (20, "MiB"), (10, "KiB")]
                .into_iter()
                .find(|&(shift, _)| bytes.trailing_zeros() >= shift)
                .map(|(shift, unit)| format!(" or {}{unit}", bytes >> shift))
                .unwrap_or_default();
            format!("{n}B{binary}?")
        } else {
            format!("{n}KiB, {n}MiB or {n}GiB? ({n}B for bytes)")
        }
    }
}

impl WithUnit for BitRate {
    fn suggest(n: &str, value: f64) -> String {
        if value >= 1000.0 {
            // Bits per second written out: the same rate with its prefix.
            let exact = BitRate::from_bps_f64(value).to_string().replace(' ', "");
            format!("{exact}? ({n}bit/s)")
        } else {
            format!("{n}M or {n}G? (bit/s; {n}MB/s for bytes per second)")
        }
    }
}

impl WithUnit for PacketRate {
    fn suggest(n: &str, _: f64) -> String {
        format!("{n}kpps or {n}Mpps?")
    }
}

impl Duration {
    /// Parses a duration typed on a command line: `40ms`, `1.5s`; a bare number (other than 0)
    /// is refused with the likely form.
    pub fn parse_with_unit(s: &str) -> Result<Self, ParseError> {
        parse_with_unit(s)
    }
}

impl ByteSize {
    /// Parses a size typed on a command line: `64KiB`, `8GiB`, `1500B`; a bare number (other
    /// than 0) is refused with the likely form.
    pub fn parse_with_unit(s: &str) -> Result<Self, ParseError> {
        parse_with_unit(s)
    }
}

impl BitRate {
    /// Parses a rate typed on a command line: `10G`, `940Mbit/s`; a bare number (other than
    /// 0) is refused with the likely form.
    pub fn parse_with_unit(s: &str) -> Result<Self, ParseError> {
        parse_with_unit(s)
    }
}

impl PacketRate {
    /// Parses a packet rate typed on a command line: `1.5Mpps`; a bare number (other than 0)
    /// is refused with the likely form.
    pub fn parse_with_unit(s: &str) -> Result<Self, ParseError> {
        parse_with_unit(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused<T: WithUnit + std::fmt::Debug>(s: &str) -> String {
        match parse_with_unit::<T>(s) {
            Err(e @ ParseError::NeedsUnit { .. }) => e.to_string(),
            other => panic!("{s}: expected a missing-unit error, got {other:?}"),
        }
    }

    #[test]
    fn bare_numbers_are_refused_with_the_likely_form() {
        assert_eq!(
            refused::<Duration>("80"),
            "'80' needs a unit: 80ms? (or 80s, 80us)"
        );
        assert_eq!(
            refused::<ByteSize>("8"),
            "'8' needs a unit: 8KiB, 8MiB or 8GiB? (8B for bytes)"
        );
        assert_eq!(
            refused::<ByteSize>("4194304"),
            "'4194304' needs a unit: 4194304B or 4MiB?"
        );
        assert_eq!(
            refused::<ByteSize>("1500000"),
            "'1500000' needs a unit: 1500000B?"
        );
        assert_eq!(
            refused::<BitRate>("1000000000"),
            "'1000000000' needs a unit: 1Gbit/s? (1000000000bit/s)"
        );
        assert_eq!(
            refused::<BitRate>("10"),
            "'10' needs a unit: 10M or 10G? (bit/s; 10MB/s for bytes per second)"
        );
        assert!(refused::<PacketRate>("14.88").contains("14.88Mpps"));
        assert!(refused::<Duration>(" 1e3 ").contains("'1e3'"));
    }

    #[test]
    fn units_and_zero_pass() {
        assert_eq!(
            Duration::parse_with_unit("80ms"),
            Ok(Duration::from_millis(80))
        );
        assert_eq!(Duration::parse_with_unit("0"), Ok(Duration::ZERO));
        assert_eq!(ByteSize::parse_with_unit("8GiB"), Ok(ByteSize::from_gib(8)));
        assert_eq!(
            ByteSize::parse_with_unit("1500B").map(|b| b.bytes()),
            Ok(1500)
        );
        assert_eq!(BitRate::parse_with_unit("10G"), Ok(BitRate::from_gbps(10)));
        assert!(PacketRate::parse_with_unit("1.5Mpps").is_ok());
    }

    #[test]
    fn negatives_say_negative() {
        for s in ["-10G", "-80ms", "-1"] {
            let e = BitRate::parse_with_unit(s).err().map(|e| e.to_string());
            assert!(
                e.as_deref().is_some_and(|e| e.contains("negative")),
                "{s}: {e:?}"
            );
        }
        let e = Duration::parse_with_unit("-80")
            .err()
            .map(|e| e.to_string());
        assert!(e.is_some_and(|e| e.contains("negative")));
    }
}
