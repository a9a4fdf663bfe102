//! Rules about each interface: offloads on a forwarding host, fewer queues than cores, queue
//! interrupts on one CPU, rings below their maximum, MTUs that differ along a forwarding path.

use linerate_probe::{HostSnapshot, Interface, irq};

use super::{HardwareContext, SRC_BSDRP, SRC_ETHTOOL, SRC_SCALING, data_interfaces, finding};
use crate::finding::{Finding, Fix, Severity};

pub(super) fn offloads(iface: &Interface, ctx: &HardwareContext, out: &mut Vec<Finding>) {
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

pub(super) fn queues(snapshot: &HostSnapshot, iface: &Interface, out: &mut Vec<Finding>) {
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
        // iflib drivers take a queue count at attach: a loader tunable, up to the NIC's
        // maximum (which sysctl does not show).
        _ if snapshot.is_freebsd() => {
            let node = device_node(name);
            out.push(finding(
                "queues-fewer-than-cores",
                Severity::Info,
                name,
                &format!("{name}.queues"),
                Some(rx.to_string()),
                format!(
                    "{rx} receive queue(s) for {cores} cores: RSS spreads receive work over only \
                     {rx} CPU(s); iflib drivers take more queues at boot, up to what the NIC \
                     supports"
                ),
                Fix::Command(format!(
                    "echo '{node}.iflib.override_nrxqs=\"{cores}\"' >> \
                     /boot/loader.conf.d/queues.conf  # and override_ntxqs; reboot"
                )),
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

/// FreeBSD's sysctl node of an interface: `ix0` → `dev.ix.0`.
fn device_node(name: &str) -> String {
    let driver = name.trim_end_matches(|c: char| c.is_ascii_digit());
    format!("dev.{driver}.{}", &name[driver.len()..])
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

pub(super) fn irq_spread(snapshot: &HostSnapshot, iface: &Interface, out: &mut Vec<Finding>) {
    let Some(irqs) = iface.irqs.value() else {
        return;
    };
    let (queue, on) = irq::queue_irq_cpus(irqs);
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

pub(super) fn rings(iface: &Interface, out: &mut Vec<Finding>) {
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

pub(super) fn mtu(snapshot: &HostSnapshot, out: &mut Vec<Finding>) {
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
                Fix::Command(if snapshot.is_freebsd() {
                    format!(
                        "ifconfig {} mtu {max}  # and in its ifconfig_{} line in rc.conf",
                        iface.name, iface.name
                    )
                } else {
                    format!("ip link set dev {} mtu {max}", iface.name)
                }),
                SRC_ETHTOOL,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_masks() {
        assert_eq!(cpu_mask(4), "f");
        assert_eq!(cpu_mask(36), "f,ffffffff");
    }
}
