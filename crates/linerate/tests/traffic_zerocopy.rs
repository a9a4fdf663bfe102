//! `--zerocopy` through the binary over loopback: each side's send and receive paths are
//! named in `linerate.zerocopy`, every byte is accounted as mapped or copied; `auto` (the
//! default) sends from an in-memory file and its receiver falls back to the copy where pages
//! do not map (loopback: sendfile's file pages never do) and says why; `on` pins the sender's
//! pages (loopback copies them at delivery, and the completions say so) and maps them; an
//! iperf3 peer is reported for this side alone.

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
fn auto_is_the_default_sends_by_sendfile_and_its_receiver_says_why_it_copies() {
    let srv = linerate_server(&LOOPBACK_SERVER);
    let out = client(None, srv.port, &["-n", BYTES, "-t", "30"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("zerocopy (client, auto): send sendfile"),
        "{text}"
    );
    assert!(
        text.contains("zerocopy (server, auto): receive copy"),
        "{text}"
    );

    for flag in ["-Z", "--zerocopy=auto"] {
        let srv = linerate_server(&LOOPBACK_SERVER);
        let v = linerate_client_json(srv.port, &["-n", BYTES, "-t", "30", flag]);
        let lr = &v["linerate"];
        let s = side(lr, "client");
        assert_eq!(s["send"], "sendfile", "{s}");
        assert!(s.get("send_fallback").is_none(), "{s}");
        let r = side(lr, "server");
        assert_eq!(r["receive"], "copy", "{r}");
        assert_eq!(f64_at(r, "mapped_bytes"), 0.0, "{r}");
        assert!(
            r["receive_fallback"]
                .as_str()
                .unwrap_or_default()
                .contains("mapped (below 50%)"),
            "{r}"
        );
        every_byte(&v, r);
    }
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
