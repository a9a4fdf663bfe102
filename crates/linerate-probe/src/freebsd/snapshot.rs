//! A FreeBSD host as a [`HostSnapshot`], from text: `sysctl` output (a `sysctl -a` dump taken
//! on a router, or the values read live with `sysctlbyname`), and where they were taken,
//! `vmstat -i`, `pciconf -lvc` and the interface list with its link data. The same function
//! builds the live snapshot on FreeBSD (`live`, FreeBSD only) and the one `audit --host-snapshot`
//! reads from a dump on any OS, so what the hardware rules see is the same either way.
//!
//! The snapshot's fields are Linux-shaped (sysfs and procfs words); what FreeBSD has no
//! counterpart for is unknown with the reason, and FreeBSD's own facts (netisr, mbuf limits,
//! the `dev.<driver>.<unit>` NIC nodes) travel in [`FreebsdHost`].

use std::collections::BTreeMap;

use linerate_units::{BitRate, ByteSize};

use super::{
    CpuFacts, NetisrSettings, NetworkLimits, NicSysctl, ParseError, PciconfDevice, QueueRole,
    SysctlDump, VmstatInterrupts, split_unit,
};
use crate::ethtool::EthtoolInfo;
use crate::host::{CpuInfo, Forwarding, HostInfo, NetCore, Smt};
use crate::interface::{Counters, Interface, QueueDirs};
use crate::irq::Irq;
use crate::{HostSnapshot, Probed, SCHEMA};

/// FreeBSD's own facts, beside the snapshot's common fields.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FreebsdHost {
    /// CPUs, cores, SMT and the scheduler topology.
    pub cpu: Probed<CpuFacts>,
    /// mbuf clusters and socket-buffer ceilings.
    pub limits: Probed<NetworkLimits>,
    /// netisr dispatch and threads.
    pub netisr: Probed<NetisrSettings>,
    /// What `dev.<driver>.<unit>` says about each NIC.
    pub nics: Probed<Vec<NicSysctl>>,
}

/// One interface with its link data (`getifaddrs(3)`'s `AF_LINK` entry and `struct if_data`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// Name (`ix0`).
    pub name: String,
    /// Interface index.
    pub index: u32,
    /// `IFF_UP`.
    pub up: bool,
    /// `IFF_RUNNING`.
    pub running: bool,
    /// `IFF_LOOPBACK`.
    pub loopback: bool,
    /// MAC address (`00:1b:21:…`).
    pub mac: Option<String>,
    /// MTU.
    pub mtu: u32,
    /// Line speed in bits/s (0: the driver does not say).
    pub baudrate: u64,
    /// Carrier (`LINK_STATE_UP`), `None` when the driver does not say.
    pub carrier: Option<bool>,
    /// Counters.
    pub counters: Counters,
}

/// What a FreeBSD snapshot is built from. `None`: not asked for; `Some(Err)`: asked for and
/// unreadable (the reason becomes the unknown fields' reason).
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// sysctl values (a dump, or read live).
    pub sysctl: SysctlDump,
    /// `vmstat -i`.
    pub interrupts: Option<Result<VmstatInterrupts, String>>,
    /// `pciconf -lvc`.
    pub pci: Option<Result<Vec<PciconfDevice>, String>>,
    /// The interfaces and their link data (live only: a dump has none).
    pub links: Option<Result<Vec<Link>, String>>,
}

/// Why a field a Linux host has is unknown on FreeBSD.
const NO_NET_CORE: &str =
    "Linux's net.core receive budget; FreeBSD's receive path is netisr (see freebsd.netisr)";
const NO_SOFTNET: &str =
    "Linux's /proc/net/softnet_stat; FreeBSD counts per-CPU queue drops in netstat -Q";
const NO_GOVERNORS: &str =
    "FreeBSD has no cpufreq governors: powerd(8) sets dev.cpu.N.freq (or hw.acpi / est)";

fn text(dump: &SysctlDump, name: &str) -> Probed<String> {
    match dump.get(name) {
        Some(v) => Probed::Value(v.trim().to_owned()),
        None => Probed::unknown(format!("{name} is not in the input")),
    }
}

fn flag(dump: &SysctlDump, name: &str) -> Probed<bool> {
    match dump.u64(name) {
        Ok(Some(n)) => Probed::Value(n != 0),
        Ok(None) => Probed::unknown(format!("{name} is not in the input")),
        Err(e) => Probed::unknown(e.to_string()),
    }
}

fn probed<T>(r: Result<T, ParseError>) -> Probed<T> {
    r.map_err(|e| e.to_string()).into()
}

pub(super) fn host_info(dump: &SysctlDump) -> HostInfo {
    HostInfo {
        os: text(dump, "kern.ostype"),
        kernel: text(dump, "kern.osrelease"),
        hostname: text(dump, "kern.hostname"),
        memory: match dump.u64("hw.physmem") {
            Ok(Some(n)) => Probed::Value(ByteSize::from_bytes(n)),
            Ok(None) => Probed::unknown("hw.physmem is not in the input"),
            Err(e) => Probed::unknown(e.to_string()),
        },
    }
}

fn cpu_info(dump: &SysctlDump, facts: &Probed<CpuFacts>) -> CpuInfo {
    let Some(f) = facts.value() else {
        let why = facts.reason().unwrap_or_default().to_owned();
        return CpuInfo {
            model: Probed::unknown(why.clone()),
            online: Probed::unknown(why.clone()),
            cores: Probed::unknown(why.clone()),
            sockets: Probed::unknown(why.clone()),
            smt: Probed::unknown(why.clone()),
            numa_nodes: Probed::unknown(why),
            governors: Probed::unknown(NO_GOVERNORS),
        };
    };
    // The topology names the CPUs; without it FreeBSD numbers them 0 … hw.ncpu - 1.
    let online = match (&f.topology, f.logical.value()) {
        (Some(t), _) => {
            let mut cpus: Vec<u32> = t.all_groups().iter().flat_map(|g| g.cpus.clone()).collect();
            cpus.sort_unstable();
            cpus.dedup();
            Probed::Value(cpus)
        }
        (None, Some(&n)) => Probed::Value((0..n).collect()),
        (None, None) => f.logical.clone().map(|_| Vec::new()),
    };
    // machdep.hyperthreading_allowed=0 (a loader tunable) keeps the sibling threads offline.
    let allowed = dump.u64("machdep.hyperthreading_allowed").ok().flatten();
    let smt = f.threads_per_core.clone().map(|t| {
        let control = match (t > 1, allowed) {
            (false, _) => "notsupported",
            (true, Some(0)) => "off",
            (true, _) => "on",
        };
        Smt {
            control: control.to_owned(),
            active: t > 1 && allowed != Some(0),
        }
    });
    let numa_nodes = match dump.u64("vm.ndomains") {
        Ok(Some(n)) => u32::try_from(n).map_err(|e| e.to_string()).into(),
        Ok(None) => match &f.topology {
            Some(t) if !t.numa_nodes().is_empty() => Probed::Value(t.numa_nodes().len() as u32),
            _ => Probed::unknown("vm.ndomains is not in the input"),
        },
        Err(e) => Probed::unknown(e.to_string()),
    };
    CpuInfo {
        model: f.model.clone(),
        online,
        cores: f.cores.clone(),
        sockets: f.packages.clone(),
        smt,
        numa_nodes,
        governors: Probed::unknown(NO_GOVERNORS),
    }
}

/// `10 Gbps`, `25Gbps`, `1000 Mbps` (ixl/ice `current_speed`) as a rate.
fn speed_text(s: &str) -> Option<BitRate> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit() && c != '.')?;
    let (n, unit) = s.split_at(split);
    let n: f64 = n.parse().ok()?;
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "gbps" | "g" => 1e9,
        "mbps" | "m" => 1e6,
        _ => return None,
    };
    Some(BitRate::from_bps((n * scale) as u64))
}

/// The vectors of `nic` in `vmstat -i`: its own lines, or for a cxgbe port (`cxl0`) the lines of
/// its nexus (`t5nex0`) that carry its port number.
fn irqs_of(nic: &NicSysctl, table: &VmstatInterrupts) -> Vec<Irq> {
    let own: Vec<_> = table.device(&nic.interface).collect();
    let lines = if own.is_empty() {
        match nic.parent.as_deref() {
            Some(parent) => table
                .device(parent)
                .filter(|l| {
                    l.queue
                        .as_ref()
                        .is_none_or(|q| q.port.is_none_or(|p| p == nic.unit))
                })
                .collect(),
            None => own,
        }
    } else {
        own
    };
    lines
        .into_iter()
        .filter_map(|l| {
            let irq = match l.source {
                super::InterruptSource::Irq { irq } => irq,
                _ => return None,
            };
            let queue = l
                .queue
                .as_ref()
                .is_some_and(|q| matches!(q.role, QueueRole::Rx | QueueRole::Tx | QueueRole::RxTx));
            let why = "vmstat -i shows totals, not CPUs: `cpuset -g -x IRQ` shows where it may run";
            Some(Irq {
                irq,
                name: l.name.clone(),
                queue,
                affinity: Probed::unknown(why),
                effective: Probed::unknown(why),
                counts: BTreeMap::new(),
            })
        })
        .collect()
}

fn interface(
    name: &str,
    nic: Option<&NicSysctl>,
    link: Option<&Link>,
    sources: &Sources,
) -> Interface {
    let no_link = || -> String {
        match &sources.links {
            Some(Err(e)) => e.clone(),
            _ => "a sysctl dump has no interface list (ifconfig / netstat -i has it)".to_owned(),
        }
    };
    let from_link = |f: &dyn Fn(&Link) -> Probed<String>| match link {
        Some(l) => f(l),
        None => Probed::unknown(no_link()),
    };
    let pci_devices = match &sources.pci {
        Some(Ok(d)) => Ok(d.as_slice()),
        Some(Err(e)) => Err(e.clone()),
        None => Err("pciconf -lvc output was not given".to_owned()),
    };
    let pci = match (nic, &pci_devices) {
        (Some(n), Ok(devices)) => match n.pci_device(devices) {
            Some(d) => {
                let mut info = d.pci_info();
                if let Some(domain) = n.numa_domain {
                    info.numa_node = Probed::Value(domain);
                }
                Probed::Value(info)
            }
            None => Probed::unknown(format!("{name} is not among pciconf's devices")),
        },
        (Some(_), Err(e)) => Probed::unknown(e.clone()),
        (None, _) => Probed::unknown("no dev.<driver>.<unit> nodes: not a PCI NIC driver"),
    };
    let irqs = match (nic, &sources.interrupts) {
        (Some(n), Some(Ok(table))) => Probed::Value(irqs_of(n, table)),
        (_, Some(Err(e))) => Probed::unknown(e.clone()),
        (Some(_), None) => Probed::unknown("vmstat -i output was not given"),
        (None, _) => Probed::Value(Vec::new()),
    };
    let kind = match (link, nic) {
        (Some(l), _) if l.loopback => "loopback",
        (_, Some(n)) if n.pci_selector.is_some() || n.pci_id.is_some() => "pci",
        (_, Some(_)) => "nic",
        _ => "virtual",
    };
    let speed = match (
        link.map(|l| l.baudrate),
        nic.and_then(|n| n.link_speed.as_deref()),
    ) {
        (Some(b), _) if b > 0 => Probed::Value(BitRate::from_bps(b)),
        (_, Some(s)) => match speed_text(s) {
            Some(r) => Probed::Value(r),
            None => Probed::unknown(format!("current_speed {s:?} is not a rate")),
        },
        (Some(_), None) => {
            Probed::unknown("the driver reports no line speed (if_data.ifi_baudrate is 0)")
        }
        (None, None) => Probed::unknown(no_link()),
    };
    let queues = match nic {
        Some(n) => match (n.queues.rx.value(), n.queues.tx.value()) {
            (Some(&rx), Some(&tx)) => Probed::Value(QueueDirs {
                rx,
                tx,
                rps_cpus: BTreeMap::new(),
            }),
            _ => Probed::unknown(
                n.queues
                    .rx
                    .reason()
                    .or(n.queues.tx.reason())
                    .unwrap_or("queue counts unknown")
                    .to_owned(),
            ),
        },
        None => Probed::unknown("no dev.<driver>.<unit> nodes for this interface"),
    };
    let optional = |v: Option<&String>, what: &str| match v {
        Some(s) => Probed::Value(s.clone()),
        None => Probed::unknown(format!("the driver prints no {what}")),
    };
    Interface {
        name: name.to_owned(),
        kind: kind.to_owned(),
        ifindex: match link {
            Some(l) => Probed::Value(l.index),
            None => Probed::unknown(no_link()),
        },
        driver: match (nic, split_unit(name)) {
            (Some(n), _) => Probed::Value(n.driver.clone()),
            (None, Some((d, _))) if link.is_some() => Probed::Value(d.to_owned()),
            _ => Probed::unknown(no_link()),
        },
        driver_version: match nic {
            Some(n) => optional(n.driver_version.as_ref(), "iflib.driver_version"),
            None => Probed::unknown("no dev.<driver>.<unit> nodes for this interface"),
        },
        firmware: match nic {
            Some(n) => optional(n.firmware.as_ref(), "firmware version"),
            None => Probed::unknown("no dev.<driver>.<unit> nodes for this interface"),
        },
        address: from_link(&|l| match &l.mac {
            Some(m) => Probed::Value(m.clone()),
            None => Probed::unknown("no link-level address"),
        }),
        operstate: from_link(&|l| {
            Probed::Value(if l.up && l.running { "up" } else { "down" }.to_owned())
        }),
        carrier: match link.map(|l| l.carrier) {
            Some(Some(c)) => Probed::Value(c),
            Some(None) => Probed::unknown("the driver does not report link state"),
            None => Probed::unknown(no_link()),
        },
        speed,
        duplex: Probed::unknown("FreeBSD shows duplex in ifconfig's media line only"),
        mtu: match link {
            Some(l) => Probed::Value(l.mtu),
            None => Probed::unknown(no_link()),
        },
        tx_queue_len: Probed::unknown(
            "Linux's qdisc queue length; FreeBSD queues in the driver's rings (iflib.override_ntxds)",
        ),
        queues,
        ethtool: EthtoolInfo::unknown(
            "ethtool is Linux's; this NIC's dev.<driver>.<unit> facts are in freebsd.nics",
        ),
        pci,
        irqs,
        counters: match link {
            Some(l) => Probed::Value(l.counters),
            None => Probed::unknown(no_link()),
        },
    }
}

/// Builds the snapshot. Never fails: a value the parsers refuse becomes unknown with the
/// parser's message (which names the line of the dump).
pub fn snapshot(sources: &Sources, source: String, captured_at: u64) -> HostSnapshot {
    let dump = &sources.sysctl;
    let facts = probed(CpuFacts::from_sysctl(dump));
    let nics = probed(super::nic::nics(dump));
    let mut names: BTreeMap<String, (Option<&NicSysctl>, Option<&Link>)> = BTreeMap::new();
    for n in nics.value().into_iter().flatten() {
        names.entry(n.interface.clone()).or_default().0 = Some(n);
    }
    if let Some(Ok(links)) = &sources.links {
        for l in links {
            names.entry(l.name.clone()).or_default().1 = Some(l);
        }
    }
    let interfaces: Vec<Interface> = names
        .iter()
        .map(|(name, (nic, link))| interface(name, *nic, *link, sources))
        .collect();
    HostSnapshot {
        schema: SCHEMA.to_owned(),
        captured_at,
        source,
        host: host_info(dump),
        cpu: cpu_info(dump, &facts),
        forwarding: Forwarding {
            ipv4: flag(dump, "net.inet.ip.forwarding"),
            ipv6: flag(dump, "net.inet6.ip6.forwarding"),
        },
        net_core: NetCore {
            netdev_max_backlog: Probed::unknown(NO_NET_CORE),
            netdev_budget: Probed::unknown(NO_NET_CORE),
            netdev_budget_usecs: Probed::unknown(NO_NET_CORE),
        },
        interfaces: Probed::Value(interfaces),
        softnet: Probed::unknown(NO_SOFTNET),
        freebsd: Some(FreebsdHost {
            cpu: facts,
            limits: probed(NetworkLimits::from_sysctl(dump)),
            netisr: probed(NetisrSettings::from_sysctl(dump)),
            nics,
        }),
    }
}

/// Parses FreeBSD `sysctl` output (`sysctl -a` or any subtrees) taken on another host into a
/// snapshot: settings, CPUs, NICs and their queues from the dump alone (no interface list,
/// PCIe links or interrupts: a dump has none of them).
pub fn from_sysctl_text(text: &str, source: String) -> Result<HostSnapshot, ParseError> {
    let sources = Sources {
        sysctl: SysctlDump::parse(text)?,
        ..Sources::default()
    };
    Ok(snapshot(&sources, source, 0))
}

#[cfg(test)]
mod tests;
