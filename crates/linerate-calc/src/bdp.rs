//! What a TCP path needs and allows: the bandwidth-delay product, the window scaling it takes,
//! the Linux buffer to set, the throughput a window or a loss rate permits (Mathis et al.), and
//! RFC 6349's maximum achievable TCP throughput.

use linerate_units::{BitRate, ByteSize, Duration, PacketRate, Percent};

use crate::ethernet::{L1_OVERHEAD, L2_OVERHEAD};

/// The largest window without window scaling (a 16-bit field).
pub const MAX_UNSCALED_WINDOW: u64 = 65_535;
/// The largest window-scale shift RFC 7323 allows.
pub const MAX_WINDOW_SHIFT: u32 = 14;
/// The Mathis constant for periodic loss and an ACK per segment: √(3/2).
pub const MATHIS_C: f64 = 1.224_744_871_391_589;
/// IPv4 (20) plus TCP (20) headers without options: what RFC 6349 subtracts from the MTU.
pub const IPV4_TCP_HEADERS: u64 = 40;
/// The TCP timestamp option as Linux sends it on every segment (10 bytes, padded to 12).
pub const TCP_TIMESTAMPS: u64 = 12;
/// The share of a Linux receive buffer advertised as window: ½ with the default
/// `tcp_adv_win_scale = 1` (before 6.6), and the initial per-flow `scaling_ratio` (from 6.6).
pub const LINUX_WINDOW_SHARE: f64 = 0.5;

/// What to compute for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathInput {
    /// Bottleneck rate.
    pub rate: BitRate,
    /// Round-trip time.
    pub rtt: Duration,
    /// A window to judge (the receive window or socket buffer a host uses), if any.
    pub window: Option<ByteSize>,
    /// Packet loss rate, for the Mathis bound, if any.
    pub loss: Option<Percent>,
    /// TCP payload per segment (MSS minus options actually sent).
    pub mss: ByteSize,
    /// IP MTU of the path, for RFC 6349.
    pub mtu: ByteSize,
    /// A transfer size, for RFC 6349's ideal transfer time, if any.
    pub transfer: Option<ByteSize>,
}

/// Why the input makes no sense.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// Zero rate.
    #[error("the rate must be above zero")]
    ZeroRate,
    /// Zero RTT.
    #[error("the round-trip time must be above zero")]
    ZeroRtt,
    /// Zero window.
    #[error("the window must be above zero")]
    ZeroWindow,
    /// MTU outside what IP allows.
    #[error("the MTU ({mtu} bytes) must be between 68 and 65535 bytes")]
    Mtu {
        /// The MTU given.
        mtu: u64,
    },
    /// MSS that does not fit the MTU.
    #[error("the MSS ({mss} bytes) must be between 1 and the MTU minus 40 bytes ({max})")]
    Mss {
        /// The MSS given.
        mss: u64,
        /// MTU − 40.
        max: u64,
    },
}

/// Window scaling for a window size.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct WindowScale {
    /// The smallest shift whose maximum window holds the size (0 = no scaling needed), capped
    /// at 14.
    pub shift: u32,
    /// 65535 << shift.
    pub max_window: ByteSize,
    /// False when even shift 14 (≈1 GiB) cannot hold it.
    pub fits: bool,
}

impl WindowScale {
    /// The window scaling `size` needs.
    pub fn for_window(size: ByteSize) -> Self {
        let shift = (0..=MAX_WINDOW_SHIFT)
            .find(|s| MAX_UNSCALED_WINDOW << s >= size.bytes())
            .unwrap_or(MAX_WINDOW_SHIFT);
        let max_window = MAX_UNSCALED_WINDOW << shift;
        WindowScale {
            shift,
            max_window: ByteSize::from_bytes(max_window),
            fits: max_window >= size.bytes(),
        }
    }
}

/// The Linux socket buffer to allow for a BDP.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct LinuxBuffer {
    /// The share of the buffer the kernel advertises as window (the rest pays for skb
    /// overhead): `1 − 2^−tcp_adv_win_scale` = ½ before 6.6, per-flow `scaling_ratio` from 6.6.
    pub window_share: f64,
    /// BDP ÷ share: the `tcp_rmem` / `tcp_wmem` maximum (and `rmem_max`/`wmem_max` for
    /// applications that set SO_RCVBUF) that lets one flow fill the path. What to write in a
    /// config file also depends on the kernel's defaults and the host: `linerate-tuning`'s
    /// `buffers` module turns this need into settings.
    pub buffer: ByteSize,
}

/// What a window allows.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct WindowLimit {
    /// The window.
    pub window: ByteSize,
    /// window ÷ RTT (the window capped at 65535 << 14): the most one flow moves with it.
    pub throughput: BitRate,
    /// Share of the rate that is.
    pub of_rate: Percent,
    /// True when the window is below the BDP (the window, not the link, is the limit).
    pub limits: bool,
    /// The window scaling it needs.
    pub scale: WindowScale,
}

impl WindowLimit {
    fn new(window: ByteSize, rtt: Duration, rate: BitRate, bdp: ByteSize) -> Self {
        let scale = WindowScale::for_window(window);
        // TCP cannot advertise more than 65535 << 14, whatever the buffer.
        let throughput = window.min(scale.max_window).per_seconds(rtt.as_secs_f64());
        WindowLimit {
            window,
            throughput,
            of_rate: Percent::from_fraction(throughput.as_f64() / rate.as_f64()),
            limits: window.min(scale.max_window) < bdp,
            scale,
        }
    }
}

/// The Mathis et al. (1997) bound on a loss-limited Reno/CUBIC-like flow.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct MathisBound {
    /// The loss rate.
    pub loss: Percent,
    /// The constant C (√(3/2): periodic loss, no delayed ACKs).
    pub c: f64,
    /// (MSS / RTT) × C / √p; `None` at zero loss (no bound).
    pub throughput: Option<BitRate>,
    /// The highest loss rate that still lets one flow reach the rate.
    pub max_loss_for_rate: Percent,
}

/// RFC 6349 section 3.3's theoretical figures for the path.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Rfc6349 {
    /// The MTU used.
    pub mtu: ByteSize,
    /// Full-size frames per second at the rate: rate ÷ ((MTU + 38) × 8), 38 = Ethernet
    /// header, FCS, preamble, SFD and inter-frame gap.
    pub frames_per_second: PacketRate,
    /// (MTU − 40) × 8 × frames/s: the maximum achievable TCP throughput (no TCP options).
    pub max_tcp_throughput: BitRate,
    /// The same with TCP timestamps on every segment (MTU − 52), as Linux sends.
    pub with_timestamps: BitRate,
    /// Maximum TCP throughput as a share of the rate.
    pub of_rate: Percent,
    /// The minimum receive window for it: the BDP.
    pub min_rwnd: ByteSize,
    /// The ideal TCP transfer time of the transfer size given: size ÷ max TCP throughput.
    pub ideal_transfer_time: Option<Duration>,
}

/// Everything `calc bdp` reports.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PathReport {
    /// Bottleneck rate.
    pub rate: BitRate,
    /// Round-trip time.
    pub rtt: Duration,
    /// MSS used for the Mathis bound.
    pub mss: ByteSize,
    /// Bandwidth-delay product: rate × RTT ÷ 8. The window one flow needs to fill the path.
    pub bdp: ByteSize,
    /// Window scaling the BDP needs.
    pub window_scale: WindowScale,
    /// Linux buffer sizes to allow.
    pub linux_buffer: LinuxBuffer,
    /// What the largest unscaled window (65535 bytes) allows.
    pub unscaled_window: WindowLimit,
    /// What the given window allows.
    pub window: Option<WindowLimit>,
    /// The loss bound.
    pub mathis: Option<MathisBound>,
    /// RFC 6349 figures.
    pub rfc6349: Rfc6349,
    /// TCP payload at line rate in full-size packets of the MTU carrying `mss` bytes each:
    /// mss × 8 × RFC 6349 frames/s.
    pub goodput_at_line_rate: BitRate,
    /// What the largest window TCP can advertise (65535 << 14 ≈ 1 GiB) allows.
    pub max_window: WindowLimit,
    /// The lowest of `goodput_at_line_rate`, the given window's, the largest window's and the
    /// Mathis bound: what one TCP flow can expect at best.
    pub ceiling: BitRate,
    /// Things that look like mistakes in the input.
    pub warnings: Vec<String>,
}

/// The largest value the Linux buffer sysctls take (they are C ints).
pub const LINUX_MAX_BUFFER: u64 = i32::MAX as u64;

fn warnings(rtt: Duration, buffer: ByteSize) -> Vec<String> {
    let mut out = Vec::new();
    if rtt.as_secs_f64() >= 10.0 {
        out.push(format!(
            "a round-trip time of {rtt} is unusual (more than 10 s): did you mean milliseconds?"
        ));
    }
    if buffer.bytes() > LINUX_MAX_BUFFER {
        out.push(format!(
            "the buffer ({buffer:.2}) is more than Linux accepts ({LINUX_MAX_BUFFER} bytes): \
             one flow cannot fill this path; use several"
        ));
    }
    out
}

/// Computes the path report.
pub fn path_report(input: &PathInput) -> Result<PathReport, PathError> {
    let PathInput {
        rate,
        rtt,
        window,
        loss,
        mss,
        mtu,
        transfer,
    } = *input;
    if rate == BitRate::ZERO {
        return Err(PathError::ZeroRate);
    }
    if rtt == Duration::ZERO {
        return Err(PathError::ZeroRtt);
    }
    if window == Some(ByteSize::ZERO) {
        return Err(PathError::ZeroWindow);
    }
    if !(68..=65_535).contains(&mtu.bytes()) {
        return Err(PathError::Mtu { mtu: mtu.bytes() });
    }
    let max_mss = mtu.bytes() - IPV4_TCP_HEADERS;
    if mss.bytes() == 0 || mss.bytes() > max_mss {
        return Err(PathError::Mss {
            mss: mss.bytes(),
            max: max_mss,
        });
    }
    let rtt_s = rtt.as_secs_f64();
    let bdp = rate.bytes_in(rtt_s);
    let buffer = ByteSize::from_bytes_f64((bdp.as_f64() / LINUX_WINDOW_SHARE).ceil());
    let linux_buffer = LinuxBuffer {
        window_share: LINUX_WINDOW_SHARE,
        buffer,
    };
    let unscaled_window =
        WindowLimit::new(ByteSize::from_bytes(MAX_UNSCALED_WINDOW), rtt, rate, bdp);
    let window = window.map(|w| WindowLimit::new(w, rtt, rate, bdp));
    let mss_bits = mss.as_f64() * 8.0;
    let mathis = loss.map(|loss| {
        let p = loss.fraction();
        MathisBound {
            loss,
            c: MATHIS_C,
            throughput: (p > 0.0)
                .then(|| BitRate::from_bps_f64(mss_bits / rtt_s * MATHIS_C / p.sqrt())),
            max_loss_for_rate: Percent::from_fraction(
                (mss_bits * MATHIS_C / (rtt_s * rate.as_f64())).powi(2),
            ),
        }
    });
    let fps = rate.as_f64() / ((mtu.as_f64() + (L2_OVERHEAD + L1_OVERHEAD) as f64) * 8.0);
    let max_tcp = BitRate::from_bps_f64((mtu.as_f64() - IPV4_TCP_HEADERS as f64) * 8.0 * fps);
    let with_ts = BitRate::from_bps_f64(
        (mtu.as_f64() - (IPV4_TCP_HEADERS + TCP_TIMESTAMPS) as f64) * 8.0 * fps,
    );
    let rfc6349 = Rfc6349 {
        mtu,
        frames_per_second: PacketRate::from_pps(fps),
        max_tcp_throughput: max_tcp,
        with_timestamps: with_ts,
        of_rate: Percent::from_fraction(max_tcp.as_f64() / rate.as_f64()),
        min_rwnd: bdp,
        ideal_transfer_time: transfer
            .map(|t| Duration::from_secs_f64(t.as_f64() * 8.0 / max_tcp.as_f64())),
    };
    let goodput = BitRate::from_bps_f64(mss_bits * fps);
    let max_window = WindowLimit::new(
        ByteSize::from_bytes(MAX_UNSCALED_WINDOW << MAX_WINDOW_SHIFT),
        rtt,
        rate,
        bdp,
    );
    let ceiling = [
        Some(goodput),
        Some(max_window.throughput),
        window.map(|w| w.throughput),
        mathis.and_then(|m| m.throughput),
    ]
    .into_iter()
    .flatten()
    .min()
    .unwrap_or(goodput);
    Ok(PathReport {
        rate,
        rtt,
        mss,
        bdp,
        window_scale: WindowScale::for_window(bdp),
        linux_buffer,
        unscaled_window,
        window,
        mathis,
        rfc6349,
        goodput_at_line_rate: goodput,
        max_window,
        ceiling,
        warnings: warnings(rtt, linux_buffer.buffer),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(rate: u64, rtt_ms: u64) -> PathInput {
        PathInput {
            rate: BitRate::from_gbps(rate),
            rtt: Duration::from_millis(rtt_ms),
            window: None,
            loss: None,
            mss: ByteSize::from_bytes(1448),
            mtu: ByteSize::from_bytes(1500),
            transfer: None,
        }
    }

    #[test]
    fn bdp_and_scaling() {
        let r = path_report(&input(1, 40)).unwrap();
        assert_eq!(r.bdp.bytes(), 5_000_000);
        // 65535 << 7 = 8 388 480 ≥ 5 MB; << 6 = 4 194 240 is not.
        assert_eq!(r.window_scale.shift, 7);
        assert!(r.window_scale.fits);
        assert_eq!(r.linux_buffer.buffer.bytes(), 10_000_000);
        let ten = path_report(&input(10, 100)).unwrap();
        assert_eq!(ten.bdp.bytes(), 125_000_000);
        assert_eq!(ten.window_scale.shift, 11);
        let huge = path_report(&input(400, 1000)).unwrap();
        assert!(!huge.window_scale.fits);
        assert_eq!(huge.window_scale.shift, 14);
        // One flow is held to 1 GiB per RTT: 8.59 Gbit/s at 1 s.
        assert_eq!(huge.ceiling.bps(), 8_589_803_520);
        assert_eq!(huge.warnings.len(), 1, "{:?}", huge.warnings);
        assert_eq!(ten.warnings.len(), 0);
        let slow = path_report(&input(1, 40_000)).unwrap();
        assert!(slow.warnings[0].contains("unusual"), "{:?}", slow.warnings);
    }

    #[test]
    fn window_limit() {
        let mut i = input(1, 40);
        i.window = Some(ByteSize::from_kib(64));
        let r = path_report(&i).unwrap();
        let w = r.window.unwrap();
        // 65536 × 8 / 0.04 = 13 107 200 bit/s.
        assert_eq!(w.throughput.bps(), 13_107_200);
        assert!(w.limits);
        assert_eq!(w.scale.shift, 1);
        assert_eq!(r.ceiling, w.throughput);
        // 1 GiB is 16 KiB more than TCP can advertise: capped at 65535 << 14.
        let mut i = input(100, 1000);
        i.window = Some(ByteSize::from_gib(1));
        let w = path_report(&i).unwrap().window.unwrap();
        assert!(!w.scale.fits);
        assert_eq!(w.throughput.bps(), 1_073_725_440 * 8);
        // 100 ms and the unscaled maximum: 5.24 Mbit/s.
        let r = path_report(&input(1, 100)).unwrap();
        assert_eq!(r.unscaled_window.throughput.bps(), 5_242_800);
    }

    #[test]
    fn mathis_bound() {
        let mut i = input(1, 40);
        i.loss = Some(Percent::new(0.01));
        let m = path_report(&i).unwrap().mathis.unwrap();
        // 1448 × 8 / 0.04 × 1.2247 / 0.01 = 35.47 Mbit/s.
        let t = m.throughput.unwrap().as_f64();
        assert!((t - 35_468_611.0).abs() < 1.0, "{t}");
        // Loss that still allows 1 Gbit/s: (289600 × 1.2247 / 1e9)² = 1.258e-7.
        assert!((m.max_loss_for_rate.fraction() - 1.2579e-7).abs() < 1e-10);
        i.loss = Some(Percent::new(0.0));
        assert_eq!(path_report(&i).unwrap().mathis.unwrap().throughput, None);
    }

    #[test]
    fn rfc6349_at_1500() {
        let mut i = input(1, 40);
        i.transfer = Some(ByteSize::from_bytes(100_000_000));
        let r = path_report(&i).unwrap().rfc6349;
        assert_eq!(r.frames_per_second.pps().floor() as u64, 81_274);
        // 1460 × 8 × 81 274.38 = 949.28 Mbit/s (94.9 %).
        assert_eq!(r.max_tcp_throughput.bps() / 10_000, 94_928);
        assert!((r.of_rate.percent() - 94.93).abs() < 0.01);
        assert_eq!(r.with_timestamps.bps() / 10_000, 94_148);
        let t = r.ideal_transfer_time.unwrap().as_secs_f64();
        assert!((t - 0.8428).abs() < 0.001, "{t}");
    }

    #[test]
    fn refuses_nonsense() {
        let mut i = input(1, 40);
        i.rate = BitRate::ZERO;
        assert_eq!(path_report(&i), Err(PathError::ZeroRate));
        let mut i = input(1, 40);
        i.rtt = Duration::ZERO;
        assert_eq!(path_report(&i), Err(PathError::ZeroRtt));
        let mut i = input(1, 40);
        i.mss = ByteSize::from_bytes(1461);
        assert!(matches!(
            path_report(&i),
            Err(PathError::Mss { max: 1460, .. })
        ));
        let mut i = input(1, 40);
        i.mtu = ByteSize::from_bytes(40);
        assert!(matches!(path_report(&i), Err(PathError::Mtu { .. })));
    }
}
