//! The short "limit" block printed after a UDP test's summary (and by `linerate show`):
//! where the datagrams were lost, each side's CPU, and the settings that lift it.

use std::fmt::Write as _;

use linerate_iperf3::udp_limit::UdpLimit;
use linerate_units::BitRate;

/// The block, ending in a newline.
pub fn render(l: &UdpLimit) -> String {
    let mut o = String::new();
    let pct = |n: u64| n as f64 * 100.0 / l.sent.max(1) as f64;
    let _ = writeln!(
        o,
        "\nlimit: {} — {} of {} datagrams lost ({:.2} %); offered {}, received {}",
        l.place.describe(),
        l.lost,
        l.sent,
        pct(l.lost),
        BitRate::from_bps_f64(l.offered_bps).human(),
        BitRate::from_bps_f64(l.received_bps).human(),
    );
    for c in &l.losses {
        let _ = writeln!(
            o,
            "  {:<26} {:>10} datagrams ({:.2} %)",
            c.place.describe(),
            c.datagrams,
            pct(c.datagrams)
        );
    }
    for c in &l.cpu {
        let thread = c
            .busiest_thread_percent
            .map(|t| format!(", busiest stream thread {t:.0} %"))
            .unwrap_or_default();
        let core = match (c.busiest_cpu_percent, c.busiest_cpu_softirq_percent) {
            (Some(b), Some(s)) => format!("; busiest CPU {b:.0} % ({s:.0} % softirq)"),
            (Some(b), None) => format!("; busiest CPU {b:.0} %"),
            _ => String::new(),
        };
        let _ = writeln!(
            o,
            "  cpu {}: {:.0} % user, {:.0} % system{thread}{core}",
            c.side.name(),
            c.user_percent,
            c.system_percent
        );
    }
    for u in &l.unseen {
        let _ = writeln!(o, "  not seen: {u}");
    }
    if let Some(p) = &l.prescription {
        for a in &p.advice {
            let _ = writeln!(o, "  fix ({}): {a}", p.side.name());
        }
        if let Some(apply) = &p.apply {
            let _ = writeln!(o, "  apply on the {}: {apply}", p.side.name());
        }
        if !p.flags.is_empty() {
            let _ = writeln!(o, "  then run with: {}", p.flags.join(" "));
        }
        if let Some(rb) = &p.rollback {
            let _ = writeln!(o, "  roll back: {rb}");
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_names_place_counts_and_commands() {
        let l: UdpLimit = serde_json::from_value(serde_json::json!({
            "place": "receiver_socket_buffer", "sent": 1000, "received": 600, "lost": 400,
            "losses": [{"place": "receiver_socket_buffer", "datagrams": 400}],
            "offered_bps": 2e7, "received_bps": 1.2e7,
            "cpu": [{"side": "server", "user_percent": 1.0, "system_percent": 30.0,
                     "busiest_thread_percent": 29.0}],
            "prescription": {"side": "server", "settings": [], "flags": ["-w 1048576"],
                "apply": "linerate tune --set net.core.rmem_max=1048576 --apply",
                "rollback": "linerate tune --rollback", "advice": ["bigger"]}
        }))
        .unwrap();
        let t = render(&l);
        assert!(
            t.contains("limit: receiver socket buffer — 400 of 1000"),
            "{t}"
        );
        assert!(t.contains("400 datagrams (40.00 %)"), "{t}");
        assert!(t.contains("busiest stream thread 29 %"), "{t}");
        assert!(
            t.contains("apply on the server: linerate tune --set"),
            "{t}"
        );
        assert!(t.contains("roll back: linerate tune --rollback"), "{t}");
    }
}
