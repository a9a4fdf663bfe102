//! Every `linerate client` run is kept in the results store (issue "Results store …"): the run
//! id is announced, `history` lists it with its mode and peer, `show --json` gives back the
//! iperf3-schema document, and `--no-store` keeps nothing.

#![forbid(unsafe_code)]

mod support;

use std::time::Duration;

use support::bin::{linerate, run_bounded};
use support::tempdir;
use support::traffic::linerate_server;

fn history(db: &std::path::Path) -> serde_json::Value {
    let out = run_bounded(
        linerate().args(["history", "--json", "--db"]).arg(db),
        Duration::from_secs(20),
    );
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).expect("history JSON")
}

fn runs(doc: &serde_json::Value) -> Vec<serde_json::Value> {
    doc["runs"].as_array().cloned().unwrap_or_default()
}

#[test]
fn client_runs_are_stored_unless_told_not_to() {
    let dir = tempdir();
    let db = dir.path().join("runs.db");
    let server = linerate_server(&[]);
    let port = server.port.to_string();

    // A one-second client run against the server, storing into `db`, plus `extra` flags.
    let client = |extra: &[&str]| {
        let out = run_bounded(
            linerate()
                .args(["client", "127.0.0.1", "-p", &port, "-t", "1"])
                .args(extra)
                .arg("--db")
                .arg(&db),
            Duration::from_secs(30),
        );
        assert!(out.status.success(), "{out:?}");
        out
    };

    let out = client(&[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("stored as run 1"), "{text}");

    let out = client(&["-u", "-b", "5M", "--json"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("stored as run 2"));

    let out = client(&["--no-store"]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("stored as run"));

    let doc = history(&db);
    let runs = runs(&doc);
    assert_eq!(runs.len(), 2, "{doc:#}");
    let text = doc.to_string();
    assert!(text.contains("tcp") && text.contains("udp"), "{doc:#}");

    let out = run_bounded(
        linerate().args(["show", "2", "--json", "--db"]).arg(&db),
        Duration::from_secs(20),
    );
    assert!(out.status.success(), "{out:?}");
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).expect("show JSON");
    assert!(
        shown["end"]["sum"]["packets"].as_f64().unwrap_or(0.0) > 0.0,
        "{shown:#}"
    );
}
