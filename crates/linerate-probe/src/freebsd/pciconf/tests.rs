use linerate_calc::bus::PcieGen;
use linerate_units::BitRate;

use super::*;

const SM_574FD: &str =
    include_str!("../../../testdata/freebsd/bsdhw-supermicro-574fd572e67a/pciconf-lvc.txt");
const SM_X10SLH: &str =
    include_str!("../../../testdata/freebsd/bsdhw-supermicro-x10slh-cb0cbeb38b08/pciconf-lvc.txt");
const S2600: &str =
    include_str!("../../../testdata/freebsd/bsdhw-intel-s2600wttr-eeb099e74d02/pciconf-lvc.txt");
const M720Q: &str =
    include_str!("../../../testdata/freebsd/bsdhw-lenovo-m720q-c18b8ce60627/pciconf-lvc.txt");
const X3550: &str =
    include_str!("../../../testdata/freebsd/bsdrp-ibm-x3550m3-82599eb/pciconf-lvc.txt");

fn find<'a>(devs: &'a [PciconfDevice], name: &str) -> &'a PciconfDevice {
    devs.iter().find(|d| d.name == name).unwrap()
}

fn link(dev: &PciconfDevice) -> PciconfLink {
    dev.pcie.as_ref().unwrap().link.unwrap()
}

#[test]
fn chelsio_t540_trained_at_two_of_eight_lanes() {
    let devs = parse(SM_574FD).unwrap();
    assert_eq!(devs.len(), 116);
    assert_eq!(devs.iter().filter(|d| d.is_ethernet()).count(), 13);
    let t5 = find(&devs, "t5nex0");
    assert_eq!(t5.selector, "pci0:22:0:4");
    assert_eq!((t5.vendor_id, t5.device_id), (0x1425, 0x5403));
    assert_eq!(
        t5.device.as_deref(),
        Some("T540-CR Unified Wire Ethernet Controller")
    );
    assert_eq!(t5.driver.as_deref(), Some("t5nex"));
    let pcie = t5.pcie.as_ref().unwrap();
    assert_eq!((pcie.version, pcie.port_type.as_str()), (2, "endpoint"));
    let l = link(t5);
    assert_eq!((l.width, l.max_width), (2, 8));
    assert_eq!((l.speed_gts, l.max_speed_gts), (Some(8.0), Some(8.0)));
    assert!(l.degraded());
    let cur = l.current().into_value().unwrap();
    assert_eq!((cur.generation, cur.lanes), (PcieGen::Gen3, 2));
    // Gen3 x2 carries under 16 Gbit/s each way: a quarter of the card's four 10G ports.
    let usable = cur.bus().bandwidth().usable;
    assert!(usable < BitRate::from_gbps(16) && usable > BitRate::from_gbps(15));
    let info = t5.pci_info();
    assert_eq!(info.id.value().map(String::as_str), Some("1425:5403"));
    assert_eq!(info.bottleneck().unwrap().1.to_string(), "PCIe gen3 x2");
    assert_eq!(info.max.value().unwrap().lanes, 8);
    assert!(info.numa_node.reason().unwrap().contains("%domain"));

    let ix0 = find(&devs, "ix0");
    assert_eq!(ix0.device.as_deref(), Some("Ethernet Controller 10G X550T"));
    assert_eq!(
        ix0.pci_info().bottleneck().unwrap().1.to_string(),
        "PCIe gen3 x4"
    );
    assert!(!link(ix0).degraded());
    let igb3 = find(&devs, "igb3");
    assert_eq!(igb3.selector, "pci0:2:0:3");
    assert_eq!(
        link(igb3).current().into_value().unwrap().generation,
        PcieGen::Gen2
    );
    // A root port with nothing behind it.
    let down = find(&devs, "pcib12");
    assert_eq!(down.pcie.as_ref().unwrap().port_type, "root port");
    assert!(link(down).current().reason().unwrap().contains("down"));
    assert_eq!(
        link(down).max().into_value().unwrap().generation,
        PcieGen::Gen4
    );
}

#[test]
fn x710_in_a_gen2_slot() {
    let devs = parse(SM_X10SLH).unwrap();
    assert_eq!(devs.len(), 27);
    let ixl0 = find(&devs, "ixl0");
    assert_eq!(
        ixl0.device.as_deref(),
        Some("Ethernet Controller X710 for 10GbE SFP+")
    );
    assert_eq!((ixl0.vendor_id, ixl0.device_id), (0x8086, 0x1572));
    let l = link(ixl0);
    assert_eq!((l.width, l.max_width), (8, 8));
    assert_eq!((l.speed_gts, l.max_speed_gts), (Some(5.0), Some(8.0)));
    assert!(l.degraded());
    assert_eq!(l.current().into_value().unwrap().generation, PcieGen::Gen2);
    assert_eq!(l.max().into_value().unwrap().generation, PcieGen::Gen3);
    assert_eq!(find(&devs, "ix5").selector, "pci0:6:0:1");
}

#[test]
fn x540_on_fourteen_current() {
    let devs = parse(S2600).unwrap();
    assert_eq!(devs.len(), 176);
    let eth: Vec<&str> = devs
        .iter()
        .filter(|d| d.is_ethernet())
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(eth, vec!["ix0", "ix1"]);
    let ix1 = find(&devs, "ix1");
    assert_eq!(ix1.subdevice_id, 0x35c5);
    assert_eq!(ix1.class_name.as_deref(), Some("network"));
    assert_eq!(ix1.subclass_name.as_deref(), Some("ethernet"));
    let l = link(ix1);
    assert_eq!((l.width, l.speed_gts), (8, Some(5.0)));
    assert!(!l.degraded());
    let none = devs.iter().filter(|d| d.driver.is_none()).count();
    assert!(
        none > 0
            && devs
                .iter()
                .all(|d| d.driver.is_some() || d.name.starts_with("none"))
    );
}

#[test]
fn integrated_em_has_no_pcie_capability() {
    let devs = parse(M720Q).unwrap();
    assert_eq!(devs.len(), 19);
    let em0 = find(&devs, "em0");
    assert_eq!(
        em0.device.as_deref(),
        Some("Ethernet Connection (7) I219-V")
    );
    assert!(em0.pcie.is_none());
    assert!(
        em0.pci_info()
            .current
            .reason()
            .unwrap()
            .contains("no PCI Express")
    );
    let igb0 = find(&devs, "igb0");
    let cur = link(igb0).current().into_value().unwrap();
    assert_eq!((cur.generation, cur.lanes), (PcieGen::Gen2, 4));
    // The ISA bridge's vendor capability wraps onto a tab-indented line.
    assert_eq!(find(&devs, "isab0").class_name.as_deref(), Some("bridge"));
}

#[test]
fn pre_11_format_with_card_chip_and_a_wrapped_link() {
    let devs = parse(X3550).unwrap();
    assert_eq!(devs.len(), 1);
    let ix0 = &devs[0];
    assert_eq!(ix0.selector, "pci0:21:0:0");
    assert_eq!((ix0.vendor_id, ix0.device_id), (0x8086, 0x10fb));
    assert_eq!((ix0.subvendor_id, ix0.subdevice_id), (0x8086, 0x0003));
    assert_eq!(ix0.revision, 1);
    let l = link(ix0);
    assert_eq!((l.width, l.max_width, l.speed_gts), (8, 8, Some(5.0)));
    assert_eq!(ix0.pcie.as_ref().unwrap().port_type, "endpoint");
}

#[test]
fn errors_point_at_the_line() {
    let e = parse("    vendor = 'x'\n").unwrap_err();
    assert!(matches!(e, ParseError::Malformed { line: 1, .. }), "{e}");
    let e = parse("ix0@pci0:1:0:0:\tclass=0x020000 vendor=0xzz device=0x1\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "pciconf output, line 1: vendor \"0xzz\" is not a number"
    );
    let e = parse("ix0@pci0:1:0:0:\tclass=0x020000 vendor=0x8086 device=0x1\n    cap 10[a0] = PCI-Express 2 endpoint\n                 link x8(x8) speed fast\n").unwrap_err();
    assert_eq!(e.line(), 2);
    let e = parse("ix0@pci0:1:0:0:\tclass=0x020000 rev=0x01\n").unwrap_err();
    assert!(e.to_string().contains("vendor="), "{e}");
    let e = parse("ix0@pci0:1:0:0:\tclass=0x020000 vendor=0x8086 device=0x1\n    what is this\n")
        .unwrap_err();
    assert_eq!(e.line(), 2);
    // FreeBSD 8 printed the width only: the link is kept, its speed is unknown.
    let devs =
        parse("ix0@pci0:1:0:0:\tclass=0x020000 vendor=0x8086 device=0x1\n    cap 10[a0] = PCI-Express 2 endpoint max data 128(256) link x4(x8)\n")
            .unwrap();
    let l = link(&devs[0]);
    assert_eq!((l.width, l.speed_gts), (4, None));
    assert!(l.current().reason().unwrap().contains("no speed"));
    assert!(parse("").unwrap().is_empty());
}
