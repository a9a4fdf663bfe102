//! `--allow PREFIX`: the address prefixes (IPv4 or IPv6 CIDR) clients may test from.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

/// One allowed prefix: an address and the number of leading bits that must match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllowPrefix {
    addr: IpAddr,
    len: u8,
}

impl AllowPrefix {
    /// Whether `ip` is inside the prefix (an IPv4-mapped IPv6 address counts as IPv4).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 @ IpAddr::V4(_) => v4,
        };
        match (self.addr, ip) {
            (IpAddr::V4(a), IpAddr::V4(b)) => {
                masked(u128::from(u32::from(a)), self.len, 32)
                    == masked(u128::from(u32::from(b)), self.len, 32)
            }
            (IpAddr::V6(a), IpAddr::V6(b)) => {
                masked(u128::from(a), self.len, 128) == masked(u128::from(b), self.len, 128)
            }
            _ => false,
        }
    }
}

/// The top `len` of `width` bits of `v`.
fn masked(v: u128, len: u8, width: u32) -> u128 {
    let drop = width - u32::from(len).min(width);
    if drop >= 128 { 0 } else { v >> drop }
}

impl FromStr for AllowPrefix {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (a, l) = s.split_once('/').unwrap_or((s, ""));
        let addr: IpAddr = a
            .parse()
            .map_err(|_| format!("{s:?}: {a:?} is not an IPv4 or IPv6 address"))?;
        let max: u8 = if addr.is_ipv4() { 32 } else { 128 };
        let len = if l.is_empty() {
            max
        } else {
            match l.parse::<u8>() {
                Ok(n) if n <= max => n,
                _ => {
                    return Err(format!("{s:?}: the prefix length {l:?} is not 0 to {max}"));
                }
            }
        };
        Ok(AllowPrefix { addr, len })
    }
}

impl fmt::Display for AllowPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> AllowPrefix {
        s.parse().unwrap_or_else(|e| panic!("{e}"))
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn prefixes_match_their_addresses_only() {
        assert!(p("198.18.0.0/15").contains(ip("198.19.255.255")));
        assert!(!p("198.18.0.0/15").contains(ip("198.20.0.0")));
        assert!(p("198.18.0.0/15").contains(ip("::ffff:198.18.1.2")));
        assert!(p("127.0.0.1").contains(ip("127.0.0.1")));
        assert!(!p("127.0.0.1").contains(ip("127.0.0.2")));
        assert!(p("0.0.0.0/0").contains(ip("203.0.113.9")));
        assert!(!p("0.0.0.0/0").contains(ip("2001:db8::1")));
        assert!(p("2001:db8::/32").contains(ip("2001:db8:ffff::1")));
        assert!(!p("2001:db8::/32").contains(ip("2001:db9::1")));
        assert!(p("::/0").contains(ip("::1")));
        assert_eq!(p("10.0.0.0/8").to_string(), "10.0.0.0/8");
    }

    #[test]
    fn bad_prefixes_are_refused_by_value() {
        for bad in ["10.0.0.0/33", "::/129", "nope/8", "10.0.0.0/x", ""] {
            let e = bad.parse::<AllowPrefix>().expect_err(bad);
            assert!(e.contains(&format!("{bad:?}")), "{e}");
        }
    }
}
