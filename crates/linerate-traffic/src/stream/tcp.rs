//! Bulk TCP sender and receiver loops.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};

use super::pacing::Pacer;
use super::{Budget, POLL, StreamCounters, StreamSpec, is_retry};

/// Sends `spec.len`-byte writes until stopped or the budget is spent. Returns the socket so
/// the caller decides when the peer sees it close.
pub fn send(
    spec: &StreamSpec,
    mut sock: TcpStream,
    counters: &StreamCounters,
    stop: &AtomicBool,
    budget: Option<&Budget>,
) -> TcpStream {
    let _ = sock.set_write_timeout(Some(POLL));
    let buf = pattern(spec.len.max(1));
    let pacer = Pacer::new(spec.rate_bps, spec.pacing_timer);
    let mut sent: u64 = 0;
    while !stop.load(Ordering::Relaxed) {
        let want = buf.len() as u64;
        let granted = match budget {
            Some(b) => match b.take(want) {
                0 => break,
                g => g,
            },
            None => want,
        };
        if let Some(p) = &pacer {
            p.wait(sent, stop);
        }
        match sock.write(&buf[..granted as usize]) {
            Ok(0) => break,
            Ok(n) => {
                sent += n as u64;
                counters.bytes.fetch_add(n as u64, Ordering::Relaxed);
                if let Some(b) = budget
                    && (n as u64) < granted
                {
                    b.give_back(granted - n as u64);
                }
            }
            Err(e) => {
                if let Some(b) = budget {
                    b.give_back(granted);
                }
                if is_retry(&e) {
                    continue;
                }
                if !stop.load(Ordering::Relaxed) {
                    counters.failed.store(true, Ordering::Relaxed);
                }
                break;
            }
        }
    }
    sock
}

/// Reads until stopped or the peer closes.
pub fn receive(
    spec: &StreamSpec,
    mut sock: TcpStream,
    counters: &StreamCounters,
    stop: &AtomicBool,
) -> TcpStream {
    let _ = sock.set_read_timeout(Some(POLL));
    let mut buf = vec![0u8; spec.len.clamp(64 * 1024, 1024 * 1024)];
    while !stop.load(Ordering::Relaxed) {
        match sock.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                counters.bytes.fetch_add(n as u64, Ordering::Relaxed);
            }
            Err(e) if is_retry(&e) => {}
            Err(_) => {
                if !stop.load(Ordering::Relaxed) {
                    counters.failed.store(true, Ordering::Relaxed);
                }
                break;
            }
        }
    }
    sock
}

/// A payload that compresses badly enough not to flatter compressing links.
pub(crate) fn pattern(len: usize) -> Vec<u8> {
    let mut x: u32 = 0x9E37_79B9;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}
