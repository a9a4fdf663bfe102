//! AF_PACKET sockets: raw frames of one interface, with the options a userspace bridge needs
//! (virtio-net headers, not seeing its own transmissions, bypassing the qdisc, promiscuous
//! mode, large buffers) and the kernel's drop counter. Later: TPACKET_V3 and AF_XDP rings
//! beside this module.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

const SOL_PACKET: libc::c_int = 263;
const PACKET_ADD_MEMBERSHIP: libc::c_int = 1;
const PACKET_STATISTICS: libc::c_int = 6;
const PACKET_MR_PROMISC: libc::c_ushort = 1;
const PACKET_VNET_HDR: libc::c_int = 15;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;

/// Size of `struct virtio_net_hdr`, in front of every frame when
/// [`PacketOptions::vnet_hdr`] is on.
pub const VNET_HDR_LEN: usize = 10;

/// How to open a packet socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PacketOptions {
    /// Prefix every frame with a `struct virtio_net_hdr` ([`VNET_HDR_LEN`] bytes), so partial
    /// checksums and GSO metadata survive a bridge (`PACKET_VNET_HDR`).
    pub vnet_hdr: bool,
    /// Do not receive the frames this host transmits on the interface
    /// (`PACKET_IGNORE_OUTGOING`, Linux 4.20).
    pub ignore_outgoing: bool,
    /// Hand sent frames straight to the driver, past the qdisc (`PACKET_QDISC_BYPASS`).
    pub qdisc_bypass: bool,
    /// Receive frames for every destination (`PACKET_MR_PROMISC` membership).
    pub promiscuous: bool,
    /// Receive buffer in bytes, forced past `net.core.rmem_max` (needs CAP_NET_ADMIN).
    pub recv_buffer: Option<usize>,
    /// Send buffer in bytes, forced past `net.core.wmem_max` (needs CAP_NET_ADMIN).
    pub send_buffer: Option<usize>,
}

/// Opens a raw packet socket on interface `ifname` of the calling thread's namespace, bound
/// to it for every protocol.
pub fn open(ifname: &str, opts: &PacketOptions) -> io::Result<OwnedFd> {
    // Protocol 0 receives nothing until the socket is bound to one interface below, so no
    // frame of another interface slips in.
    let fd = raw_socket()?;
    let b = fd.as_fd();
    let set = |name, on: bool| {
        if on {
            crate::socket::set_int_option(b, SOL_PACKET, name, 1)
        } else {
            Ok(())
        }
    };
    set(PACKET_VNET_HDR, opts.vnet_hdr)?;
    set(PACKET_IGNORE_OUTGOING, opts.ignore_outgoing)?;
    set(PACKET_QDISC_BYPASS, opts.qdisc_bypass)?;
    if let Some(bytes) = opts.recv_buffer {
        crate::socket::force_recv_buffer(b, bytes)?;
    }
    if let Some(bytes) = opts.send_buffer {
        crate::socket::force_send_buffer(b, bytes)?;
    }
    let index = nix::net::if_::if_nametoindex(ifname).map_err(io::Error::from)?;
    let index = libc::c_int::try_from(index)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "interface index too large"))?;
    bind_all_protocols(b, index)?;
    if opts.promiscuous {
        add_promiscuous_membership(b, index)?;
    }
    Ok(fd)
}

#[expect(unsafe_code)]
pub(crate) fn raw_socket() -> io::Result<OwnedFd> {
    // SAFETY: socket(2) takes plain integers.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just returned by socket(2) and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn bind_all_protocols(fd: BorrowedFd<'_>, ifindex: libc::c_int) -> io::Result<()> {
    bind_protocol(fd, ifindex, libc::ETH_P_ALL as u16)
}

/// Binds packet socket `fd` to interface `ifindex` for `protocol` (host order; 0 receives
/// nothing, for a send-only socket).
#[expect(unsafe_code)]
pub(crate) fn bind_protocol(
    fd: BorrowedFd<'_>,
    ifindex: libc::c_int,
    protocol: u16,
) -> io::Result<()> {
    // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
    let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    addr.sll_family = libc::AF_PACKET as libc::c_ushort;
    addr.sll_protocol = protocol.to_be();
    addr.sll_ifindex = ifindex;
    let len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
    // SAFETY: addr is a valid sockaddr_ll on this frame and len is its size; bind only reads
    // it. The descriptor is borrowed, so open for the call.
    let rc = unsafe { libc::bind(fd.as_raw_fd(), (&raw const addr).cast(), len) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[expect(unsafe_code)]
fn add_promiscuous_membership(fd: BorrowedFd<'_>, ifindex: libc::c_int) -> io::Result<()> {
    let mreq = libc::packet_mreq {
        mr_ifindex: ifindex,
        mr_type: PACKET_MR_PROMISC,
        mr_alen: 0,
        mr_address: [0; 8],
    };
    let len = std::mem::size_of::<libc::packet_mreq>() as libc::socklen_t;
    // SAFETY: mreq is a valid packet_mreq on this frame and len is its size; setsockopt only
    // reads it. The descriptor is borrowed, so open for the call.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            SOL_PACKET,
            PACKET_ADD_MEMBERSHIP,
            (&raw const mreq).cast(),
            len,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A packet socket's kernel counters since the last read (reading resets them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PacketStats {
    /// Frames received.
    pub packets: u32,
    /// Frames dropped because the socket's receive buffer was full.
    pub drops: u32,
}

/// Reads and resets the counters of packet socket `fd` (`PACKET_STATISTICS`).
#[expect(unsafe_code)]
pub fn statistics(fd: BorrowedFd<'_>) -> io::Result<PacketStats> {
    let mut stats = libc::tpacket_stats {
        tp_packets: 0,
        tp_drops: 0,
    };
    let mut len = std::mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
    // SAFETY: stats is a writable tpacket_stats of len bytes on this frame; the kernel writes
    // at most len bytes. The descriptor is borrowed, so open for the call.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            SOL_PACKET,
            PACKET_STATISTICS,
            (&raw mut stats).cast(),
            &raw mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(PacketStats {
        packets: stats.tp_packets,
        drops: stats.tp_drops,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mmsg::{Batch, Wait};
    use std::net::UdpSocket;
    use std::time::{Duration, Instant};

    #[test]
    fn loopback_frames_are_seen_and_counted() {
        if !crate::is_root() {
            eprintln!("SKIP: packet sockets need CAP_NET_RAW (not root)");
            return;
        }
        // In a namespace of our own, so only this test's datagrams cross its loopback.
        let seen = crate::netns::run_in_new(|| -> io::Result<(usize, PacketStats)> {
            crate::netlink::Rtnl::open()?
                .set_up(1, "lo")
                .map_err(io::Error::other)?;
            let opts = PacketOptions {
                ignore_outgoing: false,
                recv_buffer: Some(1 << 20),
                ..PacketOptions::default()
            };
            let fd = open("lo", &opts)?;
            let rx = UdpSocket::bind("127.0.0.1:0")?;
            let tx = UdpSocket::bind("127.0.0.1:0")?;
            for _ in 0..5 {
                tx.send_to(b"linerate-sys packet test", rx.local_addr()?)?;
            }
            let mut batch = Batch::new(16, 2048);
            let mut frames = 0;
            let deadline = Instant::now() + Duration::from_secs(2);
            while frames < 5 && Instant::now() < deadline {
                crate::socket::wait_readable(fd.as_fd(), Some(Duration::from_millis(50)))?;
                let n = batch.recv(fd.as_fd(), Wait::Never)?;
                frames += (0..n)
                    .filter(|&i| {
                        batch
                            .datagram(i)
                            .windows(24)
                            .any(|w| w == b"linerate-sys packet test")
                    })
                    .count();
            }
            Ok((frames, statistics(fd.as_fd())?))
        })
        .unwrap()
        .unwrap();
        // Loopback shows each datagram once on the way in (outgoing copies are the same skb
        // seen again: at least five either way).
        assert!(seen.0 >= 5, "{seen:?}");
        assert!(seen.1.packets >= 5, "{seen:?}");
        assert_eq!(seen.1.drops, 0);
    }

    #[test]
    fn a_missing_interface_is_refused() {
        if !crate::is_root() {
            eprintln!("SKIP: packet sockets need CAP_NET_RAW (not root)");
            return;
        }
        let e = open("lr-sys-none0", &PacketOptions::default()).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENODEV), "{e}");
    }
}
