//! Batched datagram I/O: `sendmmsg(2)` and `recvmmsg(2)` over a fixed set of buffers, so one
//! system call moves up to a batch of datagrams or frames. The buffers, iovecs and headers are
//! allocated once, when the batch is made; each call only re-points the headers, so the hot
//! loops of the pps engine and of the lab's link emulator allocate nothing per batch.
//!
//! Hand-written rather than nix's `sendmmsg`/`recvmmsg`: those build their headers from
//! iterators and decode a source address and control messages for every datagram received,
//! work the hot paths measured here do not need; this type hands the kernel the same headers
//! every time.
//!
//! Linux and FreeBSD (11 and later) both have the calls with the same meaning and flags
//! (`MSG_WAITFORONE`, `MSG_DONTWAIT`, `MSG_TRUNC` in `msg_flags`); only the integer types
//! differ (the count is `unsigned int` on Linux and `size_t` on FreeBSD, `msg_len` `unsigned
//! int` and `ssize_t`, `msg_iovlen` `size_t` and `int`), so the casts below are `as _`.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// The most slots a batch has (Linux's `UIO_MAXIOV` caps one call at 1024 messages; FreeBSD
/// takes more, the same cap keeps both alike).
pub const MAX_SLOTS: usize = 1024;

/// `count` datagram slots of `slot` bytes each, and the headers that point at them.
pub struct Batch {
    slot: usize,
    buf: Vec<u8>,
    lens: Vec<usize>,
    truncated: Vec<bool>,
    iov: Vec<libc::iovec>,
    hdr: Vec<libc::mmsghdr>,
    /// Control-message space per slot, in 8-byte words (so each slot's part is aligned for
    /// `cmsghdr`); empty unless [`Batch::with_control`] asked for it.
    ctl: Vec<u64>,
    ctl_len: Vec<usize>,
}

/// Control-message words per slot: room for a few integer messages.
const CTL_WORDS: usize = 8;

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

/// How [`Batch::recv`] waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Block (up to the socket's receive timeout) for the first datagram only, then take what
    /// else is queued (`MSG_WAITFORONE`).
    ForOne,
    /// Never block: take what is queued; none waiting reads as 0 datagrams, not an error.
    Never,
}

impl Batch {
    /// A batch of `count` slots (1 to [`MAX_SLOTS`]) of `slot` bytes (at least 1).
    pub fn new(count: usize, slot: usize) -> Batch {
        let count = count.clamp(1, MAX_SLOTS);
        let slot = slot.max(1);
        Batch {
            slot,
            buf: vec![0; count * slot],
            lens: vec![slot; count],
            truncated: vec![false; count],
            iov: (0..count).map(|_| empty_iovec()).collect(),
            hdr: (0..count).map(|_| empty_mmsghdr()).collect(),
            ctl: Vec::new(),
            ctl_len: vec![0; count],
        }
    }

    /// The same, with room for control messages on each receive (read them with
    /// [`Batch::control_int`]).
    pub fn with_control(count: usize, slot: usize) -> Batch {
        let mut b = Batch::new(count, slot);
        b.ctl = vec![0; b.count() * CTL_WORDS];
        b
    }

    /// Slots in the batch.
    pub fn count(&self) -> usize {
        self.lens.len()
    }

    /// Bytes per slot.
    pub fn slot_size(&self) -> usize {
        self.slot
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

    /// The datagram in slot `i` (after a receive: as received, cut to the slot size).
    pub fn datagram(&self, i: usize) -> &[u8] {
        &self.buf[i * self.slot..i * self.slot + self.lens[i]]
    }

    /// Whether datagram `i` of the last receive was longer than its slot (and so was cut: it
    /// then reads as slot-long, a length callers size their slots never to receive whole).
    pub fn truncated(&self, i: usize) -> bool {
        self.truncated[i]
    }

    /// Points header `i` at `len` bytes from `base`.
    fn point(&mut self, i: usize, base: *mut u8, len: usize) {
        self.iov[i] = libc::iovec {
            iov_base: base.cast(),
            iov_len: len,
        };
        let h = &mut self.hdr[i];
        h.msg_hdr.msg_iov = &raw mut self.iov[i];
        h.msg_hdr.msg_iovlen = 1;
        h.msg_hdr.msg_flags = 0;
        h.msg_len = 0;
    }

    /// Points headers `from..from + n` at their slots: whole slots (receive) or the datagram
    /// lengths (send).
    fn wire_slots(&mut self, from: usize, n: usize, whole: bool) {
        let base = self.buf.as_mut_ptr();
        for i in from..from + n {
            let len = if whole { self.slot } else { self.lens[i] };
            // The pointer stays inside `buf` (i < count, slot-sized slots).
            self.point(i, base.wrapping_add(i * self.slot), len);
        }
    }

    /// Sends slots `from..from + n` on a connected socket; returns how many datagrams left.
    pub fn send(&mut self, fd: BorrowedFd<'_>, from: usize, n: usize) -> io::Result<usize> {
        let n = n.min(self.count().saturating_sub(from));
        if n == 0 {
            return Ok(0);
        }
        self.wire_slots(from, n, false);
        self.send_wired(fd, from, n)
    }

    /// Sends the caller's `frames` (up to [`Batch::count`] of them; the rest wait for the next
    /// call) on a connected or bound socket, without copying them into the slots; returns how
    /// many the kernel took.
    pub fn send_frames<F: AsRef<[u8]>>(
        &mut self,
        fd: BorrowedFd<'_>,
        frames: &[F],
    ) -> io::Result<usize> {
        let n = frames.len().min(self.count());
        if n == 0 {
            return Ok(0);
        }
        for (i, f) in frames[..n].iter().enumerate() {
            let f = f.as_ref();
            // The kernel only reads through this pointer (sendmmsg); the cast to *mut is what
            // struct iovec's type demands.
            self.point(i, f.as_ptr().cast_mut(), f.len());
        }
        self.send_wired(fd, 0, n)
    }

    #[expect(unsafe_code)]
    fn send_wired(&mut self, fd: BorrowedFd<'_>, from: usize, n: usize) -> io::Result<usize> {
        // SAFETY: headers from..from+n were just pointed at iovecs in `self.iov`, which point
        // at n readable regions: slots of `self.buf`, or the caller's frames borrowed for this
        // call. `self.iov`/`self.hdr` are neither moved nor reallocated during the call
        // (&mut self). msg_name/msg_control are null. The kernel only reads the buffers and
        // writes msg_len. `from + n <= count` (checked by both callers).
        let r =
            unsafe { libc::sendmmsg(fd.as_raw_fd(), self.hdr.as_mut_ptr().add(from), n as _, 0) };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r as usize)
        }
    }

    /// Receives up to a batch; how long it waits is `wait`. Datagrams are then in
    /// [`Batch::datagram`], cut ones marked by [`Batch::truncated`].
    pub fn recv(&mut self, fd: BorrowedFd<'_>, wait: Wait) -> io::Result<usize> {
        self.recv_up_to(fd, wait, self.count())
    }

    /// Receives into the first `n` slots only (at least 1, at most the batch): a caller that
    /// sizes its batches to what the socket holds asks for fewer than it has room for.
    #[expect(unsafe_code)]
    pub fn recv_up_to(&mut self, fd: BorrowedFd<'_>, wait: Wait, n: usize) -> io::Result<usize> {
        let n = n.clamp(1, self.count());
        self.wire_slots(0, n, true);
        if !self.ctl.is_empty() {
            let base = self.ctl.as_mut_ptr();
            for i in 0..n {
                let h = &mut self.hdr[i].msg_hdr;
                // Each slot's words, inside `ctl` (i < count).
                h.msg_control = base.wrapping_add(i * CTL_WORDS).cast();
                h.msg_controllen = (CTL_WORDS * 8) as _;
            }
        }
        let flags = match wait {
            Wait::ForOne => libc::MSG_WAITFORONE,
            Wait::Never => libc::MSG_DONTWAIT,
        };
        // SAFETY: every header points at its own slot of `self.buf`, slot bytes long, and
        // (with control space) at its own CTL_WORDS words of `self.ctl`, all owned by `self`
        // for the duration of the call (&mut self). The kernel writes at most `iov_len` bytes
        // per slot and `msg_controllen` bytes of control messages, the received length into
        // msg_len, the flags into msg_flags and the control length into msg_controllen. No
        // timeout pointer.
        let r = unsafe {
            libc::recvmmsg(
                fd.as_raw_fd(),
                self.hdr.as_mut_ptr(),
                n as _,
                flags,
                std::ptr::null_mut(),
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            return match (wait, e.kind()) {
                (Wait::Never, io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => Ok(0),
                _ => Err(e),
            };
        }
        let got = r as usize;
        for i in 0..got {
            let h = &self.hdr[i];
            let cut = h.msg_hdr.msg_flags & libc::MSG_TRUNC != 0;
            self.truncated[i] = cut;
            self.lens[i] = if cut {
                self.slot
            } else {
                (h.msg_len as usize).min(self.slot)
            };
            #[allow(
                clippy::unnecessary_cast,
                reason = "size_t on Linux, socklen_t on FreeBSD"
            )]
            let ctl_len = h.msg_hdr.msg_controllen as usize;
            self.ctl_len[i] = if self.ctl.is_empty() {
                0
            } else {
                ctl_len.min(CTL_WORDS * 8)
            };
        }
        Ok(got)
    }

    /// The integer in the control message `(level, kind)` of the last receive's datagram `i`
    /// (e.g. the segment size of `UDP_GRO`), if the kernel sent one.
    #[expect(unsafe_code)]
    pub fn control_int(&self, i: usize, level: libc::c_int, kind: libc::c_int) -> Option<i32> {
        let len = *self.ctl_len.get(i)?;
        if len == 0 {
            return None;
        }
        // A header describing just slot i's control bytes, for the CMSG_* walkers.
        let mut h = empty_mmsghdr().msg_hdr;
        h.msg_control = self.ctl[i * CTL_WORDS..].as_ptr().cast_mut().cast();
        h.msg_controllen = len as _;
        // SAFETY: msg_control points at slot i's CTL_WORDS * 8 bytes of `self.ctl` (borrowed
        // for this call), `len` of which the kernel filled with well-formed control messages.
        // CMSG_FIRSTHDR/CMSG_NXTHDR only return headers that lie inside msg_controllen; each
        // header's data is read only when its cmsg_len covers a whole c_int, read unaligned.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&raw const h);
            while !c.is_null() {
                let whole = (*c).cmsg_len as usize
                    >= libc::CMSG_LEN(std::mem::size_of::<libc::c_int>() as _) as usize;
                if (*c).cmsg_level == level && (*c).cmsg_type == kind && whole {
                    return Some(std::ptr::read_unaligned(
                        libc::CMSG_DATA(c).cast::<libc::c_int>(),
                    ));
                }
                c = libc::CMSG_NXTHDR(&raw const h, c);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::os::fd::AsFd;
    use std::time::Duration;

    fn pair() -> (UdpSocket, UdpSocket) {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        rx.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        (tx, rx)
    }

    #[test]
    fn a_batch_goes_out_and_comes_back_in_one_call_each() {
        let (tx, rx) = pair();
        let mut out = Batch::new(8, 100);
        for i in 0..8 {
            out.slot_mut(i)[0] = i as u8;
            out.set_len(i, 10 + i);
        }
        assert_eq!(out.send(tx.as_fd(), 0, 8).unwrap(), 8);
        let mut inb = Batch::new(16, 101);
        let mut got = Vec::new();
        while got.len() < 8 {
            let n = inb.recv(rx.as_fd(), Wait::ForOne).unwrap();
            for i in 0..n {
                let d = inb.datagram(i);
                assert!(!inb.truncated(i));
                got.push((d[0], d.len()));
            }
        }
        let want: Vec<(u8, usize)> = (0..8).map(|i| (i as u8, 10 + i)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_partial_range_sends_only_those_slots() {
        let (tx, rx) = pair();
        let mut out = Batch::new(4, 8);
        for i in 0..4 {
            out.slot_mut(i).fill(i as u8);
        }
        assert_eq!(
            out.send(tx.as_fd(), 2, 10).unwrap(),
            2,
            "clamped to the batch"
        );
        assert_eq!(out.send(tx.as_fd(), 4, 1).unwrap(), 0);
        let mut inb = Batch::new(4, 8);
        let mut firsts = Vec::new();
        while firsts.len() < 2 {
            let n = inb.recv(rx.as_fd(), Wait::ForOne).unwrap();
            firsts.extend((0..n).map(|i| inb.datagram(i)[0]));
        }
        assert_eq!(firsts, [2, 3]);
    }

    #[test]
    fn borrowed_frames_go_out_without_copies_and_at_most_a_batch_at_once() {
        let (tx, rx) = pair();
        let frames: Vec<Vec<u8>> = (0..6u8).map(|i| vec![i; 20 + usize::from(i)]).collect();
        let mut b = Batch::new(4, 1);
        assert_eq!(b.send_frames(tx.as_fd(), &frames).unwrap(), 4);
        assert_eq!(b.send_frames(tx.as_fd(), &frames[4..]).unwrap(), 2);
        assert_eq!(b.send_frames::<&[u8]>(tx.as_fd(), &[]).unwrap(), 0);
        let mut inb = Batch::new(8, 64);
        let mut got = Vec::new();
        while got.len() < 6 {
            let n = inb.recv(rx.as_fd(), Wait::ForOne).unwrap();
            got.extend((0..n).map(|i| inb.datagram(i).to_vec()));
        }
        assert_eq!(got, frames);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn gso_cuts_one_send_into_segments() {
        let (tx, rx) = pair();
        if crate::socket::set_udp_segment(tx.as_fd(), 18).is_err() {
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
            let n = inb.recv(rx.as_fd(), Wait::ForOne).unwrap();
            lens.extend((0..n).map(|i| inb.datagram(i).len()));
        }
        assert_eq!(lens, vec![18; 13]);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_gro_receiver_gets_one_gso_send_whole_with_its_segment_size() {
        let (tx, rx) = pair();
        if crate::socket::set_udp_segment(tx.as_fd(), 18).is_err()
            || crate::udp_rx::set_udp_gro(rx.as_fd()).is_err()
        {
            eprintln!("SKIP: this kernel has no UDP_SEGMENT or UDP_GRO");
            return;
        }
        let mut out = Batch::new(1, 18 * 10);
        out.set_len(0, 18 * 10 - 5);
        assert_eq!(out.send(tx.as_fd(), 0, 1).unwrap(), 1);
        let mut inb = Batch::with_control(8, 18 * 64 + 1);
        let n = inb.recv_up_to(rx.as_fd(), Wait::ForOne, 3).unwrap();
        assert_eq!(n, 1);
        assert_eq!(inb.datagram(0).len(), 175);
        let (level, kind) = crate::udp_rx::GRO_CMSG;
        assert_eq!(inb.control_int(0, level, kind), Some(18));
        assert_eq!(inb.control_int(0, libc::SOL_SOCKET, 12345), None);
        // A plain datagram carries no segment size.
        tx.send(&[1u8; 18]).unwrap();
        let n = inb.recv(rx.as_fd(), Wait::ForOne).unwrap();
        assert_eq!((n, inb.datagram(0).len()), (1, 18));
        assert_eq!(inb.control_int(0, level, kind), None);
    }

    #[test]
    fn oversized_datagrams_are_marked_and_read_slot_long() {
        let (tx, rx) = pair();
        tx.send(&[7u8; 500]).unwrap();
        tx.send(&[8u8; 20]).unwrap();
        let mut inb = Batch::new(4, 33);
        let mut seen = Vec::new();
        while seen.len() < 2 {
            let n = inb.recv(rx.as_fd(), Wait::ForOne).unwrap();
            seen.extend((0..n).map(|i| (inb.datagram(i).len(), inb.truncated(i))));
        }
        assert_eq!(seen, [(33, true), (20, false)]);
    }

    #[test]
    fn a_non_blocking_receive_of_nothing_is_zero_not_an_error() {
        let (tx, rx) = pair();
        let mut inb = Batch::new(4, 16);
        let t = std::time::Instant::now();
        assert_eq!(inb.recv(rx.as_fd(), Wait::Never).unwrap(), 0);
        assert!(t.elapsed() < Duration::from_secs(1));
        tx.send(b"hello").unwrap();
        let mut n = 0;
        for _ in 0..200 {
            n = inb.recv(rx.as_fd(), Wait::Never).unwrap();
            if n > 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(n, 1);
        assert_eq!(inb.datagram(0), b"hello");
        // A blocking receive that times out is an error the caller sees.
        rx.set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        let e = inb.recv(rx.as_fd(), Wait::ForOne).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
    }

    #[test]
    fn sizes_are_clamped() {
        let b = Batch::new(0, 0);
        assert_eq!((b.count(), b.slot_size()), (1, 1));
        assert_eq!(Batch::new(5000, 8).count(), MAX_SLOTS);
    }
}
