//! Fault injection against `linerate server`: garbage, wrong cookies, a 4 GiB JSON length,
//! invalid JSON, an HTTP request, a stream with no control channel, clients that stall or
//! vanish mid-test. The server must log each, keep serving, and never die.

#![forbid(unsafe_code)]

mod support;

use std::io::{Read, Write};
use std::net::{TcpStream, UdpSocket};
use std::time::{Duration, Instant};

use support::bin::linerate;
use support::traffic::{Proc, f64_at, linerate_client_json, linerate_server};

/// A well-formed cookie, different on every call (a cookie names one test).
fn cookie() -> Vec<u8> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz234567";
    let n = N.fetch_add(1, Ordering::Relaxed) + std::process::id() as usize * 7;
    let mut c = b"abcdefghijklmnopqrstuvwxyz23".to_vec();
    for i in 0..8 {
        c.push(ALPHABET[(n >> (5 * i)) & 31]);
    }
    c.push(0);
    c
}

fn connect(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(15)))
        .expect("timeout");
    s
}

/// Reads until the server closes (bounded); returns what came.
fn read_to_close(s: &mut TcpStream) -> Vec<u8> {
    let mut v = Vec::new();
    let mut buf = [0u8; 4096];
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(15) {
        match s.read(&mut buf) {
            Ok(0) => return v,
            Ok(n) => v.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return v,
            Err(e) => panic!("server did not close: {e}"),
        }
    }
    panic!("server did not close within 15 s");
}

/// Sends a valid cookie, expects PARAM_EXCHANGE, sends `payload`, returns the answer.
fn after_cookie(port: u16, payload: &[u8]) -> Vec<u8> {
    let mut s = connect(port);
    s.write_all(&cookie()).expect("cookie");
    let mut b = [0u8; 1];
    if let Err(e) = s.read_exact(&mut b) {
        panic!("no PARAM_EXCHANGE from the server: {e}");
    }
    assert_eq!(b[0], 9, "PARAM_EXCHANGE");
    let _ = s.write_all(payload);
    read_to_close(&mut s)
}

fn assert_server_error(answer: &[u8]) {
    assert_eq!(
        answer.first(),
        Some(&0xFE),
        "SERVER_ERROR expected, got {answer:?}"
    );
    assert_eq!(answer.len(), 9, "{answer:?}");
}

fn bad_server() -> Proc {
    linerate_server(&["--handshake-timeout", "1s", "--idle-timeout", "2s"])
}

#[test]
fn garbage_wrong_cookie_and_http_are_logged_and_closed() {
    let server = bad_server();
    let mut s = connect(server.port);
    let junk: Vec<u8> = (0..200u32).map(|i| (i * 73 + 11) as u8).collect();
    s.write_all(&junk).expect("junk");
    assert!(read_to_close(&mut s).is_empty());

    let mut s = connect(server.port);
    s.write_all(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\0")
        .expect("cookie");
    assert!(read_to_close(&mut s).is_empty());

    let mut s = connect(server.port);
    s.write_all(b"GET /index.html HTTP/1.1\r\nHost: example\r\nUser-Agent: curl/8\r\n\r\n")
        .expect("http");
    assert!(read_to_close(&mut s).is_empty());

    // Too short to be a cookie, then silence: the handshake timeout closes it.
    let mut s = connect(server.port);
    s.write_all(b"GET / HTTP/1.0\r\n\r\n").expect("short http");
    let t = Instant::now();
    assert!(read_to_close(&mut s).is_empty());
    assert!(t.elapsed() < Duration::from_secs(4));

    assert!(
        server.wait_log("an HTTP request", Duration::from_secs(15)),
        "{}",
        server.log()
    );
    assert!(
        server.log().contains("not an iperf3 cookie"),
        "{}",
        server.log()
    );
    let v = linerate_client_json(server.port, &["-t", "1"]);
    assert!(f64_at(&v, "end.sum_received.bytes") > 0.0);
}

#[test]
fn huge_length_and_invalid_json_get_a_server_error() {
    let server = bad_server();
    assert_server_error(&after_cookie(server.port, &[0xFF, 0xFF, 0xFF, 0xFF]));
    let mut bad = 5u32.to_be_bytes().to_vec();
    bad.extend_from_slice(b"{{{{{");
    assert_server_error(&after_cookie(server.port, &bad));
    let mut not_object = 3u32.to_be_bytes().to_vec();
    not_object.extend_from_slice(b"[1]");
    assert_server_error(&after_cookie(server.port, &not_object));
    let mut bad_value = br#"{"tcp":true,"parallel":"many"}"#.to_vec();
    bad_value.splice(0..0, (bad_value.len() as u32).to_be_bytes());
    assert_server_error(&after_cookie(server.port, &bad_value));
    // Absurd numbers are refused, not trusted (a 1e300 s omit would overflow a Duration).
    let mut absurd = br#"{"tcp":true,"num":1000,"omit":1e300,"parallel":1}"#.to_vec();
    absurd.splice(0..0, (absurd.len() as u32).to_be_bytes());
    assert_server_error(&after_cookie(server.port, &absurd));
    // Each session logs when the server's thread for it gets there: in any order.
    for line in ["4294967295 bytes", "not valid JSON", "\"parallel\""] {
        assert!(
            server.wait_log(line, Duration::from_secs(15)),
            "{line}: {}",
            server.log()
        );
    }
    let v = linerate_client_json(server.port, &["-t", "1", "-u", "-b", "5M"]);
    assert!(f64_at(&v, "end.sum.packets") > 0.0);
}

#[test]
fn a_data_stream_without_a_control_channel_is_refused() {
    let server = bad_server();
    // What a data stream sends: the cookie, then bulk data.
    let mut payload = vec![0x5Au8; 64 * 1024];
    payload[..4].copy_from_slice(&[0x5A, 0x5A, 0x5A, 0x5A]);
    let answer = after_cookie(server.port, &payload);
    assert_server_error(&answer);
    // UDP junk on the port bothers nobody.
    let u = UdpSocket::bind("127.0.0.1:0").expect("udp");
    for _ in 0..50 {
        let _ = u.send_to(b"9876", ("127.0.0.1", server.port));
        let _ = u.send_to(&[0u8; 1400], ("127.0.0.1", server.port));
    }
    let v = linerate_client_json(server.port, &["-t", "1", "-u", "-b", "5M", "-R"]);
    assert!(f64_at(&v, "end.sum_received.bytes") > 0.0);
}

#[test]
fn clients_that_stall_or_vanish_mid_test_are_cleaned_up() {
    let server = bad_server();
    // Parameters sent, then no streams: the handshake timeout ends the test.
    let mut params = br#"{"tcp":true,"time":5,"parallel":2,"len":1000}"#.to_vec();
    params.splice(0..0, (params.len() as u32).to_be_bytes());
    let mut s = connect(server.port);
    s.write_all(&cookie()).expect("cookie");
    s.write_all(&params).expect("params");
    let answer = read_to_close(&mut s);
    assert_eq!(answer.first(), Some(&9), "{answer:?}");
    assert_eq!(answer.get(1), Some(&10), "CREATE_STREAMS: {answer:?}");

    // A client killed mid-test.
    let port = server.port.to_string();
    let mut child = linerate()
        .args(["client", "127.0.0.1", "-p", &port, "-t", "10", "-P", "2"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("client");
    assert!(
        server.wait_log("test started: TCP 2", Duration::from_secs(15)),
        "{}",
        server.log()
    );
    std::thread::sleep(Duration::from_millis(300));
    child.kill().expect("kill");
    let _ = child.wait();
    assert!(
        server.wait_log("closed the control connection", Duration::from_secs(15)),
        "{}",
        server.log()
    );
    assert!(
        server
            .log()
            .contains("waiting for the client's TCP streams"),
        "{}",
        server.log()
    );
    let v = linerate_client_json(server.port, &["-t", "1", "--bidir"]);
    assert!(f64_at(&v, "end.sum_received_bidir_reverse.bytes") > 0.0);
}

#[test]
fn a_flood_of_idle_connections_does_not_block_tests() {
    let server = bad_server();
    let idle: Vec<TcpStream> = (0..40).map(|_| connect(server.port)).collect();
    let v = linerate_client_json(server.port, &["-t", "1"]);
    assert!(f64_at(&v, "end.sum_received.bytes") > 0.0);
    drop(idle);
}
