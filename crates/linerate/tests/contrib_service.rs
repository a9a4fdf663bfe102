//! `contrib/linerate.service` is a unit systemd accepts, hardened, and runs flags the server
//! takes (issue 16, item 6).

#![forbid(unsafe_code)]

mod support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use support::bin::run_bounded;
use support::{program, skipping};

fn unit() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contrib/linerate.service");
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The unit with ExecStart pointing at the binary under test.
fn unit_here(dir: &Path) -> std::path::PathBuf {
    let text = unit().replace("/usr/local/bin/linerate", env!("CARGO_BIN_EXE_linerate"));
    let p = dir.join("linerate.service");
    std::fs::write(&p, text).expect("write the unit");
    p
}

#[test]
fn the_unit_is_hardened() {
    let u = unit();
    for line in [
        "DynamicUser=yes",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "CapabilityBoundingSet=\n",
        "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX\n",
        "SystemCallFilter=@system-service",
    ] {
        assert!(u.contains(line), "{line:?} missing from the unit");
    }
}

#[test]
fn the_units_server_flags_are_accepted() {
    let u = unit();
    let exec = u
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart=/usr/local/bin/linerate "))
        .expect("ExecStart");
    // The same flags on a free port: the server must start listening.
    let args: Vec<&str> = exec
        .split_whitespace()
        .filter(|a| !["server", "--port", "5201"].contains(a))
        .collect();
    let server = support::traffic::linerate_server(&args);
    assert!(server.port > 0);
}

#[test]
fn systemd_analyze_verifies_the_unit() {
    if let Err(why) = program("systemd-analyze") {
        skipping(format_args!("systemd-analyze: {why}"));
        return;
    }
    let dir = support::tempdir();
    let p = unit_here(dir.path());
    // --man=no: the man page is not installed where the tests run.
    let out = run_bounded(
        Command::new("systemd-analyze")
            .args(["verify", "--man=no"])
            .arg(&p),
        Duration::from_secs(60),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "systemd-analyze verify: {err}");
    assert!(err.trim().is_empty(), "warnings: {err}");
    let out = run_bounded(
        Command::new("systemd-analyze")
            .args(["security", "--offline=yes"])
            .arg(&p),
        Duration::from_secs(60),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let score: Option<f64> = text
        .lines()
        .find(|l| l.contains("Overall exposure level"))
        .and_then(|l| l.split(':').nth(1))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok());
    match score {
        Some(s) => {
            eprintln!("systemd-analyze security: exposure {s}");
            assert!(s <= 2.0, "exposure {s} (want at most 2.0):\n{text}");
        }
        None => skipping(format_args!(
            "this systemd-analyze has no offline security score: {}",
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}
