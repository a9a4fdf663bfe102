//! Whether each PCI link carries its ports at line rate, full duplex, and the findings when it
//! does not (`bus-too-slow`) or when a card trained below what it supports
//! (`pcie-link-degraded`).

use linerate_calc::bus::{Bus, BusBandwidth, BusVerdict, PcieGen};
use linerate_probe::HostSnapshot;
use linerate_probe::links::shared_links;
use linerate_units::BitRate;

use super::{SRC_BUS, finding};
use crate::finding::{Finding, Fix, Severity};

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

/// The bus check of every PCI slot (or narrower bridge) whose link and at least one port's
/// line rate are known.
pub fn bus_checks(snapshot: &HostSnapshot) -> Vec<BusCheck> {
    shared_links(snapshot)
        .into_iter()
        .filter(|link| !link.line_rates.is_empty())
        .map(|link| {
            let verdict = link.bus.verdict(&link.line_rates);
            let bandwidth = link.bus.bandwidth();
            BusCheck {
                summary: summary(link.bus, &bandwidth, &link.line_rates, &verdict),
                slot: link.slot,
                narrowest_at: link.narrowest_at,
                bus: link.bus,
                bandwidth,
                card_max: link.card_max,
                interfaces: link.interfaces,
                line_rates: link.line_rates,
                unknown_rate: link.unknown_rate,
                verdict,
            }
        })
        .collect()
}

fn summary(bus: Bus, bw: &BusBandwidth, rates: &[BitRate], verdict: &BusVerdict) -> String {
    let needed = if rates.iter().all(|r| *r == rates[0]) {
        if rates.len() == 1 {
            rates[0].human().to_string()
        } else {
            format!("{} × {}", rates.len(), rates[0].human())
        }
    } else {
        rates
            .iter()
            .map(|r| r.human().to_string())
            .collect::<Vec<_>>()
            .join(" + ")
    };
    let op = if verdict.enough { "≥" } else { "<" };
    if bw.full_duplex {
        format!(
            "{bus} = {} usable per direction {op} {needed} line rate",
            bw.usable.human()
        )
    } else {
        format!(
            "{bus} = {} shared by both directions: {} each way {op} {needed} line rate",
            bw.usable.human(),
            verdict.available_per_direction.human()
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

/// `bus-too-slow` and `pcie-link-degraded`.
pub(super) fn findings(snapshot: &HostSnapshot, out: &mut Vec<Finding>) {
    for check in bus_checks(snapshot) {
        let ports = check.interfaces.join(",");
        if !check.verdict.enough {
            let fix = match check.bus {
                Bus::Pcie { generation, .. } => {
                    let gen_wanted = match check.card_max {
                        Some(Bus::Pcie { generation: g, .. }) => g,
                        _ => generation,
                    };
                    match smallest_link_for(check.verdict.needed_per_direction, gen_wanted) {
                        Some(link) => Fix::Set(format!(
                            "a slot giving at least {link} ({} per direction)",
                            check.verdict.needed_per_direction.human()
                        )),
                        None => Fix::Set("fewer ports busy per card".to_owned()),
                    }
                }
                _ => Fix::Set("a PCIe card, or one port per PCI bus".to_owned()),
            };
            out.push(finding(
                "bus-too-slow",
                Severity::Error,
                &check.narrowest_at,
                &ports,
                Some(check.bus.to_string()),
                format!(
                    "{}: the bus cannot carry these ports at line rate in both directions",
                    check.summary
                ),
                fix,
                SRC_BUS,
            ));
        }
        let degraded = check.card_max.filter(|max| {
            check.narrowest_at == slot_function(snapshot, &check.slot)
                && max.bandwidth().usable > check.bus.bandwidth().usable
        });
        if let Some(max) = degraded {
            out.push(finding(
                "pcie-link-degraded",
                Severity::Warning,
                &check.narrowest_at,
                &ports,
                Some(check.bus.to_string()),
                format!(
                    "the card trained at {} but supports {max}: the slot is narrower or slower \
                     than the card ({} instead of {} usable)",
                    check.bus,
                    check.bus.bandwidth().usable.human(),
                    max.bandwidth().usable.human()
                ),
                Fix::Set(format!("a slot wired for {max}")),
                SRC_BUS,
            ));
        }
    }
}

/// The address of the first function of a slot that the snapshot knows.
fn slot_function(snapshot: &HostSnapshot, slot: &str) -> String {
    snapshot
        .interfaces()
        .iter()
        .filter_map(|i| i.pci.value())
        .find(|p| p.slot() == slot)
        .map(|p| p.address.clone())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smallest_links() {
        let need = BitRate::from_gbps(20);
        let bus = smallest_link_for(need, PcieGen::Gen2);
        assert_eq!(bus.map(|b| b.to_string()).as_deref(), Some("PCIe gen2 x8"));
        assert_eq!(
            smallest_link_for(BitRate::from_gbps(10_000), PcieGen::Gen1),
            None
        );
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
        let gen3 = Bus::Pcie {
            generation: PcieGen::Gen3,
            lanes: 1,
        };
        let one = [BitRate::from_gbps(10)];
        let s = summary(gen3, &gen3.bandwidth(), &one, &gen3.verdict(&one));
        assert!(s.starts_with("PCIe gen3 x1 = 7.88 Gbit/s usable"), "{s}");
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
