//! The evidence a test gathers for explaining its rate: each TCP stream's `TCP_INFO`
//! sampled during the test (the kernel's limit clocks, cwnd, RTT, windows, buffers, losses)
//! and where each side's CPU went. The client writes it in its document's
//! `linerate.evidence`; a linerate server returns its own side in the `linerate` key of its
//! results, which iperf3 ignores. A pure function later turns it, with the path's ceiling,
//! into a verdict.
//!
//! Units are in the names (`_bytes`, `_us`, `_bps` = bit/s, `_percent`). Whatever the side's
//! OS does not report is absent (`None`), never 0: FreeBSD's `TCP_INFO` has no limit clocks,
//! delivery rate or byte counters, and per-thread figures are read on Linux only.
//!
//! Everything covers the measured period: the omitted seconds (`-O`) are left out. Counters
//! (`busy_us`, `retransmits`, `bytes_acked`, …) are deltas over that period; levels that move
//! (`cwnd_bytes`, `rtt_us`, …) are [`Gauge`]s over the samples.
//!
//! The object is new: documents written before it have no `evidence` key (read as `None`),
//! but an `evidence` object that is there must be whole: a required key missing or of the
//! wrong type is an error naming it (`linerate.evidence.local.tcp[0].role: missing`).

use serde::{Deserialize, Serialize};

/// The `linerate.evidence` object of a client's document: its own side and, when the
/// server is linerate, the server's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestEvidence {
    /// What the client sampled.
    pub local: Evidence,
    /// What the server sampled and returned; `None` when it returned nothing
    /// ([`TestEvidence::remote_missing`] says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<Evidence>,
    /// Why there is no remote evidence: a verdict built on the local side alone says what
    /// it cannot see.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_missing: Option<MissingEvidence>,
}

/// Why one side's evidence is absent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissingEvidence {
    /// The reason, for programs.
    pub reason: MissingReason,
    /// The reason, for people.
    pub explanation: String,
}

/// Why one side's evidence is absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MissingReason {
    /// The server is iperf3 (or a clone of it): it samples nothing and returns nothing.
    Iperf3Peer,
    /// The server is linerate but returned no evidence (an older version, or none that
    /// reads).
    NotReturned,
}

impl MissingEvidence {
    /// The server is iperf3.
    pub fn iperf3_peer() -> MissingEvidence {
        MissingEvidence {
            reason: MissingReason::Iperf3Peer,
            explanation: "the server is iperf3, which samples nothing: only the client's side \
                          was seen (the server's TCP_INFO, receive window and CPU were not)"
                .to_owned(),
        }
    }

    /// A linerate server returned none.
    pub fn not_returned() -> MissingEvidence {
        MissingEvidence {
            reason: MissingReason::NotReturned,
            explanation: "the linerate server returned no evidence (an older version, or an \
                          object that does not read): only the client's side was seen"
                .to_owned(),
        }
    }
}

/// Which end of the test sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The client.
    Client,
    /// The server.
    Server,
}

impl Side {
    /// The other end.
    pub fn other(self) -> Side {
        match self {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        }
    }

    /// `client` or `server`, as people read it.
    pub fn name(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Server => "server",
        }
    }
}

/// What a stream does on the side that sampled it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// It sends.
    Sender,
    /// It receives.
    Receiver,
}

/// One side's evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// Who sampled.
    pub side: Side,
    /// The sampling rate asked for, per second (each TCP stream's `TCP_INFO`; CPU counters
    /// are read once a second).
    pub sample_hz: u32,
    /// The measured period the evidence covers, seconds.
    pub seconds: f64,
    /// Every stream of this side with its role (UDP streams too).
    pub streams: Vec<StreamRole>,
    /// Per TCP stream.
    pub tcp: Vec<TcpStreamEvidence>,
    /// Where this side's CPU went.
    pub cpu: CpuEvidence,
    /// This side's namespace's UDP and interface drop counters over the period, read when
    /// the test has UDP streams (Linux).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp: Option<crate::udp_drops::UdpCounters>,
}

/// A stream and what it does on this side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamRole {
    /// iperf3 stream id.
    pub id: i64,
    /// Sender or receiver on this side.
    pub role: Role,
}

/// A level sampled over the period.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Gauge {
    /// Smallest sample.
    pub min: f64,
    /// Mean of the samples.
    pub mean: f64,
    /// Largest sample.
    pub max: f64,
    /// The last sample.
    pub last: f64,
}

/// One TCP stream's `TCP_INFO`, sampled over the measured period.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TcpStreamEvidence {
    /// iperf3 stream id.
    pub id: i64,
    /// Sender or receiver on this side.
    pub role: Role,
    /// `TCP_INFO` readings in the period (the first at its start, the last at its end).
    pub samples: u64,
    /// Time with data in flight, µs: the total of the busy, receive-window-limited and
    /// send-buffer-limited clocks (Linux `tcpi_busy_time`). Sender side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_us: Option<u64>,
    /// Of `busy_us`, time the peer's receive window held the sender back, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rwnd_limited_us: Option<u64>,
    /// Of `busy_us`, time the sender's own send buffer held it back, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sndbuf_limited_us: Option<u64>,
    /// Congestion window, bytes (segments × MSS on Linux).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwnd_bytes: Option<Gauge>,
    /// Slow-start threshold, bytes, over the samples where it was finite; `None` when it
    /// stayed "infinite" (no loss) throughout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssthresh_bytes: Option<Gauge>,
    /// Smoothed RTT, µs (samples before the first estimate left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_us: Option<Gauge>,
    /// RTT variance, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rttvar_us: Option<Gauge>,
    /// The kernel's minimum RTT (Linux `tcpi_min_rtt`), µs: the path's base RTT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rtt_us: Option<u64>,
    /// The receiver's RTT estimate (Linux `tcpi_rcv_rtt`), µs. Receiver side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcv_rtt_us: Option<Gauge>,
    /// Delivery rate samples, bit/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery_rate_bps: Option<Gauge>,
    /// Share of the samples whose delivery rate was taken while the application did not
    /// fill the pipe (Linux `tcpi_delivery_rate_app_limited`), percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_limited_percent: Option<f64>,
    /// Pacing rate, bit/s, over the samples where the socket was paced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing_rate_bps: Option<Gauge>,
    /// Segments retransmitted in the period (`tcpi_total_retrans` delta; FreeBSD: packets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retransmits: Option<u64>,
    /// Bytes retransmitted in the period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_retransmitted: Option<u64>,
    /// Segments the sender held lost (Linux `tcpi_lost`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_segments: Option<Gauge>,
    /// The reordering degree the sender assumed, segments (Linux `tcpi_reordering`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reordering: Option<Gauge>,
    /// Reordering events seen in the period (`tcpi_reord_seen` delta).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reord_seen: Option<u64>,
    /// Duplicate segments D-SACK reported in the period (`tcpi_dsack_dups` delta).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dsack_dups: Option<u64>,
    /// Packets received out of order in the period (`tcpi_rcv_ooopack` delta). Receiver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_of_order_packets: Option<u64>,
    /// Bytes written and not yet sent (`tcpi_notsent_bytes`): a full send buffer shows here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notsent_bytes: Option<Gauge>,
    /// Bytes in flight, sent and not yet acknowledged (Linux: segments × MSS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unacked_bytes: Option<Gauge>,
    /// The window the peer advertised, bytes (`tcpi_snd_wnd`). Sender side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_window_bytes: Option<Gauge>,
    /// The window this side advertised, bytes (Linux `tcpi_rcv_wnd`). Receiver side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcv_wnd_bytes: Option<Gauge>,
    /// The receiver's estimate of what the application reads per RTT, which drives
    /// receive-buffer autotuning, bytes (Linux `tcpi_rcv_space`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcv_space_bytes: Option<Gauge>,
    /// The receive window's clamp while it grows, bytes (Linux `tcpi_rcv_ssthresh`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcv_ssthresh_bytes: Option<Gauge>,
    /// The socket's send buffer (`SO_SNDBUF` as the kernel reports it, autotuning included),
    /// bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sndbuf_bytes: Option<Gauge>,
    /// The socket's receive buffer (`SO_RCVBUF`, autotuning included), bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcvbuf_bytes: Option<Gauge>,
    /// Sender MSS at the end, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mss_bytes: Option<u64>,
    /// Path MTU at the end, bytes (Linux).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pmtu_bytes: Option<u64>,
    /// Bytes the peer acknowledged in the period. Sender side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_acked: Option<u64>,
    /// Bytes received in the period. Receiver side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_received: Option<u64>,
    /// Bytes sent in the period, retransmissions included. Sender side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_sent: Option<u64>,
}

impl TcpStreamEvidence {
    /// A stream with no reading yet: every figure unknown.
    pub fn empty(id: i64, role: Role) -> TcpStreamEvidence {
        TcpStreamEvidence {
            id,
            role,
            samples: 0,
            busy_us: None,
            rwnd_limited_us: None,
            sndbuf_limited_us: None,
            cwnd_bytes: None,
            ssthresh_bytes: None,
            rtt_us: None,
            rttvar_us: None,
            min_rtt_us: None,
            rcv_rtt_us: None,
            delivery_rate_bps: None,
            app_limited_percent: None,
            pacing_rate_bps: None,
            retransmits: None,
            bytes_retransmitted: None,
            lost_segments: None,
            reordering: None,
            reord_seen: None,
            dsack_dups: None,
            out_of_order_packets: None,
            notsent_bytes: None,
            unacked_bytes: None,
            peer_window_bytes: None,
            rcv_wnd_bytes: None,
            rcv_space_bytes: None,
            rcv_ssthresh_bytes: None,
            sndbuf_bytes: None,
            rcvbuf_bytes: None,
            mss_bytes: None,
            pmtu_bytes: None,
            bytes_acked: None,
            bytes_received: None,
            bytes_sent: None,
        }
    }
}

/// Where one side's CPU went over the measured period. CPU time is in percent of one core
/// (as iperf3's `cpu_utilization_percent`): 100 is one core busy the whole time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuEvidence {
    /// The period, seconds.
    pub seconds: f64,
    /// The whole process (a server running several tests at once counts them all).
    pub process: ProcessCpu,
    /// This side's worker threads (one per stream) and its sampler; `None` where per-thread
    /// times cannot be read (Linux only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<Vec<ThreadCpu>>,
    /// Every CPU of the host over the period. **System-wide**: everything the host ran
    /// counts, and two network namespaces on one host (a lab) see the same CPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<CpuShare>>,
    /// The busiest CPU of each second (system-wide too), so "one core at 100 %" shows even
    /// when the period's average hides it. Entries are 1 s long up to
    /// [`CpuEvidence::MAX_INTERVALS`]; in a longer test each entry covers 2, 4, … s and
    /// holds the busiest of its seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busiest: Option<Vec<CpuInterval>>,
}

impl CpuEvidence {
    /// The most entries [`CpuEvidence::busiest`] holds.
    pub const MAX_INTERVALS: usize = 600;
}

/// A process's CPU time, percent of one core.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProcessCpu {
    /// User time.
    pub user_percent: f64,
    /// System time (the kernel's work on the process's behalf: socket calls, copies).
    pub system_percent: f64,
}

/// One thread's CPU time, percent of one core, and where it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadCpu {
    /// The thread's name (`lr-stream-1`, `lr-evidence`).
    pub name: String,
    /// The stream it runs; `None` for the sampler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_id: Option<i64>,
    /// User time.
    pub user_percent: f64,
    /// System time.
    pub system_percent: f64,
    /// The CPU it was pinned to (`--affinity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_cpu: Option<u64>,
    /// The CPU it last ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_cpu: Option<u64>,
}

/// How one CPU spent a span of time, percent of that CPU.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CpuShare {
    /// CPU number.
    pub cpu: u64,
    /// Neither idle nor waiting for I/O (time stolen by a hypervisor counts as busy: it was
    /// not there to use).
    pub busy_percent: f64,
    /// User code (niced included).
    pub user_percent: f64,
    /// Kernel code outside interrupts.
    pub system_percent: f64,
    /// Hardware interrupts (FreeBSD: all interrupt time, its network stack's included).
    pub irq_percent: f64,
    /// Software interrupts, where Linux receives packets; `None` on FreeBSD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub softirq_percent: Option<f64>,
    /// Stolen by a hypervisor (Linux).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_percent: Option<f64>,
}

/// The busiest CPU over a span of the period.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CpuInterval {
    /// Seconds from the start of the period.
    pub start: f64,
    /// Seconds from the start of the period.
    pub end: f64,
    /// The busiest CPU in the busiest second of the span.
    pub busiest: CpuShare,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Document;
    use serde_json::json;

    fn evidence() -> serde_json::Value {
        json!({
            "side": "client", "sample_hz": 100, "seconds": 2.0,
            "streams": [{"id": 1, "role": "sender"}],
            "tcp": [{"id": 1, "role": "sender", "samples": 201, "busy_us": 1_999_000,
                     "sndbuf_limited_us": 1_500_000,
                     "cwnd_bytes": {"min": 14480.0, "mean": 2.0e6, "max": 4.1e6, "last": 4.0e6}}],
            "cpu": {"seconds": 2.0, "process": {"user_percent": 1.5, "system_percent": 60.0},
                    "cpus": [{"cpu": 0, "busy_percent": 99.0, "user_percent": 1.0,
                              "system_percent": 60.0, "irq_percent": 0.0,
                              "softirq_percent": 38.0}]}
        })
    }

    fn document(ev: serde_json::Value) -> Result<Document, crate::Error> {
        Document::from_value(&json!({"linerate": {"evidence": ev}}))
    }

    #[test]
    fn evidence_reads_and_writes_back_the_same() {
        let d = document(json!({"local": evidence(), "remote_missing": {
            "reason": "iperf3_peer", "explanation": "iperf3"}}))
        .unwrap();
        let ev = d
            .linerate
            .as_ref()
            .and_then(|l| l.evidence.clone())
            .unwrap();
        assert_eq!(ev.local.tcp[0].sndbuf_limited_us, Some(1_500_000));
        assert_eq!(
            ev.local.tcp[0].rwnd_limited_us, None,
            "absent is unknown, not 0"
        );
        assert_eq!(
            ev.local.cpu.cpus.as_ref().unwrap()[0].softirq_percent,
            Some(38.0)
        );
        assert_eq!(ev.local.cpu.threads, None);
        assert_eq!(
            ev.remote_missing.as_ref().map(|m| m.reason),
            Some(MissingReason::Iperf3Peer)
        );
        let back = serde_json::to_value(&d).unwrap();
        assert_eq!(Document::from_value(&back).unwrap(), d);
        // Unknown figures are left out, not written as 0 or null.
        assert!(
            back["linerate"]["evidence"]["local"]["tcp"][0]
                .get("rwnd_limited_us")
                .is_none()
        );
    }

    #[test]
    fn documents_without_evidence_still_read() {
        let d = Document::from_value(&json!({"linerate": {"mode": "stream"}})).unwrap();
        assert_eq!(d.linerate.and_then(|l| l.evidence), None);
    }

    #[test]
    fn a_missing_or_mistyped_key_is_named() {
        let mut ev = evidence();
        ev["tcp"][0].as_object_mut().unwrap().remove("role");
        let e = document(json!({ "local": ev })).unwrap_err();
        assert_eq!(e.place, "linerate.evidence.local.tcp[0].role");
        assert_eq!(e.message, "missing");

        let mut ev = evidence();
        ev["tcp"][0]["busy_us"] = json!("long");
        let e = document(json!({ "local": ev })).unwrap_err();
        assert_eq!(e.place, "linerate.evidence.local.tcp[0].busy_us");

        let mut ev = evidence();
        ev["cpu"]["process"]
            .as_object_mut()
            .unwrap()
            .remove("system_percent");
        let e = document(json!({ "local": ev })).unwrap_err();
        assert_eq!(
            e.place,
            "linerate.evidence.local.cpu.process.system_percent"
        );

        let e = document(json!({ "remote": evidence() })).unwrap_err();
        assert_eq!(e.place, "linerate.evidence.local");

        let mut ev = evidence();
        ev["side"] = json!("middle");
        let e = document(json!({ "local": ev })).unwrap_err();
        assert_eq!(e.place, "linerate.evidence.local.side");
        assert!(e.message.contains("middle"), "{e}");
    }
}
