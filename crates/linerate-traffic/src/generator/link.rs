//! What the generator reads about an interface from the system: its MAC, speed and counters
//! (sysfs), its first IPv4 address (netlink), and a neighbour's MAC (`/proc/net/arp`, resolved
//! by the kernel's ARP on request).

use std::net::Ipv4Addr;

use super::config::parse_mac;
use super::document::IfCounters;
use super::error::GenError;

/// The MAC of `dev`.
pub fn read_mac(dev: &str) -> Result<[u8; 6], GenError> {
    let path = format!("/sys/class/net/{dev}/address");
    let text = std::fs::read_to_string(&path).map_err(|source| GenError::NoInterface {
        dev: dev.to_owned(),
        path: path.clone(),
        source,
    })?;
    parse_mac(text.trim()).map_err(|reason| GenError::BadMac { path, reason })
}

/// The MAC of `ip` in the neighbour table (/proc/net/arp) on `dev`.
pub fn neighbour_mac(dev: &str, ip: Ipv4Addr) -> Result<[u8; 6], GenError> {
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

/// The MAC of `ip` on `dev`: from the neighbour table, else after asking the kernel to resolve
/// it (one UDP datagram to the discard port, sent out of `dev`, makes it send ARP requests),
/// waiting up to `wait` for the answer.
pub fn resolve_neighbour(
    dev: &str,
    ip: Ipv4Addr,
    wait: std::time::Duration,
) -> Result<[u8; 6], GenError> {
    if let Ok(mac) = neighbour_mac(dev, ip) {
        return Ok(mac);
    }
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None)
        .map_err(GenError::io("opening a UDP socket to resolve a neighbour"))?;
    sock.bind_device(Some(dev.as_bytes()))
        .map_err(GenError::io(format!("binding a UDP socket to {dev}")))?;
    let to = std::net::SocketAddr::from((ip, 9));
    let started = std::time::Instant::now();
    let mut next = started;
    loop {
        let now = std::time::Instant::now();
        if now >= next {
            // An unreachable answer or a full queue is no matter: the ARP request is the point.
            let _ = sock.send_to(&[0u8; 1], &to.into());
            next = now + std::time::Duration::from_millis(500);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        if let Ok(mac) = neighbour_mac(dev, ip) {
            return Ok(mac);
        }
        if started.elapsed() >= wait {
            return Err(GenError::NoNeighbour {
                ip,
                dev: dev.to_owned(),
            });
        }
    }
}

/// The first IPv4 address of `dev`; `None` when it has none.
pub fn first_ipv4(dev: &str) -> Result<Option<Ipv4Addr>, GenError> {
    use linerate_sys::netlink::Rtnl;
    let fail = |e: linerate_sys::netlink::NetlinkError| GenError::Io {
        what: format!("reading the addresses of {dev}"),
        source: std::io::Error::other(e.to_string()),
    };
    let mut rtnl = Rtnl::open().map_err(GenError::io("opening a netlink socket"))?;
    let index = rtnl.link_index(dev).map_err(fail)?;
    Ok(rtnl
        .addresses()
        .map_err(fail)?
        .into_iter()
        .filter(|a| a.index == index)
        .find_map(|a| match a.address {
            std::net::IpAddr::V4(v4) => Some(v4),
            std::net::IpAddr::V6(_) => None,
        }))
}

/// The speed `dev` negotiated, Mbit/s; `None` when the driver does not say (a link down, or a
/// virtual interface without one).
pub fn speed_mbps(dev: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/sys/class/net/{dev}/speed")).ok()?;
    text.trim()
        .parse::<i64>()
        .ok()
        .and_then(|v| u64::try_from(v).ok())
        .filter(|v| *v > 0)
}

/// Frames `dev` has transmitted (`tx_packets`).
pub fn tx_packets(dev: &str) -> Result<u64, GenError> {
    counter(dev, "tx_packets")
}

fn counter(dev: &str, name: &str) -> Result<u64, GenError> {
    let path = format!("/sys/class/net/{dev}/statistics/{name}");
    let text =
        std::fs::read_to_string(&path).map_err(GenError::io(format!("--dev {dev}: {path}")))?;
    text.trim().parse().map_err(|source| GenError::BadCounter {
        text: text.trim().to_owned(),
        path,
        source,
    })
}

/// The receive counters of `dev` now.
pub(super) fn read_counters(dev: &str) -> Result<IfCounters, GenError> {
    Ok(IfCounters {
        rx_packets: counter(dev, "rx_packets")?,
        rx_bytes: counter(dev, "rx_bytes")?,
        rx_dropped: counter(dev, "rx_dropped")?,
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
