//! The shipped experiments (`examples/lab/*.toml`) run for real in a short form (two rounds of
//! one-second runs; a variant needs one run that counts) and show the effect each one is about.

#![forbid(unsafe_code)]

mod support;

use std::path::{Path, PathBuf};

use support::lab::Lab;
use support::{program, require, root};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/lab")
        .join(name)
}

/// Runs an example shortly on `lab` (taken down when this returns); returns each variant's
/// mean.
fn run_short(name: &str, lab: Lab) -> Vec<f64> {
    let o = lab
        .linerate()
        .args([
            "lab",
            "run",
            "--no-store",
            "--repeat",
            "2",
            "--duration",
            "1s",
            "--lab-name",
            &lab.name,
            "--json",
        ])
        .arg(example(name))
        .output()
        .expect("run linerate");
    drop(lab);
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
    require!(root(), program("iperf3"));

    // kernel-default, 64KiB-2009, bdp-sized: 64 KiB buffers are far below the others.
    let wb = run_short("window-buffers.toml", Lab::new('m'));
    assert_eq!(wb.len(), 3);
    assert!(
        wb[1] < 20e6 && wb[2] > 5.0 * wb[1],
        "window-buffers: {wb:?}"
    );

    // no firewall, 100, 1000 stateless rules, conntrack: 1000 linear rules cost the most.
    let rf = run_short("router-firewall.toml", Lab::new('n'));
    assert_eq!(rf.len(), 4);
    assert!(rf[2] < rf[0], "router-firewall: {rf:?}");

    // The receive-buffer sweep climbs with the buffer.
    let sw = run_short("rmem-sweep.toml", Lab::new('o'));
    assert_eq!(sw.len(), 6);
    assert!(sw[5] > 3.0 * sw[0], "rmem-sweep: {sw:?}");
}

#[test]
fn the_tunnel_example_shows_what_encryption_costs() {
    require!(
        root(),
        program("openvpn"),
        program("wireguard-go"),
        program("wg")
    );
    // plain veth, WireGuard, OpenVPN AES-256-GCM, OpenVPN ChaCha20: each tunnel moves a small
    // share of what the bare veth pair does (one core's worth of user-space crypto).
    let t = run_short("wireguard-vs-openvpn.toml", Lab::new('t'));
    assert_eq!(t.len(), 4);
    assert!(
        t[1..].iter().all(|&x| x > 0.0 && 2.0 * x < t[0]),
        "wireguard-vs-openvpn: {t:?}"
    );
}
