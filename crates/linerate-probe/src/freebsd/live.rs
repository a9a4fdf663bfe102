//! This FreeBSD host, live: the sysctl values the snapshot needs read with `sysctlbyname`
//! (linerate-sys), the interfaces and their link data from `getifaddrs`, and the text of
//! `vmstat -i` and `pciconf -lvc` (no library call gives interrupt names or the PCIe link
//! status) handed to the same parsers a dump goes through. FreeBSD only; nothing here has
//! been run on FreeBSD by its authors (see the README's platform table).

use std::process::Command;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use linerate_sys::ifaddrs::{self, IfLink, LinkState};
use linerate_sys::sysctl;

use super::snapshot::{self, Link, Sources};
use super::{SysctlDump, VmstatInterrupts, nic, pciconf, split_unit};
use crate::host::HostInfo;
use crate::interface::Counters;
use crate::sample::{InterfaceSample, Sample};
use crate::{HostSnapshot, Probed};

/// Single values and subtrees the snapshot reads, beside each NIC's `dev.<driver>.<unit>`.
const MIBS: &[&str] = &[
    "kern.ostype",
    "kern.osrelease",
    "kern.hostname",
    "hw.physmem",
    "hw.ncpu",
    "hw.model",
    "kern.smp",
    "kern.sched.topology_spec",
    "vm.ndomains",
    "machdep.hyperthreading_allowed",
    "net.inet.ip.forwarding",
    "net.inet6.ip6.forwarding",
    "kern.ipc.nmbclusters",
    "kern.ipc.maxsockbuf",
    "net.inet.tcp.sendbuf_max",
    "net.inet.tcp.recvbuf_max",
    "net.inet.tcp.sendspace",
    "net.inet.tcp.recvspace",
    "net.inet.tcp.cc.algorithm",
    "net.isr",
];

fn mac(bytes: [u8; 6]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn link(l: IfLink) -> Link {
    Link {
        up: l.up(),
        running: l.running(),
        loopback: l.loopback(),
        mac: l.mac.map(mac),
        carrier: match l.link_state {
            LinkState::Up => Some(true),
            LinkState::Down => Some(false),
            LinkState::Unknown => None,
        },
        counters: Counters {
            rx_packets: l.counters.ipackets,
            tx_packets: l.counters.opackets,
            rx_bytes: l.counters.ibytes,
            tx_bytes: l.counters.obytes,
            rx_errors: l.counters.ierrors,
            tx_errors: l.counters.oerrors,
            rx_dropped: l.counters.iqdrops,
            tx_dropped: l.counters.oqdrops,
            // if_data has no separate missed/FIFO counters; the NIC's own are in its sysctls.
            rx_missed_errors: 0,
            rx_fifo_errors: 0,
        },
        name: l.name,
        index: l.index,
        mtu: l.mtu,
        baudrate: l.baudrate,
    }
}

/// Reads `prefix` (a leaf or a subtree) into `pairs`; leaves that cannot be shown as text
/// (structures, privileged ones) and absent MIBs are left out, as `sysctl -a` leaves them.
fn read_into(prefix: &str, pairs: &mut Vec<(String, String)>) {
    if let Ok(leaves) = sysctl::dump(prefix) {
        pairs.extend(
            leaves
                .into_iter()
                .filter_map(|(n, v)| v.ok().map(|v| (n, v))),
        );
    }
}

/// A device's sysctl subtree (`dev.ix.0`) and, for ports of a nexus (cxgbe's `cxl0` under
/// `t5nex0`), the nexus' too.
fn device_into(name: &str, pairs: &mut Vec<(String, String)>) {
    let Some((driver, unit)) = split_unit(name) else {
        return;
    };
    let node = format!("dev.{driver}.{unit}");
    read_into(&node, pairs);
    if let Ok(parent) = sysctl::get(&format!("{node}.%parent")) {
        if !parent.starts_with("pci") {
            if let Some((d, u)) = split_unit(&parent) {
                read_into(&format!("dev.{d}.{u}"), pairs);
            }
        }
    }
}

fn dump_of(pairs: &[(String, String)]) -> SysctlDump {
    SysctlDump::from_pairs(pairs.iter().map(|(n, v)| (n.as_str(), v.as_str())))
}

/// Runs a base-system tool and returns its standard output, or why it could not.
fn run(program: &str, args: &[&str]) -> Result<String, String> {
    let shown = format!("{program} {}", args.join(" "));
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("{shown} failed ({}): {}", out.status, err.trim()));
    }
    String::from_utf8(out.stdout).map_err(|_| format!("{shown} printed text that is not UTF-8"))
}

/// This host's OS, kernel and memory alone (`kern.ostype`, `kern.osrelease`, `kern.hostname`,
/// `hw.physmem`), without the interfaces and tools a snapshot reads.
pub fn host_info() -> HostInfo {
    let mut pairs = Vec::new();
    for mib in [
        "kern.ostype",
        "kern.osrelease",
        "kern.hostname",
        "hw.physmem",
    ] {
        read_into(mib, &mut pairs);
    }
    snapshot::host_info(&dump_of(&pairs))
}

/// This host's snapshot.
pub fn capture() -> HostSnapshot {
    let links = ifaddrs::links()
        .map(|l| l.into_iter().map(link).collect::<Vec<_>>())
        .map_err(|e| format!("getifaddrs: {e}"));
    let mut pairs = Vec::new();
    for mib in MIBS {
        read_into(mib, &mut pairs);
    }
    for l in links.iter().flatten().filter(|l| !l.loopback) {
        device_into(&l.name, &mut pairs);
    }
    let sources = Sources {
        sysctl: dump_of(&pairs),
        interrupts: Some(
            run("vmstat", &["-i"])
                .and_then(|t| VmstatInterrupts::parse(&t).map_err(|e| e.to_string())),
        ),
        pci: Some(
            run("pciconf", &["-lvc"]).and_then(|t| pciconf::parse(&t).map_err(|e| e.to_string())),
        ),
        links: Some(links),
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    snapshot::snapshot(&sources, "live".to_owned(), now)
}

/// One `nic --watch` sample of `names` (every interface when empty): `if_data` counters and
/// each NIC's per-queue counters from its `dev.<driver>.<unit>` nodes.
pub fn sample(names: &[String]) -> Sample {
    let at = Instant::now();
    let links = match ifaddrs::links() {
        Ok(l) => l.into_iter().map(link).collect::<Vec<_>>(),
        Err(e) => {
            let why = format!("getifaddrs: {e}");
            return Sample {
                at,
                interfaces: names
                    .iter()
                    .map(|n| (n.clone(), Err(why.clone())))
                    .collect(),
                softnet: Probed::unknown(why),
            };
        }
    };
    let wanted: Vec<String> = if names.is_empty() {
        links.iter().map(|l| l.name.clone()).collect()
    } else {
        names.to_vec()
    };
    let interfaces = wanted
        .into_iter()
        .map(|name| {
            let sample = match links.iter().find(|l| l.name == name) {
                None => Err(format!(
                    "no interface {name} (it vanished, or never existed)"
                )),
                Some(l) => {
                    let mut pairs = Vec::new();
                    if !l.loopback {
                        device_into(&l.name, &mut pairs);
                    }
                    let nic = nic::nic(&dump_of(&pairs), &l.name).ok().flatten();
                    Ok::<InterfaceSample, String>(super::watch::interface_sample(
                        Instant::now(),
                        l,
                        nic.as_ref(),
                    ))
                }
            };
            (name, sample)
        })
        .collect();
    Sample {
        at: Instant::now(),
        interfaces,
        softnet: Probed::unknown(
            "Linux's /proc/net/softnet_stat; FreeBSD counts per-CPU queue drops in netstat -Q",
        ),
    }
}

/// The `dev.<driver>.<unit>` node of every interface that has one (`dev.ix.0`, …), for the
/// per-device settings `audit` reads.
pub fn nic_nodes() -> Vec<String> {
    let Ok(links) = ifaddrs::links() else {
        return Vec::new();
    };
    links
        .iter()
        .filter(|l| !l.loopback())
        .filter_map(|l| split_unit(&l.name))
        .map(|(driver, unit)| format!("dev.{driver}.{unit}"))
        .filter(|node| sysctl::info(node).is_ok())
        .collect()
}
