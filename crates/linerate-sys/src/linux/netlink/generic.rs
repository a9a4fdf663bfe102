//! Generic netlink: resolving a family by name, and the kernel's `netdev` family's per-queue
//! statistics (`qstats-get` with queue scope, Linux 6.9+), for drivers that report queue
//! counters there instead of in `ethtool -S` (virtio_net on current kernels, mlx5, bnxt,
//! gve, …). Attribute numbers are those of `<linux/genetlink.h>` and `<linux/netdev.h>`.
//!
//! Messages are netlink-packet-generic's `GenlMessage` around a raw payload: no crate types
//! the `netdev` family, and nlctrl's typed parser rejects a whole reply over one attribute it
//! does not know, so both families' attributes are read here with netlink-packet-core's
//! attribute iterator.

use std::io;

use netlink_packet_core::{DecodeError, DefaultNla, Emitable, NlasIterator, ParseableParametrized};
use netlink_packet_generic::{GenlFamily, GenlHeader, GenlMessage};

use super::{Conn, Kind};

const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;

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

/// A generic-netlink payload whose family id is known only at run time: the command, and
/// the attributes as encoded bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Raw {
    cmd: u8,
    version: u8,
    attrs: Vec<u8>,
}

impl Raw {
    fn new(cmd: u8, version: u8, attrs: &[DefaultNla]) -> Raw {
        let mut bytes = vec![0u8; attrs.buffer_len()];
        attrs.emit(&mut bytes);
        Raw {
            cmd,
            version,
            attrs: bytes,
        }
    }

    /// (type, payload) of each attribute; a malformed one ends the walk.
    fn attributes(&self) -> impl Iterator<Item = (u16, &[u8])> {
        NlasIterator::new(self.attrs.as_slice())
            .map_while(Result::ok)
            .map(|n| {
                let (kind, len) = (n.kind(), n.value_length());
                // The iterator checked the length against the buffer; 4 is the header.
                (kind, &n.into_inner()[4..4 + len])
            })
    }
}

impl GenlFamily for Raw {
    fn family_name() -> &'static str {
        // Never resolved by name through this type: the id is passed in by `Genl`.
        ""
    }

    fn command(&self) -> u8 {
        self.cmd
    }

    fn version(&self) -> u8 {
        self.version
    }
}

impl Emitable for Raw {
    fn buffer_len(&self) -> usize {
        self.attrs.len()
    }

    fn emit(&self, buffer: &mut [u8]) {
        buffer.copy_from_slice(&self.attrs);
    }
}

impl ParseableParametrized<[u8], GenlHeader> for Raw {
    fn parse_with_param(buf: &[u8], header: GenlHeader) -> Result<Self, DecodeError> {
        Ok(Raw {
            cmd: header.cmd,
            version: header.version,
            attrs: buf.to_vec(),
        })
    }
}

/// A `uint` attribute: 4 or 8 bytes.
fn uint(payload: &[u8]) -> Option<u64> {
    match payload.len() {
        4 => Some(u64::from(u32::from_ne_bytes(payload.try_into().ok()?))),
        8 => Some(u64::from_ne_bytes(payload.try_into().ok()?)),
        _ => None,
    }
}

/// A generic-netlink socket bound to the namespace it was opened in.
pub struct Genl {
    conn: Conn,
}

impl std::fmt::Debug for Genl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Genl").field("seq", &self.conn.seq).finish()
    }
}

/// Which way a queue carries traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QueueKind {
    /// Receive.
    Rx,
    /// Transmit.
    Tx,
}

/// One queue's counters from the `netdev` family (each `None` when the driver does not
/// report it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueStats {
    /// Interface index.
    pub ifindex: u32,
    /// Receive or transmit.
    pub kind: QueueKind,
    /// Queue number.
    pub queue: u32,
    /// Packets.
    pub packets: Option<u64>,
    /// Bytes.
    pub bytes: Option<u64>,
    /// Drops in hardware.
    pub hw_drops: Option<u64>,
}

impl Genl {
    /// Opens a generic netlink socket in the calling thread's namespace.
    pub fn open() -> io::Result<Genl> {
        Conn::open(netlink_sys::constants::NETLINK_GENERIC).map(|conn| Genl { conn })
    }

    fn request(
        &mut self,
        family: u16,
        payload: Raw,
        kind: Kind,
    ) -> io::Result<Vec<GenlMessage<Raw>>> {
        let mut msg = GenlMessage::from_payload(payload);
        msg.set_resolved_family_id(family);
        msg.finalize();
        self.conn.request(msg, 0, kind)
    }

    /// The id of generic-netlink family `name` (ENOENT when the kernel has no such family).
    pub fn family_id(&mut self, name: &str) -> io::Result<u16> {
        let mut cname = name.as_bytes().to_vec();
        cname.push(0);
        let ask = Raw::new(
            CTRL_CMD_GETFAMILY,
            1,
            &[DefaultNla::new(CTRL_ATTR_FAMILY_NAME, cname)],
        );
        let replies = self.request(GENL_ID_CTRL, ask, Kind::Ack)?;
        replies
            .iter()
            .flat_map(|r| r.payload.attributes())
            .find(|(k, _)| *k == CTRL_ATTR_FAMILY_ID)
            .and_then(|(_, p)| Some(u16::from_ne_bytes(p.get(..2)?.try_into().ok()?)))
            .ok_or_else(|| io::Error::other("no family id in the reply"))
    }

    /// Per-queue counters of interface `ifindex` from the `netdev` family. Errors carry the
    /// kernel's errno: ENOENT (no `netdev` family, before Linux 6.5), EINVAL (no per-queue
    /// qstats, before 6.9), EOPNOTSUPP (the driver reports none).
    pub fn queue_stats(&mut self, ifindex: u32) -> io::Result<Vec<QueueStats>> {
        let family = self.family_id("netdev")?;
        let ask = Raw::new(
            NETDEV_CMD_QSTATS_GET,
            1,
            &[
                DefaultNla::new(NETDEV_A_QSTATS_IFINDEX, ifindex.to_ne_bytes().to_vec()),
                DefaultNla::new(
                    NETDEV_A_QSTATS_SCOPE,
                    NETDEV_QSTATS_SCOPE_QUEUE.to_ne_bytes().to_vec(),
                ),
            ],
        );
        let replies = self.request(family, ask, Kind::Dump)?;
        Ok(replies
            .iter()
            .filter_map(|r| queue_of(&r.payload))
            .filter(|q| q.ifindex == ifindex)
            .collect())
    }
}

fn queue_of(reply: &Raw) -> Option<QueueStats> {
    let (mut ifindex, mut kind, mut queue) = (None, None, None);
    let (mut packets, mut bytes, mut hw_drops) = (None, None, None);
    for (k, p) in reply.attributes() {
        let v = uint(p);
        match k {
            NETDEV_A_QSTATS_IFINDEX => ifindex = v,
            NETDEV_A_QSTATS_QUEUE_TYPE => kind = v,
            NETDEV_A_QSTATS_QUEUE_ID => queue = v,
            NETDEV_A_QSTATS_RX_PACKETS | NETDEV_A_QSTATS_TX_PACKETS => packets = v,
            NETDEV_A_QSTATS_RX_BYTES | NETDEV_A_QSTATS_TX_BYTES => bytes = v,
            NETDEV_A_QSTATS_RX_HW_DROPS | NETDEV_A_QSTATS_TX_HW_DROPS => hw_drops = v,
            _ => {}
        }
    }
    Some(QueueStats {
        ifindex: u32::try_from(ifindex?).ok()?,
        kind: if kind? == NETDEV_QUEUE_TYPE_TX {
            QueueKind::Tx
        } else {
            QueueKind::Rx
        },
        queue: u32::try_from(queue?).ok()?,
        packets,
        bytes,
        hw_drops,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(attrs: &[(u16, Vec<u8>)]) -> Raw {
        let nlas: Vec<DefaultNla> = attrs
            .iter()
            .map(|(k, v)| DefaultNla::new(*k, v.clone()))
            .collect();
        Raw::new(0, 1, &nlas)
    }

    #[test]
    fn attributes_round_trip_and_uints_take_both_widths() {
        let r = raw(&[
            (1, 7u32.to_ne_bytes().to_vec()),
            (9, (1u64 << 40).to_ne_bytes().to_vec()),
            (2, b"ab\0".to_vec()),
        ]);
        let a: Vec<(u16, &[u8])> = r.attributes().collect();
        assert_eq!(a.len(), 3);
        assert_eq!(uint(a[0].1), Some(7));
        assert_eq!(uint(a[1].1), Some(1 << 40));
        assert_eq!(a[2].1, b"ab\0");
        assert_eq!(uint(a[2].1), None);
        let broken = Raw {
            cmd: 0,
            version: 1,
            attrs: vec![0xff, 0xff, 0, 0],
        };
        assert_eq!(
            broken.attributes().count(),
            0,
            "a bad length stops the walk"
        );
    }

    #[test]
    fn a_queue_reply_decodes_and_incomplete_ones_are_skipped() {
        let q = raw(&[
            (NETDEV_A_QSTATS_IFINDEX, 2u32.to_ne_bytes().to_vec()),
            (NETDEV_A_QSTATS_QUEUE_TYPE, 1u32.to_ne_bytes().to_vec()),
            (NETDEV_A_QSTATS_QUEUE_ID, 3u32.to_ne_bytes().to_vec()),
            (NETDEV_A_QSTATS_TX_PACKETS, 10u64.to_ne_bytes().to_vec()),
            (NETDEV_A_QSTATS_TX_BYTES, 1500u64.to_ne_bytes().to_vec()),
        ]);
        assert_eq!(
            queue_of(&q),
            Some(QueueStats {
                ifindex: 2,
                kind: QueueKind::Tx,
                queue: 3,
                packets: Some(10),
                bytes: Some(1500),
                hw_drops: None,
            })
        );
        let no_id = raw(&[(NETDEV_A_QSTATS_IFINDEX, 2u32.to_ne_bytes().to_vec())]);
        assert_eq!(queue_of(&no_id), None);
    }

    #[test]
    fn the_control_family_resolves_known_names_and_refuses_unknown_ones() {
        let mut g = Genl::open().unwrap();
        assert_eq!(g.family_id("nlctrl").unwrap(), GENL_ID_CTRL);
        // (Names are at most 15 bytes; a longer one is EINVAL, not ENOENT.)
        let e = g.family_id("lr-nosuch").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT), "{e}");
    }

    #[test]
    fn loopback_has_no_queue_stats_and_the_kernel_says_why() {
        // lo is ifindex 1 in every namespace; it has no qstats ops.
        let mut g = Genl::open().unwrap();
        match g.queue_stats(1) {
            Ok(q) => assert!(q.is_empty(), "{q:?}"),
            Err(e) => assert!(
                matches!(
                    e.raw_os_error(),
                    Some(libc::EOPNOTSUPP | libc::EINVAL | libc::ENOENT)
                ),
                "{e}"
            ),
        }
    }
}
