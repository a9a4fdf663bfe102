//! `--mode pps` receive path through the binary over loopback: a GSO sender's runs reach a
//! UDP_GRO receiver whole and are walked datagram by datagram, so the counts stay exact; the
//! output names what the receive path used (GRO, batch size, busy polling).

#![forbid(unsafe_code)]
// In these tests an unwrap is an assertion: a failure should stop the test right there.
#![allow(clippy::unwrap_used)]

mod support;

use support::netns::Netns;
use support::traffic::{
    LOOPBACK_SERVER, client, client_json, f64_at, linerate_server, linerate_server_in,
};
use support::{namespaces, require};

/// 500 GSO sends of 64 datagrams of 18 bytes: a known count.
const DATAGRAMS: u64 = 64 * 500;

/// The counts add up exactly: every datagram sent is received or lost, and the lost ones are
/// exactly those the kernel dropped at the receiving socket (`rcvbuf_errors` of the test's
/// own namespace: nothing else runs there). No reordering, no duplicates.
fn exact(lr: &serde_json::Value) {
    let received = f64_at(lr, "pps.received_packets");
    let lost = f64_at(lr, "lost_packets");
    assert_eq!(f64_at(lr, "pps.sent_packets"), DATAGRAMS as f64, "{lr}");
    assert_eq!(received + lost, DATAGRAMS as f64, "{lr}");
    assert!(received > 0.0, "{lr}");
    let dropped = f64_at(lr, "evidence.local.udp.rcvbuf_errors");
    assert_eq!(lost, dropped, "lost vs the kernel's socket drops: {lr}");
    assert_eq!(f64_at(lr, "reordered_packets"), 0.0, "{lr}");
    assert_eq!(f64_at(lr, "duplicate_packets"), 0.0, "{lr}");
}

/// One client run in its own namespace, so the kernel's drop counter is the run's alone.
fn run(args: &[&str]) -> serde_json::Value {
    let ns = Netns::with_loopback("pp-gro");
    let srv = linerate_server_in(&ns, &LOOPBACK_SERVER);
    client_json(&client(Some(&ns), srv.port, args))
}

#[test]
fn gso_runs_reach_a_gro_receiver_whole_and_are_counted_exactly() {
    require!(namespaces());
    let bytes = (DATAGRAMS * 18).to_string();
    // The client sends, the server receives: the server's receive path comes back in its
    // results.
    let v = run(&["--mode", "pps", "-n", &bytes, "-t", "20", "--json"]);
    let lr = &v["linerate"];
    exact(lr);
    assert_eq!(lr["pps"]["gso_segments"], 64, "{lr}");
    let rp = &lr["pps"]["receive_path"];
    assert_eq!(rp["side"], "server", "{rp}");
    if rp["gro"] == "refused" {
        eprintln!("SKIP (rest): this kernel refuses UDP_GRO");
        return;
    }
    assert_eq!(rp["gro"], "on", "{rp}");
    assert!(f64_at(rp, "gro_max_segments") > 1.0, "{rp}");
    assert!(f64_at(rp, "batch_peak") >= 8.0, "{rp}");

    // The server sends (-R): the client's receiver, named as such.
    let v = run(&["--mode", "pps", "-R", "-n", &bytes, "-t", "3", "--json"]);
    let lr = &v["linerate"];
    exact(lr);
    let rp = &lr["pps"]["receive_path"];
    assert_eq!(
        (&rp["side"], &rp["gro"]),
        (&"client".into(), &"on".into()),
        "{rp}"
    );
    assert!(f64_at(rp, "gro_max_segments") > 1.0, "{rp}");

    // --no-gro: the kernel splits the runs; the counts are the same.
    let v = run(&[
        "--mode", "pps", "--no-gro", "-n", &bytes, "-t", "20", "--json",
    ]);
    let lr = &v["linerate"];
    exact(lr);
    assert_eq!(lr["pps"]["receive_path"]["gro"], "off", "{lr}");
    assert_eq!(lr["pps"]["receive_path"]["gro_max_segments"], 0, "{lr}");

    // The text says it too, and busy polling is named with the kernel's answer.
    let srv = linerate_server(&LOOPBACK_SERVER);
    let out = client(
        None,
        srv.port,
        &[
            "--mode",
            "pps",
            "-R",
            "-n",
            &bytes,
            "-t",
            "3",
            "--busy-poll",
            "20",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("receive (client): UDP GRO on (up to ")
            && text.contains("recvmmsg batch up to"),
        "{text}"
    );
    assert!(
        text.contains("busy poll 20 µs on") || text.contains("busy poll 20 µs refused"),
        "{text}"
    );
}

#[test]
fn receive_flags_need_pps() {
    let srv = linerate_server(&LOOPBACK_SERVER);
    for flag in [&["--no-gro"][..], &["--busy-poll", "10"]] {
        let mut args = vec!["-t", "1"];
        args.extend_from_slice(flag);
        let out = client(None, srv.port, &args);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flag[0]) && err.contains("--mode pps"), "{err}");
    }
}
