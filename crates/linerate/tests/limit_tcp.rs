//! Issue 30's TCP cases: the limit the client names after a test, from the evidence both
//! sides sampled, against the path's ceiling (`--path-rate`).
//! - the issue's path made longer (a lab pair at 1 Gbit/s, 40 ms RTT, the namespace's default
//!   buffers, cubic): the send buffer, prescribed as `calc bdp` prescribes `tcp_wmem` for the
//!   path. At the issue's 20 ms this machine measured 714–897 Mbit/s (76–95 % of the
//!   ceiling) in ten runs: a run above 90 % is at the ceiling by the verdict's own rule, so
//!   the test doubles the RTT to make the buffer hold the flow to about half;
//! - a receiver whose `tcp_rmem` maximum is far below the BDP: the receive window, the
//!   receiver's key prescribed;
//! - a receiver pinned to a CPU a busy loop shares: CPU, the receiver's side;
//! - an iperf3 server: the sender's verdict alone, the receiver's side said unseen.
//! - random loss on a 50 Mbit/s lab link: congestion, the Mathis bound within 30 % of the rate;
//! - a 100 Mbit/s lab link with the default (ample) buffers: at the ceiling (≥ 95 % of calc's
//!   goodput), nothing prescribed.

#![forbid(unsafe_code)]

mod support;

use std::time::Duration;

use serde_json::Value;
use support::bin::run_bounded;
use support::lab::Lab;
use support::netns::Netns;
use support::spinner::Spinner;
use support::traffic::{Proc, client, iperf3_server, linerate_server_in};
use support::{namespaces, program, require, root};

const SERVER: &str = "198.18.78.2";

/// Two namespaces joined by a veth pair, 198.18.78.1 (client) and .2 (server).
fn pair(tag: &str) -> (Netns, Netns) {
    Netns::veth_pair(&format!("lt{tag}"), "198.18.78")
}

fn sysctl(ns: &Netns, kv: &str) {
    let out = ns
        .exec("sysctl")
        .args(["-q", "-w", kv])
        .output()
        .expect("run sysctl");
    assert!(out.status.success(), "sysctl {kv}: {out:?}");
}

/// Runs a `linerate client … --json` (bounded), which must succeed; its limit object.
fn limit_of(cmd: &mut std::process::Command) -> Value {
    let out = run_bounded(cmd.args(["--no-store", "--json"]), Duration::from_secs(40));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    v["linerate"]["limit"].clone()
}

/// A 2 s TCP test from `client` to `server`; the limit object.
fn tcp(client: &Netns, server: &Proc, args: &[&str]) -> Value {
    limit_of(
        client
            .linerate()
            .args(["client", SERVER, "-p", &server.port.to_string(), "-t", "2"])
            .args(args),
    )
}

/// The issue's 1 Gbit/s path at 40 ms RTT, not its 20 ms: on this kernel (6.18) the default
/// 4 MiB `tcp_wmem` carries 1G × 20 ms (2.35 MB) in most runs — five runs by hand gave 941, 800,
/// 941, 942, 941 Mbit/s, "at the ceiling" four times, "send buffer" at 800 — so at 20 ms the
/// right verdict is mostly the ceiling; at 40 ms the buffer holds the flow to about half.
#[test]
fn the_issue_s_path_with_default_buffers_is_send_buffer_limited_as_calc_says() {
    require!(root());
    let lab = Lab::new('s');
    let l = lab_test(
        &lab,
        &["--delay", "20ms"],
        "1G",
        &["-t", "6", "-O", "2", "-C", "cubic"],
    );
    // The namespace's defaults: tcp_wmem's maximum 4 MiB, below 2 × BDP (5 MB).
    let wmem = lab.exec("gen", &["sysctl", "-n", "net.ipv4.tcp_wmem"]);
    assert!(
        String::from_utf8_lossy(&wmem.stdout).ends_with("4194304\n"),
        "{wmem:?}"
    );
    eprintln!("{}: {}", l["kind"], l["why"]);
    assert_eq!(l["kind"], "send_buffer", "{l}");
    assert_eq!(l["ceiling"]["source"], "--path-rate", "{l}");
    // The prescription is calc bdp's tcp_wmem for this path (the least RTT measured: 40 ms).
    let calc = support::bin::linerate()
        .args(["calc", "bdp", "--rate", "1G", "--rtt", "40ms", "--json"])
        .output()
        .expect("run calc bdp");
    let calc: Value = serde_json::from_slice(&calc.stdout).expect("calc JSON");
    let wmem = calc["linux_buffers"]["keys"]
        .as_array()
        .and_then(|k| k.iter().find(|k| k["key"] == "net.ipv4.tcp_wmem"))
        .map(|k| k["value"].clone())
        .expect("calc's tcp_wmem");
    let p = &l["prescription"];
    assert_eq!(p["side"], "client", "{p}");
    assert_eq!(p["settings"][0]["key"], "net.ipv4.tcp_wmem", "{p}");
    assert_eq!(p["settings"][0]["value"], wmem, "{p}");
    assert!(
        p["apply"]
            .as_str()
            .is_some_and(|a| a.starts_with("linerate tune --set") && a.ends_with("--apply")),
        "{p}"
    );
    assert_eq!(p["rollback"], "linerate tune --rollback");
    assert!(p["predicted_bps"].as_f64().is_some_and(|b| b > 9e8), "{p}");
}

#[test]
fn a_receiver_buffer_far_below_the_bdp_is_the_receive_window() {
    require!(namespaces());
    let (client, server_ns) = pair("r");
    // 16 KiB at most: about 8 KiB of window, far below the BDP (veth has no line rate:
    // 100 Gbit/s stands for "more than this host moves").
    sysctl(&server_ns, "net.ipv4.tcp_rmem=4096 16384 16384");
    let server = linerate_server_in(&server_ns, &[]);
    let l = tcp(&client, &server, &["--path-rate", "100G"]);
    eprintln!("{}: {}", l["kind"], l["why"]);
    assert_eq!(l["kind"], "receive_window", "{l}");
    let p = &l["prescription"];
    assert_eq!(p["side"], "server", "{p}");
    assert_eq!(p["settings"][0]["key"], "net.ipv4.tcp_rmem", "{p}");
}

#[test]
fn a_receiver_pinned_beside_a_busy_loop_is_cpu_on_the_receiver_side() {
    require!(namespaces());
    let (client, server_ns) = pair("c");
    let server = linerate_server_in(&server_ns, &[]);
    let Some(_spinner) = Spinner::start() else {
        eprintln!("skipped: one CPU, no core to share with the receiver");
        return;
    };
    let l = tcp(&client, &server, &["--path-rate", "100G", "--affinity=1/0"]);
    eprintln!("{}: {}", l["kind"], l["why"]);
    assert_eq!(l["kind"], "cpu", "{l}");
    assert_eq!(l["cpu"]["side"], "server", "{l}");
    assert_eq!(l["cpu"]["cpu"], 0, "{l}");
    assert_eq!(l["cpu"]["one_core_full"], true, "{l}");
    assert!(l.get("prescription").is_none(), "{l}");
}

#[test]
fn with_an_iperf3_server_only_the_sender_side_is_judged() {
    require!(program("iperf3"));
    let server = iperf3_server(true);
    let out = client(
        None,
        server.port,
        &["-t", "1", "--no-store", "--json", "--path-rate", "10G"],
    );
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let l = &v["linerate"]["limit"];
    let unseen = l["unseen"].to_string();
    assert!(unseen.contains("the receiver (server)"), "{l}");
    assert!(unseen.contains("iperf3"), "{l}");
    assert!(
        l["streams"][0]["figures"]
            .as_array()
            .is_some_and(|f| !f.is_empty()),
        "{l}"
    );
    assert_ne!(l["cpu"]["side"], "server", "{l}");
}

/// A lab pair with `link` options, a linerate server in recv and a client (`args`) in gen told
/// the path's rate; the client's limit object.
fn lab_test(lab: &Lab, link: &[&str], rate: &str, args: &[&str]) -> Value {
    let mut up = vec![
        "up",
        lab.name.as_str(),
        "--topology",
        "pair",
        "--rate",
        rate,
    ];
    up.extend_from_slice(link);
    lab.ok(&up);
    let ns = |node: &str| format!("lr-{}-{node}", lab.name);
    let server = support::traffic::serve(
        support::netns::linerate_in(&ns("recv")).args(["server", "-p", "0"]),
    );
    limit_of(
        support::netns::linerate_in(&ns("gen"))
            .args(["client", "198.18.0.2", "-p", &server.port.to_string()])
            .args(["--path-rate", rate])
            .args(args),
    )
}

#[test]
fn random_loss_on_the_link_is_congestion_with_the_mathis_bound_near_the_rate() {
    require!(root());
    let lab = Lab::new('l');
    let l = lab_test(
        &lab,
        &["--delay", "10ms", "--loss", "0.5%"],
        "50M",
        &["-t", "5", "-C", "cubic"],
    );
    eprintln!("{}: {}", l["kind"], l["why"]);
    assert_eq!(l["kind"], "congestion", "{l}");
    let (rate, mathis) = (l["bits_per_second"].as_f64(), l["mathis_bps"].as_f64());
    // Five runs by hand: Mathis 0.81–0.99 of the measured rate.
    assert!(
        rate.zip(mathis)
            .is_some_and(|(r, m)| (m / r - 1.0).abs() <= 0.3),
        "{l}"
    );
}

#[test]
fn a_100_mbit_link_with_ample_buffers_is_at_the_ceiling_with_nothing_to_prescribe() {
    require!(root());
    let lab = Lab::new('e');
    let l = lab_test(&lab, &["--delay", "5ms"], "100M", &["-t", "5", "-O", "1"]);
    eprintln!("{}: {}", l["kind"], l["why"]);
    assert_eq!(l["kind"], "at_ceiling", "{l}");
    let (rate, goodput) = (
        l["bits_per_second"].as_f64(),
        l["ceiling"]["goodput_bps"].as_f64(),
    );
    assert!(rate.zip(goodput).is_some_and(|(r, g)| r >= 0.95 * g), "{l}");
    assert!(l.get("prescription").is_none(), "{l}");
}

#[test]
fn the_example_walks_one_path_from_its_default_limits_to_its_ceiling() {
    require!(root());
    let lab = Lab::new('w');
    let dir = support::tempdir();
    let db = dir.path().join("runs.db");
    let example = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/lab/why-not-line-rate.toml"
    );
    let out = run_bounded(
        lab.linerate()
            .args(["lab", "run", example, "--repeat", "2", "--db"])
            .arg(&db),
        Duration::from_secs(300),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = |variant: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(variant) && l.contains("limit:"))
            .unwrap_or_else(|| panic!("no limit for {variant}: {text}"))
            .to_owned()
    };
    assert!(
        line("kernel-default").contains("limit: send buffer"),
        "{text}"
    );
    assert!(
        line("recv-64KiB").contains("limit: receive window"),
        "{text}"
    );
    assert!(
        line("calc-bdp").contains("limit: at the path's ceiling"),
        "{text}"
    );
    // compare --experiment names each variant's limit, in text and JSON.
    let compared = support::bin::ok_db(&db, &["compare", "--experiment", "why-not-line-rate"]);
    assert!(
        compared.contains("kernel-default  send buffer (2/2)"),
        "{compared}"
    );
    let json = support::bin::ok_db(
        &db,
        &["compare", "--experiment", "why-not-line-rate", "--json"],
    );
    let v: Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(v["limits"][2]["limit"], "at_ceiling", "{v}");
    // The report's table has each run's limit.
    let html = dir.path().join("r.html");
    let html_arg = html.to_string_lossy().into_owned();
    support::bin::ok_db(
        &db,
        &[
            "report",
            "--experiment",
            "why-not-line-rate",
            "-o",
            &html_arg,
        ],
    );
    let page = std::fs::read_to_string(&html).expect("the report");
    assert!(
        page.contains("<th class=\"num\">Limit</th>"),
        "no Limit column"
    );
    assert!(page.contains("send buffer") && page.contains("receive window"));
}
