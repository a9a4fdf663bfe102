//! A transmit-only AF_XDP socket: a UMEM (page-aligned memory registered with the kernel,
//! cut into fixed chunks), its fill and completion rings, and a TX ring, all shared with the
//! kernel through mmap; bound to one queue of one interface and kicked with an empty
//! `sendto`. No BPF program is needed to transmit. Copy mode (`XDP_COPY`) works on any driver
//! (veth included): the kernel copies each frame into an skb and hands it to the driver past
//! the qdisc; zero-copy needs the driver's support and is tried only when asked for.
//!
//! Frames are written into a chunk, the chunk's descriptor is put on the TX ring, and the
//! chunk comes back on the completion ring once the kernel is done with it.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::shared_map::SharedMap;

const AF_XDP: libc::c_int = 44;
const SOL_XDP: libc::c_int = 283;
const XDP_MMAP_OFFSETS: libc::c_int = 1;
const XDP_TX_RING: libc::c_int = 3;
const XDP_UMEM_REG: libc::c_int = 4;
const XDP_UMEM_FILL_RING: libc::c_int = 5;
const XDP_UMEM_COMPLETION_RING: libc::c_int = 6;
const XDP_COPY: u16 = 1 << 1;
const XDP_ZEROCOPY: u16 = 1 << 2;
const XDP_PGOFF_TX_RING: i64 = 0x8000_0000;
const XDP_UMEM_PGOFF_FILL_RING: i64 = 0x1_0000_0000;
const XDP_UMEM_PGOFF_COMPLETION_RING: i64 = 0x1_8000_0000;
/// Bytes of one UMEM chunk (the kernel's smallest aligned chunk).
const CHUNK: usize = 2048;

/// `struct xdp_umem_reg` (the current layout; older kernels read its first fields).
#[repr(C)]
struct UmemReg {
    addr: u64,
    len: u64,
    chunk_size: u32,
    headroom: u32,
    flags: u32,
    tx_metadata_len: u32,
}

/// `struct sockaddr_xdp`.
#[repr(C)]
struct SockaddrXdp {
    family: u16,
    flags: u16,
    ifindex: u32,
    queue_id: u32,
    shared_umem_fd: u32,
}

/// `struct xdp_ring_offset`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct RingOffset {
    producer: u64,
    consumer: u64,
    desc: u64,
    flags: u64,
}

/// `struct xdp_mmap_offsets`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct MmapOffsets {
    rx: RingOffset,
    tx: RingOffset,
    fr: RingOffset,
    cr: RingOffset,
}

/// `struct xdp_desc`.
#[repr(C)]
struct Desc {
    addr: u64,
    len: u32,
    options: u32,
}

/// Copy or zero-copy: how the kernel takes frames from the UMEM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XdpMode {
    /// The kernel copies each frame into an skb (any driver).
    Copy,
    /// The driver reads the UMEM directly (drivers with AF_XDP support only).
    ZeroCopy,
}

/// One mapped ring: producer and consumer words, and `size` entries of `entry` bytes.
#[derive(Debug)]
struct Ring {
    map: SharedMap,
    producer: usize,
    consumer: usize,
    desc: usize,
    size: u32,
}

impl Ring {
    fn map(
        fd: BorrowedFd<'_>,
        off: &RingOffset,
        pgoff: i64,
        size: u32,
        entry: usize,
    ) -> io::Result<Ring> {
        let len = usize::try_from(off.desc).map_err(io::Error::other)? + size as usize * entry;
        let map = SharedMap::new_at(fd, len, pgoff)?;
        let at = |v: u64| usize::try_from(v).map_err(io::Error::other);
        Ok(Ring {
            map,
            producer: at(off.producer)?,
            consumer: at(off.consumer)?,
            desc: at(off.desc)?,
            size,
        })
    }

    fn word(&self, offset: usize) -> &AtomicU32 {
        // SAFETY: offset is the producer or consumer offset the kernel gave (XDP_MMAP_OFFSETS),
        // a 4-byte aligned u32 inside the mapping, which lives as long as self; the kernel
        // writes it concurrently, hence atomic access.
        #[expect(unsafe_code)]
        unsafe {
            &*self.map.as_ptr().add(offset).cast::<AtomicU32>()
        }
    }

    fn producer(&self) -> &AtomicU32 {
        self.word(self.producer)
    }

    fn consumer(&self) -> &AtomicU32 {
        self.word(self.consumer)
    }

    /// Pointer to entry `i` (taken modulo the ring size) of `entry` bytes.
    fn entry(&self, i: u32, entry: usize) -> *mut u8 {
        let idx = (i & (self.size - 1)) as usize;
        self.map.as_ptr().wrapping_add(self.desc + idx * entry)
    }
}

/// A transmit-only AF_XDP socket with its own UMEM, bound to one queue of one interface.
#[derive(Debug)]
pub struct XskTx {
    tx: Ring,
    cq: Ring,
    // The fill ring is required by the kernel even to transmit; nothing is put on it.
    _fq: Ring,
    umem: SharedMap,
    fd: OwnedFd,
    /// Chunk addresses free to write a frame into.
    free: Vec<u64>,
    /// Our copy of the TX producer (published on flush).
    tx_prod: u32,
    /// Descriptors put on the TX ring since the last flush.
    queued: u32,
    mode: XdpMode,
}

// SAFETY: every mapping is owned by this value alone (nothing else holds their pointers) and
// the kernel side synchronises through the rings' producer/consumer words, accessed atomically.
#[expect(unsafe_code)]
unsafe impl Send for XskTx {}

impl XskTx {
    /// Opens an AF_XDP socket on queue `queue` of `ifname` with `frames` chunks of UMEM (a
    /// power of two; the TX and completion rings get as many entries), in `mode`.
    pub fn open(ifname: &str, queue: u32, frames: u32, mode: XdpMode) -> io::Result<XskTx> {
        if !frames.is_power_of_two() || frames < 64 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "AF_XDP ring size must be a power of two ≥ 64",
            ));
        }
        let ifindex = nix::net::if_::if_nametoindex(ifname).map_err(io::Error::from)?;
        let fd = xdp_socket()?;
        let b = fd.as_fd();
        let umem = SharedMap::anonymous(frames as usize * CHUNK)?;
        let reg = UmemReg {
            addr: umem.as_ptr() as u64,
            len: umem.len() as u64,
            chunk_size: CHUNK as u32,
            headroom: 0,
            flags: 0,
            tx_metadata_len: 0,
        };
        set_option(b, XDP_UMEM_REG, &reg)?;
        // The fill ring is never used by a transmit-only socket, but must exist.
        let fill_entries: u32 = 64;
        set_option(b, XDP_UMEM_FILL_RING, &fill_entries)?;
        set_option(b, XDP_UMEM_COMPLETION_RING, &frames)?;
        set_option(b, XDP_TX_RING, &frames)?;
        let off = mmap_offsets(b)?;
        let tx = Ring::map(
            b,
            &off.tx,
            XDP_PGOFF_TX_RING,
            frames,
            std::mem::size_of::<Desc>(),
        )?;
        let fq = Ring::map(b, &off.fr, XDP_UMEM_PGOFF_FILL_RING, fill_entries, 8)?;
        let cq = Ring::map(b, &off.cr, XDP_UMEM_PGOFF_COMPLETION_RING, frames, 8)?;
        let flags = match mode {
            XdpMode::Copy => XDP_COPY,
            XdpMode::ZeroCopy => XDP_ZEROCOPY,
        };
        bind(b, ifindex, queue, flags)?;
        let free = (0..u64::from(frames))
            .rev()
            .map(|i| i * CHUNK as u64)
            .collect();
        let tx_prod = tx.producer().load(Ordering::Relaxed);
        Ok(XskTx {
            tx,
            cq,
            _fq: fq,
            umem,
            fd,
            free,
            tx_prod,
            queued: 0,
            mode,
        })
    }

    /// Copy or zero-copy.
    pub fn mode(&self) -> XdpMode {
        self.mode
    }

    /// Chunks of the UMEM.
    pub fn chunks(&self) -> usize {
        self.umem.len() / CHUNK
    }

    /// The largest frame a chunk holds.
    pub fn max_frame(&self) -> usize {
        CHUNK
    }

    /// Takes back the chunks the kernel has finished sending (the completion ring).
    fn reclaim(&mut self) {
        let prod = self.cq.producer().load(Ordering::Acquire);
        let mut cons = self.cq.consumer().load(Ordering::Relaxed);
        while cons != prod {
            // SAFETY: entries between consumer and producer are u64 chunk addresses the
            // kernel has written and released (Acquire above); the entry lies in the mapping.
            #[expect(unsafe_code)]
            let addr = unsafe { self.cq.entry(cons, 8).cast::<u64>().read_volatile() };
            self.free.push(addr);
            cons = cons.wrapping_add(1);
        }
        self.cq.consumer().store(cons, Ordering::Release);
    }

    /// Writes one frame into a free chunk with `fill` (given the chunk, returning the frame
    /// length) and puts it on the TX ring. Returns false, without calling `fill`, when no
    /// chunk is free or the TX ring is full.
    pub fn push(&mut self, fill: impl FnOnce(&mut [u8]) -> usize) -> bool {
        self.push_indexed(|buf, _| fill(buf))
    }

    /// [`XskTx::push`], `fill` also given the chunk's index (< [`XskTx::chunks`]): a chunk
    /// keeps what was written into it, so a caller that remembers what each chunk holds may
    /// rewrite only what changes.
    pub fn push_indexed(&mut self, fill: impl FnOnce(&mut [u8], usize) -> usize) -> bool {
        if self.free.is_empty() {
            self.reclaim();
        }
        let cons = self.tx.consumer().load(Ordering::Acquire);
        if self.tx_prod.wrapping_sub(cons) >= self.tx.size {
            return false;
        }
        let Some(addr) = self.free.pop() else {
            return false;
        };
        let start = addr as usize;
        // SAFETY: the chunk [addr, addr + CHUNK) lies in the UMEM and is ours: it was free
        // (never handed to the kernel, or returned on the completion ring), and &mut self
        // keeps any other borrow out.
        #[expect(unsafe_code)]
        let data = unsafe { std::slice::from_raw_parts_mut(self.umem.as_ptr().add(start), CHUNK) };
        let len = fill(data, start / CHUNK).min(CHUNK);
        // SAFETY: the TX entry at our producer index is free (fewer than size entries are
        // outstanding, checked above) and lies in the mapping; the kernel reads it only after
        // the producer is published in flush.
        #[expect(unsafe_code)]
        unsafe {
            self.tx
                .entry(self.tx_prod, std::mem::size_of::<Desc>())
                .cast::<Desc>()
                .write_volatile(Desc {
                    addr,
                    len: len as u32,
                    options: 0,
                });
        }
        self.tx_prod = self.tx_prod.wrapping_add(1);
        self.queued += 1;
        true
    }

    /// Frames put on the TX ring and not yet taken by the kernel.
    pub fn outstanding(&self) -> u32 {
        self.tx_prod
            .wrapping_sub(self.tx.consumer().load(Ordering::Acquire))
    }

    /// Publishes the queued frames and kicks the kernel until it has taken them all from the
    /// TX ring (copy mode sends at most 32 per kick) or says it is busy.
    pub fn flush(&mut self) -> io::Result<()> {
        if self.queued > 0 {
            self.tx.producer().store(self.tx_prod, Ordering::Release);
            self.queued = 0;
        }
        let mut kicks = 0;
        while self.outstanding() > 0 && kicks < 1024 {
            kicks += 1;
            match kick(self.fd.as_fd())? {
                Kick::Done | Kick::More => {}
                Kick::Busy => break,
            }
        }
        self.reclaim();
        Ok(())
    }

    /// Waits until the kernel may have taken frames (the socket is writable) or `timeout`.
    pub fn wait(&mut self, timeout: Duration) -> io::Result<()> {
        use nix::poll::{PollFd, PollFlags, PollTimeout};
        let ms = u16::try_from(timeout.as_millis().max(1)).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(self.fd.as_fd(), PollFlags::POLLOUT)];
        match nix::poll::poll(&mut fds, PollTimeout::from(ms)) {
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(e) => return Err(e.into()),
        }
        self.reclaim();
        Ok(())
    }
}

impl AsFd for XskTx {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

#[expect(unsafe_code)]
fn xdp_socket() -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2); on success the descriptor is new and owned by the OwnedFd.
    let fd = unsafe { libc::socket(AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[expect(unsafe_code)]
fn set_option<T>(fd: BorrowedFd<'_>, name: libc::c_int, value: &T) -> io::Result<()> {
    let len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: value points to a valid T of len bytes; setsockopt only reads it.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            SOL_XDP,
            name,
            std::ptr::from_ref(value).cast(),
            len,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[expect(unsafe_code)]
fn mmap_offsets(fd: BorrowedFd<'_>) -> io::Result<MmapOffsets> {
    let mut off = MmapOffsets::default();
    let mut len = std::mem::size_of::<MmapOffsets>() as libc::socklen_t;
    // SAFETY: off is a writable MmapOffsets of len bytes; getsockopt writes at most len bytes
    // and updates len.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            SOL_XDP,
            XDP_MMAP_OFFSETS,
            (&raw mut off).cast(),
            &raw mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    if (len as usize) < std::mem::size_of::<MmapOffsets>() {
        // Kernels before 5.4 lack the flags word: too old for this module.
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this kernel's AF_XDP is too old (no ring flags in XDP_MMAP_OFFSETS; Linux ≥ 5.4)",
        ));
    }
    Ok(off)
}

#[expect(unsafe_code)]
fn bind(fd: BorrowedFd<'_>, ifindex: u32, queue: u32, flags: u16) -> io::Result<()> {
    let sa = SockaddrXdp {
        family: AF_XDP as u16,
        flags,
        ifindex,
        queue_id: queue,
        shared_umem_fd: 0,
    };
    // SAFETY: sa is a valid sockaddr_xdp of the length passed; bind only reads it.
    let rc = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            std::ptr::from_ref(&sa).cast(),
            std::mem::size_of::<SockaddrXdp>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

enum Kick {
    Done,
    More,
    Busy,
}

fn kick(fd: BorrowedFd<'_>) -> io::Result<Kick> {
    let Err(e) = super::socket::kick_tx_ring(fd) else {
        return Ok(Kick::Done);
    };
    match e.raw_os_error() {
        // Copy mode sends a batch per call and asks to be called again.
        Some(libc::EAGAIN) => Ok(Kick::More),
        // The driver's queue or the completion ring is full: try later.
        Some(libc::EBUSY) | Some(libc::ENOBUFS) => Ok(Kick::Busy),
        _ => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_geometry_is_refused() {
        let e = XskTx::open("lo", 0, 100, XdpMode::Copy).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn frames_reach_the_interface_in_copy_mode() {
        if !crate::is_root() {
            eprintln!("SKIP: AF_XDP sockets need CAP_NET_RAW (not root)");
            return;
        }
        let (sent, seen) = crate::netns::run_in_new(|| -> io::Result<(u64, u64)> {
            crate::netlink::Rtnl::open()?
                .set_up(1, "lo")
                .map_err(io::Error::other)?;
            // This thread's namespace's counters (sysfs and /proc/net show the process's).
            let read = || -> io::Result<u64> {
                let s = std::fs::read_to_string("/proc/thread-self/net/dev")?;
                let line = s
                    .lines()
                    .find(|l| l.trim_start().starts_with("lo:"))
                    .ok_or_else(|| io::Error::other("no lo in /proc/net/dev"))?;
                let f: Vec<&str> = line.split_whitespace().collect();
                // lo: rx bytes, packets, errs, drop, fifo, frame, compressed, multicast,
                // tx bytes, packets …
                f.get(10)
                    .and_then(|v| v.parse::<u64>().ok())
                    .ok_or_else(|| io::Error::other("bad /proc/net/dev line"))
            };
            let before = read()?;
            let mut tx = XskTx::open("lo", 0, 256, XdpMode::Copy)?;
            assert_eq!(tx.mode(), XdpMode::Copy);
            let mut sent = 0u64;
            let deadline = std::time::Instant::now() + Duration::from_secs(2);
            while sent < 1000 && std::time::Instant::now() < deadline {
                if tx.push(|buf| {
                    buf[..12].fill(0);
                    buf[12..14].copy_from_slice(&[0x88, 0xb5]); // local experimental
                    60
                }) {
                    sent += 1;
                } else {
                    tx.flush()?;
                    tx.wait(Duration::from_millis(10))?;
                }
            }
            tx.flush()?;
            let deadline = std::time::Instant::now() + Duration::from_secs(2);
            while tx.outstanding() > 0 && std::time::Instant::now() < deadline {
                tx.wait(Duration::from_millis(10))?;
                tx.flush()?;
            }
            Ok((sent, read()? - before))
        })
        .unwrap()
        .unwrap();
        assert_eq!(sent, 1000);
        assert!(seen >= 1000, "lo counted {seen} of 1000");
    }
}
