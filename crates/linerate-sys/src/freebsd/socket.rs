//! Socket options std and socket2 do not wrap, FreeBSD's way, under the Linux backend's names:
//! `TCP_INFO` in FreeBSD's layout, sharing a port (`SO_REUSEPORT`, and `SO_REUSEPORT_LB` for
//! a load-balanced group), waiting for readability with a nanosecond timeout. Linux's UDP GSO
//! and forced buffer sizes have no FreeBSD counterpart: those functions fail with
//! [`io::ErrorKind::Unsupported`] and a [`NotOnThisOs`] message, and their callers fall back as
//! they do on a Linux kernel without them.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, ppoll};
use nix::sys::socket::{setsockopt, sockopt};
use nix::sys::time::TimeSpec;

use crate::os::NotOnThisOs;

/// Linux's `SO_RCVBUFFORCE`; FreeBSD has none (`kern.ipc.maxsockbuf` caps SO_RCVBUF for root
/// too): always [`io::ErrorKind::Unsupported`].
pub fn force_recv_buffer(_fd: BorrowedFd<'_>, _bytes: usize) -> io::Result<()> {
    Err(NotOnThisOs::linux(
        "a forced receive buffer (SO_RCVBUFFORCE)",
        "no other system has one",
    )
    .instead("kern.ipc.maxsockbuf caps SO_RCVBUF, for root too")
    .into())
}

/// Linux's `SO_SNDBUFFORCE`; FreeBSD has none: always [`io::ErrorKind::Unsupported`].
pub fn force_send_buffer(_fd: BorrowedFd<'_>, _bytes: usize) -> io::Result<()> {
    Err(NotOnThisOs::linux(
        "a forced send buffer (SO_SNDBUFFORCE)",
        "no other system has one",
    )
    .instead("kern.ipc.maxsockbuf caps SO_SNDBUF, for root too")
    .into())
}

/// Linux's UDP generic segmentation offload; FreeBSD's UDP has none: always
/// [`io::ErrorKind::Unsupported`], and senders send one datagram per message.
pub fn set_udp_segment(_fd: BorrowedFd<'_>, _segment: u16) -> io::Result<()> {
    Err(NotOnThisOs::linux(
        "UDP segmentation offload (UDP_SEGMENT)",
        "FreeBSD's UDP has none",
    )
    .instead("one datagram is sent per message")
    .into())
}

/// Lets other sockets bind the same address and port (`SO_REUSEPORT`). BSD's `SO_REUSEADDR`
/// alone refuses a second unicast bind of the same port, which Linux's allows for UDP: the
/// traffic server's per-stream UDP sockets share the listening port this way. Connected
/// sockets get their peer's datagrams (exact 4-tuple match); new peers reach the unconnected
/// one.
pub fn reuse_port(fd: BorrowedFd<'_>) -> io::Result<()> {
    setsockopt(&fd, sockopt::ReusePort, &true).map_err(io::Error::from)
}

/// Joins a load-balanced group on the bound port (`SO_REUSEPORT_LB`, FreeBSD 12 and later):
/// new connections (TCP) or datagrams of new flows (UDP) are spread over the group's sockets
/// by a hash of the 4-tuple, as Linux's `SO_REUSEPORT` does.
pub fn reuse_port_lb(fd: BorrowedFd<'_>) -> io::Result<()> {
    setsockopt(&fd, sockopt::ReusePortLb, &true).map_err(io::Error::from)
}

/// Waits until `fd` is readable or `timeout` passes (`None`: forever). Returns whether it is
/// readable; an interrupted wait counts as not readable.
pub fn wait_readable(fd: BorrowedFd<'_>, timeout: Option<Duration>) -> io::Result<bool> {
    let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
    match ppoll(&mut fds, timeout.map(TimeSpec::from_duration), None) {
        Ok(n) => Ok(n > 0),
        Err(nix::errno::Errno::EINTR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

pub use crate::tcp_info::TcpInfo;

/// FreeBSD's "infinite" slow-start threshold: `TCP_MAXWIN << TCP_MAX_WINSHIFT`, bytes.
const INFINITE_SSTHRESH: u32 = 65_535 << 14;

/// Reads TCP_INFO; `None` when the socket is not TCP or the call fails. What FreeBSD's
/// TCP_INFO does not have (the limit clocks, delivery and pacing rates, byte counters, path
/// MTU, …) stays `None`.
pub fn tcp_info(fd: BorrowedFd<'_>) -> Option<TcpInfo> {
    Some(decode(&read_tcp_info(fd)?))
}

fn decode(info: &libc::tcp_info) -> TcpInfo {
    TcpInfo {
        total_retrans: u64::from(info.tcpi_snd_rexmitpack),
        cwnd_bytes: u64::from(info.tcpi_snd_cwnd),
        rtt_us: info.tcpi_rtt,
        rttvar_us: info.tcpi_rttvar,
        pmtu: 0,
        snd_mss: info.tcpi_snd_mss,
        ssthresh_bytes: (info.tcpi_snd_ssthresh < INFINITE_SSTHRESH)
            .then_some(u64::from(info.tcpi_snd_ssthresh)),
        peer_window_bytes: Some(u64::from(info.tcpi_snd_wnd)),
        // FreeBSD's tcpi_rcv_space is the window it advertises (tp->rcv_wnd).
        rcv_wnd_bytes: Some(u64::from(info.tcpi_rcv_space)),
        rcv_ooo_packets: Some(u64::from(info.tcpi_rcv_ooopack)),
        ..TcpInfo::default()
    }
}

/// The fields read above sit at the same offsets in FreeBSD 12 to 15's `struct tcp_info` (the
/// newer fields took padding, the size stayed 236 bytes), so the libc crate's FreeBSD 12
/// layout reads every supported release.
#[expect(unsafe_code)]
fn read_tcp_info(fd: BorrowedFd<'_>) -> Option<libc::tcp_info> {
    // SAFETY: tcp_info is plain old data (integers only), so all-zero bytes are a valid value.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: `info` is a live, writable tcp_info and `len` holds its size; the kernel writes
    // at most `len` bytes and updates `len`. The descriptor is borrowed, so open for the call.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&raw mut info).cast::<libc::c_void>(),
            &raw mut len,
        )
    };
    (rc == 0).then_some(info)
}

// Run on FreeBSD only; type-checked on Linux by CI's FreeBSD clippy step.
#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream, UdpSocket};
    use std::os::fd::AsFd;

    #[test]
    fn tcp_info_reads_a_loopback_connection_and_refuses_udp() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let info = tcp_info(c.as_fd()).unwrap();
        assert!(info.cwnd_bytes > 0);
        assert_eq!(info.pmtu, 0);
        assert!(info.peer_window_bytes.is_some());
        let u = UdpSocket::bind("127.0.0.1:0").unwrap();
        assert_eq!(tcp_info(u.as_fd()), None);
    }

    #[test]
    fn what_freebsd_lacks_is_unknown_not_zero() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let i = tcp_info(c.as_fd()).unwrap();
        assert_eq!(
            (i.busy_us, i.rwnd_limited_us, i.sndbuf_limited_us),
            (None, None, None)
        );
        assert_eq!(
            (i.delivery_rate_bps, i.min_rtt_us, i.notsent_bytes),
            (None, None, None)
        );
        assert_eq!(
            (i.bytes_acked, i.bytes_received, i.rcv_space_bytes),
            (None, None, None)
        );
        assert_eq!(i.ssthresh_bytes, None, "no loss yet: infinite");
    }

    #[test]
    fn two_udp_sockets_share_a_port_with_reuse_port() {
        use socket2::{Domain, Socket, Type};
        let a = Socket::new(Domain::IPV4, Type::DGRAM, None).unwrap();
        reuse_port(a.as_fd()).unwrap();
        a.bind(
            &"127.0.0.1:0"
                .parse::<std::net::SocketAddr>()
                .unwrap()
                .into(),
        )
        .unwrap();
        let addr = a.local_addr().unwrap();
        let b = Socket::new(Domain::IPV4, Type::DGRAM, None).unwrap();
        reuse_port(b.as_fd()).unwrap();
        b.bind(&addr).unwrap();
        let c = Socket::new(Domain::IPV4, Type::DGRAM, None).unwrap();
        reuse_port_lb(c.as_fd()).unwrap();
        assert_eq!(
            set_udp_segment(a.as_fd(), 1200).unwrap_err().kind(),
            io::ErrorKind::Unsupported
        );
    }
}
