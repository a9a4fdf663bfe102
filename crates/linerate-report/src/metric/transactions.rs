//! Request/response (rr, crr): transactions/s as the value, the latency percentiles from the
//! run's stored histogram, and transactions per interval over time.

use linerate_store::{Latency, RunRecord};

use super::{Column, Step, extension};
use crate::format;
use crate::unit::Unit;

/// Transactions per second over the whole test.
pub fn value(run: &RunRecord) -> Option<f64> {
    run.summary.transactions_per_second
}

/// The latency below which `p` percent of the transactions completed, microseconds: the
/// engine's own percentile when it stored that one, else the upper bound of the histogram
/// bucket that holds the nearest rank.
pub fn percentile(latency: &Latency, p: f64) -> Option<f64> {
    if let Some((_, us)) = latency.percentiles.iter().find(|(q, _)| *q == p) {
        return Some(*us);
    }
    let total = latency.count();
    if total == 0 {
        return None;
    }
    // Nearest rank: the smallest value with at least p % of the transactions at or below it.
    let rank = ((p / 100.0) * total as f64).ceil().max(1.0) as u64;
    let mut seen = 0;
    latency.buckets.iter().find_map(|b| {
        seen += b.count;
        (seen >= rank).then_some(b.upper_us)
    })
}

/// Transactions per second interval by interval (the engine's `rr.intervals`).
pub fn series(run: &RunRecord) -> Vec<Step> {
    extension(run)
        .and_then(|x| x.rr)
        .map(|rr| {
            rr.intervals
                .iter()
                .map(|i| Step {
                    start: i.start,
                    end: i.end,
                    value: i.transactions_per_second,
                })
                .collect()
        })
        .unwrap_or_default()
}

fn latency_cell(r: &RunRecord, p: f64) -> Option<String> {
    percentile(r.latency.as_ref()?, p).map(format::micros)
}

/// Transactions/s and the latency percentiles.
pub const COLUMNS: &[Column] = &[
    Column {
        header: "Transactions/s",
        note: "Transactions/s: request/response exchanges completed per second over the whole test (the headline number).",
        cell: |r| value(r).map(|v| Unit::TransactionRate.cell(v)),
    },
    Column {
        header: "p50",
        note: "p50, p90, p99: the latency below which half, 90 % and 99 % of the transactions completed.",
        cell: |r| latency_cell(r, 50.0),
    },
    Column {
        header: "p90",
        note: "",
        cell: |r| latency_cell(r, 90.0),
    },
    Column {
        header: "p99",
        note: "",
        cell: |r| latency_cell(r, 99.0),
    },
];
