//! `linerate tune` (generation) run as a binary: formats, formulas, JSON, and the
//! self-consistency check that every generated file lints clean for the same inputs.

#![forbid(unsafe_code)]

mod support;

use support::bin::{run, succeeded};
use support::tempdir;

const FIXED: [&str; 6] = ["--ram", "64GiB", "--cores", "16", "--kernel", "6.18"];

#[test]
fn linux_sysctl_d_profile_snapshot() {
    let mut args = vec![
        "tune", "--os", "linux", "--role", "host", "--rate", "10G", "--rtt", "80ms",
    ];
    args.extend_from_slice(&FIXED);
    let text = succeeded(&run(&args));
    insta::assert_snapshot!(text);
}

#[test]
fn every_value_has_its_formula_on_the_line_above() {
    let mut args = vec!["tune", "--role", "web", "--rate", "40G", "--rtt", "30ms"];
    args.extend_from_slice(&FIXED);
    let text = succeeded(&run(&args));
    let lines: Vec<&str> = text.lines().collect();
    let mut values = 0;
    for (i, line) in lines.iter().enumerate() {
        if !line.starts_with('#') && line.contains(" = ") {
            values += 1;
            assert!(
                i > 0 && lines[i - 1].starts_with("# ") && lines[i - 1].len() > 20,
                "no formula above `{line}`"
            );
            assert!(
                !line.contains('#'),
                "inline comments are not stripped by Linux sysctl: `{line}`"
            );
        }
    }
    assert!(values >= 6, "{text}");
    assert!(
        text.contains("net.ipv4.tcp_notsent_lowat"),
        "web role: {text}"
    );
}

#[test]
fn tuned_and_sysctl_d_carry_the_same_settings() {
    let mut base = vec!["tune", "--rate", "10G", "--rtt", "80ms"];
    base.extend_from_slice(&FIXED);
    let sysctl_d = succeeded(&run(&base));
    let mut tuned_args = base.clone();
    tuned_args.extend_from_slice(&["--format", "tuned"]);
    let tuned = succeeded(&run(&tuned_args));
    assert!(
        tuned.contains("[main]") && tuned.contains("[sysctl]"),
        "{tuned}"
    );
    let kv = |t: &str, sep: &str| -> Vec<String> {
        t.lines()
            .filter(|l| {
                !l.starts_with('#')
                    && !l.starts_with('[')
                    && l.contains(sep)
                    && !l.starts_with("summary")
            })
            .map(|l| l.replace(" = ", "="))
            .collect()
    };
    assert_eq!(kv(&sysctl_d, " = "), kv(&tuned, "="));
    // And the tuned profile lints clean for the same inputs.
    let dir = tempdir();
    let path = dir.path().join("tuned.conf");
    std::fs::write(&path, &tuned).unwrap_or_else(|e| panic!("{e}"));
    let p = path.display().to_string();
    let mut lint = vec![
        "lint",
        p.as_str(),
        "--rate",
        "10G",
        "--rtt",
        "80ms",
        "--fail-on",
        "warning",
        "--json",
    ];
    lint.extend_from_slice(&FIXED);
    let out = run(&lint);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(out.status.code(), Some(0), "{json}");
    assert_eq!(json["files"][0]["format"], "tuned");
    assert_eq!(json["files"][0]["entries"], kv(&tuned, "=").len());
}

#[test]
fn generated_files_lint_clean_for_the_same_inputs() {
    let cases: [(&str, &str, &str, &str, &[&str]); 8] = [
        ("linux", "host", "10G", "80ms", &["90-linerate.conf"]),
        ("linux", "router", "100G", "2ms", &["90-linerate.conf"]),
        ("linux", "firewall", "10G", "20ms", &["90-linerate.conf"]),
        ("linux", "vpn", "1G", "40ms", &["90-linerate.conf"]),
        (
            "freebsd",
            "web",
            "10G",
            "80ms",
            &["loader.conf", "sysctl.conf"],
        ),
        (
            "freebsd",
            "firewall",
            "10G",
            "10ms",
            &["loader.conf", "sysctl.conf"],
        ),
        ("openbsd", "router", "1G", "20ms", &["sysctl.conf"]),
        ("openbsd", "host", "1G", "20ms", &["sysctl.conf"]),
    ];
    for (os, role, rate, rtt, files) in cases {
        let dir = tempdir();
        let out_dir = dir.path().display().to_string();
        let inputs = [
            "--os", os, "--role", role, "--rate", rate, "--rtt", rtt, "--ram", "64GiB", "--kernel",
        ];
        let kernel = if os == "linux" {
            "6.18"
        } else if os == "freebsd" {
            "14.0"
        } else {
            "7.4"
        };
        let mut args = vec!["tune"];
        args.extend_from_slice(&inputs);
        args.extend_from_slice(&[kernel, "--flows", "100000", "--output", &out_dir]);
        succeeded(&run(&args));
        let paths: Vec<String> = files
            .iter()
            .map(|f| dir.path().join(f).display().to_string())
            .collect();
        let mut lint = vec!["lint", "--json", "--fail-on", "warning"];
        lint.extend(paths.iter().map(String::as_str));
        lint.extend_from_slice(&inputs);
        lint.push(kernel);
        let out = run(&lint);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{os} {role}: {}",
            serde_json::to_string_pretty(&json["findings"]).unwrap_or_default()
        );
        let worrying = json["findings"]
            .as_array()
            .map_or(0, |a| a.iter().filter(|f| f["severity"] != "info").count());
        assert_eq!(worrying, 0);
    }
}

#[test]
fn freebsd_openbsd_and_windows_formats() {
    let text = succeeded(&run(&[
        "tune", "--os", "freebsd", "--role", "router", "--rate", "10G", "--rtt", "1ms", "--iface",
        "ix0", "--iface", "ix1",
    ]));
    for needle in [
        "==> /boot/loader.conf <==",
        "==> /etc/sysctl.conf <==",
        "==> /etc/rc.conf <==",
        "gateway_enable=\"YES\"",
        "ifconfig_ix1=\"up -tso4 -tso6 -lro -vlanhwtso\"",
    ] {
        assert!(text.contains(needle), "missing {needle}: {text}");
    }
    let text = succeeded(&run(&[
        "tune", "--os", "freebsd", "--role", "host", "--rate", "10G", "--rtt", "80ms",
    ]));
    assert!(
        text.contains("net.inet.tcp.recvbuf_max=268435456")
            && text.contains("kern.ipc.maxsockbuf=536870912"),
        "{text}"
    );
    let text = succeeded(&run(&[
        "tune", "--os", "openbsd", "--role", "router", "--rate", "1G", "--rtt", "10ms",
    ]));
    assert!(
        text.contains("net.inet.ip.forwarding=1") && text.contains("autoscale"),
        "{text}"
    );
    let text = succeeded(&run(&[
        "tune", "--os", "windows", "--role", "host", "--rate", "10G", "--rtt", "80ms",
    ]));
    assert!(
        text.contains("netsh int tcp set global autotuninglevel=experimental"),
        "{text}"
    );
    assert!(text.contains("Set-NetTCPSetting -SettingName InternetCustom,DatacenterCustom -AutoTuningLevelLocal Experimental"), "{text}");
    assert!(text.contains("-Timestamps Enabled"), "{text}");
}

#[test]
fn json_output_has_schema_profile_and_files() {
    let mut args = vec!["tune", "--rate", "1G", "--rtt", "50ms", "--json"];
    args.extend_from_slice(&FIXED);
    let text = succeeded(&run(&args));
    let json: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(json["schema"], "linerate.tune/1");
    assert_eq!(json["profile"]["bdp"], 6_250_000);
    let settings = json["profile"]["settings"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        settings
            .iter()
            .all(|s| s["formula"].as_str().is_some_and(|f| !f.is_empty()))
    );
    assert_eq!(json["files"][0]["path"], "/etc/sysctl.d/90-linerate.conf");
}

#[test]
fn bad_inputs_are_usage_errors() {
    for args in [
        vec!["tune", "--rtt", "80ms"],
        vec!["tune", "--rate", "10G"],
        vec!["tune", "--rate", "10GB", "--rtt", "80ms"],
        vec![
            "tune", "--rate", "10G", "--rtt", "80ms", "--role", "toaster",
        ],
        vec![
            "tune", "--rate", "10G", "--rtt", "80ms", "--os", "freebsd", "--format", "tuned",
        ],
        vec![
            "tune", "--rate", "10G", "--rtt", "80ms", "--os", "freebsd", "--apply",
        ],
        vec!["tune", "--set", "net.ipv4.tcp_mtu_probing"],
        // Input that would smuggle a line into the drop-in or a command into rc.conf.
        vec![
            "tune",
            "--persist",
            "--sysctl-dir",
            "/nonexistent/lr-tu",
            "--set",
            "net.ipv4.tcp_sack=1\nkernel.core_pattern=|/bin/true",
        ],
        vec!["tune", "--dry-run", "--set", "net.ipv4 .tcp_sack=1"],
        vec![
            "tune",
            "--os",
            "freebsd",
            "--role",
            "router",
            "--rate",
            "10G",
            "--rtt",
            "1ms",
            "--iface",
            "ix0\"; reboot; \"",
        ],
    ] {
        let out = run(&args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(!out.stderr.is_empty());
    }
}
