//! What the packet rings share (`TPACKET_V2`, receive or transmit): the slot geometry, the
//! socket with its ring set up, bound to one interface, and mapped; and the slot status word
//! the kernel and we hand each slot over with.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::AtomicU32;

use super::shared_map::SharedMap;

pub(super) const SOL_PACKET: libc::c_int = 263;
const PACKET_VERSION: libc::c_int = 10;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const PACKET_VNET_HDR: libc::c_int = 15;
const TPACKET_V2: libc::c_int = 1;

/// `struct tpacket_req`.
#[repr(C)]
struct TpacketReq {
    block_size: libc::c_uint,
    block_nr: libc::c_uint,
    frame_size: libc::c_uint,
    frame_nr: libc::c_uint,
}

/// Which ring, and how the socket is set up for it.
#[derive(Debug, Clone, Copy)]
pub(super) struct RingKind {
    /// `PACKET_RX_RING` or `PACKET_TX_RING`.
    pub option: libc::c_int,
    /// The smallest slot (a power of two).
    pub min_slot: usize,
    /// The protocol the socket is bound with (0: it receives nothing).
    pub protocol: u16,
    /// `PACKET_QDISC_BYPASS`.
    pub qdisc_bypass: bool,
    /// `PACKET_VNET_HDR`: each frame is preceded by a `struct virtio_net_hdr`.
    pub vnet_hdr: bool,
}

/// A packet socket with its mapped ring of `slots` slots of `slot_size` bytes.
#[derive(Debug)]
pub(super) struct PacketRing {
    map: SharedMap,
    fd: OwnedFd,
    pub slot_size: usize,
    pub slots: usize,
}

impl PacketRing {
    /// Opens the socket on `ifname` with a ring of at least `slots` slots of `slot_size` bytes
    /// (slots are packed into page-sized blocks, so the count may round up).
    pub fn open(ifname: &str, kind: RingKind, slot_size: usize, slots: usize) -> io::Result<Self> {
        let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
        if !slot_size.is_power_of_two() || slot_size < kind.min_slot || slots == 0 {
            return Err(invalid(format!(
                "ring slot size must be a power of two ≥ {}, slots ≥ 1",
                kind.min_slot
            )));
        }
        let block_size = slot_size.max(4096);
        let per_block = block_size / slot_size;
        let blocks = slots.div_ceil(per_block);
        let slots = blocks * per_block;
        let too_big = || invalid("ring too large".to_owned());
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
        if kind.vnet_hdr {
            crate::socket::set_int_option(b, SOL_PACKET, PACKET_VNET_HDR, 1)?;
        }
        if kind.qdisc_bypass {
            crate::socket::set_int_option(b, SOL_PACKET, PACKET_QDISC_BYPASS, 1)?;
        }
        set_ring(b, kind.option, &req)?;
        let map = SharedMap::new(b, block_size * blocks)?;
        super::packet::bind_protocol(b, index, kind.protocol)?;
        Ok(PacketRing {
            map,
            fd,
            slot_size,
            slots,
        })
    }

    /// The start of slot `slot` (< `slots`) in the mapping.
    pub fn slot_ptr(&self, slot: usize) -> *mut u8 {
        debug_assert!(slot < self.slots);
        self.map.as_ptr().wrapping_add(slot * self.slot_size)
    }

    /// Slot `slot`'s status word, which the kernel writes concurrently.
    pub fn status(&self, slot: usize) -> &AtomicU32 {
        // SAFETY: slot < self.slots, so the status word (the first u32 of the slot, 4-byte
        // aligned as slots are ≥ 64-byte aligned in a page-aligned map) lies in the mapping,
        // which lives as long as self. The kernel writes it concurrently, hence atomic access.
        #[expect(unsafe_code)]
        unsafe {
            &*self.slot_ptr(slot).cast::<AtomicU32>()
        }
    }
}

impl AsFd for PacketRing {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// Sets up a packet socket's ring (`option`: `PACKET_RX_RING` or `PACKET_TX_RING`).
#[expect(unsafe_code)]
fn set_ring(fd: BorrowedFd<'_>, option: libc::c_int, req: &TpacketReq) -> io::Result<()> {
    let len = std::mem::size_of::<TpacketReq>() as libc::socklen_t;
    // SAFETY: req points to a valid tpacket_req of len bytes; setsockopt only reads it.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            SOL_PACKET,
            option,
            std::ptr::from_ref(req).cast(),
            len,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
