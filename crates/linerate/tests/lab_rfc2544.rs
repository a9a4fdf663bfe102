//! `linerate lab rfc2544` on real router labs (namespaces, veth, nftables; each lab named after
//! this process and taken down on drop, also when a test fails; every run bounded in time):
//! the search finds the NDR of an nftables rate limit of 50 kpps on the DUT, its JSON has the
//! `linerate.rfc2544/1` fields, a DUT much faster than the generator is reported as
//! generator-bound, and forwarding left off by a killed ceiling measurement is put back; `lab
//! run`'s rfc2544 experiment stores what `lab rfc2544` stores, and its report (rendered in
//! headless Chromium) shows it in frames/s.

#![forbid(unsafe_code)]

mod support;

use std::time::Duration;

use serde_json::Value;
use support::browser::{chromium, picture};
use support::lab::Lab;
use support::{program, require, root, skip};

/// The searches load both CPUs: one at a time, or each measures the other.
static LOAD: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    LOAD.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A short search of 64-byte frames, as JSON.
fn search(lab: &Lab, extra: &[&str]) -> Value {
    let mut args = vec![
        "rfc2544",
        &lab.name,
        "--frame",
        "64",
        "--trial",
        "2s",
        "--initial-trial",
        "500ms",
        "--latency-trial",
        "500ms",
        "--headroom-trial",
        "1s",
        "--json",
        "-q",
    ];
    if !extra.contains(&"--db") {
        args.push("--no-store");
    }
    args.extend_from_slice(extra);
    let out = lab.bounded(&args, Duration::from_secs(300));
    assert!(
        out.status.success(),
        "lab rfc2544 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("lab rfc2544 --json prints JSON")
}

#[test]
fn the_search_finds_the_ndr_of_a_50_kpps_rate_limit() {
    require!(root(), program("nft"));
    let _one = one_at_a_time();
    let lab = Lab::new('r');
    lab.ok(&["up", &lab.name, "--topology", "router"]);
    // The DUT forwards at most 50 000 frames/s (a token bucket; its burst is what a 2 s trial
    // adds on top: 1000 frames = 500 frames/s).
    let rules = lab.state().join("limit.nft");
    std::fs::write(
        &rules,
        "table inet lrlimit {\n  chain forward {\n    type filter hook forward priority 0; \
         policy accept;\n    limit rate over 50000/second burst 1000 packets drop\n  }\n}\n",
    )
    .expect("write the ruleset");
    let variant = format!("file:{}", rules.display());
    lab.ok(&["firewall", &lab.name, &variant]);

    let db = lab.state().join("results.db");
    let db = db.to_str().expect("a UTF-8 path");
    // A stall of this shared machine during a trial can only make a load look lossy (the
    // search errs low, never high): one more search when the first is off.
    let mut doc = search(&lab, &["--db", db]);
    let off = |d: &Value| {
        d["results"][0]["ndr_pps"]
            .as_f64()
            .is_none_or(|n| (n - 50_000.0).abs() > 2_500.0)
    };
    if off(&doc) {
        eprintln!(
            "first search off (NDR {}), searching once more",
            doc["results"][0]["ndr_pps"]
        );
        doc = search(&lab, &["--db", db]);
    }
    assert_eq!(doc["schema"], "linerate.rfc2544/1", "{doc}");
    let r = &doc["results"][0];
    assert_eq!(r["frame"], "64");
    let ndr = r["ndr_pps"].as_f64().expect("ndr_pps");
    let pdr = r["pdr_pps"].as_f64().expect("pdr_pps");
    assert!(
        (ndr - 50_000.0).abs() <= 2_500.0,
        "NDR {ndr} frames/s is not within 5 % of the 50 kpps limit: {r}"
    );
    assert!(pdr >= ndr, "PDR {pdr} below NDR {ndr}");
    // 10 Gbit/s (veth's nominal rate) carries 14 880 952 64-byte frames/s.
    let line = r["line_rate_pps"].as_f64().expect("line_rate_pps");
    assert!((line - 14_880_952.4).abs() < 1.0, "line rate {line}");
    let pct = r["ndr"]["line_rate_percent"].as_f64().expect("percent");
    assert!((pct - ndr / line * 100.0).abs() < 1e-9);
    let l1 = r["ndr"]["l1_bps"].as_f64().expect("l1_bps");
    assert!((l1 - ndr * 84.0 * 8.0).abs() < 1.0, "L1 {l1}");
    // The limit is the DUT's, far below the generator's ceiling.
    assert_eq!(r["generator_bound"], false, "{r}");
    assert!(r["generator_ceiling_pps"].as_f64().expect("ceiling") > ndr * 1.2);
    // Latency at 10, 50 and 90 % of NDR.
    let lat = r["latency_us"].as_array().expect("latency_us");
    assert_eq!(lat.len(), 3, "{r}");
    for (l, pct) in lat.iter().zip([10.0, 50.0, 90.0]) {
        assert_eq!(l["ndr_percent"], pct);
        assert!(l["p50"].as_f64().expect("p50") > 0.0, "{l}");
        assert!(l["p99"].as_f64() >= l["p50"].as_f64(), "{l}");
    }
    // The trials: the first at the maximum load, the last ones at the final duration.
    let trials = r["trials"].as_array().expect("trials");
    assert_eq!(r["trial_count"].as_u64(), Some(trials.len() as u64));
    assert!(trials.len() >= 4 && trials.len() <= 60, "{}", trials.len());
    assert_eq!(trials[0]["duration_s"], 0.5);
    assert!(trials.iter().filter(|t| t["duration_s"] == 2.0).count() >= 2);
    assert_eq!(r["converged"], true, "{r}");

    // Stored as an experiment, which `report` charts: NDR and PDR against frame size.
    let id = doc["stored_as"].as_str().expect("stored_as").to_owned();
    assert!(id.starts_with(&format!("rfc2544-{}", lab.name)), "{id}");
    let html = lab.state().join("report.html");
    let out = lab
        .linerate()
        .args(["report", "--experiment", &id, "--db", db, "-o"])
        .arg(&html)
        .output()
        .expect("run linerate report");
    assert!(out.status.success(), "report: {out:?}");
    let page = std::fs::read_to_string(&html).expect("read the report");
    assert!(page.contains("RFC 2544 throughput"), "no RFC 2544 section");
    assert!(page.contains("NDR and PDR against frame size"), "no chart");
}

#[test]
fn a_dut_faster_than_the_generator_is_reported_generator_bound() {
    require!(root());
    let _one = one_at_a_time();
    let lab = Lab::new('g');
    // No limit on the DUT: the kernel forwards between veths faster than one generator
    // thread, sharing the same CPUs, can send.
    lab.ok(&["up", &lab.name, "--topology", "router"]);
    let doc = search(&lab, &["--repeat", "1"]);
    let r = &doc["results"][0];
    assert_eq!(r["generator_bound"], true, "{r}");
    assert!(
        r["generator_bound_reason"]
            .as_str()
            .is_some_and(|s| s.contains("generator")),
        "{r}"
    );
    // And the text says so.
    let out = lab.bounded(
        &[
            "rfc2544",
            &lab.name,
            "--frame",
            "64",
            "--trial",
            "1s",
            "--initial-trial",
            "500ms",
            "--phases",
            "2",
            "--repeat",
            "1",
            "--latency-trial",
            "200ms",
            "--headroom-trial",
            "1s",
            "--no-store",
            "-q",
        ],
        Duration::from_secs(300),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(text.contains("(!) generator-bound"), "{text}");
}

#[test]
fn forwarding_left_off_by_a_killed_ceiling_measurement_is_restored_by_the_next_search() {
    require!(root());
    let _one = one_at_a_time();
    let lab = Lab::new('k');
    lab.ok(&["up", &lab.name, "--topology", "router"]);
    let forwarding = || {
        let out = lab.exec("dut", &["cat", "/proc/sys/net/ipv4/ip_forward"]);
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    assert_eq!(forwarding(), "1");
    // What a `kill -9` during the generator's ceiling leaves: the marker holding the old
    // value, and the DUT not forwarding.
    let marker = lab.state().join(format!("{}.ip-forward-off", lab.name));
    std::fs::write(&marker, "{\"ip_forward\":\"1\"}\n").expect("write the marker");
    let out = lab.exec("dut", &["sysctl", "-qw", "net.ipv4.ip_forward=0"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(forwarding(), "0");

    let out = lab.bounded(
        &[
            "rfc2544",
            &lab.name,
            "--frame",
            "64",
            "--trial",
            "200ms",
            "--initial-trial",
            "100ms",
            "--latency-trial",
            "100ms",
            "--headroom-trial",
            "200ms",
            "--repeat",
            "1",
            "--no-store",
            "--json",
            "-q",
        ],
        Duration::from_secs(300),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // One line says so, even with -q.
    let said: Vec<_> = err
        .lines()
        .filter(|l| l.contains("restored net.ipv4.ip_forward = 1"))
        .collect();
    assert_eq!(said.len(), 1, "{err}");
    assert!(said[0].contains("interrupted generator-ceiling"), "{err}");
    // Frames went through the DUT again (the warm-up fails when none do).
    let doc: Value = serde_json::from_slice(&out.stdout).expect("lab rfc2544 --json");
    let ndr = doc["results"][0]["ndr_pps"].as_f64().expect("ndr_pps");
    assert!(ndr > 0.0, "{doc}");
    assert_eq!(forwarding(), "1");
    assert!(!marker.exists(), "the marker is still there");
}

#[test]
fn a_lab_without_a_dut_is_refused_clearly() {
    require!(root());
    let lab = Lab::new('p');
    lab.ok(&["up", &lab.name]);
    let err = lab.fails(&["rfc2544", &lab.name, "--frame", "64"]);
    assert!(err.contains("router lab"), "{err}");
    // Bad values name the flag.
    let err = lab.fails(&["rfc2544", &lab.name, "--trial", "10"]);
    assert!(err.contains("--trial"), "{err}");
}

#[test]
fn lab_run_sends_pps_loads_with_the_frame_generator_and_keeps_sockets_on_request() {
    require!(root());
    let _one = one_at_a_time();
    let lab = Lab::new('f');
    let file = lab.state().join("pps.toml");
    std::fs::write(
        &file,
        "[experiment]\nname = \"pps\"\nrepetitions = 1\n[lab]\ntopology = \"router\"\n\
         [workload]\nmode = \"pps\"\nframe = 64\nduration = \"1s\"\n",
    )
    .expect("write the experiment");
    let file = file.display().to_string();
    let value = |extra: &[&str]| -> f64 {
        let mut args = vec![
            "run",
            &file,
            "--lab-name",
            &lab.name,
            "--json",
            "--no-store",
            "-q",
        ];
        args.extend_from_slice(extra);
        let out = lab.bounded(&args, Duration::from_secs(120));
        assert!(
            out.status.success(),
            "lab run {extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).expect("lab run --json");
        let run = &doc["runs"][0];
        assert_eq!(run["measure"]["unit"], "packet/s", "{doc}");
        run["measure"]["value"].as_f64().expect("a measured value")
    };
    // The plan names the generator.
    let plan = lab.ok(&["check", &file]);
    assert!(plan.contains("pps (frames: linerate gen)"), "{plan}");
    // Frames through the DUT, counted at recv.
    let frames = value(&[]);
    assert!(frames > 1000.0, "{frames} frames/s");
    // The old path, explicitly.
    let sockets = value(&["--pps-generator", "socket"]);
    assert!(sockets > 1000.0, "{sockets} packets/s");
}

#[test]
fn lab_run_s_rfc2544_experiment_is_stored_as_lab_rfc2544_stores_and_reported_in_frames_per_second()
{
    require!(root(), program("nft"));
    let _one = one_at_a_time();
    let lab = Lab::new('e');
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/lab/router-rfc2544.toml");
    let example = example.to_str().expect("a UTF-8 path");
    let db = lab.state().join("results.db");
    let db = db.to_str().expect("a UTF-8 path");
    let out = lab.bounded(
        &[
            "run",
            example,
            "--repeat",
            "2",
            "--duration",
            "1s",
            "--lab-name",
            &lab.name,
            "--db",
            db,
            "--json",
            "-q",
        ],
        Duration::from_secs(900),
    );
    assert!(
        out.status.success(),
        "lab run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_slice(&out.stdout).expect("lab run --json");
    let runs = result["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 4, "{result}");
    for r in runs {
        assert_eq!(r["measure"]["unit"], "packet/s", "{r}");
        assert!(
            r["measure"]["value"].as_f64().is_some_and(|v| v > 0.0),
            "{r}"
        );
    }
    let id = result["stored_as"].as_str().expect("stored_as").to_owned();

    // Each run's stored document is lab rfc2544's: the same schema and figures, latency at
    // three loads included.
    let history = lab
        .linerate()
        .args(["history", "--db", db, "--json"])
        .output()
        .expect("linerate history");
    let listed: Value = serde_json::from_slice(&history.stdout).expect("history --json");
    let ids: Vec<String> = listed["runs"]
        .as_array()
        .expect("runs listed")
        .iter()
        .map(|r| r["id"].to_string())
        .collect();
    assert_eq!(ids.len(), 4, "{listed}");
    let mut bound = 0;
    for run in &ids {
        let shown = lab
            .linerate()
            .args(["show", run, "--db", db, "--json"])
            .output()
            .expect("linerate show");
        let doc: Value = serde_json::from_slice(&shown.stdout).expect("show --json");
        assert_eq!(doc["schema"], "linerate.rfc2544/1", "{doc}");
        let r = &doc["result"];
        assert_eq!(r["frame"], "64", "{doc}");
        for key in [
            "ndr_pps",
            "pdr_pps",
            "line_rate_pps",
            "generator_ceiling_pps",
            "trial_seconds",
            "search_seconds",
        ] {
            assert!(r[key].as_f64().is_some(), "{key} in {doc}");
        }
        assert!(r["ndr"]["line_rate_percent"].as_f64().is_some(), "{doc}");
        assert_eq!(r["latency_us"].as_array().map(Vec::len), Some(3), "{doc}");
        assert!(r["latency_us"][0]["p50"].as_f64().is_some(), "{doc}");
        assert!(
            r["trials"].as_array().is_some_and(|t| !t.is_empty()),
            "{doc}"
        );
        assert_eq!(doc["settings"]["latency"], true, "{doc}");
        bound += usize::from(r["generator_bound"] == true);
    }

    let page = lab.state().join("r.html");
    let out = lab
        .linerate()
        .args(["report", "--experiment", "router-rfc2544", "--db", db, "-o"])
        .arg(&page)
        .output()
        .expect("run linerate report");
    assert!(out.status.success(), "report: {out:?}");
    let html = std::fs::read_to_string(&page).expect("read the report");
    // The comparison is of NDR in frames/s, not of L2 bit rates.
    assert!(html.contains(&format!("Experiment {id}")), "no title");
    assert!(
        html.contains("each run&#39;s NDR (frames/s"),
        "not NDR compared"
    );
    let in_frames = |prefix: &str| {
        ["kpps", "Mpps"]
            .iter()
            .any(|u| html.contains(&format!("{prefix}{u}")))
    };
    assert!(in_frames("mean NDR, frames/s ("), "bars not in frames/s");
    assert!(
        in_frames("the ministat table below is in "),
        "verdicts not in frames/s"
    );
    assert!(!html.contains("Mbit/s"), "a bit rate compared");
    // The RFC 2544 section: NDR and PDR in frames/s, latency at 10/50/90 %, the chart.
    assert!(html.contains("RFC 2544 throughput"), "no RFC 2544 section");
    assert!(html.contains("NDR and PDR against frame size"), "no chart");
    assert!(html.contains("Latency p50 (10/50/90 % NDR)"), "no latency");
    assert!(html.matches(" µs</td>").count() >= 8, "no latency figures");
    assert!(
        html.matches(" kfps").count() >= 8,
        "NDR and PDR not in kfps"
    );
    assert!(
        html.contains("no-firewall #2") && html.contains("conntrack #1"),
        "variants"
    );
    // Generator-bound runs carry the mark, and the warning says what it means.
    assert_eq!(html.matches("\">(!)</span>").count(), bound, "marks");
    assert_eq!(html.contains("(!) generator-bound"), bound > 0);
    // Nothing that does not apply to these runs.
    for absent in [
        "no interval samples",
        "unknown peer",
        "<th class=\"num\">RTT</th>",
        "CPU local / remote",
        "Throughput against",
        "throughput of each repetition",
    ] {
        assert!(!html.contains(absent), "{absent} in the report");
    }

    // And the page renders: something drawn, no request, no console error.
    let shot = lab.state().join("shot.png");
    let Some((browser, netlog)) = chromium(&page, &lab.state().join("browser"), &shot) else {
        skip!("no chromium binary (Debian package `chromium`, in .ci/apt-packages)");
    };
    assert!(
        shot.exists(),
        "no screenshot: {}",
        String::from_utf8_lossy(&browser.stderr)
    );
    let pic = picture(&std::fs::read(&shot).expect("read the screenshot"));
    assert!(
        pic.inked > 0.03 && pic.colours > 32,
        "blank page: {:.3} inked, {} colours",
        pic.inked,
        pic.colours
    );
    assert!(!netlog.is_null(), "chromium wrote no netlog");
    let stderr = String::from_utf8_lossy(&browser.stderr);
    assert!(
        !stderr
            .lines()
            .any(|l| l.contains(":CONSOLE") || l.contains("Uncaught")),
        "{stderr}"
    );
}
