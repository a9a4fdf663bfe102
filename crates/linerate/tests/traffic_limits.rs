//! `linerate server` limits for a server left on the internet (issue 16): `--allow` closes
//! clients outside its prefixes, `--max-tests-per-ip` caps one address's running tests while
//! another address still gets in, and `--server-bitrate-limit` ends a test above the rate with
//! iperf3's error 27, which both a linerate and a real iperf3 client report.

#![forbid(unsafe_code)]

mod support;

use std::process::Child;
use std::time::Duration;

use support::bin::{linerate, text};
use support::traffic::{client, linerate_server};
use support::{program, skipping};

#[test]
fn allow_closes_clients_outside_its_prefixes() {
    let server = linerate_server(&["--allow", "127.0.0.2", "--allow", "198.18.0.0/15"]);
    let out = client(None, server.port, &["-t", "1s", "--no-store"]);
    assert!(!out.status.success(), "127.0.0.1 got in: {out:?}");
    assert!(
        server.wait_log("outside every --allow prefix", Duration::from_secs(5)),
        "{}",
        server.log()
    );
    // From an allowed address (the client binds 127.0.0.2) the test runs.
    let out = client(
        None,
        server.port,
        &["-t", "1s", "--no-store", "-B", "127.0.0.2"],
    );
    assert!(out.status.success(), "{}", text(&out));
    // A bad prefix is a usage error naming the flag and the fix.
    let o = linerate()
        .args(["server", "--allow", "198.18.0.1/15"])
        .output()
        .expect("run linerate");
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--allow") && err.contains("198.18.0.0/15"),
        "{err}"
    );
}

/// Starts a bounded client in the background.
fn background_client(port: u16, args: &[&str]) -> Child {
    linerate()
        .args(["client", "127.0.0.1", "-p", &port.to_string(), "--no-store"])
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start a client")
}

#[test]
fn one_address_runs_at_most_max_tests_per_ip() {
    let server = linerate_server(&["--max-tests-per-ip", "1"]);
    let mut first = background_client(server.port, &["-t", "4s", "-b", "10M"]);
    assert!(
        server.wait_log("test started", Duration::from_secs(10)),
        "{}",
        server.log()
    );
    let second = client(None, server.port, &["-t", "1s", "--no-store", "-b", "10M"]);
    assert!(!second.status.success(), "a second test from 127.0.0.1 ran");
    assert!(text(&second).contains("busy"), "{}", text(&second));
    assert!(
        server.log().contains("the --max-tests-per-ip limit"),
        "{}",
        server.log()
    );
    // Another address is not held back by the first one's tests.
    let other = client(
        None,
        server.port,
        &["-t", "1s", "--no-store", "-b", "10M", "-B", "127.0.0.3"],
    );
    assert!(other.status.success(), "{}", text(&other));
    assert!(first.wait().expect("wait").success());
    // The slot is given back when the test ends.
    let again = client(None, server.port, &["-t", "1s", "--no-store", "-b", "10M"]);
    assert!(again.status.success(), "{}", text(&again));
}

#[test]
fn a_test_above_the_server_bitrate_limit_is_ended_with_iperf3s_error() {
    let server = linerate_server(&["--server-bitrate-limit", "100M/1"]);
    let out = client(None, server.port, &["-t", "4s", "--no-store"]);
    assert!(!out.status.success(), "an unlimited test ran to its end");
    assert!(
        text(&out).contains("the total bit rate is above the server's limit (iperf3 error 27"),
        "{}",
        text(&out)
    );
    assert!(
        server.log().contains("above --server-bitrate-limit"),
        "{}",
        server.log()
    );
    // Under the limit, a test runs to its end.
    let out = client(None, server.port, &["-t", "2s", "--no-store", "-b", "20M"]);
    assert!(out.status.success(), "{}", text(&out));
    if let Err(why) = program("iperf3") {
        skipping(format_args!(
            "{why}: its client's reading of error 27 is not checked"
        ));
        return;
    }
    let o = std::process::Command::new("iperf3")
        .args(["-c", "127.0.0.1", "-p", &server.port.to_string(), "-t", "4"])
        .output()
        .expect("run iperf3");
    let all = String::from_utf8_lossy(&o.stdout) + String::from_utf8_lossy(&o.stderr);
    assert!(
        all.contains("total required bandwidth is larger than server limit"),
        "{all}"
    );
}
