//! Files of iperf3 output: one `--json` document, several concatenated (as `iperf3 -s -J`
//! writes them), or a `--json-stream` event sequence (3.17+: one `{"event": …, "data": …}`
//! object per line); and the events linerate writes with `--json-stream`.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::{End, Error, Interval, Start};

/// One line of `--json-stream` output.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", content = "data", rename_all = "snake_case")]
pub enum Event<'a> {
    /// The test started.
    Start(&'a Start),
    /// An interval ended.
    Interval(&'a Interval),
    /// The test ended.
    End(&'a End),
    /// The test failed.
    Error(&'a str),
}

/// Splits a file's text into documents, each as it was written (so unknown keys and the way
/// numbers were written survive): one per `--json` document, or one assembled from a
/// `--json-stream` event sequence. Read each with [`crate::Document::from_value`].
pub fn documents(text: &str) -> Result<Vec<Value>, Error> {
    if text.trim().is_empty() {
        return Err(Error::new(
            "file",
            "is empty (expected iperf3 --json or --json-stream output)",
        ));
    }
    let mut values = Vec::new();
    for value in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
        match value {
            Ok(v) => values.push(v),
            Err(e) => {
                return Err(Error::new(
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
        return Ok(vec![assemble(text)?]);
    }
    Ok(values)
}

/// Assembles `--json-stream` lines into one `--json`-shaped document.
fn assemble(text: &str) -> Result<Value, Error> {
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
            .map_err(|e| Error::new(&place, format!("not a JSON object: {e}")))?;
        let event = value.get("event").and_then(Value::as_str).ok_or_else(|| {
            Error::new(
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
                return Err(Error::new(
                    place,
                    format!("iperf3 reported an error: {msg}"),
                ));
            }
            "server_output_json" | "server_output_text" | "linerate" => {
                extra.insert(event.to_owned(), data);
            }
            other => {
                return Err(Error::new(place, format!("unknown event \"{other}\"")));
            }
        }
    }
    let start = start.ok_or_else(|| Error::new("stream", "has no \"start\" event"))?;
    let end =
        end.ok_or_else(|| Error::new("stream", "has no \"end\" event: the test did not finish"))?;
    let mut doc = Map::new();
    doc.insert("start".into(), start);
    doc.insert("intervals".into(), Value::Array(intervals));
    doc.insert("end".into(), end);
    doc.extend(extra);
    Ok(Value::Object(doc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_without_end_is_refused() {
        let text = "{\"event\":\"start\",\"data\":{}}\n{\"event\":\"interval\",\"data\":{}}\n";
        let err = documents(text).err().map(|e| e.to_string());
        assert_eq!(
            err,
            Some("stream: has no \"end\" event: the test did not finish".into())
        );
    }

    #[test]
    fn events_are_written_in_the_stream_framing() {
        let start = Start::default();
        let line = serde_json::to_string(&Event::Start(&start)).unwrap_or_default();
        assert!(
            line.starts_with("{\"event\":\"start\",\"data\":{"),
            "{line}"
        );
        let line = serde_json::to_string(&Event::Error("refused")).unwrap_or_default();
        assert_eq!(line, "{\"event\":\"error\",\"data\":\"refused\"}");
    }

    proptest::proptest! {
        /// Arbitrary bytes as an iperf3 JSON file: an error or documents, never a panic.
        #[test]
        fn arbitrary_bytes_never_panic(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
        ) {
            let _ = crate::Document::from_slice(&bytes);
            let text = String::from_utf8_lossy(&bytes);
            if let Ok(docs) = documents(&text) {
                for d in &docs {
                    let _ = crate::Document::from_value(d);
                }
            }
        }

        /// JSON-looking text (braces, keys iperf3 writes, numbers, newlines) reaches the
        /// stream and document readers deeper than random bytes: never a panic.
        #[test]
        fn json_like_text_never_panics(
            text in r#"(\{|\}|\[|\]|:|,|\n|"event"|"start"|"interval"|"end"|"data"|"error"|"intervals"|"sum_sent"|"bytes"|"streams"|-?[0-9]{1,4}(\.[0-9])?|true|null| ){0,60}"#,
        ) {
            if let Ok(docs) = documents(&text) {
                for d in &docs {
                    let _ = crate::Document::from_value(d);
                }
            }
            let _ = crate::Document::from_slice(text.as_bytes());
        }
    }
}
