//! The `linerate` object: what linerate adds to an iperf3 document (iperf3's parsers skip an
//! unknown top-level key). Written by `linerate client --json`; read by the results store and
//! the lab runner. Every key is optional, so documents of older linerate versions still read.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::de;

/// The `linerate` object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Linerate {
    /// `linerate.traffic/1` (a client's document), `linerate.run/1` (`show --json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// `stream`, `pps`, `rr` or `crr`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The server and what it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<PeerInfo>,
    /// What iperf3's stream objects have no key for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<StreamNote>,
    /// pps: datagrams sent per second.
    #[serde(
        default,
        deserialize_with = "de::opt_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub sent_pps: Option<f64>,
    /// pps: distinct datagrams received per second (the lab's packet rate).
    #[serde(
        default,
        deserialize_with = "de::opt_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub received_pps: Option<f64>,
    /// pps: datagrams sent and never received.
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub lost_packets: Option<u64>,
    /// pps: datagrams received after a later one.
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub reordered_packets: Option<u64>,
    /// pps: datagrams received more than once.
    #[serde(
        default,
        deserialize_with = "de::opt_count",
        skip_serializing_if = "Option::is_none"
    )]
    pub duplicate_packets: Option<u64>,
    /// rr/crr: transactions per second.
    #[serde(
        default,
        deserialize_with = "de::opt_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub transactions_per_second: Option<f64>,
    /// pps figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pps: Option<PpsResult>,
    /// rr/crr figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rr: Option<RrResult>,
    /// Where the client's workers ran (written with the modes and `--affinity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<Vec<ThreadReport>>,
    /// Where the server's workers ran (a linerate server).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_threads: Vec<ThreadReport>,
    /// `--zerocopy`: how each side's TCP streams moved their bytes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zerocopy: Vec<ZeroCopyReport>,
    /// A latency histogram in the store's exchange form (see [`LatencyHistogram`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencyHistogram>,
    /// The hash of the host snapshot the run was measured on.
    #[serde(
        default,
        deserialize_with = "de::lenient_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub host_snapshot_hash: Option<String>,
    /// What the test sampled to explain its rate: `TCP_INFO` per stream and CPU, this
    /// side's and the server's (see [`crate::evidence`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<crate::evidence::TestEvidence>,
    /// A TCP test's verdict: the limit that held it and what lifts it (see [`crate::limit`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<crate::limit::TcpLimit>,
    /// A UDP test's verdict: where its datagrams were lost and what lifts it (see
    /// [`crate::udp_limit`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp_limit: Option<crate::udp_limit::UdpLimit>,
    /// Each side's CPU seconds per GB or per million datagrams moved (see [`crate::cost`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::cost::TestCost>,
    /// The run was ended early by this signal (`SIGINT`, `SIGTERM`): a partial run, whose
    /// numbers cover only the time it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    /// Keys this schema does not know (and the stored context `show --json` adds).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Which way data flows on a stream, from the local side's view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// This side sends.
    Send,
    /// This side receives.
    Receive,
}

/// Which software the server runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PeerKind {
    /// A linerate server (answered the extension).
    Linerate,
    /// iperf3 or a compatible server (ignored the extension).
    Iperf3,
}

/// The server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerInfo {
    /// Host as given.
    pub host: String,
    /// Address connected to.
    pub addr: String,
    /// Port.
    pub port: u16,
    /// linerate or iperf3.
    pub kind: PeerKind,
    /// The server's engine version, when linerate.
    #[serde(default)]
    pub version: Option<String>,
}

/// One stream's facts beyond iperf3's keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamNote {
    /// Stream id.
    pub id: i64,
    /// From the client's view.
    pub direction: Direction,
    /// UDP datagrams received twice (known when the receiver is linerate).
    #[serde(default, deserialize_with = "de::opt_count")]
    pub duplicates: Option<u64>,
    /// UDP datagrams the sender sent.
    #[serde(default, deserialize_with = "de::opt_count")]
    pub sent_packets: Option<u64>,
}

/// What a pps run moved.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PpsResult {
    /// `imix`, or the Ethernet frame size of the datagrams (`64` for `-l 18` over IPv4).
    pub frame: String,
    /// Mean UDP payload, bytes.
    pub payload_bytes: f64,
    /// Datagrams sent.
    pub sent_packets: u64,
    /// Distinct datagrams received.
    pub received_packets: u64,
    /// Datagrams sent and never received: `sent_packets − received_packets`. Counts the ones
    /// lost at the end of the run too, which no receiver can see as a gap.
    pub lost_packets: u64,
    /// Lost, percent of those sent.
    pub lost_percent: f64,
    /// Lost as the receiver saw it: gaps in the sequence (iperf3's count).
    pub lost_in_gaps: u64,
    /// Received after a later one.
    pub reordered_packets: u64,
    /// Received more than once.
    pub duplicate_packets: u64,
    /// Datagrams on the receiving ports that were not this test's (counted, then ignored).
    pub foreign_datagrams: u64,
    /// Sending seconds.
    pub sent_seconds: f64,
    /// Receiving seconds.
    pub received_seconds: f64,
    /// Datagrams sent per second.
    pub sent_pps: f64,
    /// Distinct datagrams received per second.
    pub received_pps: f64,
    /// What the sent datagrams are on Ethernet: frames (L2, FCS included), bit/s.
    pub sent_l2_bits_per_second: f64,
    /// … and with preamble and inter-frame gap (L1), bit/s.
    pub sent_l1_bits_per_second: f64,
    /// The received datagrams as frames (L2), bit/s.
    pub received_l2_bits_per_second: f64,
    /// … at L1, bit/s.
    pub received_l1_bits_per_second: f64,
    /// Datagrams per send on this side's senders: up to 64 with UDP GSO (one pass through the
    /// stack carries them all), 1 without (`--no-gso`, IMIX, a set rate, or a kernel without
    /// UDP_SEGMENT); absent when the server sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gso_segments: Option<u64>,
    /// What the receiving side's receive path used (this side's receivers, else the
    /// server's when it is linerate); absent when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive_path: Option<ReceivePath>,
}

/// How a pps receiver took its datagrams in.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReceivePath {
    /// Which side received: "client" or "server".
    pub side: String,
    /// UDP_GRO: "on", "off" (not asked for: the sender does not use GSO) or "refused".
    pub gro: String,
    /// Most datagrams one GRO receive carried (0 when none were coalesced).
    pub gro_max_segments: u64,
    /// Largest `recvmmsg` batch asked for (the batch follows the socket's queue).
    pub batch_peak: u64,
    /// Receives (datagrams or coalesced runs) per `recvmmsg` call, on average.
    pub per_call: f64,
    /// Busy polling asked for, µs (absent: not asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_poll_us: Option<u64>,
    /// Busy polling: "on", or "refused" (the kernel refused an option: raising it needs
    /// CAP_NET_ADMIN, SO_PREFER_BUSY_POLL and the budget Linux 5.11).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_poll: Option<String>,
}

/// How one side's bulk TCP streams moved their bytes with `--zerocopy`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ZeroCopyReport {
    /// "client" or "server".
    pub side: String,
    /// What was asked: "auto" (the default on Linux) or "on".
    pub asked: String,
    /// This side's receivers ended on "zerocopy" (received pages mapped) or "copy"; absent
    /// when this side only sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive: Option<String>,
    /// Bytes received by mapping pages.
    pub mapped_bytes: u64,
    /// Bytes received by copy (the unmappable heads, and everything after a fallback).
    pub copied_bytes: u64,
    /// Why a receiver took the copy path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive_fallback: Option<String>,
    /// This side's senders ended on "sendfile" (an in-memory file's pages sent by
    /// reference), "msg_zerocopy" (own pages pinned) or "copy"; absent when this side only
    /// received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send: Option<String>,
    /// `MSG_ZEROCOPY` sends the kernel reported complete.
    pub zerocopy_sends: u64,
    /// Of those, sends the kernel copied after all (loopback and veth deliver locally, or
    /// the device could not take the pages).
    pub kernel_copied_sends: u64,
    /// Why a sender took the copy path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_fallback: Option<String>,
}

/// Transactions in one interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RrInterval {
    /// Seconds from the start.
    pub start: f64,
    /// Seconds from the start.
    pub end: f64,
    /// Transactions completed.
    pub transactions: u64,
    /// Per second.
    pub transactions_per_second: f64,
}

/// What an rr/crr run measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RrResult {
    /// TCP or UDP.
    pub protocol: String,
    /// Request bytes.
    pub request_bytes: u64,
    /// Response bytes.
    pub response_bytes: u64,
    /// Transactions completed.
    pub transactions: u64,
    /// Seconds measured.
    pub seconds: f64,
    /// Transactions per second.
    pub transactions_per_second: f64,
    /// UDP transactions without an answer in time.
    pub lost_transactions: u64,
    /// Failed connects or exchanges (crr), retried.
    pub errors: u64,
    /// Latency percentiles, µs.
    pub latency: LatencySummary,
    /// The whole latency histogram.
    pub histogram: HistogramDump,
    /// Per interval.
    pub intervals: Vec<RrInterval>,
}

/// Latency percentiles of a run, microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Transactions measured.
    pub count: u64,
    /// Fastest.
    pub min_us: f64,
    /// Mean.
    pub mean_us: f64,
    /// Standard deviation.
    pub stdev_us: f64,
    /// Median.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// Slowest.
    pub max_us: f64,
}

/// A histogram as data: `[highest value of the bucket, count]` pairs, lowest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HistogramDump {
    /// Unit of the values (`ns`).
    pub unit: String,
    /// Precision of the buckets.
    pub significant_digits: u8,
    /// `[value, count]`, non-empty buckets only.
    pub buckets: Vec<[u64; 2]>,
}

/// Where one worker thread ran.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadReport {
    /// Stream id.
    pub id: i64,
    /// From the client's view.
    #[serde(default)]
    pub direction: Option<Direction>,
    /// Pinned CPU and CPUs seen (written at this object's level).
    #[serde(flatten)]
    pub placement: PlacementReport,
}

/// Where a thread was pinned and ran.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacementReport {
    /// The CPU it was pinned to, if any.
    #[serde(default)]
    pub pinned: Option<usize>,
    /// CPUs it was seen running on.
    #[serde(default)]
    pub ran_on: Vec<usize>,
}

/// A latency distribution as other tools hand it to the store: `buckets` as
/// `[{"upper_us": µs, "count": n}]` or `[[µs, n]]`, `percentiles` as `{"p50": µs}` or
/// `[[50, µs]]`, and `mean_us`. Buckets and percentiles come out sorted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyHistogram {
    /// Buckets in increasing `upper_us`.
    #[serde(default, deserialize_with = "buckets")]
    pub buckets: Vec<LatencyBucket>,
    /// (percentile, µs), in increasing percentile; written as `{"p50": µs, …}`.
    #[serde(
        default,
        deserialize_with = "percentiles",
        serialize_with = "percentiles_as_map"
    )]
    pub percentiles: Vec<(f64, f64)>,
    /// Mean latency, µs.
    #[serde(
        default,
        deserialize_with = "de::opt_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub mean_us: Option<f64>,
}

/// `count` transactions took at most `upper_us` (and more than the previous bucket's bound).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatencyBucket {
    /// Upper bound, µs.
    pub upper_us: f64,
    /// Transactions.
    pub count: u64,
}

impl<'de> Deserialize<'de> for LatencyBucket {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let (upper, count) = match &v {
            Value::Array(pair) if pair.len() == 2 => (pair[0].as_f64(), de::as_count(&pair[1])),
            Value::Object(m) => (
                m.get("upper_us")
                    .or_else(|| m.get("le_us"))
                    .and_then(Value::as_f64),
                m.get("count").and_then(de::as_count),
            ),
            _ => (None, None),
        };
        match (upper, count) {
            (Some(upper_us), Some(count)) if upper_us.is_finite() => {
                Ok(LatencyBucket { upper_us, count })
            }
            _ => Err(D::Error::custom(
                "expected {\"upper_us\": number, \"count\": integer} or [upper_us, count]",
            )),
        }
    }
}

fn buckets<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<LatencyBucket>, D::Error> {
    let mut b = Vec::<LatencyBucket>::deserialize(d)?;
    b.sort_by(|x, y| x.upper_us.total_cmp(&y.upper_us));
    Ok(b)
}

/// Percentiles as `{"p50": µs, …}` or `[[50, µs], …]`; entries of another shape are skipped.
fn percentiles<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(f64, f64)>, D::Error> {
    let mut out = Vec::new();
    match Value::deserialize(d)? {
        Value::Object(m) => {
            for (k, v) in m {
                let p = k.trim_start_matches('p').parse::<f64>().ok();
                if let (Some(p), Some(us)) = (p, v.as_f64()) {
                    out.push((p, us));
                }
            }
        }
        Value::Array(list) => {
            for pair in list {
                if let (Some(p), Some(us)) = (
                    pair.get(0).and_then(Value::as_f64),
                    pair.get(1).and_then(Value::as_f64),
                ) {
                    out.push((p, us));
                }
            }
        }
        _ => {}
    }
    out.retain(|(p, us)| p.is_finite() && us.is_finite());
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(out)
}

fn percentiles_as_map<S: serde::Serializer>(p: &[(f64, f64)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(p.len()))?;
    for (pct, us) in p {
        map.serialize_entry(&format!("p{pct}"), us)?;
    }
    map.end()
}

impl LatencyHistogram {
    /// Total transactions in the histogram.
    pub fn count(&self) -> u64 {
        self.buckets.iter().map(|b| b.count).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_accepts_objects_and_pairs() {
        let l: LatencyHistogram = serde_json::from_value(serde_json::json!({
            "buckets": [[20.0, 3], {"upper_us": 10.0, "count": 2}],
            "percentiles": {"p50": 9.5, "p99": 19.0},
            "mean_us": 12.0
        }))
        .unwrap_or_default();
        assert_eq!(l.count(), 5);
        assert_eq!(l.buckets[0].upper_us, 10.0);
        assert_eq!(l.percentiles, vec![(50.0, 9.5), (99.0, 19.0)]);
        assert_eq!(l.mean_us, Some(12.0));
    }
}
