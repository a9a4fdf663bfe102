//! Kernel netem: detection (does this kernel have the qdisc?) and its options for one
//! direction (delay, jitter, loss, rate, limit). Netem counts a packet's length without FCS,
//! so an L1 rate (the default) is given to it as `rate RATE 24`: the FCS, preamble, SFD and
//! inter-frame gap as its per-packet overhead. Netem does not pad frames shorter than 64
//! bytes; linerate's userspace emulator does.

use crate::impair::Impairment;
use linerate_sys::netlink::{Netem, NetlinkError, Rtnl};

/// Whether the kernel has netem, asked the kernel itself: a netem qdisc without options on
/// `lo` (index 1) is refused with EINVAL when netem exists (it needs options) and ENOENT when
/// the kind is unknown. Nothing is created either way.
pub fn available(rtnl: &mut Rtnl) -> Result<bool, NetlinkError> {
    match rtnl.add_root_qdisc(1, "netem", None) {
        Ok(()) => Ok(true),
        Err(e) if e.errno() == Some(libc::EINVAL) => Ok(true),
        Err(e) if matches!(e.errno(), Some(libc::ENOENT | libc::EOPNOTSUPP)) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Netem's settings for `imp` (the wire layout is linerate-sys's).
pub fn settings(imp: &Impairment) -> Netem {
    Netem {
        limit: imp.limit,
        loss: (imp.loss.fraction().clamp(0.0, 1.0) * f64::from(u32::MAX)) as u32,
        latency_ns: imp.delay.as_nanos(),
        jitter_ns: imp.jitter.as_nanos(),
        rate_bytes_per_s: imp.rate.map(|rate| (rate.as_f64() / 8.0) as u64),
        packet_overhead: imp.rate_layer.netem_packet_overhead(),
    }
}

/// The TCA_OPTIONS blob of netem for `imp`: `struct tc_netem_qopt` then attributes.
pub fn options(imp: &Impairment) -> Vec<u8> {
    settings(imp).to_options()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::impair::RateLayer;
    use linerate_units::{BitRate, Duration, Percent};

    // From <linux/pkt_sched.h>, to read the blob back.
    const TCA_NETEM_RATE: u16 = 6;
    const TCA_NETEM_RATE64: u16 = 8;
    const TCA_NETEM_LATENCY64: u16 = 10;
    const TCA_NETEM_JITTER64: u16 = 11;

    fn attrs(blob: &[u8]) -> Vec<(u16, Vec<u8>)> {
        let mut out = Vec::new();
        let mut off = 24;
        while off + 4 <= blob.len() {
            let len = usize::from(u16::from_ne_bytes([blob[off], blob[off + 1]]));
            let ty = u16::from_ne_bytes([blob[off + 2], blob[off + 3]]);
            out.push((ty, blob[off + 4..off + len].to_vec()));
            off += (len + 3) & !3;
        }
        out
    }

    #[test]
    fn options_carry_limit_loss_delay_jitter_and_rate() {
        let imp = Impairment {
            rate: Some(BitRate::from_gbps(1)),
            delay: Duration::from_millis(20),
            jitter: Duration::from_millis(1),
            loss: Percent::new(50.0),
            limit: 10_000,
            reorder: false,
            rate_layer: RateLayer::L1,
        };
        let blob = options(&imp);
        assert_eq!(
            u32::from_ne_bytes([blob[4], blob[5], blob[6], blob[7]]),
            10_000
        );
        let loss = u32::from_ne_bytes([blob[8], blob[9], blob[10], blob[11]]);
        assert!((loss as f64 / u32::MAX as f64 - 0.5).abs() < 1e-6);
        let a = attrs(&blob);
        let get = |t: u16| {
            a.iter()
                .find(|(ty, _)| *ty == t)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        assert_eq!(get(TCA_NETEM_LATENCY64), 20_000_000u64.to_ne_bytes());
        assert_eq!(get(TCA_NETEM_JITTER64), 1_000_000u64.to_ne_bytes());
        assert_eq!(&get(TCA_NETEM_RATE)[0..4], &125_000_000u32.to_ne_bytes());
        // `tc qdisc add … netem rate 1gbit 24`: L1's FCS + preamble/SFD + gap per packet.
        assert_eq!(&get(TCA_NETEM_RATE)[4..8], &24i32.to_ne_bytes());
        assert!(
            a.iter().all(|(t, _)| *t != TCA_NETEM_RATE64),
            "1 Gbit/s fits in 32 bits of bytes/s"
        );
        let fast = options(&Impairment {
            rate: Some(BitRate::from_gbps(100)),
            ..imp
        });
        assert!(
            attrs(&fast)
                .iter()
                .any(|(t, v)| *t == TCA_NETEM_RATE64 && v == &12_500_000_000u64.to_ne_bytes())
        );
    }

    #[test]
    fn l2_rate_has_no_packet_overhead() {
        let imp = Impairment {
            rate: Some(BitRate::from_mbps(100)),
            rate_layer: RateLayer::L2,
            limit: 1000,
            ..Impairment::default()
        };
        assert_eq!(settings(&imp).packet_overhead, 0);
        let rate = attrs(&options(&imp))
            .into_iter()
            .find(|(t, _)| *t == TCA_NETEM_RATE)
            .map(|(_, v)| v)
            .unwrap_or_default();
        assert_eq!(
            rate,
            [12_500_000u32.to_ne_bytes(), [0; 4], [0; 4], [0; 4]].concat()
        );
        assert_eq!(
            settings(&Impairment {
                rate_layer: RateLayer::L1,
                ..imp
            })
            .packet_overhead,
            24
        );
    }
}
