//! iperf3's RSA authentication (issues 16 and 32): linerate and the real iperf3 (Debian's 3.12,
//! PKCS#1 v1.5 only) both ways with `--use-pkcs1-padding`; linerate with itself at the default
//! (OAEP, as iperf3 3.17+); OAEP tokens made by the `openssl` command as iperf3 3.17+ makes
//! them, accepted by `linerate server`; a wrong key, a wrong password, a replayed token and
//! malformed tokens each refused with one log line, the server still serving.

#![forbid(unsafe_code)]

mod support;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use support::bin::{linerate, run_bounded};
use support::traffic::{LOOPBACK_SERVER, Proc, f64_at, linerate_server};
use support::{arg, program, skipping};

/// A key pair made by openssl, in `dir`, named `name`.pem and `name`.pub.pem.
fn key_pair(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let private = dir.join(format!("{name}.pem"));
    let public = dir.join(format!("{name}.pub.pem"));
    openssl(Command::new("openssl").args(["genrsa", "-out", arg(&private), "2048"]));
    openssl(Command::new("openssl").args([
        "rsa",
        "-in",
        arg(&private),
        "-pubout",
        "-out",
        arg(&public),
    ]));
    (private, public)
}

fn openssl(c: &mut Command) -> Vec<u8> {
    let out = run_bounded(c, Duration::from_secs(60));
    assert!(
        out.status.success(),
        "{c:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A key pair and a users file for mario/rossi, in `dir`; `None` (and why) without openssl.
fn keys(dir: &Path) -> Option<(PathBuf, PathBuf, PathBuf)> {
    if let Err(why) = program("openssl") {
        skipping(format_args!("making RSA keys: {why}"));
        return None;
    }
    let (private, public) = key_pair(dir, "server");
    let users = dir.join("users.csv");
    // sha256("{mario}rossi")
    std::fs::write(
        &users,
        "# iperf3 users\nmario,bf7a49a846d44b454a5d11e7acfaf13d138bbe0b7483aa3e050879700572709b\n",
    )
    .expect("users file");
    Some((private, public, users))
}

fn auth_server(private: &Path, users: &Path, extra: &[&str]) -> Proc {
    let mut args = LOOPBACK_SERVER.to_vec();
    args.extend([
        "--rsa-private-key-path",
        arg(private),
        "--authorized-users-path",
        arg(users),
    ]);
    args.extend(extra);
    linerate_server(&args)
}

fn linerate_client(
    port: u16,
    public: &Path,
    password: &str,
    extra: &[&str],
) -> std::process::Output {
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
            .args(["--username", "mario", "--rsa-public-key-path", arg(public)])
            .args(extra)
            .env("IPERF3_PASSWORD", password),
        Duration::from_secs(60),
    );
    eprintln!(
        "linerate client ({password} {extra:?}): {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn iperf3_client(port: u16, public: &Path, password: &str) -> std::process::Output {
    let out = run_bounded(
        Command::new("iperf3")
            .args(["-c", "127.0.0.1", "-p", &port.to_string(), "-t", "1", "-J"])
            .args(["--username", "mario", "--rsa-public-key-path", arg(public)])
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

/// Whether iperf3 refused: 3.12 with -J exits 0 on a server error; the document's "error" tells.
fn iperf3_refused(out: &std::process::Output) -> bool {
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let error = v
        .get("error")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("");
    !out.status.success() || error.contains("authorization failed")
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

fn now() -> i64 {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970");
    i64::try_from(d.as_secs()).expect("seconds fit i64")
}

/// A token as iperf3 makes it: `user: U\npwd:  P\nts:   T` encrypted by the `openssl` command
/// with `public` and `padding` (`oaep`: iperf3 3.17+; `pkcs1`: before, or
/// `--use-pkcs1-padding`), base64 on one line.
fn openssl_token(dir: &Path, public: &Path, password: &str, ts: i64, padding: &str) -> String {
    let pt = dir.join("token.txt");
    let ct = dir.join("token.bin");
    std::fs::write(&pt, format!("user: mario\npwd:  {password}\nts:   {ts}")).expect("write");
    openssl(Command::new("openssl").args([
        "pkeyutl",
        "-encrypt",
        "-pubin",
        "-inkey",
        arg(public),
        "-pkeyopt",
        &format!("rsa_padding_mode:{padding}"),
        "-in",
        arg(&pt),
        "-out",
        arg(&ct),
    ]));
    let b64 = openssl(Command::new("openssl").args(["base64", "-A", "-in", arg(&ct)]));
    String::from_utf8(b64).expect("base64 is ASCII")
}

/// A fresh cookie: 36 characters of iperf3's alphabet and a NUL.
fn cookie() -> Vec<u8> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz234567";
    let n = N.fetch_add(1, Ordering::Relaxed) ^ (u64::from(std::process::id()) << 20);
    let mut c = b"authtestauthtestauthtest".to_vec();
    for i in 0..12 {
        c.push(ALPHABET[usize::try_from((n >> (5 * i)) & 31).expect("5 bits")]);
    }
    c.push(0);
    c
}

/// What the server answers to parameters carrying `token`, sent the way an iperf3 client sends
/// them: CREATE_STREAMS (10) when it accepts, SERVER_ERROR (0xFE) when it refuses. The test is
/// then dropped (the connection closes).
fn offer(port: u16, token: &str) -> u8 {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(15)))
        .expect("timeout");
    s.write_all(&cookie()).expect("cookie");
    let mut b = [0u8; 1];
    s.read_exact(&mut b).expect("PARAM_EXCHANGE");
    assert_eq!(b[0], 9, "PARAM_EXCHANGE");
    let params = serde_json::json!({
        "tcp": true, "omit": 0, "time": 1, "num": 0, "blockcount": 0, "parallel": 1,
        "len": 131072, "pacing_timer": 1000, "client_version": "3.17.1", "authtoken": token,
    });
    let body = serde_json::to_vec(&params).expect("JSON");
    let len = u32::try_from(body.len()).expect("short");
    s.write_all(&len.to_be_bytes()).expect("length");
    s.write_all(&body).expect("parameters");
    s.read_exact(&mut b).expect("the server's answer");
    b[0]
}

/// How many lines of the server's log report a refused authentication.
fn refusals(server: &Proc) -> usize {
    server
        .log()
        .lines()
        .filter(|l| l.contains("authentication failed"))
        .count()
}

/// Waits until the log has `n` refusals (bounded), then a moment more to catch an extra one.
fn expect_refusals(server: &Proc, n: usize, why: &str) {
    let t = Instant::now();
    while refusals(server) < n && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(refusals(server), n, "after {why}:\n{}", server.log());
    let last = server
        .log()
        .lines()
        .rfind(|l| l.contains("authentication failed"))
        .map(str::to_owned);
    eprintln!("{why}: {}", last.unwrap_or_default());
}

#[test]
fn linerate_server_authenticates_linerate_clients_with_oaep_and_refuses_iperf3_3_12() {
    let dir = support::tempdir();
    let Some((private, public, users)) = keys(dir.path()) else {
        return;
    };
    let server = auth_server(&private, &users, &[]);
    let ok = linerate_client(server.port, &public, "rossi", &[]);
    assert!(ok.status.success());
    assert!(received(&ok) > 0.0);
    let bad = linerate_client(server.port, &public, "wrong", &[]);
    assert!(!bad.status.success(), "a wrong password passed");
    assert!(
        server.wait_log("wrong password", Duration::from_secs(5)),
        "{}",
        server.log()
    );
    // PKCS#1 v1.5 credentials to an OAEP server, as iperf3 3.17+'s server refuses them.
    let old = linerate_client(server.port, &public, "rossi", &["--use-pkcs1-padding"]);
    assert!(!old.status.success(), "PKCS#1 passed an OAEP server");
    assert!(
        String::from_utf8_lossy(&old.stderr).contains("--use-pkcs1-padding"),
        "the refusal names the flag"
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
    // iperf3 3.12 speaks PKCS#1 v1.5 only.
    let old = iperf3_client(server.port, &public, "rossi");
    assert!(iperf3_refused(&old), "iperf3 3.12 passed an OAEP server");
}

#[test]
fn linerate_server_with_pkcs1_padding_authenticates_iperf3_and_linerate_clients() {
    let dir = support::tempdir();
    let Some((private, public, users)) = keys(dir.path()) else {
        return;
    };
    let server = auth_server(&private, &users, &["--use-pkcs1-padding"]);
    let ok = linerate_client(server.port, &public, "rossi", &["--use-pkcs1-padding"]);
    assert!(ok.status.success());
    assert!(received(&ok) > 0.0);
    // OAEP credentials to a PKCS#1 server decrypt (implicitly rejected) to no credentials.
    let new = linerate_client(server.port, &public, "rossi", &[]);
    assert!(!new.status.success(), "OAEP passed a PKCS#1 server");
    if !iperf3_has_rsa() {
        return;
    }
    let ok = iperf3_client(server.port, &public, "rossi");
    assert!(ok.status.success(), "iperf3 with the right password failed");
    assert!(received(&ok) > 0.0);
    let bad = iperf3_client(server.port, &public, "wrong");
    assert!(iperf3_refused(&bad), "iperf3 with a wrong password passed");
}

#[test]
fn linerate_client_authenticates_to_iperf3_3_12_with_pkcs1_padding() {
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
            .args(["-s", "-B", "127.0.0.1", "-p", &port.to_string()])
            .args(["--rsa-private-key-path", arg(&private)])
            .args(["--authorized-users-path", arg(&users)])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("iperf3 -s"),
    );
    support::net::wait_listening(port);
    let pkcs1 = ["--use-pkcs1-padding"];
    let ok = linerate_client(port, &public, "rossi", &pkcs1);
    assert!(
        ok.status.success(),
        "the right password failed against iperf3"
    );
    assert!(received(&ok) > 0.0);
    let bad = linerate_client(port, &public, "wrong", &pkcs1);
    assert!(!bad.status.success(), "a wrong password passed iperf3");
    // iperf3 3.12 sends its error code (authentication failed) without an errno, and closes.
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("authentication failed"),
        "the client names the failure"
    );
    // At the default (OAEP, as iperf3 3.17+'s client) a 3.12 server cannot decrypt.
    let oaep = linerate_client(port, &public, "rossi", &[]);
    assert!(!oaep.status.success(), "OAEP passed iperf3 3.12");
    assert!(
        String::from_utf8_lossy(&oaep.stderr).contains("--use-pkcs1-padding"),
        "the client names the flag"
    );
}

#[test]
fn oaep_tokens_made_as_iperf3_3_17_makes_them_pass_and_bad_ones_are_refused_once_each() {
    let dir = support::tempdir();
    let Some((private, public, users)) = keys(dir.path()) else {
        return;
    };
    let (_, other_public) = key_pair(dir.path(), "other");
    let d = dir.path();
    let server = auth_server(
        &private,
        &users,
        &["--handshake-timeout", "2s", "--time-skew-threshold", "2"],
    );
    let port = server.port;
    const CREATE_STREAMS: u8 = 10;
    const SERVER_ERROR: u8 = 0xFE;

    let good = openssl_token(d, &public, "rossi", now(), "oaep");
    assert_eq!(offer(port, &good), CREATE_STREAMS, "{}", server.log());
    assert_eq!(refusals(&server), 0, "{}", server.log());

    let mut n = 0;
    let mut refused = |token: &str, why: &str| {
        assert_eq!(offer(port, token), SERVER_ERROR, "{why}: {}", server.log());
        n += 1;
        expect_refusals(&server, n, why);
    };
    refused(
        &openssl_token(d, &other_public, "rossi", now(), "oaep"),
        "another key",
    );
    refused(
        &openssl_token(d, &public, "verdi", now(), "oaep"),
        "a wrong password",
    );
    refused(
        &openssl_token(d, &public, "rossi", now() - 60, "oaep"),
        "a token from a minute ago",
    );
    refused(
        &openssl_token(d, &public, "rossi", now(), "pkcs1"),
        "PKCS#1 padding",
    );
    refused("this is not base64!", "not base64");
    refused("AAAA", "base64 of three zero bytes");
    refused(&"QUFB".repeat(2000), "an 8000-byte token");
    // The good token replayed once the skew threshold (2 s) has passed.
    std::thread::sleep(Duration::from_secs(4));
    refused(&good, "the first token replayed 4 s later");

    let log = server.log();
    for why in [
        "cannot decrypt with OAEP padding",
        "wrong password or not an authorized user",
        "skew threshold",
        "not base64",
        "too long",
    ] {
        assert!(log.contains(why), "no {why:?} in:\n{log}");
    }
    // Still serving: a fresh token passes.
    let fresh = openssl_token(d, &public, "rossi", now(), "oaep");
    assert_eq!(offer(port, &fresh), CREATE_STREAMS, "{log}");
    let mut server = server;
    assert!(server.alive(), "the server died:\n{}", server.log());
}

/// A child process killed and reaped on drop (also when an assertion fails).
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
