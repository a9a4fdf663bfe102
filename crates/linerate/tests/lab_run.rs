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

fn stored_runs(db: &Path) -> usize {
    linerate_store::Store::open(db)
        .and_then(|s| s.list(&linerate_store::RunFilter::default()))
        .map_or(0, |l| l.len())
}

/// Issue 16 item 5: two `lab run`s write one results database at once (both experiments land
/// whole, numbered apart), and a third killed with `kill -9` while it stores loses at most
/// the run in progress: the file stays readable, holds no half run, and takes more runs.
#[test]
fn two_lab_runs_share_a_database_and_a_killed_one_loses_only_its_run() {
    require!(root());
    let (a, b) = (Lab::new('a'), Lab::new('b'));
    let db = a.state().join("shared.db");
    let spawn = |lab: &Lab, reps: u32, duration: &str| {
        let file = experiment(lab.state(), &lab.name, duration, reps);
        lab.cmd()
            .args(["run", "--db"])
            .arg(&db)
            .arg(&file)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run linerate")
    };
    let both = [spawn(&a, 2, "1s"), spawn(&b, 2, "1s")];
    for child in both {
        let out = child.wait_with_output().expect("wait for linerate");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let store = linerate_store::Store::open(&db).expect("open the shared database");
    let experiments = store.experiments().expect("experiments");
    let mut ids: Vec<(String, usize)> = experiments
        .iter()
        .map(|e| {
            assert_eq!(
                e.status,
                linerate_store::ExperimentStatus::Complete,
                "{e:?}"
            );
            (e.id.clone(), e.runs() as usize)
        })
        .collect();
    ids.sort();
    assert_eq!(
        ids,
        [("short-1".to_owned(), 4), ("short-2".to_owned(), 4)],
        "two experiments of one name, numbered apart, each with all its runs"
    );
    assert_eq!(stored_runs(&db), 8);
    drop(store);

    // A third writer, killed as soon as its first run has landed (the next is then being
    // measured or stored).
    let c = Lab::new('c');
    let before = stored_runs(&db);
    let mut child = spawn(&c, 3, "1s");
    let deadline = Instant::now() + Duration::from_secs(60);
    while stored_runs(&db) == before && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().expect("SIGKILL"); // SIGKILL
    let _ = child.wait();
    let landed = stored_runs(&db) - before;
    assert!((1..6).contains(&landed), "{landed} runs of 6 landed");
    let store = linerate_store::Store::open(&db).expect("the database still opens");
    assert_eq!(store.integrity_check().expect("check"), "ok");
    assert!(store.incomplete_runs().expect("runs").is_empty());
    let killed = store
        .experiments()
        .expect("experiments")
        .into_iter()
        .find(|e| e.id == "short-3")
        .expect("the killed experiment is listed");
    assert_ne!(killed.status, linerate_store::ExperimentStatus::Complete);
    drop(store);
    // Each run builds its lab and removes it, so the kill may land between one run's teardown
    // and the next one's build: then `lab down` finds nothing, says so and leaves nothing.
    let down = c
        .cmd()
        .args(["down", &c.name])
        .output()
        .expect("run lab down");
    let said = String::from_utf8_lossy(&down.stderr);
    assert!(
        down.status.success() || said.contains("no lab named"),
        "lab down after kill -9: {said}"
    );
    assert!(c.namespaces().is_empty(), "lab down left namespaces");
    // And it takes the next experiment.
    let out = spawn(&c, 1, "1s").wait_with_output().expect("wait");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stored_runs(&db), before + landed + 2);
    for lab in [&a, &b, &c] {
        assert!(lab.namespaces().is_empty());
    }
}
