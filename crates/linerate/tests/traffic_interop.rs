//! Interoperability with the reference peer, Debian's iperf3: `linerate client` against
//! `iperf3 -s`, and `iperf3 -c` against `linerate server`, TCP and UDP, -R, --bidir, -P.

#![forbid(unsafe_code)]

mod support;

use support::bin::{linerate, run_bounded};
use support::traffic::{
    Proc, f64_at, iperf3_client_json, iperf3_server, linerate_client_json, linerate_server,
};
use support::{program, require};

// ---- linerate client → iperf3 server ----

/// `linerate client` against a one-off `iperf3 -s`; callers skip where iperf3 is missing.
fn against_iperf3(args: &[&str]) -> serde_json::Value {
    let server = iperf3_server(true);
    let v = linerate_client_json(server.port, args);
    assert_eq!(v["schema"], "linerate.traffic/1");
    assert_eq!(v["linerate"]["peer"]["kind"], "iperf3", "{}", v["linerate"]);
    v
}

#[test]
fn client_tcp_to_iperf3() {
    require!(program("iperf3"));
    let v = against_iperf3(&["-t", "1"]);
    let rx = f64_at(&v, "end.sum_received.bits_per_second");
    let tx = f64_at(&v, "end.sum_sent.bits_per_second");
    assert!(rx > 1e8, "received {rx} bit/s");
    // The server's byte count (from iperf3's results) is close to what was sent.
    let ratio = f64_at(&v, "end.sum_received.bytes") / f64_at(&v, "end.sum_sent.bytes");
    assert!(
        (0.8..=1.0001).contains(&ratio),
        "received/sent = {ratio} ({rx} vs {tx})"
    );
    assert_eq!(v["start"]["test_start"]["protocol"], "TCP");
    assert!(!v["intervals"].as_array().expect("intervals").is_empty());
}

#[test]
fn client_tcp_reverse_parallel_to_iperf3() {
    require!(program("iperf3"));
    let v = against_iperf3(&["-t", "1", "-R", "-P", "2"]);
    let streams = v["end"]["streams"].as_array().expect("streams");
    assert_eq!(streams.len(), 2);
    for s in streams {
        assert!(f64_at(s, "receiver.bytes") > 1e6, "{s}");
        assert!(f64_at(s, "sender.bytes") > 1e6, "{s}");
    }
    assert_eq!(v["start"]["test_start"]["reverse"], 1);
    assert!(f64_at(&v, "end.sum_received.bits_per_second") > 1e8);
}

#[test]
fn client_tcp_bidir_to_iperf3() {
    require!(program("iperf3"));
    let v = against_iperf3(&["-t", "1", "--bidir"]);
    assert!(f64_at(&v, "end.sum_received.bits_per_second") > 1e7);
    assert!(f64_at(&v, "end.sum_received_bidir_reverse.bits_per_second") > 1e7);
}

#[test]
fn client_udp_to_iperf3() {
    require!(program("iperf3"));
    let v = against_iperf3(&["-t", "1", "-u", "-b", "20M", "-l", "1000"]);
    let bps = f64_at(&v, "end.sum.bits_per_second");
    assert!((14e6..26e6).contains(&bps), "UDP sender rate {bps}");
    // iperf3 counted what we sent, and saw no loss on loopback at 20 Mbit/s.
    let packets = f64_at(&v, "end.sum.packets");
    assert!(packets > 1500.0, "{packets}");
    assert!(f64_at(&v, "end.sum.lost_percent") < 50.0);
}

#[test]
fn client_udp_reverse_and_bidir_to_iperf3() {
    require!(program("iperf3"));
    let v = against_iperf3(&["-t", "1", "-u", "-R", "-b", "10M"]);
    let got = f64_at(&v, "end.sum_received.bits_per_second");
    assert!((6e6..14e6).contains(&got), "{got}");
    assert!(f64_at(&v, "end.streams.0.udp.packets") > 500.0);
    let v = against_iperf3(&["-t", "1", "-u", "--bidir", "-b", "5M"]);
    assert!(f64_at(&v, "end.sum_received.bits_per_second") > 3e6);
    assert!(f64_at(&v, "end.sum_received_bidir_reverse.bits_per_second") > 3e6);
}

#[test]
fn linerate_only_mode_against_iperf3_names_the_peer_and_the_feature() {
    require!(program("iperf3"));
    let server = iperf3_server(true);
    let out = run_bounded(
        linerate().args([
            "client",
            "127.0.0.1",
            "-p",
            &server.port.to_string(),
            "--mode",
            "pps",
        ]),
        std::time::Duration::from_secs(15),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a linerate server"), "{err}");
    assert!(err.contains("--mode pps"), "{err}");
    assert!(err.contains(&format!("127.0.0.1:{}", server.port)), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

// ---- iperf3 client → linerate server ----

/// `iperf3 -c` against a `linerate server`; callers skip where iperf3 is missing.
fn iperf3_against_linerate(args: &[&str]) -> (serde_json::Value, Proc) {
    let server = linerate_server(&[]);
    let v = iperf3_client_json(server.port, args);
    (v, server)
}

#[test]
fn iperf3_tcp_to_server() {
    require!(program("iperf3"));
    let (v, server) = iperf3_against_linerate(&["-t", "1"]);
    let rx = f64_at(&v, "end.sum_received.bits_per_second");
    assert!(rx > 1e8, "{rx}");
    let ratio = f64_at(&v, "end.sum_received.bytes") / f64_at(&v, "end.sum_sent.bytes");
    assert!((0.8..=1.0001).contains(&ratio), "{ratio}");
    assert!(server.wait_log("done: TCP 1 stream(s)", std::time::Duration::from_secs(5)));
}

#[test]
fn iperf3_tcp_reverse_parallel_to_server() {
    require!(program("iperf3"));
    let (v, _s) = iperf3_against_linerate(&["-t", "1", "-R", "-P", "3"]);
    assert_eq!(v["end"]["streams"].as_array().expect("streams").len(), 3);
    assert!(f64_at(&v, "end.sum_received.bits_per_second") > 1e8);
    // The server is the sender: its retransmit count reaches iperf3 (may be 0).
    assert!(
        v["end"]["sum_sent"]["retransmits"].is_u64(),
        "{}",
        v["end"]["sum_sent"]
    );
}

#[test]
fn iperf3_tcp_bidir_to_server() {
    require!(program("iperf3"));
    let (v, _s) = iperf3_against_linerate(&["-t", "1", "--bidir", "-P", "2"]);
    assert!(f64_at(&v, "end.sum_received.bits_per_second") > 1e7);
    assert!(f64_at(&v, "end.sum_received_bidir_reverse.bits_per_second") > 1e7);
}

#[test]
fn iperf3_udp_to_server() {
    require!(program("iperf3"));
    let (v, _s) = iperf3_against_linerate(&["-t", "1", "-u", "-b", "20M", "-l", "1400"]);
    // The receiver's numbers iperf3 shows come from linerate's results.
    let packets = f64_at(&v, "end.sum.packets");
    assert!(packets > 1000.0, "{packets}");
    assert!(f64_at(&v, "end.sum.lost_percent") < 10.0);
    let jitter = f64_at(&v, "end.sum.jitter_ms");
    assert!((0.0..5.0).contains(&jitter), "{jitter}");
}

#[test]
fn iperf3_udp_reverse_and_bidir_to_server() {
    require!(program("iperf3"));
    let (v, s) = iperf3_against_linerate(&["-t", "1", "-u", "-R", "-b", "10M"]);
    let got = f64_at(&v, "end.sum.bits_per_second");
    assert!((6e6..14e6).contains(&got), "{got}");
    let v = iperf3_client_json(s.port, &["-t", "1", "-u", "--bidir", "-b", "5M", "-P", "2"]);
    assert!(f64_at(&v, "end.sum_received.bits_per_second") > 3e6);
    assert!(f64_at(&v, "end.sum_received_bidir_reverse.bits_per_second") > 3e6);
}

// ---- options ----

#[test]
fn byte_and_block_counts_end_the_test() {
    require!(program("iperf3"));
    let v = against_iperf3(&["-n", "20MB", "-t", "30"]);
    let sent = f64_at(&v, "end.sum_sent.bytes");
    assert!((20e6..20e6 + 131_072.0).contains(&sent), "sent {sent}");
    assert!(f64_at(&v, "end.sum_sent.seconds") < 10.0);
    let server = linerate_server(&[]);
    let v = linerate_client_json(server.port, &["-k", "100", "-l", "10KiB", "-R"]);
    assert_eq!(f64_at(&v, "end.sum_sent.bytes"), 1_024_000.0);
    assert_eq!(f64_at(&v, "end.sum_received.bytes"), 1_024_000.0);
}

#[test]
fn window_mss_congestion_and_omit_reach_the_sockets() {
    require!(program("iperf3"));
    let v = against_iperf3(&[
        "-t", "1", "-O", "1", "-w", "512KiB", "-M", "1200", "-C", "reno", "-N",
    ]);
    assert_eq!(v["start"]["sock_bufsize"], 524_288);
    // The kernel doubles SO_SNDBUF for bookkeeping.
    assert!(f64_at(&v, "start.sndbuf_actual") >= 524_288.0);
    assert_eq!(v["end"]["sender_tcp_congestion"], "reno");
    assert_eq!(v["end"]["receiver_tcp_congestion"], "reno");
    // Omitted intervals are not in the results, and time restarts after them.
    let intervals = v["intervals"].as_array().expect("intervals");
    assert!(intervals.iter().all(|i| i["sum"]["omitted"] == false));
    assert!(f64_at(&v, "end.sum_sent.seconds") < 1.5);
    assert!(f64_at(&v, "end.streams.0.sender.max_snd_cwnd") > 0.0);
}

#[test]
fn bind_device_and_address() {
    let server = linerate_server(&["--bind-dev", "lo"]);
    let v = linerate_client_json(
        server.port,
        &["-t", "1", "--bind-dev", "lo", "-B", "127.0.0.1"],
    );
    assert_eq!(v["start"]["connected"][0]["local_host"], "127.0.0.1");
    assert!(f64_at(&v, "end.sum_received.bytes") > 0.0);
}

#[test]
fn server_output_travels_both_ways() {
    require!(program("iperf3"));
    let v = against_iperf3(&["-t", "1", "--get-server-output"]);
    let text = v["server_output_text"].as_str().expect("iperf3's output");
    assert!(text.contains("receiver"), "{text}");
    let server = linerate_server(&[]);
    let out = run_bounded(
        std::process::Command::new("iperf3").args([
            "-c",
            "127.0.0.1",
            "-p",
            &server.port.to_string(),
            "-t",
            "1",
            "--get-server-output",
        ]),
        std::time::Duration::from_secs(15),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("linerate server test 1: done: TCP 1 stream(s)"),
        "{text}"
    );
}
