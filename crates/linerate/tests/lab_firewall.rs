//! `linerate lab firewall`: nftables variants on the DUT of a real router lab.

#![forbid(unsafe_code)]

mod support;

use support::lab::Lab;
use support::{require, root};

/// `CMD…` run in `node` of the lab, which must succeed; its stdout.
fn in_node(lab: &Lab, node: &str, cmd: &[&str]) -> String {
    let mut args = vec!["exec", &lab.name, node, "--"];
    args.extend_from_slice(cmd);
    lab.ok(&args)
}

/// One short TCP transfer from gen to recv through the DUT; bits/s received (0 if none).
fn transfer(lab: &Lab) -> f64 {
    for _ in 0..20 {
        // A fresh one-shot server per attempt (the previous one may still be exiting).
        let _ = lab.exec("recv", &["iperf3", "-s", "-1", "-D"]);
        let client = [
            "iperf3",
            "-c",
            "198.19.0.1",
            "-t",
            "1",
            "-J",
            "--connect-timeout",
            "1000",
        ];
        let o = lab.exec("gen", &client);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
        let bps = v["end"]["sum_received"]["bits_per_second"]
            .as_f64()
            .unwrap_or(0.0);
        if bps > 0.0 {
            return bps;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    0.0
}

#[test]
fn firewall_variants_apply_on_the_dut_and_traffic_still_flows() {
    require!(root());
    let lab = Lab::new('w');
    lab.ok(&["up", &lab.name, "--topology", "router"]);

    // A missing nft is named with its package, before anything is changed.
    let o = lab
        .cmd()
        .args(["firewall", &lab.name, "stateful"])
        .env("PATH", "/nonexistent")
        .output()
        .expect("run linerate lab");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("apt-get install nftables"),
        "{o:?}"
    );

    let out = lab.ok(&["firewall", &lab.name, "stateless:1000"]);
    assert!(
        out.contains("dut: firewall stateless:1000 (1001 rules per packet)"),
        "{out}"
    );
    let rules = in_node(
        &lab,
        "dut",
        &["nft", "list", "chain", "inet", "linerate", "rules"],
    );
    assert_eq!(
        rules
            .lines()
            .filter(|l| l.contains(" drop") || l.contains(" reject"))
            .count(),
        1000
    );
    assert!(
        transfer(&lab) > 1e7,
        "stateless rules must not block the lab's traffic"
    );

    lab.ok(&["firewall", &lab.name, "stateful"]);
    let rules = in_node(&lab, "dut", &["nft", "list", "ruleset"]);
    assert!(
        rules.contains("ct state established,related accept"),
        "{rules}"
    );
    assert!(
        transfer(&lab) > 1e7,
        "stateful ruleset must pass the lab's connections"
    );

    let file = lab.state().join("block.nft");
    let text = "table inet user {\n chain block {\n  type filter hook forward priority filter; policy drop;\n }\n}\n";
    std::fs::write(&file, text).expect("write the ruleset file");
    let arg = format!("file:{}", file.display());
    lab.ok(&["firewall", &lab.name, &arg]);
    let show = lab.ok(&["show", &lab.name]);
    assert!(show.contains(&format!("firewall on dut: {arg}")), "{show}");
    let blocked = lab.run(&[
        "exec",
        &lab.name,
        "gen",
        "--",
        "iperf3",
        "-c",
        "198.19.0.1",
        "-t",
        "1",
        "--connect-timeout",
        "500",
    ]);
    assert!(
        !blocked.status.success(),
        "a drop-everything forward policy must stop the transfer"
    );

    lab.ok(&["firewall", &lab.name, "none"]);
    assert_eq!(in_node(&lab, "dut", &["nft", "list", "ruleset"]).trim(), "");
    let bad = lab.run(&["firewall", &lab.name, "stateless:x"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("rule count"),
        "{bad:?}"
    );
    lab.ok(&["down", &lab.name]);
}
