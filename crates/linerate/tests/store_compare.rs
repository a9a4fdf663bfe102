//! `linerate compare` through the binary: the right samples, the verdicts (checked against
//! Debian's ministat on the same numbers, and against `lab run`'s on the runs it stored), the
//! warnings, and the exit codes.

#![forbid(unsafe_code)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Command;

use support::bin::{ok_db, run_db};
use support::lab::Lab;
use support::{data, program, require, root, tempdir};

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap()
}

/// The real rate-sweep experiment, variants interleaved as measured.
fn experiment(db: &Path) {
    for rep in 1..=3 {
        for rate in [100, 200, 400, 800] {
            let file = data(&format!("report/sweep/rate{rate}-r{rep}.json"));
            let variant = if rate == 100 {
                "baseline".to_owned()
            } else {
                format!("{rate}M")
            };
            ok_db(
                db,
                &[
                    "import",
                    "--experiment",
                    "sweep",
                    "--variant",
                    &variant,
                    file.to_str().unwrap(),
                ],
            );
        }
    }
}

#[test]
fn experiment_variants_are_compared_one_value_per_repetition() {
    let dir = tempdir();
    let db = dir.path().join("runs.db");
    experiment(&db);
    let out = json(&ok_db(&db, &["compare", "--experiment", "sweep", "--json"]));
    assert_eq!(out["schema"], "linerate.compare/1");
    assert_eq!(out["samples"], "per-repetition");
    let sets = out["sets"].as_array().unwrap();
    assert_eq!(
        sets.iter()
            .map(|s| s["label"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["baseline", "200M", "400M", "800M"]
    );
    // One value per repetition: the mean is the mean of the three runs' received rates.
    let received: Vec<f64> = (1..=3)
        .map(|rep| {
            let doc = json(
                &std::fs::read_to_string(data(&format!("report/sweep/rate100-r{rep}.json")))
                    .unwrap(),
            );
            doc["end"]["sum_received"]["bits_per_second"]
                .as_f64()
                .unwrap()
        })
        .collect();
    assert_eq!(sets[0]["n"], 3);
    let mean = received.iter().sum::<f64>() / 3.0;
    assert!((sets[0]["mean"].as_f64().unwrap() - mean).abs() < 1e-6);
    let (lo, hi) = (
        sets[0]["ci_low"].as_f64().unwrap(),
        sets[0]["ci_high"].as_f64().unwrap(),
    );
    assert!(lo < mean && mean < hi);
    let comparisons = out["comparisons"].as_array().unwrap();
    assert_eq!(comparisons.len(), 3);
    for c in comparisons {
        assert_eq!(c["significant"], true, "{c}");
        assert!(c["ci_low"].as_f64().unwrap() > 0.0, "{c}");
    }
    assert!(
        out["warnings"][0]
            .as_str()
            .unwrap()
            .starts_with("too few values for a trustworthy verdict")
    );

    let text = ok_db(&db, &["compare", "--experiment", "sweep"]);
    assert!(
        text.starts_with("Compared: one value per repetition"),
        "{text}"
    );
    assert!(text.contains("Difference at 95.0% confidence"), "{text}");
    assert!(text.contains("200M vs baseline: +"), "{text}");
    assert!(text.contains("warning: too few values"), "{text}");
    let out = run_db(
        &db,
        &["compare", "--experiment", "sweep", "--fail-on-difference"],
    );
    assert_eq!(out.status.code(), Some(1));
}

/// Writes the per-interval throughput of a run, in Mbit/s, one value a line, for ministat.
fn interval_file(db: &Path, id: &str, path: &Path) -> Vec<f64> {
    let doc = json(&ok_db(db, &["show", id, "--json"]));
    let values: Vec<f64> = doc["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["sum"]["omitted"] != true)
        .map(|i| i["sum"]["bits_per_second"].as_f64().unwrap() / 1e6)
        .collect();
    let text: String = values.iter().map(|v| format!("{v:?}\n")).collect();
    std::fs::write(path, text).unwrap();
    values
}

/// The verdict's first lines (`Difference at …`, `D +/- E`), trimmed.
fn verdict(s: &str) -> Vec<String> {
    let lines: Vec<&str> = s.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("Difference at") || l.starts_with("No difference"))
        .unwrap();
    lines[at..(at + 2).min(lines.len())]
        .iter()
        .map(|l| l.trim().to_owned())
        .collect()
}

/// `D +/- E` as numbers.
fn difference_and_error(line: &str) -> (f64, f64) {
    let (d, e) = line.split_once(" +/- ").unwrap();
    (d.parse().unwrap(), e.parse().unwrap())
}

#[test]
fn single_runs_are_compared_per_interval_as_ministat_does() {
    let dir = tempdir();
    let db = dir.path().join("runs.db");
    experiment(&db);
    // Run 1: baseline repetition 1 (100 Mbit/s); run 2: 200M repetition 1.
    let out = json(&ok_db(&db, &["compare", "1", "2", "--json"]));
    assert_eq!(out["samples"], "per-interval");
    assert_eq!(out["sets"][0]["n"], 6); // 3 s at 0.5 s intervals
    assert_eq!(out["comparisons"][0]["t_source"], "exact");
    let text = ok_db(&db, &["compare", "1", "2"]);
    assert!(
        text.starts_with("Compared: per-interval throughput"),
        "{text}"
    );

    // Debian's ministat on the same values gives the same verdict and difference, and the
    // same error to the precision of its printed t table (3 decimals: compare takes the exact
    // quantile, as lab run does); `linerate stat`, which keeps ministat's table, gives
    // ministat's digits exactly.
    let (a, b) = (dir.path().join("run1"), dir.path().join("run2"));
    interval_file(&db, "1", &a);
    interval_file(&db, "2", &b);
    require!(program("ministat"));
    let ministat = Command::new("ministat")
        .arg(&a)
        .arg(&b)
        .output()
        .expect("run ministat");
    let theirs = String::from_utf8(ministat.stdout).unwrap();
    let (ours_v, theirs_v) = (verdict(&text), verdict(&theirs));
    assert_eq!(ours_v[0], theirs_v[0], "ours:\n{text}\nministat:\n{theirs}");
    let (d, e) = difference_and_error(&ours_v[1]);
    let (their_d, their_e) = difference_and_error(&theirs_v[1]);
    assert_eq!(d, their_d, "ours:\n{text}\nministat:\n{theirs}");
    let t = out["comparisons"][0]["t"].as_f64().unwrap();
    assert!(
        (e - their_e).abs() <= their_e * 0.0005 / t + 1e-3,
        "error {e} against ministat's {their_e} (t = {t}):\n{text}\nministat:\n{theirs}"
    );
    let stat = support::bin::stdout(&["stat", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(
        verdict(&stat),
        theirs_v,
        "stat:\n{stat}\nministat:\n{theirs}"
    );
}

#[test]
fn autocorrelated_intervals_are_warned_about() {
    let dir = tempdir();
    let db = dir.path().join("runs.db");
    // A real run whose 20 intervals are made to climb steadily, as a flow in slow start does.
    let mut doc = json(&std::fs::read_to_string(data("store/tcp.json")).unwrap());
    let one = doc["intervals"][0].clone();
    let climbing: Vec<serde_json::Value> = (0..20)
        .map(|i| {
            let mut iv = one.clone();
            let bps = 1e8 + 1e7 * f64::from(i) + if i % 2 == 0 { 3e6 } else { -3e6 };
            iv["sum"]["bits_per_second"] = bps.into();
            iv["streams"][0]["bits_per_second"] = bps.into();
            iv
        })
        .collect();
    doc["intervals"] = climbing.into();
    let climbing = dir.path().join("climbing.json");
    std::fs::write(&climbing, doc.to_string()).unwrap();
    ok_db(
        &db,
        &[
            "import",
            climbing.to_str().unwrap(),
            data("store/tcp.json").to_str().unwrap(),
        ],
    );
    let out = json(&ok_db(&db, &["compare", "1", "2", "--json"]));
    let warnings: Vec<&str> = out["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        warnings.iter().any(|w| w.starts_with("run 1: consecutive intervals are autocorrelated (lag-1 r = 0.")),
        "{warnings:?}"
    );
    assert!(out["sets"][0]["lag1_autocorrelation"].as_f64().unwrap() > 0.5);
}

#[test]
fn bad_requests_fail_clearly() {
    let dir = tempdir();
    let db = dir.path().join("runs.db");
    ok_db(&db, &["import", data("store/tcp.json").to_str().unwrap()]);
    let out = run_db(&db, &["compare", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run_db(&db, &["compare", "1", "7"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no run 7"));
    ok_db(&db, &["import", data("store/udp.json").to_str().unwrap()]);
    let mixed = json(&ok_db(&db, &["compare", "1", "2", "--json"]));
    assert!(
        mixed["warnings"].as_array().unwrap().iter().any(|w| w
            .as_str()
            .unwrap()
            .starts_with("the runs are different tests (tcp send, udp send)")),
        "{mixed}"
    );
    let out = run_db(&db, &["compare", "1", "1", "-c", "100"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--confidence"),
        "{out:?}"
    );
    let out = run_db(&db, &["compare", "--experiment", "none"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no runs of experiment `none`"));
}

/// A short experiment of `mode` that `lab run` measures for real on lab `lab` (two variants,
/// two repetitions, 1 s runs), stored in `db`: lab run's JSON.
fn lab_experiment(lab: &Lab, db: &Path, mode: &str, extra: &str) -> serde_json::Value {
    let text = format!(
        "[experiment]\nname = \"digits-{mode}\"\nrepetitions = 2\nlab_name = \"{}\"\n\
         [lab]\nrate = \"200M\"\ndelay = \"1ms\"\n\
         [workload]\nmode = \"{mode}\"\nduration = \"1s\"\n{extra}\
         [[variant]]\nname = \"baseline\"\n\
         [[variant]]\nname = \"small-window\"\nsysctl = [\"recv:net.ipv4.tcp_rmem=4096 16384 16384\"]\n",
        lab.name
    );
    let file = lab.state().join(format!("{mode}.toml"));
    std::fs::write(&file, text).unwrap();
    let o = lab
        .cmd()
        .args(["run", "--json", "--db"])
        .arg(db)
        .arg(&file)
        .output()
        .expect("run linerate lab run");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The Student's t figures `lab run` and `compare` both state.
const T_FIGURES: [&str; 8] = [
    "df",
    "t",
    "difference",
    "error",
    "percent",
    "percent_error",
    "pooled_sd",
    "significant",
];

/// On the runs `lab run` measured and stored, `compare --experiment` states the same verdicts
/// to the last digit: the same values (what the lab compared, in its unit), the same exact t
/// quantile, so the same difference, error and relative error. (With ministat's table,
/// compare's error differed from lab run's in the 4th digit.) The report of those runs shows
/// their host and test bed.
#[test]
fn compare_and_lab_run_state_the_same_digits() {
    require!(root());
    let lab = Lab::new('d');
    let db = lab.state().join("runs.db");
    for (mode, extra, unit) in [
        ("tcp", "", "bit/s"),
        ("rr", "", "transaction/s"),
        ("pps", "", "packet/s"),
    ] {
        let ran = lab_experiment(&lab, &db, mode, extra);
        let variants = ran["variants"].as_array().unwrap();
        assert_eq!(variants[0]["unit"], unit, "{ran}");
        let other = &variants[1]["vs_baseline"];
        assert!(
            other.is_object(),
            "{mode}: lab run made no verdict (a run failed?): {ran}"
        );
        let name = format!("digits-{mode}");
        let compared = json(&ok_db(
            &db,
            &[
                "compare",
                "--experiment",
                &name,
                "--json",
                "--allow-incomplete",
            ],
        ));
        assert_eq!(compared["unit"], unit, "{compared}");
        let c = &compared["comparisons"][0];
        assert_eq!(c["other"], "small-window");
        assert_eq!(c["t_source"], "exact");
        for key in T_FIGURES {
            assert_eq!(
                c[key], other[key],
                "{mode}: {key}\ncompare: {c}\nlab run: {other}"
            );
        }
        // The same values went in: each set's mean is the mean of lab run's values.
        for (set, variant) in compared["sets"].as_array().unwrap().iter().zip(variants) {
            assert_eq!(set["mean"], variant["summary"]["mean"], "{mode}");
        }
        // And compare's text prints those numbers (two decimals at its scale).
        let text = ok_db(
            &db,
            &["compare", "--experiment", &name, "--allow-incomplete"],
        );
        let line = text
            .lines()
            .find(|l| l.starts_with("small-window vs baseline: "))
            .unwrap_or_else(|| panic!("{text}"));
        let percent = other["percent"].as_f64().unwrap();
        let percent_error = other["percent_error"].as_f64().unwrap();
        assert!(
            line.contains(&format!("({percent:+.2}% ± {percent_error:.2}%)")),
            "{line}\nlab run: {other}"
        );
    }

    // The report of a lab run names its host and test bed.
    let page = lab.state().join("tcp.html");
    ok_db(
        &db,
        &[
            "report",
            "--experiment",
            "digits-tcp",
            "-o",
            page.to_str().unwrap(),
        ],
    );
    let html = std::fs::read_to_string(&page).unwrap();
    let facts = &html[html.find("<h2>Host facts</h2>").unwrap()..];
    for fact in [
        "<th>kernel</th><td>Linux ",
        "<th>CPU model</th>",
        "<th>CPU cores</th>",
        "<th>topology</th><td>pair</td>",
        "<th>link emulation</th>",
        "<th>links</th><td>l0: mtu 1500, fwd 200 Mbit/s",
    ] {
        assert!(facts.contains(fact), "no {fact:?} in\n{facts}");
    }
    assert!(!html.contains("unknown peer"));
    // The frame generator's pps runs have no interval samples: said once, in packets/s.
    let page = lab.state().join("pps.html");
    ok_db(
        &db,
        &[
            "report",
            "--experiment",
            "digits-pps",
            "-o",
            page.to_str().unwrap(),
        ],
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("interval samples").count(), 1, "{html}");
    assert!(html.contains("<th class=\"num\">Lost</th>"));
    assert!(!html.contains("<th class=\"num\">RTT</th>"));
    assert!(lab.namespaces().is_empty());
}
