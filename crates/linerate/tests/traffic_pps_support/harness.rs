//! Shared by the pps and rr tests: a `linerate server` process on a free port (killed on drop),
//! a bounded client run, and a network namespace (removed on drop) whose nftables rules inject
//! known drops.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_linerate")
}

/// `args` run inside namespace `ns` when given.
fn command(ns: Option<&str>, program: &str) -> Command {
    let mut c = match ns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns, program]);
            c
        }
        None => Command::new(program),
    };
    // Runs are stored in a database of this test process, never the user's own.
    c.env(
        "LINERATE_DB",
        std::env::temp_dir().join(format!("linerate-pps-tests-{}.db", std::process::id())),
    );
    c
}

/// A linerate server on 127.0.0.1 and a port the kernel picked.
pub struct Server {
    child: Child,
    pub port: u16,
}

impl Server {
    pub fn start(ns: Option<&str>) -> Server {
        let mut child = command(ns, bin())
            .args([
                "server",
                "-B",
                "127.0.0.1",
                "-p",
                "0",
                "--max-duration",
                "60s",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start linerate server");
        let err = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                // "linerate server: listening on 127.0.0.1:PORT (TCP and UDP)"
                if let Some(rest) = line.split("listening on ").nth(1) {
                    let addr = rest.split_whitespace().next().unwrap_or("");
                    let port = addr.rsplit(':').next().and_then(|p| p.parse::<u16>().ok());
                    let _ = tx.send(port);
                }
                eprintln!("[server] {line}");
            }
        });
        let port = rx
            .recv_timeout(Duration::from_secs(10))
            .ok()
            .flatten()
            .expect("the server announced its port");
        Server { child, port }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `linerate client 127.0.0.1 -p PORT args…`, bounded to 60 s.
pub fn client(ns: Option<&str>, port: u16, args: &[&str]) -> Output {
    let mut c = command(ns, "timeout");
    c.args(["60", bin(), "client", "127.0.0.1", "-p", &port.to_string()])
        .args(args);
    let out = c.output().expect("run linerate client");
    eprintln!(
        "client {args:?}: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The client's `--json` document.
pub fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "client failed: {}", out.status);
    serde_json::from_slice(&out.stdout).expect("--json output is JSON")
}

/// A network namespace whose loopback is up, removed on drop.
pub struct Netns {
    pub name: String,
}

impl Netns {
    /// `None` (with the reason printed) when namespaces are unavailable here.
    pub fn new(tag: &str) -> Option<Netns> {
        // Root check through `id -u`, as a user would run it.
        let uid = Command::new("id").arg("-u").output().ok()?;
        if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
            eprintln!("SKIP: network namespaces need root");
            return None;
        }
        let name = format!("lr-pp-{}-{tag}", std::process::id());
        let ok = Command::new("ip")
            .args(["netns", "add", &name])
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("SKIP: `ip netns add` failed (no iproute2 or no namespace support)");
            return None;
        }
        let ns = Netns { name };
        ns.ip(&["link", "set", "lo", "up"]);
        Some(ns)
    }

    pub fn ip(&self, args: &[&str]) {
        let st = Command::new("ip")
            .args(["-n", &self.name])
            .args(args)
            .status()
            .expect("run ip");
        assert!(st.success(), "ip -n {} {args:?} failed", self.name);
    }

    /// Runs `nft ARGS` inside the namespace; `false` (printed) when nftables is missing.
    pub fn nft(&self, args: &[&str]) -> bool {
        let ok = Command::new("ip")
            .args(["netns", "exec", &self.name, "nft"])
            .args(args)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("SKIP: nft {args:?} failed (is nftables installed?)");
        }
        ok
    }

    /// `nft list ruleset` inside the namespace.
    pub fn nft_ruleset(&self) -> String {
        Command::new("ip")
            .args(["netns", "exec", &self.name, "nft", "list", "ruleset"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "delete", &self.name])
            .status();
    }
}

/// A port free for TCP and UDP right now.
pub fn free_port() -> u16 {
    for _ in 0..100 {
        let t = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = t.local_addr().expect("addr").port();
        if std::net::UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port");
}

/// Waits (10 s at most) until something listens on TCP `port`, reading /proc/net/tcp so no
/// probe connection disturbs the listener.
pub fn wait_listening(port: u16) {
    let needle = format!(":{port:04X}");
    let t = std::time::Instant::now();
    loop {
        let listening = ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|p| {
            std::fs::read_to_string(p).is_ok_and(|s| {
                s.lines().any(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    f.len() > 3 && f[1].ends_with(&needle) && f[3] == "0A"
                })
            })
        });
        if listening {
            return;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "nothing listens on {port}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
