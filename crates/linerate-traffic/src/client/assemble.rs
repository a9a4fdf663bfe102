//! Joining this side's totals with the server's results into [`EndInfo`].

use crate::config::{Direction, Protocol};
use crate::cpu::CpuUtil;
use crate::protocol::PeerResults;
use crate::result::{EndInfo, SideTotals, StreamSummary, UdpTotals, percent};
use crate::sampler::Sampler;
use crate::stream::{CounterSnapshot, StreamHandle};

fn peer_secs(start: f64, end: f64, fallback: f64) -> f64 {
    let s = end - start;
    if s > 0.0 { s } else { fallback }
}

/// Builds the end section from local totals and the peer's results (matched by stream id).
pub fn end_info(
    streams: &[StreamHandle],
    sampler: &Sampler,
    totals: &[CounterSnapshot],
    secs: f64,
    cpu: CpuUtil,
    congestion_local: Option<String>,
    peer: &PeerResults,
) -> EndInfo {
    let mut out = Vec::with_capacity(streams.len());
    for (i, (h, t)) in streams.iter().zip(totals.iter()).enumerate() {
        let remote = peer.streams.iter().find(|s| s.id == h.spec.id);
        let mut local = SideTotals::new(t.bytes, secs);
        let (r_bytes, r_secs) = remote.map_or((0, secs), |r| {
            (r.bytes, peer_secs(r.start_time, r.end_time, secs))
        });
        let mut other = SideTotals::new(r_bytes, r_secs);
        let udp = h.spec.protocol == Protocol::Udp;
        let summary = match h.spec.direction {
            Direction::Send => {
                if !udp {
                    local.retransmits = Some(t.retransmits);
                    let agg = sampler.tcp.get(i).copied().unwrap_or_default();
                    local.max_snd_cwnd = Some(agg.max_cwnd());
                    local.min_rtt = Some(agg.min_rtt());
                    local.mean_rtt = Some(agg.mean_rtt());
                    local.max_rtt = Some(agg.max_rtt());
                }
                let udp = udp.then(|| {
                    let r = remote.cloned().unwrap_or_default();
                    let packets = r.packets.max(0) as u64;
                    let lost = r.errors.max(0) as u64;
                    UdpTotals {
                        sent_packets: t.packets,
                        packets,
                        lost,
                        lost_percent: percent(lost, packets),
                        out_of_order: r.out_of_order.unwrap_or(0),
                        duplicates: r.duplicates,
                        jitter_ms: r.jitter * 1000.0,
                    }
                });
                StreamSummary {
                    id: h.spec.id,
                    direction: Direction::Send,
                    sender: local,
                    receiver: other,
                    udp,
                }
            }
            Direction::Receive => {
                if !udp && peer.sender_has_retransmits == 1 {
                    other.retransmits = remote
                        .map(|r| r.retransmits)
                        .filter(|r| *r >= 0)
                        .map(|r| r as u64);
                }
                let udp = udp.then(|| UdpTotals {
                    sent_packets: remote.map_or(0, |r| r.packets.max(0) as u64),
                    packets: t.packets,
                    lost: t.lost,
                    lost_percent: percent(t.lost, t.packets),
                    out_of_order: t.out_of_order,
                    duplicates: Some(t.duplicates),
                    jitter_ms: t.jitter * 1000.0,
                });
                StreamSummary {
                    id: h.spec.id,
                    direction: Direction::Receive,
                    sender: other,
                    receiver: local,
                    udp,
                }
            }
        };
        out.push(summary);
    }
    EndInfo {
        streams: out,
        cpu_local: cpu,
        cpu_remote: CpuUtil {
            total: peer.cpu_util_total,
            user: peer.cpu_util_user,
            system: peer.cpu_util_system,
        },
        congestion_local,
        congestion_remote: peer.congestion_used.clone(),
        server_output_text: peer.server_output_text.clone(),
        server_output_json: peer.server_output_json.clone(),
    }
}
