//! Real iperf3 output (3.6, 3.9, 3.12, 3.21; TCP, UDP, -R, --bidir, -P, -O, server output,
//! --json-stream framing) reads into the schema, and writing it back loses nothing: every key
//! and value comes back (numbers as numbers: `0` may come back as `0.0`; see `same` for the
//! two things that may be left out).

use std::path::{Path, PathBuf};

use linerate_iperf3::{Document, stream};
use serde_json::Value;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("fixture directory").flatten() {
        let p = entry.path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|e| e == "json" || e == "jsonl") {
            out.push(p);
        }
    }
}

/// Every fixture of this crate and of the binary's store and report tests.
fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    files(&root.join("tests/data"), &mut out);
    files(&root.join("../linerate/tests/data/store"), &mut out);
    files(&root.join("../linerate/tests/data/report"), &mut out);
    out.sort();
    out
}

/// Whether `back` (written from the schema) says what `raw` (as iperf3 wrote it) says.
/// A counter iperf3 did not know (-1, or -1 wrapped) and an empty list are left out when
/// written back.
fn same(raw: &Value, back: &Value, path: &str, diffs: &mut Vec<String>) {
    match (raw, back) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                let p = format!("{path}.{k}");
                match b.get(k) {
                    Some(w) => same(v, w, &p, diffs),
                    None if k == "retransmits"
                        && (v.as_i64() == Some(-1) || v.as_u64() == Some(u64::MAX)) => {}
                    None if v.as_array().is_some_and(Vec::is_empty) => {}
                    None => diffs.push(format!("{p}: dropped")),
                }
            }
            for k in b.keys().filter(|k| !a.contains_key(*k)) {
                diffs.push(format!("{path}.{k}: added"));
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (v, w)) in a.iter().zip(b).enumerate() {
                same(v, w, &format!("{path}[{i}]"), diffs);
            }
        }
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => {}
        (a, b) if a == b => {}
        (a, b) => diffs.push(format!("{path}: {a} became {b}")),
    }
}

#[test]
fn every_fixture_reads_and_writes_back_unchanged() {
    let all = fixtures();
    assert!(all.len() >= 20, "fixtures not found: {all:?}");
    let mut read = 0;
    for file in all {
        let text = std::fs::read_to_string(&file).expect("fixture text");
        let docs = match stream::documents(&text) {
            Ok(d) => d,
            // refused.json is iperf3's error document: still a document.
            Err(e) => panic!("{}: {e}", file.display()),
        };
        for raw in docs {
            let doc =
                Document::from_value(&raw).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let back = serde_json::to_value(&doc).expect("serialisable");
            let mut diffs = Vec::new();
            same(&raw, &back, "", &mut diffs);
            assert!(diffs.is_empty(), "{}: {diffs:#?}", file.display());
            read += 1;
        }
    }
    assert!(read >= 25, "{read} documents");
}

fn doc(rel: &str) -> Document {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel);
    let text = std::fs::read_to_string(&path).expect("fixture");
    let raw = stream::documents(&text).expect("documents").remove(0);
    Document::from_value(&raw).expect("document")
}

#[test]
fn what_each_version_says_is_where_the_schema_expects_it() {
    // 3.12 TCP: a sender's totals, retransmits, RTT, congestion control.
    let tcp = doc("iperf3-3.12/tcp.json");
    assert_eq!(tcp.start.version.as_deref(), Some("iperf 3.12"));
    let ts = tcp.start.test_start.as_ref().expect("test_start");
    assert_eq!(
        (ts.protocol.as_deref(), ts.num_streams),
        (Some("TCP"), Some(1))
    );
    let received = tcp.end.sum_received.as_ref().expect("sum_received");
    assert!(received.bytes > 0 && received.bits_per_second > 0.0);
    let sender = tcp.end.streams[0].sender.as_ref().expect("sender");
    assert!(sender.mean_rtt.is_some() && sender.retransmits.is_some());
    assert!(tcp.end.sender_tcp_congestion.is_some());
    assert!(tcp.intervals.iter().all(|i| i.sum.is_some()));

    // 3.12 UDP --bidir -P 2: `sum` and the reverse sums, four UDP streams.
    let udp = doc("iperf3-3.12/udp-bidir-p2.json");
    assert_eq!(udp.end.streams.len(), 4);
    assert!(udp.end.streams.iter().all(|s| s.udp.is_some()));
    assert!(udp.end.sum.as_ref().and_then(|s| s.jitter_ms).is_some());
    assert!(udp.end.sum_received_bidir_reverse.is_some());
    assert!(udp.intervals[0].sum_bidir_reverse.is_some());
    // The same test in --json-stream framing reads the same.
    assert_eq!(doc("iperf3-3.12/udp-bidir-p2-stream.jsonl"), udp);

    // The server's own document rides along in server_output_json.
    let so = doc("iperf3-3.12/server-output-json.json");
    let server = so.server_output_json.expect("server_output_json");
    assert!(server.start.accepted_connection.is_some());
    assert!(server.end.sum_received.is_some_and(|s| s.bytes > 0));
    assert!(
        doc("iperf3-3.12/server-output-text.json")
            .server_output_text
            .is_some()
    );

    // 3.6: intervals without `sender`; a byte-bounded test.
    let old = doc("public/iperf-3.6-tcp-bytes.json");
    assert!(old.intervals.iter().all(|i| i.streams[0].sender.is_none()));
    assert_eq!(
        old.start.test_start.and_then(|t| t.bytes),
        Some(209_715_200)
    );

    // 3.9 with -O 3: omitted intervals, no target_bitrate.
    let omit = doc("public/iperf-3.9-tcp-omit.json");
    assert_eq!(
        omit.intervals
            .iter()
            .filter(|i| i.sum.as_ref().and_then(|s| s.omitted) == Some(true))
            .count(),
        3
    );
    assert!(omit.start.target_bitrate.is_none());

    // 3.21: keys this schema does not name are kept.
    let new = doc("public/iperf-3.21-udp-bidir-p2.json");
    let t = new.start.timestamp.expect("timestamp");
    assert!(t.extra.contains_key("timemillisecs"));
    assert!(
        new.start
            .test_start
            .is_some_and(|t| t.extra.contains_key("gso"))
    );
}

#[test]
fn wrong_types_name_their_place() {
    let mut raw: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/iperf3-3.12/tcp.json"),
        )
        .expect("fixture"),
    )
    .expect("json");
    raw["end"]["sum_sent"]["bytes"] = "ten".into();
    assert_eq!(
        Document::from_value(&raw).err().map(|e| e.to_string()),
        Some(
            "end.sum_sent.bytes: expected a non-negative integer, found the string \"ten\"".into()
        )
    );
    raw["end"]["sum_sent"]["bytes"] = 1.into();
    raw["intervals"][0]["streams"][0]
        .as_object_mut()
        .map(|o| o.remove("end"));
    assert_eq!(
        Document::from_value(&raw).err().map(|e| e.to_string()),
        Some("intervals[0].streams[0].end: missing".into())
    );
    raw["intervals"] = 5.into();
    assert_eq!(
        Document::from_value(&raw).err().map(|e| e.to_string()),
        Some("intervals: is not an array".into())
    );
    assert_eq!(
        Document::from_value(&Value::from(3))
            .err()
            .map(|e| e.to_string()),
        Some("document: is not a JSON object".into())
    );
}
