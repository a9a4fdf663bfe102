//! A new connection: read its cookie (within the handshake timeout) and route it to a test
//! waiting for streams, or start a new test, or log and close it.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::registry::Route;
use super::{Level, Shared, session};
use crate::protocol::{Cookie, State, cookie::COOKIE_LEN};

/// Handles `stream` on its own thread, within the pending-connection limit.
pub fn spawn(sh: Arc<Shared>, stream: TcpStream, peer: SocketAddr, seq: u64) {
    // Show IPv4 clients of a dual-stack listener as IPv4.
    let peer = match peer {
        SocketAddr::V6(v6) => v6
            .ip()
            .to_ipv4_mapped()
            .map_or(peer, |v4| SocketAddr::new(v4.into(), v6.port())),
        v4 => v4,
    };
    let evicted = super::lock(&sh.pending).admit(seq, peer, stream.try_clone().ok());
    for e in evicted {
        let (limit, flag) = if e.same_source {
            (sh.cfg.max_pending_per_ip, "--max-pending-per-ip")
        } else {
            (sh.cfg.max_pending, "--max-pending")
        };
        sh.refuse(
            e.peer,
            "evicted",
            format!(
                "evicted: the oldest of {limit} connections still in their handshake \
                 (the {flag} limit), to make room for a new one"
            ),
        );
    }
    let sh2 = Arc::clone(&sh);
    let r = std::thread::Builder::new()
        .name("lr-conn".into())
        .spawn(move || handle(&sh2, stream, peer, seq));
    if r.is_err() {
        super::lock(&sh.pending).finish(seq);
        sh.log(
            Level::Warn,
            None,
            Some(peer),
            "closed: cannot start a thread".into(),
        );
    }
}

fn describe(bytes: &[u8]) -> String {
    let head = &bytes[..bytes.len().min(16)];
    if [&b"GET "[..], b"POST", b"HEAD", b"PUT ", b"OPTI", b"CONN"]
        .iter()
        .any(|m| head.starts_with(m))
    {
        return "an HTTP request".to_owned();
    }
    let shown: String = head
        .iter()
        .map(|b| {
            if b.is_ascii_graphic() {
                (*b as char).to_string()
            } else {
                format!("\\x{b:02x}")
            }
        })
        .collect();
    format!("bytes that are not an iperf3 cookie (\"{shown}…\")")
}

fn handle(sh: &Shared, mut stream: TcpStream, peer: SocketAddr, seq: u64) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(sh.cfg.handshake_timeout));
    let mut buf = [0u8; COOKIE_LEN];
    let mut got = 0;
    while got < COOKIE_LEN {
        match stream.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    if !super::lock(&sh.pending).finish(seq) {
        // Evicted to make room (and logged then): its socket is shut down.
        return;
    }
    if got < COOKIE_LEN {
        let what = if got == 0 {
            "sent nothing".to_owned()
        } else {
            format!("sent {}", describe(&buf[..got]))
        };
        sh.refuse(
            peer,
            "timeout",
            format!(
                "closed: the client {what} within {:.0?} instead of a cookie",
                sh.cfg.handshake_timeout
            ),
        );
        return;
    }
    let Some(cookie) = Cookie::parse(&buf) else {
        let what = describe(&buf);
        let kind = if what.starts_with("an HTTP") {
            "http"
        } else {
            "garbage"
        };
        sh.refuse(peer, kind, format!("closed: the client sent {what}"));
        return;
    };
    let stream = match sh.registry.route(&cookie, seq, stream) {
        Route::Delivered => return,
        Route::Refused(mut s) => {
            let _ = s.write_all(&[State::AccessDenied.to_byte()]);
            sh.log(
                Level::Warn,
                None,
                Some(peer),
                "refused: a connection with the cookie of a test that is not creating streams"
                    .into(),
            );
            return;
        }
        Route::Unknown(s) => s,
    };
    // A new test: refused while the host's gate is taken (another test of this host runs).
    let gate = match &sh.cfg.gate {
        Some(g) => match crate::gate::TestGate::try_take(g) {
            Some(guard) => Some(guard),
            None => {
                let mut s = stream;
                let _ = s.write_all(&[State::AccessDenied.to_byte()]);
                sh.log_refusal(
                    peer,
                    "busy",
                    "refused a new test: busy (this host is running another test)".into(),
                );
                return;
            }
        },
        None => None,
    };
    let max = sh.cfg.max_tests;
    let one_off_used = sh.cfg.one_off && sh.started.load(Ordering::Relaxed) >= 1;
    let admitted = !one_off_used
        && sh
            .active
            .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |a| {
                (a < max).then_some(a + 1)
            })
            .is_ok();
    if !admitted || !sh.registry.insert(cookie) {
        if admitted {
            sh.active.fetch_sub(1, Ordering::AcqRel);
        }
        let mut s = stream;
        let _ = s.write_all(&[State::AccessDenied.to_byte()]);
        let (reason, why) = if one_off_used {
            ("one-off", "the one test of --one-off is taken".to_owned())
        } else {
            (
                "busy",
                format!("busy ({max} tests running, the --max-tests limit)"),
            )
        };
        sh.log_refusal(peer, reason, format!("refused a new test: {why}"));
        return;
    }
    let n = sh.started.fetch_add(1, Ordering::AcqRel) + 1;
    match session::run(sh, stream, cookie, peer, n) {
        Ok(summary) => sh.log_end(Level::Info, n, peer, summary.to_string()),
        Err(e) => sh.log_end(Level::Warn, n, peer, format!("test failed: {e}")),
    }
    sh.registry.remove(&cookie);
    sh.finished.fetch_add(1, Ordering::AcqRel);
    sh.active.fetch_sub(1, Ordering::AcqRel);
    drop(gate);
}
