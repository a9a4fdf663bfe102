//! `linerate tune --apply / --dry-run / --rollback / --persist / --netns` run as a binary, for
//! real, inside throw-away network namespaces (never on the host's own settings).

#![forbid(unsafe_code)]

mod support;

use std::collections::BTreeMap;

use support::bin::{run, text};
use support::netns::Netns;
use support::{namespaces, require, tempdir};

fn host(key: &str) -> String {
    std::fs::read_to_string(format!("/proc/sys/{}", key.replace('.', "/"))).unwrap_or_default()
}

/// Every net.* value in the namespace.
fn snapshot(ns: &Netns) -> BTreeMap<String, String> {
    let out = ns
        .exec("sysctl")
        .args(["-a", "--pattern", "^net\\."])
        .output()
        .expect("run sysctl -a in the namespace");
    let text = String::from_utf8_lossy(&out.stdout);
    let map: BTreeMap<String, String> = text
        .lines()
        .filter_map(|l| {
            l.split_once(" = ").map(|(k, v)| {
                (
                    k.to_string(),
                    v.split_whitespace().collect::<Vec<_>>().join(" "),
                )
            })
        })
        // Counters that move by themselves are not settings.
        .filter(|(k, _)| !k.contains("stable_secret") && !k.ends_with("nf_conntrack_count"))
        .collect();
    assert!(
        map.len() > 100,
        "namespace snapshot too small: {}",
        map.len()
    );
    map
}

#[test]
fn apply_a_profile_in_a_namespace_then_roll_it_back() {
    require!(namespaces());
    let ns = Netns::new("tu-prof");
    let journal = tempdir();
    let jdir = journal.path().display().to_string();
    let before = snapshot(&ns);
    let host_before = (
        host("net.ipv4.tcp_rmem"),
        host("net.core.netdev_max_backlog"),
    );

    let profile = [
        "tune",
        "--rate",
        "10G",
        "--rtt",
        "80ms",
        "--kernel",
        "6.18",
        "--netns",
        ns.name(),
        "--journal-dir",
        &jdir,
    ];
    let dry = run(&[&profile[..], &["--dry-run"]].concat());
    assert!(dry.status.success(), "{}", text(&dry));
    let t = text(&dry);
    assert!(t.contains("would change in network namespace"), "{t}");
    assert!(
        t.contains("net.ipv4.tcp_rmem: 4096 131072 33554432 → 4096 131072 268435456"),
        "{t}"
    );
    assert_eq!(snapshot(&ns), before, "a dry run changes nothing");
    assert_eq!(
        std::fs::read_dir(journal.path())
            .map(|d| d.count())
            .unwrap_or(0),
        0,
        "and writes no journal"
    );

    let out = run(&[&profile[..], &["--apply"]].concat());
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    for skipped in [
        "skipped net.core.rmem_max = 268435456: read-only inside a network namespace",
        "skipped net.core.default_qdisc = fq: host-only",
        "skipped net.core.netdev_max_backlog = 1024: host-only",
    ] {
        assert!(t.contains(skipped), "missing `{skipped}` in {t}");
    }
    let after = snapshot(&ns);
    assert_eq!(after["net.ipv4.tcp_rmem"], "4096 131072 268435456");
    assert_eq!(after["net.ipv4.tcp_wmem"], "4096 16384 268435456");
    assert_eq!(after["net.ipv4.tcp_mtu_probing"], "1");
    assert_eq!(after["net.ipv4.tcp_slow_start_after_idle"], "0");
    assert_eq!(
        (
            host("net.ipv4.tcp_rmem"),
            host("net.core.netdev_max_backlog")
        ),
        host_before,
        "the host is untouched"
    );

    // Rollback of the newest journal goes into the recorded namespace.
    let out = run(&["tune", "--rollback", "--journal-dir", &jdir, "--json"]);
    assert!(out.status.success(), "{}", text(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(json["schema"], "linerate.rollback/1");
    assert_eq!(json["rolled_back"]["netns"]["name"], ns.name());
    assert_eq!(snapshot(&ns), before, "rollback restores exactly");
    // Nothing left to roll back.
    let again = run(&["tune", "--rollback", "--journal-dir", &jdir]);
    assert_eq!(again.status.code(), Some(2), "{}", text(&again));
}

#[test]
fn a_failed_apply_leaves_the_namespace_exactly_as_before() {
    require!(namespaces());
    let ns = Netns::new("tu-fail");
    let journal = tempdir();
    let jdir = journal.path().display().to_string();
    let before = snapshot(&ns);
    let out = run(&[
        "tune",
        "--netns",
        ns.name(),
        "--apply",
        "--journal-dir",
        &jdir,
        "--set",
        "net.ipv4.tcp_mtu_probing=2",
        "--set",
        "net.ipv4.tcp_rmem=8192 262144 67108864",
        "--set",
        "net.ipv4.tcp_congestion_control=no-such-algorithm",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let t = text(&out);
    assert!(
        t.contains("restored the 3 setting(s) already changed"),
        "{t}"
    );
    assert_eq!(snapshot(&ns), before);
    // The journal was written first and records what happened.
    let entries: Vec<_> = std::fs::read_dir(journal.path())
        .unwrap_or_else(|e| panic!("{e}"))
        .flatten()
        .collect();
    assert_eq!(entries.len(), 1);
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(entries[0].path()).unwrap_or_default())
            .unwrap_or_default();
    assert_eq!(j["state"], "restored");
    assert_eq!(j["netns"]["name"], ns.name());
    assert_eq!(j["entries"][1]["old"], "4096 131072 33554432");
}

#[test]
fn explicit_host_only_keys_and_wrong_namespaces_are_errors() {
    require!(namespaces());
    let ns = Netns::new("tu-expl");
    let journal = tempdir();
    let jdir = journal.path().display().to_string();
    let out = run(&[
        "tune",
        "--netns",
        ns.name(),
        "--apply",
        "--journal-dir",
        &jdir,
        "--set",
        "net.core.netdev_max_backlog=2048",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("net.core.netdev_max_backlog: host-only"),
        "{}",
        text(&out)
    );
    let out = run(&[
        "tune",
        "--netns",
        ns.name(),
        "--apply",
        "--journal-dir",
        &jdir,
        "--set",
        "net.ipv4.tcp_mtu_probing=1",
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(json["schema"], "linerate.apply/1");
    let path = json["applied"]["journal"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(snapshot(&ns)["net.ipv4.tcp_mtu_probing"], "1");
    let wrong = run(&["tune", "--rollback", &path, "--netns", "lr-tu-not-this-one"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(
        text(&wrong).contains("not in namespace `lr-tu-not-this-one`"),
        "{}",
        text(&wrong)
    );
    let right = run(&["tune", "--rollback", &path, "--netns", ns.name()]);
    assert!(right.status.success(), "{}", text(&right));
    assert_eq!(snapshot(&ns)["net.ipv4.tcp_mtu_probing"], "0");
    let missing = run(&[
        "tune",
        "--netns",
        "lr-tu-no-such-ns",
        "--dry-run",
        "--set",
        "net.ipv4.tcp_mtu_probing=1",
    ]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        text(&missing).contains("lr-tu-no-such-ns"),
        "{}",
        text(&missing)
    );
    // The OS error is named once, not repeated by the error chain.
    let gone = run(&["tune", "--rollback", "/nonexistent/lr-tu-journal.json"]);
    assert_eq!(gone.status.code(), Some(2));
    for out in [&missing, &gone] {
        let t = text(out);
        assert_eq!(t.matches("No such file or directory").count(), 1, "{t}");
    }
}

#[test]
fn persist_writes_the_drop_in_atomically_into_the_given_directory() {
    let dir = tempdir();
    let d = dir.path().display().to_string();
    std::fs::write(
        dir.path().join("10-user.conf"),
        "net.core.somaxconn = 8192\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let out = run(&[
        "tune",
        "--rate",
        "10G",
        "--rtt",
        "80ms",
        "--kernel",
        "6.18",
        "--persist",
        "--sysctl-dir",
        &d,
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let content = std::fs::read_to_string(dir.path().join("90-linerate.conf")).unwrap_or_default();
    assert!(
        content.contains("net.ipv4.tcp_rmem = 4096 131072 268435456"),
        "{content}"
    );
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap_or_else(|e| panic!("{e}"))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["10-user.conf", "90-linerate.conf"],
        "no temp file left, user file untouched"
    );
    // The persisted file lints clean for the same inputs.
    let path = dir.path().join("90-linerate.conf").display().to_string();
    let lint = run(&[
        "lint",
        &path,
        "--rate",
        "10G",
        "--rtt",
        "80ms",
        "--kernel",
        "6.18",
        "--fail-on",
        "warning",
    ]);
    assert!(lint.status.success(), "{}", text(&lint));
    let out = run(&[
        "tune",
        "--persist",
        "--sysctl-dir",
        &d,
        "--set",
        "net.ipv4.tcp_mtu_probing=1",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let content = std::fs::read_to_string(dir.path().join("90-linerate.conf")).unwrap_or_default();
    assert!(
        content.ends_with("net.ipv4.tcp_mtu_probing = 1\n"),
        "{content}"
    );
    let out = run(&[
        "tune",
        "--persist",
        "--netns",
        "x",
        "--rate",
        "1G",
        "--rtt",
        "1ms",
    ]);
    assert_eq!(out.status.code(), Some(2));
}
