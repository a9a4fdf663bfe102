//! Connect, request, response, close: one TCP connection per transaction.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::CRR_IO_TIMEOUT;
use super::tcp::{read_full, write_full};
use crate::config::RrSize;
use crate::flow::{POLL, StreamCounters, StreamSpec, is_retry, pattern};
use crate::latency::Latency;

/// The client: transactions back to back; failed connects are counted (soft errors) and
/// retried after a millisecond, never in a tight loop.
pub fn client(
    spec: &StreamSpec,
    addr: SocketAddr,
    size: RrSize,
    counters: &StreamCounters,
    stop: &AtomicBool,
) {
    let req = pattern(size.request as usize);
    let mut resp = vec![0u8; size.response as usize];
    let per = size.request + size.response;
    let mut lat = Latency::new();
    let mut done = 0u64;
    let report = &spec.work.report;
    while !stop.load(Ordering::Relaxed) {
        let t0 = Instant::now();
        let mut s = match TcpStream::connect_timeout(&addr, CRR_IO_TIMEOUT) {
            Ok(s) => s,
            Err(_) => {
                report.soft_errors.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
        };
        let _ = s.set_nodelay(true);
        let _ = s.set_read_timeout(Some(POLL));
        let _ = s.set_write_timeout(Some(POLL));
        let ok = write_full(&mut s, &req, stop).and_then(|()| read_full(&mut s, &mut resp, stop));
        // Close with a reset: no TIME_WAIT left behind on either side.
        let _ = socket2::SockRef::from(&s).set_linger(Some(Duration::ZERO));
        drop(s);
        if ok.is_err() {
            if !stop.load(Ordering::Relaxed) {
                report.soft_errors.fetch_add(1, Ordering::Relaxed);
            }
            continue;
        }
        lat.record(t0.elapsed().as_nanos() as u64);
        done += 1;
        counters.packets.store(done, Ordering::Relaxed);
        counters.bytes.store(done * per, Ordering::Relaxed);
        if done % 4096 == 0 {
            report.placement.note();
        }
    }
    spec.work.store_latency(lat);
}

/// A server worker: accepts transactions on the test's listener (shared with the test's other
/// workers) until stopped.
pub fn server(
    spec: &StreamSpec,
    listener: &TcpListener,
    size: RrSize,
    counters: &StreamCounters,
    stop: &AtomicBool,
) {
    // accept() honours SO_RCVTIMEO on Linux: the worker looks at `stop` every POLL.
    let _ = socket2::SockRef::from(listener).set_read_timeout(Some(POLL));
    let mut req = vec![0u8; size.request as usize];
    let resp = pattern(size.response as usize);
    let per = size.request + size.response;
    let mut done = 0u64;
    let report = &spec.work.report;
    while !stop.load(Ordering::Relaxed) {
        let mut s = match listener.accept() {
            Ok((s, _)) => s,
            Err(e) if is_retry(&e) => continue,
            Err(_) => {
                report.soft_errors.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
        };
        let _ = s.set_nodelay(true);
        let _ = s.set_read_timeout(Some(CRR_IO_TIMEOUT));
        let _ = s.set_write_timeout(Some(CRR_IO_TIMEOUT));
        // A client that stalls costs this worker at most the I/O timeout.
        let ok = s.read_exact(&mut req).and_then(|()| s.write_all(&resp));
        if ok.is_ok() {
            done += 1;
            counters.packets.store(done, Ordering::Relaxed);
            counters.bytes.store(done * per, Ordering::Relaxed);
        } else {
            report.soft_errors.fetch_add(1, Ordering::Relaxed);
        }
        // The client closes (with a reset) once it has the answer; closing here after that
        // leaves no TIME_WAIT behind.
    }
}
