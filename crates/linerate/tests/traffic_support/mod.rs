//! Helpers for the traffic tests: free ports, a linerate server process, an iperf3 server
//! process, and running the binary with a time bound. Every process is killed on drop.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::net::{TcpListener, UdpSocket};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub fn linerate_bin() -> &'static str {
    env!("CARGO_BIN_EXE_linerate")
}

/// A port free for both TCP and UDP right now.
pub fn free_port() -> u16 {
    for _ in 0..100 {
        // Dual-stack on Linux by default: covers IPv4 and IPv6.
        let t = TcpListener::bind("[::]:0").expect("bind tcp");
        let port = t.local_addr().expect("addr").port();
        if UdpSocket::bind(("::", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port");
}

fn listening(port: u16) -> bool {
    let hex = format!(":{port:04X} ");
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|p| {
        std::fs::read_to_string(p).is_ok_and(|s| {
            s.lines().any(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.len() > 3 && format!("{} ", &f[1][f[1].len() - 5..]) == hex && f[3] == "0A"
            })
        })
    })
}

pub fn wait_listening(port: u16) {
    let t = Instant::now();
    while !listening(port) {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "nothing listens on {port}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether iperf3 is installed (it is in CI: .ci/apt-packages).
pub fn have_iperf3() -> bool {
    let ok = Command::new("iperf3").arg("--version").output().is_ok();
    if !ok {
        eprintln!("SKIP: iperf3 is not installed (apt-get install iperf3)");
    }
    ok
}

/// A child process killed on drop.
pub struct Proc {
    pub child: Child,
    pub port: u16,
    pub stderr: Arc<Mutex<String>>,
}

impl Proc {
    pub fn log(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }

    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits until the log contains `needle` (bounded).
    pub fn wait_log(&self, needle: &str, limit: Duration) -> bool {
        let t = Instant::now();
        while t.elapsed() < limit {
            if self.log().contains(needle) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn collect_stderr(child: &mut Child) -> Arc<Mutex<String>> {
    let buf = Arc::new(Mutex::new(String::new()));
    if let Some(err) = child.stderr.take() {
        let b = Arc::clone(&buf);
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if let Ok(mut s) = b.lock() {
                    s.push_str(&line);
                    s.push('\n');
                }
            }
        });
    }
    buf
}

/// `linerate server -p PORT extra…`, ready to accept.
pub fn linerate_server(extra: &[&str]) -> Proc {
    let port = free_port();
    let mut child = Command::new(linerate_bin())
        .args(["server", "-p", &port.to_string()])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start linerate server");
    let stderr = collect_stderr(&mut child);
    wait_listening(port);
    Proc {
        child,
        port,
        stderr,
    }
}

/// `iperf3 -s -1 -p PORT`, ready to accept.
pub fn iperf3_server(one_off: bool) -> Proc {
    let port = free_port();
    let mut cmd = Command::new("iperf3");
    cmd.args(["-s", "-p", &port.to_string()]);
    if one_off {
        cmd.arg("-1");
    }
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start iperf3 -s");
    let stderr = collect_stderr(&mut child);
    wait_listening(port);
    Proc {
        child,
        port,
        stderr,
    }
}

/// Runs a command, killing it after `limit`.
pub fn run_bounded(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let o = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let e = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let t = Instant::now();
    let status = loop {
        if let Ok(Some(s)) = child.try_wait() {
            break s;
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: o.join().unwrap_or_default(),
        stderr: e.join().unwrap_or_default(),
    }
}

/// `linerate client 127.0.0.1 -p PORT args… --json`, parsed.
pub fn linerate_client_json(port: u16, args: &[&str]) -> serde_json::Value {
    let out = run_bounded(
        Command::new(linerate_bin())
            .args(["client", "127.0.0.1", "-p", &port.to_string(), "--json"])
            .args(args),
        Duration::from_secs(30),
    );
    assert!(
        out.status.success(),
        "linerate client {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).expect("client JSON")
}

/// `iperf3 -c 127.0.0.1 -p PORT args… -J`, parsed.
pub fn iperf3_client_json(port: u16, args: &[&str]) -> serde_json::Value {
    let out = run_bounded(
        Command::new("iperf3")
            .args(["-c", "127.0.0.1", "-p", &port.to_string(), "-J"])
            .args(args),
        Duration::from_secs(30),
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert!(
        out.status.success() && v.get("error").is_none(),
        "iperf3 -c {args:?} failed: {} {}\n{}",
        v["error"],
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    v
}

pub fn f64_at(v: &serde_json::Value, path: &str) -> f64 {
    let mut cur = v;
    for k in path.split('.') {
        cur = match k.parse::<usize>() {
            Ok(i) => &cur[i],
            Err(_) => &cur[k],
        };
    }
    cur.as_f64()
        .unwrap_or_else(|| panic!("{path} is not a number in {v}"))
}
