//! Issue 30's UDP case: a receiver with a small socket buffer (`-w 4K`) in its own network
//! namespace, offered twice what it drains, over a veth pair from another namespace. The
//! verdict must name the receiver's socket buffer, with an overflow count equal to the
//! `Udp: RcvbufErrors` the kernel counted in the receiver's namespace over the test, and
//! print the prescription with its apply and rollback commands.

#![forbid(unsafe_code)]

mod support;

use std::time::Duration;

use support::bin::{ok_db, run_bounded};
use support::netns::Netns;
use support::spinner::Spinner;
use support::traffic::{Proc, client, iperf3_server, linerate_server_in};
use support::{arg, namespaces, program, require, tempdir};

const SERVER: &str = "198.18.77.2";

/// Two namespaces joined by a veth pair, 198.18.77.1 (client) and .2 (server).
fn pair() -> (Netns, Netns) {
    Netns::veth_pair("lu", "198.18.77")
}

/// A UDP test from `client` to the server with a 4 KiB socket buffer, as JSON.
fn udp(client: &Netns, server: &Proc, args: &[&str]) -> serde_json::Value {
    let out = run_bounded(
        client
            .linerate()
            .args(["client", SERVER, "-p", &server.port.to_string()])
            .args(["-u", "-w", "4K", "-l", "1400", "--affinity=1/0"])
            .args(["--no-store", "--json"])
            .args(args),
        Duration::from_secs(30),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn a_small_receive_buffer_offered_twice_its_drain_is_the_receiver_socket_buffer() {
    require!(namespaces());
    let (client, server_ns) = pair();
    let server = linerate_server_in(&server_ns, &[]);
    let spinner = Spinner::start();

    // What the receiver drains: offered as much as the sender can send, for one second.
    let probe = udp(&client, &server, &["-b", "0", "-t", "1"]);
    let drained = probe["linerate"]["udp_limit"]["received_bps"]
        .as_f64()
        .expect("received_bps");
    assert!(drained > 1e6, "{}", probe["linerate"]["udp_limit"]);
    let offered = format!("{}", (2.0 * drained) as u64);

    let before = server_ns.udp_rcvbuf_errors();
    let v = udp(&client, &server, &["-b", &offered, "-t", "2"]);
    let counted = server_ns.udp_rcvbuf_errors() - before;

    let l = &v["linerate"]["udp_limit"];
    eprintln!(
        "offered {offered} bit/s: lost {} of {}, RcvbufErrors delta {counted}, verdict {}",
        l["lost"], l["sent"], l["losses"]
    );
    assert_eq!(l["place"], "receiver_socket_buffer", "{l}");
    if spinner.is_some() {
        // The case is the issue's: offered well above what the receiver drains.
        let (o, r) = (l["offered_bps"].as_f64(), l["received_bps"].as_f64());
        assert!(o.zip(r).is_some_and(|(o, r)| o >= 1.5 * r), "{l}");
    }
    let overflow = l["losses"][0]["datagrams"].as_u64().expect("count");
    assert_eq!(l["losses"][0]["place"], "receiver_socket_buffer", "{l}");
    assert!(overflow > 0, "{l}");
    assert_eq!(overflow, counted, "the kernel's RcvbufErrors delta: {l}");
    // The server's own reading, returned with its results.
    assert_eq!(
        v["linerate"]["evidence"]["remote"]["udp"]["rcvbuf_errors"], counted,
        "{}",
        v["linerate"]["evidence"]["remote"]
    );
    let p = &l["prescription"];
    assert_eq!(p["side"], "server", "{p}");
    let buffer = p["buffer_bytes"].as_u64().expect("buffer_bytes");
    assert!(buffer >= 212_992 && buffer.is_power_of_two(), "{p}");
    assert_eq!(
        p["apply"],
        format!("linerate tune --set net.core.rmem_max={buffer} --apply")
    );
    assert_eq!(p["rollback"], "linerate tune --rollback");

    // The human block says the same, and `show` prints it again from the store.
    let dir = tempdir();
    let db = dir.path().join("runs.db");
    let out = run_bounded(
        client
            .linerate()
            .args(["client", SERVER, "-p", &server.port.to_string()])
            .args(["-u", "-w", "4K", "-l", "1400", "--affinity=1/0"])
            .args(["--db", arg(&db)])
            .args(["-b", &offered, "-t", "1"]),
        Duration::from_secs(30),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("limit: receiver socket buffer"), "{text}");
    assert!(
        text.contains("roll back: linerate tune --rollback"),
        "{text}"
    );
    let shown = ok_db(&db, &["show", "1"]);
    assert!(shown.contains("limit: receiver socket buffer"), "{shown}");
    assert!(
        shown.contains("apply on the server: linerate tune --set"),
        "{shown}"
    );
}

#[test]
fn with_an_iperf3_server_the_receiver_side_is_said_unseen() {
    require!(program("iperf3"));
    let server = iperf3_server(true);
    let out = client(
        None,
        server.port,
        &["-u", "-b", "10M", "-t", "1", "--no-store", "--json"],
    );
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let l = &v["linerate"]["udp_limit"];
    let unseen = l["unseen"].to_string();
    assert!(unseen.contains("iperf3"), "{l}");
    // What was lost (if anything) cannot be placed at the receiver: no socket-buffer verdict.
    assert_ne!(l["place"], "receiver_socket_buffer", "{l}");
    assert!(l["cpu"].as_array().is_some_and(|c| c.len() == 1), "{l}");
}
