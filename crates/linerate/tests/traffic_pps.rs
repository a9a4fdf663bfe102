//! `--mode pps`: the receiver's accounting fed crafted datagrams (known drops, reordering,
//! duplicates, strangers on the port), runs through the binary, drops injected by nftables, and
//! the refusal an iperf3 server gets.

#![forbid(unsafe_code)]
// In these tests an unwrap is an assertion: a failure should stop the test right there.
#![allow(clippy::unwrap_used)]

mod support;

use std::net::UdpSocket;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use support::net::{free_port, wait_listening};
use support::netns::Netns;
use support::traffic::{
    LOOPBACK_SERVER, client, client_json, f64_at, linerate_server, linerate_server_in,
};
use support::{namespaces, program, require};

use linerate_traffic::config::{Direction, Protocol};
use linerate_traffic::modes::{Work, WorkKind};
use linerate_traffic::pps::PpsSpec;
use linerate_traffic::protocol::Cookie;
use linerate_traffic::stream::{DataSocket, StreamHandle, StreamSpec};

fn pps_receiver(spec: &PpsSpec) -> (StreamHandle, UdpSocket) {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    rx.connect(tx.local_addr().unwrap()).unwrap();
    tx.connect(rx.local_addr().unwrap()).unwrap();
    let s = StreamSpec {
        id: 1,
        direction: Direction::Receive,
        protocol: Protocol::Udp,
        len: 18,
        rate_bps: 0,
        pacing_timer: Duration::from_millis(1),
        udp64: true,
        window_set: false,
        work: Work {
            kind: WorkKind::Pps(spec.clone()),
            ..Work::default()
        },
    };
    let mut h = StreamHandle::new(s, DataSocket::Udp(rx)).unwrap();
    h.start(None).unwrap();
    (h, tx)
}

fn datagram(spec: &PpsSpec, seq: u64) -> Vec<u8> {
    let mut d = vec![0x5A; spec.len_for(seq)];
    spec.write_header(&mut d, seq, (1_700_000_000, 0));
    d
}

#[test]
fn receiver_counts_injected_drops_reordering_duplicates_and_strangers() {
    let spec = PpsSpec::new(18, false, &Cookie::random());
    let (mut h, tx) = pps_receiver(&spec);
    // 1..=12 with 7 and 8 dropped, 4 late, 6 twice, 11 three times.
    let seqs = [1u64, 2, 3, 5, 6, 4, 6, 9, 10, 11, 11, 11, 12];
    let other_test = PpsSpec::new(18, false, &Cookie::random());
    for &s in &seqs {
        tx.send(&datagram(&spec, s)).unwrap();
    }
    // Strangers: another test's datagram, iperf3's UDP hello, a short and a long datagram, a
    // datagram with sequence 0, and one that would claim a huge sequence without the tag.
    let mut huge = datagram(&other_test, u64::MAX / 2);
    huge[16] = !huge[16];
    for d in [
        datagram(&other_test, 100),
        b"9876".to_vec(),
        vec![0u8; 17],
        vec![0u8; 19],
        datagram(&spec, 0),
        huge,
    ] {
        tx.send(&d).unwrap();
    }
    let c = std::sync::Arc::clone(&h.counters);
    let t = Instant::now();
    while c.foreign.load(Ordering::Relaxed) < 6 && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    h.join();
    let snap = c.snapshot();
    assert_eq!(snap.packets, 12, "highest sequence");
    assert_eq!(snap.lost, 2, "7 and 8 never came");
    assert_eq!(snap.out_of_order, 1, "4 came after 6");
    assert_eq!(snap.duplicates, 3, "6 once more, 11 twice more");
    assert_eq!(c.foreign.load(Ordering::Relaxed), 6);
    assert_eq!(snap.bytes, seqs.len() as u64 * 18);
}

#[test]
fn imix_receiver_takes_every_imix_size_and_nothing_else() {
    let spec = PpsSpec::new(0, true, &Cookie::random());
    let (mut h, tx) = pps_receiver(&spec);
    for s in 1..=24u64 {
        tx.send(&datagram(&spec, s)).unwrap();
    }
    let mut odd = vec![0u8; 100];
    spec.write_header(&mut odd, 25, (0, 0));
    tx.send(&odd).unwrap();
    let c = std::sync::Arc::clone(&h.counters);
    let t = Instant::now();
    while c.foreign.load(Ordering::Relaxed) < 1 && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    h.join();
    let snap = c.snapshot();
    assert_eq!((snap.packets, snap.lost, snap.duplicates), (24, 0, 0));
    assert_eq!(snap.bytes, 2 * (7 * 18 + 4 * 548 + 1472));
}

#[test]
fn pps_runs_end_to_end_with_json_figures() {
    let srv = linerate_server(&LOOPBACK_SERVER);
    let v = client_json(&client(
        None,
        srv.port,
        &["--mode", "pps", "-t", "1", "--json"],
    ));
    let lr = &v["linerate"];
    assert_eq!(lr["mode"], "pps");
    assert_eq!(lr["pps"]["frame"], "64");
    let sent = f64_at(lr, "sent_pps");
    let received = f64_at(lr, "received_pps");
    assert!(sent > 1000.0, "sent {sent} pps");
    assert!(received > 1000.0, "received {received} pps");
    assert!(lr["lost_packets"].is_u64());
    // 64-byte frames: L1 is exactly 84 bytes per received datagram.
    let l1 = f64_at(lr, "pps.received_l1_bits_per_second");
    assert!(
        (l1 - received * 84.0 * 8.0).abs() / l1 < 1e-6,
        "{l1} vs {received}"
    );
    // iperf3's schema is still there.
    assert_eq!(v["start"]["test_start"]["protocol"], "UDP");
    assert!(f64_at(&v, "end.sum.packets") > 0.0);

    // IMIX, and the server sending (-R).
    let v = client_json(&client(
        None,
        srv.port,
        &[
            "--mode", "pps", "--imix", "-R", "-b", "20M", "-t", "1", "--json",
        ],
    ));
    let lr = &v["linerate"];
    assert_eq!(lr["pps"]["frame"], "imix");
    assert!(f64_at(lr, "received_pps") > 100.0);
    let mean = f64_at(lr, "pps.payload_bytes");
    assert!(
        (mean - 3790.0 / 12.0).abs() < 20.0,
        "IMIX mean payload {mean}"
    );

    // Human output: packet rates and both wire rates.
    let out = client(None, srv.port, &["--mode", "pps", "-t", "1"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "pps: 64-byte frames",
        "sent",
        "received",
        "L2",
        "L1",
        "lost",
    ] {
        assert!(text.contains(needle), "{needle} missing from:\n{text}");
    }
    // UDP GSO is on by default, and on loopback the text says what that figure skips.
    assert!(
        text.contains("UDP GSO: on, ") && text.contains("does not pay the per-datagram cost"),
        "{text}"
    );
    let out = client(None, srv.port, &["--mode", "pps", "-t", "1", "--no-gso"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("UDP GSO: off (one datagram per send)"),
        "{text}"
    );
    let v = client_json(&client(
        None,
        srv.port,
        &["--mode", "pps", "-t", "1", "--no-gso", "--json"],
    ));
    assert_eq!(v["linerate"]["pps"]["gso_segments"], 1, "{v}");
}

#[test]
fn pps_counts_exactly_the_drops_nftables_injects() {
    require!(namespaces());
    require!(program("nft"));
    let ns = Netns::with_loopback("pp-loss");
    // Every 10th pps datagram (18-byte payload: UDP length 26) is dropped on input: the loss
    // is known exactly, not just statistically.
    ns.nft(&["add", "table", "inet", "lrpp"]);
    ns.nft(&[
        "add",
        "chain",
        "inet",
        "lrpp",
        "in",
        "{ type filter hook input priority 0; }",
    ]);
    ns.nft(&[
        "add", "rule", "inet", "lrpp", "in", "udp", "length", "26", "numgen", "inc", "mod", "10",
        "==", "0", "counter", "drop",
    ]);
    let srv = linerate_server_in(&ns, &LOOPBACK_SERVER);
    let v = client_json(&client(
        Some(&ns),
        srv.port,
        &["--mode", "pps", "-b", "5M", "-t", "1", "--json"],
    ));
    let lr = &v["linerate"];
    let lost = f64_at(lr, "lost_packets");
    let sent = f64_at(lr, "pps.sent_packets");
    let pct = f64_at(lr, "pps.lost_percent");
    assert!(sent > 10_000.0, "{sent} sent");
    assert!((pct - 10.0).abs() < 0.3, "10 % dropped, {pct} % measured");
    assert_eq!(f64_at(lr, "reordered_packets"), 0.0);
    assert_eq!(f64_at(lr, "duplicate_packets"), 0.0);
    // Every datagram the firewall dropped is lost, plus at most the few still unread when the
    // receiver stopped; the receiver's gaps cannot exceed the drops.
    let rules = ns.nft_ruleset();
    let dropped: f64 = rules
        .split("counter packets ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("the drop rule's counter");
    let gaps = f64_at(lr, "pps.lost_in_gaps");
    assert!(
        lost >= dropped && lost <= dropped + 100.0,
        "lost {lost}, dropped {dropped}"
    );
    assert!(
        gaps <= dropped && gaps >= dropped - 100.0,
        "gaps {gaps}, dropped {dropped}"
    );
}

fn iperf3(port: u16, one_off: bool) -> std::process::Child {
    let p = port.to_string();
    let mut args = vec!["-s", "-B", "127.0.0.1", "-p", &p, "-J"];
    if one_off {
        args.push("-1");
    }
    let child = std::process::Command::new("iperf3")
        .args(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start iperf3");
    wait_listening(port);
    child
}

#[test]
fn an_iperf3_server_is_refused_before_any_traffic() {
    require!(program("iperf3"));
    let port = free_port();
    let mut one = iperf3(port, true);
    let mut modes = vec!["pps", "rr", "crr"].into_iter();
    let check = |mode: &str| {
        let out = client(None, port, &["--mode", mode, "-t", "1"]);
        assert_eq!(out.status.code(), Some(2), "--mode {mode} against iperf3");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("--mode {mode}")), "{err}");
        assert!(err.contains("not a linerate server"), "{err}");
        assert!(err.contains(&format!("127.0.0.1:{port}")), "{err}");
    };
    check(modes.next().unwrap());
    // iperf3 -s -1 ends after that test; its report must show no stream connected.
    let t = Instant::now();
    while one.try_wait().ok().flatten().is_none() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = one.kill();
    let out = one.wait_with_output().unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let connected = report["start"]["connected"].as_array().map_or(0, Vec::len);
    assert_eq!(connected, 0, "iperf3 got streams: {report}");
    let mut again = iperf3(port, false);
    for mode in modes {
        check(mode);
    }
    let _ = again.kill();
    let _ = again.wait();
}

#[test]
fn bad_pps_flags_fail_with_the_flag_named() {
    for (args, needle) in [
        (&["--mode", "pps", "-l", "12"][..], "-l 12"),
        (&["--imix"][..], "--imix needs --mode pps"),
        (&["--mode", "pps", "--imix", "-l", "100"][..], "drop -l"),
        (&["--no-gso"][..], "--no-gso needs --mode pps"),
        (&["--affinity=3-1"][..], "3-1"),
    ] {
        // Port 9 (discard) is never reached: the flags are checked first.
        let out = client(None, 9, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
