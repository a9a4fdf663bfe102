//! `linerate nic` on captured trees of real NIC families (tests/data/probe/, written by
//! make_fixtures.py from the kernel's documented sysfs/procfs formats): inventory, bus verdicts,
//! hardware findings, snapshot save/load, and bad input.

#![forbid(unsafe_code)]

mod support;

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

use support::bin::linerate;
use support::tempdir;

fn data() -> PathBuf {
    support::data("probe")
}

/// Runs `linerate nic` on a fixture from inside the data directory, so paths in reasons are
/// short and stable (`ixgbe/sys/...`).
fn nic(fixture: &str, extra: &[&str]) -> Output {
    let sys = format!("{fixture}/sys");
    let proc = format!("{fixture}/proc");
    let mut args = vec!["nic", "--sysfs-root", &sys, "--procfs-root", &proc];
    args.extend_from_slice(extra);
    linerate()
        .args(&args)
        .current_dir(data())
        .output()
        .expect("run linerate")
}

/// A writable copy of a fixture tree (kept while the returned directory lives), for tests
/// that change files under a running `linerate`.
fn copy_of(fixture: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempdir();
    let status = Command::new("cp")
        .arg("-a")
        .arg(fixture)
        .arg(dir.path())
        .current_dir(data())
        .status()
        .expect("run cp");
    assert!(status.success());
    let tree = dir.path().join(fixture);
    (dir, tree)
}

fn json(fixture: &str, extra: &[&str]) -> Value {
    let mut args = vec!["--json"];
    args.extend_from_slice(extra);
    let out = nic(fixture, &args);
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn iface<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["snapshot"]["interfaces"]["value"]
        .as_array()
        .expect("interfaces")
        .iter()
        .find(|i| i["name"] == name)
        .unwrap_or_else(|| panic!("no {name}"))
}

fn rules(doc: &Value) -> Vec<(String, String)> {
    doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap_or_default().to_owned(),
                f["key"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn has(rules: &[(String, String)], rule: &str, key: &str) -> bool {
    rules.iter().any(|(r, k)| r == rule && k == key)
}

#[test]
fn ixgbe_dual_port_in_an_x1_slot() {
    let doc = json("ixgbe", &["--findings", "--role", "router"]);
    assert_eq!(doc["schema"], "linerate.nic/1");
    assert_eq!(doc["snapshot"]["schema"], "linerate.host-snapshot/1");
    let eth2 = iface(&doc, "eth2");
    assert_eq!(eth2["kind"], "pci");
    assert_eq!(eth2["driver"]["value"], "ixgbe");
    assert_eq!(eth2["speed"]["value"], 10_000_000_000u64);
    assert_eq!(eth2["pci"]["value"]["id"]["value"], "8086:10fb");
    assert_eq!(
        eth2["pci"]["value"]["current"]["value"],
        serde_json::json!({"generation": "Gen2", "lanes": 1})
    );
    assert_eq!(eth2["ethtool"]["channels"]["value"]["combined"], 2);
    let irqs = eth2["irqs"]["value"].as_array().expect("irqs");
    assert_eq!(irqs.len(), 3, "2 queue vectors + the link vector");
    assert_eq!(irqs.iter().filter(|i| i["queue"] == true).count(), 2);
    let bus = &doc["bus"][0];
    assert_eq!(bus["slot"], "0000:03:00");
    assert_eq!(bus["verdict"]["enough"], false);
    assert_eq!(
        bus["summary"],
        "PCIe gen2 x1 = 4 Gbit/s usable per direction < 2 × 10 Gbit/s line rate"
    );
    let r = rules(&doc);
    for (rule, key) in [
        ("bus-too-slow", "eth2,eth3"),
        ("pcie-link-degraded", "eth2,eth3"),
        ("smt-on-router", "cpu.smt"),
        ("lro-on-forwarding", "eth2.rx-lro"),
        ("tso-on-forwarding", "eth3.tx-tcp-segmentation"),
        ("gro-on-forwarding", "eth2.rx-gro"),
        ("queues-fewer-than-cores", "eth2.queues"),
        ("queue-irqs-not-spread", "eth3.irqs"),
        ("irqs-on-one-cpu", "irqs"),
        ("rings-below-max", "eth2.rings"),
        ("powersave-governor", "cpu.governor"),
        ("softnet-drops", "softnet.dropped"),
        ("softnet-squeeze", "softnet.time_squeeze"),
        ("mtu-mismatch", "eth3.mtu"),
    ] {
        assert!(has(&r, rule, key), "missing {rule} {key} in {r:?}");
    }
    let fixes: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["fix"]["value"].as_str())
        .collect();
    for fix in [
        "ethtool -K eth2 lro off",
        "ethtool -L eth2 combined 4",
        "ethtool -G eth3 rx 4096 tx 4096",
        "sysctl -w net.core.netdev_max_backlog=2000",
        "ip link set dev eth3 mtu 9000",
        "a slot giving at least PCIe gen2 x8 (20 Gbit/s per direction)",
    ] {
        assert!(fixes.contains(&fix), "missing fix {fix} in {fixes:?}");
    }
}

#[test]
fn ixgbe_inventory_reads_well() {
    let out = nic("ixgbe", &["--findings", "--role", "router"]);
    assert!(out.status.success(), "{out:?}");
    insta::assert_snapshot!(String::from_utf8(out.stdout).expect("utf-8"));
}

#[test]
fn host_role_is_not_told_about_smt() {
    let doc = json("ixgbe", &["--findings", "--role", "host"]);
    let r = rules(&doc);
    assert!(!r.iter().any(|(rule, _)| rule == "smt-on-router"), "{r:?}");
    // ip_forward is on in the tree, so forwarding findings still apply.
    assert!(has(&r, "lro-on-forwarding", "eth2.rx-lro"), "{r:?}");
}

#[test]
fn i40e_well_tuned_has_only_information() {
    let doc = json("i40e", &["--findings", "--role", "router"]);
    let port = iface(&doc, "ens1f0");
    assert_eq!(port["driver"]["value"], "i40e");
    assert_eq!(
        port["ethtool"]["rss_indirection"]["value"]
            .as_array()
            .unwrap()
            .len(),
        512
    );
    let irqs = port["irqs"]["value"].as_array().unwrap();
    assert_eq!(irqs.iter().filter(|i| i["queue"] == true).count(), 8);
    assert_eq!(doc["bus"][0]["verdict"]["enough"], true);
    let severities: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["severity"].as_str().unwrap())
        .collect();
    assert!(severities.iter().all(|s| *s == "info"), "{severities:?}");
    let limits = doc["limits"]["ens1f0"].as_array().unwrap();
    assert!(limits.iter().any(|l| {
        l["detail"]
            .as_str()
            .unwrap()
            .contains("40 Gbit/s = 59.52 Mpps of 64-byte frames")
    }));
}

#[test]
fn igb_quad_port_with_links_down() {
    let doc = json("igb", &["--findings", "--role", "router"]);
    let eth2 = iface(&doc, "eth2");
    assert!(
        eth2["speed"]["unknown"]
            .as_str()
            .unwrap()
            .contains("reports no speed (-1)")
    );
    assert_eq!(
        doc["snapshot"]["softnet"]["value"][3]["cpu"], 3,
        "old layout"
    );
    let bus = &doc["bus"][0];
    assert_eq!(bus["interfaces"], serde_json::json!(["eth0", "eth1"]));
    assert_eq!(bus["unknown_rate"], serde_json::json!(["eth2", "eth3"]));
    assert_eq!(bus["verdict"]["enough"], true);
    assert_eq!(iface(&doc, "eth0")["driver_version"]["value"], "5.6.0-k");
    let r = rules(&doc);
    assert!(has(&r, "rings-below-max", "eth0.rings"), "{r:?}");
    assert!(
        !r.iter().any(|(_, k)| k.starts_with("eth2")),
        "down ports are not judged: {r:?}"
    );
}

#[test]
fn mlx5_dual_100g_outruns_gen3_x16() {
    let doc = json("mlx5", &["--findings", "--role", "firewall"]);
    let port = iface(&doc, "enp94s0f1np1");
    assert_eq!(port["driver"]["value"], "mlx5_core");
    assert_eq!(port["pci"]["value"]["numa_node"]["value"], 1);
    assert_eq!(doc["snapshot"]["cpu"]["numa_nodes"]["value"], 2);
    assert_eq!(
        doc["bus"][0]["summary"],
        "PCIe gen3 x16 = 126.03 Gbit/s usable per direction < 2 × 100 Gbit/s line rate"
    );
    let r = rules(&doc);
    assert!(
        has(&r, "bus-too-slow", "enp94s0f0np0,enp94s0f1np1"),
        "{r:?}"
    );
    assert!(!r.iter().any(|(rule, _)| rule == "pcie-link-degraded"));
}

#[test]
fn virtio_has_no_pcie_link_and_says_why() {
    let doc = json("virtio", &[]);
    let eth0 = iface(&doc, "eth0");
    assert_eq!(eth0["kind"], "virtio");
    assert_eq!(eth0["driver"]["value"], "virtio_net");
    assert_eq!(eth0["pci"]["value"]["address"], "0000:00:03.0");
    assert!(
        eth0["pci"]["value"]["current"]["unknown"]
            .as_str()
            .unwrap()
            .contains("not a PCI Express device")
    );
    let irqs: Vec<&str> = eth0["irqs"]["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        irqs,
        ["virtio2-config", "virtio2-input.0", "virtio2-output.0"]
    );
    assert!(doc["bus"].as_array().unwrap().is_empty());
    assert!(
        doc["snapshot"]["cpu"]["governors"]["unknown"]
            .as_str()
            .unwrap()
            .contains("no cpufreq policies")
    );
    assert!(doc.get("findings").is_none(), "only with --findings");
}

#[test]
fn veth_is_virtual_without_rings() {
    let doc = json("veth", &["--findings"]);
    let v = iface(&doc, "veth1");
    assert_eq!(v["kind"], "veth");
    assert_eq!(v["pci"]["unknown"], "virtual interface: no bus");
    assert!(
        v["ethtool"]["rings"]["unknown"]
            .as_str()
            .unwrap()
            .contains("EOPNOTSUPP")
    );
    let r = rules(&doc);
    assert!(has(&r, "mtu-mismatch", "veth1.mtu"), "{r:?}");
    assert!(!r.iter().any(|(rule, _)| rule == "rings-below-max"));
}

#[test]
fn one_interface_and_unknown_names() {
    let doc = json("mlx5", &["enp94s0f0np0"]);
    let names: Vec<&str> = doc["snapshot"]["interfaces"]["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["enp94s0f0np0"]);
    let out = nic("mlx5", &["eth9"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no interface 'eth9' (there are: enp94s0f0np0, enp94s0f1np1, lo)"));
}

#[test]
fn snapshots_save_and_load_for_offline_audits() {
    let dir = tempdir();
    let file = dir.path().join("ixgbe.json");
    let out = nic("ixgbe", &["--snapshot-out", file.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let live_text = String::from_utf8(out.stdout).unwrap();
    let loaded = linerate()
        .args(["nic", "--snapshot-in", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(loaded.status.success(), "{loaded:?}");
    assert_eq!(String::from_utf8(loaded.stdout).unwrap(), live_text);
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved["schema"], "linerate.host-snapshot/1");
    assert!(
        saved["source"]
            .as_str()
            .unwrap()
            .starts_with("sysfs ixgbe/sys")
    );
}

#[test]
fn bad_input_fails_with_the_name_of_what_was_wrong() {
    let linerate = |args: &[&str]| linerate().args(args).output().unwrap();
    let out = linerate(&["nic", "--sysfs-root", "/nonexistent/lr"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--sysfs-root /nonexistent/lr"));

    let dir = tempdir();
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        "{\"schema\": \"linerate.host-snapshot/1\", \"cpu\": 3}",
    )
    .unwrap();
    let out = linerate(&["nic", "--snapshot-in", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.json: not a linerate host snapshot"),
        "{err}"
    );

    std::fs::write(&bad, "{\"schema\": \"linerate.host-snapshot/7\"}").unwrap();
    let out = linerate(&["nic", "--snapshot-in", bad.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("schema 'linerate.host-snapshot/7'"));

    let out = linerate(&["nic", "--watch", "-i", "0s", "--count", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--interval"));

    let out = linerate(&["nic", "--role", "switch", "--findings"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown role `switch`"));

    // Watch bounds that would watch nothing, or that mean nothing without --watch, are
    // refused instead of silently ignored.
    for (args, flag) in [
        (&["nic", "--watch", "--count", "0"][..], "--count"),
        (&["nic", "--watch", "--duration", "0s"], "--duration"),
        (&["nic", "--count", "3"], "--watch"),
        (&["nic", "--duration", "2s"], "--watch"),
    ] {
        let out = linerate(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}

#[test]
fn a_mangled_tree_gives_reasons_not_panics() {
    // Start from the ixgbe tree, then break it the ways real hosts do: garbage values, missing
    // files, an interface whose directory vanished, unreadable CPU topology.
    let dir = tempdir();
    let root = dir.path();
    let status = Command::new("cp")
        .args(["-a", "ixgbe", root.to_str().unwrap()])
        .current_dir(data())
        .status()
        .unwrap();
    assert!(status.success());
    let t = root.join("ixgbe");
    let dev = t.join("sys/devices/pci0000:00/0000:00:1c.0/0000:03:00.0");
    std::fs::write(dev.join("net/eth2/mtu"), "jumbo\n").unwrap();
    std::fs::write(dev.join("current_link_speed"), "Unknown\n").unwrap();
    std::fs::remove_file(dev.join("net/eth2/statistics/rx_packets")).unwrap();
    std::fs::remove_dir_all(dev.parent().unwrap().join("0000:03:00.1/net/eth3")).unwrap();
    std::fs::write(t.join("proc/net/softnet_stat"), "not hex at all\n").unwrap();
    std::fs::write(t.join("proc/interrupts"), "").unwrap();
    std::fs::write(t.join("ethtool/eth2.json"), "{ broken").unwrap();
    std::fs::remove_file(t.join("sys/devices/system/cpu/cpu3/topology/core_id")).unwrap();
    let out = linerate()
        .args(["nic", "--json", "--findings", "--role", "router"])
        .arg("--sysfs-root")
        .arg(t.join("sys"))
        .arg("--procfs-root")
        .arg(t.join("proc"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let eth2 = iface(&doc, "eth2");
    assert!(
        eth2["mtu"]["unknown"]
            .as_str()
            .unwrap()
            .contains("'jumbo' is not a number")
    );
    assert!(
        eth2["counters"]["unknown"]
            .as_str()
            .unwrap()
            .contains("rx_packets")
    );
    assert!(
        eth2["pci"]["value"]["current"]["unknown"]
            .as_str()
            .unwrap()
            .contains("'Unknown' is not a known PCIe rate")
    );
    assert!(
        eth2["ethtool"]["driver"]["unknown"]
            .as_str()
            .unwrap()
            .contains("eth2.json")
    );
    // The link stays in class/net but its target is gone: an interface with reasons.
    let eth3 = iface(&doc, "eth3");
    assert!(eth3["operstate"]["unknown"].is_string());
    assert!(
        doc["snapshot"]["softnet"]["unknown"]
            .as_str()
            .unwrap()
            .contains("line 1")
    );
    assert!(doc["snapshot"]["cpu"]["cores"]["unknown"].is_string());
    assert!(
        eth2["irqs"]["unknown"]
            .as_str()
            .unwrap()
            .contains("interrupts")
    );
}

#[test]
fn nic_help() {
    let out = linerate().args(["nic", "--help"]).output().unwrap();
    assert!(out.status.success());
    insta::assert_snapshot!(String::from_utf8(out.stdout).unwrap());
}

#[test]
fn watch_bridges_a_32_bit_wrap_and_reports_a_vanished_interface() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;

    let (_dir, t) = copy_of("ixgbe");
    let stats = t.join("sys/class/net/eth2/statistics");
    std::fs::write(stats.join("rx_packets"), "4294967000\n").unwrap();
    let ethtool_file = t.join("ethtool/eth2.json");
    let original = std::fs::read_to_string(&ethtool_file).unwrap();

    let mut child = linerate()
        .args([
            "nic",
            "--watch",
            "eth2",
            "-i",
            "300ms",
            "--count",
            "3",
            "--json-stream",
        ])
        .arg("--sysfs-root")
        .arg(t.join("sys"))
        .arg("--procfs-root")
        .arg(t.join("proc"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = || -> Value { serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap() };
    let first = next();
    assert_eq!(first["interfaces"][0]["rx_packets"], 0);
    // Between samples: the 32-bit counter wraps (296 to the top, then 200) and queue 1 of
    // the driver statistics moves by 300.
    std::fs::write(stats.join("rx_packets"), "200\n").unwrap();
    let bumped = original.replace(
        "\"rx_queue_1_packets\": 2000",
        "\"rx_queue_1_packets\": 2300",
    );
    assert_ne!(bumped, original, "fixture layout changed");
    std::fs::write(&ethtool_file, bumped).unwrap();
    let second = next();
    let eth2 = &second["interfaces"][0];
    assert_eq!(eth2["status"], "ok");
    assert_eq!(eth2["rx_packets"], 496, "{eth2}");
    assert_eq!(eth2["wrapped"], serde_json::json!(["rx_packets"]));
    let q1 = eth2["queues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["direction"] == "rx" && q["queue"] == 1)
        .expect("rx queue 1");
    assert_eq!(q1["packets"], 300);
    let pps = q1["pps"].as_f64().unwrap();
    let secs = eth2["elapsed_seconds"].as_f64().unwrap();
    assert!((pps * secs - 300.0).abs() < 1e-6, "{pps} × {secs}");
    // Then the interface disappears.
    std::fs::remove_file(t.join("sys/class/net/eth2")).unwrap();
    let third = next();
    assert_eq!(third["interfaces"][0]["status"], "gone");
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_narrow_bridge_above_the_card_is_the_ceiling() {
    let (_dir, t) = copy_of("i40e");
    let bridge = t.join("sys/devices/pci0000:3a/0000:3a:00.0");
    std::fs::write(bridge.join("current_link_speed"), "2.5 GT/s PCIe\n").unwrap();
    std::fs::write(bridge.join("current_link_width"), "1\n").unwrap();
    let out = linerate()
        .args(["nic", "--json", "--findings"])
        .arg("--sysfs-root")
        .arg(t.join("sys"))
        .arg("--procfs-root")
        .arg(t.join("proc"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let bus = &doc["bus"][0];
    assert_eq!(bus["slot"], "0000:3a:00.0");
    assert_eq!(bus["narrowest_at"], "0000:3a:00.0");
    assert_eq!(
        bus["summary"],
        "PCIe gen1 x1 = 2 Gbit/s usable per direction < 40 Gbit/s line rate"
    );
    let r = rules(&doc);
    assert!(has(&r, "bus-too-slow", "ens1f0"), "{r:?}");
    // The card itself trained at its maximum: the slot is not the problem, the bridge is.
    assert!(
        !r.iter().any(|(rule, _)| rule == "pcie-link-degraded"),
        "{r:?}"
    );
}
