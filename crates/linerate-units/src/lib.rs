//! Network quantities that are easy to mix up, parsed and printed in one place.
//!
//! linerate talks about bits, bytes, packets, pages and time. Each quantity has its own type so
//! that a byte count can never be passed where a bit rate is expected:
//!
//! | type | unit | examples |
//! |---|---|---|
//! | [`BitRate`] | bits per second | `10G`, `10Gbit/s`, `1.5Gbps`, `940M`, `100Mb/s`, `125MB/s` |
//! | [`ByteSize`] | bytes | `64`, `1500B`, `256K`, `256kB`, `16MiB`, `4KiB` |
//! | [`PacketRate`] | packets per second | `14.88M`, `1.5Mpps`, `300kpps` |
//! | [`Duration`] | time | `40ms`, `1.5s`, `250us`, `10` (seconds), `2m` |
//! | [`Pages`] | memory pages | `131072` (converted to bytes with the page size) |
//! | [`Percent`] | a share | `0.1%`, `5%` |
//!
//! # The rules
//!
//! 1. **Prefixes mean the same thing everywhere.** SI prefixes are powers of 1000:
//!    `k`/`K` = 10³, `M` = 10⁶, `G` = 10⁹, `T` = 10¹². IEC prefixes are powers of 1024:
//!    `Ki` = 2¹⁰, `Mi` = 2²⁰, `Gi` = 2³⁰, `Ti` = 2⁴⁰. So `256K` is 256 000 bytes and `256KiB` is
//!    262 144 bytes. (iperf3 reads `-l 128K` as 131 072 bytes; linerate does not: write
//!    `128KiB` for that.) For rates, a lower-case `m` is mega, as in iperf3 (`-b 100m`).
//! 2. **A bare number has the type's base unit** in data ([`std::str::FromStr`]): bits/s for a
//!    bit rate, bytes for a size, packets/s for a packet rate, seconds for a duration. **On the
//!    command line a unit is required** ([`parse_with_unit`], `Duration::parse_with_unit`, …):
//!    `--rtt 80` is refused with `'80' needs a unit: 80ms?`. Only the flags where a bare number
//!    is the user's habit keep the lenient form: iperf3's `-t -O -i` (seconds), `-l -w -n`
//!    (bytes) and `-b` (bits/s), ministat's flags. Zero needs no unit.
//! 3. **`b` is a bit and `B` is a byte.** A rate is written `10G`, `10Gbit/s`, `10Gb/s` or
//!    `10Gbps`; a rate in bytes per second must say so with `B/s` (`125MB/s` = 1 Gbit/s).
//!    `10GB` is a size, not a rate, and `10GBps` is ambiguous (bytes or bits?): both are
//!    rejected for a rate with a message that suggests `10G` or `10GB/s`. Bit rates take only
//!    SI prefixes (`10Gibit/s` is refused). A size written in bits (`10Mb`) is refused with a
//!    suggestion.
//! 4. **Printing is exact and unambiguous**: [`std::fmt::Display`] prints the exact value with
//!    the largest prefix that keeps it at least 1 (`1.5 Gbit/s`, `16 MiB`, `1.5 kB`, `40 ms`),
//!    and what it prints parses back to the same value. A precision (`{:.2}`) rounds for humans
//!    (sizes above 1 KiB then in binary prefixes, as memory is read: `{:.1}` → `31.3 GiB`).
//! 5. **A size picks the prefix family a reader expects.** Each family is tried at its largest
//!    prefix that keeps the number at least 1. A size that is a whole number there in SI prints
//!    SI (`10 GB`, `16 MB`, `128 kB` — not `9765625 KiB`); otherwise one that is a whole number
//!    there in binary prints binary (`64 KiB`, `16 MiB`, `1000 KiB`); otherwise the exact form
//!    with fewer digits wins, SI on a tie (`1.5 kB`, `1.001 kB`, `614.4 GB`, but `2.5 GiB` for
//!    2 684 354 560 bytes). Below 1000 bytes a size is plain bytes (`999 B`).
//! 6. **One formatter for people** ([`human`]): every quantity has a `human()` form, auto-scaled
//!    with at most two decimals by default (`9.41 Gbit/s`, `1.25 Mpps`, `64 KiB`, `40 ms`), with
//!    explicit digits ([`human::Digits`]: exact, fixed decimals, at most N decimals, N
//!    significant digits), a fixed or capped prefix, the size family, thousands separators and
//!    exact forms in the base unit (`9,400,000,000 bit/s`). Renderers call it instead of
//!    dividing by 1e9 themselves.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod bitrate;
mod bytesize;
mod decimal;
mod duration;
mod error;
pub mod human;
mod packetrate;
mod pages;
mod percent;
mod with_unit;

pub use bitrate::BitRate;
pub use bytesize::ByteSize;
pub use duration::Duration;
pub use error::ParseError;
pub use packetrate::PacketRate;
pub use pages::Pages;
pub use percent::Percent;
pub use with_unit::{WithUnit, parse_with_unit};

/// The unit rules in a few lines, for `--help` texts.
pub const RULES: &str = "\
Units: write the unit (80ms, 8GiB, 10G); a bare number is refused with the likely form, except \
where it is the habit: seconds for -t/--duration, -O and -i/--interval, bytes for client's -l -w \
-n, bits/s for client's -b, and 0. k/K M G T are powers of 1000; Ki Mi Gi Ti are powers of 1024 \
(256K = 256000 bytes, 256KiB = 262144 bytes). b is a bit and B a byte: rates are 10G, \
10Gbit/s, 10Gbps or 1250MB/s; 10GB is a size, not a rate. Durations: 250us, 40ms, 1.5s, 2m.";
