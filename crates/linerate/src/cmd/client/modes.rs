//! `linerate client` flags and rendering of the linerate-only modes (pps, rr, crr) and of
//! `--affinity`. Bulk stream output stays in `human.rs`.

use std::fmt::Write as _;
use std::io::Write;

use linerate_traffic::affinity::AffinityPlan;
use linerate_traffic::config::{Direction, Mode, ZeroCopy};
use linerate_traffic::modes::result::{ModeResult, ThreadReport};
use linerate_traffic::modes::{ClientModeOptions, ModeOptions, RrSize};
use linerate_traffic::result::{Interval, RunResult};
use linerate_traffic::{ClientConfig, Event, Protocol};
use linerate_units::{BitRate, ByteSize, PacketRate};

use super::human::rate;

/// Flags of the linerate-only modes.
#[derive(Debug, clap::Args)]
pub struct ModeArgs {
    /// pps: simple IMIX (7:4:1 of 64-, 594- and 1518-byte frames) instead of one size
    #[arg(long)]
    pub imix: bool,
    /// pps: one datagram per message, without UDP GSO (which batches up to 64 per pass)
    #[arg(long)]
    pub no_gso: bool,
    /// pps: the receiver leaves UDP_GRO off (by default it takes a GSO sender's runs whole)
    #[arg(long)]
    pub no_gro: bool,
    /// pps: busy-poll the receiving sockets (either side's) for up to USEC µs per receive
    #[arg(long, value_name = "USEC")]
    pub busy_poll: Option<u32>,
    /// TCP streams without the copy (Linux, both sides): auto (the default) sends from an
    /// in-memory file (sendfile) and maps received pages where they map; on pins the
    /// sender's pages (MSG_ZEROCOPY) and always maps; off copies both ways, as iperf3 does
    #[arg(short = 'Z', long, value_name = "MODE", num_args = 0..=1, require_equals = true, default_missing_value = "auto")]
    pub zerocopy: Option<ZeroCopy>,
    /// rr/crr: request and response sizes, REQ/RESP (default 1/1; e.g. 64/1KiB)
    #[arg(long, value_name = "REQ/RESP", value_parser = parse_rr_size)]
    pub rr_size: Option<RrSize>,
    /// Pin worker threads: --affinity (auto: worker i of each side on CPU i), or
    /// --affinity=CPUS (client's) or --affinity=CPUS/CPUS (client's/server's), e.g. =0,2 or =0/1
    #[arg(long, value_name = "CPUS", num_args = 0..=1, require_equals = true, default_missing_value = "auto", value_parser = parse_affinity)]
    pub affinity: Option<Box<AffinityPlan>>,
}

/// Boxed: keeps `linerate client`'s arguments small in the command enum.
fn parse_affinity(s: &str) -> Result<Box<AffinityPlan>, String> {
    AffinityPlan::parse(s).map(Box::new)
}

fn parse_rr_size(s: &str) -> Result<RrSize, String> {
    s.parse()
}

impl ModeArgs {
    /// Adds the mode options to `cfg`, with the modes' defaults: pps is UDP with 18-byte
    /// payloads (64-byte frames) at no rate limit unless `-l`/`-b` say otherwise.
    pub fn apply(&self, cfg: &mut ClientConfig) {
        if cfg.mode == Mode::Pps {
            cfg.protocol = Protocol::Udp;
            if cfg.len.is_none() && !self.imix {
                cfg.len = Some(ByteSize::from_bytes(
                    linerate_traffic::pps::MIN_PAYLOAD as u64,
                ));
            }
            if cfg.bitrate.is_none() {
                cfg.bitrate = Some(BitRate::ZERO);
            }
        }
        let affinity = self.affinity.as_ref().map(|a| a.resolve());
        cfg.modes = ClientModeOptions {
            shared: ModeOptions {
                rr_size: self.rr_size,
                imix: self.imix,
                server_cpus: affinity
                    .as_ref()
                    .map(|a| a.server.clone())
                    .filter(|c| !c.0.is_empty()),
                no_gso: self.no_gso,
                no_gro: self.no_gro,
                busy_poll_us: self.busy_poll,
                zerocopy: self.zerocopy,
            },
            client_cpus: affinity.map(|a| a.client),
        };
    }
}

/// Live lines for pps and rr intervals; other events go to the bulk renderer.
pub struct ModeRenderer {
    mode: Mode,
    per: u64,
}

impl ModeRenderer {
    pub fn new(cfg: &ClientConfig) -> ModeRenderer {
        let s = cfg.modes.shared.rr_size.unwrap_or_default();
        ModeRenderer {
            mode: cfg.mode,
            per: (s.request + s.response).max(1),
        }
    }

    /// Prints the event if it is a pps/rr interval; `false` leaves it to the bulk renderer.
    pub fn event(&mut self, ev: Event<'_>) -> bool {
        let Event::Interval(iv) = ev else {
            return false;
        };
        let text = match self.mode {
            Mode::Stream => return false,
            Mode::Pps => pps_interval(iv),
            Mode::Rr | Mode::Crr => rr_interval(iv, self.per),
        };
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
        true
    }
}

fn pps(x: f64) -> String {
    format!("{:.3}", PacketRate::from_pps(x))
}

fn pps_interval(iv: &Interval) -> String {
    let mut t = String::new();
    let secs = iv.seconds().max(1e-9);
    let om = if iv.omitted { "  (omitted)" } else { "" };
    for d in [Direction::Send, Direction::Receive] {
        let s = iv.sum(d);
        if s.streams == 0 {
            continue;
        }
        let _ = match d {
            Direction::Send => writeln!(
                t,
                "[SUM] {:6.2}-{:<6.2} sec  sent      {:>14}  {:>10} datagrams{om}",
                iv.start,
                iv.end,
                pps(s.packets as f64 / secs),
                s.packets
            ),
            Direction::Receive => {
                let got = s.packets.saturating_sub(s.lost);
                writeln!(
                    t,
                    "[SUM] {:6.2}-{:<6.2} sec  received  {:>14}  {:>10} datagrams, {} lost{om}",
                    iv.start,
                    iv.end,
                    pps(got as f64 / secs),
                    got,
                    s.lost
                )
            }
        };
    }
    t
}

fn rr_interval(iv: &Interval, per: u64) -> String {
    let n = iv.sum(Direction::Send).bytes / per;
    let om = if iv.omitted { "  (omitted)" } else { "" };
    format!(
        "[SUM] {:6.2}-{:<6.2} sec  {:>10} transactions  {:>12.0} trans/s{om}\n",
        iv.start,
        iv.end,
        n,
        n as f64 / iv.seconds().max(1e-9)
    )
}

fn threads(t: &mut String, who: &str, list: &[ThreadReport]) {
    for th in list {
        let pinned = th
            .placement
            .pinned
            .map_or("not pinned".to_owned(), |c| format!("pinned to CPU {c}"));
        let ran: Vec<String> = th.placement.ran_on.iter().map(|c| c.to_string()).collect();
        let _ = writeln!(
            t,
            "{who} thread of stream {}: {pinned}, ran on CPU {}",
            th.id,
            if ran.is_empty() {
                "?".to_owned()
            } else {
                ran.join(",")
            }
        );
    }
}

/// The summary of a pps/rr/crr run (or the affinity lines of a stream run), `None` when the
/// run had no mode extras.
pub fn summary(r: &RunResult, bulk: impl FnOnce() -> String) -> String {
    let Some(m) = &r.modes else {
        return bulk();
    };
    let mut t = String::new();
    if m.pps.is_none() && m.rr.is_none() {
        t.push_str(&bulk());
    } else {
        t.push_str("- - - - - - - - - - - - - - - - - - - - - - - - -\n");
        mode_lines(&mut t, r, m);
        let e = &r.end;
        let (lc, rc) = (&e.cpu_local, &e.cpu_remote);
        let _ = writeln!(
            t,
            "CPU Utilization: local {:.1}% ({:.1}%u/{:.1}%s), remote {:.1}% ({:.1}%u/{:.1}%s)",
            lc.total, lc.user, lc.system, rc.total, rc.user, rc.system
        );
    }
    for z in &m.zerocopy {
        let _ = writeln!(t, "{}", zerocopy_line(z));
    }
    if m.threads.iter().any(|th| th.placement.pinned.is_some()) {
        threads(&mut t, "client", &m.threads);
        threads(&mut t, "server", &m.server_threads);
    }
    t
}

/// Whether the datagrams were sent with UDP GSO, and what that means on loopback, where the
/// stack carries a GSO send's datagrams as one until the receiving socket splits them.
fn gso_line(segments: Option<u64>, peer: &str) -> Option<String> {
    let loopback = peer
        .parse::<std::net::IpAddr>()
        .is_ok_and(|a| a.is_loopback());
    match segments? {
        0 | 1 => Some("  UDP GSO: off (one datagram per send)".to_owned()),
        n if loopback => Some(format!(
            "  UDP GSO: on, {n} datagrams per send. On loopback they cross the stack as one and \
             are split only at the receiving socket,\n  so this figure does not pay the \
             per-datagram cost a real link does: --no-gso measures that"
        )),
        n => Some(format!("  UDP GSO: on, {n} datagrams per send")),
    }
}

/// One side's `--zerocopy` paths: what each direction ended on, the bytes or sends each way,
/// and why it fell back.
fn zerocopy_line(z: &linerate_iperf3::linerate::ZeroCopyReport) -> String {
    let mut parts = Vec::new();
    if let Some(path) = &z.receive {
        let total = (z.mapped_bytes + z.copied_bytes).max(1) as f64;
        parts.push(format!(
            "receive {path} ({:.0}% of {:.2} GB mapped{})",
            z.mapped_bytes as f64 * 100.0 / total,
            total / 1e9,
            z.receive_fallback
                .as_ref()
                .map_or(String::new(), |f| format!("; {f}"))
        ));
    }
    if z.send.as_deref() == Some("sendfile") {
        parts.push("send sendfile (pages sent by reference: no copy into the socket)".to_owned());
    } else if let Some(path) = &z.send {
        parts.push(format!(
            "send {} ({} MSG_ZEROCOPY sends, {} copied by the kernel{})",
            path.replace('_', " "),
            z.zerocopy_sends,
            z.kernel_copied_sends,
            z.send_fallback
                .as_ref()
                .map_or(String::new(), |f| format!("; {f}"))
        ));
    }
    format!("zerocopy ({}, {}): {}", z.side, z.asked, parts.join(", "))
}

fn mode_lines(t: &mut String, r: &RunResult, m: &ModeResult) {
    let streams = if r.start.bidir {
        format!("{} each way, both directions summed", r.start.parallel)
    } else {
        r.start.parallel.to_string()
    };
    if let Some(p) = &m.pps {
        let frame = if p.frame == "imix" {
            "simple IMIX frames".to_owned()
        } else {
            format!("{}-byte frames", p.frame)
        };
        let _ = writeln!(
            t,
            "pps: {frame} ({:.0}-byte mean UDP payload), {streams} stream(s)",
            p.payload_bytes
        );
        let _ = writeln!(
            t,
            "  sent      {:>14}  {:>12} datagrams in {:.2} s   L2 {}  L1 {}",
            pps(p.sent_pps),
            p.sent_packets,
            p.sent_seconds,
            rate(p.sent_l2_bits_per_second),
            rate(p.sent_l1_bits_per_second)
        );
        let _ = writeln!(
            t,
            "  received  {:>14}  {:>12} datagrams in {:.2} s   L2 {}  L1 {}",
            pps(p.received_pps),
            p.received_packets,
            p.received_seconds,
            rate(p.received_l2_bits_per_second),
            rate(p.received_l1_bits_per_second)
        );
        let _ = writeln!(
            t,
            "  lost {} ({:.3}%), reordered {}, duplicated {}",
            p.lost_packets, p.lost_percent, p.reordered_packets, p.duplicate_packets
        );
        if let Some(line) = gso_line(p.gso_segments, &r.start.peer.addr) {
            let _ = writeln!(t, "{line}");
        }
        if let Some(rp) = &p.receive_path {
            let busy = match (&rp.busy_poll_us, &rp.busy_poll) {
                (Some(us), Some(how)) => format!(", busy poll {us} µs {how}"),
                _ => String::new(),
            };
            let gro = match rp.gro_max_segments {
                n if n > 1 => format!("{} (up to {n} datagrams per receive)", rp.gro),
                _ => rp.gro.clone(),
            };
            let _ = writeln!(
                t,
                "  receive ({}): UDP GRO {gro}, recvmmsg batch up to {}, {:.1} per call{busy}",
                rp.side, rp.batch_peak, rp.per_call
            );
        }
    }
    if let Some(rr) = &m.rr {
        let name = match r.start.mode {
            Mode::Crr => "crr",
            _ => "rr",
        };
        let _ = writeln!(
            t,
            "{name}: {} {}/{} bytes, {streams} stream(s), {:.2} s: {:.0} transactions/s ({} transactions{})",
            rr.protocol,
            rr.request_bytes,
            rr.response_bytes,
            rr.seconds,
            rr.transactions_per_second,
            rr.transactions,
            if rr.lost_transactions + rr.errors > 0 {
                format!(", {} lost, {} errors", rr.lost_transactions, rr.errors)
            } else {
                String::new()
            }
        );
        let l = &rr.latency;
        let _ = writeln!(
            t,
            "latency µs: min {:.1}  p50 {:.1}  p90 {:.1}  p99 {:.1}  p99.9 {:.1}  max {:.1}  (mean {:.1} ± {:.1})",
            l.min_us, l.p50_us, l.p90_us, l.p99_us, l.p999_us, l.max_us, l.mean_us, l.stdev_us
        );
    }
}
