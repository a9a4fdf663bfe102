//! Issue 30, item 5: when a router lab's DUT is the limit, `lab rfc2544` names where its CPU
//! goes. A DUT with 2000 stateless nftables rules (each packet walks them all) is CPU-bound
//! far below the generator: the result's `dut_limit` says "DUT (router) CPU" with nftables as
//! the largest subsystem, and the human output prints it. The lab is named after this process
//! and taken down on drop, also when the test fails; every run is bounded in time.

#![forbid(unsafe_code)]

mod support;

use std::time::Duration;

use serde_json::Value;
use support::lab::Lab;
use support::{program, require, root, skip};

#[test]
fn a_dut_walking_2000_rules_is_its_cpu_and_nftables_leads() {
    require!(root(), program("nft"));
    let lab = Lab::new('d');
    lab.ok(&["up", &lab.name, "--topology", "router"]);
    lab.ok(&["firewall", &lab.name, "stateless:2000"]);
    let out = lab.bounded(
        &[
            "rfc2544",
            &lab.name,
            "--frame",
            "64",
            "--trial",
            "1s",
            "--initial-trial",
            "300ms",
            "--headroom-trial",
            "1s",
            "--no-latency",
            "--no-store",
            "--json",
            "-q",
        ],
        Duration::from_secs(300),
    );
    assert!(
        out.status.success(),
        "lab rfc2544 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("lab rfc2544 --json prints JSON");
    let r = &doc["results"][0];
    // Far below what the generator sends alone into a sink (the search may still call it
    // generator-bound: the DUT's forwarding runs on the generator's CPU on one host).
    let ceiling = r["generator_ceiling_pps"]
        .as_f64()
        .expect("a generator ceiling");
    let ndr = r["ndr_pps"].as_f64().expect("ndr_pps");
    assert!(
        ndr < ceiling * 0.5,
        "NDR {ndr} not far below the ceiling {ceiling}: {r}"
    );
    let l = &r["dut_limit"];
    if l["verdict"] == "not_profiled" {
        skip!("the DUT's CPU cannot be profiled here: {}", l["note"]);
    }
    eprintln!("dut_limit: {l}");
    assert_eq!(l["verdict"], "cpu", "{l}");
    let upper = r["ndr_upper_pps"].as_f64().expect("an NDR upper bound");
    // Profiled a quarter above the lowest load that lost frames (at most the search's top).
    let load = l["load_pps"].as_f64().expect("load_pps");
    assert!(
        load >= upper && load <= upper * 1.25 + 1.0,
        "load {load} against the NDR upper bound {upper}: {l}"
    );
    assert!(
        l["router_cores"].as_f64().expect("router_cores") > 0.2,
        "{l}"
    );
    // nftables leads the router's work (other programs on a shared host may lead `other`).
    let subs = l["subsystems"].as_array().expect("subsystems");
    let router = [
        "nftables",
        "conntrack",
        "forwarding/routing",
        "softirq/veth",
    ];
    let lead = subs
        .iter()
        .find(|s| router.iter().any(|r| s["name"] == *r))
        .expect("a subsystem of the router's work");
    assert_eq!(lead["name"], "nftables", "{l}");
    let of_router: f64 = subs
        .iter()
        .filter(|s| router.iter().any(|r| s["name"] == *r))
        .filter_map(|s| s["percent"].as_f64())
        .sum();
    let nft = lead["percent"].as_f64().expect("percent");
    assert!(
        nft > 0.5 * of_router,
        "nftables only {nft} % of {of_router} % of router work: {l}"
    );
    let total: f64 = subs.iter().filter_map(|s| s["percent"].as_f64()).sum();
    assert!((total - 100.0).abs() < 0.1, "shares add to {total}: {l}");
}
