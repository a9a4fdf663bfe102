//! Socket options std and socket2 do not wrap, and waiting for readability with a nanosecond
//! timeout. The forced buffers and UDP GSO go through nix; `TCP_INFO` (in neither nix nor
//! socket2) is read by hand.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, ppoll};
use nix::sys::socket::{setsockopt, sockopt};
use nix::sys::time::TimeSpec;

/// Sets `SO_RCVBUFFORCE` (needs CAP_NET_ADMIN: may exceed `net.core.rmem_max`).
pub fn force_recv_buffer(fd: BorrowedFd<'_>, bytes: usize) -> io::Result<()> {
    setsockopt(&fd, sockopt::RcvBufForce, &clamp_int(bytes)).map_err(io::Error::from)
}

/// Sets `SO_SNDBUFFORCE` (needs CAP_NET_ADMIN: may exceed `net.core.wmem_max`).
pub fn force_send_buffer(fd: BorrowedFd<'_>, bytes: usize) -> io::Result<()> {
    setsockopt(&fd, sockopt::SndBufForce, &clamp_int(bytes)).map_err(io::Error::from)
}

/// The kernel takes buffer sizes as a C int.
fn clamp_int(bytes: usize) -> usize {
    bytes.min(libc::c_int::MAX as usize)
}

/// Turns on UDP generic segmentation offload for `fd`: every datagram sent is then cut by the
/// kernel into `segment`-byte datagrams (the last may be shorter), late in the stack, so one
/// pass through UDP/IP/routing serves up to 64 datagrams. Linux 4.18 and later.
pub fn set_udp_segment(fd: BorrowedFd<'_>, segment: u16) -> io::Result<()> {
    setsockopt(&fd, sockopt::UdpGsoSegment, &libc::c_int::from(segment)).map_err(io::Error::from)
}

/// Waits until `fd` is readable or `timeout` passes (`None`: forever). Returns whether it is
/// readable; an interrupted wait counts as not readable. `ppoll`, so sub-millisecond waits
/// are honoured (a link emulator releases frames on a nanosecond schedule).
pub fn wait_readable(fd: BorrowedFd<'_>, timeout: Option<Duration>) -> io::Result<bool> {
    let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
    match ppoll(&mut fds, timeout.map(TimeSpec::from_duration), None) {
        Ok(n) => Ok(n > 0),
        Err(nix::errno::Errno::EINTR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// What TCP_INFO says about a connection at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpInfo {
    /// Retransmitted segments since the connection started.
    pub total_retrans: u64,
    /// Congestion window in bytes (segments × MSS).
    pub cwnd_bytes: u64,
    /// Smoothed RTT in microseconds.
    pub rtt_us: u32,
    /// RTT variance in microseconds.
    pub rttvar_us: u32,
    /// Path MTU.
    pub pmtu: u32,
}

/// Reads TCP_INFO; `None` when the socket is not TCP or the call fails.
pub fn tcp_info(fd: BorrowedFd<'_>) -> Option<TcpInfo> {
    let info = read_tcp_info(fd)?;
    Some(TcpInfo {
        total_retrans: u64::from(info.tcpi_total_retrans),
        cwnd_bytes: u64::from(info.tcpi_snd_cwnd) * u64::from(info.tcpi_snd_mss),
        rtt_us: info.tcpi_rtt,
        rttvar_us: info.tcpi_rttvar,
        pmtu: info.tcpi_pmtu,
    })
}

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

/// Sets an integer socket option that no crate names (packet-socket options).
#[expect(unsafe_code)]
pub(crate) fn set_int_option(
    fd: BorrowedFd<'_>,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `value` is a c_int on this frame and its exact size is passed; setsockopt only
    // reads it. The descriptor is borrowed, so open for the call.
    let rc =
        unsafe { libc::setsockopt(fd.as_raw_fd(), level, name, (&raw const value).cast(), len) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// An empty, non-blocking send: tells the kernel to transmit what a mapped TX ring (AF_PACKET
/// or AF_XDP) holds. The caller decides what each error means for its ring.
#[expect(unsafe_code)]
pub(crate) fn kick_tx_ring(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: an empty send (null buffer of length 0, no address) tells the kernel to send
    // from the ring; nothing is read from or written to our memory.
    let rc = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            std::ptr::null(),
            0,
            libc::MSG_DONTWAIT,
            std::ptr::null(),
            0,
        )
    };
    if rc >= 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream, UdpSocket};
    use std::os::fd::AsFd;

    #[test]
    fn tcp_info_reads_a_live_connection_and_refuses_udp() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let info = tcp_info(c.as_fd()).unwrap();
        assert!(info.cwnd_bytes > 0);
        assert!(info.pmtu > 0);
        let u = UdpSocket::bind("127.0.0.1:0").unwrap();
        assert_eq!(tcp_info(u.as_fd()), None);
    }

    #[test]
    fn readability_waits_and_times_out() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let t = std::time::Instant::now();
        assert!(!wait_readable(rx.as_fd(), Some(Duration::from_micros(1500))).unwrap());
        assert!(t.elapsed() >= Duration::from_micros(1500));
        tx.send_to(b"x", rx.local_addr().unwrap()).unwrap();
        assert!(wait_readable(rx.as_fd(), Some(Duration::from_secs(2))).unwrap());
    }

    #[test]
    fn udp_gso_and_forced_buffers_apply_or_say_why() {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        set_udp_segment(s.as_fd(), 1200).unwrap();
        let r = socket2::SockRef::from(&s);
        match force_recv_buffer(s.as_fd(), 4 << 20) {
            // The kernel doubles the value for bookkeeping.
            Ok(()) => assert!(r.recv_buffer_size().unwrap() >= 4 << 20),
            Err(e) => assert_eq!(e.raw_os_error(), Some(libc::EPERM), "{e}"),
        }
        match force_send_buffer(s.as_fd(), 1 << 20) {
            Ok(()) => assert!(r.send_buffer_size().unwrap() >= 1 << 20),
            Err(e) => assert_eq!(e.raw_os_error(), Some(libc::EPERM), "{e}"),
        }
        assert!(set_int_option(s.as_fd(), libc::SOL_SOCKET, 0x7fff, 1).is_err());
    }
}
