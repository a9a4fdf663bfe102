//! The human inventory: one block for the host, one per interface, then the bus verdicts.

use std::fmt::Write as _;

use linerate_probe::ethtool::Feature;
use linerate_probe::{HostSnapshot, Interface, Probed, format_cpu_list};
use linerate_tuning::hardware;
use linerate_tuning::{Finding, Fix, Role};
use linerate_units::human::{Digits, Family};

fn or_unknown<T: std::fmt::Display>(p: &Probed<T>) -> String {
    match p {
        Probed::Value(v) => v.to_string(),
        Probed::Unknown(r) => format!("unknown ({r})"),
    }
}

/// The whole inventory.
pub fn inventory(s: &HostSnapshot) -> String {
    let mut out = String::new();
    host(&mut out, s);
    for iface in s.interfaces() {
        out.push('\n');
        interface(&mut out, s, iface);
    }
    if let Some(r) = s.interfaces.reason() {
        let _ = writeln!(out, "\ninterfaces: unknown ({r})");
    }
    let checks = hardware::bus_checks(s);
    if !checks.is_empty() {
        let _ = writeln!(out, "\nBus");
        for c in &checks {
            let mark = if c.verdict.enough { "ok" } else { "TOO SLOW" };
            let _ = writeln!(
                out,
                "  {}  {}  [{}]  {mark}",
                c.slot,
                c.summary,
                c.interfaces.join(", ")
            );
            if c.narrowest_at != c.slot && !c.narrowest_at.starts_with(&c.slot) {
                let _ = writeln!(out, "    narrowest link at bridge {}", c.narrowest_at);
            }
            if !c.unknown_rate.is_empty() {
                let _ = writeln!(
                    out,
                    "    left out (link speed unknown): {}",
                    c.unknown_rate.join(", ")
                );
            }
        }
    }
    softnet(&mut out, s);
    super::freebsd::section(&mut out, s);
    out
}

fn host(out: &mut String, s: &HostSnapshot) {
    let cpu = &s.cpu;
    let smt = match &cpu.smt {
        Probed::Value(smt) => format!(
            "SMT {} ({})",
            if smt.active { "on" } else { "off" },
            smt.control
        ),
        Probed::Unknown(r) => format!("SMT unknown ({r})"),
    };
    let _ = writeln!(
        out,
        "Host      {} {} · {}",
        or_unknown(&s.host.os),
        or_unknown(&s.host.kernel),
        or_unknown(&s.host.hostname)
    );
    let _ = writeln!(out, "CPU       {}", or_unknown(&cpu.model));
    let _ = writeln!(
        out,
        "          {} logical CPUs, {} cores, {} socket(s), {smt}, {} NUMA node(s)",
        cpu.logical().map_or_else(
            || or_unknown(&cpu.online.as_ref().map(|v| v.len())),
            |n| n.to_string()
        ),
        or_unknown(&cpu.cores),
        or_unknown(&cpu.sockets),
        or_unknown(&cpu.numa_nodes)
    );
    let governors = match &cpu.governors {
        Probed::Value(map) => map
            .iter()
            .map(|(g, cpus)| format!("{g} (CPUs {})", format_cpu_list(cpus)))
            .collect::<Vec<_>>()
            .join(", "),
        Probed::Unknown(r) => format!("unknown ({r})"),
    };
    let _ = writeln!(out, "Governor  {governors}");
    let memory = match &s.host.memory {
        Probed::Value(m) => m
            .human()
            .family(Family::Binary)
            .digits(Digits::Decimals(1))
            .to_string(),
        Probed::Unknown(r) => format!("unknown ({r})"),
    };
    let _ = writeln!(out, "Memory    {memory}");
    let flag = |p: &Probed<bool>| match p {
        Probed::Value(true) => "on".to_owned(),
        Probed::Value(false) => "off".to_owned(),
        Probed::Unknown(r) => format!("unknown ({r})"),
    };
    let _ = writeln!(
        out,
        "Forward   ipv4 {}, ipv6 {}",
        flag(&s.forwarding.ipv4),
        flag(&s.forwarding.ipv6)
    );
}

fn feature_text(name: &str, f: Option<Feature>) -> Option<String> {
    let f = f?;
    Some(format!(
        "{name} {}{}",
        if f.active { "on" } else { "off" },
        if f.changeable { "" } else { " [fixed]" }
    ))
}

fn interface(out: &mut String, s: &HostSnapshot, i: &Interface) {
    let mtu = i
        .mtu
        .value()
        .map_or_else(|| "MTU unknown".to_owned(), |m| format!("MTU {m}"));
    let driver = match (&i.driver, i.driver_version.value()) {
        (Probed::Value(d), Some(v)) if !v.is_empty() => format!("{d} {v}"),
        (d, _) => or_unknown(d),
    };
    let _ = writeln!(
        out,
        "{}  {} · driver {driver} · state {} · {mtu}",
        i.name,
        i.kind,
        or_unknown(&i.operstate),
    );
    let row = |out: &mut String, label: &str, text: String| {
        let _ = writeln!(out, "  {label:<9} {text}");
    };
    if let Some(addr) = i.address.value() {
        row(out, "address", addr.clone());
    }
    let speed = match &i.speed {
        Probed::Value(r) => r.human().to_string(),
        Probed::Unknown(r) => format!("unknown ({r})"),
    };
    row(
        out,
        "link",
        format!(
            "{speed}, duplex {}, carrier {}",
            i.duplex.value().map_or("unknown", String::as_str),
            match i.carrier.value() {
                Some(true) => "yes",
                Some(false) => "no",
                None => "unknown",
            }
        ),
    );
    match &i.pci {
        Probed::Value(pci) => {
            let link = match (&pci.current, &pci.max) {
                (Probed::Value(c), Probed::Value(m)) => format!(
                    "{} ({} usable per direction), card max {}",
                    c.bus(),
                    c.bus().bandwidth().usable.human(),
                    m.bus()
                ),
                (Probed::Value(c), Probed::Unknown(_)) => format!(
                    "{} ({} usable per direction)",
                    c.bus(),
                    c.bus().bandwidth().usable.human()
                ),
                (Probed::Unknown(r), _) => format!("link unknown ({r})"),
            };
            let numa = pci
                .numa_node
                .value()
                .filter(|n| **n >= 0)
                .map_or(String::new(), |n| format!(" · NUMA node {n}"));
            row(
                out,
                "bus",
                format!(
                    "{} [{}] · {link}{numa}",
                    pci.address,
                    pci.id.value().map_or("?", String::as_str)
                ),
            );
        }
        Probed::Unknown(r) => row(out, "bus", r.clone()),
    }
    let queues = match (&i.ethtool.channels, &i.queues) {
        (Probed::Value(c), _) => format!(
            "channels combined {}/{} rx {}/{} tx {}/{} (current/max)",
            c.combined, c.max_combined, c.rx, c.max_rx, c.tx, c.max_tx
        ),
        (Probed::Unknown(r), Probed::Value(q)) => {
            format!(
                "{} rx / {} tx queues in sysfs; channels unknown ({r})",
                q.rx, q.tx
            )
        }
        (Probed::Unknown(r), Probed::Unknown(_)) => format!("unknown ({r})"),
    };
    row(out, "queues", queues);
    row(
        out,
        "rings",
        match &i.ethtool.rings {
            Probed::Value(r) => format!(
                "rx {}/{} tx {}/{} (current/max)",
                r.rx, r.rx_max, r.tx, r.tx_max
            ),
            Probed::Unknown(r) => format!("unknown ({r})"),
        },
    );
    row(
        out,
        "coalesce",
        match &i.ethtool.coalesce {
            Probed::Value(c) => format!(
                "rx {} µs/{} frames{} · tx {} µs/{} frames{}",
                c.rx_usecs,
                c.rx_frames,
                if c.adaptive_rx { " adaptive" } else { "" },
                c.tx_usecs,
                c.tx_frames,
                if c.adaptive_tx { " adaptive" } else { "" }
            ),
            Probed::Unknown(r) => format!("unknown ({r})"),
        },
    );
    let offloads = match &i.ethtool.features {
        Probed::Value(_) => {
            let parts: Vec<String> = [
                ("tso", "tx-tcp-segmentation"),
                ("gso", "tx-generic-segmentation"),
                ("gro", "rx-gro"),
                ("lro", "rx-lro"),
                ("rx-csum", "rx-checksum"),
                ("tx-csum", "tx-checksum-ip-generic"),
                ("sg", "tx-scatter-gather"),
            ]
            .iter()
            .filter_map(|(short, long)| feature_text(short, i.ethtool.feature(long)))
            .collect();
            parts.join(" · ")
        }
        Probed::Unknown(r) => format!("unknown ({r})"),
    };
    row(out, "offloads", offloads);
    if let Some(table) = i.ethtool.rss_indirection.value().filter(|t| !t.is_empty()) {
        let mut queues: Vec<u32> = table.clone();
        queues.sort_unstable();
        queues.dedup();
        row(
            out,
            "rss",
            format!(
                "{}-entry indirection table over queues {}",
                table.len(),
                format_cpu_list(&queues)
            ),
        );
    }
    match &i.irqs {
        Probed::Value(irqs) if !irqs.is_empty() => {
            let list: Vec<String> = irqs
                .iter()
                .map(|q| {
                    format!(
                        "{} {} → CPU {}",
                        q.irq,
                        q.name,
                        q.cpus().map_or("?".to_owned(), |c| format_cpu_list(c))
                    )
                })
                .collect();
            row(out, "irqs", list.join(" · "));
        }
        Probed::Value(_) => row(out, "irqs", "none".to_owned()),
        Probed::Unknown(r) => row(out, "irqs", format!("unknown ({r})")),
    }
    if let Probed::Value(c) = &i.counters {
        row(
            out,
            "counters",
            format!(
                "rx {} pkts {} B · tx {} pkts {} B · drops rx {} tx {} · errors rx {} tx {} · \
                 missed {}",
                c.rx_packets,
                c.rx_bytes,
                c.tx_packets,
                c.tx_bytes,
                c.rx_dropped,
                c.tx_dropped,
                c.rx_errors,
                c.tx_errors,
                c.rx_missed_errors
            ),
        );
    }
    let limits = hardware::packet_rate_limits(s, i);
    for (n, l) in limits.iter().enumerate() {
        let label = if n == 0 { "limits" } else { "" };
        row(out, label, format!("{}: {}", l.what, l.detail));
    }
}

fn softnet(out: &mut String, s: &HostSnapshot) {
    match &s.softnet {
        Probed::Value(cpus) => {
            let _ = writeln!(out, "\nSoftnet   (since boot)");
            for c in cpus {
                let _ = writeln!(
                    out,
                    "  CPU {:<3} processed {:>12} dropped {:>8} squeezed {:>8}",
                    c.cpu, c.processed, c.dropped, c.time_squeeze
                );
            }
        }
        Probed::Unknown(r) => {
            let _ = writeln!(out, "\nSoftnet   unknown ({r})");
        }
    }
}

/// Findings as a list.
pub fn findings(findings: &[Finding], role: Role) -> String {
    let mut out = format!("\nHardware findings for role {role}: {}\n", findings.len());
    for f in findings {
        let _ = writeln!(
            out,
            "  {:<7} {:<24} {}",
            f.severity.to_string(),
            f.rule,
            f.key
        );
        let _ = writeln!(out, "          {}", f.why);
        match &f.fix {
            Fix::Command(c) => {
                let _ = writeln!(out, "          fix: {c}");
            }
            Fix::Set(v) => {
                let _ = writeln!(out, "          fix: use {v}");
            }
            Fix::Remove => {
                let _ = writeln!(out, "          fix: remove it");
            }
            Fix::Rename(k) => {
                let _ = writeln!(out, "          fix: use {k} instead");
            }
            Fix::None => {}
        }
    }
    out
}
