//! The host as a whole: OS and kernel, CPU model and topology, SMT, NUMA, frequency governors,
//! memory, forwarding switches and the softirq budget knobs.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use linerate_units::ByteSize;

use crate::roots::{parse_cpu_list, read_number, read_trimmed, reason};
use crate::{ProbeRoots, Probed};

/// OS, kernel and memory.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HostInfo {
    /// Kernel name (`Linux`).
    pub os: Probed<String>,
    /// Kernel release (`6.8.0-45-generic`).
    pub kernel: Probed<String>,
    /// Host name.
    pub hostname: Probed<String>,
    /// Installed memory the kernel manages (`MemTotal`).
    pub memory: Probed<ByteSize>,
}

/// Simultaneous multithreading (hyper-threading) state.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Smt {
    /// `/sys/devices/system/cpu/smt/control`: `on`, `off`, `forceoff`, `notsupported`,
    /// `notimplemented`.
    pub control: String,
    /// Whether sibling threads are running now.
    pub active: bool,
}

/// CPU model and topology.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CpuInfo {
    /// Model name.
    pub model: Probed<String>,
    /// Online logical CPUs.
    pub online: Probed<Vec<u32>>,
    /// Physical cores (distinct package/core pairs among online CPUs).
    pub cores: Probed<u32>,
    /// Sockets (distinct packages).
    pub sockets: Probed<u32>,
    /// SMT state.
    pub smt: Probed<Smt>,
    /// Online NUMA nodes.
    pub numa_nodes: Probed<u32>,
    /// Frequency governor → the CPUs running it.
    pub governors: Probed<BTreeMap<String, Vec<u32>>>,
}

impl CpuInfo {
    /// Number of online logical CPUs.
    pub fn logical(&self) -> Option<u32> {
        self.online
            .value()
            .and_then(|v| u32::try_from(v.len()).ok())
    }
}

/// IP forwarding switches.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Forwarding {
    /// `net.ipv4.ip_forward`.
    pub ipv4: Probed<bool>,
    /// `net.ipv6.conf.all.forwarding`.
    pub ipv6: Probed<bool>,
}

impl Forwarding {
    /// True when either family forwards.
    pub fn any(&self) -> bool {
        self.ipv4.value() == Some(&true) || self.ipv6.value() == Some(&true)
    }
}

/// The receive-path budget knobs that softnet drops and squeezes point at.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NetCore {
    /// `net.core.netdev_max_backlog` (packets per CPU backlog queue).
    pub netdev_max_backlog: Probed<u64>,
    /// `net.core.netdev_budget` (packets per NAPI poll round).
    pub netdev_budget: Probed<u64>,
    /// `net.core.netdev_budget_usecs` (time per NAPI poll round).
    pub netdev_budget_usecs: Probed<u64>,
}

pub(crate) fn host_info(roots: &ProbeRoots) -> HostInfo {
    HostInfo {
        os: read_trimmed(&roots.proc("sys/kernel/ostype")),
        kernel: read_trimmed(&roots.proc("sys/kernel/osrelease")),
        hostname: read_trimmed(&roots.proc("sys/kernel/hostname")),
        memory: mem_total(roots),
    }
}

fn mem_total(roots: &ProbeRoots) -> Probed<ByteSize> {
    let path = roots.proc("meminfo");
    read_trimmed(&path).and_then(|text| {
        let line = text.lines().find(|l| l.starts_with("MemTotal:"));
        let kib = line.and_then(|l| {
            let mut it = l.split_whitespace().skip(1);
            let n: u64 = it.next()?.parse().ok()?;
            (it.next()? == "kB").then_some(n)
        });
        match kib {
            // /proc/meminfo's "kB" is 1024 bytes.
            Some(n) => Probed::Value(ByteSize::from_kib(n)),
            None => Probed::unknown(format!("{}: no MemTotal line in kB", path.display())),
        }
    })
}

pub(crate) fn forwarding(roots: &ProbeRoots) -> Forwarding {
    let flag = |rel: &str| read_number::<u64>(&roots.proc(rel)).map(|n| n != 0);
    Forwarding {
        ipv4: flag("sys/net/ipv4/ip_forward"),
        ipv6: flag("sys/net/ipv6/conf/all/forwarding"),
    }
}

pub(crate) fn net_core(roots: &ProbeRoots) -> NetCore {
    NetCore {
        netdev_max_backlog: read_number(&roots.proc("sys/net/core/netdev_max_backlog")),
        netdev_budget: read_number(&roots.proc("sys/net/core/netdev_budget")),
        netdev_budget_usecs: read_number(&roots.proc("sys/net/core/netdev_budget_usecs")),
    }
}

pub(crate) fn cpu_info(roots: &ProbeRoots) -> CpuInfo {
    let online_path = roots.sys("devices/system/cpu/online");
    let online = read_trimmed(&online_path).and_then(|s| match parse_cpu_list(&s) {
        Some(v) if !v.is_empty() => Probed::Value(v),
        _ => Probed::unknown(format!(
            "{}: '{s}' is not a CPU list",
            online_path.display()
        )),
    });
    let (cores, sockets) = match online.value() {
        Some(cpus) => topology(roots, cpus),
        None => {
            let r = "the online CPU list is unknown";
            (Probed::unknown(r), Probed::unknown(r))
        }
    };
    CpuInfo {
        model: cpu_model(roots),
        cores,
        sockets,
        smt: smt(roots),
        numa_nodes: numa_nodes(roots),
        governors: match online.value() {
            Some(cpus) => governors(roots, cpus),
            None => Probed::unknown("the online CPU list is unknown"),
        },
        online,
    }
}

fn cpu_model(roots: &ProbeRoots) -> Probed<String> {
    let path = roots.proc("cpuinfo");
    read_trimmed(&path).and_then(|text| {
        // x86 says "model name"; arm64 has no model line but "CPU part"; POWER says "cpu".
        for key in ["model name", "Model", "cpu model", "cpu"] {
            let found = text.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == key && !v.trim().is_empty()).then(|| v.trim().to_owned())
            });
            if let Some(model) = found {
                return Probed::Value(model);
            }
        }
        Probed::unknown(format!("{}: no model name line", path.display()))
    })
}

fn topology(roots: &ProbeRoots, cpus: &[u32]) -> (Probed<u32>, Probed<u32>) {
    let mut cores = BTreeSet::new();
    let mut packages = BTreeSet::new();
    for cpu in cpus {
        let base = format!("devices/system/cpu/cpu{cpu}/topology");
        let package: Probed<u64> = read_number(&roots.sys(&format!("{base}/physical_package_id")));
        let core: Probed<u64> = read_number(&roots.sys(&format!("{base}/core_id")));
        match (package, core) {
            (Probed::Value(p), Probed::Value(c)) => {
                packages.insert(p);
                cores.insert((p, c));
            }
            (Probed::Unknown(r), _) | (_, Probed::Unknown(r)) => {
                return (Probed::Unknown(r.clone()), Probed::Unknown(r));
            }
        }
    }
    let count = |n: usize| Probed::from(u32::try_from(n).map_err(|e| e.to_string()));
    (count(cores.len()), count(packages.len()))
}

fn smt(roots: &ProbeRoots) -> Probed<Smt> {
    let control = read_trimmed(&roots.sys("devices/system/cpu/smt/control"));
    let active: Probed<u64> = read_number(&roots.sys("devices/system/cpu/smt/active"));
    match (control, active) {
        (Probed::Value(control), Probed::Value(active)) => Probed::Value(Smt {
            control,
            active: active != 0,
        }),
        (Probed::Value(control), Probed::Unknown(_))
            if control == "notsupported" || control == "notimplemented" =>
        {
            Probed::Value(Smt {
                control,
                active: false,
            })
        }
        (Probed::Unknown(r), _) | (_, Probed::Unknown(r)) => Probed::Unknown(r),
    }
}

fn numa_nodes(roots: &ProbeRoots) -> Probed<u32> {
    let path = roots.sys("devices/system/node/online");
    read_trimmed(&path).and_then(|s| match parse_cpu_list(&s) {
        Some(v) if !v.is_empty() => u32::try_from(v.len()).map_err(|e| e.to_string()).into(),
        _ => Probed::unknown(format!("{}: '{s}' is not a node list", path.display())),
    })
}

fn governors(roots: &ProbeRoots, cpus: &[u32]) -> Probed<BTreeMap<String, Vec<u32>>> {
    let cpufreq = roots.sys("devices/system/cpu/cpufreq");
    let has_policies = fs::read_dir(&cpufreq)
        .map(|d| {
            d.flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("policy"))
        })
        .unwrap_or(false);
    if !has_policies {
        return Probed::unknown(format!(
            "no cpufreq policies under {}: the kernel exposes no frequency scaling here \
             (virtual machine, or no cpufreq driver loaded)",
            cpufreq.display()
        ));
    }
    let mut map: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for cpu in cpus {
        let path = roots.sys(&format!(
            "devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"
        ));
        match fs::read_to_string(&path) {
            Ok(g) => map.entry(g.trim().to_owned()).or_default().push(*cpu),
            Err(e) => return Probed::Unknown(reason(&path, &e)),
        }
    }
    Probed::Value(map)
}
