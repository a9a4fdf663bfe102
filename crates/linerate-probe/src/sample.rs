//! One reading of the watched counters: [`InterfaceSample`] per interface and the [`Sample`]
//! of all of them, made by [`crate::watch::Sampler`] (Linux: sysfs, ethtool, netlink; FreeBSD:
//! `if_data` and the queue sysctls) and turned into rates by [`crate::watch::rates`]. A leaf,
//! so both samplers can build them without depending on each other.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::Probed;
use crate::interface::Counters;
use crate::queue::{Direction, QueueCounters};
use crate::softnet::SoftnetCpu;

/// One interface at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct InterfaceSample {
    /// When its counters were read.
    pub at: Instant,
    /// Interface index (changes when the interface is re-created).
    pub ifindex: Option<u32>,
    /// Kernel counters.
    pub counters: Counters,
    /// Per-queue driver counters (empty when the driver has none).
    pub queues: BTreeMap<(Direction, u32), QueueCounters>,
}

/// Everything at one instant.
#[derive(Debug, Clone)]
pub struct Sample {
    /// When the softnet counters were read.
    pub at: Instant,
    /// Each watched interface, or why it could not be read (it vanished).
    pub interfaces: BTreeMap<String, Result<InterfaceSample, String>>,
    /// Softnet counters.
    pub softnet: Probed<Vec<SoftnetCpu>>,
}
