//! The short "limit" block printed after a TCP test's summary (and by `linerate show`): the
//! limit that held the test, its figures, the path's ceiling, and what lifts it.

use std::fmt::Write as _;

use linerate_iperf3::limit::{LimitKind, TcpLimit};
use linerate_units::BitRate;

/// The verdict for `doc`: the path's rate from `--path-rate`, else the egress NIC's speed (a
/// physical NIC's; a virtual interface's nominal speed is said and not used), and the kernel
/// and memory from this host's snapshot (the sender's and the receiver's in a lab).
pub fn explain(
    doc: &linerate_iperf3::Document,
    path_rate: Option<BitRate>,
    host: &linerate_probe::HostSnapshot,
) -> Option<TcpLimit> {
    use linerate_probe::egress::{self, Egress};
    let mut no_rate = None;
    let path = match path_rate {
        Some(rate) => Some(linerate_explain::tcp::PathRate {
            rate,
            source: "--path-rate".into(),
        }),
        None => {
            let local = doc
                .start
                .connected
                .first()
                .and_then(|c| c.local_host.parse().ok());
            match local.and_then(|ip| egress::for_address(host, ip)) {
                Some(Egress::Speed { name, rate }) => Some(linerate_explain::tcp::PathRate {
                    rate,
                    source: format!("egress NIC {name}"),
                }),
                Some(Egress::NoRate(why)) => {
                    no_rate = Some(why);
                    None
                }
                None => None,
            }
        }
    };
    let facts = linerate_explain::tcp::HostFacts {
        kernel: host.host.kernel.value().cloned(),
        ram: host.host.memory.value().copied(),
    };
    let mut limit = linerate_explain::tcp::explain(doc, path.as_ref(), &facts)?;
    if let Some(why) = no_rate {
        limit
            .unseen
            .insert(0, format!("the egress interface's rate: {why}"));
    }
    Some(limit)
}

/// The block, ending in a newline.
pub fn render(l: &TcpLimit) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "\nlimit: {} — {}", l.kind.describe(), l.why);
    if let Some(c) = &l.ceiling {
        let _ = writeln!(
            o,
            "  ceiling: {} goodput on a {} path ({}), min RTT {:.2} ms, MSS {}, MTU {}",
            BitRate::from_bps_f64(c.goodput_bps).human(),
            BitRate::from_bps_f64(c.path_rate_bps).human(),
            c.source,
            c.min_rtt_us as f64 / 1000.0,
            c.mss,
            c.mtu
        );
    }
    if let (Some(m), LimitKind::Congestion) = (l.mathis_bps, l.kind) {
        let _ = writeln!(
            o,
            "  Mathis bound {} beside the measured {}",
            BitRate::from_bps_f64(m).human(),
            BitRate::from_bps_f64(l.bits_per_second).human()
        );
    }
    if l.streams.len() > 1 {
        for s in &l.streams {
            let _ = writeln!(
                o,
                "  stream {}: {} ({})",
                s.id,
                s.kind.describe(),
                BitRate::from_bps_f64(s.bits_per_second).human()
            );
        }
    }
    for u in &l.unseen {
        let _ = writeln!(o, "  not seen: {u}");
    }
    if let Some(p) = &l.prescription {
        let keys: Vec<String> = p
            .settings
            .iter()
            .map(|s| format!("{} = {}", s.key, s.value))
            .collect();
        let _ = writeln!(
            o,
            "  fix ({}, Linux {}): {} — one flow's ceiling then {}",
            p.side.name(),
            p.kernel,
            keys.join(", "),
            BitRate::from_bps_f64(p.predicted_bps).human()
        );
        let _ = writeln!(o, "  apply on the {}: {}", p.side.name(), p.apply);
        let _ = writeln!(o, "  roll back: {}", p.rollback);
        let _ = writeln!(o, "  prove it: {}", p.prove);
    }
    o
}
