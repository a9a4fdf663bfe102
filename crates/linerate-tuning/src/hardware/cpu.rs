//! Rules about the CPUs: SMT on a forwarding host, queue interrupts piled on one CPU, slow
//! frequency governors, softnet drops and squeezes.

use linerate_probe::{HostSnapshot, SoftnetCpu, format_cpu_list};

use super::{
    HardwareContext, SRC_BSDRP, SRC_CPUFREQ, SRC_SCALING, SRC_SYSCTL, data_interfaces, finding,
};
use crate::finding::{Finding, Fix, Severity};

pub(super) fn smt(snapshot: &HostSnapshot, ctx: &HardwareContext, out: &mut Vec<Finding>) {
    let Some(smt) = snapshot.cpu.smt.value() else {
        return;
    };
    if ctx.role.forwards() && smt.active {
        let (location, fix) = if snapshot.is_freebsd() {
            (
                "kern.smp.threads_per_core",
                "echo 'machdep.hyperthreading_allowed=\"0\"' > /boot/loader.conf.d/smt.conf  \
                 # x86 loader tunable: the sibling threads stay offline after the next boot",
            )
        } else {
            (
                "/sys/devices/system/cpu/smt/control",
                "echo off > /sys/devices/system/cpu/smt/control  # and add `nosmt` to the \
                 kernel command line to keep it",
            )
        };
        out.push(finding(
            "smt-on-router",
            Severity::Warning,
            location,
            "cpu.smt",
            Some(smt.control.clone()),
            format!(
                "SMT (hyper-threading) is on for a {}: packet forwarding gains more from whole \
                 cores than from sibling threads (the BSD Router Project measured +24% pps with \
                 it off)",
                ctx.role
            ),
            Fix::Command(fix.to_owned()),
            SRC_BSDRP,
        ));
    }
}

pub(super) fn irqs_on_one_cpu(snapshot: &HostSnapshot, out: &mut Vec<Finding>) {
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

pub(super) fn governor(snapshot: &HostSnapshot, out: &mut Vec<Finding>) {
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
                    format_cpu_list(cpus)
                ),
                Fix::Command("cpupower frequency-set -g performance".to_owned()),
                SRC_CPUFREQ,
            ));
        }
    }
}

pub(super) fn softnet(snapshot: &HostSnapshot, out: &mut Vec<Finding>) {
    let Some(cpus) = snapshot.softnet.value() else {
        return;
    };
    let dropped: u64 = cpus.iter().map(|c| c.dropped).sum();
    let squeezed: u64 = cpus.iter().map(|c| c.time_squeeze).sum();
    let processed: u64 = cpus.iter().map(|c| c.processed).sum();
    let which = |f: fn(&SoftnetCpu) -> u64| {
        format_cpu_list(
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
