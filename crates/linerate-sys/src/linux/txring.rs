//! An AF_PACKET `TPACKET_V2` transmit ring: frames written straight into a ring shared with the
//! kernel (mmap), handed over by flipping each slot's status and sent in batches by one empty
//! `sendto`. The socket is bound with protocol 0, so it receives nothing (a generator's own
//! socket must not queue the traffic it meets), and can bypass the qdisc.
//!
//! Each slot's frame is preceded by a `struct virtio_net_hdr` (`PACKET_VNET_HDR`) whose
//! `hdr_len` covers the whole frame: the kernel then copies the frame into the skb's linear
//! area instead of pointing page fragments at the ring. Fragments pointing at a ring page
//! must be copied again into freshly allocated pages as soon as the skb crosses into another
//! namespace (veth's `__dev_forward_skb` → `skb_copy_ubufs`): a page allocation per frame,
//! which copying small frames once avoids.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::packet_ring::{PacketRing, RingKind};

const PACKET_TX_RING: libc::c_int = 13;
const TP_STATUS_SEND_REQUEST: u32 = 1;
const TP_STATUS_SENDING: u32 = 2;
const TP_STATUS_WRONG_FORMAT: u32 = 4;
/// `TPACKET_ALIGN(sizeof(struct tpacket2_hdr))`: where a TX slot's frame data starts.
const DATA_OFFSET: usize = 32;
/// Offset of `tp_len` in `struct tpacket2_hdr`.
const LEN_OFFSET: usize = 4;
/// `sizeof(struct virtio_net_hdr)`, in front of each frame.
const VNET_LEN: usize = 10;

/// A transmit ring of one packet socket bound to one interface.
#[derive(Debug)]
pub struct TxRing {
    ring: PacketRing,
    next: usize,
    queued: usize,
    wrong_format: u64,
}

// SAFETY: the mapping is owned by this value alone (nothing else holds its pointer) and the
// kernel side synchronises through the slot status words, which are accessed atomically.
#[expect(unsafe_code)]
unsafe impl Send for TxRing {}

impl TxRing {
    /// Opens a packet socket on `ifname` with a ring of `slots` slots of `slot_size` bytes
    /// (a power of two, at least 64; frames up to `slot_size - 32` bytes).
    pub fn open(
        ifname: &str,
        slot_size: usize,
        slots: usize,
        qdisc_bypass: bool,
    ) -> io::Result<TxRing> {
        let kind = RingKind {
            option: PACKET_TX_RING,
            min_slot: 64,
            protocol: 0,
            qdisc_bypass,
            vnet_hdr: true,
        };
        Ok(TxRing {
            ring: PacketRing::open(ifname, kind, slot_size, slots)?,
            next: 0,
            queued: 0,
            wrong_format: 0,
        })
    }

    /// The largest frame a slot holds.
    pub fn max_frame(&self) -> usize {
        (self.ring.slot_size - DATA_OFFSET - VNET_LEN).min(usize::from(u16::MAX))
    }

    /// Slots in the ring.
    pub fn slots(&self) -> usize {
        self.ring.slots
    }

    /// Frames the kernel refused as malformed (`TP_STATUS_WRONG_FORMAT`) so far.
    pub fn wrong_format(&self) -> u64 {
        self.wrong_format
    }

    /// Writes one frame into the next free slot with `fill` (given the slot's data area,
    /// returning the frame length) and queues it. Returns false, without calling `fill`, when
    /// the ring is full (the kernel has not sent that slot yet).
    pub fn push(&mut self, fill: impl FnOnce(&mut [u8]) -> usize) -> bool {
        self.push_indexed(|buf, _| fill(buf))
    }

    /// [`TxRing::push`], `fill` also given the slot's index (< [`TxRing::slots`]): a slot
    /// keeps what was written into it, so a caller that remembers what each slot holds may
    /// rewrite only what changes.
    pub fn push_indexed(&mut self, fill: impl FnOnce(&mut [u8], usize) -> usize) -> bool {
        let slot = self.next;
        let status = self.ring.status(slot).load(Ordering::Acquire);
        if status & (TP_STATUS_SEND_REQUEST | TP_STATUS_SENDING) != 0 {
            return false;
        }
        if status & TP_STATUS_WRONG_FORMAT != 0 {
            self.wrong_format += 1;
        }
        let max = self.max_frame();
        // SAFETY: the slot is in the mapping (slot < slots) and, its status being neither
        // SEND_REQUEST nor SENDING, the kernel does not touch it until we set the status
        // below; &mut self keeps any other borrow of the ring out.
        #[expect(unsafe_code)]
        let (vnet, data) = unsafe {
            std::slice::from_raw_parts_mut(
                self.ring.slot_ptr(slot).add(DATA_OFFSET),
                VNET_LEN + max,
            )
        }
        .split_at_mut(VNET_LEN);
        let len = fill(data, slot).min(max);
        // virtio_net_hdr: no offloads, hdr_len (little-endian u16 at offset 2) the whole
        // frame, so the kernel copies it linear (max_frame() keeps len within u16).
        vnet.fill(0);
        vnet[2..4].copy_from_slice(&(len as u16).to_le_bytes());
        // SAFETY: tp_len is the aligned u32 at offset 4 of the slot header, inside the mapping.
        #[expect(unsafe_code)]
        unsafe {
            self.ring
                .slot_ptr(slot)
                .add(LEN_OFFSET)
                .cast::<u32>()
                .write_volatile((VNET_LEN + len) as u32);
        }
        self.ring
            .status(slot)
            .store(TP_STATUS_SEND_REQUEST, Ordering::Release);
        self.next = (slot + 1) % self.ring.slots;
        self.queued += 1;
        true
    }

    /// Frames queued since the last [`TxRing::flush`].
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Asks the kernel to send every queued frame, without waiting for it.
    pub fn flush(&mut self) -> io::Result<()> {
        if self.queued == 0 {
            return Ok(());
        }
        kick(self.ring.as_fd())?;
        self.queued = 0;
        Ok(())
    }

    /// Waits until a slot may be free again (the socket is writable) or `timeout` passes.
    pub fn wait(&self, timeout: Duration) -> io::Result<()> {
        use nix::poll::{PollFd, PollFlags, PollTimeout};
        let mut fds = [PollFd::new(self.ring.as_fd(), PollFlags::POLLOUT)];
        let ms = u16::try_from(timeout.as_millis().max(1)).unwrap_or(u16::MAX);
        match nix::poll::poll(&mut fds, PollTimeout::from(ms)) {
            Ok(_) | Err(nix::errno::Errno::EINTR) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

impl AsFd for TxRing {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.ring.as_fd()
    }
}

fn kick(fd: BorrowedFd<'_>) -> io::Result<()> {
    let Err(e) = super::socket::kick_tx_ring(fd) else {
        return Ok(());
    };
    match e.raw_os_error() {
        // Queue full or driver busy: the frames stay queued and go with the next kick.
        Some(libc::EAGAIN) | Some(libc::ENOBUFS) => Ok(()),
        _ => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mmsg::{Batch, Wait};
    use std::time::Instant;

    #[test]
    fn bad_geometry_is_refused() {
        let e = TxRing::open("lo", 100, 8, false).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn ring_frames_reach_the_interface() {
        if !crate::is_root() {
            eprintln!("SKIP: packet rings need CAP_NET_RAW (not root)");
            return;
        }
        let marker = *b"linerate-sys txring test";
        let (seen, wrong) = crate::netns::run_in_new(|| -> io::Result<(usize, u64)> {
            crate::netlink::Rtnl::open()?
                .set_up(1, "lo")
                .map_err(io::Error::other)?;
            let rx = super::super::packet::open(
                "lo",
                &super::super::packet::PacketOptions {
                    recv_buffer: Some(1 << 20),
                    ..Default::default()
                },
            )?;
            let mut tx = TxRing::open("lo", 2048, 64, true)?;
            assert_eq!(tx.slots(), 64);
            let mut sent = 0;
            let deadline = Instant::now() + Duration::from_secs(2);
            while sent < 200 && Instant::now() < deadline {
                if tx.push(|buf| {
                    buf[..12].fill(0);
                    buf[12..14].copy_from_slice(&[0x88, 0xb5]); // local experimental
                    buf[14..38].copy_from_slice(&marker);
                    60
                }) {
                    sent += 1;
                } else {
                    tx.flush()?;
                    tx.wait(Duration::from_millis(10))?;
                }
            }
            tx.flush()?;
            let mut batch = Batch::new(64, 2048);
            let mut frames = 0;
            let deadline = Instant::now() + Duration::from_secs(2);
            while frames < 200 && Instant::now() < deadline {
                crate::socket::wait_readable(rx.as_fd(), Some(Duration::from_millis(50)))?;
                let n = batch.recv(rx.as_fd(), Wait::Never)?;
                frames += (0..n)
                    .filter(|&i| batch.datagram(i).windows(24).any(|w| w == marker))
                    .count();
            }
            Ok((frames, tx.wrong_format()))
        })
        .unwrap()
        .unwrap();
        // Loopback: each frame is seen at least once (outgoing and incoming copies).
        assert!(seen >= 200, "saw {seen} of 200");
        assert_eq!(wrong, 0);
    }
}
