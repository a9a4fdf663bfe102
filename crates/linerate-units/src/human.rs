//! One formatter for every quantity a person reads: bit rates, byte rates, sizes, packet rates
//! and durations. Each quantity type has a `human()` method that returns a [`Human`]; its
//! builder methods choose the digits, the prefix and (for sizes) the prefix family, and it
//! prints with `Display` (width and alignment honoured, so `{:>13}` lines up columns).
//!
//! ```
//! use linerate_units::human::{Digits, Prefix};
//! use linerate_units::{BitRate, ByteSize, Duration, PacketRate};
//!
//! // Human forms: auto-scaled, at most two decimals unless told otherwise.
//! assert_eq!(BitRate::from_mbps(9_410).human().to_string(), "9.41 Gbit/s");
//! assert_eq!(PacketRate::from_pps(1_250_000.0).human().to_string(), "1.25 Mpps");
//! assert_eq!(ByteSize::from_kib(64).human().to_string(), "64 KiB");
//! assert_eq!(ByteSize::from_bytes(10_000_000_000).human().to_string(), "10 GB");
//! assert_eq!(Duration::from_millis(40).human().to_string(), "40 ms");
//! // Explicit precision where a column needs a fixed number of decimals.
//! let r = BitRate::from_bps(9_400_000_000);
//! assert_eq!(r.human().digits(Digits::Decimals(2)).to_string(), "9.40 Gbit/s");
//! assert_eq!(r.human().digits(Digits::Significant(3)).to_string(), "9.40 Gbit/s");
//! // Exact forms: every digit, scaled or in the base unit, optionally grouped.
//! assert_eq!(r.human().exact().to_string(), "9.4 Gbit/s");
//! let exact = r.human().exact().prefix(Prefix::One).grouped();
//! assert_eq!(exact.to_string(), "9,400,000,000 bit/s");
//! ```
//!
//! Choosing the prefix: the largest one at which the number is at least 1, decided after
//! rounding (so 999.996 Mbit/s at two decimals prints `1.00 Gbit/s`, never
//! `1000.00 Mbit/s`). [`Human::prefix`] fixes it, [`Human::at_most`] caps it. Sizes choose
//! their family with [`Family`] (default [`Family::Auto`], the rule in the crate docs).

mod number;
mod prefix;
#[cfg(test)]
mod tests;

use std::fmt;

pub use number::{Digits, grouped, number};
pub use prefix::{Family, Prefix};

use crate::decimal::{exact_ratio, pad, shift_left};
use number::group_integer_part;
use prefix::{BINARY, SI, TIME, auto_family};

/// What is counted, and its unit symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    BitsPerSec,
    BytesPerSec,
    Bytes,
    Packets,
    Seconds,
}

impl Unit {
    fn symbol(self) -> &'static str {
        match self {
            Unit::BitsPerSec => "bit/s",
            Unit::BytesPerSec => "B/s",
            Unit::Bytes => "B",
            Unit::Packets => "pps",
            Unit::Seconds => "s",
        }
    }
}

/// The value in the unit's base: an exact fraction (bits, bytes, nanoseconds as seconds), or a
/// float (packet rates are fractional by nature).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Amount {
    /// `numerator / denominator`; the denominator is 1, 8 or 10⁹, so every exact expansion
    /// terminates.
    Ratio(u128, u128),
    Float(f64),
}

impl Amount {
    fn at_least(self, p: Prefix) -> bool {
        let (pn, pd) = p.ratio();
        match self {
            Amount::Ratio(n, d) => n * pd >= pn * d,
            Amount::Float(v) => v >= p.factor(),
        }
    }

    fn is_zero(self) -> bool {
        match self {
            Amount::Ratio(n, _) => n == 0,
            Amount::Float(v) => v == 0.0,
        }
    }

    fn scaled(self, p: Prefix) -> f64 {
        match self {
            Amount::Ratio(n, d) => n as f64 / d as f64 / p.factor(),
            Amount::Float(v) => v / p.factor(),
        }
    }

    fn exact_at(self, p: Prefix) -> String {
        let (pn, pd) = p.ratio();
        match self {
            Amount::Ratio(n, d) => exact_ratio(n * pd, d * pn),
            // A float's shortest decimal text, with the point moved: exact, unlike dividing.
            Amount::Float(v) => match p.power_of_ten() {
                Some(e) if e >= 0 => shift_left(&format!("{v}"), e.unsigned_abs() as usize),
                _ => format!("{}", v / p.factor()),
            },
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scale {
    Auto,
    Fixed(Prefix),
    AtMost(Prefix),
}

/// A quantity ready to print for a person; build one with `BitRate::human`,
/// `BitRate::human_bytes_per_sec`, `ByteSize::human`, `PacketRate::human` or
/// `Duration::human`, then adjust it with the builder methods.
///
/// Defaults: [`Digits::Max`]`(2)`, the prefix chosen automatically, [`Family::Auto`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Human {
    amount: Amount,
    unit: Unit,
    digits: Digits,
    scale: Scale,
    family: Family,
    whole_when_unscaled: bool,
    grouped: bool,
    compact: bool,
    ascii_micro: bool,
}

impl Human {
    fn new(amount: Amount, unit: Unit) -> Self {
        Human {
            amount,
            unit,
            digits: Digits::Max(2),
            scale: Scale::Auto,
            family: Family::Auto,
            whole_when_unscaled: false,
            grouped: false,
            compact: false,
            ascii_micro: false,
        }
    }

    pub(crate) fn bits_per_sec(bps: u64) -> Self {
        Human::new(Amount::Ratio(u128::from(bps), 1), Unit::BitsPerSec)
    }

    pub(crate) fn bytes_per_sec_of_bits(bps: u64) -> Self {
        Human::new(Amount::Ratio(u128::from(bps), 8), Unit::BytesPerSec)
    }

    pub(crate) fn bytes(n: u64) -> Self {
        Human::new(Amount::Ratio(u128::from(n), 1), Unit::Bytes)
    }

    pub(crate) fn packets(pps: f64) -> Self {
        Human::new(Amount::Float(pps), Unit::Packets)
    }

    pub(crate) fn nanoseconds(nanos: u64) -> Self {
        Human::new(
            Amount::Ratio(u128::from(nanos), 1_000_000_000),
            Unit::Seconds,
        )
    }

    /// How many digits the number keeps.
    #[must_use]
    pub fn digits(mut self, digits: Digits) -> Self {
        self.digits = digits;
        self
    }

    /// The exact value ([`Digits::Exact`]): every digit, as `Display` prints it.
    #[must_use]
    pub fn exact(self) -> Self {
        self.digits(Digits::Exact)
    }

    /// Always this prefix (`Prefix::Kilo` for a `kpps` column, `Prefix::One` for an exact
    /// count of bytes or bits). On a size it also chooses the family (`Prefix::Mebi` prints
    /// MiB). A prefix the unit does not use (a binary prefix on a rate, `Prefix::Milli` on a
    /// size) is ignored.
    #[must_use]
    pub fn prefix(mut self, prefix: Prefix) -> Self {
        self.scale = Scale::Fixed(prefix);
        self
    }

    /// The prefix chosen automatically, but no larger than `prefix` (bus figures quoted as
    /// `1064 MB/s`); on a size it also chooses the family.
    #[must_use]
    pub fn at_most(mut self, prefix: Prefix) -> Self {
        self.scale = Scale::AtMost(prefix);
        self
    }

    /// The prefix family of a size (other quantities are always SI).
    #[must_use]
    pub fn family(mut self, family: Family) -> Self {
        self.family = family;
        self
    }

    /// No decimals when no prefix scales the number: counts read `700 pps`, `999 B`, while
    /// scaled values keep their digits (`1.20 kpps`).
    #[must_use]
    pub fn whole_when_unscaled(mut self) -> Self {
        self.whole_when_unscaled = true;
        self
    }

    /// Thousands separators in the integer part: `9,400,000,000 bit/s`.
    #[must_use]
    pub fn grouped(mut self) -> Self {
        self.grouped = true;
        self
    }

    /// The number and prefix only, no space and no unit: `1.20k`, `14.88M` (narrow columns
    /// whose header names the unit).
    #[must_use]
    pub fn compact(mut self) -> Self {
        self.compact = true;
        self
    }

    /// `us` instead of `µs`: the ASCII spelling `Display` keeps.
    pub(crate) fn ascii_micro(mut self) -> Self {
        self.ascii_micro = true;
        self
    }

    fn ladder(&self) -> &'static [Prefix] {
        match self.unit {
            Unit::Seconds => &TIME,
            Unit::Bytes => match (self.family, self.amount) {
                // A prefix asked for decides the family of a size.
                _ if self
                    .scale_prefix()
                    .is_some_and(|p| BINARY[1..].contains(&p)) =>
                {
                    &BINARY
                }
                _ if self.scale_prefix().is_some_and(|p| SI[1..].contains(&p)) => &SI,
                (Family::Binary, _) => &BINARY,
                (Family::Auto, Amount::Ratio(n, 1)) => {
                    match auto_family(u64::try_from(n).unwrap_or(u64::MAX)) {
                        Family::Binary => &BINARY,
                        _ => &SI,
                    }
                }
                _ => &SI,
            },
            Unit::BitsPerSec | Unit::BytesPerSec | Unit::Packets => &SI,
        }
    }

    fn scale_prefix(&self) -> Option<Prefix> {
        match self.scale {
            Scale::Fixed(p) | Scale::AtMost(p) => Some(p),
            Scale::Auto => None,
        }
    }

    fn number_at(&self, p: Prefix, digits: Digits) -> String {
        match digits {
            Digits::Exact => self.amount.exact_at(p),
            _ if self.whole_when_unscaled && p == Prefix::One => {
                number(self.amount.scaled(p), Digits::Decimals(0))
            }
            d => number(self.amount.scaled(p), d),
        }
    }

    fn render(&self, digits: Digits) -> String {
        if let Amount::Float(v) = self.amount {
            if !v.is_finite() {
                return self.compose(format!("{v}"), Prefix::One);
            }
        }
        let mut ladder = self.ladder();
        match self.scale {
            Scale::Fixed(p) if ladder.contains(&p) => {
                return self.compose(self.number_at(p, digits), p);
            }
            Scale::AtMost(p) => {
                if let Some(i) = ladder.iter().position(|&q| q == p) {
                    ladder = &ladder[..=i];
                }
            }
            Scale::Fixed(_) | Scale::Auto => {}
        }
        // Zero reads in the base unit (`0 s`); a value below every prefix in the smallest
        // (`0.5 ns`).
        let below_all = if self.amount.is_zero() {
            ladder.iter().position(|&p| p == Prefix::One).unwrap_or(0)
        } else {
            0
        };
        let mut i = ladder
            .iter()
            .rposition(|&p| self.amount.at_least(p))
            .unwrap_or(below_all);
        loop {
            let text = self.number_at(ladder[i], digits);
            // Rounding can carry into the next prefix (999.996 → 1000.00): take that prefix.
            if digits != Digits::Exact && i + 1 < ladder.len() {
                let (n0, d0) = ladder[i].ratio();
                let (n1, d1) = ladder[i + 1].ratio();
                let step = (n1 * d0 / (d1 * n0)) as f64;
                if text.parse::<f64>().is_ok_and(|shown| shown >= step) {
                    i += 1;
                    continue;
                }
            }
            return self.compose(text, ladder[i]);
        }
    }

    fn compose(&self, number: String, p: Prefix) -> String {
        let number = if self.grouped {
            group_integer_part(&number)
        } else {
            number
        };
        let symbol = if self.ascii_micro && p == Prefix::Micro {
            "u"
        } else {
            p.symbol()
        };
        if self.compact {
            format!("{number}{symbol}")
        } else {
            format!("{number} {symbol}{}", self.unit.symbol())
        }
    }
}

impl fmt::Display for Human {
    /// A precision (`{:.1}`) overrides the digits with that many decimals.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = match f.precision() {
            Some(p) => Digits::Decimals(u8::try_from(p).unwrap_or(u8::MAX)),
            None => self.digits,
        };
        pad(f, &self.render(digits))
    }
}

/// A span of `secs` seconds known more finely than [`crate::Duration`]'s nanoseconds (a
/// 64-byte frame's 67.2 ns on a 10 Gbit/s wire), for people: `67.2 ns`, `1.04 µs`.
pub fn seconds(secs: f64) -> Human {
    let secs = if secs.is_nan() || secs < 0.0 {
        0.0
    } else {
        secs
    };
    Human::new(Amount::Float(secs), Unit::Seconds)
}

/// The divisor and label that suit a chart axis or table column of bit rates whose largest
/// value is `max_bps`: `(1e9, "Gbit/s")` for 9.4 Gbit/s, `(1.0, "bit/s")` below 1 kbit/s.
pub fn bit_rate_axis(max_bps: f64) -> (f64, &'static str) {
    let p = Prefix::largest_si(max_bps);
    let label = match p {
        Prefix::Kilo => "kbit/s",
        Prefix::Mega => "Mbit/s",
        Prefix::Giga => "Gbit/s",
        Prefix::Tera => "Tbit/s",
        _ => "bit/s",
    };
    (p.factor(), label)
}
