//! Bus bandwidth: parallel PCI / PCI-X (one shared, half-duplex bus) and PCIe (per-lane serial
//! links, full duplex, with line encoding), and whether a bus can carry its NICs at line rate.

use std::fmt;
use std::str::FromStr;

use linerate_units::BitRate;

/// A PCI Express generation: transfer rate per lane and line encoding.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum PcieGen {
    /// 2.5 GT/s, 8b/10b.
    Gen1,
    /// 5 GT/s, 8b/10b.
    Gen2,
    /// 8 GT/s, 128b/130b.
    Gen3,
    /// 16 GT/s, 128b/130b.
    Gen4,
    /// 32 GT/s, 128b/130b.
    Gen5,
    /// 64 GT/s PAM4, FLIT mode (242 of 256 bytes carry data after FEC and CRC).
    Gen6,
}

impl PcieGen {
    /// All generations, oldest first.
    pub const ALL: [PcieGen; 6] = [
        PcieGen::Gen1,
        PcieGen::Gen2,
        PcieGen::Gen3,
        PcieGen::Gen4,
        PcieGen::Gen5,
        PcieGen::Gen6,
    ];

    /// Generation number (1–6).
    pub fn number(self) -> u8 {
        self as u8 + 1
    }

    /// From a generation number (1–6).
    pub fn from_number(n: u8) -> Option<Self> {
        Self::ALL.get(usize::from(n).checked_sub(1)?).copied()
    }

    /// Transfers per second per lane, in GT/s (one transfer = one bit per lane).
    pub fn gigatransfers(self) -> f64 {
        match self {
            PcieGen::Gen1 => 2.5,
            PcieGen::Gen2 => 5.0,
            PcieGen::Gen3 => 8.0,
            PcieGen::Gen4 => 16.0,
            PcieGen::Gen5 => 32.0,
            PcieGen::Gen6 => 64.0,
        }
    }

    /// The generation of a link speed as sysfs prints it (`current_link_speed`:
    /// "8.0 GT/s PCIe", "2.5 GT/s"), or `None` if unknown.
    pub fn from_sysfs_speed(text: &str) -> Option<Self> {
        let gts: f64 = text.split_whitespace().next()?.parse().ok()?;
        Self::ALL
            .into_iter()
            .find(|g| (g.gigatransfers() - gts).abs() < 0.01)
    }

    /// Line encoding as (payload bits, line bits).
    pub fn encoding(self) -> (u32, u32) {
        match self {
            PcieGen::Gen1 | PcieGen::Gen2 => (8, 10),
            PcieGen::Gen3 | PcieGen::Gen4 | PcieGen::Gen5 => (128, 130),
            PcieGen::Gen6 => (242, 256),
        }
    }

    /// The encoding's name, e.g. "8b/10b".
    pub fn encoding_name(self) -> &'static str {
        match self {
            PcieGen::Gen1 | PcieGen::Gen2 => "8b/10b",
            PcieGen::Gen3 | PcieGen::Gen4 | PcieGen::Gen5 => "128b/130b",
            PcieGen::Gen6 => "FLIT 242B/256B",
        }
    }
}

/// A bus a NIC sits on.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Bus {
    /// Conventional PCI: a shared parallel bus, one direction at a time.
    Pci {
        /// Data width in bits (32 or 64).
        width_bits: u32,
        /// Clock in MHz (33, 66).
        clock_mhz: u32,
    },
    /// PCI-X: a shared parallel bus, one direction at a time.
    PciX {
        /// Data width in bits (usually 64).
        width_bits: u32,
        /// Clock in MHz (66, 100, 133, 266, 533).
        clock_mhz: u32,
    },
    /// PCI Express: point-to-point lanes, full duplex.
    Pcie {
        /// Generation.
        generation: PcieGen,
        /// Lane count (x1, x4, x8, x16).
        lanes: u32,
    },
}

/// What a bus can move.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BusBandwidth {
    /// Raw signalling rate: width × clock for PCI, GT/s × lanes for PCIe (per direction).
    pub raw: BitRate,
    /// What is left for data after line encoding (PCIe); equal to raw for PCI/PCI-X.
    /// Protocol overhead (TLP headers, DLLPs) is not subtracted: it depends on payload size.
    pub usable: BitRate,
    /// True when both directions get `usable` at once (PCIe); false when the two directions
    /// share it (PCI, PCI-X).
    pub full_duplex: bool,
}

impl Bus {
    /// The bus's bandwidth.
    pub fn bandwidth(&self) -> BusBandwidth {
        match *self {
            Bus::Pci {
                width_bits,
                clock_mhz,
            }
            | Bus::PciX {
                width_bits,
                clock_mhz,
            } => {
                let raw =
                    BitRate::from_bps(u64::from(width_bits) * u64::from(clock_mhz) * 1_000_000);
                BusBandwidth {
                    raw,
                    usable: raw,
                    full_duplex: false,
                }
            }
            Bus::Pcie { generation, lanes } => {
                let raw = generation.gigatransfers() * 1e9 * f64::from(lanes);
                let (payload, line) = generation.encoding();
                BusBandwidth {
                    raw: BitRate::from_bps_f64(raw),
                    usable: BitRate::from_bps_f64(raw * f64::from(payload) / f64::from(line)),
                    full_duplex: true,
                }
            }
        }
    }

    /// Whether the bus carries `nics` (their line rates) at line rate in both directions at once.
    /// A shared PCI bus is split between the cards and between directions.
    pub fn verdict(&self, nics: &[BitRate]) -> BusVerdict {
        let bw = self.bandwidth();
        let total: u64 = nics.iter().map(|r| r.bps()).sum();
        // Full duplex line rate: each NIC receives and transmits at its rate at once.
        let needed_per_direction = BitRate::from_bps(total);
        let available_per_direction = if bw.full_duplex {
            bw.usable
        } else {
            BitRate::from_bps(bw.usable.bps() / 2)
        };
        let per_nic_share = if nics.is_empty() {
            bw.usable
        } else {
            BitRate::from_bps(bw.usable.bps() / nics.len() as u64)
        };
        BusVerdict {
            needed_per_direction,
            available_per_direction,
            per_nic_share,
            enough: available_per_direction >= needed_per_direction,
        }
    }
}

/// Whether a bus is fast enough for its NICs.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BusVerdict {
    /// Sum of the NICs' line rates: what each direction must carry at full duplex line rate.
    pub needed_per_direction: BitRate,
    /// What each direction gets: the usable rate on PCIe, half of it on a shared PCI bus.
    pub available_per_direction: BitRate,
    /// Each NIC's share of the usable bandwidth when all are busy (PCI buses are shared).
    pub per_nic_share: BitRate,
    /// True when `available_per_direction >= needed_per_direction`.
    pub enough: bool,
}

impl fmt::Display for Bus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bus::Pci {
                width_bits,
                clock_mhz,
            } => write!(f, "PCI {width_bits}bit/{clock_mhz}MHz"),
            Bus::PciX {
                width_bits,
                clock_mhz,
            } => write!(f, "PCI-X {width_bits}bit/{clock_mhz}MHz"),
            Bus::Pcie { generation, lanes } => {
                write!(f, "PCIe gen{} x{lanes}", generation.number())
            }
        }
    }
}

/// Why a bus description did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{input}' is not a bus: {reason}")]
pub struct BusParseError {
    input: String,
    reason: &'static str,
}

/// Parses the width/clock form of a parallel bus: `32bit/33MHz`, `64bit/133MHz`, `64/66`.
pub fn parse_parallel(input: &str) -> Result<(u32, u32), BusParseError> {
    let err = |reason| BusParseError {
        input: input.to_owned(),
        reason,
    };
    let (width, clock) = input
        .split_once('/')
        .ok_or_else(|| err("expected WIDTHbit/CLOCKMHz, e.g. 32bit/33MHz"))?;
    let width = width.trim();
    let width = width
        .strip_suffix("bit")
        .or_else(|| width.strip_suffix("bits"))
        .unwrap_or(width)
        .trim_end_matches('-');
    let clock = clock.trim();
    let clock = clock
        .strip_suffix("MHz")
        .or_else(|| clock.strip_suffix("mhz"))
        .unwrap_or(clock);
    let width: u32 = width
        .parse()
        .map_err(|_| err("the width is not a number of bits"))?;
    let clock: u32 = clock
        .parse()
        .map_err(|_| err("the clock is not a number of MHz"))?;
    if !matches!(width, 8 | 16 | 32 | 64) {
        return Err(err("the width must be 32 or 64 bits"));
    }
    if clock == 0 || clock > 1066 {
        return Err(err("the clock must be between 1 and 1066 MHz"));
    }
    Ok((width, clock))
}

impl FromStr for PcieLink {
    type Err = BusParseError;

    /// Parses `gen3x8`, `gen3 x8`, `3x8`, `x8gen3`.
    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let err = |reason| BusParseError {
            input: input.to_owned(),
            reason,
        };
        let s = input.trim().to_ascii_lowercase().replace([' ', '-'], "");
        let (gen_part, lanes_part) = if let Some(rest) = s.strip_prefix('x') {
            let (lanes, generation) = rest
                .split_once("gen")
                .ok_or_else(|| err("expected genNxM, e.g. gen3x8"))?;
            (generation.to_owned(), lanes.to_owned())
        } else {
            let s = s.strip_prefix("gen").unwrap_or(&s);
            let (generation, lanes) = s
                .split_once('x')
                .ok_or_else(|| err("expected genNxM, e.g. gen3x8"))?;
            (generation.to_owned(), lanes.to_owned())
        };
        let generation: u8 = gen_part
            .parse()
            .map_err(|_| err("the generation must be a number from 1 to 6"))?;
        let generation =
            PcieGen::from_number(generation).ok_or_else(|| err("the generation must be 1 to 6"))?;
        let lanes: u32 = lanes_part
            .parse()
            .map_err(|_| err("the lane count must be a number (1, 2, 4, 8, 16, 32)"))?;
        if !matches!(lanes, 1 | 2 | 4 | 8 | 12 | 16 | 32) {
            return Err(err("the lane count must be 1, 2, 4, 8, 12, 16 or 32"));
        }
        Ok(PcieLink { generation, lanes })
    }
}

/// A PCIe link as written on the command line (`gen3x8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PcieLink {
    /// Generation.
    pub generation: PcieGen,
    /// Lanes.
    pub lanes: u32,
}

impl From<PcieLink> for Bus {
    fn from(link: PcieLink) -> Self {
        Bus::Pcie {
            generation: link.generation,
            lanes: link.lanes,
        }
    }
}

/// NICs of one speed on a bus: `2x10G` is two 10 Gbit/s ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct NicGroup {
    /// How many ports.
    pub count: u32,
    /// Each port's line rate.
    pub rate: BitRate,
}

/// Why a NIC list did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{input}' is not a NIC list: {reason}; expected COUNTxRATE, e.g. 2x10G or 4x1G,25G")]
pub struct NicParseError {
    input: String,
    reason: String,
}

impl FromStr for NicGroup {
    type Err = NicParseError;

    /// `2x10G`, `10G`, `4 x 1Gbit/s`.
    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let err = |reason: String| NicParseError {
            input: input.to_owned(),
            reason,
        };
        let s = input.trim();
        let (count, rate) = match s.split_once(['x', 'X', '*', '×']) {
            Some((count, rate)) if count.trim().chars().all(|c| c.is_ascii_digit()) => {
                let count: u32 = count
                    .trim()
                    .parse()
                    .map_err(|_| err("the count is not a number".into()))?;
                (count, rate)
            }
            _ => (1, s),
        };
        if count == 0 || count > 1024 {
            return Err(err("the count must be 1 to 1024".into()));
        }
        let rate: BitRate = rate.trim().parse().map_err(|e| err(format!("{e}")))?;
        if rate == BitRate::ZERO {
            return Err(err("a NIC's rate must be above zero".into()));
        }
        Ok(NicGroup { count, rate })
    }
}

/// Expands NIC groups into one line rate per port.
pub fn nic_rates(groups: &[NicGroup]) -> Vec<BitRate> {
    groups
        .iter()
        .flat_map(|g| std::iter::repeat_n(g.rate, g.count as usize))
        .collect()
}

/// A bus, what it moves and (with NICs) whether that is enough.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BusReport {
    /// The bus.
    pub bus: Bus,
    /// A readable name ("PCI-X 64bit/133MHz").
    pub name: String,
    /// Line encoding, for PCIe ("128b/130b"); `None` for parallel PCI.
    pub encoding: Option<&'static str>,
    /// What it moves.
    pub bandwidth: BusBandwidth,
    /// The NICs asked about, one line rate per port.
    pub nics: Vec<BitRate>,
    /// The verdict, when NICs were given.
    pub verdict: Option<BusVerdict>,
}

impl BusReport {
    /// The report for `bus` carrying `nics` (may be empty).
    pub fn new(bus: Bus, nics: &[NicGroup]) -> Self {
        let rates = nic_rates(nics);
        BusReport {
            bus,
            name: bus.to_string(),
            encoding: match bus {
                Bus::Pcie { generation, .. } => Some(generation.encoding_name()),
                _ => None,
            },
            bandwidth: bus.bandwidth(),
            verdict: (!rates.is_empty()).then(|| bus.verdict(&rates)),
            nics: rates,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: u64 = 8_000_000; // bits in a megabyte (10^6 bytes)

    #[test]
    fn parallel_pci_figures_from_the_guides() {
        let pci = Bus::Pci {
            width_bits: 32,
            clock_mhz: 66,
        };
        assert_eq!(pci.bandwidth().usable.bps(), 264 * MB);
        let pcix = Bus::PciX {
            width_bits: 64,
            clock_mhz: 133,
        };
        assert_eq!(pcix.bandwidth().usable.bps(), 1064 * MB);
        let two = pcix.verdict(&[BitRate::from_gbps(1), BitRate::from_gbps(1)]);
        assert_eq!(two.per_nic_share.bps(), 532 * MB);
    }

    #[test]
    fn pcie_encoding() {
        let g2x1 = Bus::from("gen2x1".parse::<PcieLink>().unwrap());
        assert_eq!(g2x1.bandwidth().usable, BitRate::from_gbps(4));
        let v = g2x1.verdict(&[BitRate::from_gbps(10), BitRate::from_gbps(10)]);
        assert!(!v.enough);
        let g3x8 = Bus::from("gen3x8".parse::<PcieLink>().unwrap());
        let usable = g3x8.bandwidth().usable.as_f64();
        assert!((usable - 64e9 * 128.0 / 130.0).abs() < 1.0);
        assert!(
            g3x8.verdict(&[BitRate::from_gbps(10), BitRate::from_gbps(10)])
                .enough
        );
        assert!(!g3x8.verdict(&[BitRate::from_gbps(100)]).enough);
    }

    #[test]
    fn parses_and_refuses() {
        assert_eq!(parse_parallel("32bit/33MHz"), Ok((32, 33)));
        assert_eq!(parse_parallel("64/133"), Ok((64, 133)));
        assert_eq!(parse_parallel("32-bit/66MHz"), Ok((32, 66)));
        assert_eq!(parse_parallel("64bits/133mhz"), Ok((64, 133)));
        assert!(parse_parallel("33MHz").is_err());
        assert!(parse_parallel("48bit/33MHz").is_err());
        assert_eq!("x16 gen4".parse::<PcieLink>().unwrap().lanes, 16);
        assert!("gen9x8".parse::<PcieLink>().is_err());
        assert!("gen3x3".parse::<PcieLink>().is_err());
        assert_eq!(
            PcieGen::from_sysfs_speed("8.0 GT/s PCIe"),
            Some(PcieGen::Gen3)
        );
        assert_eq!(PcieGen::from_sysfs_speed("Unknown"), None);
    }

    #[test]
    fn nic_groups() {
        let g: NicGroup = "2x10G".parse().unwrap();
        assert_eq!((g.count, g.rate), (2, BitRate::from_gbps(10)));
        let g: NicGroup = "25Gbit/s".parse().unwrap();
        assert_eq!((g.count, g.rate), (1, BitRate::from_gbps(25)));
        assert!("0x10G".parse::<NicGroup>().is_err());
        assert!(
            "2x10GB"
                .parse::<NicGroup>()
                .unwrap_err()
                .to_string()
                .contains("10GB")
        );
        assert!("2x0".parse::<NicGroup>().is_err());
        assert_eq!(
            nic_rates(&["2x10G".parse().unwrap(), "1G".parse().unwrap()]).len(),
            3
        );
    }

    #[test]
    fn report_of_two_gigabit_nics_on_pcix() {
        let bus = Bus::PciX {
            width_bits: 64,
            clock_mhz: 133,
        };
        let r = BusReport::new(bus, &["2x1G".parse().unwrap()]);
        assert_eq!(r.name, "PCI-X 64bit/133MHz");
        assert_eq!(r.encoding, None);
        let v = r.verdict.unwrap();
        assert_eq!(v.per_nic_share.bps(), 532 * MB);
        assert!(v.enough);
        assert_eq!(v.needed_per_direction, BitRate::from_gbps(2));
        let none = BusReport::new(bus, &[]);
        assert!(none.verdict.is_none());
    }
}
