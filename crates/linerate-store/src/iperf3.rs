//! iperf3-schema documents ([`linerate_iperf3::Document`]) → [`RunRecord`].
//!
//! Reads what `iperf3 --json` (one document, or several concatenated as `iperf3 -s -J`
//! writes them), `iperf3 --json-stream` (3.17+) and `linerate client --json` print. The schema
//! crate reads the values and names the place of a wrong one (`end.sum_sent.bytes`); this
//! module checks that the values a stored run needs are there.
//!
//! linerate's extras come from the document's `linerate` object: `mode` (`rr`, `crr`, `pps`,
//! …), the latency histogram (`latency`, or the one an rr/crr run of `linerate client` writes
//! in `rr`), `transactions_per_second`, `host_snapshot_hash`.

use linerate_iperf3::linerate::{LatencyHistogram, RrResult};
use linerate_iperf3::{Document, End, EndReport, EndStream, IntervalReport};
use serde_json::Value;

use crate::record::{
    Direction, HostRef, IntervalSample, Latency, LatencyBucket, RunContext, RunRecord, RunSummary,
    StreamResult,
};

/// What is wrong with a document, and where (`line 3`, `end.sum_sent.bytes`, `document 2 of
/// 3: start`, …).
pub use linerate_iperf3::Error as Iperf3Error;

/// Splits a file's text into iperf3 documents, each as written: one per `--json` document,
/// or one assembled from a `--json-stream` event sequence.
pub fn parse_documents(text: &str) -> Result<Vec<Value>, Iperf3Error> {
    linerate_iperf3::stream::documents(text)
}

/// Builds a record from one document as it was written; the record keeps it verbatim (unknown
/// keys and the way numbers were written included), so `show --json` gives it back.
pub fn record_from_document(doc: &Value, context: RunContext) -> Result<RunRecord, Iperf3Error> {
    let typed = Document::from_value(doc)?;
    let mut run = record(&typed, context)?;
    if let Some(params) = doc.get("start").and_then(|s| s.get("test_start")) {
        run.params = params.clone();
    }
    run.document = doc.clone();
    Ok(run)
}

/// Builds a record from a document: the one linerate's client just measured, or one read
/// with [`Document::from_value`]. The record keeps the document as the schema writes it.
pub fn record(doc: &Document, context: RunContext) -> Result<RunRecord, Iperf3Error> {
    if let Some(msg) = &doc.error {
        return Err(Iperf3Error::new(
            "document",
            format!("iperf3 reported an error instead of results: {msg}"),
        ));
    }
    let end = &doc.end;
    if end.is_empty() {
        return Err(Iperf3Error::new("end", "is empty: the test did not finish"));
    }
    let extras = doc.linerate.as_ref();
    let start = &doc.start;
    let started_at = start
        .timestamp
        .as_ref()
        .and_then(|t| t.timesecs)
        .ok_or_else(|| Iperf3Error::new("start.timestamp.timesecs", "missing"))?;
    let started_at = i64::try_from(started_at)
        .map_err(|_| Iperf3Error::new("start.timestamp.timesecs", "out of range"))?;
    let test_start = start
        .test_start
        .as_ref()
        .ok_or_else(|| Iperf3Error::new("start.test_start", "missing"))?;
    let protocol = test_start
        .protocol
        .as_deref()
        .ok_or_else(|| Iperf3Error::new("start.test_start.protocol", "missing or not a string"))?;
    // linerate's bulk mode ("stream") is iperf3's: name it by its protocol, like iperf3 runs.
    let mode = match extras.and_then(|x| x.mode.as_deref()) {
        Some(m) if m != "stream" => m.to_owned(),
        _ => protocol.to_ascii_lowercase(),
    };
    let streams = test_start
        .num_streams
        .ok_or_else(|| Iperf3Error::new("start.test_start.num_streams", "missing"))?;
    let streams = u32::try_from(streams)
        .map_err(|_| Iperf3Error::new("start.test_start.num_streams", "out of range"))?;
    let bidir = end.sum_sent_bidir_reverse.is_some() || test_start.bidir.is_some_and(|b| b != 0);
    let direction = if bidir {
        Direction::Bidir
    } else if test_start.reverse.is_some_and(|r| r != 0) {
        Direction::Reverse
    } else {
        Direction::Send
    };
    let peer = start.connecting_to.as_ref().and_then(|c| {
        let port = c.port?;
        Some(if c.host.contains(':') {
            format!("[{}]:{port}", c.host)
        } else {
            format!("{}:{port}", c.host)
        })
    });
    let tool = context.tool.clone().unwrap_or_else(|| {
        start
            .version
            .clone()
            .unwrap_or_else(|| "unknown".to_owned())
    });

    let summary = summary(end, doc)?;
    let duration_s = [&end.sum_received, &end.sum_sent, &end.sum]
        .iter()
        .find_map(|s| s.as_ref()?.seconds)
        .or(test_start.duration)
        .unwrap_or(0.0);

    let mut intervals = Vec::new();
    for (i, interval) in doc.intervals.iter().enumerate() {
        let place = format!("intervals[{i}]");
        let index = u32::try_from(i).map_err(|_| Iperf3Error::new(&place, "too many intervals"))?;
        for (j, s) in interval.streams.iter().enumerate() {
            let stream = s.socket.ok_or_else(|| {
                Iperf3Error::new(
                    format!("{place}.streams[{j}].socket"),
                    "missing or not an integer",
                )
            })?;
            intervals.push(sample(s, index, Some(stream)));
        }
        for s in [&interval.sum, &interval.sum_bidir_reverse]
            .into_iter()
            .flatten()
        {
            intervals.push(sample(s, index, None));
        }
    }

    let stream_results = end
        .streams
        .iter()
        .enumerate()
        .map(|(i, s)| stream_result(s, &format!("end.streams[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;

    let host = context.host.clone().or_else(|| {
        Some(HostRef {
            hash: extras?.host_snapshot_hash.clone()?,
            snapshot: None,
        })
    });

    Ok(RunRecord {
        started_at,
        source: context.source,
        source_path: context.source_path,
        command_line: context.command_line,
        tool,
        mode,
        direction,
        peer,
        streams,
        duration_s,
        params: serde_json::to_value(test_start).unwrap_or(Value::Null),
        summary,
        intervals,
        stream_results,
        latency: extras.and_then(|x| match (&x.latency, &x.rr) {
            (Some(l), _) => Some(latency(l)),
            (None, Some(rr)) => rr_latency(rr),
            (None, None) => None,
        }),
        host,
        experiment: context.experiment,
        partial: extras.is_some_and(|x| x.interrupted.is_some()),
        document: serde_json::to_value(doc).unwrap_or(Value::Null),
    })
}

fn summary(end: &End, doc: &Document) -> Result<RunSummary, Iperf3Error> {
    // UDP from iperf3 < 3.9 has only `sum`; everything newer has sum_sent and sum_received.
    let sent =
        end.sum_sent.as_ref().or(end.sum.as_ref()).ok_or_else(|| {
            Iperf3Error::new("end.sum_sent", "missing (neither sum_sent nor sum)")
        })?;
    let received = end
        .sum_received
        .as_ref()
        .or(end.sum.as_ref())
        .ok_or_else(|| Iperf3Error::new("end.sum_received", "missing"))?;
    let udp_sum = end.sum.as_ref().unwrap_or(received);
    let cpu = end.cpu_utilization_percent.as_ref();
    let rtts: Vec<f64> = end
        .streams
        .iter()
        .filter_map(|s| s.sender.as_ref()?.mean_rtt)
        .map(|r| r as f64)
        .collect();
    Ok(RunSummary {
        bytes_sent: sent.bytes,
        bytes_received: received.bytes,
        sent_bps: sent.bits_per_second,
        received_bps: received.bits_per_second,
        reverse_received_bps: end
            .sum_received_bidir_reverse
            .as_ref()
            .map(|s| s.bits_per_second),
        retransmits: sent.retransmits,
        jitter_ms: udp_sum.jitter_ms,
        lost_packets: udp_sum.lost_packets,
        packets: udp_sum.packets,
        lost_percent: udp_sum.lost_percent,
        cpu_local_percent: cpu.and_then(|c| c.host_total),
        cpu_remote_percent: cpu.and_then(|c| c.remote_total),
        mean_rtt_us: (!rtts.is_empty()).then(|| rtts.iter().sum::<f64>() / rtts.len() as f64),
        transactions_per_second: doc
            .linerate
            .as_ref()
            .and_then(|x| x.transactions_per_second),
    })
}

fn sample(s: &IntervalReport, index: u32, stream: Option<i64>) -> IntervalSample {
    IntervalSample {
        index,
        stream,
        start_s: s.start,
        end_s: s.end,
        bytes: s.bytes,
        bits_per_second: s.bits_per_second,
        // iperf3 < 3.8 has no `sender` in intervals: those were the client's sending side.
        sender: s.sender.unwrap_or(true),
        omitted: s.omitted.unwrap_or(false),
        retransmits: s.retransmits,
        rtt_us: s.rtt,
        snd_cwnd: s.snd_cwnd,
        packets: s.packets,
    }
}

fn stream_result(s: &EndStream, place: &str) -> Result<StreamResult, Iperf3Error> {
    if let Some(udp) = &s.udp {
        return Ok(StreamResult {
            stream: udp.socket.unwrap_or(0),
            sender: udp.sender.unwrap_or(true),
            bytes_sent: udp.bytes,
            bytes_received: udp.bytes,
            sent_bps: udp.bits_per_second,
            received_bps: udp.bits_per_second,
            retransmits: None,
            mean_rtt_us: None,
            jitter_ms: udp.jitter_ms,
            lost_packets: udp.lost_packets,
            packets: udp.packets,
        });
    }
    let missing = |key: &str| Iperf3Error::new(format!("{place}.{key}"), "missing");
    let sender: &EndReport = s.sender.as_ref().ok_or_else(|| missing("sender"))?;
    let receiver: &EndReport = s.receiver.as_ref().ok_or_else(|| missing("receiver"))?;
    Ok(StreamResult {
        stream: sender.socket.unwrap_or(0),
        sender: sender.sender.unwrap_or(true),
        bytes_sent: sender.bytes,
        bytes_received: receiver.bytes,
        sent_bps: sender.bits_per_second,
        received_bps: receiver.bits_per_second,
        retransmits: sender.retransmits,
        mean_rtt_us: sender.mean_rtt,
        jitter_ms: None,
        lost_packets: None,
        packets: None,
    })
}

fn latency(l: &LatencyHistogram) -> Latency {
    Latency {
        buckets: l
            .buckets
            .iter()
            .map(|b| LatencyBucket {
                upper_us: b.upper_us,
                count: b.count,
            })
            .collect(),
        percentiles: l.percentiles.clone(),
        mean_us: l.mean_us,
    }
}

/// The latency of linerate's own rr/crr run: its HDR histogram (`[highest value, count]`
/// in `unit`) and the percentiles it computed.
fn rr_latency(rr: &RrResult) -> Option<Latency> {
    let per_us = match rr.histogram.unit.as_str() {
        "ns" => 1000.0,
        "us" | "µs" => 1.0,
        _ => return None,
    };
    let l = &rr.latency;
    if l.count == 0 || rr.histogram.buckets.is_empty() {
        return None;
    }
    Some(Latency {
        buckets: rr
            .histogram
            .buckets
            .iter()
            .map(|[value, count]| LatencyBucket {
                upper_us: *value as f64 / per_us,
                count: *count,
            })
            .collect(),
        percentiles: vec![
            (50.0, l.p50_us),
            (90.0, l.p90_us),
            (99.0, l.p99_us),
            (99.9, l.p999_us),
        ],
        mean_us: Some(l.mean_us),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RunSource;

    fn doc(json: &str) -> Value {
        serde_json::from_str(json).unwrap_or(Value::Null)
    }

    #[test]
    fn missing_end_field_names_the_path() {
        let d = doc(
            r#"{"start":{"timestamp":{"timesecs":1},"test_start":{"protocol":"TCP","num_streams":1}},
               "intervals":[],"end":{"sum_sent":{"bytes":"ten","bits_per_second":1},
               "sum_received":{"bytes":1,"bits_per_second":1}}}"#,
        );
        let err = record_from_document(&d, RunContext::new(RunSource::Import)).err();
        assert_eq!(
            err.map(|e| e.to_string()),
            Some(
                "end.sum_sent.bytes: expected a non-negative integer, found the string \"ten\""
                    .into()
            )
        );
    }

    #[test]
    fn linerate_rr_runs_keep_their_latency_histogram() {
        // `linerate client --mode rr --json` as the traffic engine writes it (its golden file).
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../linerate-traffic/tests/data/golden/udp-pps.json");
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let runs = crate::RunRecord::from_iperf3_text(&text, &RunContext::new(RunSource::Client));
        let latency = runs.ok().and_then(|mut r| r.pop()).and_then(|r| r.latency);
        assert_eq!(
            latency.as_ref().map(|l| (l.count(), l.buckets[0].upper_us)),
            Some((10, 12.0))
        );
        assert_eq!(latency.map(|l| l.percentiles[0]), Some((50.0, 12.0)));
    }

    #[test]
    fn stream_without_end_is_refused() {
        let text = "{\"event\":\"start\",\"data\":{}}\n{\"event\":\"interval\",\"data\":{}}\n";
        let err = parse_documents(text).err().map(|e| e.to_string());
        assert_eq!(
            err,
            Some("stream: has no \"end\" event: the test did not finish".into())
        );
    }
}
