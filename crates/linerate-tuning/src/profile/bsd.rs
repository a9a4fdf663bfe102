//! FreeBSD and OpenBSD formulas.

use crate::context::Role;
use crate::finding::Severity;
use crate::formula::{self, MAX_WINDOW};
use crate::profile::{Profile, Target};
use crate::wording::bytes;

pub(crate) fn freebsd(p: &mut Profile) {
    let bdp = p.bdp.bytes();
    let bdp_txt = bytes(bdp);
    let buf_needed = p.role.terminates_tcp()
        && formula::next_pow2(bdp.saturating_mul(2)) as i64
            > p.default_numbers("net.inet.tcp.recvbuf_max")
                .last()
                .copied()
                .unwrap_or(0);
    if buf_needed {
        let default_max = p
            .default_numbers("net.inet.tcp.recvbuf_max")
            .last()
            .copied()
            .unwrap_or(0);
        let buf =
            (formula::next_pow2(bdp.saturating_mul(2)).min(MAX_WINDOW) as i64).max(default_max);
        for key in ["net.inet.tcp.recvbuf_max", "net.inet.tcp.sendbuf_max"] {
            p.set(
                Target::Sysctl,
                key,
                buf,
                Severity::Warning,
                format!(
                    "2 × BDP = 2 × {bdp_txt} → power of two, ≥ the default {} and ≤ 1 GiB",
                    bytes(default_max)
                ),
            );
        }
        p.set(Target::Sysctl, "kern.ipc.maxsockbuf", buf * 2, Severity::Warning,
            "2 × the autotuning maxima: maxsockbuf counts mbuf overhead (≈ 1/8 with 2 KiB clusters) and caps both".into());
    } else {
        p.notes.push(format!(
            "socket buffers: {} (role {}) fits the default autotuning maxima; left alone",
            if p.role.terminates_tcp() {
                format!("2 × BDP = {}", bytes(bdp.saturating_mul(2)))
            } else {
                "no local bulk TCP".into()
            },
            p.role
        ));
    }
    if p.role == Role::Web {
        p.set(
            Target::Loader,
            "accf_http_load",
            "YES",
            Severity::Info,
            "role web: the accept filter wakes the server once per complete HTTP request".into(),
        );
        p.set(
            Target::Loader,
            "accf_data_load",
            "YES",
            Severity::Info,
            "role web: accept filter for protocols that send first".into(),
        );
    }
    if p.role.forwards() {
        p.set(
            Target::RcConf,
            "gateway_enable",
            "YES",
            Severity::Warning,
            format!("role {}: net.inet.ip.forwarding=1 at boot", p.role),
        );
        p.set(
            Target::RcConf,
            "ipv6_gateway_enable",
            "YES",
            Severity::Warning,
            format!("role {}: net.inet6.ip6.forwarding=1 at boot", p.role),
        );
        let flags = "-tso4 -tso6 -lro -vlanhwtso";
        let why = format!(
            "role {}: TSO and LRO off on a forwarding interface (LRO breaks end-to-end, TSO is incompatible with ipfw nat; BSDRP); merge the flags into the interface's existing line, keeping its address",
            p.role
        );
        let ifaces = p.context.ifaces.clone();
        for iface in &ifaces {
            p.set(
                Target::RcConf,
                // rc.subr turns `.` and `-` into `_` in the variable name (ix0.100 → ifconfig_ix0_100).
                &format!("ifconfig_{}", iface.replace(['.', '-'], "_")),
                format!("up {flags}"),
                Severity::Warning,
                why.clone(),
            );
        }
        if ifaces.is_empty() {
            p.notes.push(format!("add `{flags}` to each forwarding interface's ifconfig_<IF> line in rc.conf (pass --iface to write them)"));
        }
    }
    if p.role == Role::Firewall {
        match p.context.flows {
            Some(flows) => {
                let states = flows.saturating_mul(2);
                let hash = formula::next_pow2(states.saturating_mul(3));
                p.set(Target::Loader, "net.pf.states_hashsize", hash, Severity::Warning,
                    format!("3 × states, states = 2 × {flows} flows (one UDP flow is 2 pf states) → power of two; costs {} (80 bytes per bucket)", bytes(hash.saturating_mul(80))));
                p.set(
                    Target::Command,
                    "pf.conf",
                    format!("set limit {{ states {states} }}"),
                    Severity::Warning,
                    format!("2 states per flow × {flows} flows"),
                );
            }
            None => p.notes.push(
                "pf: pass --flows N to size `set limit { states }` and net.pf.states_hashsize"
                    .into(),
            ),
        }
    }
    p.notes
        .push("kern.ipc.nmbclusters is sized at boot from RAM; left alone (tuning(7))".into());
    p.notes.push("net.inet.tcp.syncookies stays 1; net.inet.tcp.cc.algorithm stays the built-in default (no module to load)".into());
}

pub(crate) fn openbsd(p: &mut Profile) {
    if p.role.forwards() {
        p.set(
            Target::Sysctl,
            "net.inet.ip.forwarding",
            1,
            Severity::Warning,
            format!("role {}: forwards IPv4", p.role),
        );
        p.set(
            Target::Sysctl,
            "net.inet6.ip6.forwarding",
            1,
            Severity::Warning,
            format!("role {}: forwards IPv6", p.role),
        );
    }
    p.notes.push(format!(
        "TCP buffers autoscale on OpenBSD (net.inet.tcp.recvspace/sendspace were removed); BDP {} needs no sysctl",
        bytes(p.bdp.bytes())
    ));
}
