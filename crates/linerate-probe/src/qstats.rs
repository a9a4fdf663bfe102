//! Per-queue counters from the kernel's `netdev` generic-netlink family (`qstats-get` with
//! queue scope, Linux 6.9+), for drivers that report queue statistics there instead of in
//! `ethtool -S` (virtio_net on current kernels, mlx5, bnxt, gve, …). Attribute numbers are those
//! of `<linux/netdev.h>`. A small synchronous client: one socket, one request, one dump.

use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::watch::{Direction, QueueCounters};

const NETLINK_GENERIC: i32 = 16;
const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;

const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_ACK: u16 = 0x4;
const NLM_F_DUMP: u16 = 0x300;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;

const NETDEV_CMD_QSTATS_GET: u8 = 12;
const NETDEV_A_QSTATS_IFINDEX: u16 = 1;
const NETDEV_A_QSTATS_QUEUE_TYPE: u16 = 2;
const NETDEV_A_QSTATS_QUEUE_ID: u16 = 3;
const NETDEV_A_QSTATS_SCOPE: u16 = 4;
const NETDEV_A_QSTATS_RX_PACKETS: u16 = 8;
const NETDEV_A_QSTATS_RX_BYTES: u16 = 9;
const NETDEV_A_QSTATS_TX_PACKETS: u16 = 10;
const NETDEV_A_QSTATS_TX_BYTES: u16 = 11;
const NETDEV_A_QSTATS_RX_HW_DROPS: u16 = 13;
const NETDEV_A_QSTATS_TX_HW_DROPS: u16 = 24;
const NETDEV_QSTATS_SCOPE_QUEUE: u32 = 1;
const NETDEV_QUEUE_TYPE_TX: u64 = 1;

/// A generic-netlink socket.
struct Genl {
    fd: OwnedFd,
    seq: u32,
}

fn attr(buf: &mut Vec<u8>, kind: u16, payload: &[u8]) {
    let len = 4 + payload.len();
    buf.extend_from_slice(&u16::try_from(len).unwrap_or(u16::MAX).to_ne_bytes());
    buf.extend_from_slice(&kind.to_ne_bytes());
    buf.extend_from_slice(payload);
    buf.resize(buf.len().next_multiple_of(4), 0);
}

/// Walks netlink attributes: (type, payload).
fn attrs(mut data: &[u8]) -> Vec<(u16, &[u8])> {
    let mut out = Vec::new();
    while data.len() >= 4 {
        let len = usize::from(u16::from_ne_bytes([data[0], data[1]]));
        let kind = u16::from_ne_bytes([data[2], data[3]]) & 0x3fff;
        if len < 4 || len > data.len() {
            break;
        }
        out.push((kind, &data[4..len]));
        data = &data[len.next_multiple_of(4).min(data.len())..];
    }
    out
}

/// A `uint` attribute: 4 or 8 bytes.
fn uint(payload: &[u8]) -> Option<u64> {
    match payload.len() {
        4 => Some(u64::from(u32::from_ne_bytes(payload.try_into().ok()?))),
        8 => Some(u64::from_ne_bytes(payload.try_into().ok()?)),
        _ => None,
    }
}

impl Genl {
    fn open() -> io::Result<Genl> {
        #[expect(unsafe_code)]
        // SAFETY: socket(2) takes no pointers; a non-negative result is a new descriptor.
        let fd = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                NETLINK_GENERIC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        #[expect(unsafe_code)]
        // SAFETY: fd is a fresh, valid descriptor owned by no one else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Genl { fd, seq: 1 })
    }

    /// Sends one request and collects the payloads (after the genl header) of every reply
    /// until the dump or the ack ends. A netlink error becomes an `io::Error`.
    fn request(
        &mut self,
        family: u16,
        flags: u16,
        cmd: u8,
        body: &[u8],
    ) -> io::Result<Vec<Vec<u8>>> {
        self.seq += 1;
        let mut msg = Vec::with_capacity(20 + body.len());
        let len = u32::try_from(20 + body.len()).map_err(io::Error::other)?;
        msg.extend_from_slice(&len.to_ne_bytes());
        msg.extend_from_slice(&family.to_ne_bytes());
        msg.extend_from_slice(&(NLM_F_REQUEST | flags).to_ne_bytes());
        msg.extend_from_slice(&self.seq.to_ne_bytes());
        msg.extend_from_slice(&0u32.to_ne_bytes());
        msg.extend_from_slice(&[cmd, 1, 0, 0]);
        msg.extend_from_slice(body);
        // The kernel's address: all zero but the family.
        #[expect(unsafe_code)]
        // SAFETY: sockaddr_nl is plain old data; all-zero is a valid value.
        let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        #[expect(unsafe_code)]
        // SAFETY: msg and addr are valid for the lengths passed and outlive the call.
        let sent = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                msg.as_ptr().cast(),
                msg.len(),
                0,
                (&addr as *const libc::sockaddr_nl).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if sent < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut replies = Vec::new();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            #[expect(unsafe_code)]
            // SAFETY: buf is valid for writes of buf.len() bytes for the duration of the call.
            let n =
                unsafe { libc::recv(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
            let mut data = &buf[..n.unsigned_abs()];
            while data.len() >= 16 {
                let len = u32::from_ne_bytes([data[0], data[1], data[2], data[3]]) as usize;
                let kind = u16::from_ne_bytes([data[4], data[5]]);
                if len < 16 || len > data.len() {
                    return Err(io::Error::other("truncated netlink message"));
                }
                let payload = &data[16..len];
                match kind {
                    NLMSG_DONE => return Ok(replies),
                    NLMSG_ERROR => {
                        let code = payload
                            .get(..4)
                            .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
                            .unwrap_or(0);
                        if code == 0 {
                            return Ok(replies);
                        }
                        return Err(io::Error::from_raw_os_error(-code));
                    }
                    _ => {
                        if payload.len() >= 4 {
                            replies.push(payload[4..].to_vec());
                        }
                        if flags & NLM_F_DUMP == 0 {
                            // A plain request has one reply (then an ack, when asked for).
                            if flags & NLM_F_ACK == 0 {
                                return Ok(replies);
                            }
                        }
                    }
                }
                data = &data[len.next_multiple_of(4).min(data.len())..];
            }
        }
    }

    fn family(&mut self, name: &str) -> io::Result<u16> {
        let mut body = Vec::new();
        let mut cname = name.as_bytes().to_vec();
        cname.push(0);
        attr(&mut body, CTRL_ATTR_FAMILY_NAME, &cname);
        let replies = self.request(GENL_ID_CTRL, 0, CTRL_CMD_GETFAMILY, &body)?;
        replies
            .iter()
            .flat_map(|r| attrs(r))
            .find(|(k, _)| *k == CTRL_ATTR_FAMILY_ID)
            .and_then(|(_, p)| Some(u16::from_ne_bytes(p.get(..2)?.try_into().ok()?)))
            .ok_or_else(|| io::Error::other("no family id in the reply"))
    }
}

/// Per-queue counters of interface `ifindex` from `netdev` netlink.
pub fn read(ifindex: u32) -> Result<BTreeMap<(Direction, u32), QueueCounters>, String> {
    let mut sock = Genl::open().map_err(|e| format!("cannot open a netlink socket: {e}"))?;
    let family = sock.family("netdev").map_err(|e| match e.raw_os_error() {
        Some(libc::ENOENT) => "the kernel has no netdev netlink family (before Linux 6.5)".into(),
        _ => format!("netdev netlink family: {e}"),
    })?;
    let mut body = Vec::new();
    attr(&mut body, NETDEV_A_QSTATS_IFINDEX, &ifindex.to_ne_bytes());
    attr(
        &mut body,
        NETDEV_A_QSTATS_SCOPE,
        &NETDEV_QSTATS_SCOPE_QUEUE.to_ne_bytes(),
    );
    let replies = sock
        .request(family, NLM_F_DUMP, NETDEV_CMD_QSTATS_GET, &body)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::EOPNOTSUPP) => {
                "the driver reports no queue statistics over netlink (EOPNOTSUPP)".to_owned()
            }
            Some(libc::EINVAL) => "the kernel has no per-queue qstats (before Linux 6.9)".into(),
            _ => format!("netdev qstats: {e}"),
        })?;
    let mut out = BTreeMap::new();
    for reply in replies {
        let mut kind = None;
        let mut id = None;
        let mut ifx = None;
        let mut c = QueueCounters::default();
        for (k, p) in attrs(&reply) {
            let v = uint(p);
            match k {
                NETDEV_A_QSTATS_IFINDEX => ifx = v,
                NETDEV_A_QSTATS_QUEUE_TYPE => kind = v,
                NETDEV_A_QSTATS_QUEUE_ID => id = v,
                NETDEV_A_QSTATS_RX_PACKETS | NETDEV_A_QSTATS_TX_PACKETS => c.packets = v,
                NETDEV_A_QSTATS_RX_BYTES | NETDEV_A_QSTATS_TX_BYTES => c.bytes = v,
                NETDEV_A_QSTATS_RX_HW_DROPS | NETDEV_A_QSTATS_TX_HW_DROPS => c.drops = v,
                _ => {}
            }
        }
        if ifx != Some(u64::from(ifindex)) || c.packets.is_none() {
            continue;
        }
        let (Some(kind), Some(Ok(id))) = (kind, id.map(u32::try_from)) else {
            continue;
        };
        let dir = if kind == NETDEV_QUEUE_TYPE_TX {
            Direction::Tx
        } else {
            Direction::Rx
        };
        out.insert((dir, id), c);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_round_trip() {
        let mut b = Vec::new();
        attr(&mut b, 1, &7u32.to_ne_bytes());
        attr(&mut b, 9, &(1u64 << 40).to_ne_bytes());
        attr(&mut b, 2, b"ab\0");
        let a = attrs(&b);
        assert_eq!(a.len(), 3);
        assert_eq!(uint(a[0].1), Some(7));
        assert_eq!(uint(a[1].1), Some(1 << 40));
        assert_eq!(a[2].1, b"ab\0");
        assert_eq!(uint(a[2].1), None);
        assert!(
            attrs(&[0xff, 0xff, 0, 0]).is_empty(),
            "bad length stops the walk"
        );
    }

    #[test]
    fn eth0_queues_add_up_to_its_counters() {
        let roots = crate::ProbeRoots::live();
        let Some(ifindex) =
            crate::roots::read_number::<u32>(&roots.sys("class/net/eth0/ifindex")).into_value()
        else {
            eprintln!("SKIP: no eth0 here");
            return;
        };
        let before = crate::interface::read_counters(&roots, "eth0")
            .into_value()
            .unwrap();
        let queues = match read(ifindex) {
            Ok(q) => q,
            Err(e) => {
                eprintln!("SKIP: eth0 has no netlink queue stats: {e}");
                return;
            }
        };
        let after = crate::interface::read_counters(&roots, "eth0")
            .into_value()
            .unwrap();
        let rx: u64 = queues
            .iter()
            .filter(|((d, _), _)| *d == Direction::Rx)
            .filter_map(|(_, c)| c.packets)
            .sum();
        // Per-queue counters may restart on reconfiguration, so they never exceed the total.
        assert!(rx <= after.rx_packets, "{rx} > {}", after.rx_packets);
        assert!(rx > 0 || before.rx_packets == 0, "{queues:?}");
    }

    #[test]
    fn loopback_has_no_queue_stats_and_says_why() {
        // lo is ifindex 1 in every namespace; it has no qstats ops.
        match read(1) {
            Ok(map) => assert!(map.is_empty(), "{map:?}"),
            Err(e) => assert!(
                e.contains("EOPNOTSUPP") || e.contains("before Linux"),
                "{e}"
            ),
        }
    }
}
