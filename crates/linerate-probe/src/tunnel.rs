//! What a tunnel daemon showed: the socket buffers OpenVPN asked for and got (its log's
//! `Socket Buffers: R=[a->b] S=[c->d]` line), the tun device's TX queue length (`TUN/TAP TX
//! queue length set to N`), and the tun device's TX counters from `/proc/PID/net/dev` (the
//! view of the daemon's network namespace). The lab reads its tunnel with these after the
//! load and stores the [`TunnelObservation`]; `audit --role vpn` (`linerate-tuning`'s vpn rules)
//! judges the host's settings against the same type read back from the store.

use std::path::Path;

/// Socket buffer sizes of the daemon's UDP/TCP socket: before it set them and after (what the
/// kernel granted: it doubles the request and caps it at `net.core.rmem_max`/`wmem_max`
/// unless the daemon may force it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SocketBuffers {
    /// SO_RCVBUF before.
    pub rcv_before: u64,
    /// SO_RCVBUF after.
    pub rcv_after: u64,
    /// SO_SNDBUF before.
    pub snd_before: u64,
    /// SO_SNDBUF after.
    pub snd_after: u64,
}

/// What a tunnel showed during a run.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TunnelObservation {
    /// The daemon's socket buffers, when its log says.
    pub socket_buffers: Option<SocketBuffers>,
    /// `--sndbuf` asked for.
    pub sndbuf_requested: Option<u32>,
    /// `--rcvbuf` asked for.
    pub rcvbuf_requested: Option<u32>,
    /// The tun device's TX queue length, when the daemon set it (its log says).
    pub txqueuelen: Option<u32>,
    /// Packets the tun device sent (to the daemon) during the lab's life.
    pub tx_packets: Option<u64>,
    /// Packets the tun device dropped on transmit: its queue to the daemon was full.
    pub tx_dropped: Option<u64>,
    /// The encapsulation `calc tunnel` was asked about (`openvpn-udp`, `wireguard`).
    pub encap: Option<String>,
    /// `calc tunnel`'s inner MTU that fits the smallest link MTU without fragmenting.
    pub predicted_inner_mtu: Option<u64>,
    /// `calc tunnel`'s TCP MSS for that inner MTU (what to clamp to).
    pub predicted_mss: Option<u64>,
    /// Where each figure was read.
    #[serde(default)]
    pub sources: Vec<String>,
}

/// A running tunnel daemon: what [`TunnelObservation::read_daemon`] reads.
#[derive(Debug, Clone, Copy)]
pub struct Daemon<'a> {
    /// The program (`openvpn`, `wireguard-go`), named in the sources.
    pub program: &'a str,
    /// Its log file.
    pub log: &'a Path,
    /// Its process id (its `/proc/PID/net/dev` is its network namespace's).
    pub pid: u32,
    /// The tun interface it serves.
    pub interface: &'a str,
}

impl TunnelObservation {
    /// Reads what `daemon` and its tun device showed into `self`, adding where each figure was
    /// read to [`sources`](Self::sources); what cannot be read stays `None` (a tunnel without
    /// OpenVPN has no such log lines).
    pub fn read_daemon(&mut self, daemon: Daemon<'_>) {
        if let Ok(text) = std::fs::read_to_string(daemon.log) {
            let (buffers, qlen) = parse_openvpn_log(&text);
            if buffers.is_some() || qlen.is_some() {
                self.sources.push(format!("{} log", daemon.program));
            }
            self.socket_buffers = buffers;
            self.txqueuelen = qlen;
        }
        let dev = format!("/proc/{}/net/dev", daemon.pid);
        if let Some((packets, dropped)) = std::fs::read_to_string(&dev)
            .ok()
            .and_then(|text| parse_net_dev(&text, daemon.interface))
        {
            self.tx_packets = Some(packets);
            self.tx_dropped = Some(dropped);
            self.sources.push(format!("{dev} ({})", daemon.interface));
        }
    }
}

/// The socket buffers and TX queue length in an OpenVPN log.
pub fn parse_openvpn_log(text: &str) -> (Option<SocketBuffers>, Option<u32>) {
    let mut buffers = None;
    let mut qlen = None;
    for line in text.lines() {
        if let Some(rest) = line.split("Socket Buffers: ").nth(1) {
            buffers = parse_buffers(rest).or(buffers);
        }
        if let Some(rest) = line.split("TX queue length set to ").nth(1) {
            qlen = rest.trim().parse().ok().or(qlen);
        }
    }
    (buffers, qlen)
}

/// `R=[212992->8388608] S=[212992->8388608]`.
fn parse_buffers(s: &str) -> Option<SocketBuffers> {
    let pair = |tag: &str| -> Option<(u64, u64)> {
        let inner = s.split(tag).nth(1)?.split(']').next()?;
        let (a, b) = inner.split_once("->")?;
        Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
    };
    let (rcv_before, rcv_after) = pair("R=[")?;
    let (snd_before, snd_after) = pair("S=[")?;
    Some(SocketBuffers {
        rcv_before,
        rcv_after,
        snd_before,
        snd_after,
    })
}

/// `(tx_packets, tx_dropped)` of `iface` in `/proc/net/dev` text.
pub fn parse_net_dev(text: &str, iface: &str) -> Option<(u64, u64)> {
    text.lines().find_map(|line| {
        let (name, counters) = line.split_once(':')?;
        if name.trim() != iface {
            return None;
        }
        // rx: bytes packets errs drop fifo frame compressed multicast; tx: bytes packets
        // errs drop …
        let v: Vec<u64> = counters
            .split_whitespace()
            .map(|x| x.parse().ok())
            .collect::<Option<_>>()?;
        Some((*v.get(9)?, *v.get(11)?))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_openvpn_socket_buffers_and_queue_length() {
        let log = "2026-11-25 10:47:20 TUN/TAP TX queue length set to 500\n\
                   2026-11-25 10:47:20 net_iface_mtu_set: mtu 1448 for lr-wov-tg\n\
                   2026-11-25 10:47:20 Socket Buffers: R=[212992->8388608] S=[212992->425984]\n";
        let (b, q) = parse_openvpn_log(log);
        assert_eq!(
            b,
            Some(SocketBuffers {
                rcv_before: 212_992,
                rcv_after: 8_388_608,
                snd_before: 212_992,
                snd_after: 425_984
            })
        );
        assert_eq!(q, Some(500));
        assert_eq!(parse_openvpn_log("Socket Buffers: R=[x->1]"), (None, None));
    }

    #[test]
    fn reads_tx_counters_of_one_interface() {
        let dev = "Inter-|   Receive                                                |  Transmit\n \
face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n\
    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0\n\
lr-ab-tg: 1000      10    0    0    0     0          0         0     5000      77    0    3    0     0       0          0\n";
        assert_eq!(parse_net_dev(dev, "lr-ab-tg"), Some((77, 3)));
        assert_eq!(parse_net_dev(dev, "eth9"), None);
    }

    #[test]
    fn a_daemon_that_left_nothing_to_read_adds_nothing() -> Result<(), std::io::Error> {
        let dir = tempfile::tempdir()?;
        let mut o = TunnelObservation::default();
        o.read_daemon(Daemon {
            program: "openvpn",
            log: &dir.path().join("absent.log"),
            pid: u32::MAX,
            interface: "lr-ab-tg",
        });
        assert_eq!(o, TunnelObservation::default());
        Ok(())
    }
}
