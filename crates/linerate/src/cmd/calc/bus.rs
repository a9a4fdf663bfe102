//! `linerate calc bus`: bus bandwidth and whether it carries the NICs.

use linerate_calc::bus::{Bus, BusReport, NicGroup, PcieLink, parse_parallel};

use super::format::{Align, Table, bus_bytes_per_sec};

/// Arguments of `linerate calc bus`.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("bus").required(true).multiple(false))]
#[command(after_help = "\
Parallel PCI and PCI-X are one bus shared by every card on it and by both directions; PCIe \
lanes are point-to-point and full duplex, with line encoding (8b/10b on gen 1-2, 128b/130b on \
gen 3-5). Figures use nominal clocks (33, 66, 133 MHz; the real ones are 33.33, 66.67, 133.33) \
and do not subtract protocol overhead (PCI arbitration, PCIe TLP headers), so real buses move \
less.

Examples:
  linerate calc bus --pcie gen3x8 --nics 2x10G
  linerate calc bus --pcix 64bit/133MHz --nics 2x1G
  linerate calc bus --pci 32bit/33MHz --nics 1G --json")]
pub struct Args {
    /// Conventional PCI bus: WIDTH/CLOCK, e.g. 32bit/33MHz, 64bit/66MHz
    #[arg(long, value_name = "WIDTH/CLOCK", group = "bus", value_parser = parse_parallel)]
    pci: Option<(u32, u32)>,

    /// PCI-X bus: WIDTH/CLOCK, e.g. 64bit/133MHz
    #[arg(long, value_name = "WIDTH/CLOCK", group = "bus", value_parser = parse_parallel)]
    pcix: Option<(u32, u32)>,

    /// PCIe link: genGxL, e.g. gen3x8, gen2x4, gen4x16
    #[arg(long, value_name = "genGxL", group = "bus")]
    pcie: Option<PcieLink>,

    /// NIC ports on the bus: COUNTxRATE, repeat or separate with commas, e.g. 2x10G or 4x1G,25G
    #[arg(long, value_name = "COUNTxRATE", value_delimiter = ',')]
    nics: Vec<NicGroup>,

    #[command(flatten)]
    output: super::OutputArgs,
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let json = args.output.json;
    let bus = if let Some((width_bits, clock_mhz)) = args.pci {
        Bus::Pci {
            width_bits,
            clock_mhz,
        }
    } else if let Some((width_bits, clock_mhz)) = args.pcix {
        Bus::PciX {
            width_bits,
            clock_mhz,
        }
    } else if let Some(link) = args.pcie {
        Bus::from(link)
    } else {
        anyhow::bail!("give one of --pci, --pcix or --pcie");
    };
    let report = BusReport::new(bus, &args.nics);
    if json {
        super::print_json("linerate.calc.bus/1", &report)
    } else {
        crate::output::print_text(&render(&report))
    }
}

fn both(r: linerate_units::BitRate) -> [String; 2] {
    [r.human().to_string(), bus_bytes_per_sec(r).to_string()]
}

pub fn render(r: &BusReport) -> String {
    let bw = &r.bandwidth;
    let mut out = format!("{}\n\n", r.name);
    let mut t = Table::bare(&[Align::Left, Align::Right, Align::Right, Align::Left]);
    let (raw_how, usable_how, duplex) = match r.bus {
        Bus::Pci {
            width_bits,
            clock_mhz,
        }
        | Bus::PciX {
            width_bits,
            clock_mhz,
        } => (
            format!("{width_bits} bit × {clock_mhz} MHz"),
            "no line encoding".to_owned(),
            "shared: all cards and both directions take turns",
        ),
        Bus::Pcie { generation, lanes } => (
            format!(
                "{} GT/s × {lanes} lane{}, per direction",
                generation.gigatransfers(),
                if lanes == 1 { "" } else { "s" }
            ),
            format!(
                "after {} encoding, per direction",
                generation.encoding_name()
            ),
            "full duplex: each direction gets the usable rate",
        ),
    };
    let [a, b] = both(bw.raw);
    t.row(vec!["raw".into(), a, b, raw_how]);
    let [a, b] = both(bw.usable);
    t.row(vec!["usable".into(), a, b, usable_how]);
    out.push_str(&t.render("  "));
    out.push_str(&format!("  {duplex}\n"));
    let Some(v) = &r.verdict else {
        out.push_str("\n  Give --nics (e.g. --nics 2x10G) for a verdict.\n");
        return out;
    };
    let nics = describe_nics(&r.nics);
    out.push_str(&format!("\nNICs: {nics}\n\n"));
    let mut t = Table::bare(&[Align::Left, Align::Right, Align::Right]);
    let [a, b] = both(v.needed_per_direction);
    t.row(vec![
        "needed per direction (all ports at line rate, full duplex)".into(),
        a,
        b,
    ]);
    let [a, b] = both(v.available_per_direction);
    t.row(vec![
        if bw.full_duplex {
            "available per direction".into()
        } else {
            "available per direction (half the shared bus)".into()
        },
        a,
        b,
    ]);
    if r.nics.len() > 1 {
        let [a, b] = both(v.per_nic_share);
        t.row(vec![
            if r.nics.len() == 2 {
                "each port's share of the bus with both busy".to_owned()
            } else {
                format!(
                    "each port's share of the bus with all {} busy",
                    r.nics.len()
                )
            },
            a,
            b,
        ]);
    }
    out.push_str(&t.render("  "));
    let ratio = v.available_per_direction.as_f64() / v.needed_per_direction.as_f64();
    out.push('\n');
    if v.enough {
        out.push_str(&format!(
            "  verdict: ENOUGH: the bus carries {nics} at line rate in both directions \
             ({ratio:.2}× what that needs)\n"
        ));
    } else {
        out.push_str(&format!(
            "  verdict: NOT ENOUGH: the bus moves {:.0}% of what {nics} needs at line rate in \
             both directions\n",
            ratio * 100.0
        ));
    }
    out
}

fn describe_nics(rates: &[linerate_units::BitRate]) -> String {
    let mut groups: Vec<(usize, linerate_units::BitRate)> = Vec::new();
    for &r in rates {
        match groups.last_mut() {
            Some((n, last)) if *last == r => *n += 1,
            _ => groups.push((1, r)),
        }
    }
    groups
        .iter()
        .map(|(n, r)| format!("{n} × {}", r.human()))
        .collect::<Vec<_>>()
        .join(" + ")
}
