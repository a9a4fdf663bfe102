//! The hardware rules over a FreeBSD snapshot speak FreeBSD: loader tunables and ifconfig, not
//! sysfs and ethtool. The host is written out value by value (a router with SMT on, one ix NIC
//! with 2 of 8 possible queues), built by the probe's FreeBSD snapshot builder.

use linerate_probe::freebsd::snapshot::snapshot;
use linerate_probe::freebsd::{Link, Sources, SysctlDump};
use linerate_probe::interface::Counters;

use super::*;
use crate::context::Role;
use crate::finding::Fix;

fn router() -> HostSnapshot {
    let sysctl = SysctlDump::from_pairs([
        ("kern.ostype", "FreeBSD"),
        ("hw.ncpu", "8"),
        ("kern.smp.cores", "4"),
        ("kern.smp.threads_per_core", "2"),
        ("net.inet.ip.forwarding", "1"),
        ("dev.ix.0.%desc", "Intel(R) X520 82599ES (SFI/SFP+)"),
        (
            "dev.ix.0.%pnpinfo",
            "vendor=0x8086 device=0x10fb subvendor=0x8086 subdevice=0x0003 class=0x020000",
        ),
        ("dev.ix.0.iflib.rxq0.rxq_fl0.cidx", "0"),
        ("dev.ix.0.iflib.rxq1.rxq_fl0.cidx", "0"),
        ("dev.ix.0.iflib.txq0.txq_cidx", "0"),
        ("dev.ix.0.iflib.txq1.txq_cidx", "0"),
    ]);
    let link = |name: &str, index, mtu| Link {
        name: name.into(),
        index,
        up: true,
        running: true,
        loopback: false,
        mac: None,
        mtu,
        baudrate: 10_000_000_000,
        carrier: Some(true),
        counters: Counters::default(),
    };
    let sources = Sources {
        sysctl,
        links: Some(Ok(vec![link("ix0", 1, 9000), link("igb0", 2, 1500)])),
        ..Sources::default()
    };
    snapshot(&sources, "test".into(), 0)
}

fn command<'a>(findings: &'a [Finding], rule: &str) -> &'a str {
    let f = findings
        .iter()
        .find(|f| f.rule == rule)
        .unwrap_or_else(|| panic!("no {rule} in {findings:?}"));
    match &f.fix {
        Fix::Command(c) => c,
        other => panic!("{rule}: {other:?}"),
    }
}

#[test]
fn freebsd_findings_fix_with_loader_tunables_and_ifconfig() {
    let snap = router();
    let ctx = HardwareContext::for_snapshot(&snap, Role::Router);
    let f = hardware_findings(&snap, &ctx);
    let smt = command(&f, "smt-on-router");
    assert!(
        smt.contains("machdep.hyperthreading_allowed=\"0\""),
        "{smt}"
    );
    let q = command(&f, "queues-fewer-than-cores");
    assert!(q.contains("dev.ix.0.iflib.override_nrxqs=\"4\""), "{q}");
    let mtu = command(&f, "mtu-mismatch");
    assert!(mtu.starts_with("ifconfig igb0 mtu 9000"), "{mtu}");
    assert!(
        f.iter().all(|f| !format!("{:?}", f.fix).contains("/sys/")),
        "no Linux path in a FreeBSD fix: {f:?}"
    );
}
