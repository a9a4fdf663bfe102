//! `linerate server`'s protections against reflection and abuse (issue 16, item 2): UDP streams
//! only from the control connection's address, and `--server-bitrate-limit`.

#![forbid(unsafe_code)]

mod support;

use std::io::{Read, Write};
use std::net::{TcpStream, UdpSocket};
use std::time::Duration;

use support::traffic::{client, f64_at, iperf3_client_json, linerate_client_json, linerate_server};
use support::{program, skipping};

/// A well-formed cookie.
fn cookie() -> Vec<u8> {
    let mut c = b"udpspoofudpspoofudpspoofudpspoof2345".to_vec();
    c.push(0);
    c
}

#[test]
fn a_udp_stream_from_another_address_than_the_control_connection_is_ignored() {
    let server = linerate_server(&["--handshake-timeout", "3s"]);
    let mut ctl = TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
    ctl.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    ctl.write_all(&cookie()).expect("cookie");
    let mut params =
        br#"{"udp":true,"time":2,"parallel":1,"len":1400,"bandwidth":1000000}"#.to_vec();
    params.splice(0..0, (params.len() as u32).to_be_bytes());
    ctl.write_all(&params).expect("params");
    let mut states = [0u8; 2];
    ctl.read_exact(&mut states)
        .expect("PARAM_EXCHANGE, CREATE_STREAMS");
    assert_eq!(states, [9, 10], "PARAM_EXCHANGE then CREATE_STREAMS");
    // Another address (still loopback) with the stream-opening datagram: no answer.
    let spoof = UdpSocket::bind("127.0.0.2:0").expect("bind 127.0.0.2");
    spoof
        .set_read_timeout(Some(Duration::from_millis(1500)))
        .expect("timeout");
    let mut buf = [0u8; 16];
    for _ in 0..3 {
        spoof
            .send_to(b"9876", ("127.0.0.1", server.port))
            .expect("send");
    }
    assert!(
        spoof.recv_from(&mut buf).is_err(),
        "the server answered a UDP stream from 127.0.0.2 for a test controlled from 127.0.0.1"
    );
    // The control connection's own address is answered ("6789").
    let own = UdpSocket::bind("127.0.0.1:0").expect("bind");
    own.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    own.send_to(b"9876", ("127.0.0.1", server.port))
        .expect("send");
    let (n, _) = own.recv_from(&mut buf).expect("the server's answer");
    assert_eq!(&buf[..n], b"6789");
    drop(ctl);
}

#[test]
fn server_bitrate_limit_refuses_a_test_asking_for_more() {
    let server = linerate_server(&["--server-bitrate-limit", "10M"]);
    let out = client(None, server.port, &["-u", "-b", "20M", "-t", "1"]);
    assert!(!out.status.success(), "a 20 Mbit/s test passed a 10M limit");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--server-bitrate-limit"), "{err}");
    // Within the limit: served.
    let v = linerate_client_json(server.port, &["-u", "-b", "5M", "-t", "1"]);
    assert!(f64_at(&v, "end.sum.bytes") > 0.0, "{v}");
    if let Err(why) = program("iperf3") {
        skipping(format_args!("the iperf3 client: {why}"));
        return;
    }
    let out = support::bin::run_bounded(
        std::process::Command::new("iperf3").args([
            "-c",
            "127.0.0.1",
            "-p",
            &server.port.to_string(),
            "-u",
            "-b",
            "20M",
            "-t",
            "1",
        ]),
        Duration::from_secs(30),
    );
    assert!(!out.status.success(), "iperf3 at 20M passed a 10M limit");
    let v = iperf3_client_json(server.port, &["-u", "-b", "5M", "-t", "1"]);
    assert!(f64_at(&v, "end.sum.bytes") > 0.0, "{v}");
}

#[test]
fn server_bitrate_limit_ends_a_test_that_moves_more_on_average() {
    let server = linerate_server(&["--server-bitrate-limit", "20M/1"]);
    // TCP asks for no rate: the average over 1 s ends it.
    let out = client(None, server.port, &["-t", "5"]);
    assert!(
        !out.status.success(),
        "an unlimited TCP test ran to its end"
    );
    assert!(
        server.wait_log("(--server-bitrate-limit)", Duration::from_secs(10)),
        "{}",
        server.log()
    );
}

#[test]
fn a_client_outside_allow_is_refused_naming_the_rule() {
    let server = linerate_server(&["--allow", "127.0.0.2/32", "--allow", "2001:db8::/32"]);
    let out = client(None, server.port, &["-t", "1"]);
    assert!(!out.status.success(), "127.0.0.1 was let in");
    assert!(
        server.wait_log(
            "127.0.0.1 is not in any --allow prefix (127.0.0.2/32, 2001:db8::/32)",
            Duration::from_secs(5)
        ),
        "{}",
        server.log()
    );
    // From inside the prefix: served.
    let v = linerate_client_json(server.port, &["-t", "1", "-B", "127.0.0.2"]);
    assert!(f64_at(&v, "end.sum_received.bytes") > 0.0, "{v}");
    if let Err(why) = program("iperf3") {
        skipping(format_args!("the iperf3 client: {why}"));
        return;
    }
    let v = iperf3_client_json(server.port, &["-t", "1", "-B", "127.0.0.2"]);
    assert!(f64_at(&v, "end.sum_received.bytes") > 0.0, "{v}");
}

#[test]
fn a_bad_allow_prefix_is_refused_by_value() {
    let out = support::bin::run_bounded(
        support::bin::linerate().args(["server", "-p", "0", "--allow", "10.0.0.0/33"]),
        Duration::from_secs(10),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("\"10.0.0.0/33\""), "{err}");
}

#[test]
fn max_duration_refuses_longer_tests() {
    let server = linerate_server(&["--max-duration", "2s"]);
    let out = client(None, server.port, &["-t", "5"]);
    assert!(!out.status.success(), "a 5 s test passed --max-duration 2s");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("at most 2 s"), "{err}");
    let v = linerate_client_json(server.port, &["-t", "1"]);
    assert!(f64_at(&v, "end.sum_received.bytes") > 0.0, "{v}");
    if program("iperf3").is_ok() {
        let out = support::bin::run_bounded(
            std::process::Command::new("iperf3").args([
                "-c",
                "127.0.0.1",
                "-p",
                &server.port.to_string(),
                "-t",
                "5",
            ]),
            Duration::from_secs(30),
        );
        assert!(
            !out.status.success(),
            "iperf3 -t 5 passed --max-duration 2s"
        );
    }
}

/// The peak resident memory of process `pid` in KiB (`VmHWM`), when /proc has it.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn a_4_gib_length_prefix_is_refused_with_little_memory() {
    let server = linerate_server(&[]);
    let Some(before) = peak_rss_kib(server.child.id()) else {
        skipping(format_args!("no VmHWM in /proc/PID/status"));
        return;
    };
    for i in 0..5u8 {
        let mut s = TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        // A cookie of its own: the previous test may still be closing.
        let mut c = cookie();
        c[0] = b'a' + i;
        s.write_all(&c).expect("cookie");
        let mut msg = vec![0xFF, 0xFF, 0xFF, 0xFF];
        msg.extend_from_slice(&[b'{'; 64 * 1024]);
        let _ = s.write_all(&msg);
        let mut answer = Vec::new();
        let _ = s.read_to_end(&mut answer);
        // PARAM_EXCHANGE, then SERVER_ERROR.
        assert_eq!(answer.get(1), Some(&0xFE), "{answer:?}");
    }
    assert!(
        server.wait_log("4294967295", Duration::from_secs(5)),
        "{}",
        server.log()
    );
    let peak = peak_rss_kib(server.child.id()).unwrap_or(u64::MAX);
    eprintln!("server peak RSS: {before} KiB before, {peak} KiB after");
    assert!(peak < 50 * 1024, "peak RSS {peak} KiB");
}
