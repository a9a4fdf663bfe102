//! `linerate rfc2544`'s flags and its run: the flags become an external test bed
//! (`linerate_lab::rfc2544::external`: the ports, the frames' addresses as `gen` takes them,
//! the generator's ceiling the way the user gives it) with its counter here or on another
//! host, and the search's plan; `measure` does the rest, as for a lab.

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use linerate_lab::StateDir;
use linerate_lab::rfc2544::ceiling::{self, Ceiling};
use linerate_lab::rfc2544::counter::{Counter, Local, Remote};
use linerate_lab::rfc2544::external::{Addressing, External, Sending, Setup};
use linerate_traffic::frame_counter::RemoteConfig;
use linerate_units::Duration;

use super::{measure, search};
use crate::stop::Stop;

/// Arguments of `linerate rfc2544`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Cabling: tester port --tx → DUT → tester port --rx. The frames go to the DUT's MAC on tx's \
side (--dst-mac, or learnt by ARP from --next-hop, the DUT's address there) addressed from \
--src-ip (tx's address) to --dst-ip (rx's address, which the DUT routes out of the port cabled \
to rx). With --rx-host the counting port is on another host, cabled to the DUT: that host runs \
`linerate server --allow-frame-counter` and counts on --rx-dev for us, through the control \
channel (its --allow list and authentication apply; --username etc. as for `client`).

Per frame size: a warm-up (a few frames through the DUT, so it resolves rx's address and \
learns its tables), the generator's own ceiling when there is a way to measure it, the search \
for NDR and PDR (as `lab rfc2544`), then one-way latency at 10/50/90 % of NDR. Loss is frames \
sent minus signed frames counted at the rx port.

The generator's ceiling: --ceiling-ports TX2,RX2 measures it on a second pair of tester ports \
cabled to each other (back to back: the whole tester, sending and counting, with no DUT in the \
way; the same NIC model as tx and rx gives the figure that bounds them); --ceiling-cmd CMD \
--ceiling-undo CMD makes the DUT drop what it receives for that measurement (e.g. `ssh dut \
sysctl net.inet.ip.forwarding=0`, undone with `=1`) and counts what the tx port put on the \
wire: the generator alone through the usual cabling, no re-cabling needed; the undo runs after \
the measurement, after a failure, and (kept in a marker) at the start of the next run on the \
same ports after a kill. Without either the ceiling is unknown, and an NDR within 10 % of the \
most the tester sent in any trial is marked possibly generator-bound.

One-way latency with a counter on another host needs the two clocks synchronised: both hosts \
on one kernel (network namespaces) is exact; otherwise both kernels must report their clocks \
disciplined by a time daemon (adjtimex), the offset is measured over the control channel (NTP's \
four timestamps, 16 exchanges, the least round trip kept) and a trial's latency is kept only \
where |offset| + RTT/2 is at most 10 % of it. Otherwise loss and rate only; the result says \
which (\"clocks:\").

The ports are locked while measured (in the lab state directory, LINERATE_LAB_STATE_DIR, \
default /run/linerate/lab): a second run on them is refused, naming this one. Stored as the \
experiment rfc2544-TX-RX (or --name), one run per frame size, which `linerate report` charts.

Examples:
  linerate rfc2544 --tx eth1 --rx eth2 --next-hop 198.18.0.254
  linerate rfc2544 --tx eth1 --rx eth2 --dst-mac 00:1b:21:3a:4b:5c --frame 64,1518 --threads 4
  linerate rfc2544 --tx eth1 --rx eth2 --next-hop 198.18.0.254 --ceiling-ports eth3,eth4
  linerate rfc2544 --tx eth1 --rx eth2 --next-hop 198.18.0.254 \\
      --ceiling-cmd 'ssh dut sysctl net.inet.ip.forwarding=0' \\
      --ceiling-undo 'ssh dut sysctl net.inet.ip.forwarding=1'
  linerate rfc2544 --tx eth1 --rx-host 192.0.2.9 --rx-dev eth2 --next-hop 198.18.0.254 \\
      --dst-ip 198.19.0.1")]
pub struct Args {
    /// The tester port cabled to the DUT's ingress (sends)
    #[arg(long, value_name = "IFACE")]
    tx: String,
    /// The tester port cabled to the DUT's egress (counts)
    #[arg(
        long,
        value_name = "IFACE",
        required_unless_present = "rx_host",
        conflicts_with = "rx_host"
    )]
    rx: Option<String>,
    /// The host whose `linerate server --allow-frame-counter` counts for us, HOST[:PORT]
    #[arg(long, value_name = "HOST[:PORT]", requires = "rx_dev", value_parser = parse_host)]
    rx_host: Option<(String, u16)>,
    /// Its port cabled to the DUT's egress (with --rx-host)
    #[arg(long, value_name = "IFACE", requires = "rx_host")]
    rx_dev: Option<String>,
    /// The DUT's address on tx's side, whose MAC ARP learns (unless --dst-mac)
    #[arg(long, value_name = "ADDR")]
    next_hop: Option<Ipv4Addr>,
    /// The frames' destination beyond the DUT (default: rx's first IPv4 address)
    #[arg(long, value_name = "ADDR")]
    dst_ip: Option<Ipv4Addr>,
    #[command(flatten)]
    send: crate::cmd::r#gen::SendArgs,
    /// Measure the generator's ceiling on a second pair of tester ports cabled back to back,
    /// TX2,RX2 (RX2 on the counter's host)
    #[arg(long, value_name = "TX2,RX2", value_parser = parse_pair,
          conflicts_with = "ceiling_cmd")]
    ceiling_ports: Option<(String, String)>,
    /// Command (run with sh -c) that makes the DUT drop what it receives, for the ceiling
    /// measurement
    #[arg(long, value_name = "CMD", requires = "ceiling_undo")]
    ceiling_cmd: Option<String>,
    /// Command that puts the DUT back after --ceiling-cmd
    #[arg(long, value_name = "CMD", requires = "ceiling_cmd")]
    ceiling_undo: Option<String>,
    /// Name of the test bed; the experiment is stored as it [default: rfc2544-TX-RX]
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    #[command(flatten)]
    auth: crate::cmd::client::auth::AuthArgs,
    /// Timeout for connecting to --rx-host and for each request there
    #[arg(long, value_name = "DURATION", default_value = "10s",
          value_parser = Duration::parse_with_unit, allow_hyphen_values = true)]
    connect_timeout: Duration,
    #[command(flatten)]
    search: search::SearchArgs,
}

fn parse_host(s: &str) -> Result<(String, u16), String> {
    linerate_traffic::frame_counter::host_and_port(s, linerate_traffic::protocol::DEFAULT_PORT)
}

/// `A,B`: two interface names.
fn parse_pair(s: &str) -> Result<(String, String), String> {
    match s.split_once(',') {
        Some((a, b)) if !a.trim().is_empty() && !b.trim().is_empty() && !b.contains(',') => {
            Ok((a.trim().to_owned(), b.trim().to_owned()))
        }
        _ => Err(format!("'{s}': expected two interfaces, TX2,RX2")),
    }
}

/// Runs `linerate rfc2544`.
pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    if !linerate_sys::is_root() {
        bail!(
            "linerate rfc2544 needs root or CAP_NET_RAW (it sends and counts through packet \
             sockets)"
        );
    }
    let plan = search::plan(&a.search)?;
    let dir = StateDir::resolve(None);
    let (rx, rx_local) = match (&a.rx, &a.rx_dev) {
        (Some(rx), _) => (rx.clone(), true),
        (None, Some(dev)) => (dev.clone(), false),
        (None, None) => bail!("give --rx, or --rx-host and --rx-dev"),
    };
    let name = a.name.clone().unwrap_or_else(|| match &a.rx_host {
        Some((host, _)) => format!("rfc2544-{}-{host}-{rx}", a.tx),
        None => format!("rfc2544-{}-{rx}", a.tx),
    });
    let ceiling = match (&a.ceiling_ports, &a.ceiling_cmd, &a.ceiling_undo) {
        (Some((tx, rx)), _, _) => Ceiling::BackToBack {
            tx: tx.clone(),
            rx: rx.clone(),
        },
        (None, Some(drop), Some(undo)) => Ceiling::DutDrops {
            drop: drop.clone(),
            undo: undo.clone(),
            marker: marker(&dir, &name),
        },
        _ => Ceiling::Unknown,
    };
    let counter: Box<dyn Counter> = match &a.rx_host {
        None => Box::new(Local::default()),
        Some((host, port)) => Box::new(Remote::connect(&RemoteConfig {
            host: host.clone(),
            port: *port,
            authtoken: a.auth.authtoken()?,
            connect_timeout: a.connect_timeout.as_std(),
            longest_count: std::time::Duration::from_secs_f64(search::longest_count(&plan)),
        })?),
    };
    let setup = Setup {
        name: name.clone(),
        tx: a.tx.clone(),
        rx: rx.clone(),
        rx_local,
        addressing: Addressing {
            next_hop: a.next_hop,
            dst_mac: a.send.dst_mac,
            src_ip: a.send.src_ip,
            dst_ip: a.dst_ip,
        },
        sending: Sending {
            threads: a.search.threads,
            engine: a.send.engine.into(),
            placement: a.send.placement(),
            flows: a.send.flows,
            port: a.send.port,
        },
        ceiling,
        link: plan.link_rate.clone(),
    };
    let stop = Stop::install()?;
    let mut bed = External::new(&dir, setup, counter, stop.flag())?;
    let rx_place = match &a.rx_host {
        Some((host, port)) => format!("{rx} on {host}:{port}"),
        None => rx.clone(),
    };
    let bed = measure::Bed {
        bed: &mut bed,
        experiment: name.clone(),
        title: format!("{name} ({} → DUT → {rx_place})", a.tx),
        path: format!("{} → {rx_place}", a.tx),
        context: format!(
            "RFC 2544 throughput of the DUT between {} and {rx_place}",
            a.tx
        ),
    };
    measure::run(bed, &plan, &a.search, &stop)
}

/// Where the `--ceiling-undo` command is kept while the DUT drops.
fn marker(dir: &StateDir, name: &str) -> PathBuf {
    dir.side_file(name, ceiling::UNDO_SUFFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_pairs_parse() {
        assert_eq!(parse_host("198.18.0.9"), Ok(("198.18.0.9".into(), 5201)));
        assert_eq!(parse_host("b.example:5202"), Ok(("b.example".into(), 5202)));
        assert_eq!(parse_host("[2001:db8::1]:7"), Ok(("2001:db8::1".into(), 7)));
        assert_eq!(parse_host("2001:db8::1"), Ok(("2001:db8::1".into(), 5201)));
        assert!(
            parse_host("h:port")
                .unwrap_err()
                .contains("'port' is not a port")
        );
        assert!(parse_host("[::1").is_err());
        assert_eq!(parse_pair("eth3,eth4"), Ok(("eth3".into(), "eth4".into())));
        assert!(parse_pair("eth3").is_err() && parse_pair("a,b,c").is_err());
    }
}
