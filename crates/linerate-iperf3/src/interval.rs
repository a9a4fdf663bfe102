//! One element of the document's `intervals` array.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::de;

/// One reporting interval: each stream, and the sum over the streams of each direction.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Per stream.
    #[serde(default)]
    pub streams: Vec<IntervalReport>,
    /// The sum (of the client's sending streams with `--bidir`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum: Option<IntervalReport>,
    /// With `--bidir`: the sum of the client's receiving streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum_bidir_reverse: Option<IntervalReport>,
    /// Keys this schema does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What one stream (or a sum, without `socket`) moved in one interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalReport {
    /// The stream's socket number; absent in sums.
    #[serde(
        default,
        deserialize_with = "de::opt_int",
        skip_serializing_if = "Option::is_none"
    )]
    pub socket: Option<i64>,
    /// Seconds from the start of the test (of the measurement, after `-O`).
    #[serde(deserialize_with = "de::number")]
    pub start: f64,
    /// Seconds from the start of the test.
    #[serde(deserialize_with = "de::number")]
    pub end: f64,
    /// Interval length, seconds.
    #[serde(
        default,
        deserialize_with = "de::opt_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub seconds: Option<f64>,
    /// Bytes moved.
    #[serde(deserialize_with = "de::count")]
    pub bytes: u64,
    /// Rate over the interval.
    #[serde(deserialize_with = "de::number")]
    pub bits_per_second: f64,
    /// TCP retransmits (sender); `None` when unknown.
    #[serde(
        default,
        deserialize_with = "de::counter",
        skip_serializing_if = "Option::is_none"
    )]
    pub retransmits: Option<u64>,
    /// TCP congestion window, bytes (sender).
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub snd_cwnd: Option<u64>,
    /// TCP send window, bytes (sender, 3.12+).
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub snd_wnd: Option<u64>,
    /// TCP smoothed RTT, µs (sender).
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub rtt: Option<u64>,
    /// TCP RTT variance, µs (sender).
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub rttvar: Option<u64>,
    /// Path MTU (sender).
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub pmtu: Option<u64>,
    /// UDP jitter, ms (receiver).
    #[serde(
        default,
        deserialize_with = "de::opt_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub jitter_ms: Option<f64>,
    /// UDP datagrams lost (receiver).
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
    /// UDP lost share, percent (receiver).
    #[serde(
        default,
        deserialize_with = "de::opt_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub lost_percent: Option<f64>,
    /// UDP datagrams out of order (receiver; linerate writes it per interval).
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub out_of_order: Option<u64>,
    /// UDP datagrams received twice (linerate only).
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub duplicates: Option<u64>,
    /// Inside the omitted warm-up (`-O`).
    #[serde(
        default,
        deserialize_with = "de::lenient_bool",
        skip_serializing_if = "Option::is_none"
    )]
    pub omitted: Option<bool>,
    /// Whether this side sent (3.8+; older versions report the client's sending side only).
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
