//! An AF_PACKET `TPACKET_V2` receive ring: the kernel copies each frame of one interface into
//! a ring shared with us (mmap) and flips the slot's status; we read the slots in order and
//! hand them back. No system call per frame, only a `poll` when the ring is empty.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::shared_map::map_shared;
use super::txring::{TpacketReq, set_ring};

const SOL_PACKET: libc::c_int = 263;
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_VERSION: libc::c_int = 10;
const TPACKET_V2: libc::c_int = 1;
const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
/// `PACKET_OUTGOING` in `sockaddr_ll.sll_pkttype`: a frame this host sent.
const PACKET_OUTGOING: u8 = 4;
/// `TPACKET_ALIGN(sizeof(struct tpacket2_hdr))`: where the `sockaddr_ll` follows the header.
const SLL_OFFSET: usize = 32;

/// What the kernel says about one received frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxMeta {
    /// Length of the frame on the wire (FCS excluded); may exceed the bytes handed over.
    pub len: usize,
    /// Kernel receive time, nanoseconds since the Unix epoch (`CLOCK_REALTIME`).
    pub ts_ns: u64,
    /// The frame was sent by this host (seen on its way out), not received.
    pub outgoing: bool,
}

/// A receive ring of one packet socket bound to one interface for every protocol.
#[derive(Debug)]
pub struct RxRing {
    fd: OwnedFd,
    map: NonNull<u8>,
    map_len: usize,
    slot_size: usize,
    slots: usize,
    next: usize,
}

// SAFETY: the mapping is owned by this value alone and the kernel side synchronises through
// the slot status words, which are accessed atomically.
#[expect(unsafe_code)]
unsafe impl Send for RxRing {}

impl RxRing {
    /// Opens a packet socket on `ifname` with a ring of `slots` slots of `slot_size` bytes (a
    /// power of two ≥ 128; frames longer than a slot are truncated, their `len` kept).
    pub fn open(ifname: &str, slot_size: usize, slots: usize) -> io::Result<RxRing> {
        let invalid = |m: &str| io::Error::new(io::ErrorKind::InvalidInput, m.to_string());
        if !slot_size.is_power_of_two() || slot_size < 128 || slots == 0 {
            return Err(invalid(
                "ring slot size must be a power of two ≥ 128, slots ≥ 1",
            ));
        }
        let block_size = slot_size.max(4096);
        let per_block = block_size / slot_size;
        let blocks = slots.div_ceil(per_block);
        let slots = blocks * per_block;
        let too_big = || invalid("ring too large");
        let req = TpacketReq {
            block_size: libc::c_uint::try_from(block_size).map_err(|_| too_big())?,
            block_nr: libc::c_uint::try_from(blocks).map_err(|_| too_big())?,
            frame_size: libc::c_uint::try_from(slot_size).map_err(|_| too_big())?,
            frame_nr: libc::c_uint::try_from(slots).map_err(|_| too_big())?,
        };
        let index = nix::net::if_::if_nametoindex(ifname).map_err(io::Error::from)?;
        let index = libc::c_int::try_from(index)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "interface index too large"))?;
        let fd = super::packet::raw_socket()?;
        let b = fd.as_fd();
        crate::socket::set_int_option(b, SOL_PACKET, PACKET_VERSION, TPACKET_V2)?;
        set_ring(b, PACKET_RX_RING, &req)?;
        let map_len = block_size * blocks;
        let map = map_shared(b, map_len)?;
        let ring = RxRing {
            fd,
            map,
            map_len,
            slot_size,
            slots,
            next: 0,
        };
        super::packet::bind_protocol(ring.fd.as_fd(), index, libc::ETH_P_ALL as u16)?;
        Ok(ring)
    }

    fn status(&self, slot: usize) -> &AtomicU32 {
        // SAFETY: slot < self.slots, so the status word (first u32 of the slot, aligned as
        // slots are ≥ 128-byte aligned in a page-aligned map) lies in the mapping, which lives
        // as long as self. The kernel writes it concurrently, hence atomic access.
        #[expect(unsafe_code)]
        unsafe {
            &*self
                .map
                .as_ptr()
                .add(slot * self.slot_size)
                .cast::<AtomicU32>()
        }
    }

    /// Hands every frame waiting in the ring, in order, to `f` (its captured bytes and the
    /// kernel's metadata), returns each slot to the kernel and returns how many there were.
    /// Stops after `limit` frames.
    pub fn drain(&mut self, limit: usize, mut f: impl FnMut(&[u8], RxMeta)) -> usize {
        let mut n = 0;
        while n < limit {
            let slot = self.next;
            if self.status(slot).load(Ordering::Acquire) & TP_STATUS_USER == 0 {
                break;
            }
            let base = slot * self.slot_size;
            // SAFETY: the slot is in the mapping and its status is TP_STATUS_USER, so the
            // kernel does not write it until we store TP_STATUS_KERNEL below; the header is
            // plain data at the slot's start (tp_len, tp_snaplen u32 at 4 and 8; tp_mac u16
            // at 12; tp_sec, tp_nsec u32 at 16 and 20), the sockaddr_ll at SLL_OFFSET, and
            // mac + snaplen is checked against the slot before the frame is borrowed.
            #[expect(unsafe_code)]
            let (frame, meta) = unsafe {
                let p = self.map.as_ptr().add(base);
                let rd32 = |o: usize| p.add(o).cast::<u32>().read_volatile();
                let len = rd32(4) as usize;
                let snap = rd32(8) as usize;
                let mac = usize::from(p.add(12).cast::<u16>().read_volatile());
                let ts_ns = u64::from(rd32(16)) * 1_000_000_000 + u64::from(rd32(20));
                let pkttype = p.add(SLL_OFFSET + 10).read_volatile();
                let snap = snap.min(self.slot_size.saturating_sub(mac));
                let frame = std::slice::from_raw_parts(p.add(mac), snap);
                (
                    frame,
                    RxMeta {
                        len,
                        ts_ns,
                        outgoing: pkttype == PACKET_OUTGOING,
                    },
                )
            };
            f(frame, meta);
            self.status(slot).store(TP_STATUS_KERNEL, Ordering::Release);
            self.next = (slot + 1) % self.slots;
            n += 1;
        }
        n
    }

    /// Waits until a frame is ready or `timeout` passes.
    pub fn wait(&self, timeout: Duration) -> io::Result<()> {
        if self.status(self.next).load(Ordering::Acquire) & TP_STATUS_USER != 0 {
            return Ok(());
        }
        crate::socket::wait_readable(self.fd.as_fd(), Some(timeout)).map(|_| ())
    }
}

impl AsFd for RxRing {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl Drop for RxRing {
    fn drop(&mut self) {
        // SAFETY: map/map_len are exactly what mmap returned; nothing borrows the mapping
        // once self is being dropped. The socket closes after (field drop).
        #[expect(unsafe_code)]
        unsafe {
            libc::munmap(self.map.as_ptr().cast(), self.map_len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::txring::TxRing;
    use std::time::Instant;

    #[test]
    fn bad_geometry_is_refused() {
        let e = RxRing::open("lo", 100, 8).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn ring_sees_frames_sent_on_loopback() {
        if !crate::is_root() {
            eprintln!("SKIP: packet rings need CAP_NET_RAW (not root)");
            return;
        }
        let marker = *b"linerate-sys rxring test";
        let seen = crate::netns::run_in_new(|| -> io::Result<usize> {
            crate::netlink::Rtnl::open()?
                .set_up(1, "lo")
                .map_err(io::Error::other)?;
            let mut rx = RxRing::open("lo", 2048, 256)?;
            let mut tx = TxRing::open("lo", 2048, 64, true)?;
            for _ in 0..50 {
                assert!(tx.push(|buf| {
                    buf[..12].fill(0);
                    buf[12..14].copy_from_slice(&[0x88, 0xb5]);
                    buf[14..38].copy_from_slice(&marker);
                    60
                }));
                tx.flush()?;
            }
            let mut frames = 0;
            let deadline = Instant::now() + Duration::from_secs(2);
            while frames < 50 && Instant::now() < deadline {
                rx.wait(Duration::from_millis(50))?;
                rx.drain(usize::MAX, |f, meta| {
                    if !meta.outgoing && f.windows(24).any(|w| w == marker) {
                        assert_eq!(meta.len, 60);
                        assert!(meta.ts_ns > 1_600_000_000_000_000_000);
                        frames += 1;
                    }
                });
            }
            Ok(frames)
        })
        .unwrap()
        .unwrap();
        assert_eq!(seen, 50);
    }
}
