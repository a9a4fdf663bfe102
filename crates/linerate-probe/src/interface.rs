//! One network interface as sysfs, procfs and ethtool describe it.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use linerate_units::BitRate;

use crate::ethtool::{self, EthtoolInfo};
use crate::irq::{self, InterruptTable, Irq};
use crate::pcie::{self, PciInfo};
use crate::roots::{parse_cpu_mask, read_number, read_trimmed, reason};
use crate::{ProbeRoots, Probed};

/// The kernel's interface counters (`/sys/class/net/IF/statistics`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Counters {
    /// Packets received.
    pub rx_packets: u64,
    /// Packets sent.
    pub tx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Receive errors.
    pub rx_errors: u64,
    /// Transmit errors.
    pub tx_errors: u64,
    /// Received packets dropped by the stack (no buffer, filtered, …).
    pub rx_dropped: u64,
    /// Packets dropped before transmit.
    pub tx_dropped: u64,
    /// Packets the NIC missed because its ring was full (host too slow).
    pub rx_missed_errors: u64,
    /// NIC FIFO overruns.
    pub rx_fifo_errors: u64,
}

impl Counters {
    /// The counters as (name, value) pairs, in a stable order.
    pub fn fields(&self) -> [(&'static str, u64); 10] {
        [
            ("rx_packets", self.rx_packets),
            ("tx_packets", self.tx_packets),
            ("rx_bytes", self.rx_bytes),
            ("tx_bytes", self.tx_bytes),
            ("rx_errors", self.rx_errors),
            ("tx_errors", self.tx_errors),
            ("rx_dropped", self.rx_dropped),
            ("tx_dropped", self.tx_dropped),
            ("rx_missed_errors", self.rx_missed_errors),
            ("rx_fifo_errors", self.rx_fifo_errors),
        ]
    }
}

/// The queue directories sysfs shows (`queues/rx-N`, `queues/tx-N`), with RPS masks.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct QueueDirs {
    /// Receive queues the stack sees.
    pub rx: u32,
    /// Transmit queues the stack sees.
    pub tx: u32,
    /// CPUs each RX queue steers to with RPS (empty: RPS off), by queue number.
    pub rps_cpus: BTreeMap<u32, Vec<u32>>,
}

/// One interface.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Interface {
    /// Name (`eth0`).
    pub name: String,
    /// What it is: `loopback`, `pci`, `virtio`, `veth`, `bridge`, `vlan`, … or `virtual`.
    pub kind: String,
    /// Interface index.
    pub ifindex: Probed<u32>,
    /// Driver name.
    pub driver: Probed<String>,
    /// Driver version.
    pub driver_version: Probed<String>,
    /// Firmware version.
    pub firmware: Probed<String>,
    /// MAC address.
    pub address: Probed<String>,
    /// Operational state (`up`, `down`, `unknown`, `lowerlayerdown`).
    pub operstate: Probed<String>,
    /// Carrier present.
    pub carrier: Probed<bool>,
    /// Negotiated link speed.
    pub speed: Probed<BitRate>,
    /// Duplex (`full`, `half`).
    pub duplex: Probed<String>,
    /// MTU in bytes.
    pub mtu: Probed<u32>,
    /// Transmit queue length (qdisc packets).
    pub tx_queue_len: Probed<u32>,
    /// Queues as the stack sees them.
    pub queues: Probed<QueueDirs>,
    /// What ethtool reports.
    pub ethtool: EthtoolInfo,
    /// The PCI function and its PCIe link.
    pub pci: Probed<PciInfo>,
    /// Interrupts of this interface.
    pub irqs: Probed<Vec<Irq>>,
    /// Counters at capture time.
    pub counters: Probed<Counters>,
}

impl Interface {
    /// True when the interface has carrier and is up (or `unknown`, as virtual ones report).
    pub fn is_up(&self) -> bool {
        let oper = self.operstate.value().map(String::as_str);
        matches!(oper, Some("up") | Some("unknown")) && self.carrier.value() != Some(&false)
    }

    /// Receive queues: ethtool channels when known, else the sysfs queue directories.
    pub fn rx_queues(&self) -> Option<u32> {
        self.ethtool
            .channels
            .value()
            .map(|c| c.rx_queues())
            .filter(|n| *n > 0)
            .or_else(|| self.queues.value().map(|q| q.rx))
    }
}

/// Reads an interface's counters from `statistics/`.
pub fn read_counters(roots: &ProbeRoots, name: &str) -> Probed<Counters> {
    let dir = roots.sys(&format!("class/net/{name}/statistics"));
    let mut c = Counters::default();
    for (field, slot) in [
        ("rx_packets", &mut c.rx_packets),
        ("tx_packets", &mut c.tx_packets),
        ("rx_bytes", &mut c.rx_bytes),
        ("tx_bytes", &mut c.tx_bytes),
        ("rx_errors", &mut c.rx_errors),
        ("tx_errors", &mut c.tx_errors),
        ("rx_dropped", &mut c.rx_dropped),
        ("tx_dropped", &mut c.tx_dropped),
        ("rx_missed_errors", &mut c.rx_missed_errors),
        ("rx_fifo_errors", &mut c.rx_fifo_errors),
    ] {
        match read_number::<u64>(&dir.join(field)) {
            Probed::Value(v) => *slot = v,
            Probed::Unknown(r) => return Probed::Unknown(r),
        }
    }
    Probed::Value(c)
}

/// The interface names under `class/net`, sorted.
pub fn list(roots: &ProbeRoots) -> Result<Vec<String>, String> {
    let dir = roots.sys("class/net");
    let entries = fs::read_dir(&dir).map_err(|e| reason(&dir, &e))?;
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "bonding_masters")
        .collect();
    names.sort();
    Ok(names)
}

fn link_name(path: &Path) -> Option<String> {
    fs::read_link(path)
        .ok()
        .and_then(|t| t.file_name().map(|n| n.to_string_lossy().into_owned()))
}

fn queue_dirs(dir: &Path) -> Probed<QueueDirs> {
    let qdir = dir.join("queues");
    let entries = match fs::read_dir(&qdir) {
        Ok(e) => e,
        Err(e) => return Probed::Unknown(reason(&qdir, &e)),
    };
    let mut q = QueueDirs {
        rx: 0,
        tx: 0,
        rps_cpus: BTreeMap::new(),
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(n) = name.strip_prefix("rx-") {
            q.rx += 1;
            let rps = read_trimmed(&entry.path().join("rps_cpus"));
            if let (Ok(n), Some(cpus)) = (
                n.parse::<u32>(),
                rps.value().and_then(|m| parse_cpu_mask(m)),
            ) {
                q.rps_cpus.insert(n, cpus);
            }
        } else if name.starts_with("tx-") {
            q.tx += 1;
        }
    }
    Probed::Value(q)
}

fn speed(dir: &Path) -> Probed<BitRate> {
    let path = dir.join("speed");
    read_trimmed(&path).and_then(|s| match s.parse::<i64>() {
        Ok(mbps) if mbps > 0 => Probed::Value(BitRate::from_mbps(mbps.unsigned_abs())),
        Ok(_) => Probed::unknown(format!(
            "{}: the driver reports no speed ({s})",
            path.display()
        )),
        Err(_) => Probed::unknown(format!("{}: '{s}' is not a number", path.display())),
    })
}

/// Reads one interface.
pub(crate) fn read(
    roots: &ProbeRoots,
    name: &str,
    interrupts: &Probed<InterruptTable>,
) -> Interface {
    let dir = roots.sys(&format!("class/net/{name}"));
    let ethtool = ethtool::read(roots, name);
    let dev_type: Probed<u32> = read_number(&dir.join("type"));
    let uevent = read_trimmed(&dir.join("uevent"));
    let devtype = uevent.value().and_then(|u| {
        u.lines()
            .find_map(|l| l.strip_prefix("DEVTYPE=").map(str::to_owned))
    });
    let device = fs::canonicalize(dir.join("device")).ok();
    let subsystem = device
        .as_ref()
        .and_then(|d| link_name(&d.join("subsystem")));
    let eth_driver = ethtool.driver.value().map(|d| d.driver.clone());
    let kind = if dev_type.value() == Some(&772) {
        "loopback".to_owned()
    } else if let Some(t) = devtype {
        t
    } else if let Some(s) = subsystem {
        s
    } else if let Some(d) = &eth_driver {
        d.clone()
    } else {
        "virtual".to_owned()
    };
    let driver = match device.as_ref().and_then(|d| link_name(&d.join("driver"))) {
        Some(d) => Probed::Value(d),
        None => ethtool.driver.as_ref().map(|d| d.driver.clone()),
    };
    let driver_version = match driver.value() {
        Some(d) if roots.sys(&format!("module/{d}/version")).exists() => {
            read_trimmed(&roots.sys(&format!("module/{d}/version")))
        }
        _ => ethtool.driver.as_ref().map(|d| d.version.clone()),
    };
    let pci_function = device.as_deref().and_then(pcie::pci_function);
    let pci = match &pci_function {
        Some(f) => Probed::Value(pcie::read(f)),
        None if device.is_some() => Probed::unknown("the device is not on a PCI bus"),
        None => Probed::unknown("virtual interface: no bus"),
    };
    let irqs = interrupts.as_ref().map(|table| {
        let msi: Vec<u32> = pci_function
            .as_ref()
            .and_then(|f| fs::read_dir(f.join("msi_irqs")).ok())
            .map(|d| {
                d.flatten()
                    .filter_map(|e| e.file_name().to_string_lossy().parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        let mut prefixes = vec![name.to_owned()];
        if let Some(dev) = device.as_ref().and_then(|d| d.file_name()) {
            let dev = dev.to_string_lossy();
            if dev.starts_with("virtio") {
                prefixes.push(dev.into_owned());
            }
        }
        irq::interface_irqs(roots, table, &msi, &prefixes)
    });
    Interface {
        name: name.to_owned(),
        kind,
        ifindex: read_number(&dir.join("ifindex")),
        driver,
        driver_version,
        firmware: ethtool.driver.as_ref().map(|d| d.firmware.clone()),
        address: read_trimmed(&dir.join("address")),
        operstate: read_trimmed(&dir.join("operstate")),
        carrier: read_number::<u64>(&dir.join("carrier")).map(|c| c != 0),
        speed: speed(&dir),
        duplex: read_trimmed(&dir.join("duplex")),
        mtu: read_number(&dir.join("mtu")),
        tx_queue_len: read_number(&dir.join("tx_queue_len")),
        queues: queue_dirs(&dir),
        pci,
        irqs,
        counters: read_counters(roots, name),
        ethtool,
    }
}
