//! `linerate gen`'s text: what was sent (per thread, with its CPU and queue) and what the
//! counter counted (loss, latency, the interface's own counters).

use linerate_traffic::generator::{EngineUsed, Received, Sent};
use linerate_units::{BitRate, PacketRate};

/// The sender's result as text.
pub fn sent(r: &Sent) -> String {
    let mut text = format!(
        "sent {} frames in {:.3} s on {}: {} ({} at L2)\nengine: {} ({})\n",
        r.sent_frames,
        r.seconds,
        r.dev,
        PacketRate::from_pps(r.sent_pps).human(),
        BitRate::from_bps_f64(r.sent_l2_bps).human(),
        match r.engine {
            EngineUsed::Packet => "packet",
            EngineUsed::Xdp => "xdp",
        },
        r.engine_detail,
    );
    if let Some(why) = &r.engine_fallback {
        text.push_str(&format!("  not AF_XDP: {why}\n"));
    }
    for t in &r.threads {
        let place = match (t.pinned, t.cpu) {
            (true, Some(c)) => format!("pinned to CPU {c}"),
            (_, Some(c)) => format!("unpinned, last on CPU {c}"),
            _ => "unpinned".to_owned(),
        };
        let queue = t.queue.map(|q| format!(", queue {q}")).unwrap_or_default();
        text.push_str(&format!(
            "  thread {} ({place}{queue}): {} frames, {}\n",
            t.thread,
            t.sent_frames,
            PacketRate::from_pps(t.sent_pps).human()
        ));
    }
    text
}

/// The counter's result as text.
pub fn received(r: &Received) -> String {
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
