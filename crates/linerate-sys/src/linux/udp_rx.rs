//! Receive-side socket options for UDP: `UDP_GRO` (the kernel hands a run of same-sized
//! datagrams up as one, with the segment size in a control message) and busy polling
//! (`SO_BUSY_POLL`, `SO_PREFER_BUSY_POLL`, `SO_BUSY_POLL_BUDGET`: the receiving thread polls
//! the device queue instead of sleeping until an interrupt). Linux only.

use std::io;
use std::os::fd::BorrowedFd;

use crate::linux::socket::set_int_option;

/// `SO_PREFER_BUSY_POLL` (Linux 5.11; not named by the libc crate).
const SO_PREFER_BUSY_POLL: libc::c_int = 69;
/// `SO_BUSY_POLL_BUDGET` (Linux 5.11; not named by the libc crate).
const SO_BUSY_POLL_BUDGET: libc::c_int = 70;

/// The control-message level and type under which the kernel reports a GRO segment size.
pub const GRO_CMSG: (libc::c_int, libc::c_int) = (libc::SOL_UDP, libc::UDP_GRO);

/// Turns on `UDP_GRO` for `fd` (Linux 5.0): datagrams of one flow may then arrive coalesced,
/// each receive carrying a `(SOL_UDP, UDP_GRO)` control message with the segment size. On
/// loopback a GSO send reaches such a socket unsplit.
pub fn set_udp_gro(fd: BorrowedFd<'_>) -> io::Result<()> {
    set_int_option(fd, libc::SOL_UDP, libc::UDP_GRO, 1)
}

/// What [`set_busy_poll`] got: each option's outcome, so the caller can say what the kernel
/// refused (raising the values above the sysctls needs CAP_NET_ADMIN; `prefer` and `budget`
/// need Linux 5.11).
#[derive(Debug)]
pub struct BusyPoll {
    /// `SO_BUSY_POLL` (microseconds to poll on a blocking receive).
    pub usec: io::Result<()>,
    /// `SO_PREFER_BUSY_POLL`.
    pub prefer: io::Result<()>,
    /// `SO_BUSY_POLL_BUDGET` (packets per poll).
    pub budget: io::Result<()>,
}

/// Asks for busy polling of `usec` microseconds per receive, preferred over interrupts, with
/// a budget of `budget` packets per poll. Busy polling works only where the packets come in
/// through a NAPI device queue (a NIC); on loopback and veth the options are accepted but
/// there is no queue to poll.
pub fn set_busy_poll(fd: BorrowedFd<'_>, usec: u32, budget: u16) -> BusyPoll {
    let usec = libc::c_int::try_from(usec).unwrap_or(libc::c_int::MAX);
    BusyPoll {
        usec: set_int_option(fd, libc::SOL_SOCKET, libc::SO_BUSY_POLL, usec),
        prefer: set_int_option(fd, libc::SOL_SOCKET, SO_PREFER_BUSY_POLL, 1),
        budget: set_int_option(
            fd,
            libc::SOL_SOCKET,
            SO_BUSY_POLL_BUDGET,
            libc::c_int::from(budget),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::os::fd::AsFd;

    #[test]
    fn gro_and_busy_poll_are_set_or_refused_with_a_reason() {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        if let Err(e) = set_udp_gro(s.as_fd()) {
            assert_eq!(e.raw_os_error(), Some(libc::ENOPROTOOPT), "{e}");
        }
        let b = set_busy_poll(s.as_fd(), 50, 8);
        for r in [b.usec, b.prefer, b.budget] {
            if let Err(e) = r {
                let code = e.raw_os_error();
                assert!(
                    code == Some(libc::EPERM) || code == Some(libc::ENOPROTOOPT),
                    "{e}"
                );
            }
        }
    }
}
