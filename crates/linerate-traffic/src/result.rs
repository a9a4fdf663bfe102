//! The results model: what a run measured, as data. Shaped like iperf3's `--json`
//! (`start`, `intervals`, `end`) so the conversion in [`crate::iperf3_json`] is direct; the
//! modes' figures are the `linerate` object's types from `linerate-iperf3`.

use linerate_iperf3::Document;
use serde::{Deserialize, Serialize};

pub use linerate_iperf3::linerate::{
    PeerInfo, PeerKind, PlacementReport, PpsResult, ReceivePath, RrInterval, RrResult, ThreadReport,
};

use crate::config::{Direction, Mode, Protocol};
use crate::cpu::CpuUtil;

/// The `schema` of a serialised [`RunResult`].
pub const SCHEMA: &str = "linerate.traffic/1";

/// One test as the client saw it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    /// [`SCHEMA`].
    pub schema: String,
    /// Set-up facts.
    pub start: StartInfo,
    /// Per-interval samples (omitted ones flagged).
    pub intervals: Vec<Interval>,
    /// Totals.
    pub end: EndInfo,
    /// What the pps/rr/crr modes and `--affinity` add ([`crate::modes`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modes: Option<ModeResult>,
    /// What both sides sampled to explain the rate ([`crate::evidence`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<linerate_iperf3::evidence::TestEvidence>,
}

/// Everything the modes add to a run's result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModeResult {
    /// pps figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pps: Option<PpsResult>,
    /// rr/crr figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rr: Option<RrResult>,
    /// The client's workers.
    pub threads: Vec<ThreadReport>,
    /// The server's workers (when the server reports them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_threads: Vec<ThreadReport>,
    /// `--zerocopy`: each side's send and receive paths (the server's when it reports them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zerocopy: Vec<linerate_iperf3::linerate::ZeroCopyReport>,
}

/// One data connection.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Connection {
    /// iperf3 stream id.
    pub id: i64,
    /// From the client's view.
    pub direction: Direction,
    /// Local socket address.
    pub local: String,
    /// Remote socket address.
    pub remote: String,
}

/// Facts known when the test starts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StartInfo {
    /// This engine's version.
    pub engine_version: String,
    /// Start, seconds since the Unix epoch.
    pub timestamp: u64,
    /// The session cookie.
    pub cookie: String,
    /// The server.
    pub peer: PeerInfo,
    /// Data connections.
    pub connected: Vec<Connection>,
    /// TCP or UDP.
    pub protocol: Protocol,
    /// Test mode.
    pub mode: Mode,
    /// Streams per direction.
    pub parallel: u32,
    /// Server sends.
    pub reverse: bool,
    /// Both send.
    pub bidir: bool,
    /// Write size or datagram payload.
    pub blksize: u64,
    /// Omitted seconds.
    pub omit_secs: f64,
    /// Planned length in seconds.
    pub duration_secs: f64,
    /// Byte budget (0: none).
    pub bytes: u64,
    /// Block budget (0: none).
    pub blocks: u64,
    /// Target rate per stream in bit/s (0: unlimited).
    pub target_bitrate: u64,
    /// TOS byte.
    pub tos: u8,
    /// Reporting interval in seconds.
    pub interval_secs: f64,
    /// MSS of the control connection.
    pub tcp_mss_default: Option<u32>,
    /// Requested socket buffer size (0: default).
    pub sock_bufsize: u64,
    /// Actual SO_SNDBUF of the first stream.
    pub sndbuf_actual: u64,
    /// Actual SO_RCVBUF of the first stream.
    pub rcvbuf_actual: u64,
    /// `uname`-like description of this host.
    pub system_info: String,
}

/// TCP_INFO at the end of an interval (sending streams only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TcpSample {
    /// Retransmits in the interval.
    pub retransmits: u64,
    /// Congestion window, bytes.
    pub snd_cwnd: u64,
    /// Smoothed RTT, µs.
    pub rtt_us: u32,
    /// RTT variance, µs.
    pub rttvar_us: u32,
    /// Path MTU.
    pub pmtu: u32,
}

/// UDP counts in an interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct UdpSample {
    /// Datagrams sent (sender) or expected (receiver).
    pub packets: u64,
    /// Lost (receiver).
    pub lost: u64,
    /// Out of order (receiver).
    pub out_of_order: u64,
    /// Duplicates (receiver).
    pub duplicates: u64,
    /// Jitter at the end of the interval, ms (receiver).
    pub jitter_ms: f64,
}

/// One stream in one interval.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StreamInterval {
    /// Stream id.
    pub id: i64,
    /// From the local view.
    pub direction: Direction,
    /// Bytes in the interval.
    pub bytes: u64,
    /// Rate over the interval.
    pub bits_per_second: f64,
    /// TCP sender details.
    pub tcp: Option<TcpSample>,
    /// UDP details.
    pub udp: Option<UdpSample>,
}

/// One reporting interval.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Interval {
    /// Seconds from the start of measurement (after the omitted period).
    pub start: f64,
    /// Seconds from the start of measurement.
    pub end: f64,
    /// Inside the omitted period.
    pub omitted: bool,
    /// Per stream.
    pub streams: Vec<StreamInterval>,
}

impl Interval {
    /// Interval length in seconds.
    pub fn seconds(&self) -> f64 {
        (self.end - self.start).max(0.0)
    }

    /// Sum of the streams going `direction`.
    pub fn sum(&self, direction: Direction) -> IntervalSum {
        let mut s = IntervalSum::default();
        for st in self.streams.iter().filter(|s| s.direction == direction) {
            s.streams += 1;
            s.bytes = s.bytes.saturating_add(st.bytes);
            if let Some(t) = st.tcp {
                let r = s.retransmits.get_or_insert(0);
                *r = r.saturating_add(t.retransmits);
            }
            if let Some(u) = st.udp {
                s.packets = s.packets.saturating_add(u.packets);
                s.lost = s.lost.saturating_add(u.lost);
                s.jitter_ms += u.jitter_ms;
                s.out_of_order = s.out_of_order.saturating_add(u.out_of_order);
            }
        }
        if s.streams > 0 {
            s.jitter_ms /= s.streams as f64;
        }
        let secs = self.seconds();
        s.bits_per_second = if secs > 0.0 {
            s.bytes as f64 * 8.0 / secs
        } else {
            0.0
        };
        s
    }
}

/// Totals of one direction in one interval.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IntervalSum {
    /// Streams summed.
    pub streams: usize,
    /// Bytes.
    pub bytes: u64,
    /// Rate.
    pub bits_per_second: f64,
    /// TCP retransmits, when known.
    pub retransmits: Option<u64>,
    /// UDP datagrams.
    pub packets: u64,
    /// UDP lost.
    pub lost: u64,
    /// UDP out of order.
    pub out_of_order: u64,
    /// Mean jitter, ms.
    pub jitter_ms: f64,
}

/// One side's totals for a stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SideTotals {
    /// Bytes after the omitted period.
    pub bytes: u64,
    /// Seconds measured.
    pub seconds: f64,
    /// Rate.
    pub bits_per_second: f64,
    /// TCP retransmits (sender, when known).
    pub retransmits: Option<u64>,
    /// Largest congestion window seen (local TCP sender).
    pub max_snd_cwnd: Option<u64>,
    /// Smallest RTT seen, µs (local TCP sender).
    pub min_rtt: Option<u32>,
    /// Mean RTT over the samples, µs.
    pub mean_rtt: Option<u32>,
    /// Largest RTT seen, µs.
    pub max_rtt: Option<u32>,
}

impl SideTotals {
    /// Totals of `bytes` over `seconds`.
    pub fn new(bytes: u64, seconds: f64) -> SideTotals {
        SideTotals {
            bytes,
            seconds,
            bits_per_second: if seconds > 0.0 {
                bytes as f64 * 8.0 / seconds
            } else {
                0.0
            },
            ..SideTotals::default()
        }
    }
}

/// UDP totals of a stream (receiver's view of loss).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UdpTotals {
    /// Datagrams the sender sent.
    pub sent_packets: u64,
    /// Datagrams the receiver expected (highest sequence).
    pub packets: u64,
    /// Lost.
    pub lost: u64,
    /// Lost, percent of `packets`.
    pub lost_percent: f64,
    /// Out of order.
    pub out_of_order: u64,
    /// Duplicates (known only when the receiver is linerate).
    pub duplicates: Option<u64>,
    /// Jitter, ms.
    pub jitter_ms: f64,
}

/// One stream's totals.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StreamSummary {
    /// Stream id.
    pub id: i64,
    /// From the client's view.
    pub direction: Direction,
    /// The sending side.
    pub sender: SideTotals,
    /// The receiving side.
    pub receiver: SideTotals,
    /// UDP details.
    pub udp: Option<UdpTotals>,
}

/// Totals at the end of the test.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EndInfo {
    /// Per stream.
    pub streams: Vec<StreamSummary>,
    /// Client CPU.
    pub cpu_local: CpuUtil,
    /// Server CPU.
    pub cpu_remote: CpuUtil,
    /// Client congestion control.
    pub congestion_local: Option<String>,
    /// Server congestion control.
    pub congestion_remote: Option<String>,
    /// The server's output, when asked.
    pub server_output_text: Option<String>,
    /// The server's own document, when asked (and it writes JSON).
    pub server_output_json: Option<Box<Document>>,
}

/// Totals of all streams going one way.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirectionSum {
    /// Streams.
    pub streams: usize,
    /// Sender side.
    pub sender: SideTotals,
    /// Receiver side.
    pub receiver: SideTotals,
    /// UDP, summed.
    pub udp: Option<UdpTotals>,
}

impl EndInfo {
    /// Sums the streams going `direction` (client's view).
    pub fn sum(&self, direction: Direction) -> DirectionSum {
        let mut d = DirectionSum::default();
        let mut sent = 0u64;
        let mut recv = 0u64;
        let mut s_secs: f64 = 0.0;
        let mut r_secs: f64 = 0.0;
        let mut retrans: Option<u64> = None;
        let mut udp: Option<UdpTotals> = None;
        for s in self.streams.iter().filter(|s| s.direction == direction) {
            d.streams += 1;
            sent = sent.saturating_add(s.sender.bytes);
            recv = recv.saturating_add(s.receiver.bytes);
            s_secs = s_secs.max(s.sender.seconds);
            r_secs = r_secs.max(s.receiver.seconds);
            if let Some(r) = s.sender.retransmits {
                let t = retrans.get_or_insert(0);
                *t = t.saturating_add(r);
            }
            if let Some(u) = &s.udp {
                let t = udp.get_or_insert_with(UdpTotals::default);
                t.sent_packets = t.sent_packets.saturating_add(u.sent_packets);
                t.packets = t.packets.saturating_add(u.packets);
                t.lost = t.lost.saturating_add(u.lost);
                t.out_of_order = t.out_of_order.saturating_add(u.out_of_order);
                if let Some(x) = u.duplicates {
                    let d = t.duplicates.get_or_insert(0);
                    *d = d.saturating_add(x);
                }
                t.jitter_ms += u.jitter_ms;
            }
        }
        if let Some(t) = &mut udp {
            if d.streams > 0 {
                t.jitter_ms /= d.streams as f64;
            }
            t.lost_percent = percent(t.lost, t.packets);
        }
        d.sender = SideTotals::new(sent, s_secs);
        d.sender.retransmits = retrans;
        d.receiver = SideTotals::new(recv, r_secs);
        d.udp = udp;
        d
    }

    /// Directions with at least one stream, client→server first.
    pub fn directions(&self) -> Vec<Direction> {
        [Direction::Send, Direction::Receive]
            .into_iter()
            .filter(|d| self.streams.iter().any(|s| s.direction == *d))
            .collect()
    }
}

/// `part` as a percentage of `whole` (0 when `whole` is 0).
pub fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}
