//! The FreeBSD snapshot from real output (`testdata/freebsd/`, sources in its SOURCES.md).

use super::*;
use crate::freebsd::watch::{interface_sample, queue_counters};
use crate::freebsd::{interrupts::VmstatInterrupts, pciconf};
use crate::queue::Direction;

fn fixture(rel: &str) -> String {
    let path = format!("{}/testdata/freebsd/{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn dump(rels: &[&str]) -> SysctlDump {
    let text: String = rels.iter().map(|r| fixture(r)).collect();
    SysctlDump::parse(&text).unwrap()
}

#[test]
fn ibm_x3550m3_ix_queues_and_pcie_link_from_one_machine() {
    // BSDRP's lab page: `sysctl dev.ix.0. | grep rx_packet`, `dev.ix.1. | grep tx_packet` and
    // `pciconf -lvc` of the same DUT.
    let sources = Sources {
        sysctl: dump(&[
            "bsdrp-ibm-x3550m3-82599eb/sysctl-dev-ix-0-rx_packets.txt",
            "bsdrp-ibm-x3550m3-82599eb/sysctl-dev-ix-1-tx_packets.txt",
        ]),
        pci: Some(Ok(pciconf::parse(&fixture(
            "bsdrp-ibm-x3550m3-82599eb/pciconf-lvc.txt",
        ))
        .unwrap())),
        ..Sources::default()
    };
    let snap = snapshot(&sources, "test".into(), 0);
    let names: Vec<&str> = snap.interfaces().iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["ix0", "ix1"]);
    let ix0 = snap.interface("ix0").unwrap();
    assert_eq!(ix0.driver.value().map(String::as_str), Some("ix"));
    // The grep shows receive queues only: the FreeBSD section has them, the common field
    // (which needs both directions) says what is missing.
    let nic0 = &snap.freebsd.as_ref().unwrap().nics.value().unwrap()[0];
    assert_eq!(
        nic0.queues.rx.value(),
        Some(&4),
        "queue0..queue3 in the grep"
    );
    assert_eq!(ix0.rx_queues(), None);
    assert!(ix0.queues.reason().is_some());
    let pci = ix0.pci.value().expect("ix0 is in pciconf");
    let link = pci.current.value().unwrap();
    assert_eq!(
        (link.lanes, link.generation),
        (8, linerate_calc::bus::PcieGen::Gen2)
    );
    // ix1 is not in the page's pciconf excerpt: said so, not guessed.
    let ix1 = snap.interface("ix1").unwrap();
    assert!(
        ix1.pci
            .reason()
            .unwrap()
            .contains("not among pciconf's devices")
    );
    // No interface list in a dump: the link fields say why.
    assert!(ix0.mtu.reason().unwrap().contains("no interface list"));
    let q = queue_counters(&snap.freebsd.as_ref().unwrap().nics.value().unwrap()[0]);
    assert_eq!(q[&(Direction::Rx, 3)].packets, Some(143_762_837));
    assert!(snap.softnet.reason().unwrap().contains("netstat -Q"));
}

#[test]
fn x550t2_description_firmware_numa_and_location() {
    let sources = Sources {
        sysctl: dump(&["intel-mfd-x550t2/sysctl-dev-ix-1.txt"]),
        ..Sources::default()
    };
    let snap = snapshot(&sources, "x550".into(), 0);
    let ix1 = snap.interface("ix1").unwrap();
    assert_eq!(ix1.kind, "pci");
    assert_eq!(
        ix1.driver_version.value().map(String::as_str),
        Some("4.0.1-k")
    );
    assert!(ix1.firmware.value().unwrap().contains("eTrack 0x80000a42"));
    assert!(
        ix1.pci
            .reason()
            .unwrap()
            .contains("pciconf -lvc output was not given")
    );
    assert!(ix1.irqs.reason().unwrap().contains("vmstat -i"));
}

#[test]
fn dl360p_cxgbe_port_gets_its_nexus_vectors() {
    let sources = Sources {
        sysctl: dump(&["bsdrp-hp-dl360p-gen8-t540/sysctl-dev-cxl-0-stats.txt"]),
        interrupts: Some(Ok(VmstatInterrupts::parse(&fixture(
            "bsdrp-hp-dl360p-gen8-t540/vmstat-i.txt",
        ))
        .unwrap())),
        ..Sources::default()
    };
    let snap = snapshot(&sources, "hp".into(), 0);
    let cxl0 = snap.interface("cxl0").expect("cxl0 from dev.cxl.0.stats");
    // The stats subtree names no parent: the port's own vectors are looked for and none are
    // in vmstat -i (they are the nexus' t5nex0:0aN lines).
    let irqs = cxl0.irqs.value().unwrap();
    assert!(irqs.iter().all(|i| i.affinity.reason().is_some()));
}

#[test]
fn cpu_facts_become_the_common_cpu_fields() {
    let sources = Sources {
        sysctl: dump(&["oshi-2309-truenas/sysctl-kern-hw.txt"]),
        ..Sources::default()
    };
    let snap = snapshot(&sources, "truenas".into(), 0);
    assert_eq!(snap.cpu.logical(), Some(8));
    assert_eq!(snap.cpu.cores.value(), Some(&4));
    let smt = snap.cpu.smt.value().unwrap();
    assert!(smt.active && smt.control == "on");
    assert!(snap.cpu.governors.reason().unwrap().contains("powerd"));
    assert!(
        snap.net_core
            .netdev_budget
            .reason()
            .unwrap()
            .contains("netisr")
    );
    // The SMT switch off at boot reads as such.
    let mut text = fixture("oshi-2309-truenas/sysctl-kern-hw.txt");
    text.push_str("machdep.hyperthreading_allowed: 0\n");
    let off = snapshot(
        &Sources {
            sysctl: SysctlDump::parse(&text).unwrap(),
            ..Sources::default()
        },
        "t".into(),
        0,
    );
    assert_eq!(off.cpu.smt.value().unwrap().control, "off");
    assert!(!off.cpu.smt.value().unwrap().active);
}

#[test]
fn topology_names_the_online_cpus() {
    let sources = Sources {
        sysctl: dump(&["pytorch-cpuinfo-172/sysctl-kern-sched-topology_spec.txt"]),
        ..Sources::default()
    };
    let snap = snapshot(&sources, "t".into(), 0);
    assert_eq!(
        snap.cpu.online.value().unwrap(),
        &(0..8).collect::<Vec<u32>>()
    );
}

#[test]
fn live_links_fill_state_speed_and_counters() {
    let link = Link {
        name: "ix1".into(),
        index: 2,
        up: true,
        running: true,
        loopback: false,
        mac: Some("a0:36:9f:00:00:01".into()),
        mtu: 9000,
        baudrate: 10_000_000_000,
        carrier: Some(true),
        counters: crate::interface::Counters {
            rx_packets: 5,
            ..Default::default()
        },
    };
    let lo = Link {
        name: "lo0".into(),
        index: 1,
        loopback: true,
        mac: None,
        mtu: 16384,
        baudrate: 0,
        carrier: None,
        ..link.clone()
    };
    let sources = Sources {
        sysctl: dump(&["intel-mfd-x550t2/sysctl-dev-ix-1.txt"]),
        links: Some(Ok(vec![lo, link.clone()])),
        ..Sources::default()
    };
    let snap = snapshot(&sources, "live".into(), 7);
    let ix1 = snap.interface("ix1").unwrap();
    assert!(ix1.is_up());
    assert_eq!(ix1.mtu.value(), Some(&9000));
    assert_eq!(ix1.speed.value().map(|r| r.bps()), Some(10_000_000_000));
    assert_eq!(ix1.counters.value().unwrap().rx_packets, 5);
    let lo0 = snap.interface("lo0").unwrap();
    assert_eq!(lo0.kind, "loopback");
    assert_eq!(lo0.driver.value().map(String::as_str), Some("lo"));
    // A JSON round trip keeps the FreeBSD section.
    let back = HostSnapshot::from_json(&snap.to_json(), std::path::Path::new("s.json")).unwrap();
    assert_eq!(back, snap);
    let s = interface_sample(std::time::Instant::now(), &link, None);
    assert_eq!((s.ifindex, s.counters.rx_packets), (Some(2), 5));
}

#[test]
fn a_dump_that_does_not_parse_names_its_line() {
    let e = from_sysctl_text(
        "kern.ostype: FreeBSD\nnet.core.rmem_max = 212992\n",
        "x".into(),
    )
    .unwrap_err();
    assert_eq!(e.line(), 2);
    let snap =
        from_sysctl_text(&fixture("pfatt-67-ix/sysctl-dev-ix-0.txt"), "pfatt".into()).unwrap();
    assert_eq!(
        snap.interface("ix0")
            .unwrap()
            .driver
            .value()
            .map(String::as_str),
        Some("ix")
    );
    assert!(snap.host.os.reason().is_some());
}
