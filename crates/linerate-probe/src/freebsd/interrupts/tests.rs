use super::*;

fn parse(text: &str) -> VmstatInterrupts {
    VmstatInterrupts::parse(text).unwrap()
}

const EPYC: &str = include_str!("../../../testdata/freebsd/ocochard-epyc7502p-igb/vmstat-i.txt");
const HP_T540: &str =
    include_str!("../../../testdata/freebsd/bsdrp-hp-dl360p-gen8-t540/vmstat-i.txt");
const DRM_68: &str = include_str!("../../../testdata/freebsd/drmkmod-68-igb-em/vmstat-i.txt");
const MFD_IXL: &str = include_str!("../../../testdata/freebsd/intel-mfd-ixl/vmstat-i.txt");

#[test]
fn epyc_igb_iflib_queues_and_the_total() {
    let v = parse(EPYC);
    assert_eq!(v.lines.len(), 138);
    assert_eq!(v.total, Some((2_035_521_526, 2910)));
    assert_eq!(v.sum(), 2_035_521_526);
    let timers = v
        .lines
        .iter()
        .filter(|l| matches!(&l.source, InterruptSource::Cpu { what, .. } if what == "timer"))
        .count();
    assert_eq!(timers, 64);
    let rx = v.receive_vectors("igb0");
    let totals: Vec<u64> = rx.iter().map(|l| l.total).collect();
    assert_eq!(totals, vec![8_981_148, 2_330_775, 5_936_007, 4_836_605]);
    assert_eq!(
        rx.iter()
            .map(|l| l.queue.as_ref().unwrap().index)
            .collect::<Vec<_>>(),
        vec![Some(0), Some(1), Some(2), Some(3)]
    );
    assert_eq!(rx[0].source, InterruptSource::Irq { irq: 273 });
    let aq: Vec<_> = v
        .device("igb0")
        .filter(|l| l.vector.as_deref() == Some("aq"))
        .collect();
    assert_eq!(aq.len(), 1);
    assert_eq!(aq[0].queue.as_ref().unwrap().role, QueueRole::Control);
    assert_eq!(aq[0].total, 4);
    // nvme I/O queues are queues, but not network ones.
    assert_eq!(v.device("nvme1").count(), 33);
    assert!(v.receive_vectors("nvme1").is_empty());
    let uart = v.device("uart0").next().unwrap();
    assert_eq!((uart.total, uart.rate, uart.line), (4, 0, 2));
}

#[test]
fn hp_chelsio_t540_vectors_by_port_and_old_igb_names() {
    let v = parse(HP_T540);
    assert_eq!(v.lines.len(), 38);
    assert_eq!(v.total, Some((11_978_149, 9318)));
    assert_eq!(v.sum(), 11_978_149);
    let rx = v.receive_vectors("t5nex0");
    assert_eq!(rx.len(), 16);
    let port0: Vec<u64> = rx
        .iter()
        .filter(|l| l.queue.as_ref().unwrap().port == Some(0))
        .map(|l| l.total)
        .collect();
    assert_eq!(
        port0,
        vec![
            608_689, 281_882, 875_179, 813_033, 968_845, 1_099_491, 58_210, 638_755
        ]
    );
    let last = rx.last().unwrap();
    assert_eq!(last.name, "irq301: t5nex0:1a7");
    assert_eq!(
        last.queue,
        Some(QueueRef {
            role: QueueRole::Rx,
            index: Some(7),
            port: Some(1)
        })
    );
    let evt = v.device("t5nex0").next().unwrap();
    assert_eq!(evt.queue.as_ref().unwrap().role, QueueRole::Control);
    // Pre-iflib igb: one vector per queue pair, named with a space.
    let igb = v.receive_vectors("igb1");
    assert_eq!(igb.len(), 8);
    assert_eq!(igb[5].vector.as_deref(), Some("que 5"));
    assert_eq!(igb[5].queue.as_ref().unwrap().role, QueueRole::RxTx);
    assert_eq!((igb[5].total, igb[5].rate), (2435, 2));
}

#[test]
fn drm_kmod_68_igb_and_ixl_excerpts() {
    let v = parse(DRM_68);
    assert_eq!(v.lines.len(), 25);
    assert_eq!(v.total, None);
    assert_eq!(v.receive_vectors("igb0").len(), 4);
    assert_eq!(
        v.device("igb0").map(|l| l.total).sum::<u64>(),
        34 + 6 + 7 + 4 + 2
    );
    let ixl = parse(MFD_IXL);
    let rx = ixl.receive_vectors("ixl0");
    assert_eq!(rx.len(), 8);
    assert_eq!(rx[2].total, 3_375_400);
    assert_eq!(rx[2].rate, 10);
    assert_eq!(ixl.sum(), 19_930_146);
}

#[test]
fn shared_irqs_and_legacy_queue_names() {
    let v = parse(
        "irq16: uhci0 ehci0+                 10          0\nirq264: ix1:q0  5  1\nirq265: ix1:que1  5  1\n",
    );
    assert!(v.lines[0].shared);
    assert_eq!(v.lines[0].device.as_deref(), Some("uhci0"));
    assert_eq!(v.receive_vectors("ix1").len(), 2);
}

#[test]
fn stray_counters_and_other_controllers() {
    let v = parse(
        "stray irq7                             0          0\ngic0,s27: ix0:rxq0      42          1\n",
    );
    assert_eq!(v.lines[0].source, InterruptSource::Stray { irq: 7 });
    assert_eq!(
        v.lines[1].source,
        InterruptSource::Other {
            controller: "gic0,s27".into()
        }
    );
    assert_eq!(v.receive_vectors("ix0").len(), 1);
}

#[test]
fn malformed_lines_name_their_line() {
    let e = VmstatInterrupts::parse("interrupt total rate\nirq1: atkbd0  12x  0\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "vmstat -i output, line 2: total \"12x\" is not a number"
    );
    let e = VmstatInterrupts::parse("irq149: em0:irq0\n").unwrap_err();
    assert!(matches!(e, ParseError::Malformed { line: 1, .. }), "{e}");
    let e = VmstatInterrupts::parse("12 34 56\n").unwrap_err();
    assert!(matches!(e, ParseError::Malformed { line: 1, .. }), "{e}");
    let e = VmstatInterrupts::parse("irqX: em0 1 2\n").unwrap_err();
    assert_eq!(e.line(), 1);
}
