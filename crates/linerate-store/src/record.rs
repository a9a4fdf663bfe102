//! The run model: one measurement with its context, as it is stored and read back.
//!
//! A [`RunRecord`] is built from iperf3-schema JSON (what `linerate client --json` prints and
//! what users' iperf3 files hold, see [`crate::iperf3`]) plus a [`RunContext`] that says where
//! the run came from. The whole JSON document is kept verbatim so `show --json` gives back
//! exactly what the client printed; the fields here are what queries, comparisons and charts
//! need without re-parsing it.

use serde::{Deserialize, Serialize};

/// A stored run's identifier (SQLite rowid, starts at 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(pub i64);

impl std::fmt::Display for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::str::FromStr for RunId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let digits = s.strip_prefix('#').unwrap_or(s);
        match digits.parse::<i64>() {
            Ok(n) if n > 0 => Ok(RunId(n)),
            _ => Err(format!(
                "`{s}` is not a run id (a positive number, as `history` lists)"
            )),
        }
    }
}

/// Where a run came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunSource {
    /// Measured by `linerate client`.
    Client,
    /// Measured by `linerate lab run` (an experiment repetition).
    Lab,
    /// Read from an iperf3 `--json`/`--json-stream` file by `linerate import`.
    Import,
}

impl RunSource {
    /// The name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            RunSource::Client => "client",
            RunSource::Lab => "lab",
            RunSource::Import => "import",
        }
    }

    /// Parses a stored name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "client" => Some(RunSource::Client),
            "lab" => Some(RunSource::Lab),
            "import" => Some(RunSource::Import),
            _ => None,
        }
    }
}

/// Which way the data flowed, seen from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Client sends (iperf3's default).
    Send,
    /// Server sends (`-R`).
    Reverse,
    /// Both at once (`--bidir`).
    Bidir,
}

impl Direction {
    /// The name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Send => "send",
            Direction::Reverse => "reverse",
            Direction::Bidir => "bidir",
        }
    }

    /// Parses a stored name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "send" => Some(Direction::Send),
            "reverse" => Some(Direction::Reverse),
            "bidir" => Some(Direction::Bidir),
            _ => None,
        }
    }
}

/// The host the run was measured on: a hash of its snapshot (from `linerate-probe`) and,
/// optionally, the snapshot itself. Snapshots are stored once per hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostRef {
    /// A stable hash of the snapshot (any string the caller computes; see [`snapshot_hash`]).
    pub hash: String,
    /// The snapshot as JSON, if the caller has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<serde_json::Value>,
}

/// The experiment a run belongs to: one repetition of one variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentRef {
    /// The experiment's id (as `lab run` names it, e.g. `bufsize-2026-11-21T23:30`).
    pub experiment: String,
    /// The variant's name (`baseline`, `rmem-16M`, …).
    pub variant: String,
    /// The repetition number, starting at 1.
    pub repetition: u32,
    /// For sweeps: the swept parameter's value for this variant (e.g. 16777216 for a buffer
    /// size), so reports can draw a curve. `None` for unordered variants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep_value: Option<f64>,
    /// The swept parameter's name and unit, e.g. `rmem_max (bytes)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep_label: Option<String>,
}

/// Context that the JSON document does not carry.
#[derive(Debug, Clone, PartialEq)]
pub struct RunContext {
    /// Where the run came from.
    pub source: RunSource,
    /// The file it was imported from.
    pub source_path: Option<String>,
    /// The command line that produced it (`linerate client -c 198.18.0.2 -t 10`).
    pub command_line: Option<String>,
    /// The measuring tool and version; `None` takes `start.version` from the document.
    pub tool: Option<String>,
    /// The host snapshot.
    pub host: Option<HostRef>,
    /// Experiment, variant and repetition.
    pub experiment: Option<ExperimentRef>,
}

impl RunContext {
    /// A context with only a source.
    pub fn new(source: RunSource) -> Self {
        RunContext {
            source,
            source_path: None,
            command_line: None,
            tool: None,
            host: None,
            experiment: None,
        }
    }
}

/// The headline numbers of a run (from the document's `end` object).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// Bytes the senders sent (forward direction).
    pub bytes_sent: u64,
    /// Bytes the receivers got (forward direction).
    pub bytes_received: u64,
    /// Sender-side rate, bits/s.
    pub sent_bps: f64,
    /// Receiver-side rate, bits/s: the run's headline throughput.
    pub received_bps: f64,
    /// With `--bidir`: the reverse direction's receiver-side rate, bits/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_received_bps: Option<f64>,
    /// TCP retransmits (sender side), when the sender reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retransmits: Option<u64>,
    /// UDP: jitter in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter_ms: Option<f64>,
    /// UDP: datagrams lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_packets: Option<u64>,
    /// UDP: datagrams sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets: Option<u64>,
    /// UDP: lost share in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_percent: Option<f64>,
    /// Local CPU use in percent (host_total).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_local_percent: Option<f64>,
    /// Remote CPU use in percent (remote_total).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_remote_percent: Option<f64>,
    /// TCP: the sender's mean smoothed RTT over its streams, microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_rtt_us: Option<f64>,
    /// Request/response runs: transactions per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transactions_per_second: Option<f64>,
}

/// One interval report of one stream, or the sum over streams (`stream == None`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalSample {
    /// The interval's position in the run, from 0.
    pub index: u32,
    /// The stream (iperf3's socket number); `None` for the sum over streams.
    pub stream: Option<i64>,
    /// Seconds from the start of the test.
    pub start_s: f64,
    /// Seconds from the start of the test.
    pub end_s: f64,
    /// Bytes moved in the interval.
    pub bytes: u64,
    /// Rate over the interval, bits/s.
    pub bits_per_second: f64,
    /// Whether this stream (or sum) was on the sending side.
    pub sender: bool,
    /// Whether the interval falls in the omitted warm-up (`-O`).
    pub omitted: bool,
    /// TCP retransmits in the interval (sender only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retransmits: Option<u64>,
    /// TCP smoothed RTT at the end of the interval, microseconds (sender only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_us: Option<u64>,
    /// TCP congestion window, bytes (sender only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snd_cwnd: Option<u64>,
    /// UDP datagrams in the interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets: Option<u64>,
}

/// The end-of-test result of one stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamResult {
    /// The stream (iperf3's socket number).
    pub stream: i64,
    /// Whether the local side sent on this stream.
    pub sender: bool,
    /// Bytes sent.
    pub bytes_sent: u64,
    /// Bytes received.
    pub bytes_received: u64,
    /// Sender-side rate, bits/s.
    pub sent_bps: f64,
    /// Receiver-side rate, bits/s.
    pub received_bps: f64,
    /// TCP retransmits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retransmits: Option<u64>,
    /// TCP mean RTT, microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_rtt_us: Option<u64>,
    /// UDP jitter, milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter_ms: Option<f64>,
    /// UDP lost datagrams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_packets: Option<u64>,
    /// UDP datagrams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets: Option<u64>,
}

/// One bucket of a latency histogram: `count` transactions took at most `upper_us`
/// microseconds (and more than the previous bucket's bound).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencyBucket {
    /// The bucket's upper bound, microseconds.
    pub upper_us: f64,
    /// Transactions in the bucket.
    pub count: u64,
}

/// The latency distribution of a request/response run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Buckets in increasing `upper_us`.
    pub buckets: Vec<LatencyBucket>,
    /// Percentiles the engine computed, as (percentile, microseconds), e.g. (99.0, 182.0).
    #[serde(default)]
    pub percentiles: Vec<(f64, f64)>,
    /// Mean latency, microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_us: Option<f64>,
}

impl Latency {
    /// Total transactions in the histogram.
    pub fn count(&self) -> u64 {
        self.buckets.iter().map(|b| b.count).sum()
    }
}

/// One measurement with everything needed to show, compare and chart it later.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// When the test started, Unix seconds (UTC).
    pub started_at: i64,
    /// Where the run came from.
    pub source: RunSource,
    /// The file it was imported from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_path: Option<String>,
    /// The command line that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_line: Option<String>,
    /// The tool and version (`iperf 3.12`, `linerate 0.1.0`).
    pub tool: String,
    /// The test mode: `tcp`, `udp`, `sctp`, or linerate's `rr`, `crr`, `pps`.
    pub mode: String,
    /// Which way the data flowed.
    pub direction: Direction,
    /// The server, `host:port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    /// Parallel streams.
    pub streams: u32,
    /// Test duration in seconds (measured).
    pub duration_s: f64,
    /// The test parameters (the document's `start.test_start`).
    pub params: serde_json::Value,
    /// The headline numbers.
    pub summary: RunSummary,
    /// Interval samples: per stream and the sums.
    pub intervals: Vec<IntervalSample>,
    /// End-of-test per-stream results.
    pub stream_results: Vec<StreamResult>,
    /// Latency distribution (request/response runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Latency>,
    /// The host it was measured on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostRef>,
    /// Experiment, variant and repetition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experiment: Option<ExperimentRef>,
    /// Ended early by a signal (the document's `linerate.interrupted`): the numbers cover only
    /// the time it ran.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// The iperf3-schema JSON document, verbatim.
    pub document: serde_json::Value,
}

impl RunRecord {
    /// The iperf3-schema document with linerate's stored context merged into its `linerate`
    /// object (schema `linerate.run/1`: run id, source, command line, experiment, host
    /// snapshot hash), as `linerate show --json` prints it.
    #[must_use]
    pub fn document_with_context(&self, id: RunId) -> serde_json::Value {
        let run = self;
        let mut doc = run.document.clone();
        if let Some(root) = doc.as_object_mut() {
            let extra = root
                .entry("linerate")
                .or_insert_with(|| serde_json::json!({}));
            if let Some(extra) = extra.as_object_mut() {
                extra.insert("schema".into(), "linerate.run/1".into());
                extra.insert("run_id".into(), id.0.into());
                extra.insert("source".into(), run.source.as_str().into());
                if let Some(p) = &run.source_path {
                    extra.insert("source_path".into(), p.clone().into());
                }
                if let Some(c) = &run.command_line {
                    extra.insert("command_line".into(), c.clone().into());
                }
                if let Some(e) = &run.experiment {
                    extra.insert(
                        "experiment".into(),
                        serde_json::to_value(e).unwrap_or_default(),
                    );
                }
                if let Some(h) = &run.host {
                    extra.insert("host_snapshot_hash".into(), h.hash.clone().into());
                }
            }
        }
        doc
    }

    /// The forward-direction sum samples (one per interval), omitted warm-up excluded: the
    /// time series that describes the run's throughput.
    pub fn throughput_series(&self) -> Vec<&IntervalSample> {
        let forward_sender = self.direction != Direction::Reverse;
        let sums: Vec<&IntervalSample> = self
            .intervals
            .iter()
            .filter(|s| s.stream.is_none() && !s.omitted)
            .collect();
        // A bidir run has two sums per interval; the forward one is the client's sending one.
        if self.direction == Direction::Bidir {
            sums.into_iter()
                .filter(|s| s.sender == forward_sender)
                .collect()
        } else {
            sums
        }
    }
}

/// A stable 64-bit FNV-1a hash of a JSON value's compact text, as 16 hex digits: for callers
/// that have a host snapshot but no hash of their own.
pub fn snapshot_hash(snapshot: &serde_json::Value) -> String {
    let text = snapshot.to_string();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}
