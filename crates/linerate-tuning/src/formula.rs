//! The arithmetic shared by the rules and the profile generator, so that what `tune` generates
//! is exactly what `lint` accepts.

use linerate_units::{BitRate, ByteSize};

/// The largest TCP window: 65535 × 2^14 (RFC 7323 window scale ≤ 14) ≈ 1 GiB. Buffers beyond
/// it cannot be used by one connection.
pub const MAX_WINDOW: u64 = 1 << 30;

/// Ethernet overhead per frame on the wire beyond the MTU: header 14 + FCS 4 + preamble 8 +
/// inter-frame gap 12.
pub const ETHERNET_OVERHEAD: u64 = 38;

/// A queue that holds more than this much line-rate time is bufferbloat.
pub const BLOAT_LIMIT_SECONDS: f64 = 0.010;

/// The rate assumed for queue checks when none is stated (fast enough to be generous).
pub const ASSUMED_RATE: BitRate = BitRate::from_gbps(10);

/// Send buffer a path needs at the very least: one BDP of unacknowledged data.
pub fn sndbuf_need(bdp: ByteSize) -> u64 {
    bdp.bytes().min(MAX_WINDOW)
}

/// The smallest power of two ≥ `n` (1 for 0).
pub fn next_pow2(n: u64) -> u64 {
    n.max(1).checked_next_power_of_two().unwrap_or(1 << 63)
}

/// MTU-sized frames per second at `rate`.
pub fn mtu_frames_per_second(rate: BitRate, mtu: u32) -> f64 {
    rate.as_f64() / ((u64::from(mtu) + ETHERNET_OVERHEAD) as f64 * 8.0)
}

/// Seconds a queue of `packets` MTU-sized packets takes to drain at `rate`.
pub fn drain_seconds(packets: u64, mtu: u32, rate: BitRate) -> f64 {
    let bits = packets as f64 * (u64::from(mtu) + ETHERNET_OVERHEAD) as f64 * 8.0;
    if rate.bps() == 0 {
        return f64::INFINITY;
    }
    bits / rate.as_f64()
}

/// What Linux computes for `tcp_mem` at boot (net/ipv4/tcp.c): limit = free buffer pages / 16,
/// then [3/4 limit, limit, 3/2 limit]. Free buffer pages are within 1 % of MemTotal at boot (the
/// 24 GB reference VM: 6 141 904 of 6 171 024 pages).
pub fn linux_tcp_mem_auto(ram: ByteSize, page: ByteSize) -> [u64; 3] {
    let pages = ram.bytes() / page.bytes().max(1);
    let limit = (pages / 16).max(128);
    [limit / 4 * 3, limit, limit / 4 * 3 * 2]
}

/// What FreeBSD computes for `kern.ipc.nmbclusters` at boot: half of memory for mbufs, a quarter
/// of that in 2 KiB clusters (RAM / 16384).
pub fn freebsd_nmbclusters_auto(ram: ByteSize) -> u64 {
    ram.bytes() / 16384
}

/// Seconds TCP sequence numbers take to cover half their space (2^31 bytes) at `rate`: the
/// window within which PAWS (RFC 7323 timestamps) must tell old segments from new ones.
pub fn sequence_wrap_seconds(rate: BitRate) -> f64 {
    if rate.bps() == 0 {
        return f64::INFINITY;
    }
    (1u64 << 31) as f64 * 8.0 / rate.as_f64()
}

/// Receive window Windows autotuning reaches at level `normal`: 65535 × 2^8 ≈ 16 MiB.
pub const WINDOWS_NORMAL_WINDOW: u64 = 65535 << 8;

/// Rate above which TCP sequence numbers (2^31 bytes of window space) wrap within 2 × MSL
/// (MSL = 120 s on Windows), so PAWS timestamps are needed (RFC 7323).
pub fn paws_rate_threshold() -> BitRate {
    BitRate::from_bps_f64((1u64 << 31) as f64 * 8.0 / 120.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_mem_matches_the_reference_vm() {
        // 24 GB VM: tcp_mem = 287901 383869 575802 (reference/data). Within 2 %.
        let got = linux_tcp_mem_auto(ByteSize::from_kib(24_684_096), ByteSize::from_kib(4));
        let want = [287_901f64, 383_869.0, 575_802.0];
        for (g, w) in got.iter().zip(want) {
            assert!((*g as f64 / w - 1.0).abs() < 0.02, "{got:?} vs {want:?}");
        }
    }

    #[test]
    fn buffers_and_queues() {
        let bdp = BitRate::from_gbps(10).bytes_in(0.08); // 100 MB
        assert_eq!(bdp.bytes(), 100_000_000);
        assert_eq!(next_pow2(200_000_000), 268_435_456);
        assert_eq!(next_pow2(0), 1);
        let t = drain_seconds(300_000, 1500, BitRate::from_gbps(10));
        assert!((t - 0.369_12).abs() < 1e-4, "{t}");
        let wrap = sequence_wrap_seconds(BitRate::from_gbps(10));
        assert!((wrap - 1.718).abs() < 1e-3, "{wrap}");
        let wrap = sequence_wrap_seconds(BitRate::from_gbps(1));
        assert!((wrap - 17.18).abs() < 1e-2, "{wrap}");
        let paws = paws_rate_threshold().as_f64();
        assert!((paws / 1e6 - 143.2).abs() < 0.1, "{paws}");
    }
}
