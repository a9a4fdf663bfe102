//! Which ports share which PCI link: ports of one card share its slot, and cards behind a
//! bridge whose link is narrower than their own share that bridge's link. Facts only: whether a
//! link carries its ports at line rate is judged by `linerate-tuning`'s hardware rules.

use std::collections::BTreeMap;

use linerate_calc::bus::Bus;
use linerate_units::BitRate;

use crate::{HostSnapshot, Interface};

/// One PCI link and the ports whose traffic crosses it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SharedLink {
    /// The slot (`0000:03:00`), or the bridge (`0000:00:1c.0`) whose narrower link every
    /// grouped port shares.
    pub slot: String,
    /// Where the narrowest link is: the card's own address or a bridge above it.
    pub narrowest_at: String,
    /// That link.
    pub bus: Bus,
    /// The card's maximum link, when known.
    pub card_max: Option<Bus>,
    /// The ports with a known line rate.
    pub interfaces: Vec<String>,
    /// Their line rates, in the order of `interfaces`.
    pub line_rates: Vec<BitRate>,
    /// Ports whose line rate is unknown (link down).
    pub unknown_rate: Vec<String>,
}

/// Every PCI link in `snapshot` whose width and speed are known, with its ports, ordered by
/// slot.
pub fn shared_links(snapshot: &HostSnapshot) -> Vec<SharedLink> {
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
        out.push(SharedLink {
            slot,
            narrowest_at,
            bus,
            card_max,
            interfaces,
            line_rates,
            unknown_rate,
        });
    }
    out
}
