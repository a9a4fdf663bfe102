//! `--mode pps`: small UDP datagrams as fast as the host can move them. Each stream is one
//! thread with its own connected socket (the server's are bound to the same port with
//! SO_REUSEADDR and picked by the kernel per client port); datagrams go out by batches of
//! [`BATCH`] per `sendmmsg` (or GSO runs of [`GSO_SEGMENTS`]) and come in by `recvmmsg` batches
//! that follow the socket's queue, GSO runs whole where the socket has UDP_GRO.
//!
//! A datagram starts with an 18-byte header: send time (seconds and microseconds, as iperf3),
//! a 64-bit sequence number from 1, and a 16-bit tag derived from the test's cookie. The
//! receiver takes only datagrams of a size it expects and with its test's tag; anything else
//! on the port is counted as foreign and otherwise ignored, so stray traffic never turns into
//! phantom loss. Loss, reordering and duplicates are counted by part 1's [`UdpRxTracker`].

pub mod frame;

use std::net::UdpSocket;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::flow::pacing::Pacer;
use crate::flow::rx_batch::RxBatch;
use crate::flow::rx_options;
use crate::flow::udp_rx::UdpRxTracker;
use crate::flow::{Budget, POLL, StreamCounters, StreamSpec, is_retry, pattern};
use linerate_sys::mmsg::{Batch, Wait};
use linerate_sys::socket::{force_recv_buffer, set_udp_segment};

pub use crate::datagram::{HEADER_LEN, IMIX_PAYLOADS, MIN_PAYLOAD, PpsSpec, tag_of};

/// Datagrams per send call.
pub const BATCH: usize = 64;
/// Receive buffer asked for on pps receivers (the kernel caps it at `net.core.rmem_max`).
pub const RECV_BUFFER: usize = 4 * 1024 * 1024;

fn now_parts() -> (u32, u32) {
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    (t.as_secs() as u32, t.subsec_micros())
}

fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

/// Datagrams per call: a full batch, or at a set rate about one millisecond's worth (so pacing
/// stays smooth).
fn batch_size(spec: &StreamSpec, p: &PpsSpec) -> usize {
    if spec.rate_bps == 0 {
        return BATCH;
    }
    let pps = spec.rate_bps as f64 / 8.0 / p.mean_len();
    ((pps / 1000.0) as usize).clamp(1, BATCH)
}

/// Datagrams per GSO send (the kernel's UDP_MAX_SEGMENTS is 64 on older kernels).
pub const GSO_SEGMENTS: usize = 64;
/// GSO sends per `sendmmsg`.
const GSO_MESSAGES: usize = 8;

/// Datagrams per message: [`GSO_SEGMENTS`] when UDP GSO is on for `sock`, else 1. GSO needs
/// one size (no IMIX), and is left off at a set rate so pacing stays smooth.
fn gso_segments(spec: &StreamSpec, p: &PpsSpec, sock: &UdpSocket) -> usize {
    if !p.gso || p.imix || spec.rate_bps != 0 {
        return 1;
    }
    let len = p.max_len();
    let segs = GSO_SEGMENTS.min(crate::config::MAX_UDP_LEN as usize / len);
    if segs < 2 {
        return 1;
    }
    match u16::try_from(len).map(|l| set_udp_segment(sock.as_fd(), l)) {
        Ok(Ok(())) => segs,
        _ => 1,
    }
}

/// Sends numbered datagrams in batches until stopped or the budget is spent.
pub fn send(
    spec: &StreamSpec,
    p: &PpsSpec,
    sock: UdpSocket,
    counters: &StreamCounters,
    stop: &AtomicBool,
    budget: Option<&Budget>,
) -> UdpSocket {
    let _ = sock.set_write_timeout(Some(POLL));
    let segs = gso_segments(spec, p, &sock);
    counters.gso_segments.store(segs as u64, Ordering::Relaxed);
    let n = if segs > 1 {
        GSO_MESSAGES
    } else {
        batch_size(spec, p)
    };
    let mut batch = Batch::new(n, p.max_len() * segs);
    let fill = pattern(p.max_len() * segs);
    for i in 0..n {
        batch.slot_mut(i).copy_from_slice(&fill);
    }
    let pacer = Pacer::new(spec.rate_bps, spec.pacing_timer);
    let placement = &spec.work.report.placement;
    let (mut seq, mut sent_bytes, mut sent_packets, mut calls) = (1u64, 0u64, 0u64, 0u64);
    while !stop.load(Ordering::Relaxed) {
        let now = now_parts();
        let mut bytes = 0u64;
        for i in 0..n {
            let slot = batch.slot_mut(i);
            let mut at = 0;
            for j in 0..segs {
                let s = seq + (i * segs + j) as u64;
                p.write_header(&mut slot[at..], s, now);
                at += p.len_for(s);
            }
            batch.set_len(i, at);
            bytes += at as u64;
        }
        let mut count = n;
        if let Some(b) = budget {
            let granted = b.take(bytes);
            if granted < bytes {
                // Send only the datagrams that fit whole; give the rest back. A GSO message
                // may end early: its datagrams are all one size.
                let mut used = 0u64;
                count = 0;
                while count < n && used + batch.len_of(count) as u64 <= granted {
                    used += batch.len_of(count) as u64;
                    count += 1;
                }
                let seg = p.max_len() as u64;
                if segs > 1 && count < n && granted - used >= seg {
                    let part = (granted - used) / seg * seg;
                    batch.set_len(count, part as usize);
                    used += part;
                    count += 1;
                }
                b.give_back(granted - used);
                bytes = used;
                if count == 0 {
                    break;
                }
            }
        }
        if let Some(pc) = &pacer {
            pc.wait(sent_bytes, stop);
        }
        match batch.send(sock.as_fd(), 0, count) {
            Ok(k) => {
                let done: u64 = (0..k).map(|i| batch.len_of(i) as u64).sum();
                if let Some(b) = budget {
                    b.give_back(bytes - done);
                }
                // A GSO message holds len / size datagrams (one size); otherwise one.
                let datagrams = if segs > 1 {
                    done / p.max_len() as u64
                } else {
                    k as u64
                };
                seq += datagrams;
                sent_bytes += done;
                sent_packets += datagrams;
                counters.bytes.store(sent_bytes, Ordering::Relaxed);
                counters.packets.store(sent_packets, Ordering::Relaxed);
            }
            Err(e) => {
                if let Some(b) = budget {
                    b.give_back(bytes);
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
        calls += 1;
        if calls % 4096 == 0 {
            placement.note();
        }
    }
    sock
}

/// Bytes of receive slots a pps receiver allocates at most (a GRO receiver's slots hold a
/// whole coalesced run, so its batch is bounded by memory before [`MAX_RX_BATCH`]).
const RX_MEMORY: usize = 16 << 20;
/// Datagrams (or coalesced runs) per `recvmmsg` at most.
pub const MAX_RX_BATCH: usize = 1024;

/// Receives in batches sized from the socket's queue ([`RxBatch`]) and accounts loss,
/// reordering, duplicates and foreign datagrams. With `p.gso` (the sender uses UDP GSO) the
/// socket asks for UDP_GRO, and a coalesced run is walked segment by segment, so every
/// datagram's header is accounted as if it had come alone.
pub fn receive(
    spec: &StreamSpec,
    p: &PpsSpec,
    sock: UdpSocket,
    counters: &StreamCounters,
    stop: &AtomicBool,
) -> UdpSocket {
    let _ = sock.set_read_timeout(Some(POLL));
    let r = socket2::SockRef::from(&sock);
    if r.recv_buffer_size().is_ok_and(|b| b < RECV_BUFFER) {
        // Root may go past net.core.rmem_max; others get what the sysctl allows.
        if force_recv_buffer(sock.as_fd(), RECV_BUFFER).is_err() {
            let _ = r.set_recv_buffer_size(RECV_BUFFER);
        }
    }
    let path = &counters.rx_path;
    let gro = p.gso && p.gro && rx_options::gro(&sock, path);
    rx_options::busy_poll(&sock, p.busy_poll_us, path);
    // One byte more than the largest datagram (or coalesced run), so an oversized one shows.
    let slot = if gro {
        (p.max_len() * GSO_SEGMENTS).min(crate::config::MAX_UDP_LEN as usize) + 1
    } else {
        p.max_len() + 1
    };
    let room = (RX_MEMORY / slot).clamp(RxBatch::MIN, MAX_RX_BATCH);
    let mut batch = if gro {
        Batch::with_control(room, slot)
    } else {
        Batch::new(room, slot)
    };
    let mut sizing = RxBatch::new(room);
    let mut acc = Accounting::default();
    let placement = &spec.work.report.placement;
    while !stop.load(Ordering::Relaxed) {
        let got = match batch.recv_up_to(sock.as_fd(), Wait::ForOne, sizing.want()) {
            Ok(n) => n,
            Err(e) if is_retry(&e) => continue,
            Err(_) => {
                if !stop.load(Ordering::Relaxed) {
                    counters.failed.store(true, Ordering::Relaxed);
                }
                break;
            }
        };
        sizing.on_receive(got);
        let now = now_secs();
        for i in 0..got {
            let d = batch.datagram(i);
            match rx_options::segment_size(&batch, i, gro) {
                Some(seg) if seg < d.len() && !batch.truncated(i) => {
                    acc.on_coalesced(p, d, seg, now);
                }
                _ => acc.on_datagram(p, d, now),
            }
        }
        acc.publish(counters);
        rx_options::publish(&sizing, acc.max_segments, path);
        if sizing.calls() % 4096 == 0 {
            placement.note();
        }
    }
    rx_options::publish(&sizing, acc.max_segments, path);
    sock
}

/// A pps receiver's running totals (pure: the tests feed it crafted datagrams).
#[derive(Debug, Clone, Default)]
pub struct Accounting {
    /// Loss, order and duplicates.
    pub rx: UdpRxTracker,
    /// Payload bytes of this test's datagrams.
    pub bytes: u64,
    /// Datagrams of this test, duplicates included.
    pub datagrams: u64,
    /// Datagrams that were not this test's.
    pub foreign: u64,
    /// Most datagrams one coalesced (GRO) receive held.
    pub max_segments: u64,
}

impl Accounting {
    /// Accounts one received datagram at time `now` (seconds since the epoch).
    pub fn on_datagram(&mut self, p: &PpsSpec, d: &[u8], now: f64) {
        match p.parse(d) {
            Some((seq, sent)) => {
                self.rx.on_datagram(seq, now - sent);
                self.bytes += d.len() as u64;
                self.datagrams += 1;
            }
            None => self.foreign += 1,
        }
    }

    /// Accounts one coalesced receive `d` of `seg`-byte datagrams (the last may be shorter),
    /// as UDP_GRO hands them up: each segment is a datagram with its own header.
    pub fn on_coalesced(&mut self, p: &PpsSpec, d: &[u8], seg: usize, now: f64) {
        let mut n = 0;
        for part in d.chunks(seg.max(1)) {
            self.on_datagram(p, part, now);
            n += 1;
        }
        self.max_segments = self.max_segments.max(n);
    }

    /// Copies the totals into the stream's counters (this thread is their only writer).
    pub fn publish(&self, c: &StreamCounters) {
        c.bytes.store(self.bytes, Ordering::Relaxed);
        c.packets.store(self.rx.max_seq, Ordering::Relaxed);
        c.lost.store(self.rx.lost, Ordering::Relaxed);
        c.out_of_order
            .store(self.rx.out_of_order, Ordering::Relaxed);
        c.duplicates.store(self.rx.duplicates, Ordering::Relaxed);
        c.foreign.store(self.foreign, Ordering::Relaxed);
        c.jitter_bits
            .store(self.rx.jitter.to_bits(), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(imix: bool) -> PpsSpec {
        PpsSpec::new(18, imix, &crate::protocol::Cookie::random())
    }

    fn datagram(p: &PpsSpec, seq: u64) -> Vec<u8> {
        let mut d = vec![0u8; p.len_for(seq)];
        p.write_header(&mut d, seq, (1_700_000_000, 0));
        d
    }

    #[test]
    fn imix_cycle_is_seven_four_one() {
        let p = spec(true);
        let count = |len| p.cycle.iter().filter(|&&l| l == len).count();
        assert_eq!(
            (count(18), count(548), count(1472), p.cycle.len()),
            (7, 4, 1, 12)
        );
        assert_eq!(p.max_len(), 1472);
        assert_eq!(p.len_for(1), 18);
        assert_eq!(p.len_for(13), 18);
        assert_eq!(p.len_for(8), 1472);
    }

    #[test]
    fn a_coalesced_run_is_accounted_datagram_by_datagram() {
        let p = spec(false);
        let mut run = Vec::new();
        for seq in [1, 2, 3, 5, 4, 4] {
            run.extend(datagram(&p, seq));
        }
        let mut a = Accounting::default();
        a.on_coalesced(&p, &run, 18, 1_700_000_000.5);
        assert_eq!(
            (a.datagrams, a.bytes, a.rx.max_seq, a.rx.lost),
            (6, 108, 5, 0)
        );
        assert_eq!(
            (a.rx.out_of_order, a.rx.duplicates, a.max_segments),
            (1, 1, 6)
        );
        // A short tail is a datagram of its own length: not ours here, so foreign.
        let mut b = Accounting::default();
        b.on_coalesced(&p, &run[..18 * 2 + 7], 18, 1_700_000_000.5);
        assert_eq!((b.datagrams, b.foreign, b.rx.max_seq), (2, 1, 2));
    }

    #[test]
    fn header_round_trips_and_strangers_are_refused() {
        let p = spec(false);
        let d = datagram(&p, 42);
        assert_eq!(p.parse(&d), Some((42, 1_700_000_000.0)));
        // Another test's tag, a wrong size, sequence 0, an iperf3 hello.
        let mut other = d.clone();
        other[16] ^= 0xFF;
        assert_eq!(p.parse(&other), None);
        assert_eq!(p.parse(&d[..17]), None);
        assert_eq!(p.parse(&datagram(&p, 0)), None);
        assert_eq!(p.parse(b"9876"), None);
    }
}
