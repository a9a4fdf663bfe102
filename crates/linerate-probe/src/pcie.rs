//! The PCI Express link a NIC sits on: current and maximum speed and width of the function and
//! of each bridge above it (the slowest link on the way to the root complex is the real
//! ceiling), turned into bandwidth by `linerate_calc::bus`.

use std::path::{Path, PathBuf};

use linerate_calc::bus::{Bus, PcieGen};

use crate::Probed;
use crate::roots::{read_number, read_trimmed};

/// A link's generation and width.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LinkState {
    /// Generation (from the transfer rate).
    pub generation: PcieGen,
    /// Lanes.
    pub lanes: u32,
}

impl LinkState {
    /// The bus model of this link.
    pub fn bus(self) -> Bus {
        Bus::Pcie {
            generation: self.generation,
            lanes: self.lanes,
        }
    }
}

/// A bridge (switch or root port) between the NIC and the CPU, with its link.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct UpstreamLink {
    /// PCI address of the bridge.
    pub address: String,
    /// Its current link.
    pub current: Probed<LinkState>,
}

/// The PCI(e) side of a NIC.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PciInfo {
    /// PCI address of the function (`0000:03:00.0`).
    pub address: String,
    /// Vendor and device IDs (`8086:10fb`).
    pub id: Probed<String>,
    /// NUMA node the slot hangs off (`-1` = none reported).
    pub numa_node: Probed<i64>,
    /// Current link (what was negotiated).
    pub current: Probed<LinkState>,
    /// Maximum link the device supports.
    pub max: Probed<LinkState>,
    /// Bridges above, nearest first.
    pub upstream: Vec<UpstreamLink>,
}

impl PciInfo {
    /// The slot (address without the function): ports of one card share its link.
    pub fn slot(&self) -> &str {
        self.address
            .rsplit_once('.')
            .map_or(self.address.as_str(), |(slot, _)| slot)
    }

    /// The slowest known link between the NIC and the root: the device's own current link or
    /// a narrower upstream one. Returns where it is and the bus it makes.
    pub fn bottleneck(&self) -> Option<(String, Bus)> {
        let own = self.current.value()?;
        let mut best = (self.address.clone(), own.bus());
        for up in &self.upstream {
            if let Some(link) = up.current.value() {
                let bus = link.bus();
                if bus.bandwidth().usable < best.1.bandwidth().usable {
                    best = (up.address.clone(), bus);
                }
            }
        }
        Some(best)
    }
}

/// True for a PCI address as sysfs names devices: `0000:03:00.0`.
pub fn is_pci_address(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() == 12
        && b[4] == b':'
        && b[7] == b':'
        && b[10] == b'.'
        && b.iter()
            .enumerate()
            .all(|(i, c)| matches!(i, 4 | 7 | 10) || c.is_ascii_hexdigit())
}

/// The PCI function directory a device path belongs to: the path itself or its nearest
/// ancestor named like a PCI address (virtio devices sit one level below their PCI function).
pub fn pci_function(device: &Path) -> Option<PathBuf> {
    device
        .ancestors()
        .take(3)
        .find(|p| {
            p.file_name()
                .is_some_and(|n| is_pci_address(&n.to_string_lossy()))
        })
        .map(Path::to_path_buf)
}

fn link(dir: &Path, which: &str) -> Probed<LinkState> {
    let speed_path = dir.join(format!("{which}_link_speed"));
    let width_path = dir.join(format!("{which}_link_width"));
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !speed_path.exists() {
        return Probed::unknown(format!(
            "{name} has no {which}_link_speed: not a PCI Express device (or a virtual one)"
        ));
    }
    let speed = read_trimmed(&speed_path);
    let lanes: Probed<u32> = read_number(&width_path);
    match (speed, lanes) {
        (Probed::Value(s), Probed::Value(lanes)) => match PcieGen::from_sysfs_speed(&s) {
            Some(_) if lanes == 0 => Probed::unknown(format!(
                "{}: width 0 (link down or not trained)",
                width_path.display()
            )),
            Some(generation) => Probed::Value(LinkState { generation, lanes }),
            None => Probed::unknown(format!(
                "{}: speed '{s}' is not a known PCIe rate",
                speed_path.display()
            )),
        },
        (Probed::Unknown(r), _) | (_, Probed::Unknown(r)) => Probed::Unknown(r),
    }
}

/// Reads the PCI function at `function` (a directory under `/sys/devices`).
pub(crate) fn read(function: &Path) -> PciInfo {
    let address = function
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let id = match (
        read_trimmed(&function.join("vendor")),
        read_trimmed(&function.join("device")),
    ) {
        (Probed::Value(v), Probed::Value(d)) => Probed::Value(format!(
            "{}:{}",
            v.trim_start_matches("0x"),
            d.trim_start_matches("0x")
        )),
        (Probed::Unknown(r), _) | (_, Probed::Unknown(r)) => Probed::Unknown(r),
    };
    let numa_node = read_trimmed(&function.join("numa_node")).and_then(|s| {
        s.parse::<i64>()
            .map_err(|_| format!("numa_node '{s}' is not a number"))
            .into()
    });
    let upstream = function
        .ancestors()
        .skip(1)
        .take_while(|p| {
            p.file_name()
                .is_some_and(|n| is_pci_address(&n.to_string_lossy()))
        })
        .map(|p| UpstreamLink {
            address: p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            current: link(p, "current"),
        })
        .collect();
    PciInfo {
        current: link(function, "current"),
        max: link(function, "max"),
        address,
        id,
        numa_node,
        upstream,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pci_addresses() {
        assert!(is_pci_address("0000:03:00.0"));
        assert!(is_pci_address("0000:af:1f.7"));
        assert!(!is_pci_address("pci0000:00"));
        assert!(!is_pci_address("virtio2"));
        let p = Path::new("/sys/devices/pci0000:00/0000:00:03.0/virtio2");
        assert_eq!(
            pci_function(p).unwrap(),
            Path::new("/sys/devices/pci0000:00/0000:00:03.0")
        );
        assert!(pci_function(Path::new("/sys/devices/virtual/net/lo")).is_none());
    }

    #[test]
    fn reads_links_and_finds_the_narrow_bridge() {
        let dir = tempfile::tempdir().unwrap();
        let bridge = dir.path().join("0000:00:01.0");
        let nic = bridge.join("0000:03:00.1");
        std::fs::create_dir_all(&nic).unwrap();
        for (d, speed, width) in [
            (&nic, "8.0 GT/s PCIe", "8"),
            (&bridge, "5.0 GT/s PCIe", "4"),
        ] {
            std::fs::write(d.join("current_link_speed"), speed).unwrap();
            std::fs::write(d.join("current_link_width"), width).unwrap();
        }
        std::fs::write(nic.join("max_link_speed"), "Unknown").unwrap();
        std::fs::write(nic.join("max_link_width"), "8").unwrap();
        let info = read(&nic);
        assert_eq!(info.slot(), "0000:03:00");
        assert_eq!(info.current.value().unwrap().lanes, 8);
        assert!(info.max.reason().unwrap().contains("'Unknown'"));
        let (at, bus) = info.bottleneck().unwrap();
        assert_eq!(at, "0000:00:01.0");
        assert_eq!(bus.to_string(), "PCIe gen2 x4");
        assert!(info.id.reason().is_some());
    }
}
