//! Properties over the whole input space: parsers never panic, and the arithmetic keeps its
//! invariants (layers nest, bigger frames mean fewer frames, tunnels only take bytes away).

#![forbid(unsafe_code)]

use linerate_calc::bus::{NicGroup, PcieLink, parse_parallel};
use linerate_calc::ethernet::{self, Duplex, FrameSpec};
use linerate_calc::tunnel::{self, Encap, EncapSpec, IpVersion};
use linerate_units::{BitRate, ByteSize};
use proptest::prelude::*;

proptest! {
    #[test]
    fn parsers_never_panic(s in ".{0,32}") {
        let _ = s.parse::<FrameSpec>();
        let _ = s.parse::<NicGroup>();
        let _ = s.parse::<PcieLink>();
        let _ = s.parse::<EncapSpec>();
        let _ = parse_parallel(&s);
    }

    #[test]
    fn layers_nest_and_rates_fall_with_size(
        link in 1_000u64..1_000_000_000_000,
        a in 64u64..=16_384,
        b in 64u64..=16_384,
    ) {
        let link = BitRate::from_bps(link);
        let (small, large) = (a.min(b), a.max(b));
        let rs = ethernet::frame_rate(link, FrameSpec::size(small).unwrap(), Duplex::Full);
        let rl = ethernet::frame_rate(link, FrameSpec::size(large).unwrap(), Duplex::Full);
        prop_assert!(rs.frames_per_second >= rl.frames_per_second);
        for r in [&rs, &rl] {
            prop_assert!(r.l3_rate <= r.l2_rate);
            prop_assert!(r.l2_rate <= r.l1_rate);
            prop_assert!(r.l3_efficiency.fraction() < 1.0);
            let wire = r.frames_per_second.pps() * r.wire_bytes * 8.0;
            prop_assert!((wire - link.as_f64()).abs() <= link.as_f64() * 1e-9);
        }
    }

    #[test]
    fn tunnels_only_take_bytes(
        mtu in 68u64..=65_535,
        picks in proptest::collection::vec(0usize..Encap::ALL.len(), 1..5),
        v6 in any::<bool>(),
    ) {
        let specs: Vec<EncapSpec> = picks
            .iter()
            .map(|&i| EncapSpec { encap: Encap::ALL[i], outer: None })
            .collect();
        let outer = if v6 { IpVersion::Ipv6 } else { IpVersion::Ipv4 };
        if let Ok(r) = tunnel::tunnel_report(
            ByteSize::from_bytes(mtu),
            &specs,
            outer,
            IpVersion::Ipv4,
            None,
        ) {
            prop_assert!(r.inner_mtu <= r.link_mtu);
            prop_assert_eq!(r.overhead.bytes(), mtu - r.inner_mtu.bytes());
            prop_assert!(r.tcp_mss.bytes() + 40 == r.inner_mtu.bytes());
            prop_assert!(r.goodput_efficiency <= r.goodput_efficiency_untunnelled);
            let taken: u64 = r.layers.iter().map(|l| l.overhead.bytes()).sum();
            prop_assert_eq!(taken, r.overhead.bytes());
        }
    }
}
