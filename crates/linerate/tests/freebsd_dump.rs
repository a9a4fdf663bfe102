//! FreeBSD hosts judged from elsewhere: `audit --host-snapshot` takes a router's `sysctl`
//! output (real FreeBSD output from `linerate-probe/testdata/freebsd`, sources in its
//! SOURCES.md) and judges its settings and hardware on any OS; `tune` refuses to change this
//! host for another OS.

#![forbid(unsafe_code)]

mod support;

use std::path::PathBuf;

use support::bin::run;

/// A fixture of the probe's FreeBSD corpus.
fn freebsd(rel: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../linerate-probe/testdata/freebsd")
        .join(rel)
        .display()
        .to_string()
}

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn a_freebsd_dump_as_host_snapshot_is_judged_as_freebsd_settings() {
    // `sysctl net.inet.tcp` of an EPYC 7502P: the autotuning maxima are FreeBSD's 2 MiB.
    let dump = freebsd("ocochard-epyc7502p-igb/sysctl-net-inet-tcp.txt");
    let out = run(&[
        "audit",
        "--host-snapshot",
        &dump,
        "--role",
        "host",
        "--rate",
        "10G",
        "--rtt",
        "80ms",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let j = json(&out);
    assert_eq!(j["context"]["os"], "freebsd");
    assert_eq!(j["source"], format!("snapshot {dump}"));
    let keys: Vec<&str> = j["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["rule"] == "path-too-small")
        .filter_map(|f| f["key"].as_str())
        .collect();
    assert!(keys.contains(&"net.inet.tcp.recvbuf_max"), "{keys:?}");
    assert!(keys.contains(&"net.inet.tcp.sendbuf_max"), "{keys:?}");
    // The live host's Linux settings are not mixed in.
    let text = j.to_string();
    assert!(!text.contains("net.ipv4"), "{text}");
}

#[test]
fn a_dump_that_is_not_freebsd_sysctl_output_names_file_and_line() {
    let dir = support::tempdir();
    let path = dir.path().join("linux-sysctl-a.txt");
    std::fs::write(&path, "kern.ostype: FreeBSD\nnet.core.rmem_max = 212992\n").unwrap();
    let out = run(&["audit", "--host-snapshot", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}: sysctl output, line 2:", path.display())),
        "{err}"
    );
    assert_eq!(err.matches("line 2").count(), 1, "said once: {err}");
}

#[test]
fn nic_shows_a_freebsd_dump_and_saves_it_as_a_host_snapshot() {
    let dir = support::tempdir();
    let saved = dir.path().join("x550.json");
    let dump = freebsd("intel-mfd-x550t2/sysctl-dev-ix-1.txt");
    let out = run(&[
        "nic",
        "--snapshot-in",
        &dump,
        "--snapshot-out",
        saved.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let j = json(&out);
    let names: Vec<&str> = j["snapshot"]["interfaces"]["value"]
        .as_array()
        .expect("interfaces")
        .iter()
        .filter_map(|i| i["name"].as_str())
        .collect();
    assert_eq!(names, ["ix1"]);
    let nics = &j["snapshot"]["freebsd"]["nics"]["value"];
    assert_eq!(nics[0]["description"], "Intel(R) X550-T2");
    assert_eq!(nics[0]["driver_version"], "4.0.1-k");
    assert_eq!(nics[0]["pci_selector"], "pci0:24:0:1");
    // The saved file is an ordinary host snapshot that audit reads back.
    let out = run(&[
        "audit",
        "--snapshot",
        &dump,
        "--host-snapshot",
        saved.to_str().unwrap(),
        "--role",
        "router",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

#[test]
fn tune_changes_this_host_only_for_its_own_os() {
    let out = run(&[
        "tune", "--os", "freebsd", "--apply", "--rate", "1G", "--rtt", "10ms",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("for freebsd install the generated files"),
        "{err}"
    );
    // The generated files are for anywhere.
    let out = run(&[
        "tune", "--os", "freebsd", "--role", "firewall", "--rate", "10G", "--rtt", "1ms",
        "--flows", "100000",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("net.pf.states_hashsize="), "{text}");
}
