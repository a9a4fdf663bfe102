//! UDP's side of "why not line rate": [`UdpLimit`], the `linerate.udp_limit` object of a UDP
//! test's document, built from the drop counters each side reads over the measured period
//! ([`UdpCounters`], the `udp` of its [`crate::evidence::Evidence`]): where the lost
//! datagrams went, with counts, each side's CPU, and the settings that lift the limit.
//! Absent means unknown, never 0.

use serde::{Deserialize, Serialize};

use crate::evidence::Side;
pub use crate::udp_drops::{InterfaceDrops, UdpCounters};

/// Where datagrams were lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossPlace {
    /// Nothing was lost.
    None,
    /// The sender's socket buffer refused them (`SndbufErrors`).
    SenderSocket,
    /// The sender's interfaces dropped them on transmit.
    SenderInterface,
    /// The sender's qdisc (traffic control) dropped them: a full or shaping queue.
    SenderQdisc,
    /// The receiver's interfaces (rings, backlog) dropped them on arrival.
    ReceiverInterface,
    /// The receiving socket's buffer was full (`RcvbufErrors`).
    ReceiverSocketBuffer,
    /// Sent and neither received nor counted at either end: the path between them.
    Path,
    /// Lost, but the receiver's counters were not seen (an iperf3 server).
    Unknown,
}

/// Datagrams lost at one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LossCount {
    /// Where.
    pub place: LossPlace,
    /// How many.
    pub datagrams: u64,
}

/// One side's CPU in the period, percent of one core.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SideCpu {
    /// Which side.
    pub side: Side,
    /// The process's user time.
    pub user_percent: f64,
    /// The process's system time.
    pub system_percent: f64,
    /// The busiest single thread (user + system), when threads were read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busiest_thread_percent: Option<f64>,
    /// The busiest CPU of the busiest second (system-wide: on one host both sides see the
    /// same CPUs), busy percent of that CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busiest_cpu_percent: Option<f64>,
    /// That CPU's softirq share (where Linux receives packets), percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busiest_cpu_softirq_percent: Option<f64>,
}

/// One setting to change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingChange {
    /// The sysctl key (`net.core.rmem_max`).
    pub key: String,
    /// The value to set.
    pub value: String,
}

/// What lifts the limit, with its numbers and commands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UdpPrescription {
    /// The receive buffer that would have held what overflowed: offered rate × drain gap,
    /// bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_bytes: Option<u64>,
    /// The time the receiver fell behind (overflowed bytes over the offered rate), seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain_gap_seconds: Option<f64>,
    /// Sysctls to set on the side named.
    pub settings: Vec<SettingChange>,
    /// Which side's host the settings and flags belong to.
    pub side: Side,
    /// The flags of the run after the change (`-w 8M`, `--affinity 2,3`).
    pub flags: Vec<String>,
    /// The command that applies the settings (journaled), when there are any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply: Option<String>,
    /// The command that rolls them back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback: Option<String>,
    /// What to do and why, for people.
    pub advice: Vec<String>,
}

/// The `linerate.udp_limit` object: where a UDP test's datagrams were lost and what lifts it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UdpLimit {
    /// The place that lost the most.
    pub place: LossPlace,
    /// Datagrams the sender sent.
    pub sent: u64,
    /// Datagrams the receiver received.
    pub received: u64,
    /// Datagrams lost (sent − received; at least the receiver's own loss count).
    pub lost: u64,
    /// Every place that lost some, most first; `path` is what no counter explains.
    pub losses: Vec<LossCount>,
    /// Offered rate, bit/s.
    pub offered_bps: f64,
    /// Received rate, bit/s.
    pub received_bps: f64,
    /// Each side's CPU that was seen.
    pub cpu: Vec<SideCpu>,
    /// The limit lifted by a setting or flag, when one does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prescription: Option<UdpPrescription>,
    /// What could not be seen (the receiver's counters with an iperf3 server).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unseen: Vec<String>,
}

impl LossPlace {
    /// The place, for people.
    pub fn describe(self) -> &'static str {
        match self {
            LossPlace::None => "no loss",
            LossPlace::SenderSocket => "sender socket buffer",
            LossPlace::SenderInterface => "sender interface",
            LossPlace::SenderQdisc => "sender qdisc",
            LossPlace::ReceiverInterface => "receiver interface/ring",
            LossPlace::ReceiverSocketBuffer => "receiver socket buffer",
            LossPlace::Path => "the path",
            LossPlace::Unknown => "unknown (receiver not seen)",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_limit_writes_and_reads_back() {
        let v = json!({"place": "receiver_socket_buffer", "sent": 10, "received": 6, "lost": 4,
            "losses": [{"place": "receiver_socket_buffer", "datagrams": 4}],
            "offered_bps": 1e6, "received_bps": 6e5,
            "cpu": [{"side": "server", "user_percent": 1.0, "system_percent": 50.0}]});
        let l: UdpLimit = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(l.losses[0].place, LossPlace::ReceiverSocketBuffer);
        assert_eq!(serde_json::to_value(&l).unwrap(), v);
        let mut bad = v;
        bad.as_object_mut().unwrap().remove("sent");
        assert!(serde_json::from_value::<UdpLimit>(bad).is_err());
    }
}
