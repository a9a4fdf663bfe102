//! TCP receive without the copy (`TCP_ZEROCOPY_RECEIVE`, Linux 4.18+): the receiver maps a
//! window of its socket (`mmap` of the TCP socket, read-only, shared) and asks the kernel to
//! put the received pages into it instead of copying them out. Only whole, page-aligned,
//! order-0 page fragments can be mapped; the bytes before the next such fragment come back
//! as a "skip hint" and are read with an ordinary `read`.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::ptr::NonNull;

/// `struct tcp_zerocopy_receive` of the kernel's uapi `linux/tcp.h` (the layout since 5.11;
/// older kernels take a shorter prefix of it, and `optlen` says how much was meant). libc
/// does not carry it.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct ZerocopyReceive {
    /// In: start of the mapping.
    address: u64,
    /// In: bytes to map; out: bytes mapped.
    length: u32,
    /// Out: bytes at the head of the queue that cannot be mapped (read them by copy).
    recv_skip_hint: u32,
    /// Out: bytes in the receive queue.
    inq: u32,
    /// Out: pending socket error (negative errno) or 0.
    err: i32,
    /// In: a buffer for small remainders copied in the same call (0: none).
    copybuf_address: u64,
    /// In/out: its size / bytes copied into it.
    copybuf_len: i32,
    /// In: flags (`TCP_RECEIVE_ZEROCOPY_FLAG_TLB_CLEAN_HINT`).
    flags: u32,
    /// In: ancillary data buffer (0: none).
    msg_control: u64,
    /// In/out: its length.
    msg_controllen: u64,
    /// Out: message flags.
    msg_flags: u32,
    /// Must be 0.
    reserved: u32,
}

/// What one zero-copy receive call did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Received {
    /// Bytes now mapped at the start of the window (whole pages).
    pub mapped: usize,
    /// Bytes at the head of the queue the kernel could not map: read them with `read`.
    pub skip: usize,
    /// Bytes still in the receive queue after the call.
    pub inq: usize,
}

/// A receive window: a read-only shared mapping of a TCP socket into which the kernel maps
/// received pages. Unmapped when dropped.
#[derive(Debug)]
pub struct ZerocopyWindow {
    ptr: NonNull<u8>,
    len: usize,
}

/// The page size of this machine.
pub fn page_size() -> usize {
    // A power of two the kernel guarantees; 4096 if sysconf cannot say.
    nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .and_then(|p| usize::try_from(p).ok())
        .unwrap_or(4096)
}

/// Caps the segment size of `fd` (`TCP_MAXSEG`) at the largest whole number of pages that
/// fits in `mss`: set on a socket before it connects (or on a listener, for the connections
/// it accepts), it is the MSS this end announces, so the peer sends page-multiple segments,
/// which the receiver can map. The kernel takes at most 32767 (`MAX_TCP_WINDOW`), so on
/// 4 KiB pages the largest is 28672 (7 pages). Returns the size set.
pub fn set_page_segments(fd: BorrowedFd<'_>, mss: u32) -> io::Result<u32> {
    let page = u32::try_from(page_size()).unwrap_or(4096);
    let seg = (mss.min(MAX_USER_MSS) / page).max(1) * page;
    nix::sys::socket::setsockopt(&fd, nix::sys::socket::sockopt::TcpMaxSeg, &seg)
        .map_err(io::Error::from)?;
    Ok(seg)
}

/// Turns on `SO_ZEROCOPY` (Linux 4.14+) so [`send_zerocopy`] may pin the sender's pages
/// instead of copying them.
pub fn enable_send_zerocopy(fd: BorrowedFd<'_>) -> io::Result<()> {
    const SO_ZEROCOPY: libc::c_int = 60;
    crate::socket::set_int_option(fd, libc::SOL_SOCKET, SO_ZEROCOPY, 1)
}

/// Sends `buf` with `MSG_ZEROCOPY`: the kernel pins the pages and reports on the error queue
/// when it is done with them ([`drain_send_completions`]); `buf` must not change until
/// then. On loopback the kernel copies them anyway before delivery (`skb_orphan_frags_rx`).
#[expect(unsafe_code)]
pub fn send_zerocopy(fd: BorrowedFd<'_>, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: `buf` is live and readable for its length for the call; the pages stay
    // pinned by the kernel afterwards, which is safe for memory Rust owns as long as it is
    // not freed before completion: callers pass a buffer that outlives the socket's sends
    // and drain completions (the worst case otherwise is data changing in flight, not
    // memory unsafety: the kernel holds its own page references).
    let n = unsafe {
        libc::send(
            fd.as_raw_fd(),
            buf.as_ptr().cast(),
            buf.len(),
            libc::MSG_ZEROCOPY,
        )
    };
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}

/// An in-memory file (`memfd_create`) holding `data`, for [`send_file`]: its pages are the
/// kernel's own (shmem), so a socket can send them by reference, without the copy a `write`
/// makes, and loopback and veth deliver them without copying them again (unlike pinned user
/// pages, [`send_zerocopy`]).
#[expect(unsafe_code)]
pub fn memory_file(name: &str, data: &[u8]) -> io::Result<std::os::fd::OwnedFd> {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    let cname = std::ffi::CString::new(name).map_err(|_| io::ErrorKind::InvalidInput)?;
    // SAFETY: `cname` is a valid NUL-terminated string for the call.
    let fd = unsafe { libc::memfd_create(cname.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by memfd_create and is owned by nobody else.
    let owned = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
    let mut f = std::fs::File::from(owned);
    f.write_all(data)?;
    Ok(f.into())
}

/// Sends `count` bytes of `file` from `offset` on the socket `sock` (`sendfile`): the
/// socket takes references to the file's pages instead of a copy. Returns the bytes sent.
#[expect(unsafe_code)]
pub fn send_file(
    sock: BorrowedFd<'_>,
    file: BorrowedFd<'_>,
    offset: u64,
    count: usize,
) -> io::Result<usize> {
    let mut off = libc::off_t::try_from(offset).map_err(|_| io::ErrorKind::InvalidInput)?;
    // SAFETY: both descriptors are live for the call and `off` is a valid out-pointer.
    let n = unsafe { libc::sendfile(sock.as_raw_fd(), file.as_raw_fd(), &mut off, count) };
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}

/// What the `MSG_ZEROCOPY` completions read from a socket's error queue said.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Completions {
    /// Notifications read (each covers a range of sends).
    pub notifications: u64,
    /// Sends they completed.
    pub sends: u64,
    /// Of those, sends the kernel copied after all (`SO_EE_CODE_ZEROCOPY_COPIED`): the path
    /// delivered locally (loopback, veth) or the device could not take the pages.
    pub copied: u64,
}

impl std::ops::AddAssign for Completions {
    fn add_assign(&mut self, o: Completions) {
        self.notifications += o.notifications;
        self.sends += o.sends;
        self.copied += o.copied;
    }
}

/// `SO_EE_ORIGIN_ZEROCOPY` of `linux/errqueue.h`.
const SO_EE_ORIGIN_ZEROCOPY: u8 = 5;
/// `SO_EE_CODE_ZEROCOPY_COPIED` of `linux/errqueue.h`.
const SO_EE_CODE_ZEROCOPY_COPIED: u8 = 1;

/// Reads the pending `MSG_ZEROCOPY` completions on `fd`'s error queue (each one holds socket
/// option memory; left alone they make sends fail with ENOBUFS) and counts what they say.
pub fn drain_send_completions(fd: BorrowedFd<'_>) -> Completions {
    use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
    let mut c = Completions::default();
    let mut cmsg = nix::cmsg_space!(libc::sock_extended_err, libc::sockaddr_in6);
    loop {
        let Ok(msg) = recvmsg::<()>(
            fd.as_raw_fd(),
            &mut [],
            Some(&mut cmsg),
            MsgFlags::MSG_ERRQUEUE | MsgFlags::MSG_DONTWAIT,
        ) else {
            return c;
        };
        c.notifications += 1;
        let Ok(cmsgs) = msg.cmsgs() else {
            continue;
        };
        for m in cmsgs {
            let e = match m {
                ControlMessageOwned::Ipv4RecvErr(e, _) | ControlMessageOwned::Ipv6RecvErr(e, _) => {
                    e
                }
                _ => continue,
            };
            if e.ee_origin != SO_EE_ORIGIN_ZEROCOPY || e.ee_errno != 0 {
                continue;
            }
            // The notification covers sends ee_info ..= ee_data (a 32-bit counter that wraps).
            let n = u64::from(e.ee_data.wrapping_sub(e.ee_info)) + 1;
            c.sends += n;
            if e.ee_code & SO_EE_CODE_ZEROCOPY_COPIED != 0 {
                c.copied += n;
            }
        }
    }
}

/// The largest `TCP_MAXSEG` the kernel accepts.
const MAX_USER_MSS: u32 = 32767;

impl ZerocopyWindow {
    /// Maps a window of `len` bytes (rounded up to whole pages) of the TCP socket `fd`.
    /// Fails (ENODEV, EINVAL) where the kernel does not offer zero-copy receive.
    #[expect(unsafe_code)]
    pub fn new(fd: BorrowedFd<'_>, len: usize) -> io::Result<ZerocopyWindow> {
        let page = page_size();
        let len = len.max(page).div_ceil(page) * page;
        // SAFETY: a fresh read-only shared mapping at an address the kernel chooses; for a
        // TCP socket the kernel only reserves the range (tcp_mmap) and fills it on request.
        // No existing memory is affected.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = NonNull::new(p.cast()).ok_or_else(|| io::Error::other("mmap returned null"))?;
        Ok(ZerocopyWindow { ptr, len })
    }

    /// The window's size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the window is empty (never: it is at least one page).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Asks the kernel to map up to the window's size of received bytes. The pages mapped by
    /// the previous call are released by this one (the kernel zaps the range first), so a
    /// slice from [`ZerocopyWindow::mapped`] must not be held across it; the borrow rules
    /// enforce that. Errors: EINVAL/ENOPROTOOPT/EOPNOTSUPP where the kernel refuses.
    #[expect(unsafe_code)]
    pub fn receive(&mut self, fd: BorrowedFd<'_>) -> io::Result<Received> {
        let mut z = ZerocopyReceive {
            address: self.ptr.as_ptr() as u64,
            length: u32::try_from(self.len).unwrap_or(!0xfff_u32),
            ..ZerocopyReceive::default()
        };
        let mut optlen = std::mem::size_of::<ZerocopyReceive>() as libc::socklen_t;
        // SAFETY: `z` is a live repr(C) value of exactly `optlen` bytes that the kernel reads
        // and writes; `address`/`length` name this value's own mapping of this socket, which
        // stays mapped for the call (we hold &mut self). The descriptor is borrowed, so open.
        let rc = unsafe {
            libc::getsockopt(
                fd.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_ZEROCOPY_RECEIVE,
                (&raw mut z).cast::<libc::c_void>(),
                &raw mut optlen,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        if z.err < 0 {
            return Err(io::Error::from_raw_os_error(-z.err));
        }
        Ok(Received {
            mapped: z.length as usize,
            skip: z.recv_skip_hint as usize,
            inq: z.inq as usize,
        })
    }

    /// The first `n` bytes of the window, as mapped by the last [`ZerocopyWindow::receive`]
    /// (`n` is clamped to the window).
    #[expect(unsafe_code)]
    pub fn mapped(&self, n: usize) -> &[u8] {
        // SAFETY: the window is `len` readable bytes for the life of self; pages not mapped
        // by the kernel read as... they are not read: callers pass what `receive` reported
        // mapped, and the slice's borrow ends before the next `receive` (&mut self).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), n.min(self.len)) }
    }
}

impl Drop for ZerocopyWindow {
    #[expect(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: ptr/len are exactly what mmap returned; no borrow of the mapping outlives
        // self.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsFd;

    use super::*;

    /// Receives `total` bytes on `rx` by zero-copy, reading skip hints by copy; returns the
    /// bytes (mapped and copied, in order) and how many were mapped.
    fn drain(rx: &mut TcpStream, total: usize) -> (Vec<u8>, usize) {
        let mut w = ZerocopyWindow::new(rx.as_fd(), 1 << 20).unwrap();
        let mut got = Vec::with_capacity(total);
        let mut mapped = 0;
        let mut buf = vec![0u8; 1 << 16];
        while got.len() < total {
            let r = w.receive(rx.as_fd()).unwrap();
            got.extend_from_slice(w.mapped(r.mapped));
            mapped += r.mapped;
            let want = if r.skip > 0 {
                r.skip
            } else if r.mapped == 0 {
                1
            } else {
                0
            };
            let mut left = want;
            while left > 0 {
                let n = rx.read(&mut buf[..left.min(1 << 16)]).unwrap();
                assert!(n > 0, "peer closed early");
                got.extend_from_slice(&buf[..n]);
                left -= n;
            }
        }
        (got, mapped)
    }

    #[test]
    fn bytes_arrive_intact_mapped_or_copied() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let total = 8 << 20;
        let data: Vec<u8> = (0..total).map(|i| (i * 7 % 251) as u8).collect();
        let sent = data.clone();
        let t = std::thread::spawn(move || {
            let mut s = TcpStream::connect(addr).unwrap();
            s.write_all(&sent).unwrap();
        });
        let (mut rx, _) = l.accept().unwrap();
        let (got, mapped) = drain(&mut rx, total);
        t.join().unwrap();
        assert_eq!(got.len(), total);
        assert!(got == data, "bytes differ");
        assert!(mapped <= total && mapped % page_size() == 0);
    }

    /// Sends `total` bytes to a receiver whose announced MSS is `maxseg` (if any) and returns
    /// the share of bytes mapped.
    fn mapped_share(maxseg: Option<u32>, zerocopy_send: bool, total: usize) -> f64 {
        let sock =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        if let Some(m) = maxseg {
            set_page_segments(sock.as_fd(), m).unwrap();
        }
        sock.bind(
            &"127.0.0.1:0"
                .parse::<std::net::SocketAddr>()
                .unwrap()
                .into(),
        )
        .unwrap();
        sock.listen(1).unwrap();
        let l: TcpListener = sock.into();
        let addr = l.local_addr().unwrap();
        let data: Vec<u8> = (0..total).map(|i| (i * 7 % 251) as u8).collect();
        let sent = data.clone();
        let t = std::thread::spawn(move || {
            let mut s = TcpStream::connect(addr).unwrap();
            if zerocopy_send {
                enable_send_zerocopy(s.as_fd()).unwrap();
            }
            for c in sent.chunks(128 << 10) {
                if !zerocopy_send {
                    s.write_all(c).unwrap();
                    continue;
                }
                let mut off = 0;
                while off < c.len() {
                    match send_zerocopy(s.as_fd(), &c[off..]) {
                        Ok(n) => off += n,
                        Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {}
                        Err(e) => panic!("{e}"),
                    }
                    drain_send_completions(s.as_fd());
                }
            }
        });
        let (mut rx, _) = l.accept().unwrap();
        let (got, mapped) = drain(&mut rx, total);
        t.join().unwrap();
        assert!(got == data, "bytes differ");
        mapped as f64 / total as f64
    }

    #[test]
    #[ignore = "experiment: prints what this kernel maps on loopback"]
    fn loopback_mapped_share() {
        for zc in [false, true] {
            for m in [None, Some(32767), Some(16384), Some(4096)] {
                let share = mapped_share(m, zc, 64 << 20);
                eprintln!("MSG_ZEROCOPY {zc} maxseg {m:?}: mapped share {share:.3}");
            }
        }
    }

    #[test]
    fn window_is_whole_pages() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let _c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (rx, _) = l.accept().unwrap();
        let w = ZerocopyWindow::new(rx.as_fd(), 5000).unwrap();
        assert_eq!(w.len() % page_size(), 0);
        assert!(w.len() >= 5000);
    }
}
