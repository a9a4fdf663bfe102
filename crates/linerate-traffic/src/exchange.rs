//! Building this side's results for `EXCHANGE_RESULTS` (shared by client and server).

use crate::config::{Direction, Protocol};
use crate::cpu::CpuUtil;
use crate::protocol::extension::ResultsExtension;
use crate::protocol::{PeerResults, PeerStreamResult};
use crate::sampler::Sampler;
use crate::stream::StreamHandle;

/// This side's results from its streams' totals.
pub fn local_results(
    streams: &[StreamHandle],
    sampler: &Sampler,
    cpu: CpuUtil,
    protocol: Protocol,
    congestion: Option<String>,
) -> PeerResults {
    let (totals, secs) = sampler.totals(streams);
    let sends_tcp =
        protocol == Protocol::Tcp && streams.iter().any(|h| h.spec.direction == Direction::Send);
    let out = streams
        .iter()
        .zip(totals.iter())
        .map(|(h, t)| {
            let sender = h.spec.direction == Direction::Send;
            let udp = protocol == Protocol::Udp;
            PeerStreamResult {
                id: h.spec.id,
                bytes: t.bytes,
                retransmits: if sender && !udp {
                    t.retransmits as i64
                } else {
                    -1
                },
                jitter: if udp && !sender { t.jitter } else { 0.0 },
                errors: if udp && !sender { t.lost as i64 } else { 0 },
                omitted_errors: 0,
                packets: if udp { t.packets as i64 } else { 0 },
                omitted_packets: 0,
                start_time: 0.0,
                end_time: secs,
                out_of_order: (udp && !sender).then_some(t.out_of_order),
                duplicates: (udp && !sender).then_some(t.duplicates),
            }
        })
        .collect();
    PeerResults {
        cpu_util_total: cpu.total,
        cpu_util_user: cpu.user,
        cpu_util_system: cpu.system,
        sender_has_retransmits: i64::from(sends_tcp),
        congestion_used: if protocol == Protocol::Tcp {
            congestion
        } else {
            None
        },
        streams: out,
        server_output_text: None,
        server_output_json: None,
        linerate: Some(ResultsExtension {
            version: crate::EXTENSION_VERSION,
            engine: crate::ENGINE_VERSION.to_owned(),
            threads: crate::modes::result::thread_reports(streams),
            foreign_datagrams: crate::modes::result::foreign_datagrams(streams),
            receive_path: crate::modes::result::receive_path(streams, "server"),
            zerocopy: crate::modes::result::zerocopy(streams, "server"),
            // The session adds its evidence once the sampler has stopped.
            evidence: None,
        }),
    }
}

/// A short description of this host, like iperf3's `system_info`.
pub fn system_info() -> String {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_owned())
            .unwrap_or_default()
    };
    format!(
        "{} {} {} {}",
        read("/proc/sys/kernel/ostype"),
        read("/proc/sys/kernel/hostname"),
        read("/proc/sys/kernel/osrelease"),
        std::env::consts::ARCH
    )
}
