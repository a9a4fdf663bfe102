//! Batched datagram I/O: `sendmmsg(2)` and `recvmmsg(2)` over a fixed set of buffers, so one
//! system call moves up to a batch of datagrams. The buffers, iovecs and headers are allocated
//! once; each call only re-points the headers at them.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// `count` datagram slots of `slot` bytes each.
pub struct Batch {
    slot: usize,
    buf: Vec<u8>,
    lens: Vec<usize>,
    iov: Vec<libc::iovec>,
    hdr: Vec<libc::mmsghdr>,
}

impl std::fmt::Debug for Batch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch")
            .field("slot", &self.slot)
            .field("count", &self.lens.len())
            .finish()
    }
}

fn empty_iovec() -> libc::iovec {
    libc::iovec {
        iov_base: std::ptr::null_mut(),
        iov_len: 0,
    }
}

#[expect(unsafe_code)]
fn empty_mmsghdr() -> libc::mmsghdr {
    // SAFETY: mmsghdr is a plain C struct of integers and raw pointers; all-zero bytes are a
    // valid value (null pointers, zero lengths), which is what the kernel expects for unused
    // fields such as msg_name and msg_control.
    unsafe { std::mem::zeroed() }
}

impl Batch {
    /// A batch of `count` (≥ 1) slots of `slot` (≥ 1) bytes.
    pub fn new(count: usize, slot: usize) -> Batch {
        let count = count.clamp(1, 1024);
        let slot = slot.max(1);
        Batch {
            slot,
            buf: vec![0; count * slot],
            lens: vec![slot; count],
            iov: (0..count).map(|_| empty_iovec()).collect(),
            hdr: (0..count).map(|_| empty_mmsghdr()).collect(),
        }
    }

    /// Slots in the batch.
    pub fn count(&self) -> usize {
        self.lens.len()
    }

    /// Slot `i`, whole.
    pub fn slot_mut(&mut self, i: usize) -> &mut [u8] {
        &mut self.buf[i * self.slot..(i + 1) * self.slot]
    }

    /// Sets the datagram length of slot `i` (at most the slot size).
    pub fn set_len(&mut self, i: usize, len: usize) {
        self.lens[i] = len.min(self.slot);
    }

    /// The datagram length of slot `i`.
    pub fn len_of(&self, i: usize) -> usize {
        self.lens[i]
    }

    /// The datagram in slot `i` (after a receive: as received).
    pub fn datagram(&self, i: usize) -> &[u8] {
        &self.buf[i * self.slot..i * self.slot + self.lens[i]]
    }

    /// Points headers `from..from + n` at their slots, `full` slots (receive) or datagram lengths.
    fn wire(&mut self, from: usize, n: usize, full: bool) {
        let base = self.buf.as_mut_ptr();
        for i in from..from + n {
            let len = if full { self.slot } else { self.lens[i] };
            // The pointer stays inside `buf` (i < count, slot-sized slots).
            self.iov[i] = libc::iovec {
                iov_base: base.wrapping_add(i * self.slot).cast(),
                iov_len: len,
            };
            let h = &mut self.hdr[i];
            h.msg_hdr.msg_iov = &mut self.iov[i];
            h.msg_hdr.msg_iovlen = 1;
            h.msg_len = 0;
        }
    }

    /// Sends slots `from..from + n` (connected socket); returns how many datagrams left.
    #[expect(unsafe_code)]
    pub fn send(&mut self, fd: BorrowedFd<'_>, from: usize, n: usize) -> io::Result<usize> {
        let n = n.min(self.count().saturating_sub(from));
        if n == 0 {
            return Ok(0);
        }
        self.wire(from, n, false);
        // SAFETY: headers from..from+n point at iovecs in `self.iov`, which point at `n`
        // in-bounds regions of `self.buf`; all three live in `self` and are neither moved nor
        // reallocated during the call. msg_name/msg_control are null (connected socket). The
        // kernel only reads the buffers and writes msg_len.
        let r = unsafe {
            libc::sendmmsg(
                fd.as_raw_fd(),
                self.hdr.as_mut_ptr().add(from),
                n as libc::c_uint,
                0,
            )
        };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r as usize)
        }
    }

    /// Receives up to a batch, waiting (up to the socket's receive timeout) for the first one
    /// only; datagram lengths are then in [`Batch::datagram`].
    #[expect(unsafe_code)]
    pub fn recv(&mut self, fd: BorrowedFd<'_>) -> io::Result<usize> {
        let n = self.count();
        self.wire(0, n, true);
        // SAFETY: as in `send`: every header points at its own slot of `self.buf`, slot bytes
        // long, all owned by `self` for the duration of the call. The kernel writes at most
        // `iov_len` bytes per slot and the received length into msg_len. No timeout pointer.
        let r = unsafe {
            libc::recvmmsg(
                fd.as_raw_fd(),
                self.hdr.as_mut_ptr(),
                n as libc::c_uint,
                libc::MSG_WAITFORONE,
                std::ptr::null_mut(),
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        let got = r as usize;
        for i in 0..got {
            // A datagram longer than its slot is cut (MSG_TRUNC); it then reads as slot-long,
            // a length callers size their slots never to receive legitimately.
            let h = &self.hdr[i];
            self.lens[i] = if h.msg_hdr.msg_flags & libc::MSG_TRUNC != 0 {
                self.slot
            } else {
                (h.msg_len as usize).min(self.slot)
            };
        }
        Ok(got)
    }
}

/// Sets SO_RCVBUFFORCE (root only: above `net.core.rmem_max`).
#[expect(unsafe_code)]
pub fn force_recv_buffer(fd: BorrowedFd<'_>, bytes: usize) -> io::Result<()> {
    let v = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    // SAFETY: as in `set_udp_segment`: a c_int on this frame, its size passed, read only.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            (&raw const v).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `UDP_SEGMENT` from linux/udp.h (the libc crate has it only for some C libraries).
const UDP_SEGMENT: libc::c_int = 103;

/// Turns on UDP generic segmentation offload for `fd`: every datagram sent is then cut by the
/// kernel into `segment`-byte datagrams (the last may be shorter), late in the stack, so one
/// pass through UDP/IP/routing serves up to 64 datagrams. Linux 4.18 and later.
#[expect(unsafe_code)]
pub fn set_udp_segment(fd: BorrowedFd<'_>, segment: u16) -> io::Result<()> {
    let v = libc::c_int::from(segment);
    // SAFETY: `v` is a c_int on this frame and its exact size is passed; setsockopt only
    // reads it. The descriptor is borrowed, so open for the call.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_UDP,
            UDP_SEGMENT,
            (&raw const v).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::os::fd::AsFd;

    #[test]
    fn a_batch_goes_out_and_comes_back_in_one_call_each() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_secs(2)))
            .unwrap();
        let mut out = Batch::new(8, 100);
        for i in 0..8 {
            out.slot_mut(i)[0] = i as u8;
            out.set_len(i, 10 + i);
        }
        assert_eq!(out.send(tx.as_fd(), 0, 8).unwrap(), 8);
        let mut inb = Batch::new(16, 101);
        let mut got = Vec::new();
        while got.len() < 8 {
            let n = inb.recv(rx.as_fd()).unwrap();
            for i in 0..n {
                let d = inb.datagram(i);
                got.push((d[0], d.len()));
            }
        }
        let want: Vec<(u8, usize)> = (0..8).map(|i| (i as u8, 10 + i)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn gso_cuts_one_send_into_segments() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        rx.set_read_timeout(Some(std::time::Duration::from_secs(2)))
            .unwrap();
        if set_udp_segment(tx.as_fd(), 18).is_err() {
            eprintln!("SKIP: this kernel has no UDP_SEGMENT");
            return;
        }
        let mut out = Batch::new(2, 18 * 10);
        out.set_len(0, 18 * 10);
        out.set_len(1, 18 * 3);
        assert_eq!(out.send(tx.as_fd(), 0, 2).unwrap(), 2);
        let mut inb = Batch::new(64, 19);
        let mut lens = Vec::new();
        while lens.len() < 13 {
            let n = inb.recv(rx.as_fd()).unwrap();
            lens.extend((0..n).map(|i| inb.datagram(i).len()));
        }
        assert_eq!(lens, vec![18; 13]);
    }

    #[test]
    fn oversized_datagrams_are_marked_by_the_slot_length() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        tx.send(&[7u8; 500]).unwrap();
        let mut inb = Batch::new(4, 33);
        assert_eq!(inb.recv(rx.as_fd()).unwrap(), 1);
        assert_eq!(inb.datagram(0).len(), 33);
    }
}
