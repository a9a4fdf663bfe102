//! Throughput (tcp, udp, sctp): the receiver-side bit/s, the per-interval sums over streams,
//! and the columns a bulk transfer has (sent, retransmits, RTT, CPU).

use linerate_store::RunRecord;

use super::{Column, Step};
use crate::format;

/// The receiver-side rate over the whole test.
pub fn value(run: &RunRecord) -> f64 {
    run.summary.received_bps
}

/// The forward direction's sum over streams, interval by interval, warm-up excluded.
pub fn series(run: &RunRecord) -> Vec<Step> {
    run.throughput_series()
        .iter()
        .map(|s| Step {
            start: s.start_s,
            end: s.end_s,
            value: s.bits_per_second,
        })
        .collect()
}

/// Received, sent, retransmits, RTT, CPU.
pub const COLUMNS: &[Column] = &[
    Column {
        header: "Received",
        note: "Received: the receiver-side rate over the whole test (the headline number).",
        cell: |r| Some(format::rate(r.summary.received_bps)),
    },
    Column {
        header: "Sent",
        note: "",
        cell: |r| Some(format::rate(r.summary.sent_bps)),
    },
    Column {
        header: "Retr",
        note: "Retr: TCP retransmits.",
        cell: |r| r.summary.retransmits.map(|n| n.to_string()),
    },
    Column {
        header: "RTT",
        note: "RTT: the sender's mean smoothed RTT.",
        cell: |r| {
            r.summary
                .mean_rtt_us
                .filter(|v| *v > 0.0)
                .map(format::micros)
        },
    },
    Column {
        header: "CPU local / remote",
        note: "",
        cell: |r| match (r.summary.cpu_local_percent, r.summary.cpu_remote_percent) {
            (Some(l), Some(r)) => Some(format!("{l:.1}% / {r:.1}%")),
            _ => None,
        },
    },
    Column {
        header: "Limit",
        note: "Limit: what held the run below its path's ceiling, from the evidence both sides \
               sampled (linerate client's limit block).",
        cell: limit,
    },
];

/// The run's limit verdict (`linerate.limit`, TCP; `linerate.udp_limit`'s loss place, UDP).
fn limit(r: &RunRecord) -> Option<String> {
    let lr = &r.document["linerate"];
    if let Ok(l) = serde_json::from_value::<linerate_iperf3::limit::TcpLimit>(lr["limit"].clone()) {
        return Some(l.kind.describe().to_owned());
    }
    serde_json::from_value::<linerate_iperf3::udp_limit::UdpLimit>(lr["udp_limit"].clone())
        .ok()
        .map(|l| format!("loss: {}", l.place.describe()))
}
