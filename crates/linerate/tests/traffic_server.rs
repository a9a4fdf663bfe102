//! `linerate server` with several clients at once, its limits, and its shutdown.

#![forbid(unsafe_code)]

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use support::bin::{linerate, run_bounded};
use support::traffic::{f64_at, iperf3_client_json, linerate_client_json, linerate_server};
use support::{program, require, skipping};

#[test]
fn two_clients_run_at_the_same_time() {
    let server = linerate_server(&[]);
    let port = server.port;
    let t0 = Instant::now();
    let clients: Vec<_> = [
        vec!["-t", "2", "-b", "500M"],
        vec!["-t", "2", "-u", "-b", "20M", "-R"],
    ]
    .into_iter()
    .map(|args| {
        std::thread::spawn(move || {
            let t = Instant::now();
            let v = linerate_client_json(port, &args);
            (v, t.elapsed())
        })
    })
    .collect();
    let results: Vec<_> = clients
        .into_iter()
        .map(|h| h.join().expect("client"))
        .collect();
    // Each test takes ~2 s; run one after the other they would need 4 s or more.
    assert!(
        t0.elapsed() < Duration::from_millis(3800),
        "took {:?}",
        t0.elapsed()
    );
    let (tcp, _) = &results[0];
    let (udp, _) = &results[1];
    let tcp_rx = f64_at(tcp, "end.sum_received.bits_per_second");
    // Pacing must hold the rates under their targets; the floors only show traffic flowed
    // (a loaded CI machine may not reach the target).
    assert!((1e8..6e8).contains(&tcp_rx), "paced TCP at {tcp_rx}");
    let udp_rx = f64_at(udp, "end.sum_received.bits_per_second");
    assert!((5e6..25e6).contains(&udp_rx), "UDP at {udp_rx}");
    assert_eq!(tcp["linerate"]["peer"]["kind"], "linerate");
    assert!(
        server.wait_log("[test 2 ", Duration::from_secs(5)),
        "{}",
        server.log()
    );
}

#[test]
fn iperf3_and_linerate_clients_share_the_server() {
    require!(program("iperf3"));
    let server = linerate_server(&[]);
    let port = server.port;
    let a = std::thread::spawn(move || iperf3_client_json(port, &["-t", "2", "-P", "2"]));
    let b = std::thread::spawn(move || linerate_client_json(port, &["-t", "2", "--bidir"]));
    let a = a.join().expect("iperf3");
    let b = b.join().expect("linerate");
    assert!(f64_at(&a, "end.sum_received.bits_per_second") > 1e7);
    assert!(f64_at(&b, "end.sum_received_bidir_reverse.bits_per_second") > 1e7);
}

#[test]
fn busy_server_refuses_with_a_one_line_error() {
    let server = linerate_server(&["--max-tests", "1"]);
    let port = server.port;
    let first = std::thread::spawn(move || linerate_client_json(port, &["-t", "2", "-b", "100M"]));
    assert!(server.wait_log("test started", Duration::from_secs(5)));
    let out = run_bounded(
        linerate().args(["client", "127.0.0.1", "-p", &port.to_string(), "-t", "1"]),
        Duration::from_secs(10),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("busy"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let v = first.join().expect("first client");
    assert!(f64_at(&v, "end.sum_received.bytes") > 0.0);
}

#[test]
fn stream_and_mode_limits_are_explained() {
    let server = linerate_server(&["--max-streams", "4"]);
    let port = server.port.to_string();
    let out = run_bounded(
        linerate().args(["client", "127.0.0.1", "-p", &port, "-t", "1", "-P", "8"]),
        Duration::from_secs(10),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("refused the test: 8 streams asked, the server allows 1 to 4"),
        "{err}"
    );
    if let Err(why) = program("iperf3") {
        skipping(format_args!("the iperf3 half: {why}"));
    } else {
        let out = run_bounded(
            Command::new("iperf3").args(["-c", "127.0.0.1", "-p", &port, "-t", "1", "-P", "8"]),
            Duration::from_secs(10),
        );
        assert!(!out.status.success());
        let text = String::from_utf8_lossy(&out.stderr) + String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("parallel"), "{text}");
    }
    // The server goes on serving.
    let v = linerate_client_json(server.port, &["-t", "1", "-P", "4"]);
    assert_eq!(v["end"]["streams"].as_array().map(Vec::len), Some(4));
}

#[test]
fn one_off_serves_one_test_and_exits() {
    let mut server = linerate_server(&["--one-off"]);
    let v = linerate_client_json(server.port, &["-t", "1"]);
    assert!(f64_at(&v, "end.sum_received.bytes") > 0.0);
    let t = Instant::now();
    while server.alive() {
        assert!(t.elapsed() < Duration::from_secs(5), "server still running");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(server.child.wait().ok().and_then(|s| s.code()), Some(0));
}

#[test]
fn sigterm_stops_the_server_cleanly_during_a_test() {
    let mut server = linerate_server(&[]);
    let port = server.port;
    let client = std::thread::spawn(move || {
        run_bounded(
            linerate().args(["client", "127.0.0.1", "-p", &port.to_string(), "-t", "5"]),
            Duration::from_secs(15),
        )
    });
    assert!(server.wait_log("test started", Duration::from_secs(5)));
    std::thread::sleep(Duration::from_millis(500));
    let t = Instant::now();
    let pid = server.child.id().to_string();
    Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    let status = loop {
        if let Ok(Some(s)) = server.child.try_wait() {
            break s;
        }
        assert!(
            t.elapsed() < Duration::from_secs(8),
            "server ignored SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // Stopped cleanly by SIGTERM: 128 + 15, as every command (issue 23 item 7).
    assert_eq!(status.code(), Some(143));
    let out = client.join().expect("client");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("terminated the test"), "{err}");
}

#[test]
fn ipv6_and_json_stream() {
    let server = linerate_server(&[]);
    let out = run_bounded(
        linerate().args([
            "client",
            "::1",
            "-p",
            &server.port.to_string(),
            "-t",
            "1",
            "-i",
            "0.5",
            "--json-stream",
            "--dscp",
            "AF41",
        ]),
        Duration::from_secs(15),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(
        events.first().map(|e| e["event"].clone()),
        Some("start".into())
    );
    assert_eq!(
        events.last().map(|e| e["event"].clone()),
        Some("end".into())
    );
    assert!(events.iter().any(|e| e["event"] == "interval"));
    let start = &events[0]["data"];
    assert_eq!(start["connected"][0]["remote_host"], "::1");
    assert_eq!(start["test_start"]["tos"], 34 << 2);
    assert!(
        f64_at(
            &events.last().cloned().unwrap_or_default()["data"],
            "sum_received.bytes"
        ) > 0.0
    );
}
