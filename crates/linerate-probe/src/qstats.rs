//! Per-queue counters from the kernel's `netdev` generic-netlink family (`qstats-get` with
//! queue scope, Linux 6.9+), for drivers that report queue statistics there instead of in
//! `ethtool -S` (virtio_net on current kernels, mlx5, bnxt, gve, …). The netlink client is
//! linerate-sys's; this module keys the answer like the driver statistics and says why there
//! is none.

use std::collections::BTreeMap;

use linerate_sys::netlink::{Genl, QueueKind};

use crate::queue::{Direction, QueueCounters};

/// Per-queue counters of interface `ifindex` from `netdev` netlink.
pub fn read(ifindex: u32) -> Result<BTreeMap<(Direction, u32), QueueCounters>, String> {
    let mut sock = Genl::open().map_err(|e| format!("cannot open a netlink socket: {e}"))?;
    let queues = sock
        .queue_stats(ifindex)
        .map_err(|e| match e.raw_os_error() {
            // The family lookup's answer (the dump itself answers ENODEV for a bad index).
            Some(libc::ENOENT) => {
                "the kernel has no netdev netlink family (before Linux 6.5)".to_owned()
            }
            Some(libc::EOPNOTSUPP) => {
                "the driver reports no queue statistics over netlink (EOPNOTSUPP)".to_owned()
            }
            Some(libc::EINVAL) => "the kernel has no per-queue qstats (before Linux 6.9)".into(),
            _ => format!("netdev qstats: {e}"),
        })?;
    Ok(queues
        .into_iter()
        // A queue without a packet count tells nothing a rate can be made of.
        .filter(|q| q.packets.is_some())
        .map(|q| {
            let dir = match q.kind {
                QueueKind::Rx => Direction::Rx,
                QueueKind::Tx => Direction::Tx,
            };
            let counters = QueueCounters {
                packets: q.packets,
                bytes: q.bytes,
                drops: q.hw_drops,
            };
            ((dir, q.queue), counters)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eth0_queues_add_up_to_its_counters() {
        let roots = crate::ProbeRoots::live();
        let Some(ifindex) =
            crate::roots::read_number::<u32>(&roots.sys("class/net/eth0/ifindex")).into_value()
        else {
            eprintln!("SKIP: no eth0 here");
            return;
        };
        let before = crate::interface::read_counters(&roots, "eth0")
            .into_value()
            .unwrap();
        let queues = match read(ifindex) {
            Ok(q) => q,
            Err(e) => {
                eprintln!("SKIP: eth0 has no netlink queue stats: {e}");
                return;
            }
        };
        let after = crate::interface::read_counters(&roots, "eth0")
            .into_value()
            .unwrap();
        let rx: u64 = queues
            .iter()
            .filter(|((d, _), _)| *d == Direction::Rx)
            .filter_map(|(_, c)| c.packets)
            .sum();
        // Per-queue counters may restart on reconfiguration, so they never exceed the total.
        assert!(rx <= after.rx_packets, "{rx} > {}", after.rx_packets);
        assert!(rx > 0 || before.rx_packets == 0, "{queues:?}");
    }

    #[test]
    fn loopback_has_no_queue_stats_and_says_why() {
        // lo is ifindex 1 in every namespace; it has no qstats ops.
        match read(1) {
            Ok(map) => assert!(map.is_empty(), "{map:?}"),
            Err(e) => assert!(
                e.contains("EOPNOTSUPP") || e.contains("before Linux"),
                "{e}"
            ),
        }
    }
}
