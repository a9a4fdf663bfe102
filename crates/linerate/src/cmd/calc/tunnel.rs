//! `linerate calc tunnel`: inner MTU, TCP MSS and efficiency through a stack of encapsulations.

use linerate_calc::tunnel::{self, EncapSpec, IpVersion, TunnelReport};
use linerate_units::{BitRate, ByteSize};

use super::format::{Align, Table};

/// Arguments of `linerate calc tunnel`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Encapsulations: openvpn-udp, openvpn-tcp, wireguard, ipsec-esp-aes-gcm, ipsec-esp-aes-gcm-natt, \
gre, gretap, ipip, vxlan, geneve, pppoe, vlan, mpls. Add :ipv6 or :ipv4 to one to set its outer \
IP version (wireguard:ipv6). `--list` shows each one's header bytes, assumed configuration and \
source.

Examples:
  linerate calc tunnel --mtu 1500 --encap pppoe,wireguard --link 1G
  linerate calc tunnel --encap vxlan:ipv6 --inner ipv6
  linerate calc tunnel --list")]
pub struct Args {
    /// Encapsulations from the link inwards, repeated or comma-separated, e.g. pppoe,wireguard
    #[arg(
        long,
        value_name = "NAME[:ipv4|:ipv6]",
        value_delimiter = ',',
        required_unless_present = "list"
    )]
    encap: Vec<EncapSpec>,

    /// MTU of the underlying link (its Ethernet payload size)
    #[arg(long, value_name = "BYTES", default_value = "1500")]
    mtu: ByteSize,

    /// Outer IP version of encapsulations that do not say
    #[arg(long, value_enum, default_value_t = Ip::Ipv4)]
    outer: Ip,

    /// IP version of the packets inside (sets the TCP MSS)
    #[arg(long, value_enum, default_value_t = Ip::Ipv4)]
    inner: Ip,

    /// Link rate, to turn the efficiency into TCP goodput, e.g. 1G
    #[arg(long, value_name = "RATE", value_parser = super::positive_rate, allow_hyphen_values = true)]
    link: Option<BitRate>,

    /// List the encapsulations with their header bytes, assumptions and sources
    #[arg(long, conflicts_with = "encap")]
    list: bool,

    #[command(flatten)]
    output: super::OutputArgs,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Ip {
    Ipv4,
    Ipv6,
}

impl From<Ip> for IpVersion {
    fn from(ip: Ip) -> Self {
        match ip {
            Ip::Ipv4 => IpVersion::Ipv4,
            Ip::Ipv6 => IpVersion::Ipv6,
        }
    }
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let json = args.output.json;
    if args.list {
        let list = tunnel::list();
        return if json {
            super::print_json("linerate.calc.tunnel-list/1", &list)
        } else {
            crate::output::print_text(&render_list(&list))
        };
    }
    let report = tunnel::tunnel_report(
        args.mtu,
        &args.encap,
        args.outer.into(),
        args.inner.into(),
        args.link,
    )
    .map_err(|e| {
        let flag = match e {
            tunnel::TunnelError::Mtu { .. } => "--mtu",
            _ => "--encap",
        };
        anyhow::Error::new(e).context(format!("invalid {flag}"))
    })?;
    if json {
        super::print_json("linerate.calc.tunnel/1", &report)
    } else {
        crate::output::print_text(&render(&report))
    }
}

fn render_list(list: &tunnel::List) -> String {
    let mut t = Table::new(
        &[
            "encapsulation",
            "IPv4 outer",
            "IPv6 outer",
            "headers (IPv4 outer)",
        ],
        &[Align::Left, Align::Right, Align::Right, Align::Left],
    );
    for e in &list.encapsulations {
        let parts = e
            .parts
            .iter()
            .map(|p| format!("{} {}", p.name, p.bytes.bytes()))
            .collect::<Vec<_>>()
            .join(" + ");
        let (v4, v6) = match (e.bytes_ipv4, e.bytes_ipv6, e.bytes) {
            (Some(a), Some(b), _) => (a.to_string(), b.to_string()),
            (_, _, Some(n)) => (n.to_string(), n.to_string()),
            _ => (String::new(), String::new()),
        };
        t.row(vec![e.name.to_string(), v4, v6, parts]);
    }
    let mut out = String::from("Header bytes per encapsulation (full-size packets)\n\n");
    out.push_str(&t.render("  "));
    out.push_str("\nAssumptions and sources:\n");
    for e in &list.encapsulations {
        out.push_str(&format!("  {}: {}. [{}]\n", e.name, e.assumes, e.source));
    }
    out
}

fn render(r: &TunnelReport) -> String {
    let mut out = format!(
        "Link MTU {} bytes, encapsulations from the link inwards\n\n",
        r.link_mtu.bytes()
    );
    let mut t = Table::new(
        &["layer", "outer", "takes", "MTU inside", "headers"],
        &[
            Align::Left,
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Left,
        ],
    );
    for l in &r.layers {
        let parts = l
            .parts
            .iter()
            .map(|p| format!("{} {}", p.name, p.bytes.bytes()))
            .collect::<Vec<_>>()
            .join(" + ");
        let headers: u64 = l.parts.iter().map(|p| p.bytes.bytes()).sum();
        let note = if !l.encap.reduces_mtu() {
            " (grows the frame, not taken from the MTU)".to_owned()
        } else if l.overhead.bytes() > headers {
            format!(" + {} padding", l.overhead.bytes() - headers)
        } else {
            String::new()
        };
        t.row(vec![
            l.encap.to_string(),
            l.outer.map_or_else(|| "-".to_owned(), |v| v.to_string()),
            format!("{} B", l.overhead.bytes()),
            format!("{} B", l.mtu_inside.bytes()),
            format!("{parts}{note}"),
        ]);
    }
    out.push_str(&t.render("  "));
    out.push('\n');
    let tcp = match r.inner {
        IpVersion::Ipv4 => 40,
        IpVersion::Ipv6 => 60,
    };
    let mut s = Table::bare(&[Align::Left, Align::Left]);
    s.row(vec![
        "inner MTU".into(),
        format!(
            "{} B ({:.1}% of {}; the stack takes {} B)",
            r.inner_mtu.bytes(),
            r.mtu_efficiency.percent(),
            r.link_mtu.bytes(),
            r.overhead.bytes()
        ),
    ]);
    s.row(vec![
        "TCP MSS".into(),
        format!(
            "{} B ({} inside: MTU − {tcp}); clamp to it (TCPMSS --set-mss {})",
            r.tcp_mss.bytes(),
            r.inner,
            r.tcp_mss.bytes()
        ),
    ]);
    s.row(vec![
        "TCP payload".into(),
        format!(
            "{} B per full segment with timestamps (MSS − 12)",
            r.tcp_payload.bytes()
        ),
    ]);
    s.row(vec![
        "goodput share".into(),
        format!(
            "{:.1}% of line rate = {} B payload / {} B on the Ethernet wire; {:.1}% without tunnels",
            r.goodput_efficiency.percent(),
            r.tcp_payload.bytes(),
            r.wire_bytes.bytes(),
            r.goodput_efficiency_untunnelled.percent()
        ),
    ]);
    if let (Some(link), Some(goodput)) = (r.link, r.goodput) {
        s.row(vec![
            format!("TCP goodput at {}", link.human()),
            goodput.human().to_string(),
        ]);
    }
    out.push_str(&s.render("  "));
    for w in &r.warnings {
        out.push_str(&format!("\n  warning: {w}"));
    }
    if !r.warnings.is_empty() {
        out.push('\n');
    }
    out
}
