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
    pair_with_queues(1)
}

/// [`pair`] with `queues` transmit and receive queues on each side.
fn pair_with_queues(queues: u32) -> (Netns, Netns, String) {
    let a = Netns::with_loopback("gen");
    let b = Netns::with_loopback("gen");
    let q = queues.to_string();
    let out = std::process::Command::new("ip")
        .args(["link", "add", "lrgen-a", "netns", a.name()])
        .args(["numtxqueues", &q, "numrxqueues", &q, "type", "veth"])
        .args(["peer", "name", "lrgen-b", "netns", b.name()])
        .args(["numtxqueues", &q, "numrxqueues", &q])
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
fn frames_just_below_a_slot_size_fit_the_packet_ring() {
    require!(namespaces());
    let (a, b, mac) = pair();
    a.ip(&["link", "set", "lrgen-a", "mtu", "9000"]);
    b.ip(&["link", "set", "lrgen-b", "mtu", "9000"]);
    // 2016 bytes: with the slot's headers just over 2048; 4064 just over 4096.
    for size in ["2016", "4064"] {
        let (p0, _) = rx(&b);
        let doc = gen_json(
            &a,
            &mac,
            &["--engine", "packet", "--frame", size, "--count", "100"],
        );
        assert_eq!(doc["sent_frames"], 100, "{doc}");
        assert_eq!(doc["threads"][0]["wrong_format"], 0, "{doc}");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while rx(&b).0 - p0 < 100 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert!(
            rx(&b).0 - p0 >= 100,
            "frame {size}: {} arrived",
            rx(&b).0 - p0
        );
    }
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

/// Starts `linerate gen --receive` on `dev` in `ns` (ends by itself at --count or -t).
fn receiver(ns: &Netns, dev: &str, count: u64) -> std::process::Child {
    let child = ns
        .linerate()
        .args(["gen", "--receive", "--dev", dev, "--json", "-t", "30s"])
        .args(["--count", &count.to_string()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run linerate gen --receive");
    // Wait (bounded) until its packet socket is open in the namespace (listed in the
    // namespace's /proc/net/packet), so nothing is sent before it counts.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let out = ns
            .exec("cat")
            .arg("/proc/net/packet")
            .output()
            .expect("read /proc/net/packet");
        if String::from_utf8_lossy(&out.stdout).lines().count() > 1 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the receiver opened no packet socket in 20 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // The ring is set up and bound right after the socket is created.
    std::thread::sleep(std::time::Duration::from_millis(200));
    child
}

fn receiver_json(child: std::process::Child) -> Value {
    let out = child.wait_with_output().expect("wait for the receiver");
    assert!(out.status.success(), "linerate gen --receive: {out:?}");
    serde_json::from_slice(&out.stdout).expect("gen --receive --json prints JSON")
}

/// A UDP socket on 198.18.60.2:9 in `b`, counting datagrams that start with linerate's
/// signature until `want` (or 15 s): the receiving kernel hands it only datagrams whose IPv4
/// and UDP checksums are right. Returns once the socket is bound.
fn udp_counter(b: &Netns, want: u64) -> std::thread::JoinHandle<std::io::Result<u64>> {
    use std::os::fd::AsFd as _;
    let path = linerate_sys::netns::named_path(b.name());
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let udp = std::thread::spawn(move || {
        let ns = linerate_sys::netns::open_named(&path).expect("open namespace b");
        linerate_sys::netns::run_in(ns.as_fd(), || -> std::io::Result<u64> {
            let s = std::net::UdpSocket::bind("198.18.60.2:9")?;
            // Room for bursts while this thread waits for a CPU on a busy machine.
            nix::sys::socket::setsockopt(&s, nix::sys::socket::sockopt::RcvBufForce, &(8 << 20))
                .map_err(std::io::Error::from)?;
            s.set_read_timeout(Some(std::time::Duration::from_millis(200)))?;
            ready_tx.send(()).ok();
            let mut buf = [0u8; 2048];
            let mut n = 0;
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
            while n < want && std::time::Instant::now() < deadline {
                match s.recv(&mut buf) {
                    Ok(len) if len >= 4 && buf[..4] == *b"LRg1" => n += 1,
                    Ok(_) => {}
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                        ) => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(n)
        })
        .expect("enter namespace b")
    });
    ready_rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("UDP socket bound");
    udp
}

#[test]
fn the_receiver_counts_every_frame_and_a_udp_socket_gets_them() {
    require!(namespaces());
    let (a, b, mac) = pair();
    let udp = udp_counter(&b, 5000);
    let rx = receiver(&b, "lrgen-b", 5000);
    let sent = gen_json(
        &a,
        &mac,
        // The packet engine (auto picks AF_XDP here, which has its own test below); 5000
        // frames reuse slots of its 4096-slot ring, so restamped frames are checked too.
        &[
            "--engine", "packet", "--frame", "64,200", "--rate", "20kpps", "--count", "5000",
        ],
    );
    assert_eq!(sent["sent_frames"], 5000, "{sent}");
    assert_eq!(sent["engine"], "packet", "{sent}");
    let got = receiver_json(rx);
    assert_eq!(got["schema"], "linerate.gen-receive/1");
    assert_eq!(got["received_frames"], 5000, "{got}");
    assert_eq!(got["lost_frames"], 0, "{got}");
    assert_eq!(got["duplicate_frames"], 0, "{got}");
    assert_eq!(got["reordered_frames"], 0, "{got}");
    assert_eq!(got["streams"], 1, "{got}");
    // 2500 × 64 + 2500 × 200 bytes with FCS.
    assert_eq!(got["received_bytes"], 2500 * 64 + 2500 * 200, "{got}");
    let p50 = got["latency_us"]["p50"].as_f64().expect("latency p50");
    assert!(p50 > 0.0 && p50 < 1e6, "one-way p50 {p50} µs");
    let if_rx = got["interface"]["rx_packets"].as_u64().expect("rx_packets");
    assert!(if_rx >= 5000, "interface counted {if_rx}");
    let udp_got = udp.join().expect("UDP thread").expect("UDP receive");
    assert_eq!(udp_got, 5000, "the UDP socket got {udp_got} of 5000");
}

#[test]
fn loss_injected_by_nftables_is_measured_as_ten_percent() {
    require!(namespaces());
    // a (198.18.62.1) → r (forwards, drops every 10th) → b (198.18.63.2).
    let a = Netns::with_loopback("gen");
    let r = Netns::with_loopback("gen");
    let b = Netns::with_loopback("gen");
    for (x, y, xn, yn) in [(&a, &r, "lrgl-a", "lrgl-ra"), (&r, &b, "lrgl-rb", "lrgl-b")] {
        let out = std::process::Command::new("ip")
            .args(["link", "add", xn, "netns", x.name(), "type", "veth"])
            .args(["peer", "name", yn, "netns", y.name()])
            .output()
            .expect("run ip link add");
        assert!(out.status.success(), "ip link add: {out:?}");
    }
    a.ip(&["addr", "add", "198.18.62.1/24", "dev", "lrgl-a"]);
    r.ip(&["addr", "add", "198.18.62.2/24", "dev", "lrgl-ra"]);
    r.ip(&["addr", "add", "198.18.63.1/24", "dev", "lrgl-rb"]);
    b.ip(&["addr", "add", "198.18.63.2/24", "dev", "lrgl-b"]);
    for (ns, dev) in [
        (&a, "lrgl-a"),
        (&r, "lrgl-ra"),
        (&r, "lrgl-rb"),
        (&b, "lrgl-b"),
    ] {
        ns.ip(&["link", "set", dev, "up"]);
    }
    let out = r
        .exec("sysctl")
        .args(["-qw", "net.ipv4.ip_forward=1"])
        .output()
        .expect("run sysctl");
    assert!(out.status.success(), "sysctl: {out:?}");
    let b_mac = {
        let out = b
            .exec("ip")
            .args(["-j", "link", "show", "lrgl-b"])
            .output()
            .expect("ip link show");
        let v: Value = serde_json::from_slice(&out.stdout).expect("ip -j");
        v[0]["address"].as_str().expect("address").to_string()
    };
    let ra_mac = {
        let out = r
            .exec("ip")
            .args(["-j", "link", "show", "lrgl-ra"])
            .output()
            .expect("ip link show");
        let v: Value = serde_json::from_slice(&out.stdout).expect("ip -j");
        v[0]["address"].as_str().expect("address").to_string()
    };
    // A permanent neighbour, so no frame waits for ARP in r.
    r.ip(&[
        "neigh",
        "add",
        "198.18.63.2",
        "lladdr",
        &b_mac,
        "dev",
        "lrgl-rb",
        "nud",
        "permanent",
    ]);
    r.nft_load(
        "table ip lrgl {\n  chain lossy {\n    type filter hook forward priority 0;\n    \
         numgen inc mod 10 == 0 drop\n  }\n}\n",
    );
    let rx = receiver(&b, "lrgl-b", 9000);
    let out = a
        .linerate()
        .args(["gen", "--dev", "lrgl-a", "--src-ip", "198.18.62.1"])
        .args(["--dst-ip", "198.18.63.2", "--dst-mac", &ra_mac, "--json"])
        .args(["--rate", "20kpps", "--count", "10000"])
        .output()
        .expect("run linerate gen");
    assert!(out.status.success(), "linerate gen: {out:?}");
    let got = receiver_json(rx);
    // numgen drops sequence numbers 0, 10, …, 9990: the first is before the lowest number
    // seen, so 999 of the 9999 between the first and last arrival are missing.
    assert_eq!(got["received_frames"], 9000, "{got}");
    assert_eq!(got["lost_frames"], 999, "{got}");
    let ratio = got["loss_ratio"].as_f64().expect("loss_ratio");
    assert!((ratio - 0.1).abs() < 0.001, "loss {ratio}");
    assert_eq!(got["duplicate_frames"], 0, "{got}");
}

#[test]
fn imix_proportions_are_exact_and_the_rate_is_held_within_two_percent() {
    require!(namespaces());
    let (a, b, mac) = pair();
    // 1000 IMIX cycles of 12 frames: 7 × 64, 4 × 594 and 1 × 1518 bytes each.
    let rx = receiver(&b, "lrgen-b", 12_000);
    let sent = gen_json(
        &a,
        &mac,
        &["--frame", "imix", "--rate", "8kpps", "--count", "12000"],
    );
    let pps = sent["sent_pps"].as_f64().expect("sent_pps");
    assert!(
        (pps - 8000.0).abs() <= 8000.0 * 0.02,
        "sent {pps} frames/s, asked 8000"
    );
    let got = receiver_json(rx);
    assert_eq!(got["received_frames"], 12_000, "{got}");
    assert_eq!(
        got["received_bytes"],
        1000 * (7 * 64 + 4 * 594 + 1518),
        "{got}"
    );
    assert_eq!(got["lost_frames"], 0, "{got}");
    // Measured at the receiver, first to last arrival: the rate holds there too.
    let rx_pps = got["received_pps"].as_f64().expect("received_pps");
    assert!(
        (rx_pps - 8000.0).abs() <= 8000.0 * 0.02,
        "received {rx_pps} frames/s, sent at 8000"
    );
}

#[test]
fn the_xdp_engine_delivers_valid_frames() {
    require!(namespaces());
    let (a, b, mac) = pair();
    let udp = udp_counter(&b, 3000);
    let rx = receiver(&b, "lrgen-b", 3000);
    let sent = gen_json(
        &a,
        &mac,
        &[
            "--engine", "xdp", "--frame", "64,300", "--rate", "20kpps", "--count", "3000",
        ],
    );
    assert_eq!(sent["engine"], "xdp", "{sent}");
    assert!(
        sent["engine_detail"]
            .as_str()
            .is_some_and(|d| d.contains("AF_XDP")),
        "{sent}"
    );
    assert_eq!(sent["sent_frames"], 3000, "{sent}");
    assert_eq!(sent["threads"][0]["queue"], 0, "{sent}");
    let got = receiver_json(rx);
    assert_eq!(got["received_frames"], 3000, "{got}");
    assert_eq!(got["lost_frames"], 0, "{got}");
    assert_eq!(got["duplicate_frames"], 0, "{got}");
    assert_eq!(got["received_bytes"], 1500 * 64 + 1500 * 300, "{got}");
    let udp_got = udp.join().expect("UDP thread").expect("UDP receive");
    assert_eq!(udp_got, 3000, "the UDP socket got {udp_got} of 3000");
}

#[test]
fn xdp_needs_a_queue_per_thread_and_auto_says_why_it_fell_back() {
    require!(namespaces());
    let (a, _b, mac) = pair();
    let out = a
        .linerate()
        .args(["gen", "--dev", "lrgen-a", "--src-ip", "198.18.60.1"])
        .args([
            "--dst-ip",
            "198.18.60.2",
            "--dst-mac",
            &mac,
            "--count",
            "10",
        ])
        .args(["--engine", "xdp", "--threads", "2"])
        .output()
        .expect("run linerate gen");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs 2 queues on lrgen-a"), "{err}");
    let doc = gen_json(&a, &mac, &["--threads", "2", "--count", "1000"]);
    assert_eq!(doc["engine"], "packet", "{doc}");
    assert!(
        doc["engine_fallback"]
            .as_str()
            .is_some_and(|w| w.contains("queues")),
        "{doc}"
    );
    assert_eq!(doc["sent_frames"], 1000, "{doc}");
}

#[test]
fn each_thread_is_pinned_to_its_cpu_and_says_so() {
    require!(namespaces());
    let (a, _b, mac) = pair_with_queues(2);
    let allowed = linerate_sys::affinity::allowed_cpus();
    let (first, last) = (allowed[0], allowed[allowed.len() - 1]);
    let list = format!("{last},{first}");
    for engine in ["packet", "xdp"] {
        let doc = gen_json(
            &a,
            &mac,
            &[
                "--engine",
                engine,
                "--threads",
                "2",
                "--cpu",
                &list,
                "--count",
                "2000",
            ],
        );
        assert_eq!(doc["engine"], engine, "{doc}");
        let t = doc["threads"].as_array().expect("threads");
        assert_eq!(t.len(), 2, "{doc}");
        assert_eq!(t[0]["pinned"], true, "{doc}");
        assert_eq!(t[0]["cpu"], last, "{doc}");
        assert_eq!(t[1]["pinned"], true, "{doc}");
        assert_eq!(t[1]["cpu"], first, "{doc}");
        assert_eq!(doc["sent_frames"], 2000, "{doc}");
    }
    // Automatic placement: the allowed CPUs in order.
    let doc = gen_json(&a, &mac, &["--threads", "2", "--count", "2000"]);
    let t = doc["threads"].as_array().expect("threads");
    assert_eq!(t[0]["cpu"], first, "{doc}");
    assert_eq!(t[1]["cpu"], allowed[1 % allowed.len()], "{doc}");
    let doc = gen_json(&a, &mac, &["--threads", "2", "--no-pin", "--count", "2000"]);
    let t = doc["threads"].as_array().expect("threads");
    assert_eq!(t[0]["pinned"], false, "{doc}");
    assert_eq!(t[1]["pinned"], false, "{doc}");
    // A CPU this process may not use is refused by name.
    let out = a
        .linerate()
        .args(["gen", "--dev", "lrgen-a", "--src-ip", "198.18.60.1"])
        .args([
            "--dst-ip",
            "198.18.60.2",
            "--dst-mac",
            &mac,
            "--count",
            "10",
        ])
        .args(["--cpu", "4000"])
        .output()
        .expect("run linerate gen");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("CPU 4000"), "{err}");
}
