//! `linerate lab firewall`: nftables variants on the DUT of a real router lab.

#![forbid(unsafe_code)]

use std::process::{Command, Output, Stdio};

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

struct Lab {
    name: String,
    state: tempfile::TempDir,
}

impl Lab {
    fn run(&self, args: &[&str], path: Option<&str>) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_linerate"));
        c.env("LINERATE_LAB_STATE_DIR", self.state.path())
            .arg("lab")
            .args(args);
        if let Some(p) = path {
            c.env("PATH", p);
        }
        match c.output() {
            Ok(o) => o,
            Err(e) => panic!("cannot run linerate: {e}"),
        }
    }

    fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args, None);
        assert!(
            o.status.success(),
            "lab {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    fn in_node(&self, node: &str, cmd: &[&str]) -> String {
        let mut args = vec!["exec", &self.name, node, "--"];
        args.extend_from_slice(cmd);
        self.ok(&args)
    }

    /// One short TCP transfer from gen to recv through the DUT; bits/s received (0 if none).
    fn transfer(&self) -> f64 {
        for _ in 0..20 {
            // A fresh one-shot server per attempt (the previous one may still be exiting).
            let _ = self.run(
                &["exec", &self.name, "recv", "--", "iperf3", "-s", "-1", "-D"],
                None,
            );
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
            let mut args = vec!["exec", &self.name, "gen", "--"];
            args.extend_from_slice(&client);
            let o = self.run(&args, None);
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
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = Command::new(env!("CARGO_BIN_EXE_linerate"))
            .env("LINERATE_LAB_STATE_DIR", self.state.path())
            .args(["lab", "down", &self.name])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

#[test]
fn firewall_variants_apply_on_the_dut_and_traffic_still_flows() {
    if !is_root() {
        eprintln!("skipping: not root (network namespaces need CAP_SYS_ADMIN)");
        return;
    }
    let Ok(state) = tempfile::tempdir() else {
        return;
    };
    let lab = Lab {
        name: format!("t{}w", std::process::id() % 100_000),
        state,
    };
    lab.ok(&["up", &lab.name, "--topology", "router"]);

    // A missing nft is named with its package, before anything is changed.
    let o = lab.run(&["firewall", &lab.name, "stateful"], Some("/nonexistent"));
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
    let rules = lab.in_node(
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
        lab.transfer() > 1e7,
        "stateless rules must not block the lab's traffic"
    );

    lab.ok(&["firewall", &lab.name, "stateful"]);
    let rules = lab.in_node("dut", &["nft", "list", "ruleset"]);
    assert!(
        rules.contains("ct state established,related accept"),
        "{rules}"
    );
    assert!(
        lab.transfer() > 1e7,
        "stateful ruleset must pass the lab's connections"
    );

    let file = lab.state.path().join("block.nft");
    let text = "table inet user {\n chain block {\n  type filter hook forward priority filter; policy drop;\n }\n}\n";
    assert!(std::fs::write(&file, text).is_ok());
    let arg = format!("file:{}", file.display());
    lab.ok(&["firewall", &lab.name, &arg]);
    let show = lab.ok(&["show", &lab.name]);
    assert!(show.contains(&format!("firewall on dut: {arg}")), "{show}");
    let blocked = lab.run(
        &[
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
        ],
        None,
    );
    assert!(
        !blocked.status.success(),
        "a drop-everything forward policy must stop the transfer"
    );

    lab.ok(&["firewall", &lab.name, "none"]);
    assert_eq!(lab.in_node("dut", &["nft", "list", "ruleset"]).trim(), "");
    let bad = lab.run(&["firewall", &lab.name, "stateless:x"], None);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("rule count"),
        "{bad:?}"
    );
    lab.ok(&["down", &lab.name]);
}
