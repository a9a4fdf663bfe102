//! One buffer answer (issue 23 item 2): what `calc bdp` advises for the Linux TCP buffers is
//! what `lint` accepts and what `tune` writes, over a grid of paths and kernels. Before, calc
//! said 20971520 for 1 Gbit/s × 80 ms, tune wrote 33554432 for wmem only, and lint warned that
//! calc's value "lowers the linux 6.18 default".

#![forbid(unsafe_code)]

mod support;

use std::collections::BTreeMap;

use serde_json::Value;
use support::bin::{json, run};
use support::{arg, tempdir};

const KEYS: [&str; 4] = [
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.core.rmem_max",
    "net.core.wmem_max",
];

/// The settings calc advises to change, by key.
fn calc_changes(doc: &Value) -> BTreeMap<String, String> {
    doc["linux_buffers"]["keys"]
        .as_array()
        .expect("calc bdp --json has linux_buffers.keys")
        .iter()
        .filter(|k| k["change"] == true)
        .map(|k| {
            (
                k["key"].as_str().unwrap_or_default().to_owned(),
                k["value"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// The buffer settings a tune profile writes, by key.
fn tune_settings(doc: &Value) -> BTreeMap<String, String> {
    doc["profile"]["settings"]
        .as_array()
        .expect("tune --json has profile.settings")
        .iter()
        .filter(|s| KEYS.contains(&s["key"].as_str().unwrap_or_default()))
        .map(|s| {
            (
                s["key"].as_str().unwrap_or_default().to_owned(),
                s["value"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[test]
fn calc_advice_passes_lint_and_is_what_tune_writes() {
    let dir = tempdir();
    // 64 GiB: TCP may take ~6 GiB (tcp_mem), so RAM caps nothing on this grid.
    let ram = "64GiB";
    let mut changed_somewhere = 0;
    for rate in ["100M", "1G", "10G", "40G"] {
        for rtt in ["1ms", "10ms", "80ms", "200ms"] {
            for kernel in ["5.15", "6.18"] {
                let path = [
                    "--rate", rate, "--rtt", rtt, "--kernel", kernel, "--ram", ram,
                ];
                let mut calc = vec!["calc", "bdp"];
                calc.extend_from_slice(&path);
                let advice = calc_changes(&json(&calc));
                changed_somewhere += advice.len();

                let conf = dir.path().join(format!("{rate}-{rtt}-{kernel}.conf"));
                let text: String = advice.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
                std::fs::write(&conf, text).expect("write the advice");
                let mut lint = vec!["lint", arg(&conf), "--os", "linux", "--json"];
                lint.extend_from_slice(&path);
                let out = run(&lint);
                let report: Value =
                    serde_json::from_slice(&out.stdout).expect("lint --json parses");
                let on_keys: Vec<&Value> = report["findings"]
                    .as_array()
                    .expect("findings")
                    .iter()
                    .filter(|f| KEYS.contains(&f["key"].as_str().unwrap_or_default()))
                    .collect();
                assert!(
                    on_keys.is_empty(),
                    "{rate} × {rtt} on {kernel}: lint finds fault with calc's advice {advice:?}: {on_keys:#?}"
                );

                let mut tune = vec!["tune", "--os", "linux"];
                tune.extend_from_slice(&path);
                let written = tune_settings(&json(&tune));
                assert_eq!(
                    written, advice,
                    "{rate} × {rtt} on {kernel}: tune writes other buffer values than calc advises"
                );
            }
        }
    }
    // The grid has paths that need changes (and, on 6.18 at 100M × 1ms, paths that do not).
    assert!(changed_somewhere > 0);
}

/// The cases: calc no longer advises less than the kernel already has, and says when
/// the default already covers the path.
#[test]
fn calc_says_when_the_default_already_covers_the_path() {
    let text = support::bin::stdout(&[
        "calc", "bdp", "--rate", "100M", "--rtt", "10ms", "--kernel", "6.18",
    ]);
    assert!(
        text.contains("net.ipv4.tcp_rmem: leave it at 4096 131072 33554432; the default already covers this path"),
        "{text}"
    );
    assert!(!text.contains("1048576"), "{text}");
    let text = support::bin::stdout(&["calc", "bdp", "--rate", "1G", "--rtt", "80ms"]);
    assert!(
        text.contains("net.ipv4.tcp_wmem = 4096 16384 33554432"),
        "{text}"
    );
    assert!(!text.contains("20971520"), "{text}");
}
