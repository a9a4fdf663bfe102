//! Ethernet line rate: how many frames per second a link carries at each frame size, and what
//! that is in bits per second at each layer.
//!
//! Layers, as the figures name them:
//! - **L1** (the wire): the frame plus preamble and start-of-frame delimiter (8 bytes) and the
//!   minimum inter-frame gap (12 bytes). L1 bit rate at line rate is the link rate itself.
//! - **L2** (the frame): destination and source MAC, EtherType, payload and FCS — the "frame
//!   size" of RFC 2544 (64 bytes is the smallest). Most NIC counters count this.
//! - **L3** (the IP packet): the frame minus the 14-byte header and 4-byte FCS.

use std::fmt;
use std::str::FromStr;

use linerate_units::{BitRate, ByteSize, Duration, PacketRate, Percent};

/// Preamble (7 bytes) plus start-of-frame delimiter (1 byte).
pub const PREAMBLE_SFD: u64 = 8;
/// Minimum inter-frame gap: 96 bit times.
pub const INTER_FRAME_GAP: u64 = 12;
/// Bytes on the wire around every frame: preamble, SFD and inter-frame gap.
pub const L1_OVERHEAD: u64 = PREAMBLE_SFD + INTER_FRAME_GAP;
/// Ethernet II header: two MAC addresses and the EtherType.
pub const ETHERNET_HEADER: u64 = 14;
/// Frame check sequence (CRC-32).
pub const FCS: u64 = 4;
/// Header plus FCS: what a frame adds to its IP packet.
pub const L2_OVERHEAD: u64 = ETHERNET_HEADER + FCS;
/// The smallest Ethernet frame (shorter payloads are padded up to it).
pub const MIN_FRAME: u64 = 64;
/// The largest frame accepted here (jumbo frames; most NICs stop at 9216 or 16 KiB).
pub const MAX_FRAME: u64 = 16_384;
/// The frame sizes of RFC 2544 section 9.1 for Ethernet.
pub const RFC2544_FRAME_SIZES: [u64; 7] = [64, 128, 256, 512, 1024, 1280, 1518];
/// Simple IMIX: IP packet sizes and their weights (7 × 40, 4 × 576, 1 × 1500 bytes).
pub const SIMPLE_IMIX: [(u64, u32); 3] = [(40, 7), (576, 4), (1500, 1)];

/// A frame size as asked for: one size, or the simple IMIX.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameSpec {
    /// One L2 frame size in bytes, FCS included (RFC 2544's definition).
    Size(ByteSize),
    /// Simple IMIX (7:4:1 of 40/576/1500-byte IP packets).
    Imix,
}

impl fmt::Display for FrameSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameSpec::Size(size) => write!(f, "{}", size.bytes()),
            FrameSpec::Imix => f.write_str("imix"),
        }
    }
}

impl serde::Serialize for FrameSpec {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Why a frame size was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameSpecError {
    /// Not a size and not `imix`.
    #[error("'{input}' is not a frame size: {reason}; expected bytes (64 … {MAX_FRAME}) or imix")]
    Invalid {
        /// The text given.
        input: String,
        /// Why the size parser refused it.
        reason: String,
    },
    /// Below the Ethernet minimum.
    #[error(
        "{bytes} bytes is below the Ethernet minimum frame of {MIN_FRAME} bytes (FCS included; \
         shorter payloads are padded to 64)"
    )]
    TooSmall {
        /// The size given.
        bytes: u64,
    },
    /// Above the largest jumbo frame accepted.
    #[error("{bytes} bytes is above the largest frame accepted ({MAX_FRAME} bytes)")]
    TooLarge {
        /// The size given.
        bytes: u64,
    },
}

impl FrameSpec {
    /// A checked frame size.
    pub fn size(bytes: u64) -> Result<Self, FrameSpecError> {
        if bytes < MIN_FRAME {
            Err(FrameSpecError::TooSmall { bytes })
        } else if bytes > MAX_FRAME {
            Err(FrameSpecError::TooLarge { bytes })
        } else {
            Ok(FrameSpec::Size(ByteSize::from_bytes(bytes)))
        }
    }
}

impl FromStr for FrameSpec {
    type Err = FrameSpecError;

    /// `64`, `1518`, `1518B`, `9000`, `imix`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let input = s.trim();
        if input.eq_ignore_ascii_case("imix") {
            return Ok(FrameSpec::Imix);
        }
        let size: ByteSize = input.parse().map_err(|e| FrameSpecError::Invalid {
            input: input.to_owned(),
            reason: format!("{e}"),
        })?;
        FrameSpec::size(size.bytes())
    }
}

/// Half duplex shares the medium between directions; full duplex carries line rate each way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Duplex {
    /// One direction at a time.
    Half,
    /// Both directions at line rate at once.
    Full,
}

impl Duplex {
    /// How many directions carry line rate at once.
    pub fn directions(self) -> u32 {
        match self {
            Duplex::Half => 1,
            Duplex::Full => 2,
        }
    }
}

/// The frames of one IMIX component.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct MixComponent {
    /// IP packet size.
    pub ip_packet: ByteSize,
    /// L2 frame size, FCS included, after padding to 64 bytes.
    pub frame: ByteSize,
    /// Relative weight (packets of this size per cycle).
    pub weight: u32,
}

/// Line rate for one frame size (or the mean of a mix).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FrameRate {
    /// The size asked for (`"64"`, `"imix"`).
    pub frame: FrameSpec,
    /// L2 frame size in bytes, FCS included (the mean for a mix, padded frames counted at 64).
    pub frame_bytes: f64,
    /// L3 IP packet size in bytes (the mean for a mix).
    pub ip_packet_bytes: f64,
    /// L1 bytes on the wire per frame: frame plus preamble, SFD and inter-frame gap.
    pub wire_bytes: f64,
    /// Frames per second in one direction at line rate (L1-exact: every byte on the wire counted).
    pub frames_per_second: PacketRate,
    /// Time one frame occupies the wire, gap included.
    pub time_per_frame: Duration,
    /// L1 bit rate: the link rate.
    pub l1_rate: BitRate,
    /// L2 bit rate: frames × frame size.
    pub l2_rate: BitRate,
    /// L3 bit rate: packets × IP packet size.
    pub l3_rate: BitRate,
    /// Share of the wire that carries IP packets.
    pub l3_efficiency: Percent,
    /// Frames per second a device must forward to keep every port at line rate: ×2 at full
    /// duplex (it receives and transmits line rate at once).
    pub forwarding_need: PacketRate,
    /// For a mix only: packets per second that make the link rate when bytes are counted at the
    /// Ethernet layer the way the FreeBSD router-tuning slides do (IP + 14-byte header; no FCS,
    /// padding, preamble or gap). This is the ≈350 Kpps-per-Gbit/s figure of those slides; the
    /// wire carries only `frames_per_second`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ethernet_layer_pps: Option<PacketRate>,
}

/// Line rate over a set of frame sizes.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RateTable {
    /// Link rate (L1).
    pub link: BitRate,
    /// Duplex the forwarding need assumes.
    pub duplex: Duplex,
    /// Per-frame byte overheads used.
    pub overheads: Overheads,
    /// One row per size.
    pub rows: Vec<FrameRate>,
    /// The IMIX composition, when a row is `imix`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub imix: Vec<MixComponent>,
}

/// The byte overheads in every computation, for the record.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Overheads {
    /// Preamble and SFD.
    pub preamble_sfd: ByteSize,
    /// Inter-frame gap.
    pub inter_frame_gap: ByteSize,
    /// Ethernet header.
    pub ethernet_header: ByteSize,
    /// FCS.
    pub fcs: ByteSize,
}

impl Overheads {
    /// Ethernet's.
    pub const ETHERNET: Overheads = Overheads {
        preamble_sfd: ByteSize::from_bytes(PREAMBLE_SFD),
        inter_frame_gap: ByteSize::from_bytes(INTER_FRAME_GAP),
        ethernet_header: ByteSize::from_bytes(ETHERNET_HEADER),
        fcs: ByteSize::from_bytes(FCS),
    };
}

/// The L2 frame that carries an IP packet of `ip_bytes`, padded to the 64-byte minimum.
pub fn frame_for_ip_packet(ip_bytes: u64) -> u64 {
    (ip_bytes + L2_OVERHEAD).max(MIN_FRAME)
}

/// Frames per second at line rate for frames of `frame_bytes` (FCS included).
pub fn frames_per_second(link: BitRate, frame_bytes: f64) -> PacketRate {
    PacketRate::from_pps(link.as_f64() / ((frame_bytes + L1_OVERHEAD as f64) * 8.0))
}

/// The simple IMIX composition with its frames.
pub fn simple_imix() -> Vec<MixComponent> {
    SIMPLE_IMIX
        .iter()
        .map(|&(ip, weight)| MixComponent {
            ip_packet: ByteSize::from_bytes(ip),
            frame: ByteSize::from_bytes(frame_for_ip_packet(ip)),
            weight,
        })
        .collect()
}

fn mean(mix: &[MixComponent], size: impl Fn(&MixComponent) -> f64) -> f64 {
    let weights: u32 = mix.iter().map(|c| c.weight).sum();
    mix.iter()
        .map(|c| size(c) * f64::from(c.weight))
        .sum::<f64>()
        / f64::from(weights)
}

/// Line rate of `link` for one frame size or the IMIX.
pub fn frame_rate(link: BitRate, spec: FrameSpec, duplex: Duplex) -> FrameRate {
    let (frame_bytes, ip_bytes, ethernet_layer_pps) = match spec {
        FrameSpec::Size(size) => {
            let frame = size.as_f64();
            (frame, frame - L2_OVERHEAD as f64, None)
        }
        FrameSpec::Imix => {
            let mix = simple_imix();
            let ip = mean(&mix, |c| c.ip_packet.as_f64());
            let eth_layer = ip + ETHERNET_HEADER as f64;
            (
                mean(&mix, |c| c.frame.as_f64()),
                ip,
                Some(PacketRate::from_pps(link.as_f64() / (eth_layer * 8.0))),
            )
        }
    };
    let wire_bytes = frame_bytes + L1_OVERHEAD as f64;
    let fps = frames_per_second(link, frame_bytes);
    FrameRate {
        frame: spec,
        frame_bytes,
        ip_packet_bytes: ip_bytes,
        wire_bytes,
        frames_per_second: fps,
        time_per_frame: Duration::from_secs_f64(wire_bytes * 8.0 / link.as_f64()),
        l1_rate: link,
        l2_rate: BitRate::from_bps_f64(fps.pps() * frame_bytes * 8.0),
        l3_rate: BitRate::from_bps_f64(fps.pps() * ip_bytes * 8.0),
        l3_efficiency: Percent::from_fraction(ip_bytes / wire_bytes),
        forwarding_need: PacketRate::from_pps(fps.pps() * f64::from(duplex.directions())),
        ethernet_layer_pps,
    }
}

/// Line rate of `link` for each of `specs`; the RFC 2544 sizes and IMIX when `specs` is empty.
pub fn rate_table(link: BitRate, specs: &[FrameSpec], duplex: Duplex) -> RateTable {
    let defaults: Vec<FrameSpec> = RFC2544_FRAME_SIZES
        .iter()
        .map(|&b| FrameSpec::Size(ByteSize::from_bytes(b)))
        .chain([FrameSpec::Imix])
        .collect();
    let specs = if specs.is_empty() { &defaults } else { specs };
    let rows = specs
        .iter()
        .map(|&spec| frame_rate(link, spec, duplex))
        .collect();
    RateTable {
        link,
        duplex,
        overheads: Overheads::ETHERNET,
        rows,
        imix: if specs.contains(&FrameSpec::Imix) {
            simple_imix()
        } else {
            Vec::new()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fps(link: BitRate, frame: u64) -> u64 {
        frame_rate(link, FrameSpec::size(frame).unwrap(), Duplex::Full)
            .frames_per_second
            .pps()
            .floor() as u64
    }

    #[test]
    fn acceptance_frames_per_second() {
        assert_eq!(fps(BitRate::from_gbps(1), 64), 1_488_095);
        assert_eq!(fps(BitRate::from_gbps(10), 64), 14_880_952);
        assert_eq!(fps(BitRate::from_gbps(1), 1518), 81_274);
    }

    #[test]
    fn full_duplex_gigabit_router_forwards_3_mpps() {
        let row = frame_rate(
            BitRate::from_gbps(1),
            FrameSpec::size(64).unwrap(),
            Duplex::Full,
        );
        assert!((row.forwarding_need.pps() - 2_976_190.476).abs() < 0.01);
        let half = frame_rate(
            BitRate::from_gbps(1),
            FrameSpec::size(64).unwrap(),
            Duplex::Half,
        );
        assert_eq!(half.forwarding_need, half.frames_per_second);
    }

    #[test]
    fn layers_of_a_64_byte_frame_at_10g() {
        let row = frame_rate(
            BitRate::from_gbps(10),
            FrameSpec::size(64).unwrap(),
            Duplex::Full,
        );
        assert_eq!(row.wire_bytes, 84.0);
        assert_eq!(row.ip_packet_bytes, 46.0);
        // 64/84 and 46/84 of the link.
        assert_eq!(row.l2_rate.bps(), 7_619_047_619);
        assert_eq!(row.l3_rate.bps(), 5_476_190_476);
        assert_eq!(row.time_per_frame.as_nanos(), 67); // 67.2 ns
        assert_eq!(row.l1_rate, BitRate::from_gbps(10));
    }

    #[test]
    fn simple_imix_at_a_gigabit() {
        let row = frame_rate(BitRate::from_gbps(1), FrameSpec::Imix, Duplex::Full);
        // The slides' figure: IP + 14-byte Ethernet header, mean 354.33 bytes → 352 775 pps.
        let eth = row.ethernet_layer_pps.unwrap().pps();
        assert_eq!(eth.round() as u64, 352_775);
        assert!((eth - 350_000.0).abs() < 5_000.0);
        // On the wire the 40-byte packets ride in 64-byte frames: mean frame 361.83 bytes,
        // + 20 bytes of L1 overhead.
        assert!((row.frame_bytes - 4342.0 / 12.0).abs() < 1e-9);
        assert!((row.ip_packet_bytes - 4084.0 / 12.0).abs() < 1e-9);
        assert_eq!(row.frames_per_second.pps().floor() as u64, 327_367);
        assert!((row.forwarding_need.pps() - 2.0 * row.frames_per_second.pps()).abs() < 1e-6);
    }

    #[test]
    fn default_table_is_rfc2544_plus_imix() {
        let t = rate_table(BitRate::from_gbps(10), &[], Duplex::Full);
        let labels: Vec<String> = t.rows.iter().map(|r| r.frame.to_string()).collect();
        assert_eq!(
            labels,
            ["64", "128", "256", "512", "1024", "1280", "1518", "imix"]
        );
        assert_eq!(t.imix.len(), 3);
        assert_eq!(t.imix[0].frame.bytes(), 64);
        let one = rate_table(
            BitRate::from_gbps(1),
            &[FrameSpec::size(9000).unwrap()],
            Duplex::Half,
        );
        assert_eq!(one.rows.len(), 1);
        assert!(one.imix.is_empty());
    }

    #[test]
    fn frame_specs_parse_and_refuse() {
        assert_eq!("imix".parse(), Ok(FrameSpec::Imix));
        assert_eq!("IMIX".parse(), Ok(FrameSpec::Imix));
        assert_eq!("1518B".parse(), FrameSpec::size(1518));
        assert_eq!(
            "63".parse::<FrameSpec>(),
            Err(FrameSpecError::TooSmall { bytes: 63 })
        );
        assert!(
            "63".parse::<FrameSpec>()
                .unwrap_err()
                .to_string()
                .contains("minimum frame of 64")
        );
        assert!("20000".parse::<FrameSpec>().is_err());
        assert!("big".parse::<FrameSpec>().is_err());
        assert!("64Mb".parse::<FrameSpec>().is_err());
    }
}
