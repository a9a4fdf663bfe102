//! How quantities read in findings and profile comments, shared by the lint rules and the
//! profile formulas so both say the same thing the same way.

use crate::catalogue::Unit;

/// An amount in its unit for messages: bytes as human sizes, anything else with its unit name.
pub(crate) fn bytes_or(n: i64, unit: Unit) -> String {
    if unit == Unit::Bytes {
        bytes(n)
    } else {
        format!("{n} {}", unit.name())
    }
}

/// Human byte counts for messages: `100 MB`, `32 MiB`, `2.4 MiB`. Takes any integer; negative
/// counts print as 0.
pub(crate) fn bytes(n: impl Into<i128>) -> String {
    let n = u64::try_from(n.into().max(0)).unwrap_or(u64::MAX);
    let s = linerate_units::ByteSize::from_bytes(n);
    let exact = s.to_string();
    // Round and short exact forms read best (`100 MB`, `32 MiB`, `1.25 GiB`); long ones are
    // rounded (`2.4 MiB`), and so is kernel memory (whole KiB, pages) whose short form is SI:
    // `572.2 GiB`, not `614.4 GB`, beside a RAM size in GiB.
    let round = !exact.contains('.');
    let memory_in_si = n % 1024 == 0 && !exact.ends_with("iB");
    if n < 1024 || round || (exact.len() <= 8 && !memory_in_si) {
        exact
    } else {
        format!("{s:.1}")
    }
}
