//! `linerate client` failures: each is one line on stderr, exit code 2, bounded in time.

#![forbid(unsafe_code)]

mod support;

use std::io::Write;
use std::net::TcpListener;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use support::bin::{linerate, run_bounded};
use support::net::free_port;
use support::netns::Netns;
use support::traffic::iperf3_server;
use support::{namespaces, program, require};

fn client(args: &[&str]) -> (Output, Duration) {
    let t = Instant::now();
    let out = run_bounded(linerate().arg("client").args(args), Duration::from_secs(20));
    (out, t.elapsed())
}

fn one_line_error(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.trim().lines().count(), 1, "not one line: {err}");
    assert!(err.starts_with("linerate: "), "{err}");
    err
}

#[test]
fn refused_connection() {
    let port = free_port().to_string();
    let (out, took) = client(&["127.0.0.1", "-p", &port, "-t", "1"]);
    let err = one_line_error(&out);
    assert!(err.contains("connection refused"), "{err}");
    assert!(took < Duration::from_secs(3));
}

#[test]
fn silent_server_times_out() {
    let l = TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = l.local_addr().expect("addr").port().to_string();
    let hold = std::thread::spawn(move || l.accept().map(|(s, _)| s));
    let (out, took) = client(&["127.0.0.1", "-p", &port, "--connect-timeout", "1s"]);
    let err = one_line_error(&out);
    assert!(err.contains("timed out after 1.0 s"), "{err}");
    assert!(took < Duration::from_secs(4), "{took:?}");
    drop(hold);
}

#[test]
fn a_server_that_is_not_iperf3() {
    let l = TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = l.local_addr().expect("addr").port().to_string();
    let _web = std::thread::spawn(move || {
        if let Ok((mut s, _)) = l.accept() {
            let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
            std::thread::sleep(Duration::from_secs(2));
        }
    });
    let (out, _) = client(&["127.0.0.1", "-p", &port, "--connect-timeout", "2s"]);
    let err = one_line_error(&out);
    assert!(err.contains("unexpected control byte 0x48"), "{err}");
}

#[test]
fn busy_iperf3_server() {
    require!(program("iperf3"));
    let server = iperf3_server(false);
    let port = server.port.to_string();
    let mut first = Command::new("iperf3")
        .args(["-c", "127.0.0.1", "-p", &port, "-t", "3", "-b", "10M"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("iperf3 -c");
    std::thread::sleep(Duration::from_millis(700));
    let (out, _) = client(&["127.0.0.1", "-p", &port, "-t", "1"]);
    let err = one_line_error(&out);
    assert!(err.contains("is busy running a test"), "{err}");
    let _ = first.wait();
}

#[test]
fn unreachable_network_and_host() {
    require!(namespaces());
    let ns = Netns::with_loopback("tr-u");
    let run = |args: &[&str]| {
        let t = Instant::now();
        let out = run_bounded(
            ns.linerate().arg("client").args(args),
            Duration::from_secs(20),
        );
        (out, t.elapsed())
    };
    // No route at all.
    let (out, _) = run(&["198.18.0.1", "-t", "1"]);
    let err = one_line_error(&out);
    assert!(err.contains("unreachable"), "{err}");
    // A route into a link where nothing answers: the connect times out.
    ns.ip(&[
        "link", "add", "lrtr0", "type", "veth", "peer", "name", "lrtr1",
    ]);
    ns.ip(&["link", "set", "lrtr1", "up"]);
    ns.ip(&["addr", "add", "198.18.5.2/24", "dev", "lrtr0"]);
    ns.ip(&["link", "set", "lrtr0", "up"]);
    let (out, took) = run(&["198.18.5.1", "-t", "1", "--connect-timeout", "1s"]);
    let err = one_line_error(&out);
    assert!(
        err.contains("timed out") || err.contains("unreachable"),
        "{err}"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn bad_flags_exit_2_with_the_flag_named() {
    let (out, _) = client(&["127.0.0.1", "-P", "0"]);
    let err = one_line_error(&out);
    assert!(err.contains("-P 0"), "{err}");
    let out = run_bounded(
        linerate().args(["client", "127.0.0.1", "-b", "10GB"]),
        Duration::from_secs(5),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--bitrate"));
    let (out, _) = client(&["127.0.0.1", "-t", "100000h"]);
    let err = one_line_error(&out);
    assert!(err.contains("-t 360000000 s is above"), "{err}");
    let (out, _) = client(&["127.0.0.1", "-u", "-l", "70000", "-t", "1"]);
    let err = one_line_error(&out);
    assert!(err.contains("-l 70000"), "{err}");
}
