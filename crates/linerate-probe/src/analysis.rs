//! What a snapshot means: whether each PCI slot carries its ports at line rate, and what
//! bounds an interface's packet rate.

use std::collections::BTreeMap;

use linerate_calc::bus::{Bus, BusBandwidth, BusVerdict, PcieGen};
use linerate_units::{BitRate, PacketRate};

use crate::{HostSnapshot, Interface, Probed};

/// Ethernet overhead on the wire per frame: preamble + start delimiter (8) + inter-frame gap
/// (12) bytes.
const WIRE_OVERHEAD_BYTES: u64 = 20;
/// The smallest Ethernet frame (with FCS).
const MIN_FRAME_BYTES: u64 = 64;

/// Rounds a rate for people: exact when short, two decimals otherwise.
pub fn human_rate(rate: BitRate) -> String {
    let exact = rate.to_string();
    if exact.len() <= 12 {
        exact
    } else {
        format!("{rate:.2}")
    }
}

/// Frames per second at line rate for the smallest frames, per direction.
pub fn min_frame_rate(line: BitRate) -> PacketRate {
    PacketRate::from_pps(line.as_f64() / ((MIN_FRAME_BYTES + WIRE_OVERHEAD_BYTES) * 8) as f64)
}

/// Whether one PCI slot (a card, all its ports) can carry its ports at line rate, full duplex.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BusCheck {
    /// The slot (`0000:03:00`), or the bridge (`0000:00:1c.0`) whose narrower link every
    /// grouped port shares.
    pub slot: String,
    /// Where the narrowest link is: the card's own address or a bridge above it.
    pub narrowest_at: String,
    /// That link.
    pub bus: Bus,
    /// What it moves.
    pub bandwidth: BusBandwidth,
    /// The card's maximum link, when known.
    pub card_max: Option<Bus>,
    /// The ports on the card with a known line rate.
    pub interfaces: Vec<String>,
    /// Their line rates.
    pub line_rates: Vec<BitRate>,
    /// Ports whose line rate is unknown (link down), left out of the sum.
    pub unknown_rate: Vec<String>,
    /// The verdict.
    pub verdict: BusVerdict,
    /// One line: `PCIe gen2 x1 = 4 Gbit/s usable < 2 × 10 Gbit/s line rate`.
    pub summary: String,
}

/// The bus check of every PCI slot (or narrower bridge) whose link is known.
pub fn bus_checks(snapshot: &HostSnapshot) -> Vec<BusCheck> {
    // Ports of one card share its link; cards behind a bridge whose link is narrower than
    // their own share that bridge's link.
    let mut slots: BTreeMap<String, Vec<&Interface>> = BTreeMap::new();
    for iface in snapshot.interfaces() {
        if let Some(pci) = iface.pci.value() {
            let key = match pci.bottleneck() {
                Some((at, _)) if at != pci.address => at,
                _ => pci.slot().to_owned(),
            };
            slots.entry(key).or_default().push(iface);
        }
    }
    let mut out = Vec::new();
    for (slot, ports) in slots {
        let Some((narrowest_at, bus)) = ports
            .iter()
            .find_map(|p| p.pci.value().and_then(|pci| pci.bottleneck()))
        else {
            continue;
        };
        let card_max = ports.iter().find_map(|p| {
            p.pci
                .value()
                .and_then(|pci| pci.max.value().map(|m| m.bus()))
        });
        let mut interfaces = Vec::new();
        let mut line_rates = Vec::new();
        let mut unknown_rate = Vec::new();
        for p in &ports {
            match p.speed.value() {
                Some(r) => {
                    interfaces.push(p.name.clone());
                    line_rates.push(*r);
                }
                None => unknown_rate.push(p.name.clone()),
            }
        }
        if line_rates.is_empty() {
            continue;
        }
        let verdict = bus.verdict(&line_rates);
        let bandwidth = bus.bandwidth();
        out.push(BusCheck {
            summary: summary(bus, &bandwidth, &line_rates, &verdict),
            slot,
            narrowest_at,
            bus,
            bandwidth,
            card_max,
            interfaces,
            line_rates,
            unknown_rate,
            verdict,
        });
    }
    out
}

fn summary(bus: Bus, bw: &BusBandwidth, rates: &[BitRate], verdict: &BusVerdict) -> String {
    let needed = if rates.iter().all(|r| *r == rates[0]) {
        if rates.len() == 1 {
            human_rate(rates[0])
        } else {
            format!("{} × {}", rates.len(), human_rate(rates[0]))
        }
    } else {
        rates
            .iter()
            .map(|r| human_rate(*r))
            .collect::<Vec<_>>()
            .join(" + ")
    };
    let op = if verdict.enough { "≥" } else { "<" };
    if bw.full_duplex {
        format!(
            "{bus} = {} usable per direction {op} {needed} line rate",
            human_rate(bw.usable)
        )
    } else {
        format!(
            "{bus} = {} shared by both directions: {} each way {op} {needed} line rate",
            human_rate(bw.usable),
            human_rate(verdict.available_per_direction)
        )
    }
}

/// The smallest PCIe link at `generation` (or newer, up to gen 5) that carries `needed` per
/// direction.
pub fn smallest_link_for(needed: BitRate, generation: PcieGen) -> Option<Bus> {
    PcieGen::ALL
        .into_iter()
        .filter(|g| *g >= generation && *g <= PcieGen::Gen5)
        .flat_map(|g| {
            [1, 2, 4, 8, 16].into_iter().map(move |lanes| Bus::Pcie {
                generation: g,
                lanes,
            })
        })
        .find(|b| b.bandwidth().usable >= needed)
}

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
        out.push(limit(
            "line rate",
            format!(
                "{} = {:.2} of 64-byte frames per direction ({:.2} full duplex)",
                human_rate(*speed),
                min_frame_rate(*speed),
                PacketRate::from_pps(min_frame_rate(*speed).pps() * 2.0)
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
                    crate::roots::format_cpu_list(&rps)
                ),
            ));
        }
    }
    if let Some(irqs) = iface.irqs.value() {
        let (queue, on) = crate::irq::queue_irq_cpus(irqs);
        if !queue.is_empty() {
            out.push(limit(
                "interrupts",
                format!(
                    "{} queue interrupt{} served by CPU{} {}",
                    queue.len(),
                    if queue.len() == 1 { "" } else { "s" },
                    if on.len() == 1 { "" } else { "s" },
                    crate::roots::format_cpu_list(&on)
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

    #[test]
    fn frame_rates_and_links() {
        let r = min_frame_rate(BitRate::from_gbps(10));
        assert!((r.pps() - 14_880_952.38).abs() < 1.0, "{}", r.pps());
        let need = BitRate::from_gbps(20);
        let bus = smallest_link_for(need, PcieGen::Gen2).unwrap();
        assert_eq!(bus.to_string(), "PCIe gen2 x8");
        assert_eq!(human_rate(BitRate::from_gbps(4)), "4 Gbit/s");
        let odd = BitRate::from_bps_f64(8e9 * 128.0 / 130.0);
        assert_eq!(human_rate(odd), "7.88 Gbit/s");
    }

    #[test]
    fn summary_reads_like_the_issue() {
        let bus = Bus::Pcie {
            generation: PcieGen::Gen2,
            lanes: 1,
        };
        let rates = [BitRate::from_gbps(10), BitRate::from_gbps(10)];
        let v = bus.verdict(&rates);
        let s = summary(bus, &bus.bandwidth(), &rates, &v);
        assert_eq!(
            s,
            "PCIe gen2 x1 = 4 Gbit/s usable per direction < 2 × 10 Gbit/s line rate"
        );
        let pci = Bus::Pci {
            width_bits: 32,
            clock_mhz: 33,
        };
        let one = [BitRate::from_gbps(1)];
        let s = summary(pci, &pci.bandwidth(), &one, &pci.verdict(&one));
        assert!(s.contains("shared by both directions"), "{s}");
        assert!(s.contains("< 1 Gbit/s"), "{s}");
    }
}
