//! Traffic processes for the client/server tests: a `linerate server` (on the loopback or in a
//! namespace), an `iperf3 -s`, and client runs, all bounded in time; servers are killed on drop.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::bin::{linerate, run_bounded, succeeded};
use super::net::{free_port, wait_listening};
use super::netns::Netns;

/// The flags of a server that listens on 127.0.0.1 only and ends any test after a minute.
pub const LOOPBACK_SERVER: [&str; 4] = ["-B", "127.0.0.1", "--max-duration", "60s"];

/// A server process, killed on drop; its stderr is collected as it comes (and echoed to the
/// test's stderr, shown when the test fails).
pub struct Proc {
    pub child: Child,
    pub port: u16,
    stderr: Arc<Mutex<String>>,
}

impl Proc {
    /// What the server has written to stderr so far.
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

/// Starts a server `cmd` with its stderr collected into a shared log (and echoed); the port of
/// each "listening on ADDR:PORT" line (linerate's server announces one) goes to the receiver.
fn spawn_logged(cmd: &mut Command) -> (Child, Arc<Mutex<String>>, mpsc::Receiver<u16>) {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let (announced, ports) = mpsc::channel();
    let log = Arc::new(Mutex::new(String::new()));
    let err = child.stderr.take().expect("piped stderr");
    let shared = Arc::clone(&log);
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            // "linerate server: listening on 127.0.0.1:PORT (TCP and UDP)"
            if let Some(rest) = line.split("listening on ").nth(1) {
                let addr = rest.split_whitespace().next().unwrap_or("");
                if let Some(port) = addr.rsplit(':').next().and_then(|p| p.parse().ok()) {
                    let _ = announced.send(port);
                }
            }
            eprintln!("[server] {line}");
            if let Ok(mut s) = shared.lock() {
                s.push_str(&line);
                s.push('\n');
            }
        }
    });
    (child, log, ports)
}

/// Starts `cmd` (a linerate server on port 0) and waits until it announces its port.
pub fn serve(cmd: &mut Command) -> Proc {
    let (mut child, stderr, ports) = spawn_logged(cmd);
    let Ok(port) = ports.recv_timeout(Duration::from_secs(10)) else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the server announced no port within 10 s");
    };
    Proc {
        child,
        port,
        stderr,
    }
}

/// `linerate server -p 0 EXTRA…`, ready to accept on the port it announced.
pub fn linerate_server(extra: &[&str]) -> Proc {
    serve(linerate().args(["server", "-p", "0"]).args(extra))
}

/// `linerate server -p 0 EXTRA…` inside namespace `ns`.
pub fn linerate_server_in(ns: &Netns, extra: &[&str]) -> Proc {
    serve(ns.linerate().args(["server", "-p", "0"]).args(extra))
}

/// `iperf3 -s -p PORT` (with `-1` for `one_off`), ready to accept.
pub fn iperf3_server(one_off: bool) -> Proc {
    let port = free_port();
    let mut cmd = Command::new("iperf3");
    cmd.args(["-s", "-p", &port.to_string()]);
    if one_off {
        cmd.arg("-1");
    }
    // iperf3 announces nothing on stderr: the listening socket tells when it is ready.
    let (child, stderr, _) = spawn_logged(&mut cmd);
    wait_listening(port);
    Proc {
        child,
        port,
        stderr,
    }
}

/// Runs `linerate client 127.0.0.1 -p PORT ARGS…` (inside `ns` when given), bounded to 60 s;
/// its output is echoed to the test's stderr.
pub fn client(ns: Option<&Netns>, port: u16, args: &[&str]) -> Output {
    let mut cmd = match ns {
        Some(ns) => ns.linerate(),
        None => linerate(),
    };
    cmd.args(["client", "127.0.0.1", "-p", &port.to_string()])
        .args(args);
    let out = run_bounded(&mut cmd, Duration::from_secs(60));
    eprintln!(
        "client {args:?}: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The `--json` document of a client run, which must have succeeded.
pub fn client_json(out: &Output) -> Value {
    serde_json::from_str(&succeeded(out)).expect("--json output is JSON")
}

/// `linerate client 127.0.0.1 -p PORT --json ARGS…`, which must succeed, parsed.
pub fn linerate_client_json(port: u16, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    client_json(&client(None, port, &all))
}

/// `iperf3 -c 127.0.0.1 -p PORT -J ARGS…`, which must succeed, parsed.
pub fn iperf3_client_json(port: u16, args: &[&str]) -> Value {
    let out = run_bounded(
        Command::new("iperf3")
            .args(["-c", "127.0.0.1", "-p", &port.to_string(), "-J"])
            .args(args),
        Duration::from_secs(30),
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert!(
        out.status.success() && v.get("error").is_none(),
        "iperf3 -c {args:?} failed: {} {}\n{}",
        v["error"],
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    v
}

/// The number at a dotted `path` (`end.streams.0.udp.packets`) of a JSON document.
pub fn f64_at(v: &Value, path: &str) -> f64 {
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
