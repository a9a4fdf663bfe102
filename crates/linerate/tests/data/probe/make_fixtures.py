#!/usr/bin/env python3
"""Writes the captured-host fixture trees used by tests/probe*.rs and tests/nic*.rs.

Each tree is `<name>/sys`, `<name>/proc` and `<name>/ethtool/<iface>.json`, laid out as the
kernel documents them (Documentation/ABI/testing/sysfs-class-net, sysfs-bus-pci,
sysfs-devices-system-cpu, proc(5)), with values typical of the driver family:

  ixgbe   dual-port 82599 10G card trained at PCIe gen2 x1 in an x8-capable card (the bus
          verdict of the issue), a forwarding router with SMT on, powersave, LRO on, short
          rings, 2 queues on 4 cores all IRQs on CPU 0, softnet drops, MTU mismatch
  i40e    XL710 40G at gen3 x8, tuned: nothing to report but GRO/TSO info
  igb     quad-port i350 1G at gen2 x4 (old softnet layout without the CPU column)
  mlx5    dual-port ConnectX-5 100G at gen3 x16: 126 Gbit/s < 2 x 100 Gbit/s
  virtio  this kind of VM: virtio_net below a PCI function without PCIe link files
  veth    a veth pair: virtual, no bus, no rings

Run from this directory: `python3 make_fixtures.py` (it replaces the trees).
"""

import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text if text.endswith("\n") else text + "\n")


def link(path, target):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.symlink(target, path)


def known(v):
    return {"value": v}


def unknown(r):
    return {"unknown": r}


def features(tso=True, gso=True, gro=True, lro=False, lro_fixed=True, rxcsum=True, txcsum=True,
             sg=True):
    def f(active, changeable=True):
        return {"active": active, "changeable": changeable}
    return {
        "tx-tcp-segmentation": f(tso),
        "tx-tcp6-segmentation": f(tso),
        "tx-generic-segmentation": f(gso),
        "rx-gro": f(gro),
        "rx-lro": f(lro, not lro_fixed),
        "rx-checksum": f(rxcsum),
        "tx-checksum-ip-generic": f(txcsum),
        "tx-scatter-gather": f(sg),
    }


class Host:
    def __init__(self, name, cpus, threads_per_core=1, smt_control="notsupported",
                 governor=None, forwarding=False, kernel="6.8.0-45-generic",
                 model="Intel(R) Xeon(R) CPU E5-2650 v2 @ 2.60GHz", mem_kib=32_795_764,
                 softnet_new_layout=True, softnet=None, nodes="0"):
        self.root = os.path.join(HERE, name)
        shutil.rmtree(self.root, ignore_errors=True)
        self.sys = os.path.join(self.root, "sys")
        self.proc = os.path.join(self.root, "proc")
        self.cpus = cpus
        self.irq_lines = []
        sysw = lambda rel, text: write(os.path.join(self.sys, rel), text)
        procw = lambda rel, text: write(os.path.join(self.proc, rel), text)
        self.sysw, self.procw = sysw, procw
        sysw("devices/system/cpu/online", f"0-{cpus - 1}")
        cores = cpus // threads_per_core
        for c in range(cpus):
            sysw(f"devices/system/cpu/cpu{c}/topology/core_id", str(c % cores))
            sysw(f"devices/system/cpu/cpu{c}/topology/physical_package_id", "0")
            if governor:
                sysw(f"devices/system/cpu/cpu{c}/cpufreq/scaling_governor", governor)
                sysw(f"devices/system/cpu/cpufreq/policy{c}/scaling_governor", governor)
        sysw("devices/system/cpu/smt/control", smt_control)
        sysw("devices/system/cpu/smt/active", "1" if threads_per_core > 1 else "0")
        sysw("devices/system/node/online", nodes)
        os.makedirs(os.path.join(self.sys, "class/net"), exist_ok=True)
        procw("sys/kernel/ostype", "Linux")
        procw("sys/kernel/osrelease", kernel)
        procw("sys/kernel/hostname", name + "-host")
        procw("sys/net/ipv4/ip_forward", "1" if forwarding else "0")
        procw("sys/net/ipv6/conf/all/forwarding", "0")
        procw("sys/net/core/netdev_max_backlog", "1000")
        procw("sys/net/core/netdev_budget", "300")
        procw("sys/net/core/netdev_budget_usecs", "2000")
        procw("meminfo", f"MemTotal:       {mem_kib} kB\nMemFree:        1000000 kB\n")
        procw("cpuinfo", "".join(
            f"processor\t: {c}\nvendor_id\t: GenuineIntel\nmodel name\t: {model}\n\n"
            for c in range(cpus)))
        rows = []
        for c in range(cpus):
            processed, dropped, squeeze = (softnet or {}).get(c, (100_000 + c, 0, 0))
            words = [processed, dropped, squeeze] + [0] * 6 + [0, 0]
            if softnet_new_layout:
                words += [0, c]
            rows.append(" ".join(f"{w:08x}" for w in words))
        procw("net/softnet_stat", "\n".join(rows))

    def irq(self, number, name, cpu, counts=None, chip="IR-PCI-MSI", hw="524288-edge"):
        counts = counts or [0] * self.cpus
        self.irq_lines.append((number, counts, chip, hw, name))
        self.procw(f"irq/{number}/smp_affinity_list", str(cpu))
        self.procw(f"irq/{number}/effective_affinity_list", str(cpu))

    def pci_function(self, path, vendor, device, driver, cur, maxl, numa="0", irqs=()):
        d = os.path.join(self.sys, "devices", path)
        sysw = lambda rel, text: write(os.path.join(d, rel), text)
        sysw("vendor", vendor)
        sysw("device", device)
        sysw("class", "0x020000")
        sysw("numa_node", numa)
        if cur:
            sysw("current_link_speed", cur[0])
            sysw("current_link_width", str(cur[1]))
        if maxl:
            sysw("max_link_speed", maxl[0])
            sysw("max_link_width", str(maxl[1]))
        depth = path.count("/") + 1
        up = "../" * (depth + 1)
        link(os.path.join(d, "subsystem"), up + "bus/pci")
        link(os.path.join(d, "driver"), up + f"bus/pci/drivers/{driver}")
        os.makedirs(os.path.join(self.sys, f"bus/pci/drivers/{driver}"), exist_ok=True)
        for n in irqs:
            sysw(f"msi_irqs/{n}", "msix")
        return d

    def bridge(self, path, cur):
        d = os.path.join(self.sys, "devices", path)
        write(os.path.join(d, "current_link_speed"), cur[0])
        write(os.path.join(d, "current_link_width"), str(cur[1]))

    def netdev(self, devdir, name, ifindex, speed, mtu=1500, rxq=1, txq=1, operstate="up",
               carrier=True, duplex="full", mac="00:1b:21:00:00:01", ethtool=None,
               counters=None, dev_type=1, uevent_extra=""):
        net = os.path.join(devdir, "net", name)
        w = lambda rel, text: write(os.path.join(net, rel), text)
        w("address", mac)
        w("mtu", str(mtu))
        w("operstate", operstate)
        w("carrier", "1" if carrier else "0")
        if speed is not None:
            w("speed", str(speed))
            w("duplex", duplex)
        w("ifindex", str(ifindex))
        w("type", str(dev_type))
        w("tx_queue_len", "1000")
        w("uevent", f"INTERFACE={name}\nIFINDEX={ifindex}\n{uevent_extra}")
        c = {"rx_packets": 0, "tx_packets": 0, "rx_bytes": 0, "tx_bytes": 0, "rx_errors": 0,
             "tx_errors": 0, "rx_dropped": 0, "tx_dropped": 0, "rx_missed_errors": 0,
             "rx_fifo_errors": 0}
        c.update(counters or {})
        for k, v in c.items():
            w(f"statistics/{k}", str(v))
        for q in range(rxq):
            w(f"queues/rx-{q}/rps_cpus", "0")
        for q in range(txq):
            w(f"queues/tx-{q}/xps_cpus", "0")
        if not devdir.endswith("virtual/net"):
            link(os.path.join(net, "device"), "../..")
        rel = os.path.relpath(net, os.path.join(self.sys, "class/net"))
        link(os.path.join(self.sys, "class/net", name), rel)
        if ethtool is not None:
            write(os.path.join(self.root, "ethtool", f"{name}.json"), json.dumps(ethtool, indent=1))

    def finish(self):
        header = "".join(f"       CPU{c}" for c in range(self.cpus))
        lines = [header]
        for number, counts, chip, hw, name in sorted(self.irq_lines):
            cols = "".join(f" {n:10d}" for n in counts)
            lines.append(f"{number:4d}:{cols}  {chip} {hw}      {name}")
        lines.append(" NMI:" + "".join(f" {0:10d}" for _ in range(self.cpus)) +
                     "   Non-maskable interrupts")
        self.procw("interrupts", "\n".join(lines))


def ethtool_info(driver, version, bus, rings, channels, coalesce, feats, stats, indir=None,
                 fw=""):
    return {
        "driver": known({"driver": driver, "version": version, "firmware": fw,
                         "bus_info": bus}),
        "rings": known(rings) if isinstance(rings, dict) else unknown(rings),
        "channels": known(channels) if isinstance(channels, dict) else unknown(channels),
        "coalesce": known(coalesce) if isinstance(coalesce, dict) else unknown(coalesce),
        "features": known(feats),
        "rss_indirection": known(indir) if indir is not None else unknown(
            "the driver does not report the RSS indirection table (EOPNOTSUPP)"),
        "stats": known(stats),
    }


def chans(combined, max_combined, rx=0, tx=0, max_rx=0, max_tx=0, other=0, max_other=0):
    return {"rx": rx, "tx": tx, "other": other, "combined": combined, "max_rx": max_rx,
            "max_tx": max_tx, "max_other": max_other, "max_combined": max_combined}


def coal(rx_usecs, rx_frames, tx_usecs, tx_frames, arx=False, atx=False):
    return {"rx_usecs": rx_usecs, "rx_frames": rx_frames, "tx_usecs": tx_usecs,
            "tx_frames": tx_frames, "adaptive_rx": arx, "adaptive_tx": atx}


def queue_stats(fmt, queues, packets=1000):
    s = {}
    for q in range(queues):
        for d in ("rx", "tx"):
            s[fmt.format(d=d, q=q, c="packets")] = packets * (q + 1)
            s[fmt.format(d=d, q=q, c="bytes")] = packets * (q + 1) * 100
    return s


def ixgbe():
    h = Host("ixgbe", cpus=8, threads_per_core=2, smt_control="on", governor="powersave",
             forwarding=True, softnet={0: (9_000_000, 1234, 77)})
    h.bridge("pci0000:00/0000:00:1c.0", ("5.0 GT/s PCIe", 1))
    for fn, name, idx, mtu, irqbase in ((0, "eth2", 4, 9000, 60), (1, "eth3", 5, 1500, 70)):
        d = h.pci_function(f"pci0000:00/0000:00:1c.0/0000:03:00.{fn}", "0x8086", "0x10fb",
                           "ixgbe", ("5.0 GT/s PCIe", 1), ("5.0 GT/s PCIe", 8),
                           irqs=(irqbase, irqbase + 1, irqbase + 2))
        for q in range(2):
            counts = [50_000 if c == 0 else 0 for c in range(8)]
            h.irq(irqbase + q, f"{name}-TxRx-{q}", 0, counts)
        h.irq(irqbase + 2, name, 0)
        h.netdev(d, name, idx, 10000, mtu=mtu, rxq=2, txq=2, mac=f"90:e2:ba:00:00:0{fn}",
                 ethtool=ethtool_info(
                     "ixgbe", "6.8.0-45-generic", f"0000:03:00.{fn}",
                     {"rx": 512, "rx_max": 4096, "tx": 512, "tx_max": 4096},
                     chans(2, 63, max_other=1, other=1), coal(1, 0, 0, 0),
                     features(lro=True, lro_fixed=False),
                     queue_stats("{d}_queue_{q}_{c}", 2), indir=[0, 1] * 64,
                     fw="0x800005d0"),
                 counters={"rx_packets": 123456, "rx_missed_errors": 42})
    lo(h)
    h.finish()


def i40e():
    h = Host("i40e", cpus=8, smt_control="off", governor="performance",
             model="Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz")
    h.bridge("pci0000:3a/0000:3a:00.0", ("8.0 GT/s PCIe", 8))
    d = h.pci_function("pci0000:3a/0000:3a:00.0/0000:3b:00.0", "0x8086", "0x1583", "i40e",
                       ("8.0 GT/s PCIe", 8), ("8.0 GT/s PCIe", 8), irqs=range(100, 109))
    h.irq(100, "i40e-0000:3b:00.0:misc", 0)
    for q in range(8):
        h.irq(101 + q, f"i40e-ens1f0-TxRx-{q}", q)
    h.netdev(d, "ens1f0", 3, 40000, rxq=8, txq=8, mac="3c:fd:fe:00:00:01",
             ethtool=ethtool_info(
                 "i40e", "6.8.0-45-generic", "0000:3b:00.0",
                 {"rx": 4096, "rx_max": 4096, "tx": 4096, "tx_max": 4096},
                 chans(8, 8, max_other=1, other=1), coal(50, 0, 50, 0, True, True),
                 features(tso=False, lro=False), queue_stats("{d}-{q}.{d}_{c}", 8),
                 indir=list(range(8)) * 64))
    lo(h)
    h.finish()


def igb():
    h = Host("igb", cpus=4, governor="ondemand", model="Intel(R) Atom(TM) CPU C2558 @ 2.40GHz",
             kernel="4.19.0-27-amd64", softnet_new_layout=False, mem_kib=8_000_000)
    h.bridge("pci0000:00/0000:00:01.0", ("5 GT/s", 4))
    for fn in range(4):
        name = f"eth{fn}"
        base = 40 + fn * 5
        d = h.pci_function(f"pci0000:00/0000:00:01.0/0000:01:00.{fn}", "0x8086", "0x1521",
                           "igb", ("5 GT/s", 4), ("5 GT/s", 4), numa="-1",
                           irqs=range(base, base + 5))
        h.irq(base, name, 0)
        for q in range(4):
            h.irq(base + 1 + q, f"{name}-TxRx-{q}", q)
        up = fn < 2
        h.netdev(d, name, 2 + fn, 1000 if up else -1, rxq=4, txq=4, operstate="up" if up else "down",
                 carrier=up, duplex="full" if up else "unknown", mac=f"00:08:a2:00:00:0{fn}",
                 ethtool=ethtool_info(
                     "igb", "5.6.0-k", f"0000:01:00.{fn}",
                     {"rx": 256, "rx_max": 4096, "tx": 256, "tx_max": 4096},
                     chans(4, 4, max_other=1, other=1), coal(3, 0, 0, 0),
                     features(), queue_stats("{d}_queue_{q}_{c}", 4), indir=[0, 1, 2, 3] * 32,
                     fw="1.63, 0x800009fa"))
    lo(h)
    h.finish()


def mlx5():
    h = Host("mlx5", cpus=16, governor="performance", smt_control="off",
             model="AMD EPYC 7302P 16-Core Processor", nodes="0-1")
    h.bridge("pci0000:5d/0000:5d:00.0", ("8.0 GT/s PCIe", 16))
    for fn, name in ((0, "enp94s0f0np0"), (1, "enp94s0f1np1")):
        base = 200 + fn * 20
        d = h.pci_function(f"pci0000:5d/0000:5d:00.0/0000:5e:00.{fn}", "0x15b3", "0x1017",
                           "mlx5_core", ("8.0 GT/s PCIe", 16), ("8.0 GT/s PCIe", 16), numa="1",
                           irqs=range(base, base + 17))
        h.irq(base, f"mlx5_async0@pci:0000:5e:00.{fn}", 0)
        for q in range(16):
            h.irq(base + 1 + q, f"mlx5_comp{q}@pci:0000:5e:00.{fn}", q)
        h.netdev(d, name, 6 + fn, 100000, rxq=16, txq=16, mac=f"b8:ce:f6:00:00:0{fn}",
                 ethtool=ethtool_info(
                     "mlx5_core", "6.8.0-45-generic", f"0000:5e:00.{fn}",
                     {"rx": 1024, "rx_max": 8192, "tx": 1024, "tx_max": 8192},
                     chans(16, 16), coal(8, 128, 8, 128, True, False), features(),
                     queue_stats("{d}{q}_{c}", 16), indir=list(range(16)) * 16,
                     fw="16.35.2000 (MT_0000000012)"))
    lo(h)
    h.finish()


def virtio():
    h = Host("virtio", cpus=2, model="AMD EPYC", kernel="6.18.44")
    d = h.pci_function("pci0000:00/0000:00:03.0", "0x1af4", "0x1041", "virtio-pci", None, None,
                       numa="-1", irqs=(37, 38, 39))
    vdev = os.path.join(d, "virtio2")
    write(os.path.join(vdev, "vendor"), "0x1af4")
    link(os.path.join(vdev, "subsystem"), "../../../../bus/virtio")
    link(os.path.join(vdev, "driver"), "../../../../bus/virtio/drivers/virtio_net")
    os.makedirs(os.path.join(h.sys, "bus/virtio/drivers/virtio_net"), exist_ok=True)
    h.irq(37, "virtio2-config", 0, chip="PCI-MSIX-0000:00:03.0", hw="0-edge")
    h.irq(38, "virtio2-input.0", 1, [0, 3529], chip="PCI-MSIX-0000:00:03.0", hw="1-edge")
    h.irq(39, "virtio2-output.0", 0, [2661, 0], chip="PCI-MSIX-0000:00:03.0", hw="2-edge")
    h.netdev(vdev, "eth0", 4, -1, mtu=1400, duplex="unknown", mac="02:fc:00:00:00:01",
             ethtool=ethtool_info(
                 "virtio_net", "1.0.0", "0000:00:03.0",
                 {"rx": 256, "rx_max": 256, "tx": 256, "tx_max": 256}, chans(1, 1),
                 coal(0, 1, 0, 1), features(lro=False),
                 {"rx_drops": 0, "rx_kicks": 1713, "rx0_drops": 0, "tx0_kicks": 6075}))
    lo(h)
    h.finish()


def veth():
    h = Host("veth", cpus=2, model="AMD EPYC", forwarding=True)
    vnet = os.path.join(h.sys, "devices/virtual/net")
    for idx, (name, peer, mtu) in enumerate((("veth0", "veth1", 1500), ("veth1", "veth0", 1400))):
        h.netdev(vnet, name, 10 + idx, 10000, mtu=mtu, mac=f"ae:00:00:00:00:0{idx}",
                 ethtool=ethtool_info(
                     "veth", "1.0", "", "the driver does not report ring sizes (EOPNOTSUPP)",
                     chans(0, 0, rx=1, tx=1, max_rx=2, max_tx=2),
                     "the driver does not report interrupt coalescing (EOPNOTSUPP)",
                     features(gro=False), {"peer_ifindex": 11 - idx,
                                           "rx_queue_0_xdp_packets": 0}))
    lo(h)
    h.finish()


def lo(h):
    vnet = os.path.join(h.sys, "devices/virtual/net")
    h.netdev(vnet, "lo", 1, None, mtu=65536, mac="00:00:00:00:00:00", operstate="unknown",
             duplex="unknown", dev_type=772,
             ethtool={
                 "driver": unknown("the driver does not report driver info (EOPNOTSUPP)"),
                 "rings": unknown("the driver does not report ring sizes (EOPNOTSUPP)"),
                 "channels": unknown("the driver does not report channel counts (EOPNOTSUPP)"),
                 "coalesce": unknown("the driver does not report interrupt coalescing (EOPNOTSUPP)"),
                 "features": known(features(lro=False)),
                 "rss_indirection": unknown("the driver does not report the RSS indirection "
                                            "table (EOPNOTSUPP)"),
                 "stats": unknown("the driver does not report driver statistics (EOPNOTSUPP)"),
             })


if __name__ == "__main__":
    for make in (ixgbe, i40e, igb, mlx5, virtio, veth):
        make()
