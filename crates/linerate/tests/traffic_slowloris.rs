//! `linerate server` under a slowloris attack: connections that send nothing or half a cookie
//! must not lock real clients out (issue 16, item 1).

#![forbid(unsafe_code)]

mod support;

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use support::traffic::{f64_at, iperf3_client_json, linerate_client_json, linerate_server};
use support::{program, skipping};

/// Opens up to `n` connections to the control port, alternately idle and with a partial
/// cookie, within `limit`. Returns the sockets (held open by the caller).
fn hold_connections(port: u16, n: usize, limit: Duration) -> Vec<TcpStream> {
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let t = Instant::now();
    let mut held = Vec::with_capacity(n);
    for i in 0..n {
        if t.elapsed() > limit {
            break;
        }
        let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(2)) else {
            continue;
        };
        if i % 2 == 1 {
            // 20 of the 37 cookie bytes, then nothing.
            let _ = s.write_all(b"abcdefghijklmnopqrst");
        }
        held.push(s);
    }
    held
}

#[test]
fn idle_and_partial_cookie_connections_do_not_lock_clients_out() {
    let server = linerate_server(&[]);
    let port = server.port;
    let held = hold_connections(port, 1000, Duration::from_secs(20));
    assert!(held.len() >= 500, "only {} connections opened", held.len());
    // The server has taken them all in before the real client comes.
    std::thread::sleep(Duration::from_millis(500));
    let v = linerate_client_json(port, &["-t", "2"]);
    assert!(f64_at(&v, "end.sum_received.bytes") > 0.0, "{v}");
    // Another wave while the first is still held, then an iperf3 client.
    let more = hold_connections(port, 1000, Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(500));
    if let Err(why) = program("iperf3") {
        skipping(format_args!("the iperf3 client: {why}"));
    } else {
        let v = iperf3_client_json(port, &["-t", "2"]);
        assert!(f64_at(&v, "end.sum_received.bytes") > 0.0, "{v}");
    }
    let log = server.log();
    assert!(
        log.contains("evicted"),
        "no eviction logged:\n{}",
        &log[..log.len().min(4000)]
    );
    // Refusals are logged once per source per interval, not once per connection.
    let refusals = log.lines().filter(|l| l.contains("warning")).count();
    assert!(refusals < 50, "{refusals} warning lines for one source");
    drop((held, more));
}

#[test]
fn zero_pending_limits_are_refused_by_name() {
    for flag in ["--max-pending", "--max-pending-per-ip"] {
        let out = support::bin::run_bounded(
            support::bin::linerate().args(["server", "-p", "0", flag, "0"]),
            Duration::from_secs(10),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{flag} 0 accepted");
        assert!(
            err.contains(&format!("{flag} 0: expected at least 1")),
            "{err}"
        );
    }
}

/// Threads of process `pid` now (its `/proc/PID/task` entries).
fn threads_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, Iterator::count)
}

/// Connects and sends a well-formed cookie, then nothing more.
fn silent_cookie(port: u16) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let mut cookie = [b'a'; 37];
    cookie[36] = 0;
    s.write_all(&cookie).expect("send the cookie");
    s
}

#[test]
fn thousands_of_idle_connections_cost_no_threads() {
    if !std::path::Path::new("/proc/self/task").is_dir() {
        skipping(format_args!("no /proc/PID/task to count threads"));
        return;
    }
    let server = linerate_server(&["--max-pending", "4000", "--max-pending-per-ip", "4000"]);
    let pid = server.child.id();
    let before = threads_of(pid);
    let held = hold_connections(server.port, 3000, Duration::from_secs(30));
    assert!(held.len() >= 2000, "only {} connections opened", held.len());
    std::thread::sleep(Duration::from_millis(500));
    let during = threads_of(pid);
    eprintln!(
        "server threads: {before} before, {during} with {} idle connections",
        held.len()
    );
    assert!(
        during <= before + 2,
        "{during} threads with {} pending connections ({before} before)",
        held.len()
    );
    // None of them was evicted (the table holds them all), and a client still gets through.
    let v = linerate_client_json(server.port, &["-t", "1"]);
    assert!(f64_at(&v, "end.sum_received.bytes") > 0.0, "{v}");
    assert!(!server.log().contains("evicted"), "{}", server.log());
    drop(held);
}

#[test]
fn a_client_that_goes_silent_after_its_cookie_frees_its_test_slot() {
    let server = linerate_server(&["--max-tests", "1", "--handshake-timeout", "1s"]);
    let silent = silent_cookie(server.port);
    assert!(
        server.wait_log("test failed", Duration::from_secs(10)),
        "the silent test was not ended:\n{}",
        server.log()
    );
    let v = linerate_client_json(server.port, &["-t", "1"]);
    assert!(f64_at(&v, "end.sum_received.bytes") > 0.0, "{v}");
    drop(silent);
}

#[test]
fn max_tests_per_ip_refuses_a_second_test_from_one_address() {
    let server = linerate_server(&["--max-tests-per-ip", "1", "--handshake-timeout", "10s"]);
    let silent = silent_cookie(server.port);
    std::thread::sleep(Duration::from_millis(300));
    let out = support::traffic::client(None, server.port, &["-t", "1"]);
    assert!(!out.status.success(), "a second test from 127.0.0.1 ran");
    assert!(
        server.wait_log("--max-tests-per-ip", Duration::from_secs(5)),
        "{}",
        server.log()
    );
    drop(silent);
    // Once the first test is gone, the address may test again.
    assert!(server.wait_log("test failed", Duration::from_secs(15)));
    let v = linerate_client_json(server.port, &["-t", "1"]);
    assert!(f64_at(&v, "end.sum_received.bytes") > 0.0, "{v}");
}
