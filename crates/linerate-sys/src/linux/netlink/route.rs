//! Route netlink: the dozen requests a test bed needs, and link/address listings.

use std::io;
use std::net::{IpAddr, Ipv4Addr};
use std::os::fd::{AsRawFd, BorrowedFd};

use netlink_packet_core::{DefaultNla, Emitable, NLM_F_CREATE, NLM_F_EXCL, NLM_F_REPLACE};
use netlink_packet_route::address::{AddressAttribute, AddressMessage};
use netlink_packet_route::link::{
    InfoData, InfoKind, InfoVeth, LinkAttribute, LinkFlags, LinkInfo, LinkMessage,
};
use netlink_packet_route::neighbour::{
    NeighbourAddress, NeighbourAttribute, NeighbourMessage, NeighbourState,
};
use netlink_packet_route::route::{
    RouteAddress, RouteAttribute, RouteHeader, RouteMessage, RouteProtocol, RouteScope, RouteType,
};
use netlink_packet_route::tc::{TcAttribute, TcHandle, TcMessage};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};

use super::{Conn, Kind, NetlinkError};

/// An interface hardware address.
pub type Mac = [u8; 6];

/// `TCA_OPTIONS`: netlink-packet-route types the options of only a few qdiscs, so others
/// travel as an opaque attribute of this number.
const TCA_OPTIONS: u16 = 2;

/// One veth end: where it goes and what it looks like.
#[derive(Debug, Clone)]
pub struct VethEnd<'a> {
    /// Interface name (at most 15 bytes).
    pub name: &'a str,
    /// Namespace the end is created in.
    pub netns: BorrowedFd<'a>,
    /// MTU in bytes.
    pub mtu: u32,
    /// Hardware address.
    pub mac: Mac,
}

/// An interface, as a link dump reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// Interface index.
    pub index: u32,
    /// Name.
    pub name: String,
    /// MTU in bytes (0 when not reported).
    pub mtu: u32,
    /// Hardware address (empty for interfaces without one).
    pub mac: Vec<u8>,
    /// Administratively up.
    pub up: bool,
}

/// An address on an interface, as an address dump reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    /// Interface index.
    pub index: u32,
    /// The address.
    pub address: IpAddr,
    /// Prefix length.
    pub prefix: u8,
}

/// A route netlink socket bound to the namespace it was opened in.
pub struct Rtnl {
    conn: Conn,
}

impl std::fmt::Debug for Rtnl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rtnl").field("seq", &self.conn.seq).finish()
    }
}

fn link_message(index: u32, up: bool) -> LinkMessage {
    let mut m = LinkMessage::default();
    m.header.index = index;
    if up {
        m.header.flags = LinkFlags::Up;
        m.header.change_mask = LinkFlags::Up;
    }
    m
}

fn end_attributes(end: &VethEnd<'_>) -> Vec<LinkAttribute> {
    vec![
        LinkAttribute::IfName(end.name.to_owned()),
        LinkAttribute::Mtu(end.mtu),
        LinkAttribute::Address(end.mac.to_vec()),
        LinkAttribute::NetNsFd(end.netns.as_raw_fd()),
    ]
}

impl Rtnl {
    /// Opens a route netlink socket in the calling thread's namespace.
    pub fn open() -> io::Result<Rtnl> {
        Conn::open(netlink_sys::constants::NETLINK_ROUTE).map(|conn| Rtnl { conn })
    }

    fn ack(
        &mut self,
        msg: RouteNetlinkMessage,
        flags: u16,
        what: impl FnOnce() -> String,
    ) -> Result<Vec<RouteNetlinkMessage>, NetlinkError> {
        self.conn
            .request(msg, flags, Kind::Ack)
            .map_err(|cause| NetlinkError {
                what: what(),
                cause,
            })
    }

    fn dump(
        &mut self,
        msg: RouteNetlinkMessage,
        what: &str,
    ) -> Result<Vec<RouteNetlinkMessage>, NetlinkError> {
        self.conn
            .request(msg, 0, Kind::Dump)
            .map_err(|cause| NetlinkError {
                what: what.to_owned(),
                cause,
            })
    }

    /// Creates a veth pair with each end directly in its namespace; end `a` comes up, end `b`
    /// must be set up afterwards ([`Rtnl::set_up_by_name`] in its namespace).
    pub fn create_veth(&mut self, a: &VethEnd<'_>, b: &VethEnd<'_>) -> Result<(), NetlinkError> {
        // Not up yet: a veth cannot open before its peer is linked (ENOTCONN).
        let mut peer = link_message(0, false);
        peer.attributes = end_attributes(b);
        let mut m = link_message(0, true);
        m.attributes = end_attributes(a);
        m.attributes.push(LinkAttribute::LinkInfo(vec![
            LinkInfo::Kind(InfoKind::Veth),
            LinkInfo::Data(InfoData::Veth(InfoVeth::Peer(peer))),
        ]));
        self.ack(
            RouteNetlinkMessage::NewLink(m),
            NLM_F_CREATE | NLM_F_EXCL,
            || format!("create veth {} <-> {}", a.name, b.name),
        )
        .map(drop)
    }

    /// Sets interface `index` (called `name` in errors) up.
    pub fn set_up(&mut self, index: u32, name: &str) -> Result<(), NetlinkError> {
        let m = link_message(index, true);
        self.ack(RouteNetlinkMessage::NewLink(m), 0, || {
            format!("set {name} up")
        })
        .map(drop)
    }

    /// Sets interface `name` up.
    pub fn set_up_by_name(&mut self, name: &str) -> Result<(), NetlinkError> {
        let mut m = link_message(0, true);
        m.attributes.push(LinkAttribute::IfName(name.to_owned()));
        self.ack(RouteNetlinkMessage::NewLink(m), 0, || {
            format!("set {name} up")
        })
        .map(drop)
    }

    /// The index of interface `name` in this socket's namespace.
    pub fn link_index(&mut self, name: &str) -> Result<u32, NetlinkError> {
        let what = || format!("look up interface {name}");
        let mut m = link_message(0, false);
        m.attributes.push(LinkAttribute::IfName(name.to_owned()));
        let replies = self.ack(RouteNetlinkMessage::GetLink(m), 0, what)?;
        replies
            .into_iter()
            .find_map(|r| match r {
                RouteNetlinkMessage::NewLink(l) => Some(l.header.index),
                _ => None,
            })
            .ok_or_else(|| NetlinkError {
                what: what(),
                cause: io::Error::new(io::ErrorKind::InvalidData, "no RTM_NEWLINK reply"),
            })
    }

    /// Packets each interface's root qdisc dropped since it was made, by interface index
    /// (`RTM_GETQDISC` dump: `TCA_STATS2`/`TCA_STATS_QUEUE` drops, else the old `TCA_STATS`).
    /// A root qdisc's drops include its classes', so only roots are counted.
    pub fn qdisc_drops(&mut self) -> Result<Vec<(u32, u64)>, NetlinkError> {
        use netlink_packet_route::tc::TcStats2;
        let replies = self.dump(
            RouteNetlinkMessage::GetQueueDiscipline(TcMessage::default()),
            "list qdiscs",
        )?;
        let mut out: Vec<(u32, u64)> = Vec::new();
        for r in replies {
            let RouteNetlinkMessage::NewQueueDiscipline(m) = r else {
                continue;
            };
            if m.header.parent != TcHandle::ROOT {
                continue;
            }
            let queue = m.attributes.iter().find_map(|a| match a {
                TcAttribute::Stats2(v) => v.iter().find_map(|s| match s {
                    TcStats2::Queue(q) => Some(u64::from(q.drops)),
                    _ => None,
                }),
                _ => None,
            });
            let old = m.attributes.iter().find_map(|a| match a {
                TcAttribute::Stats(s) => Some(u64::from(s.drops)),
                _ => None,
            });
            if let Some(drops) = queue.or(old) {
                let index = u32::try_from(m.header.index).unwrap_or(0);
                match out.iter_mut().find(|(i, _)| *i == index) {
                    Some((_, d)) => *d += drops,
                    None => out.push((index, drops)),
                }
            }
        }
        Ok(out)
    }

    /// Every interface in this socket's namespace.
    pub fn links(&mut self) -> Result<Vec<Link>, NetlinkError> {
        let replies = self.dump(
            RouteNetlinkMessage::GetLink(LinkMessage::default()),
            "list interfaces",
        )?;
        Ok(replies
            .into_iter()
            .filter_map(|r| match r {
                RouteNetlinkMessage::NewLink(l) => Some(link_of(l)),
                _ => None,
            })
            .collect())
    }

    /// Every address in this socket's namespace.
    pub fn addresses(&mut self) -> Result<Vec<Address>, NetlinkError> {
        let replies = self.dump(
            RouteNetlinkMessage::GetAddress(AddressMessage::default()),
            "list addresses",
        )?;
        Ok(replies
            .into_iter()
            .filter_map(|r| match r {
                RouteNetlinkMessage::NewAddress(a) => address_of(a),
                _ => None,
            })
            .collect())
    }

    /// Adds `addr/prefix` to interface `index`.
    pub fn add_address(
        &mut self,
        index: u32,
        addr: Ipv4Addr,
        prefix: u8,
    ) -> Result<(), NetlinkError> {
        let mut m = AddressMessage::default();
        m.header.family = AddressFamily::Inet;
        m.header.prefix_len = prefix;
        m.header.index = index;
        m.attributes = vec![
            AddressAttribute::Local(IpAddr::V4(addr)),
            AddressAttribute::Address(IpAddr::V4(addr)),
        ];
        self.ack(
            RouteNetlinkMessage::NewAddress(m),
            NLM_F_CREATE | NLM_F_EXCL,
            || format!("add address {addr}/{prefix}"),
        )
        .map(drop)
    }

    /// Adds a static route to `dst/prefix` via `gateway` out of interface `index`.
    pub fn add_route(
        &mut self,
        dst: Ipv4Addr,
        prefix: u8,
        gateway: Ipv4Addr,
        index: u32,
    ) -> Result<(), NetlinkError> {
        let mut m = RouteMessage::default();
        m.header.address_family = AddressFamily::Inet;
        m.header.destination_prefix_length = prefix;
        m.header.table = RouteHeader::RT_TABLE_MAIN;
        m.header.protocol = RouteProtocol::Static;
        m.header.scope = RouteScope::Universe;
        m.header.kind = RouteType::Unicast;
        m.attributes = vec![
            RouteAttribute::Destination(RouteAddress::Inet(dst)),
            RouteAttribute::Gateway(RouteAddress::Inet(gateway)),
            RouteAttribute::Oif(index),
        ];
        self.ack(
            RouteNetlinkMessage::NewRoute(m),
            NLM_F_CREATE | NLM_F_EXCL,
            || format!("add route {dst}/{prefix} via {gateway}"),
        )
        .map(drop)
    }

    /// Adds (or replaces) a permanent neighbour entry `ip` → `mac` on interface `index`.
    pub fn add_neighbour(
        &mut self,
        index: u32,
        ip: Ipv4Addr,
        mac: Mac,
    ) -> Result<(), NetlinkError> {
        let mut m = NeighbourMessage::default();
        m.header.family = AddressFamily::Inet;
        m.header.ifindex = index;
        m.header.state = NeighbourState::Permanent;
        m.attributes = vec![
            NeighbourAttribute::Destination(NeighbourAddress::Inet(ip)),
            NeighbourAttribute::LinkLayerAddress(mac.to_vec()),
        ];
        self.ack(
            RouteNetlinkMessage::NewNeighbour(m),
            NLM_F_CREATE | NLM_F_REPLACE,
            || format!("add neighbour {ip}"),
        )
        .map(drop)
    }

    /// Adds a root qdisc of `kind` (handle 8000:) with raw `options` (none when `None`) on
    /// interface `index`.
    pub fn add_root_qdisc(
        &mut self,
        index: u32,
        kind: &str,
        options: Option<&[u8]>,
    ) -> Result<(), NetlinkError> {
        let what = || format!("add {kind} qdisc");
        let mut m = TcMessage::default();
        m.header.index = i32::try_from(index).map_err(|_| NetlinkError {
            what: what(),
            cause: io::Error::new(io::ErrorKind::InvalidInput, "interface index too large"),
        })?;
        m.header.handle = TcHandle {
            major: 0x8000,
            minor: 0,
        };
        m.header.parent = TcHandle::ROOT;
        m.attributes.push(TcAttribute::Kind(kind.to_owned()));
        if let Some(opts) = options {
            m.attributes.push(TcAttribute::Other(DefaultNla::new(
                TCA_OPTIONS,
                opts.to_vec(),
            )));
        }
        self.ack(
            RouteNetlinkMessage::NewQueueDiscipline(m),
            NLM_F_CREATE | NLM_F_EXCL,
            what,
        )
        .map(drop)
    }
}

fn link_of(l: LinkMessage) -> Link {
    let mut link = Link {
        index: l.header.index,
        name: String::new(),
        mtu: 0,
        mac: Vec::new(),
        up: l.header.flags.contains(LinkFlags::Up),
    };
    for a in l.attributes {
        match a {
            LinkAttribute::IfName(n) => link.name = n,
            LinkAttribute::Mtu(m) => link.mtu = m,
            LinkAttribute::Address(mac) => link.mac = mac,
            _ => {}
        }
    }
    link
}

fn address_of(a: AddressMessage) -> Option<Address> {
    // IFA_LOCAL is the interface's own address; IFA_ADDRESS is the peer's on point-to-point
    // links and the same otherwise.
    let mut local = None;
    let mut address = None;
    for attr in a.attributes {
        match attr {
            AddressAttribute::Local(ip) => local = Some(ip),
            AddressAttribute::Address(ip) => address = Some(ip),
            _ => {}
        }
    }
    Some(Address {
        index: a.header.index,
        address: local.or(address)?,
        prefix: a.header.prefix_len,
    })
}

/// Kernel netem's options for one direction: `struct tc_netem_qopt` followed by attributes
/// (a layout netlink-packet-route cannot express, hence built here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Netem {
    /// Queue limit in packets.
    pub limit: u32,
    /// Loss probability, scaled so `u32::MAX` is 100 %.
    pub loss: u32,
    /// Delay in nanoseconds.
    pub latency_ns: u64,
    /// Jitter in nanoseconds.
    pub jitter_ns: u64,
    /// Rate limit in bytes per second (`None`: unlimited).
    pub rate_bytes_per_s: Option<u64>,
    /// Bytes netem adds to each packet's length when it paces at the rate (tc's
    /// `rate RATE PACKETOVERHEAD`; may be negative).
    pub packet_overhead: i32,
}

impl Netem {
    const TCA_NETEM_RATE: u16 = 6;
    const TCA_NETEM_RATE64: u16 = 8;
    const TCA_NETEM_LATENCY64: u16 = 10;
    const TCA_NETEM_JITTER64: u16 = 11;

    /// The `TCA_OPTIONS` payload for [`Rtnl::add_root_qdisc`].
    pub fn to_options(&self) -> Vec<u8> {
        // struct tc_netem_qopt: latency, limit, loss, gap, duplicate, jitter (u32 each); the
        // 32-bit latency and jitter stay 0, the 64-bit attributes carry them.
        let mut qopt = [0u8; 24];
        qopt[4..8].copy_from_slice(&self.limit.to_ne_bytes());
        qopt[8..12].copy_from_slice(&self.loss.to_ne_bytes());
        let mut nlas = vec![
            DefaultNla::new(
                Self::TCA_NETEM_LATENCY64,
                self.latency_ns.to_ne_bytes().to_vec(),
            ),
            DefaultNla::new(
                Self::TCA_NETEM_JITTER64,
                self.jitter_ns.to_ne_bytes().to_vec(),
            ),
        ];
        if let Some(bytes) = self.rate_bytes_per_s {
            // struct tc_netem_rate: rate (u32), packet_overhead, cell_size, cell_overhead.
            let mut rate = [0u8; 16];
            rate[0..4].copy_from_slice(&u32::try_from(bytes).unwrap_or(u32::MAX).to_ne_bytes());
            rate[4..8].copy_from_slice(&self.packet_overhead.to_ne_bytes());
            nlas.push(DefaultNla::new(Self::TCA_NETEM_RATE, rate.to_vec()));
            if bytes > u64::from(u32::MAX) {
                nlas.push(DefaultNla::new(
                    Self::TCA_NETEM_RATE64,
                    bytes.to_ne_bytes().to_vec(),
                ));
            }
        }
        let mut out = vec![0u8; qopt.len() + nlas.as_slice().buffer_len()];
        out[..qopt.len()].copy_from_slice(&qopt);
        nlas.as_slice().emit(&mut out[qopt.len()..]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netns;
    use std::fs::File;
    use std::os::fd::AsFd;

    fn attrs(blob: &[u8]) -> Vec<(u16, Vec<u8>)> {
        netlink_packet_core::NlasIterator::new(&blob[24..])
            .map(|n| {
                let n = n.unwrap();
                (n.kind(), n.value().to_vec())
            })
            .collect()
    }

    #[test]
    fn netem_options_carry_limit_loss_delay_jitter_and_rate() {
        let n = Netem {
            limit: 10_000,
            loss: u32::MAX / 2,
            latency_ns: 20_000_000,
            jitter_ns: 1_000_000,
            rate_bytes_per_s: Some(125_000_000),
            packet_overhead: 24,
        };
        let blob = n.to_options();
        assert_eq!(blob[4..8], 10_000u32.to_ne_bytes());
        assert_eq!(blob[8..12], (u32::MAX / 2).to_ne_bytes());
        assert_eq!(blob.len() % 4, 0);
        let a = attrs(&blob);
        assert_eq!(
            a,
            vec![
                (10, 20_000_000u64.to_ne_bytes().to_vec()),
                (11, 1_000_000u64.to_ne_bytes().to_vec()),
                (
                    6,
                    [
                        125_000_000u32.to_ne_bytes(),
                        24i32.to_ne_bytes(),
                        [0; 4],
                        [0; 4]
                    ]
                    .concat()
                ),
            ]
        );
        let fast = Netem {
            rate_bytes_per_s: Some(12_500_000_000),
            ..n
        }
        .to_options();
        let a = attrs(&fast);
        assert!(a.contains(&(8, 12_500_000_000u64.to_ne_bytes().to_vec())));
        assert!(a.contains(&(
            6,
            [u32::MAX.to_ne_bytes(), 24i32.to_ne_bytes(), [0; 4], [0; 4]].concat()
        )));
        assert_eq!(attrs(&Netem::default().to_options()).len(), 2, "no rate");
    }

    #[test]
    fn a_fresh_namespace_lists_its_links_and_addresses() {
        if !crate::is_root() {
            eprintln!("SKIP: namespaces need root");
            return;
        }
        let name = format!("lr-sys-{}-nl", std::process::id());
        let ns = netns::TempNamed::create(&name).unwrap();
        let (links, addrs, index) = netns::run_in(ns.fd(), || {
            let mut r = Rtnl::open().unwrap();
            let fresh = r.links().unwrap();
            assert_eq!(fresh.len(), 1, "{fresh:?}");
            assert_eq!((fresh[0].index, fresh[0].name.as_str()), (1, "lo"));
            assert!(!fresh[0].up);
            assert!(r.addresses().unwrap().is_empty());
            r.set_up(1, "lo").unwrap();
            let here = File::open("/proc/thread-self/ns/net").unwrap();
            let end = |name, last| VethEnd {
                name,
                netns: here.as_fd(),
                mtu: 9000,
                mac: [0x02, 0x00, 0x5e, 0x00, 0x00, last],
            };
            r.create_veth(&end("lrsa", 1), &end("lrsb", 2)).unwrap();
            r.set_up_by_name("lrsb").unwrap();
            let a = r.link_index("lrsa").unwrap();
            let b = r.link_index("lrsb").unwrap();
            r.add_address(a, Ipv4Addr::new(198, 18, 0, 1), 24).unwrap();
            r.add_address(b, Ipv4Addr::new(198, 18, 1, 1), 24).unwrap();
            r.add_neighbour(a, Ipv4Addr::new(198, 18, 0, 2), [2, 0, 0x5e, 0, 0, 9])
                .unwrap();
            r.add_route(
                Ipv4Addr::new(198, 19, 0, 0),
                16,
                Ipv4Addr::new(198, 18, 0, 2),
                a,
            )
            .unwrap();
            // The same address twice is refused with the kernel's errno, named.
            let e = r
                .add_address(a, Ipv4Addr::new(198, 18, 0, 1), 24)
                .unwrap_err();
            assert_eq!(e.errno(), Some(libc::EEXIST), "{e}");
            assert!(e.to_string().contains("add address 198.18.0.1/24"), "{e}");
            let missing = r.link_index("lr-none0").unwrap_err();
            assert_eq!(missing.errno(), Some(libc::ENODEV), "{missing}");
            (r.links().unwrap(), r.addresses().unwrap(), a)
        })
        .unwrap();
        let mut names: Vec<&str> = links.iter().map(|l| l.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["lo", "lrsa", "lrsb"]);
        let lrsa = links.iter().find(|l| l.name == "lrsa").unwrap();
        assert_eq!((lrsa.index, lrsa.mtu, lrsa.up), (index, 9000, true));
        assert_eq!(lrsa.mac, [0x02, 0x00, 0x5e, 0x00, 0x00, 1]);
        let v4: Vec<(u32, IpAddr, u8)> = addrs
            .iter()
            .filter(|a| a.address.is_ipv4())
            .map(|a| (a.index, a.address, a.prefix))
            .collect();
        assert!(
            v4.contains(&(1, IpAddr::V4(Ipv4Addr::LOCALHOST), 8)),
            "{v4:?}"
        );
        assert!(
            v4.contains(&(index, IpAddr::V4(Ipv4Addr::new(198, 18, 0, 1)), 24)),
            "{v4:?}"
        );
        // The namespace is gone with its handle and name.
        let path = ns.path().to_owned();
        drop(ns);
        assert!(!path.exists());
    }

    #[test]
    fn a_qdisc_kind_the_kernel_lacks_is_refused_not_created() {
        if !crate::is_root() {
            eprintln!("SKIP: namespaces need root");
            return;
        }
        let r = netns::run_in_new(|| {
            let mut r = Rtnl::open().unwrap();
            r.set_up(1, "lo").unwrap();
            r.add_root_qdisc(1, "lr-no-such-qdisc", None)
        })
        .unwrap();
        let e = r.unwrap_err();
        assert!(
            matches!(e.errno(), Some(libc::ENOENT | libc::EINVAL)),
            "{e}"
        );
        assert!(e.to_string().contains("add lr-no-such-qdisc qdisc"), "{e}");
    }
}
