//! NIC facts from `dev.<driver>.<unit>.*`: what the device is, where it sits, its firmware,
//! its queues and their counters (for `nic --watch`, which diffs two dumps).
//!
//! The per-queue nodes differ by driver and by era:
//!
//! | driver | receive queue | transmit queue |
//! |---|---|---|
//! | any iflib driver | `iflib.rxqN.*` | `iflib.txqN.*` |
//! | ix (both eras), igb before iflib | `queueN.rx_packets`, `rx_bytes`, `irqs` | `queueN.tx_packets` |
//! | igb, em (iflib) | `queue_rx_N.rx_irq` | `queue_tx_N.tx_irq` |
//! | ixl (iflib) | `pf.rxqNN.packets`, `bytes`, `irqs` | `pf.txqNN.packets`, `bytes` |
//! | ixl before iflib | `pf.queN.rx_packets`, `rx_bytes` | `pf.queN.tx_packets` |
//! | cxgbe (`cxl`, `cc`) | `rxq.N.*`, count `nrxq` | `txq.N.*`, count `ntxq` |
//! | mlx5 (`mce`) | `rxstatN.packets`, `bytes` | — |
//!
//! The queue count is `nrxq`/`ntxq` where the driver prints one, otherwise the number of queue
//! nodes in the input: from a partial dump that is a lower bound, and the source says which.

use std::collections::BTreeMap;

use super::pciconf::PciconfDevice;
use super::sysctl::SysctlDump;
use super::{ParseError, split_unit};
use crate::Probed;

/// Drivers whose devices are network interfaces. Any other driver with an `iflib` subtree
/// counts too.
const NIC_DRIVERS: &[&str] = &[
    "al_eth", "axgbe", "bce", "bge", "bnxt", "bxe", "cc", "ccv", "cxl", "cxlv", "em", "ena",
    "enetc", "gve", "hn", "iavf", "ice", "igb", "igc", "ix", "ixl", "ixv", "lem", "lio", "mce",
    "mgb", "mlxen", "oce", "qlnxe", "re", "rge", "sfxge", "vcc", "vcxl", "vmx", "vtnet",
];

/// Counters of one queue; absent ones are not printed by this driver (or not in the input).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct QueueCounters {
    /// Queue index.
    pub index: u32,
    /// Packets through the queue.
    pub packets: Option<u64>,
    /// Bytes through the queue.
    pub bytes: Option<u64>,
    /// Interrupts taken for the queue.
    pub interrupts: Option<u64>,
}

/// The queues of a NIC.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NicQueues {
    /// Receive queues.
    pub rx: Probed<u32>,
    /// Transmit queues.
    pub tx: Probed<u32>,
    /// Where the counts come from (`nrxq`, or the queue nodes seen).
    pub source: String,
    /// Per receive queue, by index.
    pub rx_queues: Vec<QueueCounters>,
    /// Per transmit queue, by index.
    pub tx_queues: Vec<QueueCounters>,
    /// `iflib.override_nrxqs` / `override_ntxqs` (0 = driver default).
    pub iflib_override: Option<(u64, u64)>,
}

/// What `sysctl dev.<driver>.<unit>` says about one NIC.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NicSysctl {
    /// Interface name (`ix0`).
    pub interface: String,
    /// Driver (`ix`).
    pub driver: String,
    /// Unit (`0`).
    pub unit: u32,
    /// `%desc`.
    pub description: Option<String>,
    /// The PCI selector from `%location`'s `dbsf=` (`pci0:24:0:1`), as pciconf names it.
    pub pci_selector: Option<String>,
    /// Vendor and device ID from `%pnpinfo` (`8086:1563`).
    pub pci_id: Option<String>,
    /// `%parent` (`pci4`, or the cxgbe nexus `t5nex0`).
    pub parent: Option<String>,
    /// `%domain`: the NUMA domain.
    pub numa_domain: Option<i64>,
    /// Firmware (`fw_version`, or the cxgbe nexus' `firmware_version`).
    pub firmware: Option<String>,
    /// `iflib.driver_version`.
    pub driver_version: Option<String>,
    /// Flow control setting `fc` (0 none, 1 rx pause, 2 tx pause, 3 full).
    pub flow_control: Option<String>,
    /// `current_speed` as printed (`10 Gbps`), for drivers that have it (ixl, ice).
    pub link_speed: Option<String>,
    /// Queues and their counters.
    pub queues: NicQueues,
    /// Frames received, MAC counter (`mac_stats.total_pkts_rcvd`, `stats.rx_frames`, …).
    pub mac_rx_packets: Option<u64>,
    /// Frames sent, MAC counter.
    pub mac_tx_packets: Option<u64>,
    /// Frames the NIC dropped for lack of receive buffers (igb `mac_stats.missed_packets`,
    /// cxgbe `stats.rx_ovflowN` summed).
    pub rx_missed: Option<u64>,
}

impl NicSysctl {
    /// This NIC's PCI function among `pciconf` devices: by the `%location` selector, else by
    /// name (pciconf names a function after its driver and unit, `ix0`), else by `%parent`
    /// (a cxgbe port `cxl0` is a function of its nexus `t5nex0`).
    pub fn pci_device<'a>(&self, devices: &'a [PciconfDevice]) -> Option<&'a PciconfDevice> {
        let by_selector = self
            .pci_selector
            .as_deref()
            .and_then(|s| devices.iter().find(|d| d.selector == s));
        by_selector
            .or_else(|| devices.iter().find(|d| d.name == self.interface))
            .or_else(|| {
                let parent = self.parent.as_deref()?;
                devices.iter().find(|d| d.name == parent)
            })
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Dir {
    Rx,
    Tx,
}

#[derive(Clone, Copy, PartialEq)]
enum Counter {
    Seen,
    Packets,
    Bytes,
    Interrupts,
}

/// `rest` = `<prefix><digits>.<tail>` → (index, tail).
fn indexed<'a>(rest: &'a str, prefix: &str) -> Option<(u32, &'a str)> {
    let after = rest.strip_prefix(prefix)?;
    let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let tail = after[digits..].strip_prefix('.')?;
    Some((after[..digits].parse().ok()?, tail))
}

/// Classifies a key under `dev.<driver>.<unit>.` by the table in the module notes.
fn queue_key(rest: &str) -> Option<(Dir, u32, Counter)> {
    use Counter::*;
    use Dir::*;
    if let Some((i, _)) = indexed(rest, "iflib.rxq") {
        return Some((Rx, i, Seen));
    }
    if let Some((i, _)) = indexed(rest, "iflib.txq") {
        return Some((Tx, i, Seen));
    }
    if let Some((i, tail)) = indexed(rest, "queue_rx_") {
        return Some((Rx, i, if tail == "rx_irq" { Interrupts } else { Seen }));
    }
    if let Some((i, tail)) = indexed(rest, "queue_tx_") {
        return Some((Tx, i, if tail == "tx_irq" { Interrupts } else { Seen }));
    }
    for prefix in ["queue", "pf.que"] {
        if let Some((i, tail)) = indexed(rest, prefix) {
            return match tail {
                "rx_packets" => Some((Rx, i, Packets)),
                "rx_bytes" => Some((Rx, i, Bytes)),
                "irqs" => Some((Rx, i, Interrupts)),
                "rxd_head" | "rxd_tail" | "rx_copies" | "rx_discarded" => Some((Rx, i, Seen)),
                "tx_packets" => Some((Tx, i, Packets)),
                "tx_bytes" => Some((Tx, i, Bytes)),
                "txd_head" | "txd_tail" | "tso_tx" | "no_desc_avail" => Some((Tx, i, Seen)),
                _ => None,
            };
        }
    }
    for (prefix, dir) in [("pf.rxq", Rx), ("pf.txq", Tx)] {
        if let Some((i, tail)) = indexed(rest, prefix) {
            let what = match tail {
                "packets" => Packets,
                "bytes" => Bytes,
                "irqs" => Interrupts,
                _ => Seen,
            };
            return Some((dir, i, what));
        }
    }
    if let Some((i, tail)) = indexed(rest, "rxstat") {
        let what = match tail {
            "packets" => Packets,
            "bytes" => Bytes,
            _ => Seen,
        };
        return Some((Rx, i, what));
    }
    if let Some((i, _)) = indexed(rest, "rxq.") {
        return Some((Rx, i, Seen));
    }
    if let Some((i, _)) = indexed(rest, "txq.") {
        return Some((Tx, i, Seen));
    }
    None
}

/// Every NIC in the dump, by driver then unit.
pub fn nics(dump: &SysctlDump) -> Result<Vec<NicSysctl>, ParseError> {
    let mut units: BTreeMap<(String, u32), bool> = BTreeMap::new();
    for (rest, _) in dump.with_prefix("dev.") {
        let mut parts = rest.splitn(3, '.');
        let (Some(driver), Some(unit), Some(key)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let Ok(unit) = unit.parse::<u32>() else {
            continue;
        };
        let iflib = key.starts_with("iflib.");
        let e = units.entry((driver.to_string(), unit)).or_insert(false);
        *e |= iflib || NIC_DRIVERS.contains(&driver);
    }
    units
        .into_iter()
        .filter(|(_, is_nic)| *is_nic)
        .map(|((driver, unit), _)| read(dump, &driver, unit))
        .collect()
}

/// One interface (`ix0`), if the dump has any of its nodes.
pub fn nic(dump: &SysctlDump, interface: &str) -> Result<Option<NicSysctl>, ParseError> {
    let Some((driver, unit)) = split_unit(interface) else {
        return Ok(None);
    };
    let prefix = format!("dev.{driver}.{unit}.");
    if dump.with_prefix(&prefix).next().is_none() {
        return Ok(None);
    }
    read(dump, driver, unit).map(Some)
}

fn read(dump: &SysctlDump, driver: &str, unit: u32) -> Result<NicSysctl, ParseError> {
    let prefix = format!("dev.{driver}.{unit}.");
    let get = |key: &str| {
        dump.get(&format!("{prefix}{key}"))
            .map(|v| v.trim().to_string())
    };
    let num = |key: &str| dump.u64(&format!("{prefix}{key}"));
    let first_num = |keys: &[&str]| -> Result<Option<u64>, ParseError> {
        for k in keys {
            if let Some(v) = num(k)? {
                return Ok(Some(v));
            }
        }
        Ok(None)
    };

    let mut rx: BTreeMap<u32, QueueCounters> = BTreeMap::new();
    let mut tx: BTreeMap<u32, QueueCounters> = BTreeMap::new();
    for (rest, _) in dump.with_prefix(&prefix) {
        let Some((dir, index, what)) = queue_key(rest) else {
            continue;
        };
        let q = match dir {
            Dir::Rx => rx.entry(index),
            Dir::Tx => tx.entry(index),
        }
        .or_insert_with(|| QueueCounters {
            index,
            ..QueueCounters::default()
        });
        let value = || num(rest);
        match what {
            Counter::Seen => {}
            Counter::Packets => q.packets = value()?,
            Counter::Bytes => q.bytes = value()?,
            Counter::Interrupts => q.interrupts = value()?,
        }
    }
    let (nrxq, ntxq) = (num("nrxq")?, num("ntxq")?);
    let count = |exact: Option<u64>, seen: usize, what: &str| -> Probed<u32> {
        match exact {
            Some(n) => Probed::Value(u32::try_from(n).unwrap_or(u32::MAX)),
            None if seen > 0 => Probed::Value(u32::try_from(seen).unwrap_or(u32::MAX)),
            None => Probed::unknown(format!("no {what} queue nodes under {prefix} in the input")),
        }
    };
    let source = if nrxq.is_some() {
        format!("{prefix}nrxq/ntxq")
    } else if rx.is_empty() && tx.is_empty() {
        "none in the input".to_string()
    } else {
        format!("queue nodes under {prefix} (a lower bound if the dump is partial)")
    };
    let queues = NicQueues {
        rx: count(nrxq, rx.len(), "receive"),
        tx: count(ntxq, tx.len(), "transmit"),
        source,
        rx_queues: rx.into_values().collect(),
        tx_queues: tx.into_values().collect(),
        iflib_override: match (num("iflib.override_nrxqs")?, num("iflib.override_ntxqs")?) {
            (Some(r), Some(t)) => Some((r, t)),
            _ => None,
        },
    };

    let parent = get("%parent");
    let firmware = match get("fw_version").or_else(|| get("firmware_version")) {
        Some(f) => Some(f),
        // cxgbe keeps the firmware on the nexus (`t5nex0`) the port hangs off.
        None => parent
            .as_deref()
            .and_then(split_unit)
            .and_then(|(d, u)| dump.get(&format!("dev.{d}.{u}.firmware_version")))
            .map(|f| f.trim().to_string()),
    };
    let location_field = |field: &str| {
        get("%location").and_then(|l| {
            l.split_whitespace()
                .find_map(|kv| kv.strip_prefix(field).map(str::to_string))
        })
    };
    let pnp_field = |field: &str| {
        get("%pnpinfo").and_then(|l| {
            l.split_whitespace().find_map(|kv| {
                kv.strip_prefix(field)
                    .map(|v| v.trim_start_matches("0x").to_string())
            })
        })
    };
    let rx_missed = match num("mac_stats.missed_packets")? {
        Some(n) => Some(n),
        None => {
            let mut sum = None;
            for i in 0..4 {
                if let Some(n) = num(&format!("stats.rx_ovflow{i}"))? {
                    sum = Some(sum.unwrap_or(0u64).saturating_add(n));
                }
            }
            sum
        }
    };
    Ok(NicSysctl {
        interface: format!("{driver}{unit}"),
        driver: driver.to_string(),
        unit,
        description: get("%desc"),
        pci_selector: location_field("dbsf="),
        pci_id: match (pnp_field("vendor="), pnp_field("device=")) {
            (Some(v), Some(d)) => Some(format!("{v}:{d}")),
            _ => None,
        },
        parent,
        numa_domain: dump.i64(&format!("{prefix}%domain"))?,
        firmware,
        driver_version: get("iflib.driver_version"),
        flow_control: get("fc"),
        link_speed: get("current_speed"),
        queues,
        mac_rx_packets: first_num(&[
            "mac_stats.total_pkts_rcvd",
            "mac_stats.total_pkts_recvd",
            "stats.rx_frames",
            "pstats.frames_rx",
        ])?,
        mac_tx_packets: first_num(&[
            "mac_stats.total_pkts_txd",
            "stats.tx_frames",
            "pstats.frames_tx",
        ])?,
        rx_missed,
    })
}

#[cfg(test)]
mod tests;
