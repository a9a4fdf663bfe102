//! `linerate gen --receive`: the generator's counter. Reads one interface through an AF_PACKET
//! receive ring, keeps only frames carrying linerate's signature, and reports received frames,
//! loss, duplicates and reordering (from the sequence numbers, `linerate_traffic::rx_tally`)
//! and one-way latency percentiles (kernel receive time minus the frame's send stamp: both ends
//! must share a clock, as namespaces of one host do). The interface's own counters are read
//! beside it for a cross-check.

use std::net::Ipv4Addr;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context as _, bail};
use linerate_stats::distribution::LogHistogram;
use linerate_sys::rxring::RxRing;
use linerate_traffic::frame;
use linerate_traffic::rx_tally::{RxTally, Totals};
use linerate_units::{BitRate, PacketRate};
use serde::Serialize;

use super::Args;
use crate::output;
use crate::stop::Stop;

/// The `linerate.gen-receive/1` document.
#[derive(Debug, Serialize)]
struct Report {
    schema: &'static str,
    dev: String,
    seconds: f64,
    /// From the first to the last signed frame's arrival (kernel timestamps); the rates below
    /// are over this span when it is not zero, else over `seconds`.
    active_seconds: f64,
    /// Distinct signed frames.
    received_frames: u64,
    received_bytes: u64,
    received_pps: f64,
    received_l2_bps: f64,
    lost_frames: u64,
    loss_ratio: f64,
    duplicate_frames: u64,
    reordered_frames: u64,
    streams: u64,
    /// Frames seen on the interface without linerate's signature.
    other_frames: u64,
    /// One-way latency percentiles in microseconds (absent when no frame was stamped).
    latency_us: Option<Latency>,
    /// Frames whose send stamp lies after their arrival (the clocks disagree).
    clock_skew_frames: u64,
    /// Frames the receive ring dropped (PACKET_STATISTICS).
    ring_drops: u64,
    /// The interface's own counters over the same time.
    interface: IfCounters,
}

#[derive(Debug, Serialize)]
struct Latency {
    min: f64,
    p50: f64,
    p90: f64,
    p99: f64,
    p999: f64,
    max: f64,
    mean: f64,
}

#[derive(Debug, Serialize, Clone, Copy, Default)]
struct IfCounters {
    rx_packets: u64,
    rx_bytes: u64,
    rx_dropped: u64,
}

fn read_counters(dev: &str) -> anyhow::Result<IfCounters> {
    let one = |name: &str| -> anyhow::Result<u64> {
        let path = format!("/sys/class/net/{dev}/statistics/{name}");
        let text =
            std::fs::read_to_string(&path).with_context(|| format!("--dev {dev}: {path}"))?;
        text.trim()
            .parse()
            .with_context(|| format!("{path}: not a counter: {:?}", text.trim()))
    };
    Ok(IfCounters {
        rx_packets: one("rx_packets")?,
        rx_bytes: one("rx_bytes")?,
        rx_dropped: one("rx_dropped")?,
    })
}

const TS_MASK: u64 = (1 << 48) - 1;

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    if args.duration.is_some_and(|d| d.as_secs_f64() <= 0.0) {
        bail!("--duration: must be greater than zero");
    }
    let seconds = match (args.duration, args.count) {
        (Some(d), _) => d.as_secs_f64(),
        (None, Some(_)) => f64::INFINITY,
        (None, None) => 10.0,
    };
    let count = args.count.unwrap_or(u64::MAX);
    let before = read_counters(&args.dev)?;
    let mut ring = RxRing::open(&args.dev, 512, 16384).map_err(|e| {
        if e.kind() == std::io::ErrorKind::PermissionDenied {
            anyhow::anyhow!(
                "linerate gen --receive needs CAP_NET_RAW to open a packet socket on {} (run \
                 as root or grant the capability)",
                args.dev
            )
        } else {
            anyhow::Error::new(e).context(format!("opening a receive ring on {}", args.dev))
        }
    })?;
    // Counters of the ring reset on read: start from zero now.
    linerate_sys::packet::statistics(std::os::fd::AsFd::as_fd(&ring))?;
    let stop = Stop::install()?;
    let started = Instant::now();
    let deadline = started + std::time::Duration::from_secs_f64(seconds.min(1e9));
    let mut tally = RxTally::new();
    let mut latency = LogHistogram::new(7);
    let mut bytes = 0u64;
    let mut other = 0u64;
    let mut skew = 0u64;
    let mut ring_drops = 0u64;
    let mut signed = 0u64;
    let mut first_ns = 0u64;
    let mut last_ns = 0u64;
    while signed < count && !stop.requested() {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        ring.wait((deadline - now).min(std::time::Duration::from_millis(50)))?;
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
        ring_drops +=
            u64::from(linerate_sys::packet::statistics(std::os::fd::AsFd::as_fd(&ring))?.drops);
    }
    let secs = started.elapsed().as_secs_f64().max(1e-9);
    let after = read_counters(&args.dev)?;
    let t: Totals = tally.totals();
    let active = last_ns.saturating_sub(first_ns) as f64 / 1e9;
    let span = if active > 0.0 { active } else { secs };
    let us = |v: Option<u64>| v.unwrap_or(0) as f64 / 1000.0;
    let lat = (latency.count() > 0).then(|| Latency {
        min: us(latency.min()),
        p50: us(latency.quantile(0.5)),
        p90: us(latency.quantile(0.9)),
        p99: us(latency.quantile(0.99)),
        p999: us(latency.quantile(0.999)),
        max: us(latency.max()),
        mean: latency.mean().unwrap_or(0.0) / 1000.0,
    });
    let report = Report {
        schema: "linerate.gen-receive/1",
        dev: args.dev.clone(),
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
        latency_us: lat,
        clock_skew_frames: skew,
        ring_drops,
        interface: IfCounters {
            rx_packets: after.rx_packets.saturating_sub(before.rx_packets),
            rx_bytes: after.rx_bytes.saturating_sub(before.rx_bytes),
            rx_dropped: after.rx_dropped.saturating_sub(before.rx_dropped),
        },
    };
    if args.json {
        output::print_json(&report)?;
    } else {
        output::print_text(&render(&report))?;
    }
    if let Some(sig) = stop.signal() {
        return Ok(crate::stop::exit_code(sig));
    }
    Ok(ExitCode::SUCCESS)
}

fn render(r: &Report) -> String {
    let mut s = format!(
        "received {} linerate frames in {:.3} s on {} ({:.3} s first to last): {} ({} at L2), \
         {} stream(s)\n",
        r.received_frames,
        r.seconds,
        r.dev,
        r.active_seconds,
        PacketRate::from_pps(r.received_pps).human(),
        BitRate::from_bps_f64(r.received_l2_bps).human(),
        r.streams,
    );
    s.push_str(&format!(
        "  lost {} ({:.3} %), duplicates {}, reordered {}, other frames {}, ring drops {}\n",
        r.lost_frames,
        r.loss_ratio * 100.0,
        r.duplicate_frames,
        r.reordered_frames,
        r.other_frames,
        r.ring_drops,
    ));
    match &r.latency_us {
        Some(l) => s.push_str(&format!(
            "  one-way latency µs: min {:.1}  p50 {:.1}  p90 {:.1}  p99 {:.1}  p99.9 {:.1}  \
             max {:.1}  mean {:.1}\n",
            l.min, l.p50, l.p90, l.p99, l.p999, l.max, l.mean
        )),
        None => s.push_str("  one-way latency: no stamped frame\n"),
    }
    if r.clock_skew_frames > 0 {
        s.push_str(&format!(
            "  {} frame(s) were stamped after they arrived: sender and receiver clocks differ\n",
            r.clock_skew_frames
        ));
    }
    s.push_str(&format!(
        "  interface {}: rx_packets {}, rx_bytes {}, rx_dropped {} (all frames, kernel \
         counters)\n",
        r.dev, r.interface.rx_packets, r.interface.rx_bytes, r.interface.rx_dropped
    ));
    s
}
