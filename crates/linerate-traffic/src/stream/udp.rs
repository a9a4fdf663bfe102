//! UDP sender and receiver loops.

use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use super::mmsg::Batch;
use super::pacing::Pacer;
use super::udp_header::UdpHeader;
use super::udp_rx::UdpRxTracker;
use super::{Budget, POLL, StreamCounters, StreamSpec, is_retry};

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
    let mut buf = super::tcp::pattern(len);
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
        grow_buffer(&sock, false);
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

/// Like [`send`], with `spec.batch` datagrams per sendmmsg call (packet-rate mode).
pub fn send_batched(
    spec: &StreamSpec,
    sock: UdpSocket,
    counters: &StreamCounters,
    stop: &AtomicBool,
    budget: Option<&Budget>,
) -> UdpSocket {
    let _ = sock.set_write_timeout(Some(POLL));
    if !spec.window_set {
        grow_buffer(&sock, true);
    }
    let len = spec.len.max(UdpHeader::len(spec.udp64));
    let mut batch = Batch::new(spec.batch, len, &super::tcp::pattern(len));
    let fd = sock.as_raw_fd();
    let pacer = Pacer::new(spec.rate_bps, spec.pacing_timer);
    let mut seq: u64 = 1;
    let mut sent: u64 = 0;
    while !stop.load(Ordering::Relaxed) {
        let mut n = batch.slots();
        if let Some(b) = budget {
            n = (b.take((n * len) as u64) / len as u64) as usize;
            if n == 0 {
                break;
            }
        }
        if let Some(p) = &pacer {
            p.wait(sent, stop);
        }
        let now = SystemTime::now();
        for i in 0..n {
            UdpHeader::stamped(seq + i as u64, now).write(batch.slot_mut(i), spec.udp64);
        }
        match batch.send(fd, n) {
            Ok(k) => {
                if let Some(b) = budget {
                    b.give_back(((n - k) * len) as u64);
                }
                seq += k as u64;
                sent += (k * len) as u64;
                counters
                    .bytes
                    .fetch_add((k * len) as u64, Ordering::Relaxed);
                counters.packets.fetch_add(k as u64, Ordering::Relaxed);
            }
            Err(e) => {
                if let Some(b) = budget {
                    b.give_back((n * len) as u64);
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

/// Like [`receive`], with up to `spec.batch` datagrams per recvmmsg call.
pub fn receive_batched(
    spec: &StreamSpec,
    sock: UdpSocket,
    counters: &StreamCounters,
    stop: &AtomicBool,
) -> UdpSocket {
    let _ = sock.set_read_timeout(Some(POLL));
    // Small datagrams at a high rate overflow the default buffer in one scheduler tick.
    if !spec.window_set {
        grow_buffer(&sock, false);
    }
    let mut batch = Batch::new(spec.batch, 65_536.min(spec.len.max(64) * 2), &[]);
    let fd = sock.as_raw_fd();
    let mut rx = UdpRxTracker::default();
    let header_len = UdpHeader::len(spec.udp64);
    while !stop.load(Ordering::Relaxed) {
        let k = match batch.recv(fd) {
            Ok(k) => k,
            Err(e) if is_retry(&e) => continue,
            Err(_) => {
                if !stop.load(Ordering::Relaxed) {
                    counters.failed.store(true, Ordering::Relaxed);
                }
                break;
            }
        };
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        let mut bytes = 0u64;
        let mut foreign = 0u64;
        for i in 0..k {
            let d = batch.received(i);
            match UdpHeader::read(d, spec.udp64).filter(|h| d.len() >= header_len && h.seq > 0) {
                Some(h) => {
                    rx.on_datagram(h.seq, now - h.sent_secs());
                    bytes += d.len() as u64;
                }
                None => foreign += 1,
            }
        }
        if foreign > 0 {
            counters.foreign.fetch_add(foreign, Ordering::Relaxed);
        }
        counters.bytes.fetch_add(bytes, Ordering::Relaxed);
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

/// Raises SO_SNDBUF or SO_RCVBUF to at least 4 MiB (unless `-w` already set more).
fn grow_buffer(sock: &UdpSocket, send: bool) {
    const WANT: usize = 4 << 20;
    let r = socket2::SockRef::from(sock);
    if send {
        if r.send_buffer_size().is_ok_and(|s| s < WANT) {
            let _ = r.set_send_buffer_size(WANT);
        }
    } else if r.recv_buffer_size().is_ok_and(|s| s < WANT) {
        let _ = r.set_recv_buffer_size(WANT);
    }
}
