//! One emulator port: an AF_PACKET socket on a veth with virtio-net headers (so partial
//! checksums and GSO metadata survive the bridge), and the forwarding loop of one direction.

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use linerate_sys::mmsg::{Batch, Wait};
use linerate_sys::packet::{self, PacketOptions};
use linerate_sys::socket::wait_readable;

use super::shaper::{DelayLine, Shaper, Verdict};
use crate::impair::Impairment;

/// Size of `struct virtio_net_hdr` in front of every frame.
pub const VNET_HDR_LEN: usize = packet::VNET_HDR_LEN;
const BATCH: usize = 64;
const SLOT: usize = VNET_HDR_LEN + 65_536 + 64;

/// Opens a packet socket on interface `ifname` of the calling thread's namespace: virtio-net
/// headers, not its own transmissions, past the qdisc, promiscuous, with large buffers.
pub fn open(ifname: &str) -> io::Result<OwnedFd> {
    packet::open(
        ifname,
        &PacketOptions {
            vnet_hdr: true,
            ignore_outgoing: true,
            qdisc_bypass: true,
            promiscuous: true,
            recv_buffer: Some(32 << 20),
            send_buffer: Some(8 << 20),
        },
    )
}

/// Counters of one direction.
#[derive(Debug, Default)]
pub struct Counters {
    /// Frames received.
    pub rx_frames: AtomicU64,
    /// Bytes received (frames, without the virtio header).
    pub rx_bytes: AtomicU64,
    /// Frames sent.
    pub tx_frames: AtomicU64,
    /// Bytes sent.
    pub tx_bytes: AtomicU64,
    /// Frames dropped by the loss model.
    pub lost: AtomicU64,
    /// Frames dropped at the queue limit.
    pub overflow: AtomicU64,
    /// Frames the kernel refused to send, or too long to receive.
    pub errors: AtomicU64,
    /// Most frames held at once.
    pub max_held: AtomicU64,
    /// Frames the kernel dropped before the emulator could read them (socket buffer full).
    pub kernel_drops: AtomicU64,
}

/// The bytes of a frame as the kernel holds it (no FCS) and how many wire frames it stands
/// for: a GSO super-frame counts the headers of every segment it stands for.
pub fn frame_size(frame: &[u8]) -> (u64, u64) {
    if frame.len() <= VNET_HDR_LEN {
        return (0, 0);
    }
    let len = frame.len() - VNET_HDR_LEN;
    let gso_type = frame[1];
    let gso_size = usize::from(u16::from_ne_bytes([frame[4], frame[5]]));
    let csum_start = usize::from(u16::from_ne_bytes([frame[6], frame[7]]));
    if gso_type == 0 || gso_size == 0 {
        return (len as u64, 1);
    }
    // Headers up to the transport header, plus a TCP header with timestamps.
    let hdr = if csum_start > 0 { csum_start + 32 } else { 66 };
    let payload = len.saturating_sub(hdr);
    let segments = payload.div_ceil(gso_size).max(1);
    ((len + (segments - 1) * hdr) as u64, segments as u64)
}

/// Forwards frames from `rx` to `tx` through `shaper` until `stop` is set or a socket fails
/// (the interface went away).
pub fn forward(
    rx: BorrowedFd<'_>,
    tx: BorrowedFd<'_>,
    shaper: &mut Shaper,
    imp: &Impairment,
    counters: &Counters,
    stop: &AtomicBool,
) -> io::Result<()> {
    let epoch = Instant::now();
    let now_ns = || epoch.elapsed().as_nanos() as u64;
    let mut batch = Batch::new(BATCH, SLOT);
    let mut line = DelayLine::default();
    let mut pool: Vec<Vec<u8>> = Vec::new();
    let mut out: Vec<Vec<u8>> = Vec::with_capacity(BATCH);
    let mut polled = Instant::now();
    while !stop.load(Relaxed) {
        if polled.elapsed() >= Duration::from_millis(100) {
            polled = Instant::now();
            if let Ok(stats) = packet::statistics(rx) {
                counters
                    .kernel_drops
                    .fetch_add(u64::from(stats.drops), Relaxed);
            }
        }
        let n = batch.recv(rx, Wait::Never)?;
        let now = now_ns();
        for i in 0..n {
            if batch.truncated(i) {
                counters.errors.fetch_add(1, Relaxed);
                continue;
            }
            let frame = batch.datagram(i);
            counters.rx_frames.fetch_add(1, Relaxed);
            counters
                .rx_bytes
                .fetch_add((frame.len().saturating_sub(VNET_HDR_LEN)) as u64, Relaxed);
            let (bytes, segments) = frame_size(frame);
            match shaper.admit_frame(now, bytes, segments, line.len()) {
                Verdict::Lost => {
                    counters.lost.fetch_add(1, Relaxed);
                }
                Verdict::Overflow => {
                    counters.overflow.fetch_add(1, Relaxed);
                }
                Verdict::Due(due) => {
                    let mut buf = pool.pop().unwrap_or_default();
                    buf.clear();
                    buf.extend_from_slice(frame);
                    line.push(due, buf, imp.reorder);
                }
            }
        }
        let held = line.len() as u64;
        if held > counters.max_held.load(Relaxed) {
            counters.max_held.store(held, Relaxed);
        }
        let now = now_ns();
        while let Some(frame) = line.pop_due(now) {
            out.push(frame);
            if out.len() == BATCH {
                send_all(tx, &mut batch, &mut out, &mut pool, counters)?;
            }
        }
        send_all(tx, &mut batch, &mut out, &mut pool, counters)?;
        if n == BATCH {
            continue;
        }
        let wait = match line.next_due() {
            Some(due) => {
                Duration::from_nanos(due.saturating_sub(now_ns())).min(Duration::from_millis(100))
            }
            None => Duration::from_millis(100),
        };
        if !wait.is_zero() {
            wait_readable(rx, Some(wait))?;
        }
    }
    Ok(())
}

/// Sends the frames in `out` through `batch`'s headers (the frames are not copied), then
/// returns their buffers to `pool`.
fn send_all(
    tx: BorrowedFd<'_>,
    batch: &mut Batch,
    out: &mut Vec<Vec<u8>>,
    pool: &mut Vec<Vec<u8>>,
    counters: &Counters,
) -> io::Result<()> {
    let mut i = 0;
    while i < out.len() {
        match batch.send_frames(tx, &out[i..]) {
            Ok(0) => {
                counters.errors.fetch_add(1, Relaxed);
                i += 1;
            }
            Ok(k) => {
                let bytes: usize = out[i..i + k]
                    .iter()
                    .map(|f| f.len().saturating_sub(VNET_HDR_LEN))
                    .sum();
                counters.tx_frames.fetch_add(k as u64, Relaxed);
                counters.tx_bytes.fetch_add(bytes as u64, Relaxed);
                i += k;
            }
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ENOBUFS | libc::EAGAIN | libc::EMSGSIZE | libc::EINVAL)
                ) =>
            {
                // The receiving side is full (or refused this frame): drop it, like a wire would.
                counters.errors.fetch_add(1, Relaxed);
                i += 1;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    pool.append(out);
    Ok(())
}
