//! `linerate gen` through a veth pair between two namespaces this test creates (removed on
//! drop, also when the test fails): the frames the generator reports sent must arrive at the
//! peer's interface (its own counters, read with `ip -s -j`), with the size given, and a paced
//! run must hold its rate. Linux's packet sockets and namespaces: elsewhere this file is empty.

#![cfg(target_os = "linux")]
#![forbid(unsafe_code)]

use serde_json::Value;

mod support;

use support::netns::Netns;
use support::{namespaces, require};

/// Side a (198.18.60.1) and side b (198.18.60.2) joined by a veth pair; b's MAC.
fn pair() -> (Netns, Netns, String) {
    let a = Netns::with_loopback("gen");
    let b = Netns::with_loopback("gen");
    let out = std::process::Command::new("ip")
        .args(["link", "add", "lrgen-a", "netns", a.name(), "type", "veth"])
        .args(["peer", "name", "lrgen-b", "netns", b.name()])
        .output()
        .expect("run ip link add");
    assert!(out.status.success(), "ip link add: {out:?}");
    a.ip(&["addr", "add", "198.18.60.1/24", "dev", "lrgen-a"]);
    b.ip(&["addr", "add", "198.18.60.2/24", "dev", "lrgen-b"]);
    a.ip(&["link", "set", "lrgen-a", "up"]);
    b.ip(&["link", "set", "lrgen-b", "up"]);
    let mac = link(&b)["address"].as_str().expect("address").to_string();
    (a, b, mac)
}

/// `ip -s -j link show lrgen-b` in `b`.
fn link(b: &Netns) -> Value {
    let out = b
        .exec("ip")
        .args(["-s", "-j", "link", "show", "lrgen-b"])
        .output()
        .expect("run ip -s -j link");
    assert!(out.status.success(), "ip link show: {out:?}");
    let all: Value = serde_json::from_slice(&out.stdout).expect("ip -j prints JSON");
    all[0].clone()
}

fn rx(b: &Netns) -> (u64, u64) {
    let l = link(b);
    let s = &l["stats64"]["rx"];
    (
        s["packets"].as_u64().expect("rx packets"),
        s["bytes"].as_u64().expect("rx bytes"),
    )
}

fn gen_json(a: &Netns, mac: &str, extra: &[&str]) -> Value {
    let out = a
        .linerate()
        .args(["gen", "--dev", "lrgen-a", "--src-ip", "198.18.60.1"])
        .args(["--dst-ip", "198.18.60.2", "--dst-mac", mac, "--json"])
        .args(extra)
        .output()
        .expect("run linerate gen");
    assert!(out.status.success(), "linerate gen {extra:?}: {out:?}");
    serde_json::from_slice(&out.stdout).expect("gen --json prints JSON")
}

#[test]
fn counted_frames_arrive_at_the_peer_with_their_size() {
    require!(namespaces());
    let (a, b, mac) = pair();
    let (p0, b0) = rx(&b);
    let doc = gen_json(&a, &mac, &["--frame", "128", "--count", "20000"]);
    assert_eq!(doc["schema"], "linerate.gen/1");
    assert_eq!(doc["sent_frames"], 20000, "{doc}");
    // The ring is drained asynchronously: wait (bounded) for the peer to count them all.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let (mut p, mut bytes) = rx(&b);
    while p - p0 < 20000 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
        (p, bytes) = rx(&b);
    }
    // IPv6 neighbour discovery may add a few packets of its own.
    let got = p - p0;
    assert!((20000..20010).contains(&got), "peer received {got} frames");
    // 128-byte frames on the wire are 124 bytes without the FCS, as the kernel counts them.
    assert!(bytes - b0 >= 20000 * 124, "bytes {}", bytes - b0);
    assert!(bytes - b0 < 20000 * 124 + 10 * 200, "bytes {}", bytes - b0);
}

#[test]
fn a_paced_imix_run_holds_its_rate() {
    require!(namespaces());
    let (a, _b, mac) = pair();
    let doc = gen_json(
        &a,
        &mac,
        &["--frame", "imix", "--rate", "5kpps", "-t", "1s"],
    );
    let pps = doc["sent_pps"].as_f64().expect("sent_pps");
    assert!(
        (4500.0..5500.0).contains(&pps),
        "sent {pps} frames/s, asked 5000"
    );
    let frames = doc["sent_frames"].as_u64().expect("sent_frames");
    let bytes = doc["sent_bytes"].as_u64().expect("sent_bytes");
    // Simple IMIX (7:4:1 of 64, 594, 1518 B) averages 361.8 B per frame.
    let mean = bytes as f64 / frames as f64;
    assert!((340.0..370.0).contains(&mean), "mean frame {mean} B");
}

#[test]
fn a_missing_interface_is_a_clear_error() {
    require!(namespaces());
    let a = Netns::with_loopback("gen");
    let out = a
        .linerate()
        .args(["gen", "--dev", "lrgen-none", "--src-ip", "198.18.60.1"])
        .args(["--dst-ip", "198.18.60.2", "--dst-mac", "02:00:00:00:00:01"])
        .args(["--count", "10"])
        .output()
        .expect("run linerate gen");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("lrgen-none"), "{err}");
}
