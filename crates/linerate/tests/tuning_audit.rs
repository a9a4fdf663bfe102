//! `linerate audit` run as a binary: snapshots from Linux and FreeBSD, the live host, and the
//! live settings of a throw-away network namespace.

#![forbid(unsafe_code)]

mod support;

use std::process::Output;

use support::bin::run;
use support::netns::Netns;
use support::{namespaces, require, tempdir};

/// A fixture under `tests/data/tuning`, as an argument.
fn data(name: &str) -> String {
    support::data("tuning").join(name).display().to_string()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)))
}

fn rules(j: &serde_json::Value) -> Vec<(String, String)> {
    j["findings"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|f| {
                    (
                        f["rule"].as_str().unwrap_or_default().into(),
                        f["key"].as_str().unwrap_or_default().into(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_default_linux_snapshot_is_clean_until_a_path_is_stated() {
    let snap = data("linux-6.18-sysctl-host.txt");
    let out = run(&["audit", "--snapshot", &snap, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let j = json(&out);
    assert_eq!(j["schema"], "linerate.audit/1");
    assert!(rules(&j).is_empty(), "{:?}", rules(&j));

    let out = run(&[
        "audit",
        "--snapshot",
        &snap,
        "--rate",
        "10G",
        "--rtt",
        "80ms",
        "--json",
    ]);
    let r = rules(&json(&out));
    for want in [
        ("path-too-small", "net.ipv4.tcp_rmem"),
        ("path-too-small", "net.ipv4.tcp_wmem"),
        ("recommend", "net.ipv4.tcp_mtu_probing"),
        ("recommend", "net.core.default_qdisc"),
    ] {
        assert!(
            r.contains(&(want.0.into(), want.1.into())),
            "missing {want:?} in {r:?}"
        );
    }
    let router = [
        "audit",
        "--snapshot",
        &snap,
        "--rate",
        "10G",
        "--rtt",
        "1ms",
        "--role",
        "router",
    ];
    let out = run(&router);
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(t.contains("recommend] net.ipv4.ip_forward = 0"), "{t}");
    assert!(t.contains("fix: set 1"), "{t}");
    assert_eq!(
        out.status.code(),
        Some(0),
        "warnings do not fail by default"
    );
    let out = run(&[&router[..], &["--fail-on", "warning"]].concat());
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_freebsd_snapshot_is_judged_with_freebsd_rules() {
    let out = run(&[
        "audit",
        "--snapshot",
        &data("freebsd-14-sysctl-a.txt"),
        "--ram",
        "16GiB",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1), "syncookies=0 is an error");
    let j = json(&out);
    assert_eq!(j["context"]["os"], "freebsd");
    let r = rules(&j);
    assert!(
        r.contains(&("harmful".into(), "net.inet.tcp.syncookies".into())),
        "{r:?}"
    );
    assert!(
        r.contains(&("harmful".into(), "kern.random.harvest.mask".into())),
        "{r:?}"
    );
    assert!(
        !r.iter().any(|x| x.0 == "redundant" || x.0 == "unknown-key"),
        "{r:?}"
    );
}

#[test]
fn bad_snapshots_are_usage_errors() {
    let dir = tempdir();
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "hello\n").unwrap_or_else(|e| panic!("{e}"));
    let out = run(&["audit", "--snapshot", &empty.display().to_string()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("sysctl -a"));
    let out = run(&["audit", "--snapshot", "/nonexistent/snap.txt"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_live_host_is_read_through_proc_sys() {
    let out = run(&["audit", "--json", "--fail-on", "never"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = json(&out);
    assert_eq!(j["source"], "/proc/sys");
    assert_eq!(j["context"]["os"], "linux");
    assert!(
        j["context"]["ram"].as_u64().is_some_and(|r| r > 0),
        "RAM filled from /proc/meminfo"
    );
}

#[test]
fn the_live_settings_of_a_namespace_are_audited() {
    require!(namespaces());
    let ns = Netns::new("tu-audit");
    let name = ns.name().to_owned();
    let set = ns
        .exec("sysctl")
        .args(["-qw", "net.ipv4.tcp_timestamps=0", "net.ipv4.tcp_sack=0"])
        .status();
    assert!(set.is_ok_and(|s| s.success()));
    let out = run(&["audit", "--netns", &name, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let j = json(&out);
    assert_eq!(j["source"], format!("netns {name}:/proc/sys"));
    let f = j["findings"].as_array().cloned().unwrap_or_default();
    let ts = f
        .iter()
        .find(|x| x["key"] == "net.ipv4.tcp_timestamps")
        .cloned()
        .unwrap_or_default();
    assert_eq!(ts["rule"], "harmful");
    assert_eq!(
        ts["location"]["source"],
        format!("netns {name}:/proc/sys/net/ipv4/tcp_timestamps")
    );
    assert!(
        f.iter()
            .any(|x| x["key"] == "net.ipv4.tcp_sack" && x["rule"] == "harmful")
    );
    // The host's own values were not touched.
    assert_eq!(
        std::fs::read_to_string("/proc/sys/net/ipv4/tcp_sack")
            .unwrap_or_default()
            .trim(),
        "1"
    );
}
