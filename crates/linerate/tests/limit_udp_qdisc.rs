//! Issue 30, item 4: UDP lost at the sender's qdisc. A token bucket (`tbf`, 10 Mbit/s, a
//! 30 kB queue) on the sender's veth in its own namespace, offered 100 Mbit/s for a second:
//! the verdict names the sender's qdisc with a drop count equal to what `tc -s qdisc`
//! counted over the test (these drops are not counted twice as socket-buffer errors).

#![forbid(unsafe_code)]

mod support;

use std::time::Duration;

use support::bin::run_bounded;
use support::netns::Netns;
use support::traffic::linerate_server_in;
use support::{namespaces, program, require};

/// The root qdisc's drop count on `dev` (`tc -s qdisc show`: "dropped N").
fn tc_dropped(ns: &Netns, dev: &str) -> u64 {
    let out = ns
        .exec("tc")
        .args(["-s", "qdisc", "show", "dev", dev])
        .output()
        .expect("run tc");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    text.split("dropped ")
        .nth(1)
        .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no drop count in {text}"))
}

#[test]
fn udp_above_a_small_tbf_is_the_sender_qdisc_with_its_drop_count() {
    require!(namespaces(), program("tc"));
    let (client, server_ns) = Netns::veth_pair("lq", "198.18.78");
    let add = client
        .exec("tc")
        .args(["qdisc", "add", "dev", "lq0", "root", "tbf"])
        .args(["rate", "10mbit", "burst", "10kb", "limit", "30kb"])
        .output()
        .expect("run tc");
    assert!(add.status.success(), "tc qdisc add tbf: {add:?}");
    let server = linerate_server_in(&server_ns, &[]);
    let before = tc_dropped(&client, "lq0");
    let out = run_bounded(
        client
            .linerate()
            .args(["client", "198.18.78.2", "-p", &server.port.to_string()])
            .args(["-u", "-l", "1200", "-b", "100M", "-t", "1"])
            .args(["--no-store", "--json"]),
        Duration::from_secs(30),
    );
    let dropped = tc_dropped(&client, "lq0") - before;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let l = &v["linerate"]["udp_limit"];
    eprintln!("tc dropped {dropped}; verdict {l}");
    assert!(dropped > 1000, "the tbf dropped only {dropped}: {l}");
    assert_eq!(l["place"], "sender_qdisc", "{l}");
    assert_eq!(l["losses"][0]["place"], "sender_qdisc", "{l}");
    let counted = l["losses"][0]["datagrams"].as_u64().expect("count");
    // Capped at what was lost (datagrams the sender never sent count as lost too).
    assert_eq!(
        counted,
        dropped.min(l["lost"].as_u64().expect("lost")),
        "{l}"
    );
    let qdisc = v["linerate"]["evidence"]["local"]["udp"]["interfaces"]
        .as_array()
        .and_then(|a| a.iter().find(|i| i["name"] == "lq0"))
        .map(|i| i["qdisc_dropped"].clone());
    assert_eq!(qdisc, Some(serde_json::json!(dropped)), "{v}");
    let advice = l["prescription"]["advice"].to_string();
    assert!(advice.contains("qdisc dropped"), "{advice}");
}
