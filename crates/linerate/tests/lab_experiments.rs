//! Experiments by name, and honest interrupts (issue 23 items 3, 4 and 5), on real labs:
//! `lab run` stores its experiment as running before the first run and complete after the
//! last; Ctrl-C keeps what ran, marked interrupted, and says so; a killed runner's experiment
//! reads as incomplete; compare refuses both; two runs started together are two experiments;
//! a name resolves to its newest instance.

#![forbid(unsafe_code)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::lab::Lab;
use support::{require, root};

/// A two-variant experiment named `short` on lab `lab`: 1 s runs, `reps` repetitions.
fn experiment(dir: &Path, lab: &str, reps: u32) -> PathBuf {
    let text = format!(
        "[experiment]\nname = \"short\"\nrepetitions = {reps}\nlab_name = \"{lab}\"\n\
         [lab]\nrate = \"200M\"\ndelay = \"2ms\"\n\
         [workload]\nmode = \"tcp\"\nduration = \"1s\"\n\
         [[variant]]\nname = \"small-window\"\nsysctl = [\"recv:net.ipv4.tcp_rmem=4096 16384 16384\"]\n\
         [[variant]]\nname = \"default\"\n"
    );
    let path = dir.join(format!("{lab}.toml"));
    std::fs::write(&path, text).expect("write the experiment file");
    path
}

fn lab_run(lab: &Lab, db: &Path, file: &Path) -> Child {
    lab.cmd()
        .args(["run", "--db"])
        .arg(db)
        .arg(file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start linerate lab run")
}

fn linerate_db(lab: &Lab, db: &Path, args: &[&str]) -> Output {
    lab.linerate()
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .expect("run linerate")
}

/// `linerate experiments --json` (an empty list while the database does not exist yet).
fn experiments(lab: &Lab, db: &Path) -> Vec<Value> {
    let out = linerate_db(lab, db, &["experiments", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("experiments --json parses");
    v["experiments"].as_array().cloned().unwrap_or_default()
}

fn runs_of(e: &Value) -> u64 {
    e["variants"]
        .as_array()
        .map(|v| v.iter().filter_map(|x| x["runs"].as_u64()).sum())
        .unwrap_or(0)
}

/// Waits until the newest experiment has at least `n` stored runs.
fn wait_for_runs(lab: &Lab, db: &Path, n: u64, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let stored = experiments(lab, db).last().map_or(0, runs_of);
        if stored >= n {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("lab run ended ({status}) before {n} runs were stored");
        }
        assert!(Instant::now() < deadline, "{n} runs were never stored");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn signal(child: &Child, sig: &str) {
    let sent = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status();
    assert!(sent.is_ok_and(|s| s.success()), "kill {sig}");
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn ctrl_c_after_the_first_repetition_keeps_an_interrupted_experiment_compare_refuses() {
    require!(root());
    let lab = Lab::new('i');
    let db = lab.state().join("runs.db");
    let file = experiment(lab.state(), &lab.name, 3);
    let mut child = lab_run(&lab, &db, &file);
    // The first repetition: one run of each variant.
    wait_for_runs(&lab, &db, 2, &mut child);
    signal(&child, "-INT");
    let out = child.wait_with_output().expect("wait for lab run");
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(130), "{stdout}{stderr}");
    // The partial summary, then what was kept and how to remove it.
    assert!(stdout.contains("interrupted by SIGINT after "), "{stdout}");
    assert!(stdout.contains("small-window"), "{stdout}");
    assert!(
        stderr.contains("marked interrupted: `linerate compare` refuses it"),
        "{stderr}"
    );
    assert!(
        stderr.contains("remove them: linerate experiments --remove short-1"),
        "{stderr}"
    );
    assert!(lab.namespaces().is_empty(), "Ctrl-C removes the lab");

    let all = experiments(&lab, &db);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0]["id"], "short-1");
    assert_eq!(all[0]["status"], "interrupted");
    let kept = runs_of(&all[0]);
    assert!((2..6).contains(&kept), "{all:?}");

    // compare refuses it, and says why; asked anyway, it still gives no verdict from one
    // run per variant (never per-interval samples).
    let refused = linerate_db(&lab, &db, &["compare", "--experiment", "short"]);
    let (o, e) = text(&refused);
    assert_eq!(refused.status.code(), Some(2), "{o}{e}");
    assert!(e.contains("experiment short-1 was interrupted"), "{e}");
    assert!(!o.contains("Difference at"), "{o}");
    let allowed = linerate_db(
        &lab,
        &db,
        &[
            "compare",
            "--experiment",
            "short",
            "--allow-incomplete",
            "--json",
        ],
    );
    let (o, e) = text(&allowed);
    if kept < 4 {
        // Some variant has one run: the baseline, or the other, is left out.
        assert!(!o.contains("per-interval"), "{o}{e}");
    } else {
        let v: Value = serde_json::from_str(&o).unwrap_or_default();
        assert_eq!(v["samples"], "per-repetition", "{o}{e}");
    }

    // Removing it takes its runs along.
    let removed = linerate_db(&lab, &db, &["experiments", "--remove", "short-1"]);
    assert!(removed.status.success(), "{removed:?}");
    assert!(experiments(&lab, &db).is_empty());
}

#[test]
fn a_killed_runner_leaves_an_experiment_that_reads_incomplete() {
    require!(root());
    let lab = Lab::new('k');
    let db = lab.state().join("runs.db");
    let file = experiment(lab.state(), &lab.name, 3);
    let mut child = lab_run(&lab, &db, &file);
    wait_for_runs(&lab, &db, 1, &mut child);
    signal(&child, "-KILL");
    let _ = child.wait();
    let down = lab.run(&["down", &lab.name]);
    assert!(down.status.success(), "{down:?}");

    let all = experiments(&lab, &db);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0]["status"], "running", "{all:?}");
    let listing = linerate_db(&lab, &db, &["experiments"]);
    assert!(
        String::from_utf8_lossy(&listing.stdout).contains("running (killed)"),
        "{listing:?}"
    );
    let refused = linerate_db(&lab, &db, &["compare", "--experiment", "short"]);
    let (o, e) = text(&refused);
    assert_eq!(refused.status.code(), Some(2), "{o}{e}");
    assert!(e.contains("did not complete"), "{e}");
    assert!(e.contains("was killed"), "{e}");
}

#[test]
fn two_runs_started_together_are_two_experiments_and_the_name_is_the_newest() {
    require!(root());
    let (a, b) = (Lab::new('a'), Lab::new('b'));
    let db = a.state().join("runs.db");
    let (fa, fb) = (
        experiment(a.state(), &a.name, 1),
        experiment(b.state(), &b.name, 1),
    );
    let ca = lab_run(&a, &db, &fa);
    let cb = lab_run(&b, &db, &fb);
    let (oa, ob) = (
        ca.wait_with_output().expect("wait"),
        cb.wait_with_output().expect("wait"),
    );
    for out in [&oa, &ob] {
        let (o, e) = text(out);
        assert!(out.status.success(), "{o}{e}");
        // The run ends with where it is stored and what to run next.
        assert!(o.contains("stored 2 run(s) as experiment short-"), "{o}");
        assert!(
            o.contains("next: linerate compare --experiment short"),
            "{o}"
        );
        // Verdicts in the variants' unit, one line each; no float exponents.
        assert!(
            o.contains("against small-window (Student's t, 95 % confidence):"),
            "{o}"
        );
        assert!(!o.contains("e+0"), "{o}");
    }
    let all = experiments(&a, &db);
    let ids: Vec<&str> = all.iter().filter_map(|e| e["id"].as_str()).collect();
    assert_eq!(all.len(), 2, "{all:?}");
    assert!(
        ids.contains(&"short-1") && ids.contains(&"short-2"),
        "{ids:?}"
    );
    for e in &all {
        assert_eq!(e["status"], "complete");
        assert_eq!(runs_of(e), 2, "{e}");
    }
    // The name resolves to the newest instance; a close typo is answered with the name.
    let newest = linerate_db(&a, &db, &["history", "--experiment", "short", "--json"]);
    let v: Value = serde_json::from_slice(&newest.stdout).unwrap_or_default();
    let of: Vec<&str> = v["runs"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter_map(|x| x["experiment"]["experiment"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(of, ["short-2", "short-2"], "{v}");
    let typo = linerate_db(&a, &db, &["compare", "--experiment", "shrot"]);
    let (_, e) = text(&typo);
    assert_eq!(typo.status.code(), Some(2));
    assert!(e.contains("did you mean short?"), "{e}");
    // One repetition per variant is refused (no verdict from interval samples).
    let one = linerate_db(&a, &db, &["compare", "--experiment", "short-1"]);
    let (_, e) = text(&one);
    assert_eq!(one.status.code(), Some(2));
    assert!(e.contains("at least 2 repetitions of every variant"), "{e}");
}

#[test]
fn lab_list_with_nothing_running_says_so() {
    let lab = Lab::new('l');
    let out = lab.ok(&["list"]);
    assert!(out.starts_with("no labs"), "{out}");
}
