//! `linerate audit` judges settings and hardware in one list: a host snapshot captured from a
//! fixture tree (ixgbe on a PCIe gen2 x1 slot) brings its bus finding into the audit, with the
//! same rendering, `--json` and exit codes as the settings findings.

#![forbid(unsafe_code)]

mod support;

use std::process::Output;

use support::{data, tempdir};

/// Runs `linerate ARGS` from inside `tests/data`, so fixture paths are short.
fn linerate(args: &[&str]) -> Output {
    support::bin::linerate()
        .args(args)
        .current_dir(data(""))
        .output()
        .expect("run linerate")
}

#[test]
fn hardware_findings_join_the_settings_audit() {
    let dir = tempdir();
    let snap = dir.path().join("ixgbe.json");
    let snap = snap.to_str().expect("utf-8 path");
    let out = linerate(&[
        "nic",
        "--sysfs-root",
        "probe/ixgbe/sys",
        "--procfs-root",
        "probe/ixgbe/proc",
        "--snapshot-out",
        snap,
    ]);
    assert!(out.status.success(), "{out:?}");

    let out = linerate(&[
        "audit",
        "--snapshot",
        "tuning/linux-6.18-sysctl-host.txt",
        "--host-snapshot",
        snap,
        "--role",
        "router",
        "--json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a bus error trips --fail-on error: {out:?}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let rules: Vec<&str> = doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["rule"].as_str())
        .collect();
    assert!(rules.contains(&"bus-too-slow"), "{rules:?}");

    let out = linerate(&[
        "audit",
        "--snapshot",
        "tuning/linux-6.18-sysctl-host.txt",
        "--host-snapshot",
        snap,
        "--no-hardware",
        "--json",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(
        !doc["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| f["rule"] == "bus-too-slow"),
        "--no-hardware leaves hardware out"
    );
}

#[test]
fn a_missing_host_snapshot_is_named() {
    let out = linerate(&["audit", "--host-snapshot", "no/such/host.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/host.json"));
}

#[test]
fn snapshot_out_needs_the_live_host() {
    let out = linerate(&[
        "audit",
        "--snapshot",
        "tuning/linux-6.18-sysctl-host.txt",
        "--snapshot-out",
        "/tmp/never-written.json",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn live_audit_saves_this_hosts_snapshot_even_with_no_hardware() {
    let dir = tempdir();
    let snap = dir.path().join("host.json");
    let snap = snap.to_str().expect("utf-8 path");
    for extra in [&[][..], &["--no-hardware"]] {
        let mut args = vec!["audit", "--snapshot-out", snap, "--json"];
        args.extend_from_slice(extra);
        let out = linerate(&args);
        assert_ne!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(snap).expect("snapshot written"))
                .expect("snapshot JSON");
        assert_eq!(doc["schema"], "linerate.host-snapshot/1", "{args:?}");
        std::fs::remove_file(snap).expect("remove");
    }
    // An unwritable destination names the flag and the path, once.
    for cmd in ["audit", "nic"] {
        let out = linerate(&[cmd, "--snapshot-out", "/nonexistent/lr-rb/host.json"]);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--snapshot-out"), "{err}");
        assert_eq!(
            err.matches("/nonexistent/lr-rb/host.json").count(),
            1,
            "{err}"
        );
    }
}
