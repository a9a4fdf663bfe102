//! The `linerate.limit` object: why a TCP test moved what it moved and not its path's ceiling
//! — the limit that held each stream and the test, with the evidence figures behind it, the
//! share of the test it held, and for a limit a setting lifts, the prescription. Written by
//! `linerate-explain` from the test's evidence (`linerate.evidence`) and read back by `show`,
//! `report` and `lab run`; one type for writer and reader.

use serde::{Deserialize, Serialize};

use crate::evidence::Side;
use crate::udp_limit::SettingChange;

/// What held a stream or a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    /// Within 10 % of the path's ceiling: nothing to lift.
    AtCeiling,
    /// The receiver's advertised window (its buffer, `-w`, or a reader that does not drain).
    ReceiveWindow,
    /// The sender's socket buffer (`tcp_wmem`, `-w`).
    SendBuffer,
    /// The congestion window after loss (retransmissions), with the Mathis bound beside it.
    Congestion,
    /// A CPU: one side's thread or the core it runs on.
    Cpu,
    /// The application sent less than the path takes (`-b`, pacing).
    ApplicationLimited,
    /// The evidence does not name one (said why).
    Unknown,
}

impl LimitKind {
    /// The limit, for people.
    pub fn describe(self) -> &'static str {
        match self {
            LimitKind::AtCeiling => "at the path's ceiling",
            LimitKind::ReceiveWindow => "receive window",
            LimitKind::SendBuffer => "send buffer",
            LimitKind::Congestion => "congestion/loss",
            LimitKind::Cpu => "CPU",
            LimitKind::ApplicationLimited => "application-limited",
            LimitKind::Unknown => "unknown",
        }
    }
}

/// One figure of evidence: a named number with its unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// What it is (`sndbuf_limited`, `min_rtt`, `mathis_bound`).
    pub name: String,
    /// The number.
    pub value: f64,
    /// Its unit (`%`, `us`, `bytes`, `bit/s`, `segments`).
    pub unit: String,
}

/// The path's ceiling for one TCP flow, computed by `linerate-calc` (`bdp::path_report`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ceiling {
    /// The path's rate, bit/s.
    pub path_rate_bps: f64,
    /// Where the rate came from (`--path-rate`, `the lab's link`, `egress NIC eth0`).
    pub source: String,
    /// The least RTT measured, microseconds.
    pub min_rtt_us: u64,
    /// The IP MTU.
    pub mtu: u64,
    /// TCP payload per segment.
    pub mss: u64,
    /// TCP goodput at the path's rate in full-size segments, bit/s.
    pub goodput_bps: f64,
    /// Bandwidth-delay product at the least RTT, bytes.
    pub bdp_bytes: u64,
}

/// Where CPU held the test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuLimit {
    /// The side whose CPU it was.
    pub side: Side,
    /// The thread that ran the stream, when named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<String>,
    /// The CPU it ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<u64>,
    /// The thread's user time, percent of one core.
    pub user_percent: f64,
    /// The thread's system time, percent of one core.
    pub system_percent: f64,
    /// The CPU's busy time, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_busy_percent: Option<f64>,
    /// The CPU's softirq share, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub softirq_percent: Option<f64>,
    /// The core was busy (≥ 95 %) the whole test: "one core at 100 %".
    pub one_core_full: bool,
}

/// What lifts a settings limit: the very numbers `calc bdp` and `tune` give for the path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prescription {
    /// The host whose settings hold the limit.
    pub side: Side,
    /// The keys and values (`linerate_tuning::buffers::linux` for this path and kernel).
    pub settings: Vec<SettingChange>,
    /// The Linux version whose defaults the values start from.
    pub kernel: String,
    /// One flow's ceiling after the change (calc's, with the new buffer's window), bit/s.
    pub predicted_bps: f64,
    /// The command that applies it, journaled.
    pub apply: String,
    /// The command that rolls it back.
    pub rollback: String,
    /// How to prove the gain.
    pub prove: String,
}

/// One stream's limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamLimit {
    /// The stream's id.
    pub id: i64,
    /// The limit.
    pub kind: LimitKind,
    /// The share of the stream's busy time the limit held, percent, where a clock measures it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_percent: Option<f64>,
    /// The rate the stream moved, bit/s.
    pub bits_per_second: f64,
    /// The evidence.
    pub figures: Vec<Figure>,
}

/// The `linerate.limit` object of a TCP test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TcpLimit {
    /// The test's limit: the limit of the streams that moved most of its bytes.
    pub kind: LimitKind,
    /// Why, in one sentence with the figures.
    pub why: String,
    /// The share of the test the limit held, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_percent: Option<f64>,
    /// The test's rate, bit/s.
    pub bits_per_second: f64,
    /// The path's ceiling, when the path's rate is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<Ceiling>,
    /// The Mathis bound at the measured loss, bit/s (beside the measured rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mathis_bps: Option<f64>,
    /// The CPU that held it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuLimit>,
    /// Per stream.
    pub streams: Vec<StreamLimit>,
    /// What lifts it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prescription: Option<Prescription>,
    /// What could not be seen (the receiver's side with an iperf3 peer, the path's rate).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unseen: Vec<String>,
}
