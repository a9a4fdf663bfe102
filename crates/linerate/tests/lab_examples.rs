//! The shipped experiments (`examples/lab/*.toml`) run for real in a short form (two rounds of
//! one-second runs; a variant needs one run that counts) and show the effect each one is about.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/lab")
        .join(name)
}

/// Runs an example shortly; returns each variant's mean.
fn run_short(name: &str, lab: &str, state: &Path) -> Vec<f64> {
    let o = Command::new(env!("CARGO_BIN_EXE_linerate"))
        .env("LINERATE_LAB_STATE_DIR", state)
        .args([
            "lab",
            "run",
            "--no-store",
            "--repeat",
            "2",
            "--duration",
            "1s",
            "--lab-name",
            lab,
            "--json",
        ])
        .arg(example(name))
        .output();
    let _ = Command::new(env!("CARGO_BIN_EXE_linerate"))
        .env("LINERATE_LAB_STATE_DIR", state)
        .args(["lab", "down", lab])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let Ok(o) = o else {
        panic!("cannot run linerate")
    };
    assert!(
        o.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    v["variants"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| {
                    let vals: Vec<f64> = x["values"]
                        .as_array()
                        .map(|v| v.iter().filter_map(serde_json::Value::as_f64).collect())
                        .unwrap_or_default();
                    assert!(
                        !vals.is_empty(),
                        "{name}: variant {} has no successful run: {v}",
                        x["name"]
                    );
                    vals.iter().sum::<f64>() / vals.len() as f64
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_examples_show_their_effects_in_short_form() {
    if !is_root() || Command::new("iperf3").arg("--version").output().is_err() {
        eprintln!("skipping: needs root and iperf3");
        return;
    }
    let Ok(dir) = tempfile::tempdir() else { return };
    let pid = std::process::id() % 100_000;

    // kernel-default, 64KiB-2009, bdp-sized: 64 KiB buffers are far below the others.
    let wb = run_short("window-buffers.toml", &format!("t{pid}m"), dir.path());
    assert_eq!(wb.len(), 3);
    assert!(
        wb[1] < 20e6 && wb[2] > 5.0 * wb[1],
        "window-buffers: {wb:?}"
    );

    // no firewall, 100, 1000 stateless rules, conntrack: 1000 linear rules cost the most.
    let rf = run_short("router-firewall.toml", &format!("t{pid}n"), dir.path());
    assert_eq!(rf.len(), 4);
    assert!(rf[2] < rf[0], "router-firewall: {rf:?}");

    // The receive-buffer sweep climbs with the buffer.
    let sw = run_short("rmem-sweep.toml", &format!("t{pid}o"), dir.path());
    assert_eq!(sw.len(), 6);
    assert!(sw[5] > 3.0 * sw[0], "rmem-sweep: {sw:?}");
}
