//! Hardware findings: judgements of a [`HostSnapshot`] for a role, in the shared
//! [`linerate_tuning::Finding`] model, each with the command that fixes it on Linux.

use linerate_tuning::{Finding, Fix, Location, Severity};
use linerate_units::BitRate;

use crate::analysis::{bus_checks, human_rate, smallest_link_for};
use crate::{HostSnapshot, Interface};

/// What the host is for: the same roles as the settings rules, so one `--role` drives both.
pub use linerate_tuning::Role;

/// What the judge needs besides the snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HardwareContext {
    /// The host's role.
    pub role: Role,
    /// Whether the host forwards packets (router, firewall, or forwarding switched on).
    pub forwarding: bool,
}

impl HardwareContext {
    /// The context for `role`, forwarding when the role forwards or the snapshot shows IP
    /// forwarding switched on.
    pub fn for_snapshot(snapshot: &HostSnapshot, role: Role) -> Self {
        HardwareContext {
            role,
            forwarding: role.forwards() || snapshot.forwarding.any(),
        }
    }
}

const SRC_BUS: &str = "PCI Express base specification (transfer rates, 8b/10b and 128b/130b \
                       encoding); linerate-calc bus model";
const SRC_BSDRP: &str = "BSD Router Project, \"Tuning FreeBSD for routing and firewalling\" \
                         (Cochard-Labbé): HT off +24% pps; disable LRO and TSO on a router";
const SRC_SCALING: &str = "Linux Documentation/networking/scaling.rst (RSS, RPS, IRQ affinity)";
const SRC_SYSCTL: &str = "Linux Documentation/admin-guide/sysctl/net.rst (netdev_max_backlog, \
                          netdev_budget, netdev_budget_usecs)";
const SRC_ETHTOOL: &str = "ethtool(8)";
const SRC_CPUFREQ: &str = "Linux Documentation/admin-guide/pm/cpufreq.rst";

// A flat constructor: every field of a finding, in the order a reader checks them.
#[expect(clippy::too_many_arguments)]
fn finding(
    rule: &str,
    severity: Severity,
    source_loc: &str,
    key: &str,
    value: Option<String>,
    why: String,
    fix: Fix,
    source: &str,
) -> Finding {
    Finding {
        rule: rule.to_owned(),
        severity,
        location: Some(Location {
            source: source_loc.to_owned(),
            line: None,
        }),
        key: key.to_owned(),
        value,
        why,
        fix,
        source: source.to_owned(),
    }
}

/// Interfaces that carry traffic worth judging: up, not loopback.
fn data_interfaces(snapshot: &HostSnapshot) -> impl Iterator<Item = &Interface> {
    snapshot
        .interfaces()
        .iter()
        .filter(|i| i.kind != "loopback" && i.is_up())
}

/// Judges the hardware in `snapshot` for `ctx`.
pub fn hardware_findings(snapshot: &HostSnapshot, ctx: &HardwareContext) -> Vec<Finding> {
    let mut out = Vec::new();
    bus(snapshot, &mut out);
    smt(snapshot, ctx, &mut out);
    for iface in data_interfaces(snapshot) {
        if ctx.forwarding {
            offloads(iface, ctx, &mut out);
        }
        queues(snapshot, iface, &mut out);
        irq_spread(snapshot, iface, &mut out);
        rings(iface, &mut out);
    }
    irqs_on_one_cpu(snapshot, &mut out);
    governor(snapshot, &mut out);
    softnet(snapshot, &mut out);
    if ctx.forwarding {
        mtu(snapshot, &mut out);
    }
    out
}

fn bus(snapshot: &HostSnapshot, out: &mut Vec<Finding>) {
    for check in bus_checks(snapshot) {
        let ports = check.interfaces.join(",");
        if !check.verdict.enough {
            let fix = match check.bus {
                linerate_calc::bus::Bus::Pcie { generation, .. } => {
                    let gen_wanted = match check.card_max {
                        Some(linerate_calc::bus::Bus::Pcie { generation: g, .. }) => g,
                        _ => generation,
                    };
                    match smallest_link_for(check.verdict.needed_per_direction, gen_wanted) {
                        Some(link) => Fix::Set(format!(
                            "a slot giving at least {link} ({} per direction)",
                            human_rate(check.verdict.needed_per_direction)
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
                    human_rate(check.bus.bandwidth().usable),
                    human_rate(max.bandwidth().usable)
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

fn smt(snapshot: &HostSnapshot, ctx: &HardwareContext, out: &mut Vec<Finding>) {
    let Some(smt) = snapshot.cpu.smt.value() else {
        return;
    };
    if ctx.role.forwards() && smt.active {
        out.push(finding(
            "smt-on-router",
            Severity::Warning,
            "/sys/devices/system/cpu/smt/control",
            "cpu.smt",
            Some(smt.control.clone()),
            format!(
                "SMT (hyper-threading) is on for a {}: packet forwarding gains more from whole \
                 cores than from sibling threads (the BSD Router Project measured +24% pps with \
                 it off)",
                ctx.role
            ),
            Fix::Command(
                "echo off > /sys/devices/system/cpu/smt/control  # and add `nosmt` to the \
                 kernel command line to keep it"
                    .to_owned(),
            ),
            SRC_BSDRP,
        ));
    }
}

fn offloads(iface: &Interface, ctx: &HardwareContext, out: &mut Vec<Finding>) {
    let name = &iface.name;
    let checks = [
        (
            "rx-lro",
            "lro",
            "lro-on-forwarding",
            Severity::Error,
            "LRO merges received TCP segments into large packets that a forwarding host must \
             send on unchanged, which breaks end-to-end segment sizes (the kernel cannot always \
             resegment them)",
        ),
        (
            "tx-tcp-segmentation",
            "tso",
            "tso-on-forwarding",
            if ctx.role.forwards() {
                Severity::Warning
            } else {
                Severity::Info
            },
            "TSO is on while the host forwards: the BSD Router Project disables TSO on routers \
             (it is for locally generated TCP, and interferes with NAT and filtering)",
        ),
        (
            "rx-gro",
            "gro",
            "gro-on-forwarding",
            Severity::Info,
            "GRO is on while the host forwards: merged packets are resegmented on output, which \
             usually helps throughput but adds latency and cost per packet; measure both ways \
             with `linerate lab`",
        ),
    ];
    for (feature, short, rule, severity, why) in checks {
        if let Some(f) = iface.ethtool.feature(feature).filter(|f| f.active) {
            let fix = if f.changeable {
                Fix::Command(format!("ethtool -K {name} {short} off"))
            } else {
                Fix::None
            };
            let why = if f.changeable {
                why.to_owned()
            } else {
                format!("{why} (the driver marks it fixed: it cannot be turned off)")
            };
            out.push(finding(
                rule,
                severity,
                name,
                &format!("{name}.{feature}"),
                Some("on".to_owned()),
                why,
                fix,
                SRC_BSDRP,
            ));
        }
    }
}

fn queues(snapshot: &HostSnapshot, iface: &Interface, out: &mut Vec<Finding>) {
    if !matches!(iface.kind.as_str(), "pci" | "virtio") {
        return;
    }
    let Some(cores) = snapshot
        .cpu
        .cores
        .value()
        .copied()
        .or_else(|| snapshot.cpu.logical())
    else {
        return;
    };
    let Some(rx) = iface.rx_queues() else {
        return;
    };
    if rx >= cores {
        return;
    }
    let name = &iface.name;
    let max = iface.ethtool.channels.value().map(|c| c.rx_queues_max());
    match max {
        Some(max) if max > rx => {
            let target = max.min(cores);
            let channels = iface.ethtool.channels.value();
            let kind = if channels.is_some_and(|c| c.max_combined > 0) {
                "combined"
            } else {
                "rx"
            };
            out.push(finding(
                "queues-fewer-than-cores",
                Severity::Warning,
                name,
                &format!("{name}.queues"),
                Some(rx.to_string()),
                format!(
                    "{rx} receive queue(s) for {cores} cores while the NIC allows {max}: RSS can \
                     spread receive work over only {rx} CPU(s)"
                ),
                Fix::Command(format!("ethtool -L {name} {kind} {target}")),
                SRC_SCALING,
            ));
        }
        _ => {
            let mask = cpu_mask(cores);
            out.push(finding(
                "queues-fewer-than-cores",
                Severity::Info,
                name,
                &format!("{name}.queues"),
                Some(rx.to_string()),
                format!(
                    "{rx} receive queue(s) for {cores} cores and the NIC allows no more: RPS can \
                     spread the protocol work of received packets over the other CPUs"
                ),
                Fix::Command(format!(
                    "for q in /sys/class/net/{name}/queues/rx-*; do echo {mask} > $q/rps_cpus; done"
                )),
                SRC_SCALING,
            ));
        }
    }
}

fn cpu_mask(cpus: u32) -> String {
    let mut words = Vec::new();
    let mut left = cpus;
    while left > 0 {
        let n = left.min(32);
        let word: u64 = (1u64 << n) - 1;
        words.push(format!("{word:x}"));
        left -= n;
    }
    words.reverse();
    words.join(",")
}

fn irq_spread(snapshot: &HostSnapshot, iface: &Interface, out: &mut Vec<Finding>) {
    let Some(irqs) = iface.irqs.value() else {
        return;
    };
    let (queue, on) = crate::irq::queue_irq_cpus(irqs);
    let Some(cpus) = snapshot.cpu.online.value() else {
        return;
    };
    if queue.len() < 2 || cpus.len() < 2 {
        return;
    }
    if on.len() != 1 {
        return;
    }
    let plan: Vec<String> = queue
        .iter()
        .zip(cpus.iter().cycle())
        .map(|(irq, cpu)| format!("echo {cpu} > /proc/irq/{}/smp_affinity_list", irq.irq))
        .collect();
    out.push(finding(
        "queue-irqs-not-spread",
        Severity::Warning,
        &iface.name,
        &format!("{}.irqs", iface.name),
        Some(format!("{} queue IRQs on CPU {}", queue.len(), on[0])),
        format!(
            "all {} queue interrupts of {} run on CPU {}: the queues exist but one CPU does all \
             their work",
            queue.len(),
            iface.name,
            on[0]
        ),
        Fix::Command(plan.join("; ")),
        SRC_SCALING,
    ));
}

fn irqs_on_one_cpu(snapshot: &HostSnapshot, out: &mut Vec<Finding>) {
    let Some(cpus) = snapshot.cpu.online.value() else {
        return;
    };
    if cpus.len() < 2 {
        return;
    }
    let mut per_cpu = std::collections::BTreeMap::<u32, u64>::new();
    for iface in data_interfaces(snapshot) {
        for irq in iface.irqs.value().into_iter().flatten().filter(|i| i.queue) {
            for (cpu, n) in &irq.counts {
                *per_cpu.entry(*cpu).or_default() += n;
            }
        }
    }
    let total: u64 = per_cpu.values().sum();
    let Some((&busiest, &most)) = per_cpu.iter().max_by_key(|(_, n)| **n) else {
        return;
    };
    // Only judge with enough interrupts to mean something, and only when one CPU took nearly
    // all of them.
    if total < 10_000 || most * 100 < total * 95 {
        return;
    }
    out.push(finding(
        "irqs-on-one-cpu",
        Severity::Warning,
        "/proc/interrupts",
        "irqs",
        Some(format!("{most} of {total} on CPU {busiest}")),
        format!(
            "{:.0}% of all NIC queue interrupts since boot ran on CPU {busiest} of {}: receive \
             work is not spread",
            most as f64 * 100.0 / total as f64,
            cpus.len()
        ),
        Fix::Command(
            "systemctl enable --now irqbalance  # or pin each queue IRQ to its own CPU via \
             /proc/irq/N/smp_affinity_list"
                .to_owned(),
        ),
        SRC_SCALING,
    ));
}

fn rings(iface: &Interface, out: &mut Vec<Finding>) {
    let Some(r) = iface.ethtool.rings.value() else {
        return;
    };
    let rx_low = r.rx_max > 0 && u64::from(r.rx) * 2 < u64::from(r.rx_max);
    let tx_low = r.tx_max > 0 && u64::from(r.tx) * 2 < u64::from(r.tx_max);
    if !rx_low && !tx_low {
        return;
    }
    let name = &iface.name;
    out.push(finding(
        "rings-below-max",
        Severity::Warning,
        name,
        &format!("{name}.rings"),
        Some(format!("rx {}/{} tx {}/{}", r.rx, r.rx_max, r.tx, r.tx_max)),
        format!(
            "the rings hold {} RX and {} TX descriptors of a possible {} and {}: short rings \
             drop bursts whenever the CPU is late (rx_missed_errors)",
            r.rx, r.tx, r.rx_max, r.tx_max
        ),
        Fix::Command(format!("ethtool -G {name} rx {} tx {}", r.rx_max, r.tx_max)),
        SRC_ETHTOOL,
    ));
}

fn governor(snapshot: &HostSnapshot, out: &mut Vec<Finding>) {
    let Some(governors) = snapshot.cpu.governors.value() else {
        return;
    };
    for slow in ["powersave", "conservative"] {
        if let Some(cpus) = governors.get(slow) {
            out.push(finding(
                "powersave-governor",
                Severity::Warning,
                "/sys/devices/system/cpu/cpufreq",
                "cpu.governor",
                Some(slow.to_owned()),
                format!(
                    "CPUs {} run the {slow} governor: clocks ramp up late, which costs packet \
                     rate and latency at the start of every burst",
                    crate::roots::format_cpu_list(cpus)
                ),
                Fix::Command("cpupower frequency-set -g performance".to_owned()),
                SRC_CPUFREQ,
            ));
        }
    }
}

fn softnet(snapshot: &HostSnapshot, out: &mut Vec<Finding>) {
    let Some(cpus) = snapshot.softnet.value() else {
        return;
    };
    let dropped: u64 = cpus.iter().map(|c| c.dropped).sum();
    let squeezed: u64 = cpus.iter().map(|c| c.time_squeeze).sum();
    let processed: u64 = cpus.iter().map(|c| c.processed).sum();
    let which = |f: fn(&crate::SoftnetCpu) -> u64| {
        crate::roots::format_cpu_list(
            &cpus
                .iter()
                .filter(|c| f(c) > 0)
                .map(|c| c.cpu)
                .collect::<Vec<_>>(),
        )
    };
    if dropped > 0 {
        let fix = match snapshot.net_core.netdev_max_backlog.value() {
            Some(v) => Fix::Command(format!("sysctl -w net.core.netdev_max_backlog={}", v * 2)),
            None => Fix::Set("a larger net.core.netdev_max_backlog".to_owned()),
        };
        out.push(finding(
            "softnet-drops",
            Severity::Warning,
            "/proc/net/softnet_stat",
            "softnet.dropped",
            Some(dropped.to_string()),
            format!(
                "{dropped} packets were dropped since boot because a CPU's backlog queue was \
                 full (CPUs {})",
                which(|c| c.dropped)
            ),
            fix,
            SRC_SYSCTL,
        ));
    }
    if squeezed > 0 {
        let severity = if squeezed * 1000 > processed.max(1) {
            Severity::Warning
        } else {
            Severity::Info
        };
        let fix = match (
            snapshot.net_core.netdev_budget.value(),
            snapshot.net_core.netdev_budget_usecs.value(),
        ) {
            (Some(b), Some(u)) => Fix::Command(format!(
                "sysctl -w net.core.netdev_budget={} net.core.netdev_budget_usecs={}",
                b * 2,
                u * 2
            )),
            _ => Fix::Set("larger net.core.netdev_budget and netdev_budget_usecs".to_owned()),
        };
        out.push(finding(
            "softnet-squeeze",
            severity,
            "/proc/net/softnet_stat",
            "softnet.time_squeeze",
            Some(squeezed.to_string()),
            format!(
                "{squeezed} receive poll rounds ran out of budget with packets left (CPUs {}), \
                 of {processed} packets processed",
                which(|c| c.time_squeeze)
            ),
            fix,
            SRC_SYSCTL,
        ));
    }
}

fn mtu(snapshot: &HostSnapshot, out: &mut Vec<Finding>) {
    let with_mtu: Vec<(&Interface, u32)> = data_interfaces(snapshot)
        .filter_map(|i| i.mtu.value().map(|m| (i, *m)))
        .collect();
    let Some(&(big, max)) = with_mtu.iter().max_by_key(|(_, m)| *m) else {
        return;
    };
    for &(iface, m) in &with_mtu {
        if m < max {
            out.push(finding(
                "mtu-mismatch",
                Severity::Warning,
                &iface.name,
                &format!("{}.mtu", iface.name),
                Some(m.to_string()),
                format!(
                    "{} has MTU {m} but {} has {max}: packets forwarded from {} larger than {m} \
                     bytes are fragmented or dropped with ICMP \"too big\"; make the path's MTU \
                     equal (or lower {} to {m})",
                    iface.name, big.name, big.name, big.name
                ),
                Fix::Command(format!("ip link set dev {} mtu {max}", iface.name)),
                SRC_ETHTOOL,
            ));
        }
    }
}

/// The line rate of an interface as a human string (for renderers).
pub fn line_rate_text(iface: &Interface) -> String {
    iface
        .speed
        .value()
        .map_or_else(|| "unknown".to_owned(), |r: &BitRate| human_rate(*r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_and_masks() {
        assert_eq!("router".parse::<Role>(), Ok(Role::Router));
        assert!("switch".parse::<Role>().is_err());
        assert_eq!(cpu_mask(4), "f");
        assert_eq!(cpu_mask(36), "f,ffffffff");
    }
}
