//! `linerate gen`: the raw-frame generator's command line. The flags become the engine's
//! configuration (`linerate_traffic::generator`: the sending threads, AF_XDP or AF_PACKET
//! rings, pacing, CPU placement, and with `--receive` the counter), whose document is printed
//! as text (`gen/render.rs`) or JSON. Linux only: elsewhere it says so.

#[cfg(target_os = "linux")]
mod render;

use std::net::Ipv4Addr;
use std::process::ExitCode;

use anyhow::bail;
use linerate_traffic::affinity::CpuList;
use linerate_traffic::frame;
use linerate_traffic::generator::{self, Rate, parse_cpus, parse_mac};
use linerate_units::Duration;

/// Arguments of `linerate gen`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Needs Linux and CAP_NET_RAW. Frame sizes count the FCS, as `calc rate` \
                        does; imix is 7:4:1 of 40/576/1500-byte IP packets, interleaved.\n\n\
                        Examples:\n  linerate gen --dev veth0 --dst-ip 198.19.0.2 -t 10s\n  \
                        linerate gen --dev veth0 --dst-ip 198.19.0.2 --frame imix --rate 100kpps\n  \
                        linerate gen --dev veth0 --dst-ip 198.19.0.2 --frame 64,1518 \
                        --threads 2 --flows 16 --count 1000000 --json\n  \
                        linerate gen --dev veth0 --src-ip 198.19.0.1 --dst-ip 198.19.0.2 \
                        --threads 2 --cpu 0,1 \
                        --engine packet\n  \
                        linerate gen --receive --dev veth1 -t 10s --json\n\n\
                        --engine auto uses AF_XDP (zero-copy where the driver supports it, \
                        else copy mode) when every thread gets a queue of --dev, else the \
                        AF_PACKET ring, and says why (engine_fallback). The linerate.gen/1 \
                        JSON has sent_frames, sent_bytes, seconds, sent_pps, sent_l2_bps, \
                        engine, engine_detail and threads[] {thread, sent_frames, sent_pps, \
                        pinned, cpu, queue}.\n\n\
                        --receive counts, on --dev, only frames carrying linerate gen's \
                        signature: loss, duplicates and reordering from their sequence \
                        numbers (per sending thread and source address, between the first and \
                        last number seen), one-way latency percentiles from their send stamps \
                        (sender and receiver must share a clock, as namespaces of one host do), \
                        and the interface's own counters beside them. --count then counts \
                        received frames. Its --json schema is linerate.gen-receive/1: \
                        received_frames, received_pps, lost_frames, loss_ratio, \
                        duplicate_frames, reordered_frames, latency_us {min, p50, p90, p99, \
                        p999, max, mean}, ring_drops, interface {rx_packets, rx_bytes, \
                        rx_dropped}."
)]
pub struct Args {
    /// Interface to send on (with --receive: to count on)
    #[arg(long, value_name = "IFACE")]
    pub dev: String,

    /// Count linerate gen's frames arriving on --dev instead of sending
    #[arg(long)]
    pub receive: bool,

    /// Frame sizes with FCS: 64, 1518, imix, or a list like 64,512,1518 (interleaved)
    #[arg(long, value_name = "FRAMES", default_value = "64")]
    pub frame: String,

    /// Send rate over all threads: max, frames per second (100kpps) or an L2 bit rate (1G)
    #[arg(long, value_name = "RATE", default_value = "max", value_parser = Rate::parse,
          allow_negative_numbers = true)]
    pub rate: Rate,

    /// Sending threads, each with its own ring
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: u16,

    #[command(flatten)]
    pub send: SendArgs,

    /// Destination IPv4 address (needed unless --receive)
    #[arg(long, value_name = "ADDR", required_unless_present = "receive")]
    pub dst_ip: Option<Ipv4Addr>,

    /// How long to send (default 10s unless --count is given)
    #[arg(
        short = 't',
        long,
        value_name = "DURATION",
        allow_negative_numbers = true
    )]
    pub duration: Option<Duration>,

    /// Frames to send over all threads (with --receive: to receive), then stop
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,

    /// Print the result as JSON (schema linerate.gen/1; with --receive linerate.gen-receive/1)
    #[arg(long)]
    pub json: bool,
}

/// How `linerate gen` sends and addresses its frames: the flags `gen` and `rfc2544` share.
#[derive(Debug, clap::Args)]
pub struct SendArgs {
    /// Sending engine: auto (AF_XDP where it binds, else packet), packet (AF_PACKET TX ring),
    /// xdp (AF_XDP, zero-copy where the driver supports it, else copy mode)
    #[arg(long, value_name = "ENGINE", value_enum, default_value_t = Engine::Auto)]
    pub engine: Engine,

    /// CPUs to pin the sending threads to, one each in turn, e.g. 0,1 or 2-3 (default: the
    /// CPUs this process may use, in order)
    #[arg(long, value_name = "LIST", value_parser = |s: &str| parse_cpus(s).map(CpuList), conflicts_with = "no_pin")]
    pub cpu: Option<CpuList>,

    /// Do not pin the sending threads: the scheduler places them
    #[arg(long)]
    pub no_pin: bool,

    /// Flows: the UDP source port steps through N values, so RSS and conntrack see N flows
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub flows: u16,

    /// Destination MAC, the next hop's (default: gen: the neighbour entry of --dst-ip on --dev;
    /// rfc2544: learnt by ARP from --next-hop)
    #[arg(long, value_name = "MAC", value_parser = parse_mac)]
    pub dst_mac: Option<[u8; 6]>,

    /// Source IPv4 address (default: the first IPv4 address of the sending interface)
    #[arg(long, value_name = "ADDR")]
    pub src_ip: Option<Ipv4Addr>,

    /// UDP destination port
    #[arg(long, value_name = "PORT", default_value_t = 9)]
    pub port: u16,
}

impl SendArgs {
    /// Where the sending threads run.
    #[cfg(target_os = "linux")]
    pub fn placement(&self) -> generator::Placement {
        match (&self.cpu, self.no_pin) {
            (_, true) => generator::Placement::Unpinned,
            (Some(CpuList(list)), false) => generator::Placement::Cpus(list.clone()),
            (None, false) => generator::Placement::Allowed,
        }
    }
}

/// How frames are handed to the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// AF_XDP where the interface takes an AF_XDP socket per thread, else packet.
    Auto,
    /// An AF_PACKET `TPACKET_V2` transmit ring per thread, qdisc bypassed.
    Packet,
    /// An AF_XDP socket per thread, each on its own queue of the interface.
    Xdp,
}

impl From<Engine> for generator::Engine {
    fn from(e: Engine) -> Self {
        match e {
            Engine::Auto => generator::Engine::Auto,
            Engine::Packet => generator::Engine::Packet,
            Engine::Xdp => generator::Engine::Xdp,
        }
    }
}

/// Parses `--frame` (`linerate_traffic::frame::parse_sizes`).
fn parse_frames(s: &str) -> anyhow::Result<Vec<usize>> {
    frame::parse_sizes(s).map_err(anyhow::Error::msg)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    imp::run(args)
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::*;

    pub fn run(args: Args) -> anyhow::Result<ExitCode> {
        parse_frames(&args.frame)?;
        if args.receive {
            bail!(
                "linerate gen --receive needs Linux: it counts from an AF_PACKET receive ring, \
                 which {} has not",
                std::env::consts::OS
            );
        }
        bail!(
            "linerate gen needs Linux: it sends from AF_PACKET transmit rings, which {} has not",
            std::env::consts::OS
        )
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use super::*;
    use linerate_traffic::generator::{ReceiveConfig, SendConfig};

    use crate::output;
    use crate::stop::Stop;

    /// How long to run: the flag, refused when not positive.
    fn duration(args: &Args) -> anyhow::Result<Option<std::time::Duration>> {
        match args.duration {
            Some(d) if d.as_secs_f64() <= 0.0 => bail!("--duration: must be greater than zero"),
            d => Ok(d.map(|d| d.as_std())),
        }
    }

    pub fn run(args: Args) -> anyhow::Result<ExitCode> {
        if args.receive {
            return receive(&args);
        }
        let Some(dst_ip) = args.dst_ip else {
            bail!("--dst-ip is needed to send (the address linerate gen puts in its frames)");
        };
        let duration = duration(&args)?;
        let cfg = SendConfig {
            dev: args.dev.clone(),
            frames: parse_frames(&args.frame)?,
            rate: args.rate,
            threads: args.threads,
            engine: args.send.engine.into(),
            placement: args.send.placement(),
            flows: args.send.flows,
            dst_mac: args.send.dst_mac,
            src_ip: args.send.src_ip,
            dst_ip,
            port: args.send.port,
            duration,
            count: args.count,
        };
        let stop = Stop::install()?;
        let sent = generator::send(&cfg, stop.flag())?;
        if args.json {
            output::print_json(&sent)?;
        } else {
            output::print_text(&render::sent(&sent))?;
        }
        Ok(stop
            .signal()
            .map_or(ExitCode::SUCCESS, crate::stop::exit_code))
    }

    fn receive(args: &Args) -> anyhow::Result<ExitCode> {
        let cfg = ReceiveConfig {
            dev: args.dev.clone(),
            duration: duration(args)?,
            count: args.count,
        };
        let stop = Stop::install()?;
        let received = generator::receive(&cfg, stop.flag())?;
        if args.json {
            output::print_json(&received)?;
        } else {
            output::print_text(&render::received(&received))?;
        }
        Ok(stop
            .signal()
            .map_or(ExitCode::SUCCESS, crate::stop::exit_code))
    }
}
