//! Loss accounting with known drops: inside a throw-away network namespace, nftables drops
//! exactly every tenth data datagram on its way into the server, and UDP tests (with small and
//! with larger datagrams) must count exactly those as lost.

#![forbid(unsafe_code)]

mod support;

use std::time::Duration;

use support::bin::run_bounded;
use support::netns::Netns;
use support::traffic::{f64_at, linerate_server_in};
use support::{namespaces, program, require};

/// Drops exactly every tenth data datagram to `port` on its way in.
fn drop_every_tenth(ns: &Netns, port: u16) {
    // Data datagrams only (the 4-byte stream hello is left alone): numgen 0, 10, 20, … dropped.
    ns.nft_load(&format!(
        "table inet lrtr {{\n chain in {{\n  type filter hook input priority 0; policy accept;\n  \
         udp dport {port} udp length > 20 numgen inc mod 10 == 0 drop\n }}\n}}\n"
    ));
}

#[test]
fn exactly_the_dropped_datagrams_are_lost() {
    require!(namespaces());
    require!(program("nft"));
    let ns = Netns::with_loopback("tr-l");
    let server = linerate_server_in(&ns, &[]);
    let port = server.port;
    drop_every_tenth(&ns, port);
    for len in ["18", "1000"] {
        let overflowed_before = ns.udp_rcvbuf_errors();
        let out = run_bounded(
            ns.linerate()
                .args(["client", "127.0.0.1", "-p"])
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
        // On a loaded machine the server may fall behind and the kernel drop datagrams at a
        // full receive buffer: those are real losses too, counted by the kernel, so the test
        // stays exact: nftables' 1000 plus the kernel's overflow count.
        let overflowed = ns.udp_rcvbuf_errors() - overflowed_before;
        let expected = 1_000 + overflowed;
        assert_eq!(
            udp["lost_packets"], expected,
            "-l {len} ({overflowed} dropped at a full receive buffer): {udp}"
        );
        assert_eq!(v["linerate"]["streams"][0]["duplicates"], 0);
        assert!(
            (f64_at(&v, "end.sum.lost_percent") - expected as f64 / 100.0).abs() < 1e-9,
            "{}",
            v["end"]["sum"]
        );
    }
}
