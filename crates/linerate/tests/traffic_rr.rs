//! `--mode rr` and `--mode crr`: latency percentiles of a worker against a responder with known
//! delays, and the modes end to end through the binary.

#![forbid(unsafe_code)]
// In these tests an unwrap is an assertion: a failure should stop the test right there.
#![allow(clippy::unwrap_used)]

mod support;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use linerate_traffic::config::{Direction, Protocol};
use linerate_traffic::modes::{RrSize, Work, WorkKind};
use linerate_traffic::stream::{DataSocket, StreamHandle, StreamSpec};
use support::traffic::{LOOPBACK_SERVER, client, client_json, f64_at, linerate_server};

#[test]
fn rr_percentiles_match_a_responder_with_known_delays() {
    // Every 10th answer comes after 50 ms, the others after 2 ms.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let responder = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        s.set_nodelay(true).unwrap();
        let mut b = [0u8; 1];
        for i in 0..100 {
            if s.read_exact(&mut b).is_err() {
                return;
            }
            let d = if i % 10 == 9 { 50 } else { 2 };
            std::thread::sleep(Duration::from_millis(d));
            if s.write_all(&b).is_err() {
                return;
            }
        }
    });
    let sock = TcpStream::connect(addr).unwrap();
    let spec = StreamSpec {
        id: 1,
        direction: Direction::Send,
        protocol: Protocol::Tcp,
        len: 1,
        rate_bps: 0,
        pacing_timer: Duration::from_millis(1),
        udp64: false,
        window_set: false,
        work: Work {
            kind: WorkKind::Rr(RrSize {
                request: 1,
                response: 1,
            }),
            ..Work::default()
        },
    };
    let mut h = StreamHandle::new(spec, DataSocket::Tcp(sock)).unwrap();
    h.start(None).unwrap();
    responder.join().unwrap();
    // The responder is done; the worker waits for a 101st answer until stopped.
    std::thread::sleep(Duration::from_millis(50));
    h.join();
    let lat = h
        .spec
        .work
        .latency()
        .expect("the worker left its histogram");
    let s = lat.summary();
    assert_eq!(s.count, 100);
    assert_eq!(h.counters.snapshot().packets, 100);
    // Sleeps overshoot (more on a loaded machine), never undershoot: the bounds below leave
    // room for scheduling delays but not for a fast answer counted as slow or the reverse.
    assert!(s.min_us >= 2_000.0 && s.min_us < 10_000.0, "{s:?}");
    assert!(s.p50_us >= 2_000.0 && s.p50_us < 10_000.0, "{s:?}");
    assert!(s.p90_us < 50_000.0, "90 of 100 are fast: {s:?}");
    // Upper bounds are loose: on a loaded 2-core machine one sleep can overshoot by hundreds
    // of milliseconds; what must hold is that slow answers are never counted as fast.
    assert!(s.p99_us >= 50_000.0 && s.p99_us < 1_000_000.0, "{s:?}");
    assert!(s.max_us >= 50_000.0 && s.max_us < 2_000_000.0, "{s:?}");
    let mean_floor = (90.0 * 2_000.0 + 10.0 * 50_000.0) / 100.0;
    assert!(
        s.mean_us >= mean_floor && s.mean_us < mean_floor * 5.0,
        "{s:?}"
    );
}

fn check_rr(v: &serde_json::Value, protocol: &str) -> f64 {
    let rr = &v["linerate"]["rr"];
    assert_eq!(rr["protocol"], protocol);
    let n = f64_at(rr, "transactions");
    assert!(n > 50.0, "{n} transactions");
    assert!(f64_at(rr, "transactions_per_second") > 50.0);
    let l = &rr["latency"];
    let q: Vec<f64> = ["min_us", "p50_us", "p90_us", "p99_us", "p999_us", "max_us"]
        .iter()
        .map(|k| f64_at(l, k))
        .collect();
    assert!(q[0] > 0.0 && q.windows(2).all(|w| w[0] <= w[1]), "{l}");
    let buckets = rr["histogram"]["buckets"].as_array().expect("histogram");
    let counted: u64 = buckets.iter().map(|b| b[1].as_u64().unwrap()).sum();
    assert_eq!(counted, f64_at(l, "count") as u64);
    assert!(
        counted as f64 >= n,
        "histogram {counted} < {n} transactions"
    );
    let per_interval: f64 = rr["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| f64_at(i, "transactions"))
        .sum();
    assert!(
        per_interval <= n && per_interval >= 0.9 * n,
        "{per_interval} of {n}"
    );
    n
}

#[test]
fn rr_and_crr_run_end_to_end() {
    let srv = linerate_server(&LOOPBACK_SERVER);
    let v = client_json(&client(
        None,
        srv.port,
        &["--mode", "rr", "-t", "1", "-i", "0.5s", "--json"],
    ));
    assert_eq!(v["linerate"]["mode"], "rr");
    check_rr(&v, "TCP");
    assert!(f64_at(&v["linerate"], "transactions_per_second") > 50.0);

    let v = client_json(&client(
        None,
        srv.port,
        &[
            "--mode",
            "rr",
            "-u",
            "--rr-size",
            "64/1KiB",
            "-t",
            "1",
            "--json",
        ],
    ));
    check_rr(&v, "UDP");
    assert_eq!(f64_at(&v["linerate"]["rr"], "response_bytes"), 1024.0);

    let v = client_json(&client(
        None,
        srv.port,
        &["--mode", "crr", "-t", "1", "--json"],
    ));
    assert_eq!(v["linerate"]["mode"], "crr");
    check_rr(&v, "TCP");

    // Human output names the percentiles.
    let out = client(None, srv.port, &["--mode", "rr", "-t", "1"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("transactions/s") && text.contains("p99.9"),
        "{text}"
    );
}

#[test]
fn affinity_pins_and_reports_both_sides() {
    let srv = linerate_server(&LOOPBACK_SERVER);
    let v = client_json(&client(
        None,
        srv.port,
        &[
            "--mode",
            "rr",
            "-P",
            "2",
            "--affinity=0/0",
            "-t",
            "1",
            "--json",
        ],
    ));
    let lr = &v["linerate"];
    for side in ["threads", "server_threads"] {
        let t = lr[side].as_array().expect(side);
        assert_eq!(t.len(), 2, "{side}: {lr}");
        for th in t {
            assert_eq!(th["pinned"], 0, "{side}: {th}");
            assert_eq!(th["ran_on"], serde_json::json!([0]), "{side}: {th}");
        }
    }
    check_rr(&v, "TCP");
}

#[test]
fn bad_rr_flags_fail_with_the_flag_named() {
    for (args, needle) in [
        (&["--mode", "rr", "--rr-size", "5"][..], "REQ/RESP"),
        (&["--mode", "rr", "--rr-size", "0/1"][..], "at least 1"),
        (&["--mode", "crr", "-u"][..], "-u"),
        (&["--mode", "rr", "-R"][..], "-R"),
        (&["--rr-size", "1/1"][..], "--rr-size needs --mode rr"),
        (&["--mode", "rr", "-u", "--rr-size", "1/70000"][..], "65507"),
    ] {
        let out = client(None, 9, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn the_server_refuses_cpus_it_does_not_have() {
    let srv = linerate_server(&LOOPBACK_SERVER);
    let out = client(
        None,
        srv.port,
        &["--mode", "rr", "--affinity=0/1000", "-t", "1"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refused the test") && err.contains("CPU 1000"),
        "{err}"
    );
}
