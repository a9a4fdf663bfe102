//! iperf3's RSA authentication between linerate and the real iperf3, both ways (issue 16,
//! item 3): the right password passes, a wrong one fails.

#![forbid(unsafe_code)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use support::bin::{linerate, run_bounded};
use support::traffic::{f64_at, linerate_server};
use support::{program, skipping};

/// A key pair made by openssl and a users file for mario/rossi, in `dir`.
fn keys(dir: &Path) -> Option<(PathBuf, PathBuf, PathBuf)> {
    if let Err(why) = program("openssl") {
        skipping(format_args!("making RSA keys: {why}"));
        return None;
    }
    let private = dir.join("private.pem");
    let public = dir.join("public.pem");
    let ok = |c: &mut Command| run_bounded(c, Duration::from_secs(60)).status.success();
    assert!(ok(Command::new("openssl")
        .args(["genrsa", "-out"])
        .arg(&private)
        .arg("2048")));
    assert!(ok(Command::new("openssl")
        .args(["rsa", "-in"])
        .arg(&private)
        .args(["-pubout", "-out"])
        .arg(&public)));
    let users = dir.join("users.csv");
    // sha256("{mario}rossi")
    std::fs::write(
        &users,
        "# iperf3 users\nmario,bf7a49a846d44b454a5d11e7acfaf13d138bbe0b7483aa3e050879700572709b\n",
    )
    .expect("users file");
    Some((private, public, users))
}

fn linerate_client(port: u16, public: &Path, password: &str) -> std::process::Output {
    let out = run_bounded(
        linerate()
            .args([
                "client",
                "127.0.0.1",
                "-p",
                &port.to_string(),
                "-t",
                "1",
                "--json",
            ])
            .args(["--username", "mario", "--rsa-public-key-path"])
            .arg(public)
            .env("IPERF3_PASSWORD", password),
        Duration::from_secs(60),
    );
    eprintln!(
        "linerate client ({password}): {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn iperf3_client(port: u16, public: &Path, password: &str) -> std::process::Output {
    let out = run_bounded(
        Command::new("iperf3")
            .args(["-c", "127.0.0.1", "-p", &port.to_string(), "-t", "1", "-J"])
            .args(["--username", "mario", "--rsa-public-key-path"])
            .arg(public)
            .env("IPERF3_PASSWORD", password),
        Duration::from_secs(60),
    );
    eprintln!(
        "iperf3 client ({password}): {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    out
}

fn received(out: &std::process::Output) -> f64 {
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    f64_at(&v, "end.sum_received.bytes")
}

fn iperf3_has_rsa() -> bool {
    if let Err(why) = program("iperf3") {
        skipping(format_args!("iperf3: {why}"));
        return false;
    }
    let out = run_bounded(
        Command::new("iperf3").arg("--help"),
        Duration::from_secs(10),
    );
    let help = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !help.contains("--rsa-private-key-path") {
        skipping(format_args!("this iperf3 is built without authentication"));
        return false;
    }
    true
}

#[test]
fn linerate_server_authenticates_iperf3_and_linerate_clients() {
    let dir = support::tempdir();
    let Some((private, public, users)) = keys(dir.path()) else {
        return;
    };
    let server = linerate_server(&[
        "--rsa-private-key-path",
        private.to_str().expect("utf-8"),
        "--authorized-users-path",
        users.to_str().expect("utf-8"),
    ]);
    let ok = linerate_client(server.port, &public, "rossi");
    assert!(ok.status.success());
    assert!(received(&ok) > 0.0);
    let bad = linerate_client(server.port, &public, "wrong");
    assert!(!bad.status.success(), "a wrong password passed");
    assert!(
        server.wait_log("wrong password", Duration::from_secs(5)),
        "{}",
        server.log()
    );
    // No credentials at all.
    let out = run_bounded(
        linerate().args([
            "client",
            "127.0.0.1",
            "-p",
            &server.port.to_string(),
            "-t",
            "1",
        ]),
        Duration::from_secs(30),
    );
    assert!(!out.status.success(), "a client without credentials passed");
    if !iperf3_has_rsa() {
        return;
    }
    let ok = iperf3_client(server.port, &public, "rossi");
    assert!(ok.status.success(), "iperf3 with the right password failed");
    assert!(received(&ok) > 0.0);
    let bad = iperf3_client(server.port, &public, "wrong");
    // iperf3 3.12 with -J exits 0 on a server error; the document's "error" tells.
    let v: serde_json::Value = serde_json::from_slice(&bad.stdout).unwrap_or_default();
    let error = v
        .get("error")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("");
    assert!(
        !bad.status.success() || error.contains("authorization failed"),
        "iperf3 with a wrong password passed: {v}"
    );
}

#[test]
fn linerate_client_authenticates_to_iperf3() {
    if !iperf3_has_rsa() {
        return;
    }
    let dir = support::tempdir();
    let Some((private, public, users)) = keys(dir.path()) else {
        return;
    };
    let port = support::net::free_port();
    let _server = KillOnDrop(
        Command::new("iperf3")
            .args(["-s", "-p", &port.to_string(), "--rsa-private-key-path"])
            .arg(&private)
            .arg("--authorized-users-path")
            .arg(&users)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("iperf3 -s"),
    );
    support::net::wait_listening(port);
    let ok = linerate_client(port, &public, "rossi");
    assert!(
        ok.status.success(),
        "the right password failed against iperf3"
    );
    assert!(received(&ok) > 0.0);
    let bad = linerate_client(port, &public, "wrong");
    assert!(!bad.status.success(), "a wrong password passed iperf3");
}

/// A child process killed and reaped on drop (also when an assertion fails).
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
