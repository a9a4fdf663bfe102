//! The document's `end` object: totals per stream and per direction, CPU use, congestion
//! control.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::de;

/// `end`. Empty when the test did not finish.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct End {
    /// Per stream (left out when empty, as in iperf3's `end` of a failed test).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<EndStream>,
    /// UDP: the sender's bytes with the receiver's loss and jitter (the only sum before 3.9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum: Option<EndReport>,
    /// What the senders sent (the client's sending direction with `--bidir`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum_sent: Option<EndReport>,
    /// What the receivers got: the headline throughput.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum_received: Option<EndReport>,
    /// UDP `--bidir`: `sum` of the reverse direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum_bidir_reverse: Option<EndReport>,
    /// `--bidir`: what the reverse direction's senders sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum_sent_bidir_reverse: Option<EndReport>,
    /// `--bidir`: what the reverse direction's receivers got.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum_received_bidir_reverse: Option<EndReport>,
    /// CPU use of both ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_utilization_percent: Option<CpuUtilization>,
    /// Congestion control of the sending side (TCP).
    #[serde(
        default,
        deserialize_with = "de::lenient_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub sender_tcp_congestion: Option<String>,
    /// Congestion control of the receiving side (TCP).
    #[serde(
        default,
        deserialize_with = "de::lenient_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub receiver_tcp_congestion: Option<String>,
    /// Keys this schema does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl End {
    /// Whether `end` holds nothing (iperf3 writes `{}` for a test that did not finish).
    pub fn is_empty(&self) -> bool {
        *self == End::default()
    }
}

/// One stream's totals: `sender` and `receiver` for TCP, `udp` for UDP.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EndStream {
    /// The sending side's totals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<EndReport>,
    /// The receiving side's totals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver: Option<EndReport>,
    /// UDP totals (the sender's bytes, the receiver's loss).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp: Option<EndReport>,
    /// Keys this schema does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Totals of one side of a stream, or of all streams going one way.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EndReport {
    /// The stream's socket number; absent in sums.
    #[serde(
        default,
        deserialize_with = "de::opt_int",
        skip_serializing_if = "Option::is_none"
    )]
    pub socket: Option<i64>,
    /// Seconds from the start (0).
    #[serde(
        default,
        deserialize_with = "de::opt_number",
        serialize_with = "de::whole_as_integer",
        skip_serializing_if = "Option::is_none"
    )]
    pub start: Option<f64>,
    /// Seconds from the start.
    #[serde(
        default,
        deserialize_with = "de::opt_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub end: Option<f64>,
    /// Seconds measured.
    #[serde(
        default,
        deserialize_with = "de::opt_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub seconds: Option<f64>,
    /// Bytes.
    #[serde(deserialize_with = "de::count")]
    pub bytes: u64,
    /// Rate.
    #[serde(deserialize_with = "de::number")]
    pub bits_per_second: f64,
    /// TCP retransmits (sender); `None` when unknown.
    #[serde(
        default,
        deserialize_with = "de::counter",
        skip_serializing_if = "Option::is_none"
    )]
    pub retransmits: Option<u64>,
    /// Largest congestion window, bytes (TCP sender).
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_snd_cwnd: Option<u64>,
    /// Largest send window, bytes (TCP sender, 3.12+).
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_snd_wnd: Option<u64>,
    /// Largest RTT, µs (TCP sender).
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_rtt: Option<u64>,
    /// Smallest RTT, µs (TCP sender).
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub min_rtt: Option<u64>,
    /// Mean RTT, µs (TCP sender).
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub mean_rtt: Option<u64>,
    /// UDP jitter, ms.
    #[serde(
        default,
        deserialize_with = "de::opt_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub jitter_ms: Option<f64>,
    /// UDP datagrams lost.
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub lost_packets: Option<u64>,
    /// UDP datagrams.
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub packets: Option<u64>,
    /// UDP lost share, percent.
    #[serde(
        default,
        deserialize_with = "de::opt_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub lost_percent: Option<f64>,
    /// UDP datagrams out of order.
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub out_of_order: Option<u64>,
    /// Whether the reporting side sent.
    #[serde(
        default,
        deserialize_with = "de::lenient_bool",
        skip_serializing_if = "Option::is_none"
    )]
    pub sender: Option<bool>,
    /// Keys this schema does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `cpu_utilization_percent`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuUtilization {
    /// This side, total.
    #[serde(default, deserialize_with = "de::opt_number")]
    pub host_total: Option<f64>,
    /// This side, user.
    #[serde(default, deserialize_with = "de::opt_number")]
    pub host_user: Option<f64>,
    /// This side, system.
    #[serde(default, deserialize_with = "de::opt_number")]
    pub host_system: Option<f64>,
    /// The peer, total.
    #[serde(default, deserialize_with = "de::opt_number")]
    pub remote_total: Option<f64>,
    /// The peer, user.
    #[serde(default, deserialize_with = "de::opt_number")]
    pub remote_user: Option<f64>,
    /// The peer, system.
    #[serde(default, deserialize_with = "de::opt_number")]
    pub remote_system: Option<f64>,
    /// Keys this schema does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
