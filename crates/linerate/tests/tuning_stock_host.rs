//! A stock, untouched host is not "wrong": `audit` reports no error for any role on this machine
//! and in a fresh network namespace, and `lint` of this host's own `sysctl -a` reports no error.

mod support;

use std::process::Command;

use support::bin::{run as linerate, text};
use support::netns::Netns;
use support::{namespaces, require};

const ROLES: [&str; 5] = ["host", "router", "firewall", "web", "vpn"];
/// No path, a long fat path, a small short one.
const PATHS: [&[&str]; 3] = [
    &[],
    &["--rate", "10G", "--rtt", "80ms"],
    &["--rate", "100M", "--rtt", "5ms"],
];

/// The error findings of an `audit --json` or `lint --json` run, as `rule key`.
fn errors(args: &[&str]) -> Vec<String> {
    let out = linerate(args);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {}", text(&out)));
    json["findings"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|f| f["severity"] == "error")
                .map(|f| format!("{} {}", f["rule"], f["key"]))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn this_host_audits_without_errors_for_every_role_and_path() {
    for role in ROLES {
        for path in PATHS {
            let mut args = vec!["audit", "--json", "--role", role];
            args.extend_from_slice(path);
            let e = errors(&args);
            assert!(e.is_empty(), "audit {args:?}: {e:?}");
        }
    }
}

#[test]
fn a_fresh_namespace_audits_without_errors_for_every_role_and_path() {
    require!(namespaces());
    let ns = Netns::new("lint-stock");
    for role in ROLES {
        for path in PATHS {
            let mut args = vec!["audit", "--json", "--netns", ns.name(), "--role", role];
            args.extend_from_slice(path);
            let e = errors(&args);
            assert!(e.is_empty(), "audit {args:?}: {e:?}");
        }
    }
}

/// `sysctl -a` run here (in the namespace `netns` if given), saved to a file.
fn sysctl_a(dir: &std::path::Path, netns: Option<&str>) -> String {
    let out = match netns {
        Some(ns) => Command::new("ip")
            .args(["netns", "exec", ns, "sysctl", "-a"])
            .output(),
        None => Command::new("sysctl").arg("-a").output(),
    }
    .unwrap_or_else(|e| panic!("cannot run sysctl -a: {e}"));
    assert!(
        out.stdout.len() > 10_000,
        "sysctl -a printed too little: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = dir.join(format!("sysctl-a-{}.txt", netns.unwrap_or("host")));
    std::fs::write(&path, &out.stdout).unwrap_or_else(|e| panic!("{e}"));
    path.display().to_string()
}

#[test]
fn this_hosts_own_sysctl_a_lints_without_error() {
    let dir = support::tempdir();
    let host = sysctl_a(dir.path(), None);
    let e = errors(&["lint", "--json", &host]);
    assert!(e.is_empty(), "{e:?}");
    require!(namespaces());
    let ns = Netns::new("lint-dump");
    let inside = sysctl_a(dir.path(), Some(ns.name()));
    let e = errors(&["lint", "--json", &inside]);
    assert!(e.is_empty(), "{e:?}");
}
