//! What an emulated link does to the frames of one direction.

use std::fmt;
use std::str::FromStr;

use linerate_calc::ethernet::{FCS, L1_OVERHEAD, MIN_FRAME};
use linerate_units::{BitRate, Duration, Percent};

/// Which bytes of a frame a link's rate counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RateLayer {
    /// The wire, as `calc rate` counts it: the frame with its FCS, padded to the 64-byte
    /// minimum, plus preamble, SFD and inter-frame gap. A 1 Gbit/s link then carries what
    /// real 1 Gbit/s Ethernet carries.
    #[default]
    L1,
    /// The frame as the kernel holds it (Ethernet header and payload, no FCS), as tbf and a
    /// netem without packet overhead count it; the rate is then above the wire's.
    L2,
}

impl RateLayer {
    /// The layer of records written before the layer was recorded: they counted L2.
    pub const fn legacy() -> RateLayer {
        RateLayer::L2
    }

    /// The bytes the rate counts for `frame_bytes` as the kernel holds them (header and
    /// payload, no FCS) standing for `segments` frames on the wire (a GSO super-frame stands
    /// for several; a plain frame for one).
    pub fn counted_bytes(self, frame_bytes: u64, segments: u64) -> u64 {
        match self {
            RateLayer::L2 => frame_bytes,
            RateLayer::L1 => {
                let segments = segments.max(1);
                (frame_bytes + segments * FCS).max(segments * MIN_FRAME) + segments * L1_OVERHEAD
            }
        }
    }

    /// Netem's `PACKETOVERHEAD` for this layer (`tc … netem rate RATE PACKETOVERHEAD`): the
    /// bytes netem adds to each packet's length (which has no FCS) before it paces.
    /// Netem does not pad short frames to 64 bytes; only the userspace emulator does.
    pub fn netem_packet_overhead(self) -> i32 {
        match self {
            // FCS 4 + preamble/SFD 8 + gap 12 = 24: a few bytes, it fits.
            RateLayer::L1 => i32::try_from(FCS + L1_OVERHEAD).unwrap_or(i32::MAX),
            RateLayer::L2 => 0,
        }
    }

    /// What the layer counts, in words.
    pub fn explain(self) -> &'static str {
        match self {
            RateLayer::L1 => {
                "L1, the wire: frame + 4 B FCS (padded to 64 B) + 8 B preamble/SFD + 12 B inter-frame gap, as `calc rate` counts"
            }
            RateLayer::L2 => {
                "L2: Ethernet header + payload as the kernel holds it (no FCS, preamble or gap)"
            }
        }
    }
}

impl fmt::Display for RateLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RateLayer::L1 => "L1",
            RateLayer::L2 => "L2",
        })
    }
}

impl FromStr for RateLayer {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "l1" => Ok(RateLayer::L1),
            "l2" => Ok(RateLayer::L2),
            _ => Err(format!(
                "expected l1 (the wire, as `calc rate` counts) or l2 (frames without FCS, preamble and gap), got {s:?}"
            )),
        }
    }
}

/// The impairment of one direction of a link. Everything defaults to "no effect".
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Impairment {
    /// Serialisation rate, counted at [`Impairment::rate_layer`]; `None` is unlimited.
    pub rate: Option<BitRate>,
    /// The layer the rate counts (records without it were written when the rate was L2).
    #[serde(default = "RateLayer::legacy")]
    pub rate_layer: RateLayer,
    /// One-way delay added to every frame.
    pub delay: Duration,
    /// Uniform jitter: each frame's delay is `delay ± jitter` (never below zero).
    pub jitter: Duration,
    /// Bernoulli loss probability.
    pub loss: Percent,
    /// Tail-drop limit: frames held in this direction (queued and in flight), as netem's limit.
    pub limit: u32,
    /// Whether jitter may reorder frames (default: no, a frame never overtakes another).
    pub reorder: bool,
}

impl Impairment {
    /// The default queue limit for a direction: twice the bandwidth-delay product in
    /// full-size frames, at least 1000 (netem's default); 10000 when the rate is unlimited.
    pub fn default_limit(
        rate: Option<BitRate>,
        delay: Duration,
        jitter: Duration,
        mtu: u32,
    ) -> u32 {
        match rate {
            None => 10_000,
            Some(rate) => {
                let frame_bits = f64::from(mtu + 14) * 8.0;
                let rtt_share = delay.as_secs_f64() + jitter.as_secs_f64();
                let bdp_frames = rate.as_f64() * rtt_share / frame_bits;
                let want = (2.0 * bdp_frames).ceil();
                if want > f64::from(u32::MAX) {
                    u32::MAX
                } else {
                    (want as u32).max(1000)
                }
            }
        }
    }

    /// A short human description, e.g. `1 Gbit/s, 20 ms ± 1 ms, loss 0.1%, limit 10000`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        parts.push(match self.rate {
            Some(r) => format!("{r} at {}", self.rate_layer),
            None => "unlimited".to_owned(),
        });
        if self.jitter > Duration::ZERO {
            parts.push(format!(
                "{} ± {}{}",
                self.delay,
                self.jitter,
                if self.reorder { " (may reorder)" } else { "" }
            ));
        } else {
            parts.push(format!("delay {}", self.delay));
        }
        if self.loss.fraction() > 0.0 {
            parts.push(format!("loss {}", self.loss));
        }
        parts.push(format!("limit {}", self.limit));
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn l1_counts_a_full_frame_as_calc_rate_does() {
        // A 1514-byte frame without FCS is a 1518-byte frame, 1538 bytes on the wire.
        let wire = linerate_calc::ethernet::frame_rate(
            BitRate::from_gbps(1),
            linerate_calc::ethernet::FrameSpec::Size(linerate_units::ByteSize::from_bytes(1518)),
            linerate_calc::ethernet::Duplex::Full,
        );
        let counted = RateLayer::L1.counted_bytes(1514, 1) as f64;
        let fps = 1e9 / (counted * 8.0);
        assert!((fps - wire.frames_per_second.pps()).abs() < 1e-6, "{fps}");
        assert_eq!(RateLayer::L2.counted_bytes(1514, 1), 1514);
    }

    #[test]
    fn l1_pads_short_frames_and_counts_every_segment_of_a_super_frame() {
        // A 42-byte ARP frame is padded to 64 bytes with its FCS: 84 on the wire.
        assert_eq!(RateLayer::L1.counted_bytes(42, 1), 84);
        assert_eq!(RateLayer::L1.counted_bytes(66, 0), 66 + 24);
        // Three 1514-byte segments: three FCSs, preambles and gaps.
        assert_eq!(RateLayer::L1.counted_bytes(3 * 1514, 3), 3 * 1538);
        assert_eq!(RateLayer::L2.counted_bytes(3 * 1514, 3), 3 * 1514);
    }

    #[test]
    fn layer_parses_prints_and_old_records_read_as_l2() {
        assert_eq!("l1".parse::<RateLayer>(), Ok(RateLayer::L1));
        assert_eq!("L2".parse::<RateLayer>(), Ok(RateLayer::L2));
        let err = "l3".parse::<RateLayer>().unwrap_err();
        assert!(err.contains("\"l3\""), "{err}");
        assert_eq!(RateLayer::default(), RateLayer::L1);
        let mut old = serde_json::to_value(Impairment {
            rate: Some(BitRate::from_mbps(100)),
            ..Impairment::default()
        })
        .unwrap_or_default();
        assert!(
            old.as_object_mut()
                .and_then(|m| m.remove("rate_layer"))
                .is_some()
        );
        let imp: Impairment = serde_json::from_value(old).expect("a record without rate_layer");
        assert_eq!(imp.rate_layer, RateLayer::L2);
        let new = serde_json::to_value(Impairment::default()).unwrap_or_default();
        assert_eq!(new["rate_layer"], "l1");
        assert_eq!(RateLayer::L1.netem_packet_overhead(), 24);
        assert_eq!(RateLayer::L2.netem_packet_overhead(), 0);
    }
}
