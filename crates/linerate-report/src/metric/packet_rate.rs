//! Packet rate (pps): received packets/s as the value, packets per interval over time, and
//! the columns a packet-rate test has (sent and received packets/s, loss).

use linerate_store::RunRecord;

use super::{Column, Step, extension};
use crate::unit::Unit;

/// Received packets/s: the engine's own figure, else the datagrams that arrived (sent less
/// lost) over the test's length.
pub fn value(run: &RunRecord) -> Option<f64> {
    extension(run)
        .and_then(|x| x.received_pps)
        .or_else(|| counted(run).map(|(_, received, secs)| received / secs))
}

/// Sent packets/s: the engine's own figure, else the datagrams sent over the test's length.
pub fn sent(run: &RunRecord) -> Option<f64> {
    extension(run)
        .and_then(|x| x.sent_pps)
        .or_else(|| counted(run).map(|(sent, _, secs)| sent / secs))
}

/// Packets lost, and their share of those sent (percent).
pub fn lost(run: &RunRecord) -> Option<(u64, Option<f64>)> {
    let x = extension(run);
    let lost = x
        .as_ref()
        .and_then(|x| x.pps.as_ref().map(|p| p.lost_packets))
        .or_else(|| x.as_ref().and_then(|x| x.lost_packets))
        .or(run.summary.lost_packets)?;
    let share = x
        .as_ref()
        .and_then(|x| x.pps.as_ref().map(|p| p.lost_percent))
        .or(run.summary.lost_percent);
    Some((lost, share))
}

/// (sent, received, seconds) from the document's UDP counts, when it has them.
fn counted(run: &RunRecord) -> Option<(f64, f64, f64)> {
    let sent = run.summary.packets? as f64;
    let lost = run.summary.lost_packets.unwrap_or(0) as f64;
    (run.duration_s > 0.0).then_some((sent, sent - lost, run.duration_s))
}

/// The packets of each interval's forward sum over its length, warm-up excluded (intervals
/// that count no packets are left out).
pub fn series(run: &RunRecord) -> Vec<Step> {
    run.throughput_series()
        .iter()
        .filter_map(|s| {
            let secs = s.end_s - s.start_s;
            let packets = s.packets?;
            (secs > 0.0).then(|| Step {
                start: s.start_s,
                end: s.end_s,
                value: packets as f64 / secs,
            })
        })
        .collect()
}

/// Received and sent packets/s, loss.
pub const COLUMNS: &[Column] = &[
    Column {
        header: "Received",
        note: "Received: packets per second that arrived over the whole test (the headline number).",
        cell: |r| value(r).map(|v| Unit::PacketRate.cell(v)),
    },
    Column {
        header: "Sent",
        note: "",
        cell: |r| sent(r).map(|v| Unit::PacketRate.cell(v)),
    },
    Column {
        header: "Lost",
        note: "Lost: packets sent and never received, and their share of those sent.",
        cell: |r| {
            lost(r).map(|(n, share)| match share {
                Some(p) => format!("{n} ({p:.2}%)"),
                None => n.to_string(),
            })
        },
    },
];
