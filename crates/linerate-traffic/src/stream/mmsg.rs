//! Batched datagram I/O with sendmmsg/recvmmsg: one system call moves up to a batch of
//! datagrams. The buffers, iovecs and message headers are allocated once per stream; the hot
//! loop only rewrites datagram headers.

use std::io;
use std::os::fd::RawFd;

/// A batch of datagram slots and the kernel structures that point into them.
pub struct Batch {
    slot_len: usize,
    bufs: Vec<u8>,
    // The headers point into `iovs` and the iovecs into `bufs`; neither vector is resized after
    // `new`, so the pointers stay valid for the life of the batch.
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
}

impl std::fmt::Debug for Batch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch")
            .field("slots", &self.hdrs.len())
            .field("slot_len", &self.slot_len)
            .finish()
    }
}

impl Batch {
    /// `slots` datagrams of up to `slot_len` bytes each, filled from `pattern`.
    #[expect(
        unsafe_code,
        reason = "mmsghdr is a C struct; zeroed is its empty value"
    )]
    pub fn new(slots: usize, slot_len: usize, pattern: &[u8]) -> Batch {
        let slots = slots.max(1);
        let slot_len = slot_len.max(1);
        let mut bufs = vec![0u8; slots * slot_len];
        for chunk in bufs.chunks_mut(slot_len) {
            let n = chunk.len().min(pattern.len());
            chunk[..n].copy_from_slice(&pattern[..n]);
        }
        let mut iovs: Vec<libc::iovec> = bufs
            .chunks_mut(slot_len)
            .map(|c| libc::iovec {
                iov_base: c.as_mut_ptr().cast(),
                iov_len: slot_len,
            })
            .collect();
        let hdrs = iovs
            .iter_mut()
            .map(|iov| {
                // SAFETY: mmsghdr is plain old data; all-zero is a valid empty header.
                let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
                h.msg_hdr.msg_iov = std::ptr::from_mut(iov);
                h.msg_hdr.msg_iovlen = 1;
                h
            })
            .collect();
        Batch {
            slot_len,
            bufs,
            iovs,
            hdrs,
        }
    }

    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.hdrs.len()
    }

    /// Slot `i` for writing a datagram.
    pub fn slot_mut(&mut self, i: usize) -> &mut [u8] {
        let s = i * self.slot_len;
        &mut self.bufs[s..s + self.slot_len]
    }

    /// The datagram received in slot `i` by the last [`Batch::recv`].
    pub fn received(&self, i: usize) -> &[u8] {
        let s = i * self.slot_len;
        let n = (self.hdrs[i].msg_len as usize).min(self.slot_len);
        &self.bufs[s..s + n]
    }

    /// Sends the first `n` slots on a connected socket; returns how many went.
    #[expect(unsafe_code, reason = "sendmmsg has no safe wrapper in std or socket2")]
    pub fn send(&mut self, fd: RawFd, n: usize) -> io::Result<usize> {
        let n = n.min(self.hdrs.len());
        for iov in &mut self.iovs[..n] {
            iov.iov_len = self.slot_len;
        }
        // SAFETY: the first `n` headers point at live iovecs, which point at live slots of
        // `slot_len` bytes inside `bufs`; the kernel only reads them (and writes msg_len).
        let r = unsafe { libc::sendmmsg(fd, self.hdrs.as_mut_ptr(), n as libc::c_uint, 0) };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r as usize)
        }
    }

    /// Receives up to a batch, waiting (up to the socket's receive timeout) for the first.
    #[expect(unsafe_code, reason = "recvmmsg has no safe wrapper in std or socket2")]
    pub fn recv(&mut self, fd: RawFd) -> io::Result<usize> {
        let n = self.hdrs.len();
        for h in &mut self.hdrs {
            h.msg_len = 0;
            h.msg_hdr.msg_flags = 0;
        }
        // SAFETY: every header points at a live iovec describing a writable slot of
        // `slot_len` bytes inside `bufs`; no name or control buffers are given; the timeout
        // pointer is null (the socket's SO_RCVTIMEO applies to the first datagram).
        let r = unsafe {
            libc::recvmmsg(
                fd,
                self.hdrs.as_mut_ptr(),
                n as libc::c_uint,
                libc::MSG_WAITFORONE,
                std::ptr::null_mut(),
            )
        };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r as usize)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_batch_crosses_a_socket_pair() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        a.connect(b.local_addr().unwrap()).unwrap();
        b.set_read_timeout(Some(std::time::Duration::from_secs(2)))
            .unwrap();
        let mut tx = Batch::new(8, 32, &[7u8; 32]);
        for i in 0..8 {
            tx.slot_mut(i)[0] = i as u8;
        }
        assert_eq!(tx.send(a.as_raw_fd(), 8).unwrap(), 8);
        let mut rx = Batch::new(16, 64, &[]);
        let mut got = Vec::new();
        while got.len() < 8 {
            let n = rx.recv(b.as_raw_fd()).unwrap();
            for i in 0..n {
                assert_eq!(rx.received(i).len(), 32);
                got.push(rx.received(i)[0]);
            }
        }
        assert_eq!(got, (0..8).collect::<Vec<u8>>());
    }
}
