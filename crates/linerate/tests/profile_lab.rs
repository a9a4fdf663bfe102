//! Profiles of lab runs through the binary (issue 15): `lab run --profile` on a router lab with
//! and without 1000 nftables rules stores a profile with every run; `compare` proves the
//! nftables evaluation's share grew, with a confidence from the repetitions; the differential
//! flame graph renders in headless Chromium; the report embeds it without scripts; a stored
//! breakdown with a field missing is an error naming it (issue 29). Also: a
//! TCP run's profile shows the kernel's copy routines, and a command that exits at once still
//! gives a complete, valid profile.

#![forbid(unsafe_code)]

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use support::bin::{linerate, run_bounded};
use support::browser::{chromium, picture};
use support::lab::Lab;
use support::{require, root, tempdir};

fn experiment(dir: &Path, lab: &str) -> std::path::PathBuf {
    let text = format!(
        "[experiment]\nname = \"fw-profile\"\nrepetitions = 3\nlab_name = \"{lab}\"\n\
         [lab]\ntopology = \"router\"\n\
         [workload]\nmode = \"pps\"\nframe = 64\nduration = \"1s\"\nstreams = 1\n\
         [[variant]]\nname = \"no-firewall\"\nfirewall = \"none\"\n\
         [[variant]]\nname = \"1000-rules\"\nfirewall = \"stateless:1000\"\n"
    );
    let path = dir.join("fw-profile.toml");
    std::fs::write(&path, text).expect("write the experiment file");
    path
}

fn change<'a>(list: &'a Value, name: &str) -> Option<&'a Value> {
    list.as_array()?.iter().find(|c| c["name"] == name)
}

#[test]
fn the_nftables_share_grows_with_the_rule_count_with_a_confidence() {
    require!(root());
    let lab = Lab::new('p');
    let dir = lab.state();
    let file = experiment(dir, &lab.name);
    let db = dir.join("runs.db");
    let o = run_bounded(
        lab.cmd()
            .args(["run", "--profile", "-q", "--db"])
            .arg(&db)
            .arg(&file),
        Duration::from_secs(180),
    );
    assert!(o.status.success(), "{o:?}");
    assert!(lab.namespaces().is_empty(), "{:?}", lab.namespaces());

    let graphs = dir.join("graphs");
    let o = run_bounded(
        linerate()
            .args(["compare", "--experiment", "fw-profile", "--json", "--db"])
            .arg(&db)
            .arg("--diff-flamegraphs")
            .arg(&graphs),
        Duration::from_secs(60),
    );
    assert!(o.status.success(), "{o:?}");
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let p = &v["profiles"][0];
    assert_eq!(p["variant"], "1000-rules", "{v}");
    assert_eq!(
        (
            p["baseline_profiles"].as_u64(),
            p["variant_profiles"].as_u64()
        ),
        (Some(3), Some(3))
    );
    let nft = change(&p["functions"], "nft_do_chain")
        .unwrap_or_else(|| panic!("nft_do_chain not among the changes: {p}"));
    eprintln!("nft_do_chain: {nft}");
    assert_eq!(nft["significant"], true, "{nft}");
    assert!(
        nft["difference_points"].as_f64().unwrap_or(0.0) > 5.0,
        "{nft}"
    );
    let sub = change(&p["subsystems"], "nftables").expect("nftables subsystem");
    assert_eq!(sub["significant"], true, "{sub}");

    // The text says the same in words.
    let o = linerate()
        .args(["compare", "--experiment", "fw-profile", "--db"])
        .arg(&db)
        .output()
        .expect("run compare");
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("nft_do_chain"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.ends_with("grew"), "{line}");

    // The differential flame graph: a searchable SVG that renders.
    let svg_path = graphs.join("1000-rules.diff.svg");
    let svg = std::fs::read_to_string(&svg_path).expect("differential flame graph written");
    assert!(
        svg.contains("nft_do_chain") && svg.contains("<script"),
        "not inferno's SVG"
    );
    let shot = dir.join("flame.png");
    match chromium(&svg_path, &dir.join("browser"), &shot) {
        None => support::skipping(format_args!("no chromium binary: the SVG is not rendered")),
        Some((out, _)) => {
            assert!(shot.exists(), "{}", String::from_utf8_lossy(&out.stderr));
            let pic = picture(&std::fs::read(&shot).expect("screenshot"));
            assert!(
                pic.inked > 0.05 && pic.colours > 16,
                "blank: {} {}",
                pic.inked,
                pic.colours
            );
        }
    }

    // The report embeds the graphs, inert (the report runs no scripts).
    let page = dir.join("report.html");
    let o = linerate()
        .args(["report", "--experiment", "fw-profile", "-o"])
        .arg(&page)
        .arg("--db")
        .arg(&db)
        .output()
        .expect("run report");
    assert!(o.status.success(), "{o:?}");
    let html = std::fs::read_to_string(&page).expect("report");
    assert!(
        html.contains("Where the CPU time went"),
        "no profile section"
    );
    assert!(
        html.contains("<iframe class=\"flame\" sandbox"),
        "no embedded graph"
    );
    assert!(html.contains("nft_do_chain"));
    assert!(
        !html.contains("<script") && !html.contains("&lt;script"),
        "a script in the report"
    );

    // A stored breakdown is read through its type: a field gone is an error naming the run
    // and the field, not a subsystem share of zero.
    let conn = rusqlite::Connection::open(&db).expect("open the store");
    let run: i64 = conn
        .query_row("SELECT min(run_id) FROM run_profiles", [], |r| r.get(0))
        .expect("a stored profile");
    conn.execute(
        "UPDATE run_profiles SET breakdown = json_remove(breakdown, '$.by_subsystem') \
         WHERE run_id = ?1",
        [run],
    )
    .expect("remove by_subsystem");
    drop(conn);
    let o = linerate()
        .args(["compare", "--experiment", "fw-profile", "--db"])
        .arg(&db)
        .output()
        .expect("run compare");
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("run {run}'s stored profile"))
            && err.contains("missing field `by_subsystem`"),
        "{err}"
    );
}

#[test]
fn a_tcp_run_shows_the_kernel_copy_routines() {
    require!(root());
    // The server runs (and listens) before the profile starts; the profile lasts as long as
    // the client does.
    let srv = support::traffic::linerate_server(&support::traffic::LOOPBACK_SERVER);
    let port = srv.port.to_string();
    let o = run_bounded(
        linerate().args([
            "profile",
            "--json",
            "--",
            support::bin::BIN,
            "client",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            "1s",
            "--no-store",
        ]),
        Duration::from_secs(60),
    );
    assert!(o.status.success(), "{o:?}");
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let subsystems = &v["by_subsystem"];
    let copy = change(subsystems, "user copy").unwrap_or_else(|| panic!("{v}"));
    let tcp = change(subsystems, "TCP").unwrap_or_else(|| panic!("{v}"));
    eprintln!("tcp run: user copy {copy}, TCP {tcp}");
    assert!(copy["samples"].as_u64().unwrap_or(0) > 0);
    let cpus: f64 = v["by_cpu"]
        .as_array()
        .expect("by_cpu[]")
        .iter()
        .filter_map(|c| c["percent"].as_f64())
        .sum();
    assert!((cpus - 100.0).abs() < 0.5, "{v}");
    assert!(!v["by_context"].as_array().expect("by_context[]").is_empty());
}

#[test]
fn a_command_that_exits_at_once_gives_a_complete_profile() {
    require!(root());
    let dir = tempdir();
    let folded = dir.path().join("short.folded");
    let o = run_bounded(
        linerate()
            .args(["profile", "--json", "-t", "10s", "--folded"])
            .arg(&folded)
            .args(["--", "true"]),
        Duration::from_secs(120),
    );
    assert!(o.status.success(), "{o:?}");
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    // It ended with the command, not after 10 s.
    assert!(v["duration_s"].as_f64().unwrap_or(99.0) < 5.0, "{v}");
    let text = std::fs::read_to_string(&folded).expect("folded written");
    let sum: u64 = text
        .lines()
        .map(|l| {
            l.rsplit_once(' ')
                .expect("STACK COUNT")
                .1
                .parse::<u64>()
                .expect("count")
        })
        .sum();
    assert_eq!(sum, v["samples"].as_u64().expect("samples"), "{text}");
}
