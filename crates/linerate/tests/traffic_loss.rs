//! Loss accounting with known drops: inside a throw-away network namespace, nftables drops
//! exactly every tenth data datagram on its way into the server, and UDP tests (with small and
//! with larger datagrams) must count exactly those as lost.

#![forbid(unsafe_code)]

#[path = "traffic_support/mod.rs"]
mod support;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use support::*;

struct Netns(String);

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

fn netns_with_drops(port: u16) -> Option<Netns> {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout == b"0\n");
    if !root {
        eprintln!("SKIP: needs root for a network namespace");
        return None;
    }
    let ns = Netns(format!("lr-tr-{}-l{port}", std::process::id()));
    if !Command::new("ip")
        .args(["netns", "add", &ns.0])
        .status()
        .is_ok_and(|s| s.success())
    {
        eprintln!("SKIP: `ip netns add` does not work here");
        return None;
    }
    let up = Command::new("ip")
        .args(["-n", &ns.0, "link", "set", "lo", "up"])
        .status();
    assert!(up.is_ok_and(|s| s.success()));
    // Data datagrams only (the 4-byte stream hello is left alone): numgen 0, 10, 20, … dropped.
    let rules = format!(
        "table inet lrtr {{\n chain in {{\n  type filter hook input priority 0; policy accept;\n  \
         udp dport {port} udp length > 20 numgen inc mod 10 == 0 drop\n }}\n}}\n"
    );
    let mut nft = match Command::new("ip")
        .args(["netns", "exec", &ns.0, "nft", "-f", "-"])
        .stdin(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("SKIP: nft is not available: {e}");
            return None;
        }
    };
    if let Some(stdin) = nft.stdin.as_mut() {
        stdin.write_all(rules.as_bytes()).expect("rules");
    }
    drop(nft.stdin.take());
    assert!(
        nft.wait().is_ok_and(|s| s.success()),
        "nft could not load {rules}"
    );
    Some(ns)
}

#[test]
fn exactly_the_dropped_datagrams_are_lost() {
    let port = free_port();
    let Some(ns) = netns_with_drops(port) else {
        return;
    };
    let mut server = Command::new("ip")
        .args([
            "netns",
            "exec",
            &ns.0,
            linerate_bin(),
            "server",
            "-p",
            &port.to_string(),
        ])
        .stderr(Stdio::null())
        .spawn()
        .expect("server");
    std::thread::sleep(Duration::from_millis(500));
    for len in ["18", "1000"] {
        let out = run_bounded(
            Command::new("ip")
                .args([
                    "netns",
                    "exec",
                    &ns.0,
                    linerate_bin(),
                    "client",
                    "127.0.0.1",
                    "-p",
                ])
                .arg(port.to_string())
                .args(["-u", "-k", "10000", "-b", "20M", "-l", len, "--json"]),
            Duration::from_secs(30),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let udp = &v["end"]["streams"][0]["udp"];
        assert_eq!(
            v["linerate"]["streams"][0]["sent_packets"], 10_000,
            "-l {len}: {v}"
        );
        assert_eq!(udp["packets"], 10_000, "-l {len}: {udp}");
        assert_eq!(udp["lost_packets"], 1_000, "-l {len}: {udp}");
        assert_eq!(v["linerate"]["streams"][0]["duplicates"], 0);
        assert!(
            (f64_at(&v, "end.sum.lost_percent") - 10.0).abs() < 1e-9,
            "{}",
            v["end"]["sum"]
        );
    }
    let _ = server.kill();
    let _ = server.wait();
}
