//! A small rtnetlink client: one socket per namespace, requests built attribute by attribute,
//! every request acknowledged. Hand-rolled because the only needs are a dozen fixed messages
//! and the crates.io clients bring an async runtime into a synchronous tool.

mod msg;

use std::fs::File;
use std::io::{self, Read, Write};
use std::net::Ipv4Addr;
use std::os::fd::{AsFd, BorrowedFd};

pub use msg::Msg;
use msg::consts::*;

/// An interface hardware address.
pub type Mac = [u8; 6];

/// A route netlink socket bound to the namespace it was opened in.
pub struct Rtnl {
    sock: File,
    seq: u32,
    buf: Vec<u8>,
}

/// What a request that failed was trying to do, with the kernel's answer.
#[derive(Debug, thiserror::Error)]
#[error("netlink: {what}: {cause}")]
pub struct NetlinkError {
    /// The operation, e.g. "create veth lr-a-g0".
    pub what: String,
    /// The kernel's error (errno).
    pub cause: io::Error,
}

impl NetlinkError {
    /// The errno the kernel answered, if any.
    pub fn errno(&self) -> Option<i32> {
        self.cause.raw_os_error()
    }
}

/// One veth end: where it goes and what it looks like.
#[derive(Debug, Clone)]
pub struct VethEnd<'a> {
    /// Interface name (≤ 15 bytes).
    pub name: &'a str,
    /// Namespace the end is created in.
    pub netns: BorrowedFd<'a>,
    /// MTU in bytes.
    pub mtu: u32,
    /// Hardware address.
    pub mac: Mac,
}

impl Rtnl {
    /// Opens a route netlink socket in the calling thread's namespace.
    pub fn open() -> io::Result<Rtnl> {
        let fd = crate::sys::socket(libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_ROUTE)?;
        crate::sys::connect_netlink_kernel(fd.as_fd())?;
        Ok(Rtnl {
            sock: File::from(fd),
            seq: 0,
            buf: vec![0; 32 * 1024],
        })
    }

    /// Sends `msg` and waits for its acknowledgement, or the reply for a get request.
    fn transact(
        &mut self,
        mut msg: Msg,
        what: impl FnOnce() -> String,
    ) -> Result<Vec<u8>, NetlinkError> {
        self.seq = self.seq.wrapping_add(1);
        let seq = self.seq;
        let bytes = msg.finish(seq);
        let io = |e: io::Error, what: String| NetlinkError { what, cause: e };
        if let Err(e) = self.sock.write_all(bytes) {
            return Err(io(e, what()));
        }
        loop {
            let n = match self.sock.read(&mut self.buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io(e, what())),
            };
            let mut off = 0;
            while off + 16 <= n {
                let len = u32_at(&self.buf, off) as usize;
                let ty = u16_at(&self.buf, off + 4);
                let mseq = u32_at(&self.buf, off + 8);
                if len < 16 || off + len > n {
                    break;
                }
                let body = &self.buf[off + 16..off + len];
                if mseq == seq {
                    if ty == NLMSG_ERROR {
                        let code = if body.len() >= 4 {
                            i32::from_ne_bytes([body[0], body[1], body[2], body[3]])
                        } else {
                            0
                        };
                        if code == 0 {
                            return Ok(Vec::new());
                        }
                        return Err(io(io::Error::from_raw_os_error(-code), what()));
                    }
                    return Ok(body.to_vec());
                }
                off += align4(len);
            }
        }
    }

    /// Creates a veth pair with each end directly in its namespace; end `a` comes up, end `b`
    /// must be set up afterwards ([`Rtnl::set_up_by_name`] in its namespace).
    pub fn create_veth(&mut self, a: &VethEnd<'_>, b: &VethEnd<'_>) -> Result<(), NetlinkError> {
        let mut m = Msg::new(
            RTM_NEWLINK,
            NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL,
        );
        m.push(&ifinfomsg(0, IFF_UP, IFF_UP));
        m.attr_str(IFLA_IFNAME, a.name);
        m.attr_u32(IFLA_MTU, a.mtu);
        m.attr(IFLA_ADDRESS, &a.mac);
        m.attr_u32(IFLA_NET_NS_FD, a.netns.as_raw_fd_u32());
        let info = m.nest_start(IFLA_LINKINFO);
        m.attr_str(IFLA_INFO_KIND, "veth");
        let data = m.nest_start(IFLA_INFO_DATA);
        let peer = m.nest_start(VETH_INFO_PEER);
        // Not up yet: a veth cannot open before its peer is linked (ENOTCONN).
        m.push(&ifinfomsg(0, 0, 0));
        m.attr_str(IFLA_IFNAME, b.name);
        m.attr_u32(IFLA_MTU, b.mtu);
        m.attr(IFLA_ADDRESS, &b.mac);
        m.attr_u32(IFLA_NET_NS_FD, b.netns.as_raw_fd_u32());
        m.nest_end(peer);
        m.nest_end(data);
        m.nest_end(info);
        self.transact(m, || format!("create veth {} <-> {}", a.name, b.name))
            .map(drop)
    }

    /// Sets interface `index` up.
    pub fn set_up(&mut self, index: u32, name: &str) -> Result<(), NetlinkError> {
        let mut m = Msg::new(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK);
        m.push(&ifinfomsg(index, IFF_UP, IFF_UP));
        self.transact(m, || format!("set {name} up")).map(drop)
    }

    /// Sets interface `name` up.
    pub fn set_up_by_name(&mut self, name: &str) -> Result<(), NetlinkError> {
        let mut m = Msg::new(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK);
        m.push(&ifinfomsg(0, IFF_UP, IFF_UP));
        m.attr_str(IFLA_IFNAME, name);
        self.transact(m, || format!("set {name} up")).map(drop)
    }

    /// The index of interface `name` in this socket's namespace.
    pub fn link_index(&mut self, name: &str) -> Result<u32, NetlinkError> {
        let mut m = Msg::new(RTM_GETLINK, NLM_F_REQUEST);
        m.push(&ifinfomsg(0, 0, 0));
        m.attr_str(IFLA_IFNAME, name);
        let body = self.transact(m, || format!("look up interface {name}"))?;
        if body.len() < 16 {
            return Err(NetlinkError {
                what: format!("look up interface {name}"),
                cause: io::Error::new(io::ErrorKind::InvalidData, "short RTM_NEWLINK reply"),
            });
        }
        Ok(u32_at(&body, 4))
    }

    /// Adds `addr/prefix` to interface `index`.
    pub fn add_address(
        &mut self,
        index: u32,
        addr: Ipv4Addr,
        prefix: u8,
    ) -> Result<(), NetlinkError> {
        let mut m = Msg::new(
            RTM_NEWADDR,
            NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL,
        );
        let mut hdr = [0u8; 8];
        hdr[0] = libc::AF_INET as u8;
        hdr[1] = prefix;
        hdr[4..8].copy_from_slice(&index.to_ne_bytes());
        m.push(&hdr);
        m.attr(IFA_LOCAL, &addr.octets());
        m.attr(IFA_ADDRESS, &addr.octets());
        self.transact(m, || format!("add address {addr}/{prefix}"))
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
        let mut m = Msg::new(
            RTM_NEWROUTE,
            NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL,
        );
        let mut hdr = [0u8; 12];
        hdr[0] = libc::AF_INET as u8;
        hdr[1] = prefix;
        hdr[4] = RT_TABLE_MAIN;
        hdr[5] = RTPROT_STATIC;
        hdr[6] = RT_SCOPE_UNIVERSE;
        hdr[7] = RTN_UNICAST;
        m.push(&hdr);
        m.attr(RTA_DST, &dst.octets());
        m.attr(RTA_GATEWAY, &gateway.octets());
        m.attr_u32(RTA_OIF, index);
        self.transact(m, || format!("add route {dst}/{prefix} via {gateway}"))
            .map(drop)
    }

    /// Adds a permanent neighbour entry `ip` → `mac` on interface `index`.
    pub fn add_neighbour(
        &mut self,
        index: u32,
        ip: Ipv4Addr,
        mac: Mac,
    ) -> Result<(), NetlinkError> {
        let mut m = Msg::new(
            RTM_NEWNEIGH,
            NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE,
        );
        let mut hdr = [0u8; 12];
        hdr[0] = libc::AF_INET as u8;
        hdr[4..8].copy_from_slice(&index.to_ne_bytes());
        hdr[8..10].copy_from_slice(&NUD_PERMANENT.to_ne_bytes());
        m.push(&hdr);
        m.attr(NDA_DST, &ip.octets());
        m.attr(NDA_LLADDR, &mac);
        self.transact(m, || format!("add neighbour {ip}")).map(drop)
    }

    /// Adds a root qdisc of `kind` with raw `options` (none when empty) on interface `index`.
    pub fn add_root_qdisc(
        &mut self,
        index: u32,
        kind: &str,
        options: Option<&[u8]>,
    ) -> Result<(), NetlinkError> {
        let mut m = Msg::new(
            RTM_NEWQDISC,
            NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL,
        );
        let mut hdr = [0u8; 20];
        hdr[4..8].copy_from_slice(&index.to_ne_bytes());
        hdr[8..12].copy_from_slice(&0x8000_0000u32.to_ne_bytes()); // handle 8000:
        hdr[12..16].copy_from_slice(&TC_H_ROOT.to_ne_bytes());
        m.push(&hdr);
        m.attr_str(TCA_KIND, kind);
        if let Some(opts) = options {
            m.attr(TCA_OPTIONS, opts);
        }
        self.transact(m, || format!("add {kind} qdisc")).map(drop)
    }
}

trait RawFdU32 {
    fn as_raw_fd_u32(&self) -> u32;
}

impl RawFdU32 for BorrowedFd<'_> {
    fn as_raw_fd_u32(&self) -> u32 {
        use std::os::fd::AsRawFd;
        self.as_fd().as_raw_fd() as u32
    }
}

fn ifinfomsg(index: u32, flags: u32, change: u32) -> [u8; 16] {
    let mut h = [0u8; 16];
    h[0] = libc::AF_UNSPEC as u8;
    h[4..8].copy_from_slice(&index.to_ne_bytes());
    h[8..12].copy_from_slice(&flags.to_ne_bytes());
    h[12..16].copy_from_slice(&change.to_ne_bytes());
    h
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_ne_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

fn u16_at(b: &[u8], off: usize) -> u16 {
    u16::from_ne_bytes([b[off], b[off + 1]])
}

fn align4(n: usize) -> usize {
    (n + 3) & !3
}
