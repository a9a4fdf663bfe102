//! The modes' results from a run: packet rates and wire bit rates for pps, transactions and
//! latency for rr/crr, and where every worker ran. The figures' types are the `linerate`
//! object's ([`crate::result`]); `--json` writes them there.

use linerate_iperf3::linerate::ZeroCopyReport;

use crate::config::{ClientConfig, Direction, Mode, Protocol};
use crate::latency::Latency;
use crate::pps::frame::wire_rates;
use crate::protocol::PeerResults;
use crate::result::{EndInfo, Interval, StartInfo, percent};
use crate::stream::StreamHandle;

pub use crate::result::{
    ModeResult, PlacementReport, PpsResult, ReceivePath, RrInterval, RrResult, ThreadReport,
};

fn rate(n: u64, secs: f64) -> f64 {
    if secs > 0.0 { n as f64 / secs } else { 0.0 }
}

/// The most datagrams per send among this side's pps senders; `None` when none sent here.
fn gso_segments(streams: &[StreamHandle]) -> Option<u64> {
    streams
        .iter()
        .map(|s| {
            s.counters
                .gso_segments
                .load(std::sync::atomic::Ordering::Relaxed)
        })
        .filter(|&n| n > 0)
        .max()
}

/// pps figures from the run's totals.
pub fn pps(end: &EndInfo, imix: bool, payload: u64, ipv6: bool) -> PpsResult {
    let mut r = PpsResult {
        frame: if imix {
            "imix".to_owned()
        } else {
            crate::pps::frame::frame_bytes(payload, ipv6).to_string()
        },
        ..PpsResult::default()
    };
    let (mut sent_bytes, mut recv_bytes, mut expected) = (0u64, 0u64, 0u64);
    for d in end.directions() {
        let s = end.sum(d);
        let u = s.udp.unwrap_or_default();
        r.sent_packets += u.sent_packets;
        expected += u.packets;
        r.lost_packets += u.lost;
        r.reordered_packets += u.out_of_order;
        r.duplicate_packets += u.duplicates.unwrap_or(0);
        sent_bytes += s.sender.bytes;
        recv_bytes += s.receiver.bytes;
        r.sent_seconds = r.sent_seconds.max(s.sender.seconds);
        r.received_seconds = r.received_seconds.max(s.receiver.seconds);
    }
    r.lost_in_gaps = r.lost_packets;
    r.received_packets = expected.saturating_sub(r.lost_in_gaps);
    r.lost_packets = r.sent_packets.saturating_sub(r.received_packets);
    r.lost_percent = percent(r.lost_packets, r.sent_packets);
    r.payload_bytes = if r.sent_packets > 0 {
        sent_bytes as f64 / r.sent_packets as f64
    } else {
        payload as f64
    };
    r.sent_pps = rate(r.sent_packets, r.sent_seconds);
    r.received_pps = rate(r.received_packets, r.received_seconds);
    (r.sent_l2_bits_per_second, r.sent_l1_bits_per_second) =
        wire_rates(r.sent_packets, sent_bytes, r.sent_seconds, ipv6);
    (r.received_l2_bits_per_second, r.received_l1_bits_per_second) = wire_rates(
        r.received_packets + r.duplicate_packets,
        recv_bytes,
        r.received_seconds,
        ipv6,
    );
    r
}

/// rr figures: transactions come from the requesters' bytes (each transaction adds exactly
/// REQ + RESP when it completes), latency from their histograms.
pub fn rr(
    cfg: &ClientConfig,
    streams: &[StreamHandle],
    intervals: &[Interval],
    end: &EndInfo,
) -> RrResult {
    let size = cfg.modes.shared.rr_size.unwrap_or_default();
    let per = (size.request + size.response).max(1);
    let sum = end.sum(Direction::Send);
    let mut lat = Latency::new();
    let mut errors = 0;
    let mut lost = 0;
    for h in streams
        .iter()
        .filter(|h| h.spec.direction == Direction::Send)
    {
        if let Some(l) = h.spec.work.latency() {
            lat.merge(&l);
        }
        errors += h
            .spec
            .work
            .report
            .soft_errors
            .load(std::sync::atomic::Ordering::Relaxed);
        lost += h.counters.lost.load(std::sync::atomic::Ordering::Relaxed);
    }
    let transactions = sum.sender.bytes / per;
    RrResult {
        protocol: cfg.protocol.iperf3_name().to_owned(),
        request_bytes: size.request,
        response_bytes: size.response,
        transactions,
        seconds: sum.sender.seconds,
        transactions_per_second: rate(transactions, sum.sender.seconds),
        lost_transactions: lost,
        errors,
        latency: lat.summary(),
        histogram: lat.buckets(),
        intervals: intervals
            .iter()
            .map(|iv| {
                let t = iv.sum(Direction::Send).bytes / per;
                RrInterval {
                    start: iv.start,
                    end: iv.end,
                    transactions: t,
                    transactions_per_second: rate(t, iv.seconds()),
                }
            })
            .collect(),
    }
}

/// How `streams`' pps receivers took their datagrams in (the first that set up; all of one
/// side's receivers are set up alike); `None` when none received here.
pub fn receive_path(streams: &[StreamHandle], side: &str) -> Option<ReceivePath> {
    use std::sync::atomic::Ordering::Relaxed;
    let c = streams
        .iter()
        .map(|s| &s.counters.rx_path)
        .find(|c| c.batch_peak.load(Relaxed) > 0)?;
    let word = |v: u64| match v {
        1 => "on",
        2 => "refused",
        _ => "off",
    };
    let busy = c.busy_poll_us.load(Relaxed);
    Some(ReceivePath {
        side: side.to_owned(),
        gro: word(c.gro.load(Relaxed)).to_owned(),
        gro_max_segments: streams
            .iter()
            .map(|s| s.counters.rx_path.gro_max_segments.load(Relaxed))
            .max()
            .unwrap_or(0),
        batch_peak: streams
            .iter()
            .map(|s| s.counters.rx_path.batch_peak.load(Relaxed))
            .max()
            .unwrap_or(0),
        per_call: c.per_call_milli.load(Relaxed) as f64 / 1000.0,
        busy_poll_us: (busy > 0).then_some(busy),
        busy_poll: (busy > 0).then(|| word(c.busy_poll.load(Relaxed)).to_owned()),
    })
}

/// What `streams`' zero-copy paths did on this side (`--zerocopy`), summed; `None` when it
/// was not asked for.
pub fn zerocopy(streams: &[StreamHandle], side: &str) -> Option<ZeroCopyReport> {
    let asked = streams.iter().map(|s| s.spec.work.zerocopy).max()?;
    if asked == crate::config::ZeroCopy::Off {
        return None;
    }
    let mut r = ZeroCopyReport {
        side: side.to_owned(),
        asked: asked.name().to_owned(),
        ..ZeroCopyReport::default()
    };
    for z in streams.iter().filter_map(|s| s.spec.work.zerocopy()) {
        if let Some(rx) = z.receive {
            // One receiver on the copy path puts the side there, with its reason.
            if r.receive.as_deref() != Some("copy") {
                r.receive = Some(rx.path.to_owned());
            }
            r.mapped_bytes += rx.mapped;
            r.copied_bytes += rx.copied;
            r.receive_fallback = r.receive_fallback.or(rx.fallback);
        }
        if let Some(tx) = z.send {
            if r.send.as_deref() != Some("copy") {
                r.send = Some(tx.path.to_owned());
            }
            r.zerocopy_sends += tx.sends;
            r.kernel_copied_sends += tx.kernel_copied;
            r.send_fallback = r.send_fallback.or(tx.fallback);
        }
    }
    Some(r)
}

/// Datagrams `streams`' receivers set aside as not their test's.
pub fn foreign_datagrams(streams: &[StreamHandle]) -> u64 {
    streams
        .iter()
        .map(|h| {
            h.counters
                .foreign
                .load(std::sync::atomic::Ordering::Relaxed)
        })
        .sum()
}

/// Where each of `streams`' workers ran.
pub fn thread_reports(streams: &[StreamHandle]) -> Vec<ThreadReport> {
    streams
        .iter()
        .map(|h| ThreadReport {
            id: h.spec.id,
            direction: Some(h.spec.direction),
            placement: h.spec.work.report.placement.report(),
        })
        .collect()
}

/// The modes' part of a client run, or `None` for a plain stream run without extras. `peer`
/// holds the server's thread placement when it is linerate.
pub fn build(
    cfg: &ClientConfig,
    streams: &[StreamHandle],
    start: &StartInfo,
    intervals: &[Interval],
    end: &EndInfo,
    peer: &PeerResults,
) -> Option<ModeResult> {
    let o = &cfg.modes;
    if cfg.mode == Mode::Stream
        && o.client_cpus.is_none()
        && crate::modes::zerocopy(cfg) == crate::config::ZeroCopy::Off
    {
        return None;
    }
    let ipv6 = start.peer.addr.parse::<std::net::IpAddr>().is_ok_and(|a| {
        a.is_ipv6() && !matches!(a, std::net::IpAddr::V6(v) if v.to_ipv4_mapped().is_some())
    });
    let extension = peer.linerate.as_ref();
    let server_threads = extension
        .map(|l| l.threads.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|mut t| {
            // The server's direction is the opposite of the client's; report the client's view.
            t.direction = t.direction.map(|d| match d {
                Direction::Send => Direction::Receive,
                Direction::Receive => Direction::Send,
            });
            t
        })
        .collect();
    let foreign = foreign_datagrams(streams) + extension.map_or(0, |l| l.foreign_datagrams);
    Some(ModeResult {
        pps: (cfg.mode == Mode::Pps && cfg.protocol == Protocol::Udp).then(|| PpsResult {
            foreign_datagrams: foreign,
            gso_segments: gso_segments(streams),
            receive_path: receive_path(streams, "client")
                .or_else(|| extension.and_then(|l| l.receive_path.clone())),
            ..pps(end, o.shared.imix, start.blksize, ipv6)
        }),
        rr: matches!(cfg.mode, Mode::Rr | Mode::Crr).then(|| rr(cfg, streams, intervals, end)),
        threads: thread_reports(streams),
        server_threads,
        zerocopy: zerocopy(streams, "client")
            .into_iter()
            .chain(extension.and_then(|l| l.zerocopy.clone()))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::CpuUtil;
    use crate::result::{SideTotals, StreamSummary, UdpTotals};

    fn end_with(u: UdpTotals, sent: u64, recv: u64) -> EndInfo {
        EndInfo {
            streams: vec![StreamSummary {
                id: 1,
                direction: Direction::Send,
                sender: SideTotals::new(sent, 2.0),
                receiver: SideTotals::new(recv, 2.0),
                udp: Some(u),
            }],
            cpu_local: CpuUtil::default(),
            cpu_remote: CpuUtil::default(),
            congestion_local: None,
            congestion_remote: None,
            server_output_text: None,
            server_output_json: None,
        }
    }

    #[test]
    fn pps_figures_from_known_counts() {
        // 2 000 000 sent in 2 s; the receiver saw up to 2 000 000, 1 000 lost, 10 late, 5 twice.
        let u = UdpTotals {
            sent_packets: 2_000_000,
            packets: 2_000_000,
            lost: 1_000,
            out_of_order: 10,
            duplicates: Some(5),
            ..UdpTotals::default()
        };
        let end = end_with(u, 2_000_000 * 18, (1_999_000 + 5) * 18);
        let r = pps(&end, false, 18, false);
        assert_eq!(r.frame, "64");
        assert_eq!(r.received_packets, 1_999_000);
        assert_eq!(
            (r.lost_packets, r.reordered_packets, r.duplicate_packets),
            (1_000, 10, 5)
        );
        assert!((r.sent_pps - 1e6).abs() < 1e-6);
        assert!((r.received_pps - 999_500.0).abs() < 1e-6);
        assert!((r.lost_percent - 0.05).abs() < 1e-9);
        assert_eq!(r.lost_in_gaps, 1_000);
        assert!((r.sent_l2_bits_per_second - 512e6).abs() < 1.0);
        assert!((r.sent_l1_bits_per_second - 672e6).abs() < 1.0);
        let want_rx_l1 = (1_999_000.0 + 5.0) * 84.0 * 8.0 / 2.0;
        assert!((r.received_l1_bits_per_second - want_rx_l1).abs() < 1.0);

        // The last 100 000 never arrived: no gap shows them, the sender's count does.
        let u = UdpTotals {
            sent_packets: 2_000_000,
            packets: 1_900_000,
            lost: 1_000,
            ..UdpTotals::default()
        };
        let r2 = pps(&end_with(u, 0, 0), false, 18, false);
        assert_eq!(r2.received_packets, 1_899_000);
        assert_eq!((r2.lost_packets, r2.lost_in_gaps), (101_000, 1_000));
    }
}
