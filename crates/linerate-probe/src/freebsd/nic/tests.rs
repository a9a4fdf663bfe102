use super::*;

fn dump(text: &str) -> SysctlDump {
    SysctlDump::parse(text).unwrap()
}

const PFATT_IX: &str = include_str!("../../../testdata/freebsd/pfatt-67-ix/sysctl-dev-ix-0.txt");
const MFD_X550: &str =
    include_str!("../../../testdata/freebsd/intel-mfd-x550t2/sysctl-dev-ix-1.txt");
const X3550_RX: &str = include_str!(
    "../../../testdata/freebsd/bsdrp-ibm-x3550m3-82599eb/sysctl-dev-ix-0-rx_packets.txt"
);
const X3550_TX: &str = include_str!(
    "../../../testdata/freebsd/bsdrp-ibm-x3550m3-82599eb/sysctl-dev-ix-1-tx_packets.txt"
);
const HP_CXL: &str =
    include_str!("../../../testdata/freebsd/bsdrp-hp-dl360p-gen8-t540/sysctl-dev-cxl-0-stats.txt");
const OPN_IGB: &str =
    include_str!("../../../testdata/freebsd/opnsense-src-329-igb/sysctl-dev-igb-0.txt");

#[test]
fn pfatt_ix_firmware_flow_control_and_mac_counters() {
    let all = nics(&dump(PFATT_IX)).unwrap();
    assert_eq!(all.len(), 1);
    let ix = &all[0];
    assert_eq!(
        (ix.interface.as_str(), ix.driver.as_str(), ix.unit),
        ("ix0", "ix", 0)
    );
    assert_eq!(
        ix.firmware.as_deref(),
        Some("eTrack 0x800003e2 PHY FW V286")
    );
    assert_eq!(ix.flow_control.as_deref(), Some("3"));
    assert_eq!(
        (ix.mac_rx_packets, ix.mac_tx_packets),
        (Some(77), Some(214))
    );
    // The excerpt stops before the queue nodes: the count is unknown, not zero.
    assert!(ix.queues.rx.reason().unwrap().contains("dev.ix.0."));
    assert!(ix.queues.rx_queues.is_empty());
    assert_eq!(ix.description, None);
}

#[test]
fn x550_identity_from_the_percent_nodes() {
    let ix = nic(&dump(MFD_X550), "ix1").unwrap().unwrap();
    assert_eq!(ix.description.as_deref(), Some("Intel(R) X550-T2"));
    assert_eq!(ix.pci_selector.as_deref(), Some("pci0:24:0:1"));
    assert_eq!(ix.pci_id.as_deref(), Some("8086:1563"));
    assert_eq!(ix.parent.as_deref(), Some("pci4"));
    assert_eq!(ix.numa_domain, Some(0));
    assert_eq!(ix.driver_version.as_deref(), Some("4.0.1-k"));
    assert_eq!(
        ix.firmware.as_deref(),
        Some("Option ROM V1-b1767-p0 eTrack 0x80000a42 PHY FW V523")
    );
    assert_eq!(ix.flow_control.as_deref(), Some("0"));
    assert!(nic(&dump(MFD_X550), "ix0").unwrap().is_none());
    assert!(nic(&dump(MFD_X550), "nonsense").unwrap().is_none());
}

#[test]
fn x3550_82599_per_queue_packets_for_watch() {
    let rx = nic(&dump(X3550_RX), "ix0").unwrap().unwrap();
    assert_eq!(rx.queues.rx, Probed::Value(4));
    let packets: Vec<Option<u64>> = rx.queues.rx_queues.iter().map(|q| q.packets).collect();
    assert_eq!(
        packets,
        vec![
            Some(139_301_732),
            Some(140_704_642),
            Some(141_867_655),
            Some(143_762_837)
        ]
    );
    assert_eq!(
        rx.queues
            .rx_queues
            .iter()
            .filter_map(|q| q.packets)
            .sum::<u64>(),
        565_636_866
    );
    assert!(rx.queues.tx.reason().is_some());
    assert!(rx.queues.source.contains("lower bound"));
    let tx = nic(&dump(X3550_TX), "ix1").unwrap().unwrap();
    assert_eq!(tx.queues.tx, Probed::Value(4));
    assert_eq!(tx.queues.tx_queues[1].packets, Some(140_704_643));
    assert_eq!(tx.queues.tx_queues[3].index, 3);
}

#[test]
fn hp_chelsio_buffer_overflow_drops() {
    let cxl = nic(&dump(HP_CXL), "cxl0").unwrap().unwrap();
    assert_eq!(cxl.rx_missed, Some(7_301_719_197));
    // `stats.rx_frames` is past the page's cut: unknown, not zero.
    assert_eq!(cxl.mac_rx_packets, None);
    assert_eq!(nics(&dump(HP_CXL)).unwrap().len(), 1);
}

#[test]
fn opnsense_igb_iflib_queue_nodes() {
    let igb = nic(&dump(OPN_IGB), "igb0").unwrap().unwrap();
    assert_eq!(
        (igb.queues.rx.clone(), igb.queues.tx.clone()),
        (Probed::Value(1), Probed::Value(1))
    );
    assert_eq!(igb.mac_rx_packets, Some(1094));
    assert_eq!(igb.rx_missed, Some(833));
}

#[test]
fn a_dump_with_several_devices_keeps_only_nics() {
    // Constructed from the key names the drivers create (see the module table); not a capture.
    let text = "\
dev.cpu.0.%desc: ACPI CPU
dev.t5nex.0.firmware_version: 1.27.1.0
dev.t5nex.0.%desc: Chelsio T540-CR
dev.cxl.0.%parent: t5nex0
dev.cxl.0.nrxq: 8
dev.cxl.0.ntxq: 16
dev.cxl.0.rxq.0.rxcsum: 12
dev.cxl.0.stats.rx_frames: 100
dev.cxl.0.stats.tx_frames: 90
dev.ixl.0.current_speed: 10 Gbps
dev.ixl.0.pf.rxq00.packets: 5
dev.ixl.0.pf.rxq00.bytes: 300
dev.ixl.0.pf.rxq01.irqs: 7
dev.ixl.0.pf.txq00.packets: 4
dev.igb.1.queue_rx_0.rx_irq: 11
dev.igb.1.queue_tx_0.tx_irq: 12
dev.igb.1.iflib.override_nrxqs: 0
dev.igb.1.iflib.override_ntxqs: 0
dev.foo.0.iflib.rxq0.cpu: 0
";
    let all = nics(&dump(text)).unwrap();
    let names: Vec<&str> = all.iter().map(|n| n.interface.as_str()).collect();
    assert_eq!(names, vec!["cxl0", "foo0", "igb1", "ixl0"]);
    let cxl = &all[0];
    assert_eq!(
        (cxl.queues.rx.clone(), cxl.queues.tx.clone()),
        (Probed::Value(8), Probed::Value(16))
    );
    assert_eq!(cxl.queues.source, "dev.cxl.0.nrxq/ntxq");
    assert_eq!(cxl.firmware.as_deref(), Some("1.27.1.0"));
    assert_eq!(
        (cxl.mac_rx_packets, cxl.mac_tx_packets),
        (Some(100), Some(90))
    );
    let igb = &all[2];
    assert_eq!(igb.queues.rx_queues[0].interrupts, Some(11));
    assert_eq!(igb.queues.tx_queues[0].interrupts, Some(12));
    assert_eq!(igb.queues.iflib_override, Some((0, 0)));
    let ixl = &all[3];
    assert_eq!(ixl.link_speed.as_deref(), Some("10 Gbps"));
    assert_eq!(ixl.queues.rx, Probed::Value(2));
    assert_eq!(ixl.queues.rx_queues[0].bytes, Some(300));
    assert_eq!(ixl.queues.rx_queues[1].interrupts, Some(7));
    assert_eq!(ixl.queues.tx_queues[0].packets, Some(4));
}

#[test]
fn a_non_numeric_counter_is_an_error_with_its_line() {
    let e = nics(&dump("dev.ix.0.fc: 3\ndev.ix.0.queue0.rx_packets: lots\n")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "sysctl output, line 2: dev.ix.0.queue0.rx_packets \"lots\" is not a number"
    );
}

#[test]
fn finds_its_pci_function_in_pciconf() {
    let devices = crate::freebsd::pciconf::parse(include_str!(
        "../../../testdata/freebsd/bsdhw-supermicro-574fd572e67a/pciconf-lvc.txt"
    ))
    .unwrap();
    // No fixture machine has both outputs, so the sysctl side is constructed here with the
    // selector and parent that machine's pciconf shows.
    let text = "dev.cxl.0.%parent: t5nex0\ndev.ix.1.%location: slot=0 function=1 dbsf=pci0:1:0:1\ndev.igb.2.fc: 0\ndev.em.7.fc: 0\n";
    let all = nics(&dump(text)).unwrap();
    let found: Vec<Option<&str>> = all
        .iter()
        .map(|n| n.pci_device(&devices).map(|d| d.name.as_str()))
        .collect();
    // cxl0 → nexus t5nex0, em7 → nothing, igb2 → by name, ix1 → by selector.
    assert_eq!(found, vec![Some("t5nex0"), None, Some("igb2"), Some("ix1")]);
    let t5 = all[0].pci_device(&devices).unwrap();
    assert_eq!(
        t5.pci_info().bottleneck().unwrap().1.to_string(),
        "PCIe gen3 x2"
    );
}
