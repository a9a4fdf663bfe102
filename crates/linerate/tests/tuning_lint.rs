//! `linerate lint` run as a binary: the seeds' own config blocks, bad input, exit codes, JSON.

#![forbid(unsafe_code)]

mod support;

use support::bin::{linerate, run};
use support::tempdir;

/// A fixture under `tests/data/tuning`, as an argument.
fn data(name: &str) -> String {
    support::data("tuning").join(name).display().to_string()
}

/// (rule, key, line, severity) of one finding.
type Row = (String, String, Option<u64>, String);

/// Runs `lint --json` and returns (exit code, [(rule, key, line, severity)]).
fn lint_json(args: &[&str]) -> (i32, Vec<Row>, serde_json::Value) {
    let mut all = vec!["lint", "--json"];
    all.extend_from_slice(args);
    let out = run(&all);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    let findings = json["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("no findings array"))
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap_or_default().to_string(),
                f["key"].as_str().unwrap_or_default().to_string(),
                f["location"]["line"].as_u64(),
                f["severity"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    (out.status.code().unwrap_or(-1), findings, json)
}

fn has(findings: &[Row], rule: &str, key: &str, line: u64) -> bool {
    findings
        .iter()
        .any(|f| f.0 == rule && f.1 == key && f.2 == Some(line))
}

fn assert_has(findings: &[Row], expected: &[(&str, &str, u64)]) {
    for (rule, key, line) in expected {
        assert!(
            has(findings, rule, key, *line),
            "missing {rule} {key} line {line} in {findings:#?}"
        );
    }
}

#[test]
fn seed000_redhat_block_is_flagged() {
    // Seed 000's test boxes had 8 GB of RAM.
    let (code, f, json) = lint_json(&[&data("seed000-redhat-sysctl.conf"), "--ram", "8GiB"]);
    assert_eq!(code, 1, "errors must exit 1");
    assert_eq!(json["schema"], "linerate.lint/1");
    assert_eq!(json["files"][0]["os"], "linux");
    assert_has(
        &f,
        &[
            ("harmful", "net.ipv4.tcp_timestamps", 9),
            ("redundant", "net.ipv4.tcp_sack", 11),
            ("lowers-default", "net.ipv4.tcp_rmem", 17),
            ("inconsistent", "net.ipv4.tcp_rmem", 17),
            ("inconsistent", "net.ipv4.tcp_wmem", 19),
            ("unit-error", "net.ipv4.tcp_mem", 21),
            ("lowers-default", "net.core.rmem_max", 25),
            ("lowers-default", "net.core.wmem_max", 27),
            ("inconsistent", "net.core.rmem_default", 29),
            ("inconsistent", "net.core.wmem_default", 31),
            ("excessive", "net.core.optmem_max", 33),
            ("bufferbloat", "net.core.netdev_max_backlog", 35),
            ("duplicate", "net.ipv4.tcp_window_scaling", 37),
        ],
    );
    let errors = f.iter().filter(|x| x.3 == "error").count();
    assert_eq!(errors, 4, "{f:#?}");
}

#[test]
fn seed000_suse_block_is_flagged() {
    let (code, f, _) = lint_json(&[&data("seed000-suse-sysctl.conf")]);
    assert_eq!(code, 0, "warnings alone pass the default --fail-on error");
    assert_has(
        &f,
        &[
            ("harmful", "net.ipv4.tcp_reordering", 9),
            ("lowers-default", "net.ipv4.tcp_rmem", 13),
            ("harmful", "net.ipv4.tcp_no_metrics_save", 15),
        ],
    );
    let (code, _, _) = lint_json(&[&data("seed000-suse-sysctl.conf"), "--fail-on", "warning"]);
    assert_eq!(code, 1);
}

#[test]
fn seed000_openbsd_and_freebsd_blocks_are_flagged() {
    let (code, f, json) = lint_json(&[&data("seed000-openbsd-sysctl.conf")]);
    assert_eq!(code, 1);
    assert_eq!(json["files"][0]["os"], "openbsd");
    assert_has(
        &f,
        &[
            ("removed-key", "net.inet.ip.ifq.maxlen", 5),
            ("removed-key", "net.inet.tcp.recvspace", 12),
            ("removed-key", "net.inet.tcp.sendspace", 13),
            ("redundant", "net.inet.tcp.sack", 14),
            ("unchecked", "ddb.panic", 3),
        ],
    );
    let (_, f, json) = lint_json(&[&data("seed000-freebsd-sysctl.conf"), "--ram", "8GiB"]);
    assert_eq!(json["files"][0]["os"], "freebsd");
    assert_has(
        &f,
        &[
            ("lowers-default", "kern.ipc.maxsockbuf", 3),
            ("inconsistent", "kern.ipc.maxsockbuf", 3),
            ("redundant", "net.inet.tcp.recvspace", 5),
            ("lowers-default", "kern.ipc.nmbclusters", 7),
        ],
    );
}

#[test]
fn seed002_loader_and_sysctl_lines_are_flagged() {
    let (_, f, _) = lint_json(&[
        &data("seed002-loader.conf"),
        &data("seed002-sysctl.conf"),
        "--ram",
        "8GiB",
    ]);
    assert_has(
        &f,
        &[
            ("removed-key", "hw.igb.rx_process_limit", 4),
            ("noop", "hw.em.rx_process_limit", 5),
            ("noop", "hw.ix.rx_process_limit", 6),
            ("renamed-key", "hw.cxgbe.nrxq10g", 7),
            ("memory-cost", "net.pf.states_hashsize", 8),
            ("harmful", "kern.random.harvest.mask", 3),
        ],
    );
}

#[test]
fn seed001_blocks_for_three_oses_are_flagged() {
    // Seed 001's servers had 1 GB of RAM.
    let (_, f, _) = lint_json(&[&data("seed001-linux-sysctl.conf"), "--ram", "1GiB"]);
    assert_has(
        &f,
        &[
            ("lowers-default", "net.core.wmem_default", 5),
            ("lowers-default", "net.core.rmem_default", 6),
            ("redundant", "net.ipv4.tcp_window_scaling", 8),
            ("unit-error", "net.ipv4.tcp_mem", 10),
        ],
    );
    // On a 24 GB host the same tcp_mem is a third of what the kernel computes.
    let (_, f, _) = lint_json(&[&data("seed001-linux-sysctl.conf"), "--ram", "24GiB"]);
    assert_has(&f, &[("lowers-default", "net.ipv4.tcp_mem", 10)]);
    let (_, f, _) = lint_json(&[&data("seed001-freebsd-sysctl.conf")]);
    assert_has(
        &f,
        &[
            ("lowers-default", "kern.ipc.maxsockbuf", 3),
            ("redundant", "net.inet.tcp.rfc1323", 8),
        ],
    );
    let (_, f, json) = lint_json(&[&data("seed001-windows.reg")]);
    assert_eq!(json["files"][0]["os"], "windows");
    assert_has(
        &f,
        &[
            ("noop", "TcpWindowSize", 5),
            ("noop", "Tcp1323Opts", 6),
            ("noop", "ForwardBufferMemory", 7),
            ("noop", "NumForwardPackets", 8),
        ],
    );
    let tcp1323 = json["findings"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["key"] == "Tcp1323Opts"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(tcp1323["fix"]["kind"], "command");
    assert!(
        tcp1323["fix"]["value"]
            .as_str()
            .unwrap_or_default()
            .contains("timestamps=enabled")
    );
}

#[test]
fn seed004_loader_and_sysctl_are_flagged_together() {
    let (code, f, _) = lint_json(&[&data("seed004-loader.conf"), &data("seed004-sysctl.conf")]);
    assert_eq!(code, 1);
    assert_has(
        &f,
        &[
            ("removed-key", "hw.igb.num_queues", 38),
            ("removed-key", "hw.igb.rx_process_limit", 44),
            ("bad-value", "net.inet.tcp.tcbhashsize", 58),
            ("bufferbloat", "net.link.ifqmaxlen", 89),
            // htcp is set but cc_htcp_load is commented out in the loader.conf linted with it.
            ("inconsistent", "net.inet.tcp.cc.algorithm", 32),
            ("removed-key", "net.inet.ip.fastforwarding", 47),
            ("removed-key", "net.inet.tcp.slowstart_flightsize", 106),
            ("harmful", "net.inet.tcp.rfc3390", 112),
            ("removed-key", "net.inet.tcp.recvbuf_inc", 141),
            ("renamed-key", "kern.ipc.somaxconn", 151),
            ("harmful", "net.inet.tcp.syncookies", 182),
            ("harmful", "net.inet.tcp.msl", 206),
            ("harmful", "net.inet.tcp.path_mtu_discovery", 207),
            ("removed-key", "net.inet.ip.rtexpire", 239),
        ],
    );
    // Every network key of the seed is in the catalogue: nothing is "unknown".
    assert!(!f.iter().any(|x| x.0 == "unknown-key"), "{f:#?}");
}

#[test]
fn no_seed_key_is_unknown() {
    for name in [
        "seed000-openbsd-sysctl.conf",
        "seed000-freebsd-sysctl.conf",
        "seed000-redhat-sysctl.conf",
        "seed000-suse-sysctl.conf",
        "seed002-loader.conf",
        "seed002-sysctl.conf",
        "seed001-freebsd-sysctl.conf",
        "seed001-linux-sysctl.conf",
        "seed001-windows.reg",
        "seed004-loader.conf",
        "seed004-sysctl.conf",
    ] {
        let (_, f, _) = lint_json(&[&data(name)]);
        assert!(
            !f.iter().any(|x| x.0 == "unknown-key" || x.0 == "syntax"),
            "{name}: {f:#?}"
        );
    }
}

#[test]
fn bad_input_gives_file_and_line_never_a_panic() {
    let dir = tempdir();
    let path = dir.path().join("bad.conf");
    std::fs::write(
        &path,
        "# comment\n; another\nnet.ipv4.tcp_rmem = 4096 lots 6291456\n  this line has no equals\nnet.ipv4.tcp_rmen = 1 2 3\n=5\n-net.ipv4.tcp_nosuch_key = 1\nnet.ipv4.tcp_tw_recycle = 1\nnet.ipv4.ip_forward = 1 # forward\nnet.core.somaxconn\t=\t1024\nnet.ipv4.tcp_congestion_control = hs-tcp\nnet.ipv4.ip_local_port_range = 60999 32768\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let p = path.display().to_string();
    let (code, f, _) = lint_json(&[&p]);
    assert_eq!(code, 1);
    assert_has(
        &f,
        &[
            ("bad-value", "net.ipv4.tcp_rmem", 3),
            ("syntax", "", 4),
            ("unknown-key", "net.ipv4.tcp_rmen", 5),
            ("syntax", "", 6),
            ("unknown-key", "net.ipv4.tcp_nosuch_key", 7),
            ("removed-key", "net.ipv4.tcp_tw_recycle", 8),
            ("syntax", "net.ipv4.ip_forward", 9),
            ("lowers-default", "net.core.somaxconn", 10),
            ("bad-value", "net.ipv4.tcp_congestion_control", 11),
            ("inconsistent", "net.ipv4.ip_local_port_range", 12),
        ],
    );
    // `-key`: sysctl ignores errors on that line, so unknown is a warning there.
    assert!(
        f.iter()
            .any(|x| x.1 == "net.ipv4.tcp_nosuch_key" && x.3 == "warning")
    );
    let human = run(&["lint", &p]);
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("did you mean net.ipv4.tcp_rmem?"), "{text}");
    assert!(text.contains("removed by linux 4.12"), "{text}");
    assert!(text.starts_with(&p), "grouped by file: {text}");
    // A line that did not parse is shown as written, not as an empty `key = value`.
    assert!(text.contains("  6: error[syntax] `=5`\n"), "{text}");
    // On a 4.11 kernel tcp_tw_recycle still exists.
    let (_, f, _) = lint_json(&[&p, "--kernel", "4.11"]);
    assert!(!has(&f, "removed-key", "net.ipv4.tcp_tw_recycle", 8));
}

#[test]
fn usage_and_io_errors_exit_2() {
    let out = run(&["lint", "/nonexistent/linerate-sysctl.conf"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/linerate-sysctl.conf"));
    let out = run(&[
        "lint",
        &data("seed000-suse-sysctl.conf"),
        "--fail-on",
        "sometimes",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["lint", &data("seed000-suse-sysctl.conf"), "--ram", "8Gb"]);
    assert_eq!(out.status.code(), Some(2), "a size in bits is refused");
}

#[test]
fn a_clean_file_exits_0_and_path_checks_need_rate_and_rtt() {
    let dir = tempdir();
    let path = dir.path().join("90-ok.conf");
    std::fs::write(
        &path,
        "net.ipv4.tcp_rmem = 4096 131072 67108864\nnet.ipv4.tcp_mtu_probing = 1\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let p = path.display().to_string();
    let (code, f, _) = lint_json(&[&p, "--fail-on", "info"]);
    assert_eq!((code, f.len()), (0, 0), "{f:#?}");
    // 10G × 80 ms needs 200 MB of receive buffer: 64 MiB is too small for one flow.
    let (code, f, _) = lint_json(&[&p, "--rate", "10G", "--rtt", "80ms", "--fail-on", "warning"]);
    assert_eq!(code, 1);
    assert!(has(&f, "path-too-small", "net.ipv4.tcp_rmem", 1), "{f:#?}");
    assert!(
        f.iter()
            .any(|x| x.0 == "path-too-small" && x.1 == "net.ipv4.tcp_wmem" && x.2.is_none()),
        "default wmem too: {f:#?}"
    );
    // A router terminates no TCP: its buffers are not judged against the path.
    let (_, f, _) = lint_json(&[&p, "--rate", "10G", "--rtt", "80ms", "--role", "router"]);
    assert!(!f.iter().any(|x| x.0 == "path-too-small"));
}

#[test]
fn a_sysctl_a_dump_is_judged_as_a_whole_state() {
    let (_, f, json) = lint_json(&[&data("linux-6.18-sysctl-host.txt")]);
    assert_eq!(json["files"][0]["format"], "dump");
    // All defaults: nothing redundant, nothing wrong.
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn human_output_for_a_seed_block() {
    let out = linerate()
        .current_dir(support::data("tuning"))
        .args(["lint", "seed000-redhat-sysctl.conf", "--ram", "8GiB"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stdout));
}

#[test]
fn help_texts() {
    for cmd in ["lint", "tune", "audit"] {
        let out = run(&[cmd, "--help"]);
        assert!(out.status.success());
        insta::assert_snapshot!(format!("{cmd}_help"), String::from_utf8_lossy(&out.stdout));
    }
}

#[test]
fn regedit_utf16_exports_and_forced_os() {
    let text = std::fs::read_to_string(data("seed001-windows.reg")).unwrap_or_default();
    let mut bytes = vec![0xFF, 0xFE];
    for unit in text.encode_utf16() {
        bytes.extend_from_slice(&unit.to_le_bytes());
    }
    let dir = tempdir();
    let path = dir.path().join("tcpip.reg");
    std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{e}"));
    let (_, f, _) = lint_json(&[&path.display().to_string()]);
    assert_eq!(f.iter().filter(|x| x.0 == "noop").count(), 4, "{f:#?}");
    // Linux keys linted as FreeBSD are named for what they are.
    let out = run(&[
        "lint",
        &data("seed001-linux-sysctl.conf"),
        "--os",
        "freebsd",
    ]);
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(
        t.contains("not a freebsd key: this is a linux setting"),
        "{t}"
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_directory_stands_for_its_conf_files_in_order() {
    let dir = tempdir();
    std::fs::write(dir.path().join("20-b.conf"), "net.ipv4.tcp_sack = 0\n")
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        dir.path().join("10-a.conf"),
        "net.ipv4.tcp_timestamps = 0\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("README"), "not a conf file\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let (code, f, json) = lint_json(&[&dir.path().display().to_string()]);
    assert_eq!(code, 1);
    assert_eq!(json["files"].as_array().map(Vec::len), Some(2));
    assert!(
        json["files"][0]["path"]
            .as_str()
            .unwrap_or_default()
            .ends_with("10-a.conf")
    );
    assert!(
        has(&f, "harmful", "net.ipv4.tcp_timestamps", 1)
            && has(&f, "harmful", "net.ipv4.tcp_sack", 1)
    );
    let empty = tempdir();
    let out = run(&["lint", &empty.path().display().to_string()]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn control_characters_in_a_file_are_shown_escaped_not_sent_to_the_terminal() {
    let dir = tempdir();
    let path = dir.path().join("hostile.conf");
    std::fs::write(
        &path,
        "net.core.rmem_max = 1\x1b[2J\n\x1b]0;title\x07 junk\nnet.ipv4.tcp_sack\x1b[31m = 1\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let out = run(&["lint", "--os", "linux", &path.display().to_string()]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
    assert!(text.contains("\\u{1b}[2J"), "{text}");
}
