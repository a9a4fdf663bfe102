//! Who may test: `--allow PREFIX` (repeatable). An address outside every prefix is closed at
//! once, before it can hold a handshake slot. IPv4 clients of a dual-stack listener arrive as
//! IPv4-mapped IPv6 addresses and are matched as IPv4.

use std::net::IpAddr;

/// An address prefix: `198.18.0.0/15`, `2001:db8::/32`, or one address (`/32`, `/128`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefix {
    addr: IpAddr,
    len: u8,
}

impl std::fmt::Display for Prefix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

impl std::str::FromStr for Prefix {
    type Err = String;

    fn from_str(s: &str) -> Result<Prefix, String> {
        let (a, l) = s.split_once('/').unwrap_or((s, ""));
        let addr: IpAddr = a
            .trim()
            .parse()
            .map_err(|_| format!("{s:?}: not an address or ADDRESS/LENGTH prefix"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let len = if l.is_empty() {
            max
        } else {
            l.trim()
                .parse::<u8>()
                .ok()
                .filter(|&n| n <= max)
                .ok_or_else(|| format!("{s:?}: the prefix length must be 0 to {max}"))?
        };
        let p = Prefix { addr, len };
        if p.network() != p.addr {
            return Err(format!(
                "{s:?}: host bits are set (did you mean {}/{len}?)",
                p.network()
            ));
        }
        Ok(p)
    }
}

fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

impl Prefix {
    fn masked(ip: IpAddr, len: u8) -> IpAddr {
        match ip {
            IpAddr::V4(a) => {
                let m = if len == 0 {
                    0
                } else {
                    u32::MAX << (32 - u32::from(len))
                };
                IpAddr::V4((u32::from(a) & m).into())
            }
            IpAddr::V6(a) => {
                let m = if len == 0 {
                    0
                } else {
                    u128::MAX << (128 - u32::from(len))
                };
                IpAddr::V6((u128::from(a) & m).into())
            }
        }
    }

    fn network(&self) -> IpAddr {
        Prefix::masked(self.addr, self.len)
    }

    /// Whether `ip` is inside the prefix.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        ip.is_ipv4() == self.addr.is_ipv4() && Prefix::masked(ip, self.len) == self.addr
    }
}

/// Whether `ip` may test: every address when `allow` is empty, else one inside a prefix.
pub fn allowed(allow: &[Prefix], ip: IpAddr) -> bool {
    allow.is_empty() || allow.iter().any(|p| p.contains(ip))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Prefix {
        s.parse().expect("valid prefix")
    }

    #[test]
    fn prefixes_match_v4_v6_and_mapped_addresses() {
        let bench = p("198.18.0.0/15");
        assert!(bench.contains("198.19.255.1".parse().expect("ip")));
        assert!(!bench.contains("198.20.0.1".parse().expect("ip")));
        assert!(bench.contains("::ffff:198.18.0.7".parse().expect("ip")));
        assert!(!bench.contains("2001:db8::1".parse().expect("ip")));
        assert!(p("2001:db8::/32").contains("2001:db8:1::2".parse().expect("ip")));
        assert!(p("127.0.0.1").contains("127.0.0.1".parse().expect("ip")));
        assert!(!p("127.0.0.1").contains("127.0.0.2".parse().expect("ip")));
        assert!(p("0.0.0.0/0").contains("8.8.8.8".parse().expect("ip")));
        assert!(allowed(&[], "8.8.8.8".parse().expect("ip")));
        assert!(!allowed(&[bench], "8.8.8.8".parse().expect("ip")));
    }

    #[test]
    fn bad_prefixes_say_why() {
        assert!(
            "198.18.0.1/15"
                .parse::<Prefix>()
                .expect_err("host bits")
                .contains("198.18.0.0/15")
        );
        assert!(
            "10.0.0.0/33"
                .parse::<Prefix>()
                .expect_err("len")
                .contains("0 to 32")
        );
        assert!("nope".parse::<Prefix>().is_err());
        assert_eq!(p("10.0.0.0/8").to_string(), "10.0.0.0/8");
    }
}
