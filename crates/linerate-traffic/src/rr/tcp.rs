//! Request/response over one TCP connection.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::config::RrSize;
use crate::flow::{POLL, StreamCounters, StreamSpec, is_retry, pattern};
use crate::latency::Latency;

/// Why an exchange stopped.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Halt {
    /// The stop flag.
    Stopped,
    /// The peer closed or an error.
    Failed,
}

/// Reads exactly `buf.len()` bytes, looking at `stop` every [`POLL`].
pub(crate) fn read_full(
    sock: &mut TcpStream,
    buf: &mut [u8],
    stop: &AtomicBool,
) -> Result<(), Halt> {
    let mut at = 0;
    while at < buf.len() {
        match sock.read(&mut buf[at..]) {
            Ok(0) => return Err(Halt::Failed),
            Ok(n) => at += n,
            Err(e) if is_retry(&e) => {
                if stop.load(Ordering::Relaxed) {
                    return Err(Halt::Stopped);
                }
            }
            Err(_) => return Err(Halt::Failed),
        }
    }
    Ok(())
}

/// Writes all of `buf`, looking at `stop` every [`POLL`].
pub(crate) fn write_full(sock: &mut TcpStream, buf: &[u8], stop: &AtomicBool) -> Result<(), Halt> {
    let mut at = 0;
    while at < buf.len() {
        match sock.write(&buf[at..]) {
            Ok(0) => return Err(Halt::Failed),
            Ok(n) => at += n,
            Err(e) if is_retry(&e) => {
                if stop.load(Ordering::Relaxed) {
                    return Err(Halt::Stopped);
                }
            }
            Err(_) => return Err(Halt::Failed),
        }
    }
    Ok(())
}

fn halted(h: Halt, counters: &StreamCounters, stop: &AtomicBool) {
    if h == Halt::Failed && !stop.load(Ordering::Relaxed) {
        counters.failed.store(true, Ordering::Relaxed);
    }
}

/// The requester: transactions back to back until stopped.
pub fn client(
    spec: &StreamSpec,
    size: RrSize,
    mut sock: TcpStream,
    counters: &StreamCounters,
    stop: &AtomicBool,
) -> TcpStream {
    let _ = sock.set_nodelay(true);
    let _ = sock.set_write_timeout(Some(POLL));
    let req = pattern(size.request as usize);
    let mut resp = vec![0u8; size.response as usize];
    let per = size.request + size.response;
    let mut lat = Latency::new();
    let mut done = 0u64;
    let placement = &spec.work.report.placement;
    // A second handle for the stop watcher; without one, fall back to read timeouts.
    let reader = sock.try_clone().ok();
    if reader.is_none() {
        let _ = sock.set_read_timeout(Some(POLL));
    }
    let mut exchange = || {
        while !stop.load(Ordering::Relaxed) {
            let t0 = Instant::now();
            let r = write_full(&mut sock, &req, stop)
                .and_then(|()| read_full(&mut sock, &mut resp, stop));
            if let Err(h) = r {
                halted(h, counters, stop);
                break;
            }
            lat.record(t0.elapsed().as_nanos() as u64);
            done += 1;
            counters.packets.store(done, Ordering::Relaxed);
            counters.bytes.store(done * per, Ordering::Relaxed);
            if done % 8192 == 0 {
                placement.note();
            }
        }
    };
    match &reader {
        Some(r) => super::without_read_timeout(r, stop, exchange),
        None => exchange(),
    }
    spec.work.store_latency(lat);
    sock
}

/// The responder: reads a request, answers, until stopped or the client closes.
pub fn server(
    size: RrSize,
    mut sock: TcpStream,
    counters: &StreamCounters,
    stop: &AtomicBool,
) -> TcpStream {
    let _ = sock.set_nodelay(true);
    let _ = sock.set_write_timeout(Some(POLL));
    let mut req = vec![0u8; size.request as usize];
    let resp = pattern(size.response as usize);
    let per = size.request + size.response;
    let mut done = 0u64;
    let reader = sock.try_clone().ok();
    if reader.is_none() {
        let _ = sock.set_read_timeout(Some(POLL));
    }
    let mut exchange = || {
        while !stop.load(Ordering::Relaxed) {
            let r = read_full(&mut sock, &mut req, stop)
                .and_then(|()| write_full(&mut sock, &resp, stop));
            if let Err(h) = r {
                halted(h, counters, stop);
                break;
            }
            done += 1;
            counters.packets.store(done, Ordering::Relaxed);
            counters.bytes.store(done * per, Ordering::Relaxed);
        }
    };
    match &reader {
        Some(r) => super::without_read_timeout(r, stop, exchange),
        None => exchange(),
    }
    sock
}
