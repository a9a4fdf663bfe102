//! Tunnels in the lab for real: OpenVPN and WireGuard daemons between `gen` and `recv` in both
//! topologies, a short TCP run through each (the implementation, the interface MTU and the
//! measured TCP_MAXSEG against `calc tunnel`), `lab down` after `kill -9` of the runner, and
//! clear errors for bad options, a cipher OpenSSL lacks and a missing program. Needs root and
//! the daemons (Debian `openvpn`, `wireguard-go`, `wireguard-tools`); skips with the reason
//! when they are absent.

#![forbid(unsafe_code)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::lab::Lab;
use support::{program, require, root};

fn experiment(dir: &Path, lab: &str, topology: &str, tunnel: &str, duration: &str) -> PathBuf {
    let text = format!(
        "[experiment]\nname = \"tunnel\"\nrepetitions = 1\nlab_name = \"{lab}\"\n\
         [lab]\ntopology = \"{topology}\"\ntunnel = \"{tunnel}\"\n\
         [workload]\nmode = \"tcp\"\nduration = \"{duration}\"\n"
    );
    let path = dir.join(format!("{tunnel}-{topology}.toml"));
    std::fs::write(&path, text).expect("write the experiment file");
    path
}

/// Whether process `pid` is gone (or a zombie, which runs nothing and holds no namespace).
fn gone(pid: u64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// The tunnel daemons' pids recorded in the lab's state file.
fn recorded_pids(lab: &Lab) -> Vec<u64> {
    let path = lab.state().join(format!("{}.json", lab.name));
    let v: serde_json::Value = std::fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    v["tunnel"]["processes"]
        .as_array()
        .map(|a| a.iter().filter_map(|p| p["pid"].as_u64()).collect())
        .unwrap_or_default()
}

/// One short TCP run through `tunnel` in `topology`; returns the run record.
fn run_through(lab: &Lab, topology: &str, tunnel: &str) -> serde_json::Value {
    let file = experiment(lab.state(), &lab.name, topology, tunnel, "1s");
    let out = lab
        .cmd()
        .args(["run", "--no-store", "--json"])
        .arg(&file)
        .output()
        .expect("run linerate lab run");
    assert!(
        out.status.success(),
        "{tunnel} in {topology}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("lab run JSON");
    assert!(lab.namespaces().is_empty(), "lab run left namespaces");
    v["runs"][0].clone()
}

#[test]
fn wireguard_carries_tcp_in_both_topologies_at_the_predicted_mtu_and_mss() {
    require!(
        root(),
        program("wireguard-go"),
        program("wg"),
        program("ip")
    );
    for (letter, topology) in [('w', "pair"), ('x', "router")] {
        let lab = Lab::new(letter);
        let run = run_through(&lab, topology, "wireguard");
        assert!(
            run["measure"]["value"].as_f64().unwrap_or(0.0) > 0.0,
            "{run}"
        );
        let t = &run["tunnel"];
        let imp = t["implementation"].as_str().unwrap_or("");
        assert!(
            imp.starts_with("wireguard-go") || imp == "kernel",
            "implementation not recorded: {run}"
        );
        // calc tunnel wireguard on 1500: inner MTU 1440, MSS 1400, 1388 with timestamps.
        assert_eq!(t["interface_mtu"], 1440, "{run}");
        assert_eq!(t["tcp_maxseg"], 1388, "{run}");
    }
}

#[test]
fn openvpn_carries_tcp_in_both_topologies_at_the_predicted_mtu_and_mss() {
    require!(root(), program("openvpn"));
    for (letter, topology) in [('o', "pair"), ('p', "router")] {
        let lab = Lab::new(letter);
        let run = run_through(&lab, topology, "openvpn");
        assert!(
            run["measure"]["value"].as_f64().unwrap_or(0.0) > 0.0,
            "{run}"
        );
        let t = &run["tunnel"];
        assert!(
            t["implementation"]
                .as_str()
                .is_some_and(|s| s.starts_with("openvpn 2.")
                    && (s.contains("(user space") || s.contains("(data-channel offload"))),
            "where the data channel ran is not recorded: {run}"
        );
        // calc tunnel openvpn-udp on 1500: inner MTU 1448, MSS 1408, 1396 with timestamps.
        assert_eq!(t["interface_mtu"], 1448, "{run}");
        assert_eq!(t["tcp_maxseg"], 1396, "{run}");
    }
}

#[test]
fn lab_show_prints_both_layers_and_down_kills_the_daemons() {
    require!(root(), program("openvpn"));
    let lab = Lab::new('s');
    lab.ok(&[
        "up",
        &lab.name,
        "--tunnel",
        "openvpn",
        "--tunnel-opt",
        "cipher=CHACHA20-POLY1305",
        "--tunnel-opt",
        "tun-mtu=9000",
        "--tunnel-opt",
        "mssfix=0",
    ]);
    let show = lab.ok(&["show", &lab.name]);
    for want in [
        "198.18.0.1/24",
        "198.19.128.1/24",
        "198.19.128.2/24",
        "cipher=CHACHA20-POLY1305",
        "tun-mtu=9000",
        "openvpn in recv: pid",
        "measured: interface MTU 9000",
    ] {
        assert!(show.contains(want), "{want:?} missing from:\n{show}");
    }
    let pids = recorded_pids(&lab);
    assert_eq!(pids.len(), 2, "{show}");
    assert!(pids.iter().all(|&p| !gone(p)), "daemons not running");
    lab.ok(&["down", &lab.name]);
    assert!(pids.iter().all(|&p| gone(p)), "daemons left running");
    assert!(lab.namespaces().is_empty());
}

#[test]
fn kill_dash_nine_of_the_runner_then_down_leaves_no_daemon_and_no_namespace() {
    require!(
        root(),
        program("openvpn"),
        program("wireguard-go"),
        program("wg")
    );
    for (letter, tunnel) in [('k', "openvpn"), ('l', "wireguard")] {
        let lab = Lab::new(letter);
        let file = experiment(lab.state(), &lab.name, "pair", tunnel, "30s");
        let mut child = lab
            .cmd()
            .args(["run", "--no-store"])
            .arg(&file)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run linerate");
        let deadline = Instant::now() + Duration::from_secs(15);
        let mut pids = Vec::new();
        while pids.len() < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            pids = recorded_pids(&lab);
        }
        let sent = Command::new("kill")
            .args(["-KILL", &child.id().to_string()])
            .status();
        let _ = child.wait();
        assert!(sent.is_ok_and(|s| s.success()));
        assert_eq!(pids.len(), 2, "{tunnel}: the daemons never started");
        assert!(
            pids.iter().any(|&p| !gone(p)),
            "{tunnel}: the daemons should outlive the killed runner"
        );
        lab.ok(&["down", &lab.name]);
        assert!(pids.iter().all(|&p| gone(p)), "{tunnel}: daemons left");
        assert!(lab.namespaces().is_empty(), "{tunnel}: namespaces left");
        for end in ["tg", "tr"] {
            let sock = format!("/var/run/wireguard/lr-{}-{end}.sock", lab.name);
            assert!(!Path::new(&sock).exists(), "{sock} left behind");
        }
    }
}

#[test]
fn bad_tunnel_options_and_unavailable_ciphers_are_clear_errors() {
    require!(root(), program("openvpn"));
    let lab = Lab::new('b');
    let err = lab.fails(&["up", &lab.name, "--tunnel", "ipsec"]);
    assert!(
        err.contains("ipsec") && err.contains("openvpn, wireguard"),
        "{err}"
    );
    let err = lab.fails(&[
        "up",
        &lab.name,
        "--tunnel",
        "openvpn",
        "--tunnel-opt",
        "tun-mtu=huge",
    ]);
    assert!(err.contains("tun-mtu") && err.contains("huge"), "{err}");
    // Blowfish lives in OpenSSL 3's legacy provider, which Debian's OpenVPN does not load.
    let ciphers = Command::new("openvpn")
        .arg("--show-ciphers")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    if ciphers.lines().any(|l| l.starts_with("BF-CBC")) {
        support::skipping(format_args!("this OpenSSL offers BF-CBC"));
    } else {
        let err = lab.fails(&[
            "up",
            &lab.name,
            "--tunnel",
            "openvpn",
            "--tunnel-opt",
            "cipher=BF-CBC",
        ]);
        assert!(
            err.contains("BF-CBC") && err.contains("legacy provider"),
            "{err}"
        );
    }
    assert!(lab.namespaces().is_empty(), "a refused lab left namespaces");
    assert!(!lab.state().join(format!("{}.json", lab.name)).exists());
}

#[test]
fn a_missing_daemon_is_named_with_its_package() {
    require!(root(), program("ip"), program("wg"));
    // A PATH with `ip` and `wg` but neither openvpn nor wireguard-go.
    let lab = Lab::new('m');
    let bin = lab.state().join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    for tool in ["ip", "wg"] {
        let found = ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|p| p.exists());
        if let Some(p) = found {
            std::os::unix::fs::symlink(p, bin.join(tool)).expect("symlink");
        }
    }
    for (tunnel, tool) in [("openvpn", "openvpn"), ("wireguard", "wireguard-go")] {
        let out = lab
            .cmd()
            .env("PATH", &bin)
            .args(["up", &lab.name, "--tunnel", tunnel])
            .output()
            .expect("run linerate");
        let err = String::from_utf8_lossy(&out.stderr);
        if tunnel == "wireguard" && out.status.success() {
            // The kernel has WireGuard: wireguard-go is not needed.
            lab.ok(&["down", &lab.name]);
            continue;
        }
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!("`{tool}` is not installed")) && err.contains("apt-get install"),
            "{err}"
        );
        assert!(lab.namespaces().is_empty(), "{tunnel}: namespaces left");
    }
}

/// `audit --role vpn` judges the host with what a stored OpenVPN run showed: the socket buffer
/// OpenVPN asked for against `net.core.rmem_max`, the tun device's transmit drops at the
/// queue length it was given, and `calc tunnel`'s MTU against the interface's; each finding
/// cites the stored run.
#[test]
fn audit_role_vpn_learns_from_a_stored_openvpn_run() {
    require!(root(), program("openvpn"));
    let lab = Lab::new('v');
    let rmem_max: u64 = std::fs::read_to_string("/proc/sys/net/core/rmem_max")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .expect("net.core.rmem_max");
    let path = lab.state().join("ovpn-audit.toml");
    std::fs::write(
        &path,
        format!(
            "[experiment]\nname = \"ovpn-audit\"\nrepetitions = 1\nlab_name = \"{}\"\n\
             [lab]\ntunnel = \"openvpn\"\ntunnel_options = [\"rcvbuf={}\", \"txqueuelen=300\"]\n\
             [workload]\nmode = \"tcp\"\nduration = \"1s\"\n",
            lab.name,
            rmem_max * 2
        ),
    )
    .expect("write the experiment");
    let db = lab.state().join("runs.db");
    let out = lab
        .cmd()
        .arg("run")
        .arg(&path)
        .arg("--db")
        .arg(&db)
        .output()
        .expect("run linerate lab run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = lab
        .linerate()
        .args(["audit", "--role", "vpn", "--no-hardware", "--json", "--db"])
        .arg(&db)
        .output()
        .expect("run linerate audit");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("audit JSON");
    let findings = v["findings"].as_array().cloned().unwrap_or_default();
    let rule = |r: &str| {
        findings
            .iter()
            .find(|f| f["rule"] == r)
            .cloned()
            .unwrap_or_else(|| panic!("no {r} in {findings:#?}"))
    };
    let capped = rule("vpn-socket-buffer-capped");
    assert_eq!(capped["key"], "net.core.rmem_max");
    assert_eq!(capped["severity"], "warning");
    assert!(
        capped["source"]
            .as_str()
            .is_some_and(|s| s.contains("stored run 1") && s.contains("socket(7)")),
        "{capped}"
    );
    // The tun device's counters were read: drops or none, at the queue length it was given.
    let queue = findings
        .iter()
        .find(|f| f["rule"] == "vpn-tun-queue-drops" || f["rule"] == "vpn-tun-queue-ok")
        .unwrap_or_else(|| panic!("no tun queue finding in {findings:#?}"));
    assert_eq!(queue["value"], "300", "{queue}");
    let mtu = rule("vpn-mtu-fits");
    assert!(
        mtu["source"]
            .as_str()
            .is_some_and(|s| s.starts_with("calc tunnel --encap openvpn-udp on link MTU 1500")),
        "{mtu}"
    );
    assert!(findings.iter().all(|f| f["severity"] != "error"));
    assert!(lab.namespaces().is_empty(), "lab run left namespaces");
}
