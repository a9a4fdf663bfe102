//! Shares such as a loss rate (`0.1%`).

use std::fmt;
use std::str::FromStr;

use crate::ParseError;

const EXPECTED: &str = "a percentage such as 0.1% or 5%";

/// A share in percent, 0 to 100.
#[derive(
    Debug, Clone, Copy, PartialEq, PartialOrd, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct Percent(f64);

impl Percent {
    /// `p` percent, clamped to 0..=100 (NaN becomes 0).
    pub fn new(p: f64) -> Self {
        if p.is_nan() {
            Percent(0.0)
        } else {
            Percent(p.clamp(0.0, 100.0))
        }
    }

    /// From a fraction (0.001 = 0.1 %).
    pub fn from_fraction(f: f64) -> Self {
        Percent::new(f * 100.0)
    }

    /// The value in percent.
    pub fn percent(self) -> f64 {
        self.0
    }

    /// The value as a fraction of one.
    pub fn fraction(self) -> f64 {
        self.0 / 100.0
    }
}

impl fmt::Display for Percent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match f.precision() {
            Some(d) => crate::decimal::pad(f, &format!("{:.d$}%", self.0)),
            None => crate::decimal::pad(f, &format!("{}%", self.0)),
        }
    }
}

impl FromStr for Percent {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (input, number, unit) = crate::decimal::parse_quantity(s, "a percentage", EXPECTED)?;
        let value = number.to_f64().abs();
        match unit {
            "%" => {}
            "" if value == 0.0 => {}
            "" => {
                return Err(ParseError::Ambiguous {
                    input: input.to_owned(),
                    what: "a percentage",
                    hint: format!("write {input}% for percent (a bare number could be a fraction)"),
                });
            }
            _ => {
                return Err(ParseError::UnknownUnit {
                    input: input.to_owned(),
                    unit: unit.to_owned(),
                    what: "a percentage",
                    hint: "expected a number followed by %".into(),
                });
            }
        }
        if value > 100.0 {
            return Err(ParseError::OutOfRange {
                input: input.to_owned(),
                what: "a percentage",
                reason: "above 100%",
            });
        }
        Ok(Percent(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_percentages() {
        assert_eq!("0.1%".parse::<Percent>().unwrap().fraction(), 0.001);
        assert_eq!("0".parse::<Percent>().unwrap().percent(), 0.0);
        assert!(
            "1".parse::<Percent>()
                .unwrap_err()
                .to_string()
                .contains("write 1%")
        );
        assert!("120%".parse::<Percent>().is_err());
        assert_eq!(Percent::new(0.1).to_string(), "0.1%");
        // Regression: 0.3% was read as 0.30000000000000004 (3 × 0.1).
        assert_eq!("0.3%".parse::<Percent>().unwrap().percent(), 0.3);
    }

    proptest::proptest! {
        #[test]
        fn print_parse_round_trip(p in 0.0f64..=100.0) {
            let percent = Percent::new(p);
            let back = percent.to_string().parse::<Percent>();
            proptest::prop_assert_eq!(back.ok(), Some(percent));
        }

        #[test]
        fn parser_never_panics(s in ".{0,24}") {
            let _ = s.parse::<Percent>();
        }
    }
}
