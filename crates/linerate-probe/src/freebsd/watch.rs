//! `nic --watch` on FreeBSD: a NIC's per-queue counters come from its `dev.<driver>.<unit>`
//! nodes (iflib `rxqN`/`txqN`, `queueN.rx_packets`, `pf.rxqNN`, cxgbe `rxq.N`; see [`super::nic`])
//! and the interface's totals from `struct if_data`. This file turns one reading of both into
//! the sample the Linux watcher makes, so rates, wraps and resets are computed by the same code
//! ([`crate::watch::rates`]); the readings themselves are taken in `live`.

use std::collections::BTreeMap;
use std::time::Instant;

use super::snapshot::Link;
use super::{NicSysctl, QueueCounters};
use crate::queue::{self, Direction};
use crate::sample::InterfaceSample;

fn keyed(
    dir: Direction,
    queues: &[QueueCounters],
    out: &mut BTreeMap<(Direction, u32), queue::QueueCounters>,
) {
    for q in queues.iter().filter(|q| q.packets.is_some()) {
        out.insert(
            (dir, q.index),
            queue::QueueCounters {
                packets: q.packets,
                bytes: q.bytes,
                drops: None,
            },
        );
    }
}

/// A NIC's per-queue counters, keyed like the Linux driver statistics. Queues whose driver
/// prints no packet count (igb's iflib `rxqN` has only ring indices) are left out: a rate
/// cannot be made of them.
pub fn queue_counters(nic: &NicSysctl) -> BTreeMap<(Direction, u32), queue::QueueCounters> {
    let mut out = BTreeMap::new();
    keyed(Direction::Rx, &nic.queues.rx_queues, &mut out);
    keyed(Direction::Tx, &nic.queues.tx_queues, &mut out);
    out
}

/// One interface at `at`: its `if_data` counters and, when it is a NIC, its queues.
pub fn interface_sample(at: Instant, link: &Link, nic: Option<&NicSysctl>) -> InterfaceSample {
    InterfaceSample {
        at,
        ifindex: Some(link.index),
        counters: link.counters,
        queues: nic.map(queue_counters).unwrap_or_default(),
    }
}
