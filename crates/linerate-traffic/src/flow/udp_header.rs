//! The UDP datagram header iperf3 uses: seconds, microseconds, sequence (32 or 64 bits), all
//! big-endian.

use std::time::{SystemTime, UNIX_EPOCH};

/// Header length with 32-bit sequence numbers.
pub const HEADER_LEN_32: usize = 12;
/// Header length with 64-bit sequence numbers.
pub const HEADER_LEN_64: usize = 16;

/// A decoded header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpHeader {
    /// Send time, seconds.
    pub sec: u32,
    /// Send time, microseconds.
    pub usec: u32,
    /// Sequence number (starts at 1).
    pub seq: u64,
}

impl UdpHeader {
    /// Header length for the counter width.
    pub fn len(udp64: bool) -> usize {
        if udp64 { HEADER_LEN_64 } else { HEADER_LEN_32 }
    }

    /// A header stamped with `now`.
    pub fn stamped(seq: u64, now: SystemTime) -> UdpHeader {
        let t = now.duration_since(UNIX_EPOCH).unwrap_or_default();
        UdpHeader {
            sec: t.as_secs() as u32,
            usec: t.subsec_micros(),
            seq,
        }
    }

    /// Writes into the start of `buf` (at least [`UdpHeader::len`] bytes).
    pub fn write(&self, buf: &mut [u8], udp64: bool) {
        if buf.len() < Self::len(udp64) {
            return;
        }
        buf[0..4].copy_from_slice(&self.sec.to_be_bytes());
        buf[4..8].copy_from_slice(&self.usec.to_be_bytes());
        if udp64 {
            buf[8..16].copy_from_slice(&self.seq.to_be_bytes());
        } else {
            buf[8..12].copy_from_slice(&(self.seq as u32).to_be_bytes());
        }
    }

    /// Reads from a datagram; `None` when it is too short.
    pub fn read(buf: &[u8], udp64: bool) -> Option<UdpHeader> {
        let sec = u32::from_be_bytes(buf.get(0..4)?.try_into().ok()?);
        let usec = u32::from_be_bytes(buf.get(4..8)?.try_into().ok()?);
        let seq = if udp64 {
            u64::from_be_bytes(buf.get(8..16)?.try_into().ok()?)
        } else {
            u64::from(u32::from_be_bytes(buf.get(8..12)?.try_into().ok()?))
        };
        Some(UdpHeader { sec, usec, seq })
    }

    /// The send time in seconds since the epoch.
    pub fn sent_secs(&self) -> f64 {
        f64::from(self.sec) + f64::from(self.usec) / 1e6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_widths_round_trip() {
        for udp64 in [false, true] {
            let h = UdpHeader {
                sec: 1_700_000_000,
                usec: 999_999,
                seq: 0xABCD_EF01,
            };
            let mut buf = [0u8; 20];
            h.write(&mut buf, udp64);
            assert_eq!(UdpHeader::read(&buf, udp64), Some(h));
            assert_eq!(
                UdpHeader::read(&buf[..UdpHeader::len(udp64) - 1], udp64),
                None
            );
        }
        assert_eq!(UdpHeader::read(b"9876", false), None);
    }

    proptest::proptest! {
        /// Arbitrary datagrams: never a panic; a header exactly when the datagram is long
        /// enough, and writing it back reproduces the datagram's first bytes.
        #[test]
        fn arbitrary_datagrams(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40),
            udp64 in proptest::prelude::any::<bool>(),
        ) {
            let n = UdpHeader::len(udp64);
            match UdpHeader::read(&bytes, udp64) {
                Some(h) => {
                    proptest::prop_assert!(bytes.len() >= n);
                    let mut out = vec![0u8; n];
                    h.write(&mut out, udp64);
                    proptest::prop_assert_eq!(&out[..], &bytes[..n]);
                }
                None => proptest::prop_assert!(bytes.len() < n),
            }
        }
    }
}
