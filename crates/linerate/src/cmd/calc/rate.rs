//! `linerate calc rate`: frames/s and bit rates per frame size.

use linerate_calc::ethernet::{self, Duplex, FrameRate, FrameSpec, RateTable};
use linerate_units::BitRate;
use linerate_units::human::{Digits, grouped, number};

use super::format::{Align, Table, seconds};

/// Arguments of `linerate calc rate`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Layers: L1 is the wire (frame + 8 bytes preamble/SFD + 12 bytes inter-frame gap); L2 is the \
frame as RFC 2544 sizes it (14-byte header + payload + 4-byte FCS); L3 is the IP packet \
(frame − 18). Frames/s are L1-exact: every byte on the wire is counted.

Examples:
  linerate calc rate --link 10G
  linerate calc rate --link 1G --frame 64,imix
  linerate calc rate --link 100M --duplex half --json")]
pub struct Args {
    /// Link rate (L1), e.g. 1G, 10G, 25Gbit/s, 100M
    #[arg(long, value_name = "RATE", value_parser = super::positive_rate, allow_hyphen_values = true)]
    link: BitRate,

    /// Frame size in bytes with FCS (64 … 16384) or "imix"; repeat or separate with commas.
    /// Default: the RFC 2544 sizes 64,128,256,512,1024,1280,1518 and simple IMIX
    #[arg(long, value_name = "BYTES|imix", value_delimiter = ',')]
    frame: Vec<FrameSpec>,

    /// Duplex of the link: full carries line rate both ways at once, so a router with every
    /// port busy forwards 2 × frames/s; half shares the medium between directions
    #[arg(long, value_enum, default_value_t = DuplexArg::Full)]
    duplex: DuplexArg,

    #[command(flatten)]
    output: super::OutputArgs,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum DuplexArg {
    Half,
    Full,
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let json = args.output.json;
    let duplex = match args.duplex {
        DuplexArg::Half => Duplex::Half,
        DuplexArg::Full => Duplex::Full,
    };
    let table = ethernet::rate_table(args.link, &args.frame, duplex);
    if json {
        super::print_json("linerate.calc.rate/1", &table)
    } else {
        crate::output::print_text(&render(&table))
    }
}

fn size(bytes: f64) -> String {
    number(bytes, Digits::Max(2))
}

fn row_cells(row: &FrameRate) -> Vec<String> {
    vec![
        row.frame.to_string(),
        size(row.frame_bytes),
        size(row.ip_packet_bytes),
        size(row.wire_bytes),
        grouped(row.frames_per_second.pps().floor() as u64),
        seconds(row.wire_bytes * 8.0 / row.l1_rate.as_f64()).to_string(),
        row.l2_rate.human().to_string(),
        row.l3_rate.human().to_string(),
        format!("{:.1}%", row.l3_efficiency.percent()),
        grouped(row.forwarding_need.pps().floor() as u64),
    ]
}

pub fn render(t: &RateTable) -> String {
    let (duplex, forward_head) = match t.duplex {
        Duplex::Full => ("full duplex", "fwd pps 2 dirs"),
        Duplex::Half => ("half duplex", "fwd pps"),
    };
    let mut out = format!(
        "Line rate of {} Ethernet, per direction ({duplex})\n\n",
        t.link.human()
    );
    let mut table = Table::new(
        &[
            "size",
            "L2 B",
            "L3 B",
            "L1 B",
            "frames/s",
            "time",
            "L2 rate",
            "L3 rate",
            "L3/L1",
            forward_head,
        ],
        &[
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
        ],
    );
    for row in &t.rows {
        table.row(row_cells(row));
    }
    out.push_str(&table.render("  "));
    out.push('\n');
    out.push_str(
        "  L2 B: the frame (header, payload, FCS); L3 B: the IP packet; L1 B: the frame on the \
         wire with preamble, SFD and gap.\n",
    );
    out.push_str(&format!(
        "  frames/s: at line rate in one direction (time: per frame); the L1 rate is the link, \
         {}.\n",
        t.link.human()
    ));
    out.push_str("  L2 rate: frames/s × frame (NIC counters); L3 rate: packets/s × IP packet.\n");
    match t.duplex {
        Duplex::Full => out.push_str(
            "  fwd pps: what a router must forward with every port receiving and sending \
             line rate at once (2 × frames/s).\n",
        ),
        Duplex::Half => {
            out.push_str("  fwd pps: half duplex shares the medium, so it equals frames/s.\n")
        }
    }
    if let Some(imix) = t.rows.iter().find(|r| r.frame == FrameSpec::Imix) {
        let mix = t
            .imix
            .iter()
            .map(|c| format!("{}×{}", c.weight, c.ip_packet.bytes()))
            .collect::<Vec<_>>()
            .join(" + ");
        out.push_str(&format!(
            "  imix: simple IMIX, IP packets {mix} bytes; sizes are means, and the 40-byte \
             packets ride in 64-byte (padded) frames.\n"
        ));
        if let Some(eth) = imix.ethernet_layer_pps {
            out.push_str(&format!(
                "  imix at the Ethernet layer (IP + 14-byte header, no FCS, padding, preamble or \
                 gap, as the FreeBSD router slides count it): {} pps make {}; the wire itself \
                 carries {} frames/s.\n",
                grouped(eth.pps().round() as u64),
                t.link.human(),
                grouped(imix.frames_per_second.pps().floor() as u64),
            ));
        }
    }
    out.push_str(&format!(
        "  overheads: preamble+SFD {} B, inter-frame gap {} B, Ethernet header {} B, FCS {} B.\n",
        t.overheads.preamble_sfd.bytes(),
        t.overheads.inter_frame_gap.bytes(),
        t.overheads.ethernet_header.bytes(),
        t.overheads.fcs.bytes(),
    ));
    out
}
