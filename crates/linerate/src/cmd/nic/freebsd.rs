//! The FreeBSD part of the inventory: what each NIC's `dev.<driver>.<unit>` nodes say (model,
//! firmware, PCI location, NUMA domain, queues), netisr and the network memory limits.

use std::fmt::Write as _;

use linerate_probe::freebsd::FreebsdHost;
use linerate_probe::{HostSnapshot, Probed};

fn shown<T: std::fmt::Display>(p: &Probed<T>) -> String {
    match p {
        Probed::Value(v) => v.to_string(),
        Probed::Unknown(r) => format!("unknown ({r})"),
    }
}

/// Appends the section when the snapshot is of a FreeBSD host.
pub fn section(out: &mut String, s: &HostSnapshot) {
    let Some(f) = &s.freebsd else {
        return;
    };
    let _ = writeln!(out, "\nFreeBSD");
    nics(out, f);
    if let Probed::Value(n) = &f.netisr {
        let _ = writeln!(
            out,
            "  netisr    dispatch {} · threads {} of max {} · bound {} · queue limit {}",
            shown(&n.dispatch),
            shown(&n.threads),
            shown(&n.max_threads),
            shown(&n.bind_threads),
            shown(&n.default_qlimit)
        );
    }
    if let Probed::Value(l) = &f.limits {
        let _ = writeln!(
            out,
            "  memory    mbuf clusters {} · maxsockbuf {} · TCP buffers max send {} recv {} · cc {}",
            shown(&l.mbuf_clusters),
            shown(&l.max_socket_buffer),
            shown(&l.tcp_sendbuf_max),
            shown(&l.tcp_recvbuf_max),
            shown(&l.tcp_congestion_control)
        );
    }
}

fn nics(out: &mut String, f: &FreebsdHost) {
    let list = match &f.nics {
        Probed::Value(list) => list,
        Probed::Unknown(r) => {
            let _ = writeln!(out, "  nics      unknown ({r})");
            return;
        }
    };
    for n in list {
        let mut parts = vec![n.description.clone().unwrap_or_else(|| n.driver.clone())];
        if let Some(fw) = &n.firmware {
            parts.push(format!("firmware {fw}"));
        }
        if let Some(sel) = &n.pci_selector {
            parts.push(sel.clone());
        }
        if let Some(d) = n.numa_domain {
            parts.push(format!("NUMA domain {d}"));
        }
        let q = &n.queues;
        parts.push(format!(
            "queues rx {} tx {} ({})",
            q.rx.value().map_or("?".to_owned(), u32::to_string),
            q.tx.value().map_or("?".to_owned(), u32::to_string),
            q.source
        ));
        let _ = writeln!(out, "  {:<9} {}", n.interface, parts.join(" · "));
    }
}
