//! The prefixes a printed quantity may be scaled by, the ladder each unit climbs, and the rule
//! that chooses between SI and binary prefixes for a byte size.

use crate::decimal::exact_ratio;

/// A unit prefix. SI prefixes are powers of 1000 (and, for time, of 1/1000); binary prefixes
/// are powers of 1024.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Prefix {
    /// 10⁻⁹ (`ns`).
    Nano,
    /// 10⁻⁶ (`µs`).
    Micro,
    /// 10⁻³ (`ms`).
    Milli,
    /// No prefix: the base unit.
    One,
    /// 10³ (`k`, lower case as SI writes it: `kbit/s`, `kB`, `kpps`).
    Kilo,
    /// 10⁶.
    Mega,
    /// 10⁹.
    Giga,
    /// 10¹².
    Tera,
    /// 2¹⁰.
    Kibi,
    /// 2²⁰.
    Mebi,
    /// 2³⁰.
    Gibi,
    /// 2⁴⁰.
    Tebi,
}

impl Prefix {
    /// What it prints as: `k`, `Mi`, `µ`, or nothing for [`Prefix::One`].
    pub const fn symbol(self) -> &'static str {
        match self {
            Prefix::Nano => "n",
            Prefix::Micro => "µ",
            Prefix::Milli => "m",
            Prefix::One => "",
            Prefix::Kilo => "k",
            Prefix::Mega => "M",
            Prefix::Giga => "G",
            Prefix::Tera => "T",
            Prefix::Kibi => "Ki",
            Prefix::Mebi => "Mi",
            Prefix::Gibi => "Gi",
            Prefix::Tebi => "Ti",
        }
    }

    /// The factor as an exact fraction `(numerator, denominator)`.
    pub(crate) const fn ratio(self) -> (u128, u128) {
        match self {
            Prefix::Nano => (1, 1_000_000_000),
            Prefix::Micro => (1, 1_000_000),
            Prefix::Milli => (1, 1_000),
            Prefix::One => (1, 1),
            Prefix::Kilo => (1_000, 1),
            Prefix::Mega => (1_000_000, 1),
            Prefix::Giga => (1_000_000_000, 1),
            Prefix::Tera => (1_000_000_000_000, 1),
            Prefix::Kibi => (1 << 10, 1),
            Prefix::Mebi => (1 << 20, 1),
            Prefix::Gibi => (1 << 30, 1),
            Prefix::Tebi => (1 << 40, 1),
        }
    }

    /// The factor: `1e9` for [`Prefix::Giga`], `1024.0` for [`Prefix::Kibi`].
    pub fn factor(self) -> f64 {
        let (num, den) = self.ratio();
        num as f64 / den as f64
    }

    /// The power of ten this prefix stands for, if it is one.
    pub(crate) fn power_of_ten(self) -> Option<i32> {
        match self {
            Prefix::Nano => Some(-9),
            Prefix::Micro => Some(-6),
            Prefix::Milli => Some(-3),
            Prefix::One => Some(0),
            Prefix::Kilo => Some(3),
            Prefix::Mega => Some(6),
            Prefix::Giga => Some(9),
            Prefix::Tera => Some(12),
            Prefix::Kibi | Prefix::Mebi | Prefix::Gibi | Prefix::Tebi => None,
        }
    }

    /// The largest SI prefix (up to tera) at which `value` is at least 1; [`Prefix::One`]
    /// below 1000. For scaling a chart axis or a table column to its largest value.
    pub fn largest_si(value: f64) -> Prefix {
        SI.iter()
            .rev()
            .copied()
            .find(|p| value >= p.factor())
            .unwrap_or(Prefix::One)
    }
}

/// SI prefixes for rates, packet rates and SI sizes.
pub(crate) const SI: [Prefix; 5] = [
    Prefix::One,
    Prefix::Kilo,
    Prefix::Mega,
    Prefix::Giga,
    Prefix::Tera,
];
/// Binary prefixes for sizes.
pub(crate) const BINARY: [Prefix; 5] = [
    Prefix::One,
    Prefix::Kibi,
    Prefix::Mebi,
    Prefix::Gibi,
    Prefix::Tebi,
];
/// Time: nanoseconds up to seconds (a human form does not switch to minutes).
pub(crate) const TIME: [Prefix; 4] = [Prefix::Nano, Prefix::Micro, Prefix::Milli, Prefix::One];

/// Which prefixes a byte size is printed with. Rates, packet rates and durations are always SI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// kB, MB, GB, TB (powers of 1000): link-side figures, transfers in reports.
    Si,
    /// KiB, MiB, GiB, TiB (powers of 1024): memory, buffers, iperf3's transfer column.
    Binary,
    /// The family that prints the value most simply (the rule in the crate docs): whole in
    /// SI → SI, whole in binary → binary, otherwise the one with fewer digits, SI on a tie.
    Auto,
}

/// The largest prefix of `ladder` at which `bytes` is at least 1.
fn largest(bytes: u64, ladder: &[Prefix]) -> Prefix {
    ladder
        .iter()
        .rev()
        .copied()
        .find(|p| u128::from(bytes) >= p.ratio().0)
        .unwrap_or(Prefix::One)
}

/// The family [`Family::Auto`] picks for `bytes`: `16 MB` and `10 GB` stay SI (a reader
/// expects 10 GB, not 9765625 KiB), `128 KiB` stays binary, and a value whole in neither
/// takes the shorter exact form (`1.5 kB`, not `1.46484375 KiB`).
pub(crate) fn auto_family(bytes: u64) -> Family {
    let si = largest(bytes, &SI);
    let binary = largest(bytes, &BINARY);
    let whole = |p: Prefix| p != Prefix::One && u128::from(bytes) % p.ratio().0 == 0;
    if whole(si) {
        return Family::Si;
    }
    if whole(binary) {
        return Family::Binary;
    }
    let digits = |p: Prefix| {
        exact_ratio(u128::from(bytes), p.ratio().0)
            .chars()
            .filter(char::is_ascii_digit)
            .count()
    };
    if digits(binary) < digits(si) {
        Family::Binary
    } else {
        Family::Si
    }
}
