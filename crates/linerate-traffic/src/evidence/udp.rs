//! A side's UDP and interface drop counters over the measured period: read once when the
//! period begins and once when it ends, in the recorder's thread (so in the namespace the
//! side runs in), and handed back as deltas ([`UdpCounters`]). Linux reads procfs through
//! `linerate_sys::netstat`; elsewhere nothing is read and the figures are unknown.

use linerate_iperf3::udp_limit::UdpCounters;

/// How long the last reading waits for datagrams still on their way in.
#[cfg(target_os = "linux")]
const SETTLE: std::time::Duration = std::time::Duration::from_millis(100);

/// The counters read when the period began.
#[derive(Debug)]
pub(crate) struct UdpAcc {
    #[cfg(target_os = "linux")]
    before: Option<Reading>,
}

/// One reading: the namespace's UDP counters, its interfaces' counters, each interface's
/// root qdisc drops by name, and each interface's driver receive drops by name.
#[cfg(target_os = "linux")]
type Reading = (
    linerate_sys::netstat::UdpSnmp,
    Vec<linerate_sys::netstat::NetDev>,
    Vec<(String, u64)>,
    Vec<(String, u64)>,
);

#[cfg(target_os = "linux")]
fn read() -> Option<Reading> {
    let interfaces = linerate_sys::netstat::interfaces().ok()?;
    let rings = ring_drops(&interfaces);
    Some((
        linerate_sys::netstat::udp().ok()?,
        interfaces,
        qdisc_drops(),
        rings,
    ))
}

/// Whether a driver statistic (`ethtool -S` name) counts packets dropped on receive for want
/// of a ring slot, buffer or queue: per-queue `drops` (veth, virtio, ena), `rx_missed_errors`
/// and `rx_no_dma_resources` (ixgbe), `rx_out_of_buffer` and `rx_discards_phy` (mlx5),
/// `port.rx_discards` (i40e). Drops an XDP program chose, and transmit counters, are not.
#[cfg(any(target_os = "linux", test))]
fn is_ring_drop(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    !n.contains("xdp")
        && !n.starts_with("tx")
        && !n.contains(".tx")
        && !n.contains("_tx_")
        && [
            "drop",
            "discard",
            "missed",
            "out_of_buffer",
            "no_dma",
            "no_buf",
        ]
        .iter()
        .any(|k| n.contains(k))
}

/// Each interface's driver receive drops (the sum of its [`is_ring_drop`] statistics), by
/// name; interfaces whose driver has no statistics are left out (unknown, not zero).
#[cfg(target_os = "linux")]
fn ring_drops(interfaces: &[linerate_sys::netstat::NetDev]) -> Vec<(String, u64)> {
    let Ok(ethtool) = linerate_sys::ethtool::Ethtool::open() else {
        return Vec::new();
    };
    interfaces
        .iter()
        .filter(|i| i.name != "lo")
        .filter_map(|i| {
            let stats = ethtool.stats(&i.name).ok()?;
            let sum = stats
                .iter()
                .filter(|(n, _)| is_ring_drop(n))
                .map(|(_, v)| *v)
                .sum::<u64>();
            Some((i.name.clone(), sum))
        })
        .collect()
}

/// Each interface's root qdisc drops, by name (empty when rtnetlink cannot be read: the
/// qdisc's drops are then unknown and stay in `SndbufErrors`).
#[cfg(target_os = "linux")]
fn qdisc_drops() -> Vec<(String, u64)> {
    let Ok(mut rtnl) = linerate_sys::netlink::Rtnl::open() else {
        return Vec::new();
    };
    let (Ok(links), Ok(drops)) = (rtnl.links(), rtnl.qdisc_drops()) else {
        return Vec::new();
    };
    drops
        .into_iter()
        .filter_map(|(index, d)| {
            let l = links.iter().find(|l| l.index == index)?;
            Some((l.name.clone(), d))
        })
        .collect()
}

impl UdpAcc {
    /// The first reading.
    pub(crate) fn begin() -> UdpAcc {
        UdpAcc {
            #[cfg(target_os = "linux")]
            before: read(),
        }
    }

    /// The period's deltas; `None` when either reading failed (or off Linux). Interfaces
    /// that moved no packet in the period are left out.
    ///
    /// The last reading waits [`SETTLE`] first: datagrams the peer sent before it ended the
    /// test may still be queued on their way in (another CPU's backlog) when the receiving
    /// thread stops, and the ones that then find its buffer full are this test's overflows.
    #[cfg(target_os = "linux")]
    pub(crate) fn finish(&self) -> Option<UdpCounters> {
        use linerate_iperf3::udp_limit::InterfaceDrops;
        let (u0, d0, q0, r0) = self.before.as_ref()?;
        std::thread::sleep(SETTLE);
        let (u1, d1, q1, r1) = read()?;
        let qdisc = |q: &[(String, u64)], name: &str| {
            q.iter().find(|(n, _)| n == name).map_or(0, |(_, d)| *d)
        };
        let interfaces = d1
            .iter()
            .filter_map(|b| {
                let a = d0.iter().find(|a| a.name == b.name)?;
                let d = |x: u64, y: u64| y.saturating_sub(x);
                let i = InterfaceDrops {
                    name: b.name.clone(),
                    rx_packets: d(a.rx_packets, b.rx_packets),
                    tx_packets: d(a.tx_packets, b.tx_packets),
                    rx_dropped: d(a.rx_dropped + a.rx_fifo, b.rx_dropped + b.rx_fifo),
                    tx_dropped: d(a.tx_dropped + a.tx_fifo, b.tx_dropped + b.tx_fifo),
                    qdisc_dropped: d(qdisc(q0, &a.name), qdisc(&q1, &b.name)),
                    ring_dropped: d(qdisc(r0, &a.name), qdisc(&r1, &b.name)),
                };
                (i.rx_packets
                    + i.tx_packets
                    + i.rx_dropped
                    + i.tx_dropped
                    + i.qdisc_dropped
                    + i.ring_dropped
                    > 0)
                .then_some(i)
            })
            .collect();
        Some(UdpCounters {
            in_datagrams: u1.in_datagrams.saturating_sub(u0.in_datagrams),
            out_datagrams: u1.out_datagrams.saturating_sub(u0.out_datagrams),
            rcvbuf_errors: u1.rcvbuf_errors.saturating_sub(u0.rcvbuf_errors),
            sndbuf_errors: u1.sndbuf_errors.saturating_sub(u0.sndbuf_errors),
            interfaces,
        })
    }

    /// Off Linux nothing is read.
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn finish(&self) -> Option<UdpCounters> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::is_ring_drop;

    #[test]
    fn receive_drop_counters_of_real_drivers_are_ring_drops_and_xdp_or_transmit_ones_are_not() {
        for name in [
            "rx_queue_0_drops",    // veth, virtio_net
            "rx_missed_errors",    // ixgbe
            "rx_no_dma_resources", // ixgbe
            "rx_out_of_buffer",    // mlx5
            "rx_discards_phy",     // mlx5
            "port.rx_discards",    // i40e
            "rx_drops",            // ena
        ] {
            assert!(is_ring_drop(name), "{name}");
        }
        for name in [
            "rx_queue_0_xdp_drops",
            "tx_queue_0_xdp_xmit_errors",
            "tx_dropped",
            "port.tx_discards",
            "rx_queue_0_packets",
            "peer_ifindex",
        ] {
            assert!(!is_ring_drop(name), "{name}");
        }
    }
}
