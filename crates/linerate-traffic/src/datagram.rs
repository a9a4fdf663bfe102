//! The datagram of `--mode pps`: an 18-byte header (send time in seconds and microseconds as
//! iperf3 writes it, a 64-bit sequence number from 1, and a 16-bit tag derived from the test's
//! cookie), and the payload sizes (one size, or simple IMIX). Plain data shared by the stream
//! specs that carry it and the pps workers that send and check it.

use crate::protocol::Cookie;

/// Smallest pps payload: 18 bytes of UDP payload make a 64-byte Ethernet frame over IPv4, and
/// hold the header.
pub const MIN_PAYLOAD: usize = 18;
/// Header bytes at the start of each datagram.
pub const HEADER_LEN: usize = 18;

/// Payloads of simple IMIX over IPv4 (7:4:1 of 40-, 576- and 1500-byte IP packets). A 40-byte
/// packet is padded to a 64-byte frame on Ethernet; its UDP stand-in carries the 18 bytes that
/// fill that frame, so the bits on the wire are the same.
pub const IMIX_PAYLOADS: [usize; 3] = [MIN_PAYLOAD, 576 - 28, 1500 - 28];
/// The order of one IMIX cycle (indexes into [`IMIX_PAYLOADS`]): 7 small, 4 medium, 1 large,
/// spread out.
const IMIX_CYCLE: [u8; 12] = [0, 0, 1, 0, 0, 1, 0, 2, 0, 1, 0, 1];

/// What a pps stream sends or expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PpsSpec {
    /// Payload sizes, cycled through by sequence number.
    pub cycle: Vec<usize>,
    /// The test's tag.
    pub tag: u16,
    /// IMIX rather than one size.
    pub imix: bool,
    /// Send with UDP GSO when the size allows (the default); a receiver then asks for
    /// UDP_GRO.
    pub gso: bool,
    /// A receiver asks for UDP_GRO when the sender uses GSO (`--no-gro` turns it off).
    pub gro: bool,
    /// Busy polling on the receiving socket, µs (`--busy-poll`; 0: off).
    pub busy_poll_us: u32,
}

/// The tag of a test: the cookie folded to 16 bits (FNV-1a).
pub fn tag_of(cookie: &Cookie) -> u16 {
    let mut h: u32 = 0x811c_9dc5;
    for b in cookie.as_bytes() {
        h ^= u32::from(*b);
        h = h.wrapping_mul(0x0100_0193);
    }
    (h ^ (h >> 16)) as u16
}

impl PpsSpec {
    /// One payload size `len`, or IMIX.
    pub fn new(len: usize, imix: bool, cookie: &Cookie) -> PpsSpec {
        let cycle = if imix {
            IMIX_CYCLE
                .iter()
                .map(|&i| IMIX_PAYLOADS[i as usize])
                .collect()
        } else {
            vec![len.max(MIN_PAYLOAD)]
        };
        PpsSpec {
            cycle,
            tag: tag_of(cookie),
            imix,
            gso: true,
            gro: true,
            busy_poll_us: 0,
        }
    }

    /// Payload of datagram `seq` (from 1).
    pub fn len_for(&self, seq: u64) -> usize {
        self.cycle[((seq.wrapping_sub(1)) % self.cycle.len() as u64) as usize]
    }

    /// Largest payload.
    pub fn max_len(&self) -> usize {
        self.cycle.iter().copied().max().unwrap_or(MIN_PAYLOAD)
    }

    /// Mean payload over one cycle.
    pub fn mean_len(&self) -> f64 {
        self.cycle.iter().sum::<usize>() as f64 / self.cycle.len().max(1) as f64
    }

    fn expects(&self, len: usize) -> bool {
        self.cycle.contains(&len)
    }

    /// Writes the header of datagram `seq`, sent at `now` (seconds, microseconds).
    pub fn write_header(&self, buf: &mut [u8], seq: u64, now: (u32, u32)) {
        if buf.len() < HEADER_LEN {
            return;
        }
        buf[0..4].copy_from_slice(&now.0.to_be_bytes());
        buf[4..8].copy_from_slice(&now.1.to_be_bytes());
        buf[8..16].copy_from_slice(&seq.to_be_bytes());
        buf[16..18].copy_from_slice(&self.tag.to_be_bytes());
    }

    /// Reads a datagram: `(sequence, send time in seconds)`, or `None` when it is not one of
    /// this test's (wrong size, wrong tag, sequence 0).
    pub fn parse(&self, d: &[u8]) -> Option<(u64, f64)> {
        if !self.expects(d.len()) || d.len() < HEADER_LEN {
            return None;
        }
        let be32 = |r: std::ops::Range<usize>| {
            d.get(r)
                .and_then(|s| <[u8; 4]>::try_from(s).ok())
                .map(u32::from_be_bytes)
        };
        let tag = u16::from_be_bytes([d[16], d[17]]);
        let seq = u64::from_be_bytes(d.get(8..16)?.try_into().ok()?);
        if tag != self.tag || seq == 0 {
            return None;
        }
        let sent = f64::from(be32(0..4)?) + f64::from(be32(4..8)?) / 1e6;
        Some((seq, sent))
    }
}
