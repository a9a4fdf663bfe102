//! Linux formulas.

use crate::buffers::{self, BufferInput};
use crate::context::Role;
use crate::finding::Severity;
use crate::formula;
use crate::profile::{Profile, Target};
use crate::wording::bytes;

pub(crate) fn generate(p: &mut Profile) {
    let c = p.context.clone();
    let rate = c.rate.unwrap_or_default();
    let rtt = c.rtt.unwrap_or_default();
    let bdp = p.bdp.bytes();
    let bdp_txt = bytes(bdp);

    if p.role.terminates_tcp() {
        // The one buffer answer (also `calc bdp`'s and `lint`'s): set what the kernel's
        // defaults do not cover, and say so for what they do.
        let advice = buffers::linux(&BufferInput {
            rate,
            rtt,
            version: c.version.clone(),
            ram: c.ram,
            page_size: c.page_size,
        });
        match advice {
            Ok(advice) => {
                for k in &advice.keys {
                    if k.change {
                        let need = if k.key.starts_with("net.ipv4") {
                            Severity::Warning
                        } else {
                            Severity::Info
                        };
                        p.set(Target::Sysctl, k.key, &k.value, need, k.reason.clone());
                    } else {
                        p.notes
                            .push(format!("{} = {}: {}", k.key, k.value, k.reason));
                    }
                }
            }
            Err(e) => p.notes.push(format!("TCP buffers: {e}")),
        }
        // Restarting from IW10 after idle costs log2(BDP / IW) round trips on every burst.
        let iw = 10 * u64::from(c.mtu.saturating_sub(40));
        if bdp > iw {
            p.set(Target::Sysctl, "net.ipv4.tcp_slow_start_after_idle", 0, Severity::Info,
                format!("BDP {bdp_txt} > initial window 10 × MSS = {}: restarting slow start after idle costs about {:.0} RTTs of {rtt} per burst",
                    bytes(iw), (bdp as f64 / iw as f64).log2().ceil()));
        }
        if rtt.as_secs_f64() >= 0.010 {
            p.set(Target::Sysctl, "net.ipv4.tcp_mtu_probing", 1, Severity::Info,
                format!("RTT {rtt} ≥ 10 ms is a WAN path, where ICMP-blackholed PMTU discovery stalls connections (ESnet)"));
        }
        if rate.bps() >= 1_000_000_000 {
            p.set(Target::Sysctl, "net.core.default_qdisc", "fq", Severity::Info,
                format!("rate {rate} ≥ 1 Gbit/s: fq paces each flow so bursts of a {bdp_txt} window do not overflow switch buffers (needs sch_fq)"));
        }
    } else {
        p.notes.push(format!(
            "role {}: no local bulk TCP, so TCP buffers stay at the kernel's defaults",
            p.role
        ));
    }

    if p.role == Role::Web {
        let drain_1ms = (rate.bytes_per_sec() / 1000.0) as u64;
        let lowat = formula::next_pow2(drain_1ms.max(131_072));
        p.set(Target::Sysctl, "net.ipv4.tcp_notsent_lowat", lowat, Severity::Info,
            format!("unsent data per socket ≤ what {rate} drains in 1 ms ({}), at least 128 KiB (tuned), → power of two: keeps send queues short for many connections", bytes(drain_1ms)));
    }

    // Per-CPU backlog: 1 ms of line-rate MTU frames, a power of two, never below the default.
    let pps = formula::mtu_frames_per_second(rate, c.mtu);
    let backlog = formula::next_pow2((pps / 1000.0).ceil() as u64);
    let backlog_d = max_or(&p.default_numbers("net.core.netdev_max_backlog"));
    if i64::try_from(backlog).unwrap_or(i64::MAX) > backlog_d {
        p.set(Target::Sysctl, "net.core.netdev_max_backlog", backlog, Severity::Info,
            format!("1 ms of {rate} in {}-byte frames = {:.0} packets → power of two (drains in ≤ 2 ms, no bufferbloat)", c.mtu, pps / 1000.0));
    } else {
        p.notes.push(format!("net.core.netdev_max_backlog: 1 ms of {rate} is {:.0} packets, within the default {backlog_d}", pps / 1000.0));
    }

    if p.role.forwards() {
        p.set(
            Target::Sysctl,
            "net.ipv4.ip_forward",
            1,
            Severity::Warning,
            format!("role {}: forwards IPv4", p.role),
        );
        p.set(
            Target::Sysctl,
            "net.ipv6.conf.all.forwarding",
            1,
            Severity::Warning,
            format!("role {}: forwards IPv6", p.role),
        );
        p.notes.push("LRO: the kernel turns it off by itself on forwarding devices; check GRO with `linerate nic`".into());
    }
    if p.role == Role::Firewall {
        conntrack(p);
    }
    p.notes.push("net.ipv4.tcp_syncookies stays 1 (SYN-flood fallback); tcp_timestamps, tcp_sack, tcp_window_scaling stay on".into());
    p.notes
        .push("net.ipv4.tcp_mem is computed by the kernel from RAM; left alone".into());
}

fn max_or(v: &[i64]) -> i64 {
    v.last().copied().unwrap_or(0)
}

fn conntrack(p: &mut Profile) {
    const ENTRY_BYTES: u64 = 320;
    let c = &p.context;
    let (n, why) = match (c.flows, c.ram) {
        (Some(flows), _) => (
            formula::next_pow2(flows.saturating_mul(2)),
            format!(
                "2 × {flows} flows (headroom for churn: entries linger in TIME_WAIT/CLOSE states) → power of two"
            ),
        ),
        (None, Some(ram)) => (
            formula::next_pow2(ram.bytes() / 64 / ENTRY_BYTES),
            format!(
                "no --flows: RAM {} / 64 for state at ~{ENTRY_BYTES} bytes per entry → power of two",
                bytes(ram.bytes())
            ),
        ),
        (None, None) => {
            p.notes
                .push("nf_conntrack_max: pass --flows N (or --ram) to size the state table".into());
            return;
        }
    };
    p.set(
        Target::Sysctl,
        "net.netfilter.nf_conntrack_max",
        n,
        Severity::Warning,
        format!(
            "{why}; costs about {}",
            bytes(n.saturating_mul(ENTRY_BYTES))
        ),
    );
}
