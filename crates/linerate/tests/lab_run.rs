//! `linerate lab run` for real: a short experiment runs interleaved on real labs, and killing
//! the runner (Ctrl-C or kill -9) followed by `lab down` leaves no namespace.

#![forbid(unsafe_code)]

mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::lab::Lab;
use support::{require, root};

fn experiment(dir: &Path, lab: &str, duration: &str, reps: u32) -> std::path::PathBuf {
    let text = format!(
        "[experiment]\nname = \"short\"\nrepetitions = {reps}\nlab_name = \"{lab}\"\n\
         [lab]\nrate = \"200M\"\ndelay = \"2ms\"\n\
         [workload]\nmode = \"tcp\"\nduration = \"{duration}\"\n\
         [[variant]]\nname = \"small-window\"\nsysctl = [\"recv:net.ipv4.tcp_rmem=4096 16384 16384\"]\n\
         [[variant]]\nname = \"default\"\n"
    );
    let path = dir.join("short.toml");
    std::fs::write(&path, text).expect("write the experiment file");
    path
}

#[test]
fn a_short_experiment_runs_interleaved_and_cleans_up() {
    require!(root());
    let lab = Lab::new('r');
    let dir = lab.state();
    let file = experiment(dir, &lab.name, "1s", 2);
    let db = dir.join("runs.db");
    let html = dir.join("report.html");
    let o = lab
        .cmd()
        .args(["run", "--json", "--db"])
        .arg(&db)
        .arg("--html")
        .arg(&html)
        .arg(&file)
        .output()
        .expect("run linerate");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    assert_eq!(v["schema"], "linerate.lab-run/1");
    let order: Vec<u64> = v["runs"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|r| r["slot"]["variant"].as_u64())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(order, [0, 1, 0, 1], "variants interleaved A B A B");
    let mean = |i: usize| {
        let vals: Vec<f64> = v["variants"][i]["values"]
            .as_array()
            .map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect())
            .unwrap_or_default();
        assert_eq!(vals.len(), 2, "{v}");
        vals.iter().sum::<f64>() / 2.0
    };
    // 16 KiB receive window over a 4 ms RTT: ~16 KiB/4 ms ≈ 30 Mbit/s at most; default reaches the 200M link.
    assert!(
        mean(0) < 60e6 && mean(1) > 120e6,
        "small {} default {}",
        mean(0),
        mean(1)
    );
    let page = std::fs::read_to_string(&html).unwrap_or_default();
    assert!(
        page.contains("<title>Experiment short-"),
        "the --html report was not written"
    );
    // Every run went to the results store as a repetition of its variant.
    let h = lab
        .linerate()
        .args(["history", "--json", "--db"])
        .arg(&db)
        .output()
        .expect("run linerate history");
    let hv: serde_json::Value = serde_json::from_slice(&h.stdout).unwrap_or_default();
    let stored: Vec<(String, u64)> = hv["runs"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|r| {
                    let e = &r["experiment"];
                    (
                        e["variant"].as_str().unwrap_or("").to_owned(),
                        e["repetition"].as_u64().unwrap_or(0),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let mut stored = stored;
    stored.sort();
    assert_eq!(
        stored,
        [
            ("default".to_owned(), 1),
            ("default".to_owned(), 2),
            ("small-window".to_owned(), 1),
            ("small-window".to_owned(), 2)
        ],
        "{hv}"
    );
    assert!(lab.namespaces().is_empty());
}

#[test]
fn killing_the_runner_then_lab_down_leaves_nothing() {
    require!(root());
    for (letter, signal) in [('k', "-KILL"), ('i', "-INT")] {
        let lab = Lab::new(letter);
        let file = experiment(lab.state(), &lab.name, "30s", 1);
        let child = lab
            .cmd()
            .args(["run", "--no-store"])
            .arg(&file)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run linerate");
        let deadline = Instant::now() + Duration::from_secs(10);
        while lab.namespaces().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(500));
        assert!(!lab.namespaces().is_empty(), "the run never started");
        let sent = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status();
        assert!(sent.is_ok_and(|s| s.success()));
        let out = child.wait_with_output().expect("wait for linerate");
        if signal == "-INT" {
            // Stopped cleanly by SIGINT: 128 + 2, as every command (issue 23 item 7).
            assert_eq!(out.status.code(), Some(130), "{out:?}");
            assert!(
                String::from_utf8_lossy(&out.stderr).contains("interrupted"),
                "{out:?}"
            );
            assert!(
                lab.namespaces().is_empty(),
                "Ctrl-C must tear the lab down by itself"
            );
        } else {
            let down = lab.cmd().args(["down", &lab.name]).output();
            assert!(down.is_ok_and(|d| d.status.success()));
        }
        assert!(
            lab.namespaces().is_empty(),
            "{signal}: namespaces left behind"
        );
    }
}
