//! One sending thread: pinned to its CPU, it stamps and queues frames in batches and kicks the
//! kernel after each. A rate is held by sleeping until the next frame is due, never by
//! spinning; a slot reused for the same frame only gets its stamp and checksum rewritten.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::document::ThreadSent;
use super::error::GenError;
use super::tx::Tx;
use crate::frame::{self, Template};

/// Frames stamped and queued between two kicks of the kernel.
const BATCH: usize = 256;

/// A failed hand-over to the kernel (built only on failure: the loop allocates nothing).
fn sending(source: std::io::Error) -> GenError {
    GenError::Io {
        what: "sending from the ring".to_owned(),
        source,
    }
}

/// One thread's share of the work.
pub(super) struct Job<'a> {
    pub(super) thread: u16,
    /// Templates per flow and size, indexed `[flow][position in the cycle]`.
    pub(super) templates: &'a [Vec<Template>],
    /// Frames/s of this thread, `None`: as fast as the ring drains.
    pub(super) pps: Option<f64>,
    /// Frames to send at most.
    pub(super) count: u64,
    pub(super) deadline: Instant,
    /// The caller's stop, and the run's own (a sibling thread failed to start).
    pub(super) stop: &'a AtomicBool,
    pub(super) abort: &'a AtomicBool,
    pub(super) cpu: Option<usize>,
}

impl Job<'_> {
    /// Sends until the count, the deadline or a stop; says what it sent.
    pub(super) fn send(self, mut ring: Tx) -> Result<ThreadSent, GenError> {
        if let Some(cpu) = self.cpu {
            linerate_sys::affinity::pin_current_thread(cpu).map_err(GenError::io(format!(
                "pinning sender thread {} to CPU {cpu}",
                self.thread
            )))?;
        }
        let flows = self.templates.len();
        let cycle = self.templates[0].len();
        // Which template each slot holds (usize::MAX: none yet): a slot reused for the
        // same frame only gets its stamp and checksum rewritten.
        let mut held = vec![usize::MAX; ring.slots()];
        let seq_base = u64::from(self.thread) << 56;
        let start = Instant::now();
        let mut sent = 0u64;
        let mut bytes = 0u64;
        let mut i = 0usize;
        while sent < self.count {
            let now = Instant::now();
            if now >= self.deadline
                || self.stop.load(Ordering::Relaxed)
                || self.abort.load(Ordering::Relaxed)
            {
                break;
            }
            let mut room = (self.count - sent).min(BATCH as u64);
            if let Some(pps) = self.pps {
                let due = (now.duration_since(start).as_secs_f64() * pps) as u64 + 1;
                if due <= sent {
                    // Sleep until the next frame is due, at most to the deadline.
                    let at = start + Duration::from_secs_f64((sent as f64) / pps);
                    let at = at.min(self.deadline);
                    std::thread::sleep(at.saturating_duration_since(now));
                    continue;
                }
                room = room.min(due - sent);
            }
            let ts = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0);
            let mut pushed = 0u64;
            while pushed < room {
                let (f, c) = (i % flows, i % cycle);
                let t = &self.templates[f][c];
                let id = f * cycle + c;
                let seq = seq_base | (sent + pushed);
                let pushed_one = ring.push(|buf, slot| match held.get_mut(slot) {
                    Some(h) if *h == id => t.restamp(buf, seq, ts),
                    Some(h) => {
                        *h = id;
                        t.stamp(buf, seq, ts)
                    }
                    None => t.stamp(buf, seq, ts),
                });
                if !pushed_one {
                    break;
                }
                bytes += (t.bytes().len() + frame::FCS) as u64;
                i = i.wrapping_add(1);
                pushed += 1;
            }
            sent += pushed;
            ring.flush().map_err(sending)?;
            if pushed < room {
                ring.wait(Duration::from_millis(10))?;
            }
        }
        // Let the kernel drain what is queued.
        ring.drain().map_err(sending)?;
        let secs = start.elapsed().as_secs_f64().max(1e-9);
        Ok(ThreadSent {
            thread: self.thread,
            sent_frames: sent,
            sent_bytes: bytes,
            seconds: secs,
            sent_pps: sent as f64 / secs,
            wrong_format: ring.wrong_format(),
            pinned: self.cpu.is_some(),
            cpu: self.cpu.or_else(linerate_sys::affinity::current_cpu),
            queue: ring.queue(),
        })
    }
}
