//! An AF_PACKET `TPACKET_V2` receive ring: the kernel copies each frame of one interface into
//! a ring shared with us (mmap) and flips the slot's status; we read the slots in order and
//! hand them back. No system call per frame, only a `poll` when the ring is empty.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::packet_ring::{PacketRing, RingKind};

const PACKET_RX_RING: libc::c_int = 5;
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
    ring: PacketRing,
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
        let kind = RingKind {
            option: PACKET_RX_RING,
            min_slot: 128,
            protocol: libc::ETH_P_ALL as u16,
            qdisc_bypass: false,
            vnet_hdr: false,
        };
        Ok(RxRing {
            ring: PacketRing::open(ifname, kind, slot_size, slots)?,
            next: 0,
        })
    }

    /// Hands every frame waiting in the ring, in order, to `f` (its captured bytes and the
    /// kernel's metadata), returns each slot to the kernel and returns how many there were.
    /// Stops after `limit` frames.
    pub fn drain(&mut self, limit: usize, mut f: impl FnMut(&[u8], RxMeta)) -> usize {
        let mut n = 0;
        while n < limit {
            let slot = self.next;
            if self.ring.status(slot).load(Ordering::Acquire) & TP_STATUS_USER == 0 {
                break;
            }
            // SAFETY: the slot is in the mapping and its status is TP_STATUS_USER, so the
            // kernel does not write it until we store TP_STATUS_KERNEL below; the header is
            // plain data at the slot's start (tp_len, tp_snaplen u32 at 4 and 8; tp_mac u16
            // at 12; tp_sec, tp_nsec u32 at 16 and 20), the sockaddr_ll at SLL_OFFSET, and
            // mac + snaplen is checked against the slot before the frame is borrowed.
            #[expect(unsafe_code)]
            let (frame, meta) = unsafe {
                let p = self.ring.slot_ptr(slot);
                let rd32 = |o: usize| p.add(o).cast::<u32>().read_volatile();
                let len = rd32(4) as usize;
                let snap = rd32(8) as usize;
                let mac = usize::from(p.add(12).cast::<u16>().read_volatile());
                let ts_ns = u64::from(rd32(16)) * 1_000_000_000 + u64::from(rd32(20));
                let pkttype = p.add(SLL_OFFSET + 10).read_volatile();
                let snap = snap.min(self.ring.slot_size.saturating_sub(mac));
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
            self.ring
                .status(slot)
                .store(TP_STATUS_KERNEL, Ordering::Release);
            self.next = (slot + 1) % self.ring.slots;
            n += 1;
        }
        n
    }

    /// Waits until a frame is ready or `timeout` passes.
    pub fn wait(&self, timeout: Duration) -> io::Result<()> {
        if self.ring.status(self.next).load(Ordering::Acquire) & TP_STATUS_USER != 0 {
            return Ok(());
        }
        crate::socket::wait_readable(self.ring.as_fd(), Some(timeout)).map(|_| ())
    }
}

impl AsFd for RxRing {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.ring.as_fd()
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
