//! `linerate nic` and `--watch` on this machine: `lo`, `eth0` (virtio here) and a veth pair
//! between two network namespaces this test creates (`lr-pr-<pid>-…`, removed by a guard even
//! when a test fails). `--watch` must count the datagrams sent through the pair within 1 %.
//! Linux's sysfs and namespaces: on other systems this file is empty.

#![cfg(target_os = "linux")]
#![forbid(unsafe_code)]

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::os::fd::AsFd;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod support;

use support::bin::{BIN, isolate, linerate};
use support::netns::{Netns, linerate_in};
use support::{namespaces, program, require, skip, skipping};

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("spawn");
    assert!(out.status.success(), "{cmd:?} failed: {out:?}");
    out
}

/// Two namespaces joined by a veth pair, 198.18.0.1 (side a) ↔ 198.18.0.2 (side b), IPv6
/// off and static neighbours so that only the test's own packets cross. Dropped = deleted.
struct VethPair {
    ns_a: String,
    ns_b: String,
    if_a: String,
    if_b: String,
    /// The namespaces themselves (named `ns_a` and `ns_b`), deleted on drop.
    _namespaces: [Netns; 2],
}

impl VethPair {
    fn new(tag: char) -> VethPair {
        let pid = std::process::id();
        let namespaces = [
            Netns::new(&format!("pr-{tag}a")),
            Netns::new(&format!("pr-{tag}b")),
        ];
        let pair = VethPair {
            ns_a: namespaces[0].name().to_owned(),
            ns_b: namespaces[1].name().to_owned(),
            if_a: format!("lp{}{tag}a", pid % 10_000_000),
            if_b: format!("lp{}{tag}b", pid % 10_000_000),
            _namespaces: namespaces,
        };
        let ip = |args: &[&str]| run(Command::new("ip").args(args));
        ip(&[
            "link",
            "add",
            &pair.if_a,
            "address",
            "02:00:c6:12:00:01",
            "netns",
            &pair.ns_a,
            "type",
            "veth",
            "peer",
            "name",
            &pair.if_b,
            "address",
            "02:00:c6:12:00:02",
            "netns",
            &pair.ns_b,
        ]);
        for (ns, dev, addr, peer, peer_mac) in [
            (
                &pair.ns_a,
                &pair.if_a,
                "198.18.0.1/24",
                "198.18.0.2",
                "02:00:c6:12:00:02",
            ),
            (
                &pair.ns_b,
                &pair.if_b,
                "198.18.0.2/24",
                "198.18.0.1",
                "02:00:c6:12:00:01",
            ),
        ] {
            for key in ["all", "default"] {
                run(Command::new("ip").args([
                    "netns",
                    "exec",
                    ns,
                    "sh",
                    "-c",
                    &format!("echo 1 > /proc/sys/net/ipv6/conf/{key}/disable_ipv6"),
                ]));
            }
            ip(&["-n", ns, "addr", "add", addr, "dev", dev]);
            ip(&["-n", ns, "link", "set", dev, "up"]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
            ip(&[
                "-n",
                ns,
                "neigh",
                "replace",
                peer,
                "lladdr",
                peer_mac,
                "dev",
                dev,
                "nud",
                "permanent",
            ]);
        }
        pair
    }

    /// Sends `count` UDP datagrams from inside namespace a to 198.18.0.2, paced so no
    /// backlog overflows, from a thread that joins the namespace.
    fn send_from_a(&self, count: usize) -> std::thread::JoinHandle<(usize, Instant)> {
        let path = format!("/run/netns/{}", self.ns_a);
        std::thread::spawn(move || {
            let ns = File::open(&path).expect("open netns");
            // This thread only: it ends after sending.
            linerate_sys::netns::enter(ns.as_fd()).expect("setns");
            let sock = UdpSocket::bind("198.18.0.1:0").expect("bind in namespace");
            let payload = [0x5au8; 64];
            let mut sent = 0;
            for i in 0..count {
                sock.send_to(&payload, "198.18.0.2:9").expect("send");
                sent += 1;
                if i % 50 == 49 {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            (sent, Instant::now())
        })
    }
}

/// Starts `linerate nic --watch … --json-stream` in a namespace and returns the child and a
/// line reader.
fn watch_in(
    ns: &str,
    args: &[&str],
) -> (
    std::process::Child,
    std::io::Lines<BufReader<std::process::ChildStdout>>,
) {
    let mut child = linerate_in(ns)
        .args(["nic", "--watch"])
        .args(args)
        .arg("--json-stream")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn watch");
    let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    (child, lines)
}

fn iface_in<'a>(line: &'a Value, name: &str) -> &'a Value {
    line["interfaces"]
        .as_array()
        .expect("interfaces")
        .iter()
        .find(|i| i["name"] == name)
        .unwrap_or_else(|| panic!("{name} missing from {line}"))
}

#[test]
fn watch_counts_veth_datagrams_within_one_percent() {
    require!(namespaces());
    let pair = VethPair::new('w');
    const SENT: usize = 5_000;
    // The watch outlasts the paced sending (~0.5 s unloaded) by seconds, so that even a busy
    // CI machine sends everything before the last sample.
    let (mut child, mut lines) =
        watch_in(&pair.ns_b, &[&pair.if_b, "-i", "200ms", "--duration", "5s"]);
    // Send only once the watch has its baseline (its first interval line is out).
    let first: Value =
        serde_json::from_str(&lines.next().expect("a line").expect("read")).expect("JSON line");
    assert_eq!(first["schema"], "linerate.nic-watch/1");
    let sender = pair.send_from_a(SENT);
    let mut docs = vec![first];
    let mut last_line_at = Instant::now();
    for line in lines {
        docs.push(serde_json::from_str(&line.expect("read")).expect("JSON line"));
        last_line_at = Instant::now();
    }
    let (sent, sent_by) = sender.join().expect("sender");
    let status = child.wait().expect("wait");
    assert!(status.success(), "watch exited {status:?}");
    assert!(
        sent_by < last_line_at,
        "the sender was still sending when the watch ended: the machine is overloaded"
    );
    let mut packets = 0u64;
    let mut from_rates = 0.0;
    for d in &docs {
        let i = iface_in(d, &pair.if_b);
        assert_eq!(i["status"], "ok", "{i}");
        packets += i["rx_packets"].as_u64().expect("rx_packets");
        from_rates +=
            i["rx_pps"].as_f64().expect("rx_pps") * i["elapsed_seconds"].as_f64().unwrap();
    }
    let error = (packets as f64 - sent as f64).abs() / sent as f64;
    eprintln!(
        "sent {sent} datagrams; --watch counted {packets} ({:.3} % off), Σ rate×time = {from_rates:.1} over {} intervals",
        error * 100.0,
        docs.len()
    );
    assert!(error <= 0.01, "watch counted {packets} of {sent}");
    assert!(
        (from_rates - packets as f64).abs() <= packets as f64 * 0.01,
        "rates × measured time = {from_rates}, counts = {packets}"
    );
    assert!(
        docs.iter()
            .any(|d| iface_in(d, &pair.if_b)["rx_pps"].as_f64().unwrap() > 100.0),
        "some interval shows the burst as a rate"
    );
}

#[test]
fn watch_survives_an_interface_that_vanishes() {
    require!(namespaces());
    let pair = VethPair::new('v');
    let (mut child, mut lines) = watch_in(&pair.ns_b, &[&pair.if_b, "-i", "100ms", "--count", "8"]);
    let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(iface_in(&first, &pair.if_b)["status"], "ok");
    run(Command::new("ip").args(["-n", &pair.ns_a, "link", "del", &pair.if_a]));
    let rest: Vec<Value> = lines
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert_eq!(rest.len(), 7, "the watch keeps its count");
    let last = iface_in(rest.last().unwrap(), &pair.if_b);
    assert_eq!(last["status"], "gone", "{last}");
    assert!(last["reason"].as_str().unwrap().contains(&pair.if_b));
}

#[test]
fn inventory_of_a_veth_in_a_namespace() {
    require!(namespaces());
    let pair = VethPair::new('i');
    let out = run(linerate_in(&pair.ns_a).args(["nic", "--json", &pair.if_a]));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let i = &doc["snapshot"]["interfaces"]["value"][0];
    assert_eq!(i["name"], pair.if_a.as_str());
    assert_eq!(i["kind"], "veth");
    assert_eq!(i["driver"]["value"], "veth");
    assert_eq!(i["address"]["value"], "02:00:c6:12:00:01");
    assert_eq!(i["operstate"]["value"], "up");
    assert_eq!(i["pci"]["unknown"], "virtual interface: no bus");
    assert!(
        i["ethtool"]["stats"]["value"]["peer_ifindex"]
            .as_u64()
            .is_some()
    );
    assert!(i["ethtool"]["features"]["value"]["rx-gro"].is_object());
}

#[test]
fn eth0_and_lo_match_the_kernel() {
    let out = run(linerate().args(["nic", "--json"]));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ifaces = doc["snapshot"]["interfaces"]["value"].as_array().unwrap();
    for i in ifaces {
        let name = i["name"].as_str().unwrap();
        let mtu: u64 = std::fs::read_to_string(format!("/sys/class/net/{name}/mtu"))
            .map(|s| s.trim().parse().unwrap())
            .unwrap_or(0);
        if mtu > 0 {
            assert_eq!(i["mtu"]["value"], mtu, "{name}");
        }
    }
    let lo = ifaces.iter().find(|i| i["name"] == "lo").expect("lo");
    assert_eq!(lo["kind"], "loopback");
    assert!(lo["ethtool"]["rings"]["unknown"].is_string());
    let Some(eth0) = ifaces.iter().find(|i| i["name"] == "eth0") else {
        skip!("the eth0 checks: this machine has no eth0");
    };
    let driver = std::fs::read_link("/sys/class/net/eth0/device/driver")
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    assert_eq!(eth0["driver"]["value"].as_str(), driver.as_deref());
    // Cross-check offloads against ethtool(8) when it is installed (an independent reader).
    if let Err(why) = program("ethtool") {
        skipping(format_args!("the ethtool cross-check: {why}"));
    } else {
        let k = Command::new("ethtool")
            .args(["-k", "eth0"])
            .output()
            .expect("run ethtool -k eth0");
        let text = String::from_utf8_lossy(&k.stdout);
        for (long, ours) in [
            ("generic-receive-offload", "rx-gro"),
            ("large-receive-offload", "rx-lro"),
            ("tx-tcp-segmentation", "tx-tcp-segmentation"),
        ] {
            let line = text
                .lines()
                .find(|l| l.trim().starts_with(&format!("{long}:")));
            if let Some(line) = line {
                let on = line.contains(": on");
                assert_eq!(
                    eth0["ethtool"]["features"]["value"][ours]["active"], on,
                    "{long}"
                );
            }
        }
    }
}

#[test]
fn watch_on_lo_shows_loopback_datagrams() {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let target = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = target.local_addr().unwrap();
    let mut child = linerate()
        .args([
            "nic",
            "--watch",
            "lo",
            "-i",
            "300ms",
            "--count",
            "5",
            "--json-stream",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    const SENT: u64 = 2_000;
    for i in 0..SENT {
        sock.send_to(b"linerate", to).unwrap();
        if i % 100 == 99 {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    let mut total = 0;
    for l in std::iter::once(first).chain(lines.map(|l| l.unwrap())) {
        let d: Value = serde_json::from_str(&l).unwrap();
        total += iface_in(&d, "lo")["rx_packets"].as_u64().unwrap();
    }
    assert!(child.wait().unwrap().success());
    // Others may use loopback at the same time: at least ours must be there.
    assert!(total >= SENT, "lo counted {total} < {SENT}");
}

#[test]
fn piped_watch_prints_one_line_per_interval() {
    let out = run(linerate().args(["nic", "--watch", "lo", "-i", "100ms", "--count", "3"]));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    for l in lines {
        assert!(l.starts_with('[') && l.contains(" lo: rx "), "{l}");
        assert!(l.contains("softnet drop"), "{l}");
    }
    // --duration bounds the watch in time: 250 ms of 100 ms intervals is two full intervals
    // and, unless a late wake-up on a loaded host pushes it past the end, a short third.
    let out = run(linerate().args(["nic", "--watch", "lo", "-i", "100ms", "--duration", "250ms"]));
    let n = String::from_utf8(out.stdout).unwrap().lines().count();
    assert!((2..=3).contains(&n), "{n} lines");
    let out = linerate()
        .args(["nic", "--watch", "lr-nope0", "--count", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no interface 'lr-nope0'"));
}

#[test]
fn terminal_watch_redraws_in_place() {
    // script(1) gives the watch a pseudo-terminal, as a person at a terminal would have.
    require!(program("script"));
    let cmd = format!("{BIN} nic --watch lo -i 100ms --count 2");
    let out = isolate(&mut Command::new("script"))
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .expect("run script");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("\x1b[H\x1b[2J").count(), 2, "{text}");
    assert!(text.contains("interval 2/2"), "{text}");
    assert!(text.contains("RX PKT/S"), "{text}");
    assert!(text.contains("SOFTNET"), "{text}");
}
