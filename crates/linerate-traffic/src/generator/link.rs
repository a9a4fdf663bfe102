//! What the generator reads about an interface from the system: its MAC (sysfs), a
//! neighbour's MAC (`/proc/net/arp`) and its receive counters (sysfs).

use std::net::Ipv4Addr;

use super::config::parse_mac;
use super::document::IfCounters;
use super::error::GenError;

/// The MAC of `dev`.
pub(super) fn read_mac(dev: &str) -> Result<[u8; 6], GenError> {
    let path = format!("/sys/class/net/{dev}/address");
    let text = std::fs::read_to_string(&path).map_err(|source| GenError::NoInterface {
        dev: dev.to_owned(),
        path: path.clone(),
        source,
    })?;
    parse_mac(text.trim()).map_err(|reason| GenError::BadMac { path, reason })
}

/// The MAC of `ip` in the neighbour table (/proc/net/arp) on `dev`.
pub(super) fn neighbour_mac(dev: &str, ip: Ipv4Addr) -> Result<[u8; 6], GenError> {
    let text =
        std::fs::read_to_string("/proc/net/arp").map_err(GenError::io("reading /proc/net/arp"))?;
    let want = ip.to_string();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() >= 6 && f[0] == want && f[5] == dev && f[3] != "00:00:00:00:00:00" {
            return parse_mac(f[3]).map_err(|reason| GenError::BadMac {
                path: "/proc/net/arp".into(),
                reason,
            });
        }
    }
    Err(GenError::NoNeighbour {
        ip,
        dev: dev.to_owned(),
    })
}

/// The receive counters of `dev` now.
pub(super) fn read_counters(dev: &str) -> Result<IfCounters, GenError> {
    let one = |name: &str| -> Result<u64, GenError> {
        let path = format!("/sys/class/net/{dev}/statistics/{name}");
        let text =
            std::fs::read_to_string(&path).map_err(GenError::io(format!("--dev {dev}: {path}")))?;
        text.trim().parse().map_err(|source| GenError::BadCounter {
            text: text.trim().to_owned(),
            path,
            source,
        })
    };
    Ok(IfCounters {
        rx_packets: one("rx_packets")?,
        rx_bytes: one("rx_bytes")?,
        rx_dropped: one("rx_dropped")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_interface_names_it() {
        let err = read_mac("lr-no-such-dev").expect_err("no such interface");
        assert!(
            err.to_string()
                .starts_with("--dev lr-no-such-dev: no such interface"),
            "{err}"
        );
    }
}
