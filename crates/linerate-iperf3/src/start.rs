//! The document's `start` object: what was connected and what the test was asked to do.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::de;

/// `start`. A client writes `connecting_to`, a server `accepted_connection`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Start {
    /// The data connections.
    #[serde(default)]
    pub connected: Vec<Connected>,
    /// `iperf 3.12`, `linerate 0.1.0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `uname`-like description of the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_info: Option<String>,
    /// When the test started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
    /// The server the client connected to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connecting_to: Option<HostPort>,
    /// The client a server accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted_connection: Option<HostPort>,
    /// The test's cookie.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cookie: Option<String>,
    /// MSS of the control connection (TCP).
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub tcp_mss_default: Option<u64>,
    /// Target rate per stream, bit/s (0: unlimited).
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub target_bitrate: Option<u64>,
    /// Fair-queue pacing rate, bit/s.
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub fq_rate: Option<u64>,
    /// Requested socket buffer size (0: the system's).
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub sock_bufsize: Option<u64>,
    /// SO_SNDBUF as set.
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub sndbuf_actual: Option<u64>,
    /// SO_RCVBUF as set.
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub rcvbuf_actual: Option<u64>,
    /// The test's parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_start: Option<TestStart>,
    /// Keys this schema does not know (other iperf3 versions'), kept as they were.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One data connection.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Connected {
    /// The stream's socket number (iperf3's stream id).
    #[serde(default, deserialize_with = "de::opt_int")]
    pub socket: Option<i64>,
    /// Local address.
    #[serde(default)]
    pub local_host: String,
    /// Local port.
    #[serde(default, deserialize_with = "de::opt_count")]
    pub local_port: Option<u64>,
    /// Remote address.
    #[serde(default)]
    pub remote_host: String,
    /// Remote port.
    #[serde(default, deserialize_with = "de::opt_count")]
    pub remote_port: Option<u64>,
    /// Keys this schema does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `timestamp`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timestamp {
    /// `Sat, 21 Nov 2026 23:30:25 GMT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// Unix seconds.
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub timesecs: Option<u64>,
    /// Keys this schema does not know (`timemillisecs`, 3.17+).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A host and port (`connecting_to`, `accepted_connection`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostPort {
    /// Host as given or address.
    #[serde(default)]
    pub host: String,
    /// Port.
    #[serde(default, deserialize_with = "de::opt_count")]
    pub port: Option<u64>,
}

/// `test_start`: the parameters as the test runs them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TestStart {
    /// `TCP`, `UDP` or `SCTP`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// Streams per direction.
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub num_streams: Option<u64>,
    /// Write size or datagram payload, bytes.
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub blksize: Option<u64>,
    /// Seconds omitted at the start.
    #[serde(
        default,
        deserialize_with = "de::opt_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub omit: Option<f64>,
    /// Planned length, seconds.
    #[serde(
        default,
        deserialize_with = "de::opt_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub duration: Option<f64>,
    /// Byte budget (0: none).
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub bytes: Option<u64>,
    /// Block budget (0: none).
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub blocks: Option<u64>,
    /// 1 when the server sends (`-R`).
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub reverse: Option<u64>,
    /// IP TOS byte.
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub tos: Option<u64>,
    /// Target rate per stream, bit/s.
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub target_bitrate: Option<u64>,
    /// 1 when both sides send (`--bidir`; written since 3.13).
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub bidir: Option<u64>,
    /// Fair-queue pacing rate, bit/s.
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub fqrate: Option<u64>,
    /// Reporting interval, seconds.
    #[serde(
        default,
        deserialize_with = "de::opt_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub interval: Option<f64>,
    /// Keys this schema does not know (`gso`, `gro`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
