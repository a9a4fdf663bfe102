//! `linerate lint` calls a setting wrong only with evidence: what a key that linerate does not
//! know gets, loader.conf by name and content, sysctl.d's own syntax (globs, paths, `-key`),
//! duplicates, and the lint details of issue 23 (invalid values, the nearest valid name, the
//! stated rate in messages).

mod support;

use std::path::Path;

use support::bin::run as linerate;

/// One finding: (line, severity, rule, key, why, fix).
type Row = (u64, String, String, String, String, String);

fn lint(args: &[&str]) -> (i32, Vec<Row>, serde_json::Value) {
    let mut all = vec!["lint", "--json", "--fail-on", "never"];
    all.extend_from_slice(args);
    let out = linerate(&all);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    let rows = json["findings"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|f| {
                    let s = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
                    (
                        f["location"]["line"].as_u64().unwrap_or(0),
                        s(&f["severity"]),
                        s(&f["rule"]),
                        s(&f["key"]),
                        s(&f["why"]),
                        format!("{} {}", s(&f["fix"]["kind"]), s(&f["fix"]["value"])),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    (out.status.code().unwrap_or(-1), rows, json)
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
    }
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
    path.display().to_string()
}

fn on(rows: &[Row], line: u64) -> Vec<&Row> {
    rows.iter().filter(|r| r.0 == line).collect()
}

fn worst(rows: &[Row], line: u64) -> Option<String> {
    let rank = |s: &str| match s {
        "error" => 2,
        "warning" => 1,
        _ => 0,
    };
    on(rows, line)
        .into_iter()
        .max_by_key(|r| rank(&r.1))
        .map(|r| format!("{}[{}]", r.1, r.2))
}

#[test]
fn a_key_linerate_does_not_know_is_info_and_unknown_needs_evidence() {
    let dir = support::tempdir();
    let p = write(
        dir.path(),
        "99-mix.conf",
        "net.ipv4.conf.eth1.rp_filter = 1\n\
         net.ipv6.conf.wlan0.accept_ra = 2\n\
         net.core.bpf_jit_harden = 2\n\
         net.ipv4.icmp_ratemask = 6168\n\
         kernel.some_vendor_knob = 1\n\
         net.ipv4.tcp_fin_timout = 30\n\
         net.ipv4.tcp_nosuch_knob = 1\n\
         kernel.sched_migration_cost_ns = 5000000\n\
         net.inet.ip.forwarding = 1\n\
         net.ipv4.tcp_available_congestion_control = bbr\n\
         net.netfilter.nf_conntrack_max = 262144\n",
    );
    let (code, rows, _) = lint(&[&p]);
    assert_eq!(code, 0);
    // Per-interface keys of any interface name are the catalogue's own patterns.
    for line in 1..=2 {
        assert_eq!(worst(&rows, line), None, "{rows:#?}");
    }
    // Real keys outside the catalogue: info, never an error.
    for line in 3..=4 {
        assert_eq!(
            worst(&rows, line).as_deref(),
            Some("info[unchecked]"),
            "{rows:#?}"
        );
    }
    // Nothing is known of it either way: info.
    assert_eq!(worst(&rows, 5).as_deref(), Some("info[unchecked]"));
    // A near miss of a real key, absent itself.
    assert!(on(&rows, 6).iter().any(|r| r.2 == "unknown-key"
        && r.1 == "error"
        && r.4.contains("did you mean net.ipv4.tcp_fin_timeout")));
    // Absent from net.ipv4, which the 6.18 inventory lists completely...
    assert_eq!(worst(&rows, 7).as_deref(), Some("error[unknown-key]"));
    // ...but on 5.15 linerate cannot tell.
    let (_, old, _) = lint(&[&p, "--kernel", "5.15"]);
    assert_eq!(
        worst(&old, 7).as_deref(),
        Some("info[unchecked]"),
        "{old:#?}"
    );
    // Removed in a stated version.
    assert!(
        on(&rows, 8)
            .iter()
            .any(|r| r.2 == "removed-key" && r.4.contains("5.13"))
    );
    // Another OS's tree.
    assert!(
        on(&rows, 9)
            .iter()
            .any(|r| r.2 == "unknown-key" && r.4.contains("freebsd"))
    );
    // A fact, not a setting.
    assert_eq!(worst(&rows, 10).as_deref(), Some("error[read-only]"));
    // A module's key says so.
    assert!(
        on(&rows, 11)
            .iter()
            .any(|r| r.2 == "needs-module" && r.1 == "info" && r.4.contains("nf_conntrack"))
    );
}

#[test]
fn loader_conf_is_recognised_by_name_and_content_and_its_quotes_are_not_values() {
    let dir = support::tempdir();
    let body =
        "hw.em.rx_process_limit=\"-1\"\nnet.link.ifqmaxlen=\"512\"\nkern.ipc.nmbclusters=\"0\"\n";
    for name in [
        "loader.conf",
        "loader.conf.local",
        "boot/loader.conf.d/10-nic.conf",
        "tunables.txt",
    ] {
        let body = if name == "tunables.txt" {
            format!("if_em_load=\"YES\"\n{body}")
        } else {
            body.to_string()
        };
        let p = write(dir.path(), name, &body);
        let (_, rows, json) = lint(&[&p]);
        assert_eq!(json["files"][0]["format"], "loader", "{name}");
        assert_eq!(json["files"][0]["os"], "freebsd", "{name}");
        assert!(
            !rows
                .iter()
                .any(|r| r.2 == "bad-value" || r.2 == "wrong-file" || r.1 == "error"),
            "{name}: {rows:#?}"
        );
    }
    // --format stays the override.
    let p = write(dir.path(), "loader.conf.local", "net.link.ifqmaxlen=512\n");
    let (_, _, json) = lint(&[&p, "--format", "sysctl", "--os", "freebsd"]);
    assert_eq!(json["files"][0]["format"], "sysctl");
    // A runtime-only sysctl in loader.conf is the wrong file; a boot tunable there is not.
    let p = write(
        dir.path(),
        "x/loader.conf",
        "net.inet.tcp.sendspace=\"65536\"\nnet.link.ifqmaxlen=\"512\"\n",
    );
    let (_, rows, _) = lint(&[&p]);
    assert!(
        on(&rows, 1).iter().any(|r| r.2 == "wrong-file"),
        "{rows:#?}"
    );
    assert!(
        !on(&rows, 2).iter().any(|r| r.2 == "wrong-file"),
        "{rows:#?}"
    );
}

#[test]
fn sysctl_d_globs_paths_and_exclusions_are_understood() {
    let dir = support::tempdir();
    let p = write(
        dir.path(),
        "50-net.conf",
        "net.ipv4.conf.*.rp_filter = 2\n\
         -net.ipv4.conf.all.rp_filter\n\
         net/ipv4/conf/eth0.100/rp_filter = 1\n\
         net/ipv4/tcp_sack = 0\n\
         net.ipv4.tcp_rmem = \"4096 131072 33554432\"\n",
    );
    let (_, rows, _) = lint(&[&p]);
    assert!(on(&rows, 1).is_empty(), "{rows:#?}");
    assert!(
        on(&rows, 2).is_empty(),
        "`-key` excludes it from the glob: {rows:#?}"
    );
    assert!(
        on(&rows, 3).is_empty(),
        "a VLAN interface by path: {rows:#?}"
    );
    assert!(
        on(&rows, 3).is_empty() && rows.iter().all(|r| !r.3.contains("eth0.100")),
        "the path's dots are part of the interface name"
    );
    assert!(
        on(&rows, 4)
            .iter()
            .any(|r| r.2 == "harmful" && r.3 == "net.ipv4.tcp_sack")
    );
    // Linux sysctl(8) and systemd-sysctl pass quotes to the kernel.
    assert_eq!(worst(&rows, 5).as_deref(), Some("error[bad-value]"));
}

#[test]
fn duplicates_are_info_when_they_agree_and_a_warning_naming_both_lines_when_not() {
    let dir = support::tempdir();
    let p = write(
        dir.path(),
        "sysctl.conf",
        "fs.file-max = 100000\nnet.ipv4.tcp_fin_timeout = 30\nfs.file-max = 100000\nnet.ipv4.tcp_fin_timeout = 10\n",
    );
    let (_, rows, _) = lint(&[&p]);
    assert!(
        on(&rows, 3)
            .iter()
            .any(|r| r.2 == "duplicate" && r.1 == "info")
    );
    let dup = on(&rows, 4)
        .into_iter()
        .find(|r| r.2 == "duplicate")
        .unwrap_or_else(|| panic!("{rows:#?}"));
    assert_eq!(dup.1, "warning");
    assert!(
        dup.4.contains("sysctl.conf:2") && dup.4.contains("30") && dup.4.contains("10"),
        "{}",
        dup.4
    );
}

#[test]
fn invalid_values_are_errors_with_the_nearest_valid_name_and_the_stated_rate() {
    let dir = support::tempdir();
    let p = write(
        dir.path(),
        "sysctl.conf",
        "net.core.somaxconn = -5\nnet.ipv4.tcp_congestion_control = bbbr\nnet.ipv4.tcp_timestamps = 0\n",
    );
    let (_, rows, _) = lint(&[&p]);
    // An invalid value is an error, not a "lowers the default" warning.
    assert_eq!(
        worst(&rows, 1).as_deref(),
        Some("error[bad-value]"),
        "{rows:#?}"
    );
    assert!(!on(&rows, 1).iter().any(|r| r.2 == "lowers-default"));
    let cc = on(&rows, 2)
        .into_iter()
        .find(|r| r.2 == "bad-value")
        .unwrap_or_else(|| panic!("{rows:#?}"));
    assert!(cc.4.contains("did you mean bbr?"), "{}", cc.4);
    assert_eq!(cc.5, "set bbr");
    let ts = |rows: &[Row]| {
        on(rows, 3)
            .into_iter()
            .find(|r| r.2 == "harmful")
            .map(|r| r.4.clone())
            .unwrap_or_else(|| panic!("{rows:#?}"))
    };
    let assumed = ts(&rows);
    assert!(
        assumed.contains("at 10 Gbit/s (assumed; pass --rate)"),
        "{assumed}"
    );
    let (_, rows, _) = lint(&[&p, "--rate", "1G"]);
    let one = ts(&rows);
    assert!(
        one.contains("at 1 Gbit/s sequence numbers wrap in 17.2 s"),
        "{one}"
    );
}
