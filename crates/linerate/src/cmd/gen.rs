//! `linerate gen`: a raw-frame generator. Ethernet/IPv4/UDP frames are built once per flow and
//! size (`linerate_traffic::frame`), stamped per frame with linerate's signature, a sequence
//! number and a send timestamp, and sent by one of two engines, a socket per thread: AF_XDP
//! (`linerate_sys::xdp`, one queue per thread) or an AF_PACKET `TPACKET_V2` transmit ring
//! (qdisc bypassed). Each thread is pinned to its own CPU unless told not to. A slot reused
//! for the same frame only gets its stamp and checksum rewritten. A rate is held by sleeping
//! between batches, never by spinning.
//! With `--receive` it is the matching counter instead (`gen/receive.rs`).

#[cfg(target_os = "linux")]
mod receive;

use std::net::Ipv4Addr;
use std::process::ExitCode;

use anyhow::bail;
use linerate_traffic::frame;
use linerate_units::{BitRate, Duration, PacketRate};

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
    #[arg(long, value_name = "RATE", default_value = "max", value_parser = parse_rate,
          allow_negative_numbers = true)]
    pub rate: Rate,

    /// Sending threads, each with its own ring
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: u16,

    /// Sending engine: auto (AF_XDP where it binds, else packet), packet (AF_PACKET TX ring),
    /// xdp (AF_XDP, zero-copy where the driver supports it, else copy mode)
    #[arg(long, value_name = "ENGINE", value_enum, default_value_t = Engine::Auto)]
    pub engine: Engine,

    /// CPUs to pin the sending threads to, one each in turn, e.g. 0,1 or 2-3 (default: the
    /// CPUs this process may use, in order)
    #[arg(long, value_name = "LIST", value_parser = parse_cpus, conflicts_with = "no_pin")]
    pub cpu: Option<CpuList>,

    /// Do not pin the sending threads: the scheduler places them
    #[arg(long)]
    pub no_pin: bool,

    /// Flows: the UDP source port steps through N values, so RSS and conntrack see N flows
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub flows: u16,

    /// Destination MAC (default: the neighbour entry of --dst-ip on --dev)
    #[arg(long, value_name = "MAC", value_parser = parse_mac)]
    pub dst_mac: Option<[u8; 6]>,

    /// Source IPv4 address (default: the first address of --dev)
    #[arg(long, value_name = "ADDR")]
    pub src_ip: Option<Ipv4Addr>,

    /// Destination IPv4 address (needed unless --receive)
    #[arg(long, value_name = "ADDR", required_unless_present = "receive")]
    pub dst_ip: Option<Ipv4Addr>,

    /// UDP destination port
    #[arg(long, value_name = "PORT", default_value_t = 9)]
    pub port: u16,

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

/// CPU numbers, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

/// Parses a CPU list: `0,2`, `0-3`, `0-1,4`.
fn parse_cpus(s: &str) -> Result<CpuList, String> {
    let mut cpus = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        let num = |v: &str| {
            v.trim()
                .parse::<usize>()
                .map_err(|_| format!("--cpu '{s}': '{v}' is not a CPU number"))
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("--cpu '{s}': range '{part}' runs backwards"));
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(num(part)?),
        }
    }
    if cpus.is_empty() {
        return Err(format!("--cpu '{s}': no CPU given"));
    }
    Ok(CpuList(cpus))
}

/// A send rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rate {
    /// As fast as the rings drain.
    Max,
    /// Frames per second.
    Pps(f64),
    /// Bits per second at L2 (frame bytes with FCS).
    Bits(f64),
}

fn parse_rate(s: &str) -> Result<Rate, String> {
    if s.eq_ignore_ascii_case("max") {
        return Ok(Rate::Max);
    }
    if s.to_ascii_lowercase().ends_with("pps")
        && let Ok(p) = s.parse::<PacketRate>()
        && p.pps() > 0.0
    {
        return Ok(Rate::Pps(p.pps()));
    }
    match BitRate::parse_with_unit(s) {
        Ok(b) if b.as_f64() > 0.0 => Ok(Rate::Bits(b.as_f64())),
        Ok(_) => Err(format!("'{s}': a rate must be greater than zero")),
        Err(e) => Err(format!(
            "'{s}' is not max, a frame rate (100kpps) or a bit rate: {e}"
        )),
    }
}

fn parse_mac(s: &str) -> Result<[u8; 6], String> {
    let parts: Vec<&str> = s.split(':').collect();
    let mut mac = [0u8; 6];
    if parts.len() != 6 {
        return Err(format!(
            "'{s}' is not a MAC address (expected aa:bb:cc:dd:ee:ff)"
        ));
    }
    for (m, p) in mac.iter_mut().zip(parts) {
        *m = u8::from_str_radix(p, 16)
            .map_err(|_| format!("'{s}' is not a MAC address (bad byte '{p}')"))?;
    }
    Ok(mac)
}

/// Parses `--frame`: sizes with weights, in the interleaved order of one cycle.
fn parse_frames(s: &str) -> anyhow::Result<Vec<usize>> {
    let mut sizes: Vec<(usize, u32)> = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        if part.eq_ignore_ascii_case("imix") {
            for c in linerate_calc::ethernet::simple_imix() {
                let bytes = usize::try_from(c.frame.bytes()).unwrap_or(usize::MAX);
                sizes.push((bytes, c.weight));
            }
            continue;
        }
        let n: usize = part
            .trim_end_matches(['B', 'b'])
            .parse()
            .map_err(|_| anyhow::anyhow!("--frame '{part}': not a frame size in bytes or imix"))?;
        if !(frame::MIN_FRAME..=frame::MAX_FRAME).contains(&n) {
            bail!(
                "--frame {n}: out of range, expected {} … {} bytes (FCS included)",
                frame::MIN_FRAME,
                frame::MAX_FRAME
            );
        }
        sizes.push((n, 1));
    }
    let weights: Vec<u32> = sizes.iter().map(|s| s.1).collect();
    Ok(frame::interleave(&weights)
        .into_iter()
        .map(|i| sizes[i].0)
        .collect())
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
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Instant, SystemTime, UNIX_EPOCH};

    use anyhow::Context as _;
    use linerate_sys::txring::TxRing;
    use linerate_sys::xdp::{XdpMode, XskTx};
    use linerate_traffic::frame::{FlowAddr, Template};
    use serde::Serialize;

    use crate::output;
    use crate::stop::Stop;

    /// The `linerate.gen/1` document.
    #[derive(Debug, Serialize)]
    struct Report {
        schema: &'static str,
        dev: String,
        sent_frames: u64,
        sent_bytes: u64,
        seconds: f64,
        sent_pps: f64,
        sent_l2_bps: f64,
        /// `packet` or `xdp`: the engine used.
        engine: &'static str,
        /// How the engine sends (ring kind, AF_XDP copy or zero-copy).
        engine_detail: String,
        /// Why `--engine auto` did not use AF_XDP (absent otherwise).
        #[serde(skip_serializing_if = "Option::is_none")]
        engine_fallback: Option<String>,
        threads: Vec<ThreadReport>,
    }

    #[derive(Debug, Serialize)]
    struct ThreadReport {
        thread: u16,
        sent_frames: u64,
        sent_bytes: u64,
        seconds: f64,
        sent_pps: f64,
        wrong_format: u64,
        /// Whether the thread was pinned to one CPU.
        pinned: bool,
        /// The CPU it was pinned to, or (unpinned) the one it ran on last.
        cpu: Option<usize>,
        /// The interface queue of its AF_XDP socket (xdp engine only).
        #[serde(skip_serializing_if = "Option::is_none")]
        queue: Option<u32>,
    }

    /// Frames stamped and queued between two kicks of the kernel.
    const BATCH: usize = 256;
    /// Slots of each AF_PACKET ring / chunks of each AF_XDP UMEM.
    const RING_FRAMES: usize = 4096;

    /// One thread's way to the kernel.
    enum Tx {
        Packet(TxRing),
        Xdp(XskTx, u32),
    }

    impl Tx {
        /// Queues one frame; `fill` is given the buffer and its slot (or chunk) index.
        fn push(&mut self, fill: impl FnOnce(&mut [u8], usize) -> usize) -> bool {
            match self {
                Tx::Packet(r) => r.push_indexed(fill),
                Tx::Xdp(x, _) => x.push_indexed(fill),
            }
        }

        /// Slots (packet) or chunks (xdp): the range of the index `push` gives.
        fn slots(&self) -> usize {
            match self {
                Tx::Packet(r) => r.slots(),
                Tx::Xdp(x, _) => x.chunks(),
            }
        }

        fn flush(&mut self) -> std::io::Result<()> {
            match self {
                Tx::Packet(r) => r.flush(),
                Tx::Xdp(x, _) => x.flush(),
            }
        }

        fn wait(&mut self, timeout: std::time::Duration) -> std::io::Result<()> {
            match self {
                Tx::Packet(r) => r.wait(timeout),
                Tx::Xdp(x, _) => x.wait(timeout),
            }
        }

        /// Hands everything queued to the kernel before the thread reports (bounded).
        fn drain(&mut self) -> std::io::Result<()> {
            self.flush()?;
            if let Tx::Xdp(x, _) = self {
                let until = Instant::now() + std::time::Duration::from_secs(1);
                while x.outstanding() > 0 && Instant::now() < until {
                    x.wait(std::time::Duration::from_millis(1))?;
                    x.flush()?;
                }
            }
            Ok(())
        }

        fn wrong_format(&self) -> u64 {
            match self {
                Tx::Packet(r) => r.wrong_format(),
                Tx::Xdp(..) => 0,
            }
        }

        fn queue(&self) -> Option<u32> {
            match self {
                Tx::Packet(_) => None,
                Tx::Xdp(_, q) => Some(*q),
            }
        }
    }

    fn permission(dev: &str, e: std::io::Error, what: &str) -> anyhow::Error {
        if e.kind() == std::io::ErrorKind::PermissionDenied {
            anyhow::anyhow!(
                "linerate gen needs CAP_NET_RAW to open {what} on {dev} (run as root or grant \
                 the capability)"
            )
        } else {
            anyhow::Error::new(e).context(format!("opening {what} on {dev}"))
        }
    }

    fn open_packet(dev: &str, slot: usize, threads: usize) -> anyhow::Result<Vec<Tx>> {
        (0..threads)
            .map(|_| {
                TxRing::open(dev, slot, RING_FRAMES, true)
                    .map(Tx::Packet)
                    .map_err(|e| permission(dev, e, "a packet transmit ring"))
            })
            .collect()
    }

    /// One AF_XDP socket per thread on queues 0, 1, …: zero-copy where the driver takes it,
    /// else copy mode. The error says why the kernel or driver refused.
    fn open_xdp(dev: &str, largest: usize, threads: usize) -> anyhow::Result<(Vec<Tx>, XdpMode)> {
        if largest > frame::FCS + 2048 {
            bail!(
                "--engine xdp sends frames up to 2052 bytes (one 2 KiB UMEM chunk each); \
                 --frame {largest} needs --engine packet"
            );
        }
        let queues = tx_queues(dev);
        if let Some(q) = queues
            && q < threads
        {
            bail!(
                "--engine xdp with --threads {threads} needs {threads} queues on {dev} (it has \
                 {q}): one AF_XDP socket per queue. Create the veth with numtxqueues \
                 {threads} numrxqueues {threads}, or use --engine packet"
            );
        }
        let mut out = Vec::new();
        let mut mode = XdpMode::ZeroCopy;
        for t in 0..threads {
            let q = t as u32;
            let sock = match XskTx::open(dev, q, RING_FRAMES as u32, mode) {
                Ok(s) => s,
                Err(_) if mode == XdpMode::ZeroCopy => {
                    mode = XdpMode::Copy;
                    XskTx::open(dev, q, RING_FRAMES as u32, mode)
                        .map_err(|e| xdp_error(dev, q, e))?
                }
                Err(e) => return Err(xdp_error(dev, q, e)),
            };
            out.push(Tx::Xdp(sock, q));
        }
        Ok((out, mode))
    }

    fn xdp_error(dev: &str, queue: u32, e: std::io::Error) -> anyhow::Error {
        let why = match e.raw_os_error() {
            // EAFNOSUPPORT
            Some(97) => "this kernel has no AF_XDP (CONFIG_XDP_SOCKETS)".to_owned(),
            // EPERM, EACCES
            Some(1) | Some(13) => return permission(dev, e, "an AF_XDP socket"),
            // EBUSY, EINVAL, EOPNOTSUPP
            Some(16) => format!("queue {queue} of {dev} is already bound by another AF_XDP socket"),
            Some(22) => format!("{dev} has no queue {queue}, or refuses AF_XDP on it"),
            Some(95) => format!("the driver of {dev} refuses AF_XDP"),
            _ => e.to_string(),
        };
        anyhow::anyhow!(
            "--engine xdp: cannot bind an AF_XDP socket to {dev} queue {queue}: {why} ({e})"
        )
    }

    /// Transmit queues of `dev` (/sys/class/net/DEV/queues/tx-*), when sysfs says.
    fn tx_queues(dev: &str) -> Option<usize> {
        let dir = std::fs::read_dir(format!("/sys/class/net/{dev}/queues")).ok()?;
        Some(
            dir.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("tx-"))
                .count(),
        )
    }

    /// The CPU each thread is pinned to (None: not pinned).
    fn placement(args: &Args, threads: usize) -> anyhow::Result<Vec<Option<usize>>> {
        if args.no_pin {
            return Ok(vec![None; threads]);
        }
        let allowed = linerate_sys::affinity::allowed_cpus();
        let list = match &args.cpu {
            Some(CpuList(list)) => {
                if let Some(bad) = list
                    .iter()
                    .find(|c| !allowed.is_empty() && !allowed.contains(c))
                {
                    bail!(
                        "--cpu: CPU {bad} is not one this process may run on (allowed: {:?})",
                        allowed
                    );
                }
                list.clone()
            }
            None if allowed.is_empty() => return Ok(vec![None; threads]),
            None => allowed,
        };
        Ok((0..threads).map(|t| Some(list[t % list.len()])).collect())
    }

    pub fn run(args: Args) -> anyhow::Result<ExitCode> {
        if args.receive {
            return super::receive::run(&args);
        }
        let Some(dst_ip) = args.dst_ip else {
            bail!("--dst-ip is needed to send (the address linerate gen puts in its frames)");
        };
        if args.duration.is_some_and(|d| d.as_secs_f64() <= 0.0) {
            bail!("--duration: must be greater than zero");
        }
        let order = parse_frames(&args.frame)?;
        let src_mac = read_mac(&args.dev)?;
        let src_ip = match args.src_ip {
            Some(ip) => ip,
            None => bail!(
                "--src-ip is needed (the address linerate gen puts in its frames), e.g. \
                 --src-ip 198.18.0.1"
            ),
        };
        let dst_mac = match args.dst_mac {
            Some(m) => m,
            None => neighbour_mac(&args.dev, dst_ip)?,
        };
        let base = FlowAddr {
            dst_mac,
            src_mac,
            src_ip,
            dst_ip,
            src_port: 10000,
            dst_port: args.port,
        };
        let mean_frame = order.iter().sum::<usize>() as f64 / order.len() as f64;
        let pps = match args.rate {
            Rate::Max => None,
            Rate::Pps(p) => Some(p),
            Rate::Bits(b) => Some(b / (mean_frame * 8.0)),
        };
        let seconds = match (args.duration, args.count) {
            (Some(d), _) => d.as_secs_f64(),
            (None, Some(_)) => f64::INFINITY,
            (None, None) => 10.0,
        };
        let largest = order.iter().copied().max().unwrap_or(64);
        // A packet ring slot holds the tpacket2 header (32 bytes), the virtio_net_hdr (10)
        // and the frame without FCS.
        let slot = (largest + 32 + 10).next_power_of_two().max(2048);
        // Templates per flow and size, indexed [flow][size position in order].
        let mut templates = Vec::new();
        for f in 0..args.flows {
            let mut row = Vec::new();
            for &size in &order {
                row.push(Template::new(&base.nth(f), size)?);
            }
            templates.push(row);
        }
        let templates = Arc::new(templates);
        let threads = usize::from(args.threads);
        let cpus = placement(&args, threads)?;
        // Open every socket first, so a permission error is one clear message.
        let mut fallback = None;
        let (rings, engine, detail) = match args.engine {
            Engine::Packet => (
                open_packet(&args.dev, slot, threads)?,
                "packet",
                "AF_PACKET TPACKET_V2 transmit ring per thread, qdisc bypassed".to_owned(),
            ),
            Engine::Xdp => {
                let (r, mode) = open_xdp(&args.dev, largest, threads)?;
                (r, "xdp", xdp_detail(mode))
            }
            Engine::Auto => match open_xdp(&args.dev, largest, threads) {
                Ok((r, mode)) => (r, "xdp", xdp_detail(mode)),
                Err(e) => {
                    fallback = Some(format!("{e:#}"));
                    (
                        open_packet(&args.dev, slot, threads)?,
                        "packet",
                        "AF_PACKET TPACKET_V2 transmit ring per thread, qdisc bypassed".to_owned(),
                    )
                }
            },
        };
        let stop = Stop::install()?;
        let started = Instant::now();
        let deadline = started + std::time::Duration::from_secs_f64(seconds.min(1e9));
        let mut handles = Vec::new();
        for (t, ring) in rings.into_iter().enumerate() {
            let share = |n: u64| n / threads as u64 + u64::from((t as u64) < n % threads as u64);
            let job = Job {
                thread: t as u16,
                templates: Arc::clone(&templates),
                pps: pps.map(|p| p / threads as f64),
                count: args.count.map(share).unwrap_or(u64::MAX),
                deadline,
                stop: Arc::clone(stop.flag()),
                cpu: cpus[t],
            };
            handles.push(
                std::thread::Builder::new()
                    .name(format!("gen-{t}"))
                    .spawn(move || job.send(ring))
                    .context("starting a sender thread")?,
            );
        }
        let mut per = Vec::new();
        for h in handles {
            per.push(
                h.join()
                    .map_err(|_| anyhow::anyhow!("a sender thread panicked"))??,
            );
        }
        // The senders' own time (first frame to last hand-over), not thread start-up.
        let secs = per
            .iter()
            .map(|p| p.seconds)
            .fold(0.0, f64::max)
            .max(1e-9)
            .min(started.elapsed().as_secs_f64().max(1e-9));
        let sent: u64 = per.iter().map(|p| p.sent_frames).sum();
        let bytes: u64 = per.iter().map(|p| p.sent_bytes).sum();
        let report = Report {
            schema: "linerate.gen/1",
            dev: args.dev.clone(),
            sent_frames: sent,
            sent_bytes: bytes,
            seconds: secs,
            sent_pps: sent as f64 / secs,
            sent_l2_bps: bytes as f64 * 8.0 / secs,
            engine,
            engine_detail: detail,
            engine_fallback: fallback,
            threads: per,
        };
        if args.json {
            output::print_json(&report)?;
        } else {
            let mut text = format!(
                "sent {} frames in {:.3} s on {}: {} ({} at L2)\nengine: {} ({})\n",
                report.sent_frames,
                report.seconds,
                report.dev,
                PacketRate::from_pps(report.sent_pps).human(),
                BitRate::from_bps_f64(report.sent_l2_bps).human(),
                report.engine,
                report.engine_detail,
            );
            if let Some(why) = &report.engine_fallback {
                text.push_str(&format!("  not AF_XDP: {why}\n"));
            }
            for t in &report.threads {
                let place = match (t.pinned, t.cpu) {
                    (true, Some(c)) => format!("pinned to CPU {c}"),
                    (_, Some(c)) => format!("unpinned, last on CPU {c}"),
                    _ => "unpinned".to_owned(),
                };
                let queue = t.queue.map(|q| format!(", queue {q}")).unwrap_or_default();
                text.push_str(&format!(
                    "  thread {} ({place}{queue}): {} frames, {}\n",
                    t.thread,
                    t.sent_frames,
                    PacketRate::from_pps(t.sent_pps).human()
                ));
            }
            output::print_text(&text)?;
        }
        if let Some(sig) = stop.signal() {
            return Ok(crate::stop::exit_code(sig));
        }
        Ok(ExitCode::SUCCESS)
    }

    fn xdp_detail(mode: XdpMode) -> String {
        match mode {
            XdpMode::Copy => "AF_XDP socket per thread and queue, copy mode".to_owned(),
            XdpMode::ZeroCopy => "AF_XDP socket per thread and queue, zero-copy".to_owned(),
        }
    }

    struct Job {
        thread: u16,
        templates: Arc<Vec<Vec<Template>>>,
        pps: Option<f64>,
        count: u64,
        deadline: Instant,
        stop: Arc<AtomicBool>,
        cpu: Option<usize>,
    }

    impl Job {
        fn send(self, mut ring: Tx) -> anyhow::Result<ThreadReport> {
            if let Some(cpu) = self.cpu {
                linerate_sys::affinity::pin_current_thread(cpu).with_context(|| {
                    format!("pinning sender thread {} to CPU {cpu}", self.thread)
                })?;
            }
            let flows = self.templates.len();
            let cycle = self.templates[0].len();
            // Which template each slot holds (usize::MAX: none yet): a slot reused for the
            // same frame only gets its stamp and checksum rewritten.
            let mut held = vec![usize::MAX; ring.slots()];
            let seq_base = u64::from(self.thread) << 56;
            let start = Instant::now();
            let mut sent = 0u64;
            let mut bytes = 0u64;
            let mut i = 0usize;
            while sent < self.count {
                let now = Instant::now();
                if now >= self.deadline || self.stop.load(Ordering::Relaxed) {
                    break;
                }
                let mut room = (self.count - sent).min(BATCH as u64);
                if let Some(pps) = self.pps {
                    let due = (now.duration_since(start).as_secs_f64() * pps) as u64 + 1;
                    if due <= sent {
                        // Sleep until the next frame is due, at most to the deadline.
                        let at = start + std::time::Duration::from_secs_f64((sent as f64) / pps);
                        let at = at.min(self.deadline);
                        std::thread::sleep(at.saturating_duration_since(now));
                        continue;
                    }
                    room = room.min(due - sent);
                }
                let ts = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(0);
                let mut pushed = 0u64;
                while pushed < room {
                    let (f, c) = (i % flows, i % cycle);
                    let t = &self.templates[f][c];
                    let id = f * cycle + c;
                    let seq = seq_base | (sent + pushed);
                    let pushed_one = ring.push(|buf, slot| match held.get_mut(slot) {
                        Some(h) if *h == id => t.restamp(buf, seq, ts),
                        Some(h) => {
                            *h = id;
                            t.stamp(buf, seq, ts)
                        }
                        None => t.stamp(buf, seq, ts),
                    });
                    if !pushed_one {
                        break;
                    }
                    bytes += (t.bytes().len() + frame::FCS) as u64;
                    i = i.wrapping_add(1);
                    pushed += 1;
                }
                sent += pushed;
                ring.flush().context("sending from the ring")?;
                if pushed < room {
                    ring.wait(std::time::Duration::from_millis(10))?;
                }
            }
            // Let the kernel drain what is queued.
            ring.drain().context("sending from the ring")?;
            let secs = start.elapsed().as_secs_f64().max(1e-9);
            Ok(ThreadReport {
                thread: self.thread,
                sent_frames: sent,
                sent_bytes: bytes,
                seconds: secs,
                sent_pps: sent as f64 / secs,
                wrong_format: ring.wrong_format(),
                pinned: self.cpu.is_some(),
                cpu: self.cpu.or_else(linerate_sys::affinity::current_cpu),
                queue: ring.queue(),
            })
        }
    }

    fn read_mac(dev: &str) -> anyhow::Result<[u8; 6]> {
        let path = format!("/sys/class/net/{dev}/address");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("--dev {dev}: no such interface ({path})"))?;
        parse_mac(text.trim()).map_err(|e| anyhow::anyhow!("{path}: {e}"))
    }

    /// The MAC of `ip` in the neighbour table (/proc/net/arp) on `dev`.
    fn neighbour_mac(dev: &str, ip: Ipv4Addr) -> anyhow::Result<[u8; 6]> {
        let text = std::fs::read_to_string("/proc/net/arp").context("reading /proc/net/arp")?;
        let want = ip.to_string();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() >= 6 && f[0] == want && f[5] == dev && f[3] != "00:00:00:00:00:00" {
                return parse_mac(f[3]).map_err(|e| anyhow::anyhow!("/proc/net/arp: {e}"));
            }
        }
        bail!(
            "no neighbour entry for {ip} on {dev}: give --dst-mac, or resolve it first \
             (e.g. ping -c1 {ip})"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_parse_and_interleave() {
        assert_eq!(parse_frames("64").unwrap(), vec![64]);
        assert_eq!(parse_frames("64,1518").unwrap(), vec![64, 1518]);
        let imix = parse_frames("imix").unwrap();
        assert_eq!(imix.len(), 12);
        assert_eq!(imix.iter().filter(|&&s| s == 64).count(), 7);
        assert_eq!(imix.iter().filter(|&&s| s == 594).count(), 4);
        assert_eq!(imix.iter().filter(|&&s| s == 1518).count(), 1);
        assert!(parse_frames("63").is_err());
        assert!(parse_frames("big").is_err());
    }

    #[test]
    fn rates_and_macs_parse() {
        assert_eq!(parse_rate("max"), Ok(Rate::Max));
        assert_eq!(parse_rate("100kpps"), Ok(Rate::Pps(100_000.0)));
        assert_eq!(parse_rate("1G"), Ok(Rate::Bits(1e9)));
        assert!(parse_rate("fast").is_err());
        assert_eq!(parse_mac("02:00:00:00:00:0a"), Ok([2, 0, 0, 0, 0, 10]));
        assert!(parse_mac("02:00").is_err());
    }

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(parse_cpus("0"), Ok(CpuList(vec![0])));
        assert_eq!(parse_cpus("1,0"), Ok(CpuList(vec![1, 0])));
        assert_eq!(parse_cpus("0-2,5"), Ok(CpuList(vec![0, 1, 2, 5])));
        assert!(parse_cpus("2-1").unwrap_err().contains("backwards"));
        assert!(parse_cpus("x").unwrap_err().contains("'x'"));
        assert!(parse_cpus("").is_err());
    }
}
