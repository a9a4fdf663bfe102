//! Real iperf3 output of several versions imports, and no input, however mangled, panics the
//! importer: it gives a record or an error.

use std::path::{Path, PathBuf};

use linerate_store::{Direction, RunContext, RunRecord, RunSource};
use proptest::prelude::*;
use serde_json::Value;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../linerate-iperf3/tests/data")
        .join(rel)
}

fn import(rel: &str) -> RunRecord {
    let text = std::fs::read_to_string(data(rel)).expect("fixture");
    let mut runs = RunRecord::from_iperf3_text(&text, &RunContext::new(RunSource::Import))
        .unwrap_or_else(|e| panic!("{rel}: {e}"));
    assert_eq!(runs.len(), 1, "{rel}");
    runs.remove(0)
}

#[test]
fn every_version_and_mode_imports() {
    let cases: [(&str, &str, Direction, u32); 12] = [
        ("iperf3-3.12/tcp.json", "tcp", Direction::Send, 1),
        ("iperf3-3.12/udp.json", "udp", Direction::Send, 1),
        ("iperf3-3.12/reverse.json", "tcp", Direction::Reverse, 1),
        ("iperf3-3.12/bidir.json", "tcp", Direction::Bidir, 1),
        ("iperf3-3.12/tcp-p2.json", "tcp", Direction::Send, 2),
        ("iperf3-3.12/udp-bidir-p2.json", "udp", Direction::Bidir, 2),
        (
            "iperf3-3.12/udp-bidir-p2-stream.jsonl",
            "udp",
            Direction::Bidir,
            2,
        ),
        (
            "iperf3-3.12/server-output-json.json",
            "tcp",
            Direction::Send,
            1,
        ),
        (
            "iperf3-3.12/server-output-text.json",
            "tcp",
            Direction::Send,
            1,
        ),
        ("public/iperf-3.6-tcp-bytes.json", "tcp", Direction::Send, 1),
        ("public/iperf-3.9-tcp-omit.json", "tcp", Direction::Send, 1),
        (
            "public/iperf-3.21-udp-bidir-p2.json",
            "udp",
            Direction::Bidir,
            2,
        ),
    ];
    for (rel, mode, direction, streams) in cases {
        let run = import(rel);
        assert_eq!(
            (run.mode.as_str(), run.direction, run.streams),
            (mode, direction, streams),
            "{rel}"
        );
        assert!(run.summary.received_bps > 0.0, "{rel}");
        assert!(!run.intervals.is_empty(), "{rel}");
        assert!(run.tool.starts_with("iperf 3."), "{rel}: {}", run.tool);
    }
    // The omitted warm-up of 3.9's -O 3 is flagged, and left out of the throughput series.
    let omit = import("public/iperf-3.9-tcp-omit.json");
    assert_eq!(omit.intervals.iter().filter(|s| s.omitted).count(), 6);
    assert_eq!(omit.throughput_series().len(), 10);
    // A bidir run has the reverse direction's rate; UDP has loss figures.
    let udp = import("public/iperf-3.21-udp-bidir-p2.json");
    assert!(udp.summary.reverse_received_bps.is_some());
    assert_eq!(udp.summary.packets, Some(834));
    // The document is kept as written: the keys this schema does not name are there.
    assert!(udp.document["start"]["timestamp"]["timemillisecs"].is_u64());
}

/// Every value of a document, with its path.
fn paths(v: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    out.push(at.clone());
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                at.push(k.clone());
                paths(x, at, out);
                at.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                at.push(i.to_string());
                paths(x, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn at_mut<'a>(v: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, k| match v {
        Value::Object(m) => m.get_mut(k),
        Value::Array(a) => a.get_mut(k.parse::<usize>().ok()?),
        _ => None,
    })
}

fn any_json() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("JSON numbers are finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[a-z0-9 ]{0,8}".prop_map(Value::from),
        Just(serde_json::json!([])),
        Just(serde_json::json!({})),
        Just(serde_json::json!([[1, 2], {"upper_us": "x"}])),
    ]
}

const FIXTURES: [&str; 5] = [
    "iperf3-3.12/tcp.json",
    "iperf3-3.12/udp-bidir-p2.json",
    "iperf3-3.12/server-output-json.json",
    "public/iperf-3.6-tcp-bytes.json",
    "public/iperf-3.21-udp-bidir-p2.json",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any value anywhere replaced (or removed) in a real document: a record or an error.
    #[test]
    fn mutated_documents_never_panic(
        file in 0..FIXTURES.len(),
        picks in proptest::collection::vec((any::<prop::sample::Index>(), any_json(), any::<bool>()), 1..6),
    ) {
        let text = std::fs::read_to_string(data(FIXTURES[file])).expect("fixture");
        let mut doc: Value = serde_json::from_str(&text).expect("json");
        for (pick, value, remove) in picks {
            let mut all = Vec::new();
            paths(&doc, &mut Vec::new(), &mut all);
            let path = pick.get(&all).clone();
            if remove && !path.is_empty() {
                let (last, parent) = path.split_last().expect("non-empty");
                match at_mut(&mut doc, parent) {
                    Some(Value::Object(m)) => { m.remove(last); }
                    Some(Value::Array(a)) => {
                        if let Ok(i) = last.parse::<usize>() { if i < a.len() { a.remove(i); } }
                    }
                    _ => {}
                }
            } else if let Some(slot) = at_mut(&mut doc, &path) {
                *slot = value;
            }
        }
        let _ = RunRecord::from_iperf3_json(&doc, RunContext::new(RunSource::Import));
        let _ = RunRecord::from_iperf3_text(&doc.to_string(), &RunContext::new(RunSource::Import));
    }

    /// Cut-off files and arbitrary text: an error, never a panic.
    #[test]
    fn truncated_and_random_text_never_panics(file in 0..FIXTURES.len(), cut in 0usize..8000, junk in ".{0,64}") {
        let text = std::fs::read_to_string(data(FIXTURES[file])).expect("fixture");
        let cut = text.char_indices().map(|(i, _)| i).take_while(|&i| i <= cut).last().unwrap_or(0);
        let _ = RunRecord::from_iperf3_text(&text[..cut], &RunContext::new(RunSource::Import));
        let _ = RunRecord::from_iperf3_text(&format!("{}{junk}", &text[..cut]), &RunContext::new(RunSource::Import));
        let _ = RunRecord::from_iperf3_text(&junk, &RunContext::new(RunSource::Import));
    }
}
