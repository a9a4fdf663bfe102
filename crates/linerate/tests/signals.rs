//! One rule for stop signals (issue 23 item 7), through the binary: SIGINT and SIGTERM end the
//! work cleanly, the summary so far is printed, a partial run is stored marked partial, and the
//! exit status is 130 (143 after SIGTERM) — client, nic --watch, logdist, stat. (`lab run` and
//! the server are covered in lab_experiments.rs, lab_run.rs and traffic_server.rs.)

#![forbid(unsafe_code)]

mod support;

use std::io::Write as _;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::bin::{linerate, run_db};
use support::tempdir;
use support::traffic::{LOOPBACK_SERVER, linerate_server};

fn signal(child: &Child, sig: &str) {
    let sent = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status();
    assert!(sent.is_ok_and(|s| s.success()), "kill {sig}");
}

/// Waits (bounded) for `child` to end and collects its output.
fn finish(child: Child) -> Output {
    let t = Instant::now();
    let mut child = child;
    while matches!(child.try_wait(), Ok(None)) {
        if t.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("did not stop within 20 s of the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("collect the output")
}

fn stdout_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Ctrl-C on a client prints the summary so far (as iperf3 does), stores the run marked
/// partial, and exits 130; SIGTERM the same with 143. The server is asked for with `-c`.
#[test]
fn a_client_stopped_by_a_signal_prints_and_stores_a_partial_run() {
    let server = linerate_server(&LOOPBACK_SERVER);
    let dir = tempdir();
    let db = dir.path().join("runs.db");
    for (sig, code) in [("-INT", 130), ("-TERM", 143)] {
        let child = linerate()
            .args(["client", "-c", "127.0.0.1", "-p", &server.port.to_string()])
            .args(["-t", "20", "-b", "100M", "--db"])
            .arg(&db)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the client");
        std::thread::sleep(Duration::from_millis(2500));
        signal(&child, sig);
        let out = finish(child);
        let (o, e) = (stdout_of(&out), stderr_of(&out));
        assert_eq!(out.status.code(), Some(code), "{sig}: {o}{e}");
        assert!(o.contains("sender") && o.contains("receiver"), "{o}");
        assert!(o.contains("stored as run"), "{o}");
        assert!(e.contains("ended the test early"), "{e}");
        assert!(e.contains("stored marked partial"), "{e}");
    }
    let listed = run_db(&db, &["history", "--json"]);
    let v: Value = serde_json::from_slice(&listed.stdout).unwrap_or_default();
    let runs = v["runs"].as_array().cloned().unwrap_or_default();
    assert_eq!(runs.len(), 2, "{v}");
    for r in &runs {
        assert_eq!(r["partial"], true, "{r}");
        let secs = r["duration_s"].as_f64().unwrap_or(99.0);
        assert!(secs < 10.0, "the run covers the time it ran: {secs}");
    }
    let table = String::from_utf8_lossy(&run_db(&db, &["history"]).stdout).into_owned();
    assert!(table.contains("partial"), "{table}");
    let shown = run_db(&db, &["show", "1", "--json"]);
    let doc: Value = serde_json::from_slice(&shown.stdout).unwrap_or_default();
    assert_eq!(doc["linerate"]["interrupted"], "SIGINT", "{doc}");
}

#[test]
fn nic_watch_stops_on_a_signal_with_130_or_143() {
    for (sig, code) in [("-INT", 130), ("-TERM", 143)] {
        let child = linerate()
            .args(["nic", "--watch", "lo", "-i", "100ms"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start nic --watch");
        std::thread::sleep(Duration::from_millis(700));
        signal(&child, sig);
        let out = finish(child);
        assert_eq!(out.status.code(), Some(code), "{out:?}");
        assert!(stdout_of(&out).contains("lo:"), "{out:?}");
        assert!(
            stderr_of(&out).contains("stopped the watch after"),
            "{out:?}"
        );
    }
}

/// A reader of a slow pipe: logdist and stat, stopped, print what they read and exit 130.
#[test]
fn logdist_and_stat_print_what_they_read_before_ctrl_c() {
    let dir = tempdir();
    let line = "127.0.0.1 - - [10/Oct/2026:13:55:36 +0000] \"GET / HTTP/1.1\" 200 612 \"-\" \"curl\" 0.042\n";
    for (args, expect) in [
        (&["logdist", "-"][..], "lines:"),
        (&["stat", "-q", "-"][..], "x "),
    ] {
        let mut child = linerate()
            .args(args)
            .current_dir(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the reader");
        let mut input = child.stdin.take().expect("piped stdin");
        let value = if args[0] == "stat" {
            "1.5\n2.5\n3.5\n4.5\n"
        } else {
            line
        };
        for _ in 0..5 {
            input.write_all(value.as_bytes()).expect("feed the reader");
        }
        input.flush().expect("flush");
        std::thread::sleep(Duration::from_millis(800));
        signal(&child, "-INT");
        // The pending read returns with the next data; then the reader sees the stop.
        let _ = input.write_all(value.as_bytes());
        let out = finish(child);
        drop(input);
        let (o, e) = (stdout_of(&out), stderr_of(&out));
        assert_eq!(out.status.code(), Some(130), "{args:?}: {o}{e}");
        assert!(o.contains(expect), "{args:?}: {o}");
        assert!(e.contains("SIGINT stopped the read"), "{args:?}: {e}");
    }
}
