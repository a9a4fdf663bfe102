//! `linerate calc bdp`: what a TCP path needs (window, buffers) and allows (Mathis, RFC 6349).

use linerate_calc::bdp::{self, PathError, PathInput, PathReport};
use linerate_tuning::buffers::{BufferAdvice, BufferInput};
use linerate_tuning::{Context, Os, Version};
use linerate_units::human::{Digits, grouped, number};
use linerate_units::{BitRate, ByteSize, Duration, Percent};

use super::format::{Align, Table, seconds, size};

/// Arguments of `linerate calc bdp`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
The Linux buffer is 2 × BDP because the kernel charges the socket buffer with packet metadata \
(skb truesize) and advertises only part of it as window: 1 − 2^−tcp_adv_win_scale = ½ up to \
Linux 6.5, a per-flow scaling_ratio (payload ÷ truesize, starting at ½) from 6.6. The Mathis \
bound is MSS/RTT × C/√p with C = √(3/2) ≈ 1.22 (periodic loss, one ACK per segment). RFC \
6349's maximum achievable TCP throughput is (MTU − 40) × 8 × frames/s at the MTU.

Examples:
  linerate calc bdp --rate 1G --rtt 80ms
  linerate calc bdp --rate 10G --rtt 40ms --window 64KiB --loss 0.01%
  linerate calc bdp --rate 100M --rtt 10ms --kernel 5.15 --json")]
pub struct Args {
    /// Bottleneck rate of the path, e.g. 1G, 10G, 100M
    #[arg(long, value_name = "RATE", value_parser = super::positive_rate, allow_hyphen_values = true)]
    rate: BitRate,

    /// Round-trip time, e.g. 40ms, 250us, 0.1s
    #[arg(long, value_name = "DURATION", value_parser = Duration::parse_with_unit, allow_hyphen_values = true)]
    rtt: Duration,

    /// A window (receive window or socket buffer) to judge, e.g. 64K, 64KiB, 4MiB
    #[arg(long, value_name = "SIZE", value_parser = ByteSize::parse_with_unit, allow_hyphen_values = true)]
    window: Option<ByteSize>,

    /// Packet loss rate for the Mathis bound, e.g. 0.01%, 1%
    #[arg(long, value_name = "PERCENT", allow_hyphen_values = true)]
    loss: Option<Percent>,

    /// TCP payload per segment for the Mathis bound [default: MTU − 52: IPv4, TCP, timestamps]
    #[arg(long, value_name = "BYTES")]
    mss: Option<ByteSize>,

    /// IP MTU of the path (RFC 6349 figures)
    #[arg(long, value_name = "BYTES", default_value = "1500")]
    mtu: ByteSize,

    /// Linux version whose buffer defaults apply to the advice (default: the catalogue's, as
    /// `lint` assumes for a file: 6.18)
    #[arg(long, value_name = "VERSION")]
    kernel: Option<Version>,

    /// RAM of the host, caps the buffers at what TCP may take (tcp_mem), e.g. 8GiB
    #[arg(long, value_name = "SIZE", value_parser = ByteSize::parse_with_unit, allow_hyphen_values = true)]
    ram: Option<ByteSize>,

    /// A transfer size, for RFC 6349's ideal transfer time, e.g. 100MB, 1GiB
    #[arg(long, value_name = "SIZE", value_parser = ByteSize::parse_with_unit, allow_hyphen_values = true)]
    transfer: Option<ByteSize>,

    #[command(flatten)]
    output: super::OutputArgs,
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let json = args.output.json;
    let mss = args.mss.unwrap_or_else(|| {
        ByteSize::from_bytes(
            args.mtu
                .bytes()
                .saturating_sub(bdp::IPV4_TCP_HEADERS + bdp::TCP_TIMESTAMPS),
        )
    });
    let input = PathInput {
        rate: args.rate,
        rtt: args.rtt,
        window: args.window,
        loss: args.loss,
        mss,
        mtu: args.mtu,
        transfer: args.transfer,
    };
    let report = bdp::path_report(&input).map_err(|e| {
        let flag = match e {
            PathError::ZeroRate => "--rate",
            PathError::ZeroRtt => "--rtt",
            PathError::ZeroWindow => "--window",
            PathError::Mtu { .. } => "--mtu",
            PathError::Mss { .. } => "--mss",
        };
        anyhow::Error::new(e).context(format!("invalid {flag}"))
    })?;
    crate::cmd::plausible::warn(args.ram, Some(args.rtt));
    let buffers = linerate_tuning::buffers::linux(&BufferInput {
        rate: args.rate,
        rtt: args.rtt,
        version: args
            .kernel
            .clone()
            .unwrap_or_else(|| Context::new(Os::Linux).version),
        ram: args.ram,
        page_size: ByteSize::from_kib(4),
    })?;
    if json {
        super::print_json(
            "linerate.calc.bdp/1",
            &WithBuffers {
                report: &report,
                linux_buffers: &buffers,
            },
        )
    } else {
        let mut text = render(&report);
        text.push_str(&render_buffers(&buffers, args.kernel.is_none()));
        crate::output::print_text(&text)
    }
}

/// The JSON document: the path report and the buffer advice (`linux_buffers`).
#[derive(serde::Serialize)]
struct WithBuffers<'a> {
    #[serde(flatten)]
    report: &'a PathReport,
    linux_buffers: &'a BufferAdvice,
}

/// What to set on Linux, as sysctl lines with their reasons: the numbers `tune` writes and
/// `lint` accepts.
pub fn render_buffers(a: &BufferAdvice, default_kernel: bool) -> String {
    let mut out = format!(
        "\nLinux {} buffers for this path (what `linerate tune` writes and `lint` accepts{}):\n",
        a.version,
        if default_kernel {
            "; --kernel for another version"
        } else {
            ""
        }
    );
    for k in a.changes() {
        out.push_str(&format!("  {} = {}\n      {}\n", k.key, k.value, k.reason));
    }
    for k in a.keys.iter().filter(|k| !k.change) {
        out.push_str(&format!(
            "  {}: leave it at {}; {}\n",
            k.key, k.value, k.reason
        ));
    }
    out
}

fn bytes(b: ByteSize) -> String {
    if b.bytes() < 10_000 {
        format!("{} B", b.bytes())
    } else {
        format!("{} ({} B)", size(b), grouped(b.bytes()))
    }
}

/// "13.11 Mbit/s (1.3% of the rate)", or "… (more than the rate)".
fn share(throughput: BitRate, of: BitRate) -> String {
    if throughput >= of {
        format!("{} (more than the rate)", throughput.human())
    } else {
        format!(
            "{} ({:.1}% of the rate)",
            throughput.human(),
            throughput.as_f64() / of.as_f64() * 100.0
        )
    }
}

pub fn render(r: &PathReport) -> String {
    let mut out = format!(
        "Path: {} with {} round-trip time\n\n",
        r.rate.human(),
        seconds(r.rtt.as_secs_f64())
    );
    let mut t = Table::bare(&[Align::Left, Align::Left]);
    t.row(vec![
        "bandwidth-delay product".into(),
        format!(
            "{}: rate × RTT ÷ 8, the window one flow needs",
            bytes(r.bdp)
        ),
    ]);
    let ws = r.window_scale;
    t.row(vec![
        "window scale".into(),
        if ws.fits {
            format!(
                "shift {} (windows up to {}); net.ipv4.tcp_window_scaling=1",
                ws.shift,
                bytes(ws.max_window)
            )
        } else {
            format!(
                "more than shift 14 allows ({}): one flow cannot fill this path; use several",
                bytes(ws.max_window)
            )
        },
    ]);
    let lb = r.linux_buffer;
    t.row(vec![
        "Linux buffer need".into(),
        format!(
            "{} ≈ 2 × BDP per connection: only ~{}% of a buffer becomes window (settings below)",
            bytes(lb.buffer),
            number(lb.window_share * 100.0, Digits::Max(0))
        ),
    ]);
    let uw = r.unscaled_window;
    t.row(vec![
        "unscaled window".into(),
        format!("65535 B allows {}", share(uw.throughput, r.rate)),
    ]);
    if let Some(w) = r.window {
        t.row(vec![
            format!("window {}", size(w.window)),
            format!(
                "allows {}{}; {}",
                share(w.throughput, r.rate),
                if w.limits {
                    ": the window is the limit"
                } else {
                    ": enough to fill the path"
                },
                if w.scale.fits {
                    format!("needs window scale shift {}", w.scale.shift)
                } else {
                    format!(
                        "above the largest TCP window ({} B), which caps it",
                        grouped(w.scale.max_window.bytes())
                    )
                }
            ),
        ]);
    }
    if let Some(m) = r.mathis {
        let bound = match m.throughput {
            Some(t) => t.human().to_string(),
            None => "no bound at zero loss".into(),
        };
        t.row(vec![
            format!("Mathis bound at {} loss", m.loss),
            format!(
                "{bound} = MSS/RTT × C/√p with MSS {} B, C = √(3/2) ≈ {:.2}",
                r.mss.bytes(),
                m.c
            ),
        ]);
        t.row(vec![
            String::new(),
            format!(
                "one flow reaches {} only below {:.3e}% loss",
                r.rate.human(),
                m.max_loss_for_rate.percent()
            ),
        ]);
    }
    let f = r.rfc6349;
    t.row(vec![
        format!("RFC 6349 at MTU {}", f.mtu.bytes()),
        format!(
            "maximum achievable TCP throughput {} ({:.2}% of the rate) = (MTU − 40) × 8 × {} \
             frames/s",
            f.max_tcp_throughput.human(),
            f.of_rate.percent(),
            grouped(f.frames_per_second.pps().floor() as u64)
        ),
    ]);
    t.row(vec![
        String::new(),
        format!(
            "{} with TCP timestamps (MTU − 52); minimum RWND = BDP",
            f.with_timestamps.human()
        ),
    ]);
    if let Some(ideal) = f.ideal_transfer_time {
        t.row(vec![
            String::new(),
            format!(
                "ideal TCP transfer time {} (TCP Transfer Time Ratio = measured ÷ this)",
                seconds(ideal.as_secs_f64())
            ),
        ]);
    }
    if !r.window_scale.fits {
        t.row(vec![
            "largest window".into(),
            format!(
                "{} allows {} per flow",
                size(r.max_window.window),
                r.max_window.throughput.human()
            ),
        ]);
    }
    t.row(vec![
        "ceiling for one TCP flow".into(),
        format!(
            "{} (the lowest of line-rate goodput {}, the windows and the loss bound)",
            r.ceiling.human(),
            r.goodput_at_line_rate.human()
        ),
    ]);
    out.push_str(&t.render("  "));
    for w in &r.warnings {
        out.push_str(&format!("\n  warning: {w}\n"));
    }
    out.push_str(
        "\n  RFC 6349's TCP Efficiency ((sent − retransmitted) ÷ sent) and Buffer Delay \
         ((RTT under load − base RTT) ÷ base RTT) need a measurement of the path.\n",
    );
    out
}
