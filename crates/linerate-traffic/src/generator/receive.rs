//! `linerate gen --receive`: the generator's counter. Reads one interface through an AF_PACKET
//! receive ring, keeps only frames carrying linerate's signature, and counts received frames,
//! loss, duplicates and reordering (from the sequence numbers, [`crate::rx_tally`]) and one-way
//! latency percentiles (kernel receive time minus the frame's send stamp: both ends must share
//! a clock, as namespaces of one host do). The interface's own counters are read beside it for
//! a cross-check.

use std::net::Ipv4Addr;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use linerate_stats::distribution::LogHistogram;
use linerate_sys::rxring::RxRing;

use super::config::{ReceiveConfig, limit_seconds};
use super::document::{IfCounters, Latency, Received, ReceivedSchema};
use super::error::GenError;
use super::link;
use crate::frame;
use crate::rx_tally::RxTally;

/// The low 48 bits of a nanosecond time: what a frame's stamp holds.
const TS_MASK: u64 = (1 << 48) - 1;

/// Counts on `cfg.dev` until its duration or count, or until `stop` is raised; returns the
/// `linerate.gen-receive/1` document.
pub fn receive(cfg: &ReceiveConfig, stop: &AtomicBool) -> Result<Received, GenError> {
    Receiver::open(cfg)?.count(stop)
}

/// A counter whose receive ring is open: frames arriving from now on are counted once
/// [`Receiver::count`] runs (the ring holds them meanwhile). Whoever starts a sender after the
/// counter opens it first, so the first frames are not missed.
pub struct Receiver {
    cfg: ReceiveConfig,
    ring: RxRing,
    before: IfCounters,
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver")
            .field("dev", &self.cfg.dev)
            .finish()
    }
}

impl Receiver {
    /// Opens the receive ring on `cfg.dev` (CAP_NET_RAW).
    pub fn open(cfg: &ReceiveConfig) -> Result<Receiver, GenError> {
        let dev = cfg.dev.as_str();
        let before = link::read_counters(dev)?;
        let ring = RxRing::open(dev, 512, 16384).map_err(|e| {
            if e.kind() == std::io::ErrorKind::PermissionDenied {
                GenError::Permission {
                    program: "linerate gen --receive",
                    what: "a packet socket",
                    dev: dev.to_owned(),
                }
            } else {
                GenError::Io {
                    what: format!("opening a receive ring on {dev}"),
                    source: e,
                }
            }
        })?;
        // Counters of the ring reset on read: start from zero now.
        linerate_sys::packet::statistics(ring.as_fd())?;
        Ok(Receiver {
            cfg: cfg.clone(),
            ring,
            before,
        })
    }

    /// Counts until the configuration's duration or count, or until `stop` is raised.
    pub fn count(self, stop: &AtomicBool) -> Result<Received, GenError> {
        let Receiver {
            cfg,
            mut ring,
            before,
        } = self;
        count_frames(&cfg, &mut ring, before, stop)
    }
}

/// The counting loop over an open ring.
fn count_frames(
    cfg: &ReceiveConfig,
    ring: &mut RxRing,
    before: IfCounters,
    stop: &AtomicBool,
) -> Result<Received, GenError> {
    let dev = cfg.dev.as_str();
    let seconds = limit_seconds(cfg.duration, cfg.count);
    let count = cfg.count.unwrap_or(u64::MAX);
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(seconds.min(1e9));
    let mut tally = RxTally::new();
    let mut latency = LogHistogram::new(7);
    let mut bytes = 0u64;
    let mut other = 0u64;
    let mut skew = 0u64;
    let mut ring_drops = 0u64;
    let mut signed = 0u64;
    let mut first_ns = 0u64;
    let mut last_ns = 0u64;
    while signed < count && !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        ring.wait((deadline - now).min(Duration::from_millis(50)))?;
        let limit = usize::try_from(count - signed).unwrap_or(usize::MAX);
        ring.drain(limit, |f, meta| {
            if meta.outgoing {
                return;
            }
            let Some(stamp) = frame::parse_stamp(f) else {
                other += 1;
                return;
            };
            signed += 1;
            if first_ns == 0 {
                first_ns = meta.ts_ns;
            }
            last_ns = meta.ts_ns;
            bytes += (meta.len + frame::FCS) as u64;
            let src = Ipv4Addr::new(f[26], f[27], f[28], f[29]);
            tally.record(src, stamp.seq);
            let delay = (meta.ts_ns & TS_MASK).wrapping_sub(stamp.ts_ns48) & TS_MASK;
            if delay > TS_MASK / 2 {
                skew += 1;
            } else {
                latency.record_n(delay, 1);
            }
        });
        ring_drops += u64::from(linerate_sys::packet::statistics(ring.as_fd())?.drops);
    }
    let secs = started.elapsed().as_secs_f64().max(1e-9);
    let after = link::read_counters(dev)?;
    let t = tally.totals();
    let active = last_ns.saturating_sub(first_ns) as f64 / 1e9;
    let span = if active > 0.0 { active } else { secs };
    let us = |v: Option<u64>| v.unwrap_or(0) as f64 / 1000.0;
    let latency_us = (latency.count() > 0).then(|| Latency {
        min: us(latency.min()),
        p50: us(latency.quantile(0.5)),
        p90: us(latency.quantile(0.9)),
        p99: us(latency.quantile(0.99)),
        p999: us(latency.quantile(0.999)),
        max: us(latency.max()),
        mean: latency.mean().unwrap_or(0.0) / 1000.0,
    });
    Ok(Received {
        schema: ReceivedSchema,
        dev: dev.to_owned(),
        seconds: secs,
        active_seconds: active,
        received_frames: t.received,
        received_bytes: bytes,
        received_pps: t.received as f64 / span,
        received_l2_bps: bytes as f64 * 8.0 / span,
        lost_frames: t.lost,
        loss_ratio: t.loss_ratio(),
        duplicate_frames: t.duplicates,
        reordered_frames: t.reordered,
        streams: t.streams,
        other_frames: other,
        latency_us,
        clock_skew_frames: skew,
        ring_drops,
        interface: IfCounters {
            rx_packets: after.rx_packets.saturating_sub(before.rx_packets),
            rx_bytes: after.rx_bytes.saturating_sub(before.rx_bytes),
            rx_dropped: after.rx_dropped.saturating_sub(before.rx_dropped),
        },
    })
}
