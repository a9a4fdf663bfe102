//! UDP sender and receiver loops.

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::flow::pacing::Pacer;
use crate::flow::udp_header::UdpHeader;
use crate::flow::udp_rx::UdpRxTracker;
use crate::flow::{Budget, POLL, StreamCounters, StreamSpec, is_retry, pattern};

/// Sends datagrams of `spec.len` bytes, numbered from 1, paced to `spec.rate_bps`.
pub fn send(
    spec: &StreamSpec,
    sock: UdpSocket,
    counters: &StreamCounters,
    stop: &AtomicBool,
    budget: Option<&Budget>,
) -> UdpSocket {
    let _ = sock.set_write_timeout(Some(POLL));
    let len = spec.len.max(UdpHeader::len(spec.udp64));
    let mut buf = pattern(len);
    let pacer = Pacer::new(spec.rate_bps, spec.pacing_timer);
    let mut seq: u64 = 1;
    let mut sent: u64 = 0;
    while !stop.load(Ordering::Relaxed) {
        if let Some(b) = budget
            && b.take(len as u64) == 0
        {
            break;
        }
        if let Some(p) = &pacer {
            p.wait(sent, stop);
        }
        UdpHeader::stamped(seq, SystemTime::now()).write(&mut buf, spec.udp64);
        match sock.send(&buf) {
            Ok(n) => {
                seq += 1;
                sent += n as u64;
                counters.bytes.fetch_add(n as u64, Ordering::Relaxed);
                counters.packets.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                if let Some(b) = budget {
                    b.give_back(len as u64);
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

/// Receives datagrams and accounts loss, order, duplicates and jitter.
pub fn receive(
    spec: &StreamSpec,
    sock: UdpSocket,
    counters: &StreamCounters,
    stop: &AtomicBool,
) -> UdpSocket {
    let _ = sock.set_read_timeout(Some(POLL));
    if !spec.window_set {
        grow_receive_buffer(&sock);
    }
    let mut buf = vec![0u8; 65_536];
    let mut rx = UdpRxTracker::default();
    let header_len = UdpHeader::len(spec.udp64);
    while !stop.load(Ordering::Relaxed) {
        let n = match sock.recv(&mut buf) {
            Ok(n) => n,
            Err(e) if is_retry(&e) => continue,
            Err(_) => {
                if !stop.load(Ordering::Relaxed) {
                    counters.failed.store(true, Ordering::Relaxed);
                }
                break;
            }
        };
        let Some(h) =
            UdpHeader::read(&buf[..n], spec.udp64).filter(|h| n >= header_len && h.seq > 0)
        else {
            counters.foreign.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        rx.on_datagram(h.seq, now - h.sent_secs());
        counters.bytes.fetch_add(n as u64, Ordering::Relaxed);
        counters.packets.store(rx.max_seq, Ordering::Relaxed);
        counters.lost.store(rx.lost, Ordering::Relaxed);
        counters
            .out_of_order
            .store(rx.out_of_order, Ordering::Relaxed);
        counters.duplicates.store(rx.duplicates, Ordering::Relaxed);
        counters
            .jitter_bits
            .store(rx.jitter.to_bits(), Ordering::Relaxed);
    }
    sock
}

/// Raises SO_RCVBUF to at least 4 MiB: at a few hundred thousand datagrams per second the
/// default buffer overflows during one scheduler tick, and that would be counted as loss.
fn grow_receive_buffer(sock: &UdpSocket) {
    const WANT: usize = 4 << 20;
    let r = socket2::SockRef::from(sock);
    if r.recv_buffer_size().is_ok_and(|s| s < WANT) {
        let _ = r.set_recv_buffer_size(WANT);
    }
}
