//! What ethtool knows about an interface: driver, rings, channels, coalescing, offload features,
//! RSS indirection and the driver's statistics, read live through the `SIOCETHTOOL` ioctl
//! (`linerate_sys::ethtool`, which also says why the ioctl rather than ethtool netlink) or
//! from a captured `<iface>.json` file.

#[cfg(target_os = "linux")]
mod live;

use std::collections::BTreeMap;
use std::fs;

use crate::Probed;
use crate::roots::{EthtoolSource, ProbeRoots};

/// Driver identity (`ethtool -i`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DriverInfo {
    /// Driver name (`ixgbe`, `mlx5_core`, `virtio_net`).
    pub driver: String,
    /// Driver version string (often the kernel version for in-tree drivers).
    pub version: String,
    /// Firmware version, empty when the driver has none.
    pub firmware: String,
    /// Bus address (`0000:03:00.0`), empty for virtual devices.
    pub bus_info: String,
}

/// Ring sizes (`ethtool -g`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Rings {
    /// Current RX descriptors.
    pub rx: u32,
    /// Maximum RX descriptors.
    pub rx_max: u32,
    /// Current TX descriptors.
    pub tx: u32,
    /// Maximum TX descriptors.
    pub tx_max: u32,
}

/// Queue (channel) counts (`ethtool -l`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Channels {
    /// RX-only channels.
    pub rx: u32,
    /// TX-only channels.
    pub tx: u32,
    /// Other (link, management) channels.
    pub other: u32,
    /// Combined RX+TX channels.
    pub combined: u32,
    /// Maximum RX-only channels.
    pub max_rx: u32,
    /// Maximum TX-only channels.
    pub max_tx: u32,
    /// Maximum other channels.
    pub max_other: u32,
    /// Maximum combined channels.
    pub max_combined: u32,
}

impl Channels {
    /// Queues that receive: combined plus RX-only.
    pub fn rx_queues(&self) -> u32 {
        self.combined + self.rx
    }

    /// The most receive queues the hardware allows.
    pub fn rx_queues_max(&self) -> u32 {
        self.max_combined.max(self.max_rx)
    }
}

/// Interrupt coalescing (`ethtool -c`), the fields that decide packet-rate behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Coalesce {
    /// Microseconds to wait after a receive before interrupting.
    pub rx_usecs: u32,
    /// Frames to receive before interrupting.
    pub rx_frames: u32,
    /// Microseconds to wait after a transmit completion before interrupting.
    pub tx_usecs: u32,
    /// Frames to complete before interrupting.
    pub tx_frames: u32,
    /// Adaptive RX coalescing on.
    pub adaptive_rx: bool,
    /// Adaptive TX coalescing on.
    pub adaptive_tx: bool,
}

/// One offload feature's state (`ethtool -k`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Feature {
    /// On now.
    pub active: bool,
    /// Can be changed with `ethtool -K` (false: `[fixed]`).
    pub changeable: bool,
}

/// Everything ethtool tells about one interface. Each part is unknown on its own when the
/// driver does not support that query.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EthtoolInfo {
    /// Driver identity.
    pub driver: Probed<DriverInfo>,
    /// Ring sizes.
    pub rings: Probed<Rings>,
    /// Channel counts.
    pub channels: Probed<Channels>,
    /// Interrupt coalescing.
    pub coalesce: Probed<Coalesce>,
    /// Offload features by kernel name (`tx-tcp-segmentation`, `rx-gro`, `rx-lro`, …).
    pub features: Probed<BTreeMap<String, Feature>>,
    /// RSS indirection table: entry i sends hash bucket i to that RX queue.
    pub rss_indirection: Probed<Vec<u32>>,
    /// Driver statistics (`ethtool -S`) by name.
    pub stats: Probed<BTreeMap<String, u64>>,
}

impl EthtoolInfo {
    /// Everything unknown for one reason.
    pub fn unknown(reason: &str) -> Self {
        EthtoolInfo {
            driver: Probed::unknown(reason),
            rings: Probed::unknown(reason),
            channels: Probed::unknown(reason),
            coalesce: Probed::unknown(reason),
            features: Probed::unknown(reason),
            rss_indirection: Probed::unknown(reason),
            stats: Probed::unknown(reason),
        }
    }

    /// One feature's state, when features are known and the driver has it.
    pub fn feature(&self, name: &str) -> Option<Feature> {
        self.features.value()?.get(name).copied()
    }
}

/// Why the live ethtool source is empty on other systems.
#[cfg(not(target_os = "linux"))]
fn not_linux() -> String {
    linerate_sys::os::NotOnThisOs::linux(
        "reading ethtool's figures",
        "the SIOCETHTOOL ioctl is Linux's",
    )
    .instead("on FreeBSD the driver's dev.<driver>.<unit> sysctls say this")
    .to_string()
}

/// Reads everything ethtool knows about `iface` from the roots' ethtool source.
pub fn read(roots: &ProbeRoots, iface: &str) -> EthtoolInfo {
    match &roots.ethtool {
        #[cfg(target_os = "linux")]
        EthtoolSource::Live => live::read_all(iface),
        #[cfg(not(target_os = "linux"))]
        EthtoolSource::Live => EthtoolInfo::unknown(&not_linux()),
        EthtoolSource::Dir(dir) => {
            let path = dir.join(format!("{iface}.json"));
            match fs::read_to_string(&path) {
                Ok(text) => match serde_json::from_str(&text) {
                    Ok(info) => info,
                    Err(e) => EthtoolInfo::unknown(&format!("{}: {e}", path.display())),
                },
                Err(e) => EthtoolInfo::unknown(&crate::roots::reason(&path, &e)),
            }
        }
        EthtoolSource::Absent => {
            EthtoolInfo::unknown("ethtool data not captured with this sysfs tree")
        }
    }
}

/// Reads only the driver statistics (for `--watch`, once per interval).
pub fn read_stats(roots: &ProbeRoots, iface: &str) -> Probed<BTreeMap<String, u64>> {
    match &roots.ethtool {
        #[cfg(target_os = "linux")]
        EthtoolSource::Live => live::read_stats(iface),
        #[cfg(not(target_os = "linux"))]
        EthtoolSource::Live => Probed::unknown(not_linux()),
        _ => read(roots, iface).stats,
    }
}
