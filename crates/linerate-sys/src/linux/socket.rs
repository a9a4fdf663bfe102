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

pub use crate::tcp_info::TcpInfo;

/// Linux's "infinite" slow-start threshold (`TCP_INFINITE_SSTHRESH`), in segments.
const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// Reads TCP_INFO; `None` when the socket is not TCP or the call fails. A field the running
/// kernel does not report (its answer ends before it) is `None`.
pub fn tcp_info(fd: BorrowedFd<'_>) -> Option<TcpInfo> {
    let (i, len, flags) = read_tcp_info(fd)?;
    Some(decode(&i, len, flags))
}

/// `TcpInfo` from the kernel's answer: `len` bytes of `i` were written; `flags` is the byte
/// after `tcpi_snd_wscale`/`tcpi_rcv_wscale`, whose lowest bit (on little-endian machines;
/// highest on big-endian) is `tcpi_delivery_rate_app_limited`.
fn decode(i: &libc::tcp_info, len: usize, flags: u8) -> TcpInfo {
    use std::mem::offset_of;
    let mss = u64::from(i.tcpi_snd_mss);
    // A field is known when the kernel's answer reaches its end.
    let some32 = |offset: usize, v: u32| (offset + 4 <= len).then_some(v);
    let some64 = |offset: usize, v: u64| (offset + 8 <= len).then_some(v);
    let app_limited_bit = if cfg!(target_endian = "little") {
        flags & 1
    } else {
        flags >> 7
    };
    TcpInfo {
        total_retrans: u64::from(i.tcpi_total_retrans),
        cwnd_bytes: u64::from(i.tcpi_snd_cwnd) * mss,
        rtt_us: i.tcpi_rtt,
        rttvar_us: i.tcpi_rttvar,
        pmtu: i.tcpi_pmtu,
        snd_mss: i.tcpi_snd_mss,
        ssthresh_bytes: (i.tcpi_snd_ssthresh < INFINITE_SSTHRESH)
            .then(|| u64::from(i.tcpi_snd_ssthresh) * mss),
        min_rtt_us: some32(offset_of!(libc::tcp_info, tcpi_min_rtt), i.tcpi_min_rtt)
            .filter(|&r| r != u32::MAX && r != 0),
        rcv_rtt_us: Some(i.tcpi_rcv_rtt).filter(|&r| r != 0),
        busy_us: some64(offset_of!(libc::tcp_info, tcpi_busy_time), i.tcpi_busy_time),
        rwnd_limited_us: some64(
            offset_of!(libc::tcp_info, tcpi_rwnd_limited),
            i.tcpi_rwnd_limited,
        ),
        sndbuf_limited_us: some64(
            offset_of!(libc::tcp_info, tcpi_sndbuf_limited),
            i.tcpi_sndbuf_limited,
        ),
        delivery_rate_bps: some64(
            offset_of!(libc::tcp_info, tcpi_delivery_rate),
            i.tcpi_delivery_rate,
        )
        .map(|b| b.saturating_mul(8)),
        // The bit came with the delivery rate (4.9).
        delivery_app_limited: some64(offset_of!(libc::tcp_info, tcpi_delivery_rate), 0)
            .map(|_| app_limited_bit == 1),
        pacing_rate_bps: some64(
            offset_of!(libc::tcp_info, tcpi_pacing_rate),
            i.tcpi_pacing_rate,
        )
        .filter(|&r| r != u64::MAX)
        .map(|b| b.saturating_mul(8)),
        lost_segments: Some(i.tcpi_lost),
        reordering: Some(i.tcpi_reordering),
        reord_seen: some32(
            offset_of!(libc::tcp_info, tcpi_reord_seen),
            i.tcpi_reord_seen,
        )
        .map(u64::from),
        dsack_dups: some32(
            offset_of!(libc::tcp_info, tcpi_dsack_dups),
            i.tcpi_dsack_dups,
        )
        .map(u64::from),
        notsent_bytes: some32(
            offset_of!(libc::tcp_info, tcpi_notsent_bytes),
            i.tcpi_notsent_bytes,
        )
        .map(u64::from),
        unacked_bytes: Some(u64::from(i.tcpi_unacked) * mss),
        peer_window_bytes: some32(offset_of!(libc::tcp_info, tcpi_snd_wnd), i.tcpi_snd_wnd)
            .map(u64::from),
        rcv_wnd_bytes: some32(offset_of!(libc::tcp_info, tcpi_rcv_wnd), i.tcpi_rcv_wnd)
            .map(u64::from),
        rcv_space_bytes: Some(u64::from(i.tcpi_rcv_space)),
        rcv_ssthresh_bytes: Some(u64::from(i.tcpi_rcv_ssthresh)),
        bytes_acked: some64(
            offset_of!(libc::tcp_info, tcpi_bytes_acked),
            i.tcpi_bytes_acked,
        ),
        bytes_received: some64(
            offset_of!(libc::tcp_info, tcpi_bytes_received),
            i.tcpi_bytes_received,
        ),
        bytes_sent: some64(
            offset_of!(libc::tcp_info, tcpi_bytes_sent),
            i.tcpi_bytes_sent,
        ),
        bytes_retrans: some64(
            offset_of!(libc::tcp_info, tcpi_bytes_retrans),
            i.tcpi_bytes_retrans,
        ),
        rcv_ooo_packets: some32(
            offset_of!(libc::tcp_info, tcpi_rcv_ooopack),
            i.tcpi_rcv_ooopack,
        )
        .map(u64::from),
    }
}

/// The byte after the window scales (offset 7): it holds the app-limited bit and the Fast
/// Open failure code, bit fields libc's `tcp_info` leaves out (as padding).
const FLAGS_OFFSET: usize = 7;

/// The kernel's answer: the struct, how many of its bytes the kernel wrote, and the byte of
/// flags libc's struct has no field for.
#[expect(unsafe_code)]
fn read_tcp_info(fd: BorrowedFd<'_>) -> Option<(libc::tcp_info, usize, u8)> {
    const SIZE: usize = std::mem::size_of::<libc::tcp_info>();
    // Read into bytes so the bit fields in libc's padding can be read too; zeroed, so the
    // fields an older kernel does not write read as 0 (and `len` says they are unknown).
    let mut buf = [0u8; SIZE];
    let mut len = SIZE as libc::socklen_t;
    // SAFETY: `buf` is live and writable for SIZE bytes and `len` holds SIZE; the kernel
    // writes at most `len` bytes and updates `len`. The descriptor is borrowed, so open for
    // the call.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            buf.as_mut_ptr().cast::<libc::c_void>(),
            &raw mut len,
        )
    };
    if rc != 0 {
        return None;
    }
    // SAFETY: `buf` holds SIZE initialised bytes, and tcp_info is integers only, for which
    // every bit pattern is a valid value; read_unaligned because `buf` is byte-aligned.
    let info = unsafe { std::ptr::read_unaligned(buf.as_ptr().cast::<libc::tcp_info>()) };
    Some((info, (len as usize).min(SIZE), buf[FLAGS_OFFSET]))
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
    fn tcp_info_counts_what_moved_and_knows_the_limit_clocks() {
        use std::io::{Read, Write};
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mut s, _) = l.accept().unwrap();
        c.write_all(&[7u8; 100_000]).unwrap();
        let mut got = vec![0u8; 100_000];
        s.read_exact(&mut got).unwrap();
        let tx = tcp_info(c.as_fd()).unwrap();
        let rx = tcp_info(s.as_fd()).unwrap();
        // This kernel (6.x) answers every field through tcpi_rcv_wnd.
        assert!(tx.busy_us.is_some() && tx.rwnd_limited_us.is_some());
        assert!(tx.sndbuf_limited_us.is_some() && tx.delivery_app_limited.is_some());
        assert!(tx.peer_window_bytes.is_some_and(|w| w > 0));
        assert!(rx.rcv_wnd_bytes.is_some_and(|w| w > 0));
        assert!(tx.bytes_acked.is_some_and(|b| b >= 100_000), "{tx:?}");
        assert!(rx.bytes_received.is_some_and(|b| b >= 100_000), "{rx:?}");
        assert!(tx.bytes_sent.is_some_and(|b| b >= 100_000));
        assert!(tx.snd_mss > 0 && tx.cwnd_bytes >= u64::from(tx.snd_mss));
        // No loss on loopback: the slow-start threshold is still "infinite".
        assert_eq!(tx.ssthresh_bytes, None);
        assert!(tx.min_rtt_us.is_some());
    }

    #[test]
    fn fields_past_an_older_kernels_answer_are_unknown() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (info, len, flags) = read_tcp_info(c.as_fd()).unwrap();
        assert!(len >= std::mem::offset_of!(libc::tcp_info, tcpi_rcv_wnd) + 4);
        assert_eq!(
            std::mem::offset_of!(libc::tcp_info, tcpi_rto),
            FLAGS_OFFSET + 1
        );
        // 4.9's answer ends after tcpi_delivery_rate: the limit clocks (4.10) are unknown.
        let v4_9 = std::mem::offset_of!(libc::tcp_info, tcpi_busy_time);
        let old = decode(&info, v4_9, flags);
        assert_eq!(
            (old.busy_us, old.rwnd_limited_us, old.sndbuf_limited_us),
            (None, None, None)
        );
        assert!(old.delivery_rate_bps.is_some() && old.delivery_app_limited.is_some());
        assert_eq!(
            (old.peer_window_bytes, old.bytes_sent, old.rcv_wnd_bytes),
            (None, None, None)
        );
        assert_eq!(old.cwnd_bytes, decode(&info, len, flags).cwnd_bytes);
        // The flags byte sits between the window scales and tcpi_rto; the app-limited bit is
        // its lowest on this (little-endian) machine.
        assert_eq!(decode(&info, len, 1).delivery_app_limited, Some(true));
        assert_eq!(decode(&info, len, 0b110).delivery_app_limited, Some(false));
        // ssthresh: "infinite" is None, a finite one is segments × MSS.
        let mut finite = info;
        finite.tcpi_snd_ssthresh = 10;
        finite.tcpi_snd_mss = 1000;
        assert_eq!(decode(&finite, len, 0).ssthresh_bytes, Some(10_000));
        finite.tcpi_snd_ssthresh = INFINITE_SSTHRESH;
        assert_eq!(decode(&finite, len, 0).ssthresh_bytes, None);
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
