//! Memory pages, the unit of `net.ipv4.tcp_mem` and `udp_mem` (not bytes).

use std::fmt;
use std::str::FromStr;

use crate::{ByteSize, ParseError};

/// A count of memory pages. Convert with the page size of the host (usually 4 KiB).
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
pub struct Pages(u64);

impl Pages {
    /// The page size of x86-64 and most ARM64 Linux systems.
    pub const DEFAULT_PAGE_SIZE: ByteSize = ByteSize::from_kib(4);

    /// `n` pages.
    pub const fn new(n: u64) -> Self {
        Pages(n)
    }

    /// The page count.
    pub const fn count(self) -> u64 {
        self.0
    }

    /// The memory these pages cover.
    pub const fn to_bytes(self, page_size: ByteSize) -> ByteSize {
        ByteSize::from_bytes(self.0.saturating_mul(page_size.bytes()))
    }

    /// The pages needed to hold `size` (rounded up).
    pub fn from_bytes(size: ByteSize, page_size: ByteSize) -> Self {
        let p = page_size.bytes().max(1);
        Pages(size.bytes().div_ceil(p))
    }
}

impl fmt::Display for Pages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::decimal::pad(f, &format!("{} pages", self.0))
    }
}

impl FromStr for Pages {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let input = s.trim();
        let digits = input
            .strip_suffix("pages")
            .or_else(|| input.strip_suffix("page"))
            .unwrap_or(input)
            .trim_end();
        if digits.is_empty() {
            return Err(ParseError::Empty {
                expected: "a page count such as 131072",
            });
        }
        digits
            .parse::<u64>()
            .map(Pages)
            .map_err(|_| ParseError::NotANumber {
                input: input.to_owned(),
                expected: "a whole number of pages such as 131072",
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_pages_and_bytes() {
        let p: Pages = "575802".parse().unwrap();
        assert_eq!(p.to_bytes(Pages::DEFAULT_PAGE_SIZE).bytes(), 575_802 * 4096);
        assert_eq!(
            Pages::from_bytes(ByteSize::from_bytes(4097), Pages::DEFAULT_PAGE_SIZE).count(),
            2
        );
        assert_eq!(p.to_string(), "575802 pages");
        assert_eq!("12 pages".parse::<Pages>().unwrap().count(), 12);
        assert!("1.5".parse::<Pages>().is_err());
    }
}
