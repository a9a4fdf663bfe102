//! `linerate agent` through the binary (issue 17): the fleet files pass promtool; a bad
//! configuration is refused with its file, line and key, and a bad reload keeps the running
//! one; three agents in three namespaces, scraped by the real Prometheus (its own data
//! directory and port), give a throughput and an RTT series for each of the six directed
//! pairs; killing one makes the others report it failed and the "peer unreachable" alert fire.
//! Every process and namespace is gone afterwards (drop guards).

#![forbid(unsafe_code)]

mod support;

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::bin::linerate;
use support::netns::Netns;
use support::{namespaces, program, require, root, tempdir};

fn contrib(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../contrib/fleet")
        .join(rel)
}

/// A child process killed (and reaped) on drop, also when the test fails.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_fleet_files_pass_promtool_and_agree_with_each_other() {
    require!(program("promtool"));
    for (args, file) in [
        (["check", "config"], "prometheus.yml"),
        (["check", "rules"], "rules.yml"),
    ] {
        let o = Command::new("promtool")
            .args(args)
            .arg(contrib(file))
            .output()
            .expect("run promtool");
        assert!(o.status.success(), "promtool {args:?} {file}: {o:?}");
    }
    // The Kubernetes-API variant needs a Prometheus built with Kubernetes discovery.
    let o = Command::new("promtool")
        .args(["check", "config"])
        .arg(contrib("prometheus-kubernetes-sd.yml"))
        .output()
        .expect("run promtool");
    let text = String::from_utf8_lossy(&o.stdout) + String::from_utf8_lossy(&o.stderr);
    if text.contains("field kubernetes_sd_configs not found") {
        support::skipping(format_args!(
            "this promtool has no Kubernetes discovery (Debian's build): prometheus-kubernetes-sd.yml not checked"
        ));
    } else {
        assert!(o.status.success(), "{text}");
    }
    // The ConfigMap carries mesh.toml as it is, and it is a valid agent configuration.
    let mesh = std::fs::read_to_string(contrib("mesh.toml")).expect("mesh.toml");
    let k8s = std::fs::read_to_string(contrib("kubernetes/linerate-agent.yaml")).expect("yaml");
    for line in mesh.lines().filter(|l| !l.trim().is_empty()) {
        assert!(
            k8s.contains(&format!("    {line}\n")),
            "ConfigMap lacks {line:?}"
        );
    }
    let o = linerate()
        .args(["agent", "--check", "--config"])
        .arg(contrib("mesh.toml"))
        .output()
        .expect("run linerate");
    assert!(o.status.success(), "{o:?}");
    // The dashboard is JSON and queries only metrics the agent exports.
    let dash: Value = serde_json::from_str(
        &std::fs::read_to_string(contrib("grafana-dashboard.json")).expect("dashboard"),
    )
    .expect("the dashboard is JSON");
    let exported = [
        "linerate_test_throughput_bytes_per_second",
        "linerate_test_rtt_seconds",
        "linerate_test_latency_percentile_seconds",
        "linerate_test_udp_loss_ratio",
        "linerate_test_failures_total",
        "linerate_test_runs_total",
        "linerate_server_tests_total",
        "linerate_server_refusals_total",
    ];
    for p in dash["panels"].as_array().expect("panels") {
        let expr = p["targets"][0]["expr"].as_str().expect("expr");
        assert!(exported.iter().any(|m| expr.contains(m)), "{expr}");
    }
}

#[test]
fn a_bad_configuration_names_file_line_and_key() {
    let dir = tempdir();
    let file = dir.path().join("mesh.toml");
    std::fs::write(
        &file,
        "[[peer]]\nhost = \"198.18.0.2\"\n[[test]]\nmode = \"tcp\"\nevery = \"5\"\n",
    )
    .expect("write");
    let o = linerate()
        .args(["agent", "--config"])
        .arg(&file)
        .output()
        .expect("run linerate");
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("{}:5:9: test.every: ", file.display())) && err.contains("5s"),
        "{err}"
    );
}

/// GET `path` from `addr` inside namespace `ns` (or here), HTTP/1.0; the body.
fn http_get(ns: Option<&str>, addr: &str, path: &str) -> Option<String> {
    let ns = ns.map(|n| format!("/run/netns/{n}"));
    let addr = addr.to_owned();
    let path = path.to_owned();
    std::thread::spawn(move || {
        if let Some(ns) = ns {
            // Only this thread enters the namespace.
            #[cfg(target_os = "linux")]
            nix::sched::setns(
                std::fs::File::open(&ns).ok()?,
                nix::sched::CloneFlags::CLONE_NEWNET,
            )
            .ok()?;
            #[cfg(not(target_os = "linux"))]
            return {
                let _ = ns;
                None
            };
        }
        let mut s = std::net::TcpStream::connect(&addr).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
        let mut out = String::new();
        s.read_to_string(&mut out).ok()?;
        let (head, body) = out.split_once("\r\n\r\n")?;
        head.starts_with("HTTP/1.").then(|| body.to_owned())
    })
    .join()
    .ok()
    .flatten()
}

fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The (agent, peer) pairs of the series `expr` returns with a value above zero.
fn pairs(ns: &str, prom: &str, expr: &str) -> Vec<(String, String)> {
    let Some(body) = http_get(
        Some(ns),
        prom,
        &format!("/api/v1/query?query={}", encode(expr)),
    ) else {
        return Vec::new();
    };
    let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let mut out: Vec<(String, String)> = v["data"]["result"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter(|s| {
                    s["value"][1]
                        .as_str()
                        .and_then(|x| x.parse::<f64>().ok())
                        .is_some_and(|x| x > 0.0)
                })
                .map(|s| {
                    (
                        s["metric"]["agent"].as_str().unwrap_or("?").to_owned(),
                        s["metric"]["peer"].as_str().unwrap_or("?").to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out.dedup();
    out
}

fn wait_for<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let end = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() > end {
            return None;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn three_agents_are_watched_by_prometheus_and_a_dead_one_raises_the_alert() {
    require!(root(), namespaces(), program("prometheus"));
    let dir = tempdir();
    let names = ["a", "b", "c"];
    let ns: Vec<Netns> = names
        .iter()
        .map(|n| Netns::with_loopback(&format!("ag{n}")))
        .collect();
    // A triangle of links: a–b 198.18.1.0/30, a–c 198.18.2.0/30, b–c 198.18.3.0/30.
    let links = [(0, 1, 1), (0, 2, 2), (1, 2, 3)];
    let mut addr = [
        [String::new(), String::new(), String::new()],
        Default::default(),
        Default::default(),
    ];
    for (x, y, net) in links {
        let (nx, ny) = (format!("to-{}", names[x]), format!("to-{}", names[y]));
        let (nx, ny) = (nx.as_str(), ny.as_str());
        ns[x].ip(&[
            "link",
            "add",
            ny,
            "type",
            "veth",
            "peer",
            "name",
            nx,
            "netns",
            ns[y].name(),
        ]);
        ns[x].ip(&["addr", "add", &format!("198.18.{net}.1/30"), "dev", ny]);
        ns[y].ip(&["addr", "add", &format!("198.18.{net}.2/30"), "dev", nx]);
        ns[x].ip(&["link", "set", ny, "up"]);
        ns[y].ip(&["link", "set", nx, "up"]);
        addr[x][y] = format!("198.18.{net}.2");
        addr[y][x] = format!("198.18.{net}.1");
    }
    let mut agents = Vec::new();
    for (i, me) in names.iter().enumerate() {
        let mut cfg = "listen = \"0.0.0.0:5201\"\nmetrics = \"0.0.0.0:9201\"\n".to_owned();
        for (j, peer) in names.iter().enumerate() {
            if i != j {
                cfg.push_str(&format!(
                    "[[peer]]\nhost = \"{}\"\nname = \"{peer}\"\n",
                    addr[i][j]
                ));
            }
        }
        // In a triangle every pair shares a host with every other, so throughput tests run
        // one at a time mesh-wide: 6 directed pairs × 2 directions × 0.5 s = 6 s of tests per
        // 8 s. A schedule that needs more than the mesh has (4 s with 1 s tests needed 12 s
        // per 4 s) starves some pair for minutes on a loaded machine.
        cfg.push_str(
            "[[test]]\nmode = \"tcp\"\nevery = \"8s\"\nduration = \"500ms\"\n\
             [[test]]\nmode = \"rr\"\nevery = \"3s\"\nduration = \"1s\"\n",
        );
        let file = dir.path().join(format!("{me}.toml"));
        std::fs::write(&file, cfg).expect("write the agent config");
        let log = std::fs::File::create(dir.path().join(format!("{me}.log"))).expect("log");
        let child = ns[i]
            .linerate()
            .args(["agent", "--config"])
            .arg(&file)
            .arg("--db")
            .arg(dir.path().join(format!("{me}.db")))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start an agent");
        agents.push(Some(Proc(child)));
    }
    // Prometheus in a's namespace scrapes a (itself) and b and c over the links.
    let rules = dir.path().join("rules.yml");
    std::fs::write(
        &rules,
        "groups:\n  - name: test\n    rules:\n      - alert: LineratePeerUnreachable\n        \
         expr: linerate_peer_up == 0\n        for: 0s\n",
    )
    .expect("rules");
    let prom_cfg = dir.path().join("prometheus.yml");
    std::fs::write(
        &prom_cfg,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files: [{}]\n\
             scrape_configs:\n  - job_name: linerate\n    static_configs:\n      \
             - targets: ['127.0.0.1:9201']\n        labels: {{agent: a}}\n      \
             - targets: ['{}:9201']\n        labels: {{agent: b}}\n      \
             - targets: ['{}:9201']\n        labels: {{agent: c}}\n",
            rules.display(),
            addr[0][1],
            addr[0][2]
        ),
    )
    .expect("prometheus.yml");
    let prom_addr = "127.0.0.1:19090";
    let prom_log = std::fs::File::create(dir.path().join("prometheus.log")).expect("log");
    let _prometheus = Proc(
        ns[0]
            .exec("prometheus")
            .arg(format!("--config.file={}", prom_cfg.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("tsdb").display()
            ))
            .arg(format!("--web.listen-address={prom_addr}"))
            .stdout(Stdio::null())
            .stderr(prom_log)
            .spawn()
            .expect("start prometheus"),
    );
    let logs = || {
        ["a", "b", "c", "prometheus"]
            .iter()
            .map(|n| {
                let t = std::fs::read_to_string(dir.path().join(format!("{n}.log")))
                    .unwrap_or_default();
                let tail: Vec<&str> = t.lines().rev().take(15).collect();
                format!(
                    "--- {n}.log (last lines, newest first)\n{}",
                    tail.join("\n")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let all: Vec<(String, String)> = names
        .iter()
        .flat_map(|a| {
            names
                .iter()
                .filter(move |b| *b != a)
                .map(move |b| ((*a).to_owned(), (*b).to_owned()))
        })
        .collect();
    let started = Instant::now();
    for expr in [
        "linerate_test_throughput_bytes_per_second{test=\"tcp\",direction=\"send\"}",
        "linerate_test_rtt_seconds{test=\"tcp\"}",
    ] {
        let got = wait_for(Duration::from_secs(240), || {
            let p = pairs(ns[0].name(), prom_addr, expr);
            (p == all).then_some(p)
        });
        assert!(
            got.is_some(),
            "{expr}: {:?} of the six pairs after {:?}\n{}",
            pairs(ns[0].name(), prom_addr, expr),
            started.elapsed(),
            logs()
        );
        eprintln!("{expr}: all six pairs after {:.1?}", started.elapsed());
    }

    // Kill c: a and b find it unreachable, and Prometheus fires the alert.
    agents[2].take();
    let fired = wait_for(Duration::from_secs(60), || {
        let body = http_get(Some(ns[0].name()), prom_addr, "/api/v1/alerts")?;
        let v: Value = serde_json::from_str(&body).ok()?;
        let alerts = v["data"]["alerts"].as_array()?;
        let firing: Vec<&Value> = alerts
            .iter()
            .filter(|a| {
                a["labels"]["alertname"] == "LineratePeerUnreachable"
                    && a["labels"]["peer"] == "c"
                    && a["state"] == "firing"
            })
            .collect();
        (firing.len() == 2).then_some(firing.len())
    });
    assert!(
        fired.is_some(),
        "no LineratePeerUnreachable alert for c from both a and b: {:?}\n{}",
        http_get(Some(ns[0].name()), prom_addr, "/api/v1/alerts"),
        logs()
    );
    let failed = pairs(
        ns[0].name(),
        prom_addr,
        "linerate_test_failures_total{peer=\"c\",reason=\"unreachable\"}",
    );
    assert_eq!(
        failed,
        vec![
            ("a".to_owned(), "c".to_owned()),
            ("b".to_owned(), "c".to_owned())
        ]
    );
    eprintln!("alert fired {:.1?} after the start", started.elapsed());
}

#[test]
fn sighup_reloads_and_a_bad_file_keeps_the_running_configuration() {
    let dir = tempdir();
    let file = dir.path().join("mesh.toml");
    let (listen, metrics) = (support::net::free_port(), support::net::free_port());
    let good = format!(
        "listen = \"127.0.0.1:{listen}\"\nmetrics = \"127.0.0.1:{metrics}\"\n\
         [[peer]]\nhost = \"127.0.0.1:{listen}\"\n[[test]]\nmode = \"rr\"\nevery = \"1h\"\n"
    );
    std::fs::write(&file, &good).expect("write");
    let err = dir.path().join("agent.err");
    let mut agent = local_agent(&file, &err);
    let addr = format!("127.0.0.1:{metrics}");
    let scrape = || http_get(None, &addr, "/metrics").unwrap_or_default();
    assert!(
        wait_for(Duration::from_secs(20), || http_get(
            None, &addr, "/metrics"
        ))
        .is_some(),
        "no metrics: {}",
        std::fs::read_to_string(&err).unwrap_or_default()
    );
    let pid = nix::unistd::Pid::from_raw(i32::try_from(agent.0.id()).expect("pid"));
    let hup = |want: &str| {
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).expect("SIGHUP");
        wait_for(Duration::from_secs(10), || {
            scrape().contains(want).then_some(())
        })
        .unwrap_or_else(|| panic!("no {want} in:\n{}", scrape()));
    };
    std::fs::write(&file, "[[test]]\nmode = \"tcp\"\nevery = \"soon\"\n").expect("write");
    hup("linerate_agent_config_reloads_total{result=\"error\"} 1");
    let log = std::fs::read_to_string(&err).unwrap_or_default();
    assert!(
        log.contains(&format!("{}:3:9: test.every", file.display()))
            && log.contains("keeping the configuration in use"),
        "{log}"
    );
    std::fs::write(&file, &good).expect("write");
    hup("linerate_agent_config_reloads_total{result=\"ok\"} 1");
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let status = agent.0.wait().expect("wait");
    assert_eq!(status.code(), Some(143), "{status:?}");
}

/// An agent of `file` on this host, without a store, its standard error in `err`.
fn local_agent(file: &Path, err: &Path) -> Proc {
    Proc(
        linerate()
            .args(["agent", "--no-store", "--config"])
            .arg(file)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(err).expect("stderr file"))
            .spawn()
            .expect("start the agent"),
    )
}

/// dnsmasq on loopback as the mesh's DNS: authoritative for `mesh.test`, nothing else.
fn dnsmasq(port: u16, records: &[String]) -> Proc {
    let mut cmd = Command::new("dnsmasq");
    cmd.args([
        "--keep-in-foreground",
        "--conf-file=/dev/null",
        "--no-resolv",
        "--no-hosts",
        "--bind-interfaces",
        "--listen-address=127.0.0.1",
        "--pid-file=",
        "--user=root",
        "--local=/mesh.test/",
    ])
    .arg(format!("--port={port}"))
    .args(records)
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    Proc(cmd.spawn().expect("start dnsmasq"))
}

/// Peers from SRV and A records served by a real DNS server (dnsmasq), re-resolved: a server
/// added to the SRV set is tested without a reload, and every address of a `dns` name is a
/// peer of its own.
#[test]
fn srv_and_dns_peers_come_from_a_real_nameserver_and_follow_its_changes() {
    require!(program("dnsmasq"));
    let dir = tempdir();
    let ns_port = support::net::free_port();
    // Two peers on loopback addresses of their own (127/8 is all loopback).
    let peers: Vec<(String, u16, u16)> = (2..=3)
        .map(|i| {
            (
                format!("127.0.0.{i}"),
                support::net::free_port(),
                support::net::free_port(),
            )
        })
        .collect();
    let mut running = Vec::new();
    for (ip, listen, metrics) in &peers {
        let file = dir.path().join(format!("{ip}.toml"));
        std::fs::write(
            &file,
            format!(
                "listen = \"{ip}:{listen}\"\nmetrics = \"{ip}:{metrics}\"\n\
                 [[test]]\nmode = \"rr\"\nevery = \"1h\"\n"
            ),
        )
        .expect("write");
        running.push(Proc(
            linerate()
                .args(["agent", "--no-store", "--config"])
                .arg(&file)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start a peer"),
        ));
    }
    let srv = |host: &str, port: u16| format!("--srv-host=_linerate._tcp.mesh.test,{host},{port}");
    let a = |host: &str, ip: &str| format!("--host-record={host},{ip}");
    let (b, c) = (&peers[0], &peers[1]);
    // At first the SRV set names b only; the `dns` name has both addresses.
    let first = vec![
        srv("b.mesh.test", b.1),
        a("b.mesh.test", &b.0),
        a("c.mesh.test", &c.0),
        a("all.mesh.test", &b.0),
        a("all.mesh.test", &c.0),
    ];
    let mut dns = dnsmasq(ns_port, &first);

    let (listen, metrics) = (support::net::free_port(), support::net::free_port());
    let file = dir.path().join("mesh.toml");
    std::fs::write(
        &file,
        format!(
            "listen = \"127.0.0.1:{listen}\"\nmetrics = \"127.0.0.1:{metrics}\"\n\
             resolvers = [\"127.0.0.1:{ns_port}\"]\n\
             [[peer]]\nsrv = \"_linerate._tcp.mesh.test\"\n\
             [[peer]]\ndns = \"all.mesh.test\"\nport = {}\n\
             [[test]]\nmode = \"rr\"\nevery = \"2s\"\nduration = \"200ms\"\n",
            b.1
        ),
    )
    .expect("write");
    let err = dir.path().join("agent.err");
    let _agent = local_agent(&file, &err);
    let addr = format!("127.0.0.1:{metrics}");
    let scrape = || http_get(None, &addr, "/metrics").unwrap_or_default();
    let ran = |peer: &str| format!("linerate_test_runs_total{{peer=\"{peer}\",test=\"rr\"}}");
    let log = || std::fs::read_to_string(&err).unwrap_or_default();
    // The SRV server by its name; the `dns` name's addresses, each a peer (c is tested on
    // b's port, where nothing listens: that it fails is the point, it was found).
    for want in [ran("b.mesh.test"), ran(&b.0)] {
        wait_for(Duration::from_secs(30), || {
            scrape().contains(&want).then_some(())
        })
        .unwrap_or_else(|| panic!("no {want} in:\n{}\n{}", scrape(), log()));
    }
    wait_for(Duration::from_secs(30), || {
        scrape()
            .contains(&format!("linerate_peer_up{{peer=\"{}\"}}", c.0))
            .then_some(())
    })
    .unwrap_or_else(|| panic!("the dns name's second address is no peer:\n{}", scrape()));
    assert!(!scrape().contains("c.mesh.test"), "{}", scrape());

    // The nameserver's answer changes: c joins the SRV set with its own port, and is
    // tested after the next resolution (every 10 s) without a reload.
    drop(dns);
    let mut second = first.clone();
    second.push(srv("c.mesh.test", c.1));
    dns = dnsmasq(ns_port, &second);
    wait_for(Duration::from_secs(40), || {
        scrape().contains(&ran("c.mesh.test")).then_some(())
    })
    .unwrap_or_else(|| panic!("c never joined:\n{}\n{}", scrape(), log()));
    drop(dns);
    drop(running);
}
