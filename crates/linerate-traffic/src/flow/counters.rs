//! Per-stream counters: written by the stream's thread only, read by the sampler.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// Cumulative counters of one stream.
#[derive(Debug, Default)]
pub struct StreamCounters {
    /// Payload bytes sent or received.
    pub bytes: AtomicU64,
    /// UDP: datagrams sent; on a receiver, iperf3's packet count (highest sequence seen).
    pub packets: AtomicU64,
    /// UDP receiver: datagrams lost (gaps in sequence, less late arrivals).
    pub lost: AtomicU64,
    /// UDP receiver: datagrams that arrived after a higher sequence number.
    pub out_of_order: AtomicU64,
    /// UDP receiver: datagrams seen twice.
    pub duplicates: AtomicU64,
    /// UDP receiver: datagrams too short or malformed to be ours.
    pub foreign: AtomicU64,
    /// UDP receiver: RFC 3550 jitter in seconds, as f64 bits.
    pub jitter_bits: AtomicU64,
    /// UDP pps sender: datagrams per send (UDP GSO segments; 1 without GSO); 0 until set.
    pub gso_segments: AtomicU64,
    /// UDP pps receiver: what its receive path did ([`crate::flow::rx_batch`]).
    pub rx_path: RxPathCounters,
    /// Set when the thread has ended.
    pub finished: AtomicBool,
    /// Set when the thread ended on an I/O error (not a stop or a clean close).
    pub failed: AtomicBool,
    /// The stream thread's id (Linux `gettid`), for its CPU time; 0 until it has started
    /// (and on other systems).
    pub thread_id: AtomicU32,
}

/// What a pps receiver's receive path used, for the report: written once it has set up and
/// then as it runs.
#[derive(Debug, Default)]
pub struct RxPathCounters {
    /// 1 when UDP_GRO is on, 2 when asked for and refused, 0 when not asked for.
    pub gro: AtomicU64,
    /// Most datagrams one GRO receive carried.
    pub gro_max_segments: AtomicU64,
    /// Largest `recvmmsg` batch asked for.
    pub batch_peak: AtomicU64,
    /// Receives per call, × 1000.
    pub per_call_milli: AtomicU64,
    /// Busy polling asked for, µs (0: not asked for).
    pub busy_poll_us: AtomicU64,
    /// 1 when the kernel took every busy-poll option, 2 when it refused one.
    pub busy_poll: AtomicU64,
}

/// A consistent-enough copy of the counters at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CounterSnapshot {
    /// Bytes.
    pub bytes: u64,
    /// Datagrams.
    pub packets: u64,
    /// Lost datagrams.
    pub lost: u64,
    /// Out-of-order datagrams.
    pub out_of_order: u64,
    /// Duplicates.
    pub duplicates: u64,
    /// Jitter in seconds.
    pub jitter: f64,
    /// TCP retransmits since the connection started.
    pub retransmits: u64,
}

impl StreamCounters {
    /// Records the calling thread as the stream's (called first thing in the thread).
    pub fn note_thread(&self) {
        #[cfg(target_os = "linux")]
        self.thread_id.store(
            linerate_sys::cpu_time::current_thread_id(),
            Ordering::Relaxed,
        );
    }

    /// Reads every counter.
    pub fn snapshot(&self) -> CounterSnapshot {
        CounterSnapshot {
            bytes: self.bytes.load(Ordering::Relaxed),
            packets: self.packets.load(Ordering::Relaxed),
            lost: self.lost.load(Ordering::Relaxed),
            out_of_order: self.out_of_order.load(Ordering::Relaxed),
            duplicates: self.duplicates.load(Ordering::Relaxed),
            jitter: f64::from_bits(self.jitter_bits.load(Ordering::Relaxed)),
            retransmits: 0,
        }
    }
}

impl CounterSnapshot {
    /// `self - earlier`, counter by counter (jitter is a level, not a count: kept).
    pub fn since(&self, earlier: &CounterSnapshot) -> CounterSnapshot {
        CounterSnapshot {
            bytes: self.bytes.saturating_sub(earlier.bytes),
            packets: self.packets.saturating_sub(earlier.packets),
            lost: self.lost.saturating_sub(earlier.lost),
            out_of_order: self.out_of_order.saturating_sub(earlier.out_of_order),
            duplicates: self.duplicates.saturating_sub(earlier.duplicates),
            jitter: self.jitter,
            retransmits: self.retransmits.saturating_sub(earlier.retransmits),
        }
    }
}
