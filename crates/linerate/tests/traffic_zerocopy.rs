//! `--zerocopy` through the binary over loopback: each side's send and receive paths are
//! named in `linerate.zerocopy`, every byte is accounted as mapped or copied, `auto` falls
//! back where zero-copy does not pay (loopback: the kernel copies `MSG_ZEROCOPY` pages at
//! delivery, and a copying sender's pages never map) and says why, and an iperf3 peer is
//! reported for this side alone.

#![forbid(unsafe_code)]
// In these tests an unwrap is an assertion: a failure should stop the test right there.
#![allow(clippy::unwrap_used)]

mod support;

use serde_json::Value;
use support::traffic::{
    LOOPBACK_SERVER, client, f64_at, iperf3_server, linerate_client_json, linerate_server,
};
use support::{program, require};

/// Bytes each run moves: bounded, and enough for `auto`'s 64 MiB receive probe.
const BYTES: &str = "256M";

/// The `zerocopy` report of `side` in a run's `linerate` object.
fn side<'a>(lr: &'a Value, side: &str) -> &'a Value {
    lr["zerocopy"]
        .as_array()
        .and_then(|a| a.iter().find(|z| z["side"] == side))
        .unwrap_or_else(|| panic!("no zerocopy report of the {side}: {lr}"))
}

/// The receiving side counted every byte of the run's document `v` once, mapped or copied.
fn every_byte(v: &Value, z: &Value) {
    let got = f64_at(z, "mapped_bytes") + f64_at(z, "copied_bytes");
    assert_eq!(got, f64_at(v, "end.sum_received.bytes"), "{z}");
    assert!(got >= 256e6, "{z}");
}

#[test]
fn on_pins_the_senders_pages_and_maps_the_receivers() {
    for reverse in [false, true] {
        let srv = linerate_server(&LOOPBACK_SERVER);
        let mut args = vec!["-n", BYTES, "-t", "30", "--zerocopy=on"];
        let (tx, rx) = if reverse {
            args.push("-R");
            ("server", "client")
        } else {
            ("client", "server")
        };
        let v = linerate_client_json(srv.port, &args);
        let lr = &v["linerate"];
        let s = side(lr, tx);
        assert_eq!(s["asked"], "on", "{s}");
        assert_eq!(s["send"], "msg_zerocopy", "{s}");
        assert!(s.get("receive").is_none(), "{s}");
        let sends = f64_at(s, "zerocopy_sends");
        assert!(sends > 0.0, "{s}");
        // Loopback delivers locally: the kernel copies the pinned pages, and says so.
        let copied = f64_at(s, "kernel_copied_sends");
        assert!(copied > 0.0 && copied <= sends, "{s}");
        let r = side(lr, rx);
        assert_eq!(r["receive"], "zerocopy", "{r}");
        assert!(r.get("receive_fallback").is_none(), "{r}");
        assert!(f64_at(r, "mapped_bytes") > 0.0, "{r}");
        every_byte(&v, r);
    }
}

#[test]
fn auto_falls_back_on_loopback_and_says_why_on_both_sides() {
    let srv = linerate_server(&LOOPBACK_SERVER);
    let out = client(None, srv.port, &["-n", BYTES, "-t", "30", "-Z"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("zerocopy (client, auto): send copy"), "{text}");
    assert!(text.contains("zerocopy (server, auto): receive copy"), "{text}");

    let srv = linerate_server(&LOOPBACK_SERVER);
    let v = linerate_client_json(srv.port, &["-n", BYTES, "-t", "30", "--zerocopy=auto"]);
    let lr = &v["linerate"];
    let s = side(lr, "client");
    assert_eq!(s["send"], "copy", "{s}");
    let why = s["send_fallback"].as_str().unwrap_or_default();
    assert!(why.contains("the kernel copied"), "{s}");
    // It decided after its probe, not before and not never.
    assert!(f64_at(s, "zerocopy_sends") >= 64.0, "{s}");
    let r = side(lr, "server");
    assert_eq!(r["receive"], "copy", "{r}");
    assert!(
        r["receive_fallback"]
            .as_str()
            .unwrap_or_default()
            .contains("mapped (below 50%)"),
        "{r}"
    );
    every_byte(&v, r);
}

#[test]
fn off_and_udp_and_other_modes() {
    let srv = linerate_server(&LOOPBACK_SERVER);
    let v = linerate_client_json(srv.port, &["-n", "8M", "--zerocopy=off"]);
    assert!(v["linerate"].get("zerocopy").is_none(), "{}", v["linerate"]);
    for args in [
        &["-u", "-Z", "-t", "1"][..],
        &["--mode", "rr", "-Z", "-t", "1"],
    ] {
        let out = client(None, srv.port, args);
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--zerocopy is for TCP streams"), "{err}");
    }
    let out = client(None, srv.port, &["--zerocopy=sometimes", "-t", "1"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("sometimes"));
}

#[test]
fn an_iperf3_peer_gets_this_sides_report_alone() {
    require!(program("iperf3"));
    let srv = iperf3_server(true);
    let v = linerate_client_json(srv.port, &["-n", BYTES, "-t", "30", "-R", "--zerocopy=on"]);
    let lr = &v["linerate"];
    let zs = lr["zerocopy"].as_array().unwrap();
    assert_eq!(zs.len(), 1, "{lr}");
    let r = side(lr, "client");
    assert_eq!(r["receive"], "zerocopy", "{r}");
    every_byte(&v, r);
}
