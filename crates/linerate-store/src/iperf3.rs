//! iperf3-schema JSON → [`RunRecord`].
//!
//! Reads what `iperf3 --json` (one document, or several concatenated as `iperf3 -s -J`
//! writes them), `iperf3 --json-stream` (one `{"event":…,"data":…}` object per line, 3.17+)
//! and `linerate client --json` print. Every complaint names the place in the document
//! (`end.sum_sent.bytes`) or the line of the stream that is wrong.
//!
//! linerate's extras live in a top-level `linerate` object that iperf3 never writes:
//! `mode` (`rr`, `crr`, `pps`, …), `latency` {`buckets`: [{`upper_us`, `count`}] or
//! [[upper_us, count]], `percentiles`: {"p50": µs, …} or [[50, µs]], `mean_us`},
//! `transactions_per_second`, `host_snapshot_hash`.

use serde_json::{Map, Value};

use crate::record::{
    Direction, HostRef, IntervalSample, Latency, LatencyBucket, RunContext, RunRecord, RunSummary,
    StreamResult,
};

/// What is wrong with a document, and where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{place}: {message}")]
pub struct Iperf3Error {
    /// `line 3`, `end.sum_sent.bytes`, `document 2: start`, …
    pub place: String,
    /// What is wrong there.
    pub message: String,
}

impl Iperf3Error {
    fn new(place: impl Into<String>, message: impl Into<String>) -> Self {
        Iperf3Error {
            place: place.into(),
            message: message.into(),
        }
    }
}

/// Splits a file's text into iperf3 documents: one per `--json` document, or one assembled
/// from a `--json-stream` event sequence.
pub fn parse_documents(text: &str) -> Result<Vec<Value>, Iperf3Error> {
    if text.trim().is_empty() {
        return Err(Iperf3Error::new(
            "file",
            "is empty (expected iperf3 --json or --json-stream output)",
        ));
    }
    let mut values = Vec::new();
    for value in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
        match value {
            Ok(v) => values.push(v),
            Err(e) => {
                return Err(Iperf3Error::new(
                    format!("line {} column {}", e.line(), e.column()),
                    format!("not JSON: {e}")
                        .replace(&format!(" at line {} column {}", e.line(), e.column()), ""),
                ));
            }
        }
    }
    let is_stream = values
        .first()
        .and_then(Value::as_object)
        .is_some_and(|o| o.contains_key("event"));
    if is_stream {
        return Ok(vec![assemble_stream(text)?]);
    }
    Ok(values)
}

/// Assembles `--json-stream` lines into one `--json`-shaped document.
fn assemble_stream(text: &str) -> Result<Value, Iperf3Error> {
    let mut start = None;
    let mut intervals = Vec::new();
    let mut end = None;
    let mut extra = Map::new();
    for (n, line) in text.lines().enumerate() {
        let place = format!("line {}", n + 1);
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(line)
            .map_err(|e| Iperf3Error::new(&place, format!("not a JSON object: {e}")))?;
        let event = value.get("event").and_then(Value::as_str).ok_or_else(|| {
            Iperf3Error::new(
                &place,
                "has no \"event\" string (not --json-stream output?)",
            )
        })?;
        let data = value.get("data").cloned().unwrap_or(Value::Null);
        match event {
            "start" => start = Some(data),
            "interval" => intervals.push(data),
            "end" => end = Some(data),
            "error" => {
                let msg = data
                    .as_str()
                    .map_or_else(|| data.to_string(), str::to_owned);
                return Err(Iperf3Error::new(
                    place,
                    format!("iperf3 reported an error: {msg}"),
                ));
            }
            "server_output_json" | "server_output_text" | "linerate" => {
                extra.insert(event.to_owned(), data);
            }
            other => {
                return Err(Iperf3Error::new(
                    place,
                    format!("unknown event \"{other}\""),
                ));
            }
        }
    }
    let start = start.ok_or_else(|| Iperf3Error::new("stream", "has no \"start\" event"))?;
    let end = end.ok_or_else(|| {
        Iperf3Error::new("stream", "has no \"end\" event: the test did not finish")
    })?;
    let mut doc = Map::new();
    doc.insert("start".into(), start);
    doc.insert("intervals".into(), Value::Array(intervals));
    doc.insert("end".into(), end);
    doc.extend(extra);
    Ok(Value::Object(doc))
}

/// Builds a record from one iperf3-schema document.
pub fn record_from_document(doc: &Value, context: RunContext) -> Result<RunRecord, Iperf3Error> {
    let root = doc
        .as_object()
        .ok_or_else(|| Iperf3Error::new("document", "is not a JSON object"))?;
    if let Some(err) = root.get("error") {
        let msg = err.as_str().map_or_else(|| err.to_string(), str::to_owned);
        return Err(Iperf3Error::new(
            "document",
            format!("iperf3 reported an error instead of results: {msg}"),
        ));
    }
    let start = object(root, "start", "")?;
    let end = object(root, "end", "")?;
    if end.is_empty() {
        return Err(Iperf3Error::new("end", "is empty: the test did not finish"));
    }
    let intervals_json = root
        .get("intervals")
        .ok_or_else(|| Iperf3Error::new("intervals", "missing"))?
        .as_array()
        .ok_or_else(|| Iperf3Error::new("intervals", "is not an array"))?;
    let extras = root.get("linerate").and_then(Value::as_object);

    let timestamp = object(start, "timestamp", "start")?;
    let started_at = i64::try_from(integer(timestamp, "timesecs", "start.timestamp")?)
        .map_err(|_| Iperf3Error::new("start.timestamp.timesecs", "out of range"))?;
    let test_start = object(start, "test_start", "start")?;
    let protocol = test_start
        .get("protocol")
        .and_then(Value::as_str)
        .ok_or_else(|| Iperf3Error::new("start.test_start.protocol", "missing or not a string"))?;
    // linerate's bulk mode ("stream") is iperf3's: name it by its protocol, like iperf3 runs.
    let mode = match extras.and_then(|x| x.get("mode")).and_then(Value::as_str) {
        Some(m) if m != "stream" => m.to_owned(),
        _ => protocol.to_ascii_lowercase(),
    };
    let streams = u32::try_from(integer(test_start, "num_streams", "start.test_start")?)
        .map_err(|_| Iperf3Error::new("start.test_start.num_streams", "out of range"))?;
    let bidir = end.contains_key("sum_sent_bidir_reverse")
        || test_start
            .get("bidir")
            .and_then(as_u64)
            .is_some_and(|b| b != 0);
    let direction = if bidir {
        Direction::Bidir
    } else if test_start
        .get("reverse")
        .and_then(as_u64)
        .is_some_and(|r| r != 0)
    {
        Direction::Reverse
    } else {
        Direction::Send
    };
    let peer = start
        .get("connecting_to")
        .and_then(Value::as_object)
        .and_then(|c| {
            let host = c.get("host")?.as_str()?;
            let port = c.get("port").and_then(as_u64)?;
            Some(if host.contains(':') {
                format!("[{host}]:{port}")
            } else {
                format!("{host}:{port}")
            })
        });
    let tool = context.tool.clone().unwrap_or_else(|| {
        start
            .get("version")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_owned()
    });

    let summary = summary(end, extras)?;
    let duration_s = ["sum_received", "sum_sent", "sum"]
        .iter()
        .find_map(|k| end.get(*k)?.get("seconds").and_then(Value::as_f64))
        .or_else(|| test_start.get("duration").and_then(Value::as_f64))
        .unwrap_or(0.0);

    let mut intervals = Vec::new();
    for (i, interval) in intervals_json.iter().enumerate() {
        let place = format!("intervals[{i}]");
        let index = u32::try_from(i).map_err(|_| Iperf3Error::new(&place, "too many intervals"))?;
        let obj = interval
            .as_object()
            .ok_or_else(|| Iperf3Error::new(&place, "is not an object"))?;
        let streams_json = obj
            .get("streams")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                Iperf3Error::new(format!("{place}.streams"), "missing or not an array")
            })?;
        for (j, s) in streams_json.iter().enumerate() {
            let p = format!("{place}.streams[{j}]");
            intervals.push(sample(s, index, true, &p)?);
        }
        for key in ["sum", "sum_bidir_reverse"] {
            if let Some(s) = obj.get(key) {
                intervals.push(sample(s, index, false, &format!("{place}.{key}"))?);
            }
        }
    }

    let mut stream_results = Vec::new();
    if let Some(list) = end.get("streams").and_then(Value::as_array) {
        for (i, s) in list.iter().enumerate() {
            stream_results.push(stream_result(s, &format!("end.streams[{i}]"))?);
        }
    }

    let latency = match extras.and_then(|x| x.get("latency")) {
        Some(l) => Some(latency(l)?),
        None => None,
    };
    let host = context.host.clone().or_else(|| {
        let hash = extras?.get("host_snapshot_hash")?.as_str()?;
        Some(HostRef {
            hash: hash.to_owned(),
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
        params: Value::Object(test_start.clone()),
        summary,
        intervals,
        stream_results,
        latency,
        host,
        experiment: context.experiment,
        document: doc.clone(),
    })
}

fn summary(
    end: &Map<String, Value>,
    extras: Option<&Map<String, Value>>,
) -> Result<RunSummary, Iperf3Error> {
    // UDP from iperf3 < 3.9 has only `sum`; everything newer has sum_sent and sum_received.
    let sent = end
        .get("sum_sent")
        .or_else(|| end.get("sum"))
        .and_then(Value::as_object)
        .ok_or_else(|| Iperf3Error::new("end.sum_sent", "missing (neither sum_sent nor sum)"))?;
    let received = end
        .get("sum_received")
        .or_else(|| end.get("sum"))
        .and_then(Value::as_object)
        .ok_or_else(|| Iperf3Error::new("end.sum_received", "missing"))?;
    let udp_sum = end
        .get("sum")
        .and_then(Value::as_object)
        .unwrap_or(received);
    let cpu = end
        .get("cpu_utilization_percent")
        .and_then(Value::as_object);
    let rtts: Vec<f64> = end
        .get("streams")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|s| s.get("sender")?.get("mean_rtt").and_then(Value::as_f64))
                .collect()
        })
        .unwrap_or_default();
    Ok(RunSummary {
        bytes_sent: integer(sent, "bytes", "end.sum_sent")?,
        bytes_received: integer(received, "bytes", "end.sum_received")?,
        sent_bps: number(sent, "bits_per_second", "end.sum_sent")?,
        received_bps: number(received, "bits_per_second", "end.sum_received")?,
        reverse_received_bps: end
            .get("sum_received_bidir_reverse")
            .and_then(|s| s.get("bits_per_second"))
            .and_then(Value::as_f64),
        retransmits: sent.get("retransmits").and_then(counter),
        jitter_ms: udp_sum.get("jitter_ms").and_then(Value::as_f64),
        lost_packets: udp_sum.get("lost_packets").and_then(as_u64),
        packets: udp_sum.get("packets").and_then(as_u64),
        lost_percent: udp_sum.get("lost_percent").and_then(Value::as_f64),
        cpu_local_percent: cpu
            .and_then(|c| c.get("host_total"))
            .and_then(Value::as_f64),
        cpu_remote_percent: cpu
            .and_then(|c| c.get("remote_total"))
            .and_then(Value::as_f64),
        mean_rtt_us: (!rtts.is_empty()).then(|| rtts.iter().sum::<f64>() / rtts.len() as f64),
        transactions_per_second: extras
            .and_then(|x| x.get("transactions_per_second"))
            .and_then(Value::as_f64),
    })
}

fn sample(
    v: &Value,
    index: u32,
    per_stream: bool,
    place: &str,
) -> Result<IntervalSample, Iperf3Error> {
    let o = v
        .as_object()
        .ok_or_else(|| Iperf3Error::new(place, "is not an object"))?;
    let stream = if per_stream {
        Some(o.get("socket").and_then(Value::as_i64).ok_or_else(|| {
            Iperf3Error::new(format!("{place}.socket"), "missing or not an integer")
        })?)
    } else {
        None
    };
    Ok(IntervalSample {
        index,
        stream,
        start_s: number(o, "start", place)?,
        end_s: number(o, "end", place)?,
        bytes: integer(o, "bytes", place)?,
        bits_per_second: number(o, "bits_per_second", place)?,
        // iperf3 < 3.8 has no `sender` in intervals: those were the client's sending side.
        sender: o.get("sender").and_then(Value::as_bool).unwrap_or(true),
        omitted: o.get("omitted").and_then(Value::as_bool).unwrap_or(false),
        retransmits: o.get("retransmits").and_then(counter),
        rtt_us: o.get("rtt").and_then(as_u64),
        snd_cwnd: o.get("snd_cwnd").and_then(as_u64),
        packets: o.get("packets").and_then(as_u64),
    })
}

fn stream_result(v: &Value, place: &str) -> Result<StreamResult, Iperf3Error> {
    let o = v
        .as_object()
        .ok_or_else(|| Iperf3Error::new(place, "is not an object"))?;
    if let Some(udp) = o.get("udp").and_then(Value::as_object) {
        let p = format!("{place}.udp");
        let bytes = integer(udp, "bytes", &p)?;
        let bps = number(udp, "bits_per_second", &p)?;
        return Ok(StreamResult {
            stream: udp.get("socket").and_then(Value::as_i64).unwrap_or(0),
            sender: udp.get("sender").and_then(Value::as_bool).unwrap_or(true),
            bytes_sent: bytes,
            bytes_received: bytes,
            sent_bps: bps,
            received_bps: bps,
            retransmits: None,
            mean_rtt_us: None,
            jitter_ms: udp.get("jitter_ms").and_then(Value::as_f64),
            lost_packets: udp.get("lost_packets").and_then(as_u64),
            packets: udp.get("packets").and_then(as_u64),
        });
    }
    let sender = object(o, "sender", place)?;
    let receiver = object(o, "receiver", place)?;
    let sp = format!("{place}.sender");
    let rp = format!("{place}.receiver");
    Ok(StreamResult {
        stream: sender.get("socket").and_then(Value::as_i64).unwrap_or(0),
        sender: sender
            .get("sender")
            .and_then(Value::as_bool)
            .unwrap_or(true),
        bytes_sent: integer(sender, "bytes", &sp)?,
        bytes_received: integer(receiver, "bytes", &rp)?,
        sent_bps: number(sender, "bits_per_second", &sp)?,
        received_bps: number(receiver, "bits_per_second", &rp)?,
        retransmits: sender.get("retransmits").and_then(counter),
        mean_rtt_us: sender.get("mean_rtt").and_then(as_u64),
        jitter_ms: None,
        lost_packets: None,
        packets: None,
    })
}

fn latency(v: &Value) -> Result<Latency, Iperf3Error> {
    let place = "linerate.latency";
    let o = v
        .as_object()
        .ok_or_else(|| Iperf3Error::new(place, "is not an object"))?;
    let mut buckets = Vec::new();
    if let Some(list) = o.get("buckets") {
        let list = list
            .as_array()
            .ok_or_else(|| Iperf3Error::new(format!("{place}.buckets"), "is not an array"))?;
        for (i, b) in list.iter().enumerate() {
            let (upper, count) = match b {
                Value::Array(pair) if pair.len() == 2 => (pair[0].as_f64(), as_u64(&pair[1])),
                Value::Object(m) => (
                    m.get("upper_us")
                        .or_else(|| m.get("le_us"))
                        .and_then(Value::as_f64),
                    m.get("count").and_then(as_u64),
                ),
                _ => (None, None),
            };
            match (upper, count) {
                (Some(upper_us), Some(count)) if upper_us.is_finite() => {
                    buckets.push(LatencyBucket { upper_us, count })
                }
                _ => {
                    return Err(Iperf3Error::new(
                        format!("{place}.buckets[{i}]"),
                        "expected {\"upper_us\": number, \"count\": integer} or [upper_us, count]",
                    ));
                }
            }
        }
    }
    buckets.sort_by(|a, b| a.upper_us.total_cmp(&b.upper_us));
    let mut percentiles = Vec::new();
    match o.get("percentiles") {
        Some(Value::Object(m)) => {
            for (k, v) in m {
                let p = k.trim_start_matches('p').parse::<f64>().ok();
                if let (Some(p), Some(us)) = (p, v.as_f64()) {
                    percentiles.push((p, us));
                }
            }
        }
        Some(Value::Array(list)) => {
            for pair in list {
                if let (Some(p), Some(us)) = (
                    pair.get(0).and_then(Value::as_f64),
                    pair.get(1).and_then(Value::as_f64),
                ) {
                    percentiles.push((p, us));
                }
            }
        }
        _ => {}
    }
    percentiles.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(Latency {
        buckets,
        percentiles,
        mean_us: o.get("mean_us").and_then(Value::as_f64),
    })
}

fn object<'a>(
    o: &'a Map<String, Value>,
    key: &str,
    parent: &str,
) -> Result<&'a Map<String, Value>, Iperf3Error> {
    let place = join(parent, key);
    match o.get(key) {
        Some(Value::Object(m)) => Ok(m),
        Some(other) => Err(Iperf3Error::new(
            place,
            format!("expected an object, found {}", kind(other)),
        )),
        None => Err(Iperf3Error::new(place, "missing")),
    }
}

fn number(o: &Map<String, Value>, key: &str, parent: &str) -> Result<f64, Iperf3Error> {
    match o.get(key) {
        Some(v) => v.as_f64().filter(|x| x.is_finite()).ok_or_else(|| {
            Iperf3Error::new(
                join(parent, key),
                format!("expected a number, found {}", kind(v)),
            )
        }),
        None => Err(Iperf3Error::new(join(parent, key), "missing")),
    }
}

fn integer(o: &Map<String, Value>, key: &str, parent: &str) -> Result<u64, Iperf3Error> {
    match o.get(key) {
        Some(v) => as_u64(v).ok_or_else(|| {
            Iperf3Error::new(
                join(parent, key),
                format!("expected a non-negative integer, found {}", kind(v)),
            )
        }),
        None => Err(Iperf3Error::new(join(parent, key), "missing")),
    }
}

fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

/// A non-negative integer, also when written as an integral float (`3.0`).
fn as_u64(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        let f = v.as_f64()?;
        // Truncation is exact here: f is integral and within u64's range.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        (f >= 0.0 && f.fract() == 0.0 && f < 1.8e19).then_some(f as u64)
    })
}

/// A counter that iperf3 may report as -1 or as -1 wrapped to 2⁶⁴−1 (3.12's server) when it
/// does not know it.
fn counter(v: &Value) -> Option<u64> {
    as_u64(v).filter(|&n| n != u64::MAX)
}

fn kind(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("{b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
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
    fn stream_without_end_is_refused() {
        let text = "{\"event\":\"start\",\"data\":{}}\n{\"event\":\"interval\",\"data\":{}}\n";
        let err = parse_documents(text).err().map(|e| e.to_string());
        assert_eq!(
            err,
            Some("stream: has no \"end\" event: the test did not finish".into())
        );
    }

    #[test]
    fn wrapped_minus_one_counter_is_unknown() {
        assert_eq!(counter(&serde_json::json!(18446744073709551615u64)), None);
        assert_eq!(counter(&serde_json::json!(7)), Some(7));
        assert_eq!(counter(&serde_json::json!(-1)), None);
    }

    #[test]
    fn latency_accepts_objects_and_pairs() {
        let l = latency(&serde_json::json!({
            "buckets": [[20.0, 3], {"upper_us": 10.0, "count": 2}],
            "percentiles": {"p50": 9.5, "p99": 19.0},
            "mean_us": 12.0
        }));
        let l = l.ok();
        assert_eq!(l.as_ref().map(Latency::count), Some(5));
        assert_eq!(l.as_ref().map(|l| l.buckets[0].upper_us), Some(10.0));
        assert_eq!(
            l.map(|l| l.percentiles),
            Some(vec![(50.0, 9.5), (99.0, 19.0)])
        );
    }
}
