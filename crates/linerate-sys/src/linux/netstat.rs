//! The calling thread's network namespace's drop counters, read from procfs: UDP's (IPv4
//! `Udp:` lines of `/proc/net/snmp` plus IPv6's `Udp6*` of `/proc/net/snmp6`: datagrams in
//! and out, `RcvbufErrors` for a full receive buffer, `SndbufErrors` for a full send buffer)
//! and each interface's (`/proc/net/dev`: packets, drops, FIFO overruns).
//!
//! Read through `/proc/thread-self/net`, so a thread that entered a namespace reads that
//! namespace's, not its process's. Counters are namespace-wide: every socket of the
//! namespace adds to them.

use std::io;

/// UDP's counters of one namespace, IPv4 and IPv6 summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UdpSnmp {
    /// Datagrams delivered to sockets (`InDatagrams`).
    pub in_datagrams: u64,
    /// Datagrams sent (`OutDatagrams`).
    pub out_datagrams: u64,
    /// Datagrams that could not be delivered (`InErrors`; overflows included).
    pub in_errors: u64,
    /// Datagrams dropped because the receiving socket's buffer was full (`RcvbufErrors`).
    pub rcvbuf_errors: u64,
    /// Datagrams not sent because the sending socket's buffer was full (`SndbufErrors`).
    pub sndbuf_errors: u64,
}

/// One interface's counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetDev {
    /// Interface name.
    pub name: String,
    /// Packets received.
    pub rx_packets: u64,
    /// Received packets dropped (no buffer, queue full, filtered).
    pub rx_dropped: u64,
    /// Receive FIFO (ring) overruns.
    pub rx_fifo: u64,
    /// Packets sent.
    pub tx_packets: u64,
    /// Packets dropped on transmit.
    pub tx_dropped: u64,
    /// Transmit FIFO errors.
    pub tx_fifo: u64,
}

/// This thread's namespace's UDP counters.
pub fn udp() -> io::Result<UdpSnmp> {
    let v4 = std::fs::read_to_string("/proc/thread-self/net/snmp")?;
    let mut c = parse_snmp(&v4)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no Udp: lines in snmp"))?;
    // No IPv6 in the kernel: no file, nothing to add.
    if let Ok(v6) = std::fs::read_to_string("/proc/thread-self/net/snmp6") {
        let s = parse_snmp6(&v6);
        c.in_datagrams += s.in_datagrams;
        c.out_datagrams += s.out_datagrams;
        c.in_errors += s.in_errors;
        c.rcvbuf_errors += s.rcvbuf_errors;
        c.sndbuf_errors += s.sndbuf_errors;
    }
    Ok(c)
}

/// This thread's namespace's interfaces.
pub fn interfaces() -> io::Result<Vec<NetDev>> {
    let text = std::fs::read_to_string("/proc/thread-self/net/dev")?;
    Ok(parse_netdev(&text))
}

fn set(c: &mut UdpSnmp, name: &str, value: u64) {
    match name {
        "InDatagrams" => c.in_datagrams = value,
        "OutDatagrams" => c.out_datagrams = value,
        "InErrors" => c.in_errors = value,
        "RcvbufErrors" => c.rcvbuf_errors = value,
        "SndbufErrors" => c.sndbuf_errors = value,
        _ => {}
    }
}

/// The `Udp:` header and value lines of `/proc/net/snmp` text; `None` without them.
pub fn parse_snmp(text: &str) -> Option<UdpSnmp> {
    let mut lines = text.lines().filter(|l| l.starts_with("Udp: "));
    let names = lines.next()?;
    let values = lines.next()?;
    let mut c = UdpSnmp::default();
    for (n, v) in names
        .split_whitespace()
        .zip(values.split_whitespace())
        .skip(1)
    {
        set(&mut c, n, v.parse().ok()?);
    }
    Some(c)
}

/// The `Udp6*` lines of `/proc/net/snmp6` text (`Udp6RcvbufErrors 12`).
pub fn parse_snmp6(text: &str) -> UdpSnmp {
    let mut c = UdpSnmp::default();
    for l in text.lines() {
        let mut f = l.split_whitespace();
        if let (Some(n), Some(Ok(v))) = (f.next(), f.next().map(str::parse)) {
            if let Some(n) = n.strip_prefix("Udp6") {
                set(&mut c, n, v);
            }
        }
    }
    c
}

/// The interfaces of `/proc/net/dev` text; lines that do not read are skipped.
pub fn parse_netdev(text: &str) -> Vec<NetDev> {
    text.lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            let f: Vec<u64> = rest
                .split_whitespace()
                .map(str::parse)
                .collect::<Result<_, _>>()
                .ok()?;
            // rx: bytes packets errs drop fifo frame compressed multicast; tx: bytes packets
            // errs drop fifo colls carrier compressed.
            (f.len() >= 16).then(|| NetDev {
                name: name.trim().to_owned(),
                rx_packets: f[1],
                rx_dropped: f[3],
                rx_fifo: f[4],
                tx_packets: f[9],
                tx_dropped: f[11],
                tx_fifo: f[12],
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snmp_udp_lines_read_by_name() {
        let t = "Ip: Forwarding DefaultTTL\nIp: 1 64\n\
                 Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors \
                 InCsumErrors IgnoredMulti MemErrors\n\
                 Udp: 100 4 30 200 25 7 0 0 0\n\
                 UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\n\
                 UdpLite: 9 9 9 9 9 9\n";
        assert_eq!(
            parse_snmp(t),
            Some(UdpSnmp {
                in_datagrams: 100,
                out_datagrams: 200,
                in_errors: 30,
                rcvbuf_errors: 25,
                sndbuf_errors: 7
            })
        );
        assert_eq!(parse_snmp("Ip: 1 2\n"), None);
        assert_eq!(parse_snmp("Udp: InDatagrams\nUdp: many\n"), None);
        let six = parse_snmp6("Udp6InDatagrams  \t 5\nUdp6RcvbufErrors 2\nUdpLite6InErrors 9\n");
        assert_eq!(
            (six.in_datagrams, six.rcvbuf_errors, six.in_errors),
            (5, 2, 0)
        );
    }

    #[test]
    fn netdev_lines_read_by_position() {
        let t = "Inter-|   Receive |  Transmit\n face |bytes packets errs drop fifo …\n\
                 \x20   lo: 10 1 0 2 3 0 0 0 20 4 0 5 6 0 0 0\n\
                 veth0: 1 2 3\n";
        assert_eq!(
            parse_netdev(t),
            [NetDev {
                name: "lo".to_owned(),
                rx_packets: 1,
                rx_dropped: 2,
                rx_fifo: 3,
                tx_packets: 4,
                tx_dropped: 5,
                tx_fifo: 6
            }]
        );
    }

    #[test]
    fn this_namespace_reads() {
        let c = udp().unwrap();
        assert!(c.rcvbuf_errors <= c.in_errors, "{c:?}");
        assert!(interfaces().unwrap().iter().any(|d| d.name == "lo"));
    }
}
