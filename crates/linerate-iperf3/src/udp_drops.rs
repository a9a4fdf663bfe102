//! The drop counters a side of a UDP test reads over its measured period (the `udp` of its
//! [`crate::evidence::Evidence`]): deltas of the side's network namespace, so namespace-wide
//! (other sockets of the namespace count too). [`crate::udp_limit`] turns them into a verdict.

use serde::{Deserialize, Serialize};

/// One side's UDP and interface drop counters over the measured period (deltas, IPv4 and
/// IPv6 summed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UdpCounters {
    /// Datagrams delivered to sockets (`Udp: InDatagrams`).
    pub in_datagrams: u64,
    /// Datagrams sent (`Udp: OutDatagrams`).
    pub out_datagrams: u64,
    /// Datagrams dropped at a full receive socket buffer (`Udp: RcvbufErrors`).
    pub rcvbuf_errors: u64,
    /// Datagrams refused at a full send socket buffer (`Udp: SndbufErrors`).
    pub sndbuf_errors: u64,
    /// The interfaces that moved packets in the period, with their drops.
    pub interfaces: Vec<InterfaceDrops>,
}

/// One interface's counters over the period (`/proc/net/dev`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterfaceDrops {
    /// Interface name.
    pub name: String,
    /// Packets received.
    pub rx_packets: u64,
    /// Packets sent.
    pub tx_packets: u64,
    /// Received packets dropped plus receive FIFO (ring) overruns.
    pub rx_dropped: u64,
    /// Packets dropped on transmit plus transmit FIFO errors (a full queue).
    pub tx_dropped: u64,
    /// Packets its root qdisc dropped (tc statistics; a full or shaping queue). On a UDP
    /// sender these are also counted in `SndbufErrors` (the send returned ENOBUFS).
    #[serde(default)]
    pub qdisc_dropped: u64,
    /// Packets the driver's own counters say it dropped on receive (`ethtool -S`: per-queue
    /// drops, missed, discards, out of buffer; an XDP program's drops left out), where the
    /// driver has such counters. They may count the same packets as `rx_dropped`.
    #[serde(default)]
    pub ring_dropped: u64,
}
