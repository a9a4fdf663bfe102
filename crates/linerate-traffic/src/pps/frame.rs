//! Frame arithmetic for pps results: what the datagrams would be on Ethernet. A datagram of
//! `payload` bytes is an IP packet of payload + 8 (UDP) + 20 (IPv4) or 40 (IPv6) bytes, a frame
//! of that plus 18 (header and FCS, at least 64), and takes 20 more bytes of wire time
//! (preamble, SFD, inter-frame gap). Constants come from `linerate-calc`.

use linerate_calc::ethernet::{L1_OVERHEAD, L2_OVERHEAD, MIN_FRAME};

/// UDP header bytes.
pub const UDP_HEADER: u64 = 8;

/// IP header bytes.
pub fn ip_header(ipv6: bool) -> u64 {
    if ipv6 { 40 } else { 20 }
}

/// The Ethernet frame (L2, FCS included) carrying a UDP datagram of `payload` bytes.
pub fn frame_bytes(payload: u64, ipv6: bool) -> u64 {
    (payload + UDP_HEADER + ip_header(ipv6) + L2_OVERHEAD).max(MIN_FRAME)
}

/// Bit rates at L2 and L1 of `datagrams` carrying `payload_bytes` in all over `seconds`, when
/// no datagram is short enough to need padding (true of every pps size, ≥ 18 bytes).
pub fn wire_rates(datagrams: u64, payload_bytes: u64, seconds: f64, ipv6: bool) -> (f64, f64) {
    if seconds <= 0.0 {
        return (0.0, 0.0);
    }
    let per = UDP_HEADER + ip_header(ipv6) + L2_OVERHEAD;
    let l2 = (payload_bytes + datagrams * per) as f64 * 8.0 / seconds;
    let l1 = l2 + (datagrams * L1_OVERHEAD) as f64 * 8.0 / seconds;
    (l2, l1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eighteen_bytes_make_the_smallest_frame() {
        assert_eq!(frame_bytes(18, false), 64);
        assert_eq!(frame_bytes(1, false), 64);
        assert_eq!(frame_bytes(1472, false), 1518);
        assert_eq!(frame_bytes(18, true), 84);
    }

    #[test]
    fn one_million_small_frames_per_second() {
        // 64-byte frames: 512 bit at L2, 672 bit with preamble and gap.
        let (l2, l1) = wire_rates(1_000_000, 18_000_000, 1.0, false);
        assert!((l2 - 512e6).abs() < 1.0, "{l2}");
        assert!((l1 - 672e6).abs() < 1.0, "{l1}");
        // 10GbE carries 14.88 Mpps of them: 10 Gbit/s at L1.
        let (_, l1) = wire_rates(14_880_952, 14_880_952 * 18, 1.0, false);
        assert!((l1 - 1e10).abs() < 1e3, "{l1}");
    }

    #[test]
    fn imix_averages_like_calc() {
        // 7 × 64 + 4 × 594 + 1 × 1518 bytes = 4342 per 12 frames.
        let payload = 7 * 18 + 4 * 548 + 1472;
        let (l2, _) = wire_rates(12, payload, 1.0, false);
        assert!((l2 - 4342.0 * 8.0).abs() < 1e-6, "{l2}");
    }
}
