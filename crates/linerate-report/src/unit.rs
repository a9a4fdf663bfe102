//! The units a report's values are in (bit/s, packets/s, transactions/s): the scale and label
//! an axis or a table column prints them with. One place, so a chart, a table and a verdict
//! of the same runs say the same unit.

use linerate_units::human::{Digits, Prefix, bit_rate_axis, number};
use linerate_units::{BitRate, PacketRate};

/// What a value counts per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unit {
    /// Bits per second (throughput).
    BitRate,
    /// Packets (frames, datagrams) per second.
    PacketRate,
    /// Request/response transactions per second.
    TransactionRate,
}

impl Unit {
    /// The unit's name in JSON documents and in `lab run`'s results: `bit/s`, `packet/s`,
    /// `transaction/s`.
    pub fn name(self) -> &'static str {
        match self {
            Unit::BitRate => "bit/s",
            Unit::PacketRate => "packet/s",
            Unit::TransactionRate => "transaction/s",
        }
    }

    /// The unit a name from [`Unit::name`] stands for.
    pub fn from_name(name: &str) -> Option<Unit> {
        [Unit::BitRate, Unit::PacketRate, Unit::TransactionRate]
            .into_iter()
            .find(|u| u.name() == name)
    }

    /// The divisor and label that suit an axis (or a column) whose largest value is `max`:
    /// `(1e6, "Mbit/s")`, `(1e3, "kpps")`, `(1e3, "k transactions/s")`.
    pub fn axis(self, max: f64) -> (f64, &'static str) {
        match self {
            Unit::BitRate => bit_rate_axis(max),
            Unit::PacketRate => match Prefix::largest_si(max) {
                Prefix::Kilo => (1e3, "kpps"),
                Prefix::Mega => (1e6, "Mpps"),
                Prefix::Giga | Prefix::Tera => (1e9, "Gpps"),
                _ => (1.0, "pps"),
            },
            Unit::TransactionRate => match Prefix::largest_si(max) {
                Prefix::Kilo => (1e3, "k transactions/s"),
                Prefix::Mega | Prefix::Giga | Prefix::Tera => (1e6, "M transactions/s"),
                _ => (1.0, "transactions/s"),
            },
        }
    }

    /// A value for a table cell, two decimals so a column lines up: `941.52 Mbit/s`,
    /// `1.25 Mpps`, `12.35 k transactions/s`.
    pub fn cell(self, value: f64) -> String {
        match self {
            Unit::BitRate => BitRate::from_bps_f64(value)
                .human()
                .digits(Digits::Decimals(2))
                .to_string(),
            Unit::PacketRate => PacketRate::from_pps(value)
                .human()
                .digits(Digits::Decimals(2))
                .to_string(),
            Unit::TransactionRate => {
                let (div, label) = self.axis(value);
                format!("{} {label}", number(value / div, Digits::Decimals(2)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_and_cells_over_a_grid() {
        assert_eq!(Unit::BitRate.axis(9.4e9), (1e9, "Gbit/s"));
        assert_eq!(Unit::PacketRate.axis(12.0), (1.0, "pps"));
        assert_eq!(Unit::PacketRate.axis(1_250_000.0), (1e6, "Mpps"));
        assert_eq!(Unit::PacketRate.axis(999.0), (1.0, "pps"));
        assert_eq!(
            Unit::TransactionRate.axis(12_345.0),
            (1e3, "k transactions/s")
        );
        assert_eq!(Unit::TransactionRate.axis(80.0), (1.0, "transactions/s"));
        assert_eq!(Unit::BitRate.cell(400_194_767.6), "400.19 Mbit/s");
        assert_eq!(Unit::PacketRate.cell(1_250_000.0), "1.25 Mpps");
        assert_eq!(Unit::PacketRate.cell(997.0), "997.00 pps");
        assert_eq!(
            Unit::TransactionRate.cell(12_345.0),
            "12.35 k transactions/s"
        );
        assert_eq!(Unit::TransactionRate.cell(99.5), "99.50 transactions/s");
        for u in [Unit::BitRate, Unit::PacketRate, Unit::TransactionRate] {
            assert_eq!(Unit::from_name(u.name()), Some(u));
        }
        assert_eq!(Unit::from_name("frames"), None);
    }
}
