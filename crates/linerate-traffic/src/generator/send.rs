//! `linerate gen`'s sending side: builds the frames of every flow and size once, opens a ring
//! or AF_XDP socket per thread (all before the first frame, so a permission error is one
//! message), then runs one pinned thread per ring ([`super::sender`]) until the duration, the
//! count or a stop, and sums what they sent.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::config::{Engine, Rate, SendConfig, limit_seconds};
use super::document::{Sent, SentSchema};
use super::error::GenError;
use super::sender::Job;
use super::tx::{self, Opened};
use super::{link, placement};
use crate::frame::{FlowAddr, Template};

/// Sends as `cfg` says until its duration or count, or until `stop` is raised (the threads
/// look at it between batches); returns the `linerate.gen/1` document.
pub fn send(cfg: &SendConfig, stop: &AtomicBool) -> Result<Sent, GenError> {
    let order = &cfg.frames;
    let src_mac = link::read_mac(&cfg.dev)?;
    let src_ip = match cfg.src_ip {
        Some(ip) => ip,
        None => link::first_ipv4(&cfg.dev)?.ok_or(GenError::NoSourceAddress)?,
    };
    let dst_mac = match cfg.dst_mac {
        Some(m) => m,
        None => link::neighbour_mac(&cfg.dev, cfg.dst_ip)?,
    };
    let base = FlowAddr {
        dst_mac,
        src_mac,
        src_ip,
        dst_ip: cfg.dst_ip,
        src_port: 10000,
        dst_port: cfg.port,
    };
    let mean_frame = order.iter().sum::<usize>() as f64 / order.len().max(1) as f64;
    let pps = match cfg.rate {
        Rate::Max => None,
        Rate::Pps(p) => Some(p),
        Rate::Bits(b) => Some(b / (mean_frame * 8.0)),
    };
    let seconds = limit_seconds(cfg.duration, cfg.count);
    let largest = order.iter().copied().max().unwrap_or(64);
    // A packet ring slot holds the tpacket2 header (32 bytes), the virtio_net_hdr (10)
    // and the frame without FCS.
    let slot = (largest + 32 + 10).next_power_of_two().max(2048);
    // Templates per flow and size, indexed [flow][size position in order].
    let mut templates = Vec::new();
    for f in 0..cfg.flows.max(1) {
        let mut row = Vec::new();
        for &size in order {
            row.push(Template::new(&base.nth(f), size)?);
        }
        templates.push(row);
    }
    let threads = usize::from(cfg.threads.max(1));
    let cpus = placement::cpus(&cfg.placement, threads)?;
    // Open every socket first, so a permission error is one clear message.
    let mut fallback = None;
    let opened = match cfg.engine {
        Engine::Packet => tx::open_packet(&cfg.dev, slot, threads)?,
        Engine::Xdp => tx::open_xdp(&cfg.dev, largest, threads)?,
        Engine::Auto => match tx::open_xdp(&cfg.dev, largest, threads) {
            Ok(o) => o,
            Err(e) => {
                fallback = Some(e.chain());
                tx::open_packet(&cfg.dev, slot, threads)?
            }
        },
    };
    let Opened {
        rings,
        engine,
        detail,
    } = opened;
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(seconds.min(1e9));
    let abort = AtomicBool::new(false);
    let abort = &abort;
    let per = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for (t, ring) in rings.into_iter().enumerate() {
            let share = |n: u64| n / threads as u64 + u64::from((t as u64) < n % threads as u64);
            let job = Job {
                thread: t as u16,
                templates: &templates,
                pps: pps.map(|p| p / threads as f64),
                count: cfg.count.map(share).unwrap_or(u64::MAX),
                deadline,
                stop,
                abort,
                cpu: cpus[t],
            };
            let spawned = std::thread::Builder::new()
                .name(format!("gen-{t}"))
                .spawn_scoped(s, move || {
                    let sent = job.send(ring);
                    if sent.is_err() {
                        // One thread failing ends the run: the others stop at their next batch.
                        abort.store(true, Ordering::Relaxed);
                    }
                    sent
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    // The threads started stop at their next batch.
                    abort.store(true, Ordering::Relaxed);
                    return Err(GenError::Io {
                        what: "starting a sender thread".into(),
                        source: e,
                    });
                }
            }
        }
        // The first thread that fails stops the others; its error is the run's.
        let mut per = Vec::new();
        let mut failed = None;
        for h in handles {
            match h.join().map_err(|_| GenError::Panicked).and_then(|r| r) {
                Ok(p) => per.push(p),
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
        }
        failed.map_or(Ok(per), Err)
    })?;
    // The senders' own time (first frame to last hand-over), not thread start-up.
    let secs = per
        .iter()
        .map(|p| p.seconds)
        .fold(0.0, f64::max)
        .max(1e-9)
        .min(started.elapsed().as_secs_f64().max(1e-9));
    let sent: u64 = per.iter().map(|p| p.sent_frames).sum();
    let bytes: u64 = per.iter().map(|p| p.sent_bytes).sum();
    Ok(Sent {
        schema: SentSchema,
        dev: cfg.dev.clone(),
        sent_frames: sent,
        sent_bytes: bytes,
        seconds: secs,
        sent_pps: sent as f64 / secs,
        sent_l2_bps: bytes as f64 * 8.0 / secs,
        engine,
        engine_detail: detail,
        engine_fallback: fallback,
        threads: per,
    })
}
