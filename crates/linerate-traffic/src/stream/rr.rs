//! Request/response over TCP (`--mode rr`): the client writes a request and waits for the whole
//! response; the server answers each request. Latency of every transaction goes into an HDR
//! histogram owned by the stream's thread (recording neither locks nor allocates).

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use hdrhistogram::Histogram;

use super::{POLL, StreamCounters, StreamSpec, is_retry};

/// Latencies from 1 ns to 60 s, 3 significant digits.
pub fn new_histogram() -> Option<Histogram<u64>> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).ok()
}

/// Fills `buf`, waiting through timeouts unless stopped; false on stop, close or error.
fn read_full(sock: &mut TcpStream, buf: &mut [u8], stop: &AtomicBool) -> bool {
    let mut got = 0;
    while got < buf.len() {
        match sock.read(&mut buf[got..]) {
            Ok(0) => return false,
            Ok(n) => got += n,
            Err(e) if is_retry(&e) => {
                if stop.load(Ordering::Relaxed) {
                    return false;
                }
            }
            Err(_) => return false,
        }
    }
    true
}

fn write_full(sock: &mut TcpStream, buf: &[u8], stop: &AtomicBool) -> bool {
    let mut off = 0;
    while off < buf.len() {
        match sock.write(&buf[off..]) {
            Ok(0) => return false,
            Ok(n) => off += n,
            Err(e) if is_retry(&e) || e.kind() == ErrorKind::Interrupted => {
                if stop.load(Ordering::Relaxed) {
                    return false;
                }
            }
            Err(_) => return false,
        }
    }
    true
}

/// The client side: one transaction after the other until stopped.
pub fn request(
    spec: &StreamSpec,
    mut sock: TcpStream,
    counters: &StreamCounters,
    stop: &AtomicBool,
) -> (TcpStream, Option<Histogram<u64>>) {
    let (req, resp) = spec.rr.unwrap_or((1, 1));
    let _ = sock.set_nodelay(true);
    let _ = sock.set_read_timeout(Some(POLL));
    let _ = sock.set_write_timeout(Some(POLL));
    let out = super::tcp::pattern(req);
    let mut inb = vec![0u8; resp];
    let mut hist = new_histogram();
    while !stop.load(Ordering::Relaxed) {
        let t = Instant::now();
        if !write_full(&mut sock, &out, stop) || !read_full(&mut sock, &mut inb, stop) {
            break;
        }
        let ns = t.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64;
        if let Some(h) = &mut hist {
            h.saturating_record(ns.max(1));
        }
        counters.packets.fetch_add(1, Ordering::Relaxed);
        counters
            .bytes
            .fetch_add((req + resp) as u64, Ordering::Relaxed);
    }
    (sock, hist)
}

/// The server side: answers every request until stopped or closed.
pub fn respond(
    spec: &StreamSpec,
    mut sock: TcpStream,
    counters: &StreamCounters,
    stop: &AtomicBool,
) -> TcpStream {
    let (req, resp) = spec.rr.unwrap_or((1, 1));
    let _ = sock.set_nodelay(true);
    let _ = sock.set_read_timeout(Some(POLL));
    let _ = sock.set_write_timeout(Some(POLL));
    let out = super::tcp::pattern(resp);
    let mut inb = vec![0u8; req];
    while !stop.load(Ordering::Relaxed) {
        if !read_full(&mut sock, &mut inb, stop) || !write_full(&mut sock, &out, stop) {
            break;
        }
        counters.packets.fetch_add(1, Ordering::Relaxed);
        counters
            .bytes
            .fetch_add((req + resp) as u64, Ordering::Relaxed);
    }
    sock
}

/// Where connect/request/response transactions go.
#[derive(Debug)]
pub struct CrrTarget {
    /// The server.
    pub server: SocketAddr,
    /// The test's cookie, sent first on every connection.
    pub cookie: [u8; crate::protocol::cookie::COOKIE_LEN],
    /// Connect timeout.
    pub timeout: std::time::Duration,
}

/// The client side of `--mode crr`: connect, send cookie and request, read the whole response,
/// close; one transaction after the other until stopped. The server closes first, so this
/// side's ports do not pile up in TIME_WAIT.
pub fn connect_request(
    spec: &StreamSpec,
    counters: &StreamCounters,
    stop: &AtomicBool,
) -> Option<Histogram<u64>> {
    let target = spec.crr.as_ref()?;
    let (req, resp) = spec.rr.unwrap_or((1, 1));
    let mut out = target.cookie.to_vec();
    out.extend_from_slice(&super::tcp::pattern(req));
    let mut inb = vec![0u8; resp];
    let mut hist = new_histogram();
    let mut failures = 0u32;
    while !stop.load(Ordering::Relaxed) {
        let t = Instant::now();
        let Ok(mut sock) = TcpStream::connect_timeout(&target.server, target.timeout) else {
            // A refused or timed-out connect is not a transaction; give up after a run of them.
            failures += 1;
            if failures > 100 {
                counters.failed.store(true, Ordering::Relaxed);
                break;
            }
            continue;
        };
        failures = 0;
        let _ = sock.set_nodelay(true);
        let _ = sock.set_read_timeout(Some(POLL));
        let _ = sock.set_write_timeout(Some(POLL));
        if !write_full(&mut sock, &out, stop) || !read_full(&mut sock, &mut inb, stop) {
            continue;
        }
        let ns = t.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64;
        if let Some(h) = &mut hist {
            h.saturating_record(ns.max(1));
        }
        counters.packets.fetch_add(1, Ordering::Relaxed);
        counters
            .bytes
            .fetch_add((req + resp) as u64, Ordering::Relaxed);
    }
    hist
}
