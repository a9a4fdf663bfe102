//! What bounds an interface's packet rate, from what the snapshot knows: the line rate in
//! minimum-size frames, queues, interrupts, ring, coalescing, SMT and the bus.

use linerate_calc::ethernet::{self, Duplex, FrameSpec, MIN_FRAME};
use linerate_probe::{HostSnapshot, Interface, Probed, format_cpu_list, irq};
use linerate_units::ByteSize;

use super::bus::bus_checks;

/// One thing that bounds an interface's packet rate.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Limit {
    /// Short name (`line rate`, `queues`, `interrupts`, `ring`, `coalescing`, `bus`, `smt`).
    pub what: String,
    /// The fact, with numbers.
    pub detail: String,
}

fn limit(what: &str, detail: String) -> Limit {
    Limit {
        what: what.to_owned(),
        detail,
    }
}

/// What bounds `iface`'s packet rate, from what the snapshot knows.
pub fn packet_rate_limits(snapshot: &HostSnapshot, iface: &Interface) -> Vec<Limit> {
    let mut out = Vec::new();
    let cpus = snapshot.cpu.logical();
    if let Probed::Unknown(reason) = &iface.speed {
        if iface.kind != "loopback" {
            out.push(limit("line rate", format!("unknown: {reason}")));
        }
    }
    if let Some(speed) = iface.speed.value() {
        let smallest = FrameSpec::Size(ByteSize::from_bytes(MIN_FRAME));
        let rate = ethernet::frame_rate(*speed, smallest, Duplex::Full);
        out.push(limit(
            "line rate",
            format!(
                "{} = {:.2} of 64-byte frames per direction ({:.2} full duplex)",
                speed.human(),
                rate.frames_per_second.human(),
                rate.forwarding_need.human()
            ),
        ));
    }
    if let Some(rx) = iface.rx_queues().filter(|_| iface.kind != "loopback") {
        let rps: Vec<u32> = iface
            .queues
            .value()
            .map(|q| q.rps_cpus.values().flatten().copied().collect())
            .unwrap_or_default();
        let cpus_text = cpus.map_or("an unknown number of".to_owned(), |c| c.to_string());
        let detail = if rx <= 1 {
            format!(
                "1 RX queue for {cpus_text} CPUs: all receive processing of this interface runs \
                 on one CPU at a time, so its packet rate is what one CPU can do"
            )
        } else {
            format!("{rx} RX queues for {cpus_text} CPUs: RSS spreads flows over at most {rx} CPUs")
        };
        out.push(limit("queues", detail));
        if !rps.is_empty() {
            out.push(limit(
                "rps",
                format!(
                    "RPS steers received packets to CPUs {}",
                    format_cpu_list(&rps)
                ),
            ));
        }
    }
    if let Some(irqs) = iface.irqs.value() {
        let (queue, on) = irq::queue_irq_cpus(irqs);
        if !queue.is_empty() {
            out.push(limit(
                "interrupts",
                format!(
                    "{} queue interrupt{} served by CPU{} {}",
                    queue.len(),
                    if queue.len() == 1 { "" } else { "s" },
                    if on.len() == 1 { "" } else { "s" },
                    format_cpu_list(&on)
                ),
            ));
        }
    }
    if let Some(r) = iface.ethtool.rings.value() {
        out.push(limit(
            "ring",
            format!(
                "RX ring {} of max {} descriptors: a CPU stall longer than {} packets' arrival \
                 drops packets (rx_missed_errors)",
                r.rx, r.rx_max, r.rx
            ),
        ));
    }
    if let Some(c) = iface.ethtool.coalesce.value() {
        let detail = if c.adaptive_rx {
            "adaptive RX coalescing: the driver trades latency for fewer interrupts under load"
                .to_owned()
        } else if c.rx_usecs == 0 && c.rx_frames <= 1 {
            "no RX coalescing: one interrupt per packet, which caps packet rate by interrupt cost"
                .to_owned()
        } else {
            format!(
                "RX interrupts after {} µs or {} frames",
                c.rx_usecs, c.rx_frames
            )
        };
        out.push(limit("coalescing", detail));
    }
    if snapshot.cpu.smt.value().is_some_and(|s| s.active) {
        out.push(limit(
            "smt",
            "SMT is on: sibling threads share one core's execution units and caches".to_owned(),
        ));
    }
    if let Some(pci) = iface.pci.value() {
        if let Some(check) = bus_checks(snapshot)
            .into_iter()
            .find(|c| c.slot == pci.slot())
        {
            out.push(limit("bus", check.summary));
        } else if let Some(reason) = pci.current.reason() {
            out.push(limit("bus", format!("bus bandwidth unknown: {reason}")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use linerate_units::BitRate;

    #[test]
    fn line_rate_in_minimum_frames_comes_from_the_calculator() {
        let r = ethernet::frame_rate(
            BitRate::from_gbps(10),
            FrameSpec::Size(ByteSize::from_bytes(MIN_FRAME)),
            Duplex::Full,
        );
        assert!((r.frames_per_second.pps() - 14_880_952.38).abs() < 1.0);
        assert_eq!(format!("{:.2}", r.frames_per_second.human()), "14.88 Mpps");
        assert_eq!(format!("{:.2}", r.forwarding_need.human()), "29.76 Mpps");
    }
}
