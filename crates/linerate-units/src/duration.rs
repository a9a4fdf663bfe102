//! Time spans: RTTs, test durations, intervals, delays.

use std::fmt;
use std::str::FromStr;

use crate::ParseError;
use crate::human::Human;

const WHAT: &str = "a duration";
const EXPECTED: &str = "a duration such as 250us, 40ms, 1.5s or 10 (seconds)";

/// A span of time with nanosecond resolution. A bare number is seconds. In JSON it is a number
/// of seconds (`0.04` for 40 ms), like iperf3's `seconds` fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(std::time::Duration);

impl serde::Serialize for Duration {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0.as_secs_f64())
    }
}

impl<'de> serde::Deserialize<'de> for Duration {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let secs = f64::deserialize(d)?;
        if !secs.is_finite() || secs < 0.0 {
            return Err(serde::de::Error::custom(format!(
                "{secs} is not a duration in seconds"
            )));
        }
        Ok(Duration::from_secs_f64(secs))
    }
}

impl Duration {
    fn round_secs(secs: f64) -> std::time::Duration {
        let nanos = (secs * 1e9).round();
        if nanos >= u64::MAX as f64 {
            std::time::Duration::MAX
        } else {
            std::time::Duration::from_nanos(nanos as u64)
        }
    }
}

impl Duration {
    /// No time at all.
    pub const ZERO: Duration = Duration(std::time::Duration::ZERO);

    /// `n` nanoseconds.
    pub const fn from_nanos(n: u64) -> Self {
        Duration(std::time::Duration::from_nanos(n))
    }

    /// `n` microseconds.
    pub const fn from_micros(n: u64) -> Self {
        Duration(std::time::Duration::from_micros(n))
    }

    /// `n` milliseconds.
    pub const fn from_millis(n: u64) -> Self {
        Duration(std::time::Duration::from_millis(n))
    }

    /// `n` seconds.
    pub const fn from_secs(n: u64) -> Self {
        Duration(std::time::Duration::from_secs(n))
    }

    /// Seconds as a float, rounded to the nanosecond (negative and NaN give zero; too large
    /// saturates).
    pub fn from_secs_f64(s: f64) -> Self {
        if s.is_nan() || s <= 0.0 {
            Duration::ZERO
        } else {
            Duration(Duration::round_secs(s))
        }
    }

    /// The span as the standard library's type.
    pub const fn as_std(self) -> std::time::Duration {
        self.0
    }

    /// Seconds as a float.
    pub fn as_secs_f64(self) -> f64 {
        self.0.as_secs_f64()
    }

    /// Whole nanoseconds (saturating).
    pub fn as_nanos(self) -> u64 {
        u64::try_from(self.0.as_nanos()).unwrap_or(u64::MAX)
    }
}

impl From<std::time::Duration> for Duration {
    fn from(d: std::time::Duration) -> Self {
        Duration(d)
    }
}

impl From<Duration> for std::time::Duration {
    fn from(d: Duration) -> Self {
        d.0
    }
}

impl Duration {
    /// This span for people: `40 ms`, `250 µs`, `1.5 s` (see [`crate::human`]).
    pub fn human(self) -> Human {
        Human::nanoseconds(self.as_nanos())
    }
}

/// Exact, in ASCII so that it can be typed back (`250 us`, `40 ms`, `1.5 s`); a precision
/// rounds (`{:.1}` → `40.1 ms`).
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.human().exact().ascii_micro(), f)
    }
}

impl FromStr for Duration {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (input, number, unit) = crate::decimal::parse_quantity(s, WHAT, EXPECTED)?;
        let nanos_per_unit: u128 = match unit {
            "" | "s" | "sec" | "secs" | "second" | "seconds" => 1_000_000_000,
            "ms" | "msec" => 1_000_000,
            "us" | "µs" | "μs" | "usec" => 1_000,
            "ns" | "nsec" => 1,
            "m" | "min" | "mins" => 60_000_000_000,
            "h" | "hour" | "hours" => 3_600_000_000_000,
            _ => {
                return Err(ParseError::UnknownUnit {
                    input: input.to_owned(),
                    unit: unit.to_owned(),
                    what: WHAT,
                    hint: "expected ns, us, ms, s, m (minutes) or h".into(),
                });
            }
        };
        let nanos = number
            .scaled(nanos_per_unit, 1)
            .map(|(v, _)| v)
            .and_then(|v| u64::try_from(v).ok())
            .ok_or_else(|| ParseError::OutOfRange {
                input: input.to_owned(),
                what: WHAT,
                reason: "longer than 584 years",
            })?;
        Ok(Duration::from_nanos(nanos))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn p(s: &str) -> u64 {
        s.parse::<Duration>().unwrap().as_nanos()
    }

    #[test]
    fn parses_the_usual_spellings() {
        assert_eq!(p("40ms"), 40_000_000);
        assert_eq!(p("1.5s"), 1_500_000_000);
        assert_eq!(p("250us"), 250_000);
        assert_eq!(p("250µs"), 250_000);
        assert_eq!(p("10"), 10_000_000_000);
        assert_eq!(p("2m"), 120_000_000_000);
        assert_eq!(p("0.1 ms"), 100_000);
        assert!("40 lightyears".parse::<Duration>().is_err());
        assert!("-1s".parse::<Duration>().is_err());
    }

    #[test]
    fn prints_exactly_over_a_grid() {
        let grid = [
            (0, "0 s"),
            (1, "1 ns"),
            (250_000, "250 us"),
            (1_500_000, "1.5 ms"),
            (40_000_000, "40 ms"),
            (1_500_000_000, "1.5 s"),
            (120_000_000_000, "120 s"),
        ];
        for (n, text) in grid {
            assert_eq!(Duration::from_nanos(n).to_string(), text);
        }
        assert_eq!(format!("{:.1}", Duration::from_micros(40_123)), "40.1 ms");
    }

    #[test]
    fn json_is_seconds() {
        let d = Duration::from_millis(40);
        assert_eq!(serde_json::to_string(&d).unwrap(), "0.04");
        assert_eq!(serde_json::from_str::<Duration>("0.04").unwrap(), d);
        assert!(serde_json::from_str::<Duration>("-1").is_err());
    }

    proptest! {
        #[test]
        fn print_parse_round_trip(n in any::<u64>()) {
            let d = Duration::from_nanos(n);
            prop_assert_eq!(d.to_string().parse::<Duration>().unwrap(), d);
        }

        #[test]
        fn parser_never_panics(s in ".{0,24}") {
            let _ = s.parse::<Duration>();
        }
    }
}
