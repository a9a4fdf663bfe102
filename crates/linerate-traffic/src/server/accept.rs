//! A new connection: read its cookie (within the handshake timeout) and route it to a test
//! waiting for streams, or start a new test, or log and close it.

use std::io::Write;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::registry::Route;
use super::{Level, Shared, session};
use crate::protocol::{Cookie, State, cookie::COOKIE_LEN};

/// Shows IPv4 clients of a dual-stack listener as IPv4.
pub fn unmap(peer: SocketAddr) -> SocketAddr {
    match peer {
        SocketAddr::V6(v6) => v6
            .ip()
            .to_ipv4_mapped()
            .map_or(peer, |v4| SocketAddr::new(v4.into(), v6.port())),
        v4 @ SocketAddr::V4(_) => v4,
    }
}

/// Enters connection `seq` in the pending table, logging the connections evicted to make room;
/// returns the accept order of those (the caller closes them).
pub fn admit(sh: &Shared, peer: SocketAddr, seq: u64) -> Vec<u64> {
    let evicted = super::lock(&sh.pending).admit(seq, peer, None);
    let mut out = Vec::with_capacity(evicted.len());
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
        out.push(e.seq);
    }
    out
}

/// Logs a connection that closed or timed out before its cookie was complete.
pub fn incomplete(sh: &Shared, peer: SocketAddr, got: &[u8], closed: bool) {
    let what = if got.is_empty() {
        "sent nothing".to_owned()
    } else {
        format!("sent {}", describe(got))
    };
    let message = if closed {
        format!("closed: the client {what} and closed the connection instead of a cookie")
    } else {
        format!(
            "closed: the client {what} within {:.0?} instead of a cookie",
            sh.cfg.handshake_timeout
        )
    };
    sh.refuse(peer, "timeout", message);
}

/// Goes on with a connection whose 37 cookie bytes have arrived, on its own thread (it either
/// joins a test as a stream or runs a new test, both blocking).
pub fn spawn_after_cookie(
    sh: &Arc<Shared>,
    stream: TcpStream,
    peer: SocketAddr,
    seq: u64,
    buf: [u8; COOKIE_LEN],
) {
    let sh2 = Arc::clone(sh);
    let r = std::thread::Builder::new()
        .name("lr-conn".into())
        .spawn(move || after_cookie(&sh2, stream, peer, seq, &buf));
    if r.is_err() {
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

fn after_cookie(
    sh: &Shared,
    stream: TcpStream,
    peer: SocketAddr,
    seq: u64,
    buf: &[u8; COOKIE_LEN],
) {
    let _ = stream.set_nodelay(true);
    let Some(cookie) = Cookie::parse(buf) else {
        let what = describe(buf);
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
    let ip_admitted = admitted && admit_source(sh, peer.ip());
    if !ip_admitted || !sh.registry.insert(cookie) {
        if admitted {
            sh.active.fetch_sub(1, Ordering::AcqRel);
        }
        if ip_admitted {
            release_source(sh, peer.ip());
        }
        let mut s = stream;
        let _ = s.write_all(&[State::AccessDenied.to_byte()]);
        let (reason, why) = if one_off_used {
            ("one-off", "the one test of --one-off is taken".to_owned())
        } else if admitted && !ip_admitted {
            (
                "per-ip",
                format!(
                    "busy ({} tests from {} running, the --max-tests-per-ip limit)",
                    sh.cfg.max_tests_per_ip,
                    peer.ip()
                ),
            )
        } else {
            (
                "busy",
                format!("busy ({max} tests running, the --max-tests limit)"),
            )
        };
        sh.refuse(peer, reason, format!("refused a new test: {why}"));
        return;
    }
    let n = sh.started.fetch_add(1, Ordering::AcqRel) + 1;
    match session::run(sh, stream, cookie, peer, n) {
        Ok(summary) => sh.log_end(Level::Info, n, peer, summary.to_string()),
        Err(e) => sh.log_end(Level::Warn, n, peer, format!("test failed: {e}")),
    }
    sh.registry.remove(&cookie);
    release_source(sh, peer.ip());
    sh.finished.fetch_add(1, Ordering::AcqRel);
    sh.active.fetch_sub(1, Ordering::AcqRel);
    drop(gate);
}

/// Counts one more running test from `ip`, unless it has `--max-tests-per-ip` already.
fn admit_source(sh: &Shared, ip: IpAddr) -> bool {
    let mut m = super::lock(&sh.tests_per_ip);
    let n = m.entry(ip).or_insert(0);
    if *n >= sh.cfg.max_tests_per_ip {
        return false;
    }
    *n += 1;
    true
}

fn release_source(sh: &Shared, ip: IpAddr) {
    let mut m = super::lock(&sh.tests_per_ip);
    if let Some(n) = m.get_mut(&ip) {
        *n = n.saturating_sub(1);
        if *n == 0 {
            m.remove(&ip);
        }
    }
}
