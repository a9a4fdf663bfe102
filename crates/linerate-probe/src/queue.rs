//! One queue's identity and counters, shared by the two places that read them (driver
//! statistics in [`crate::watch`], the kernel's `netdev` netlink family in [`crate::qstats`]).

/// Receive or transmit.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Receive.
    Rx,
    /// Transmit.
    Tx,
}

/// One queue's counters from the driver statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueCounters {
    /// Packets.
    pub packets: Option<u64>,
    /// Bytes.
    pub bytes: Option<u64>,
    /// Drops, when the driver counts them per queue.
    pub drops: Option<u64>,
}
