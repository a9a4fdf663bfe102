//! What `TCP_INFO` says about a connection at one instant, in one type for every OS: each
//! backend's `socket::tcp_info` fills what its kernel reports and leaves the rest `None`
//! (never 0 for "unknown"). Linux fills nearly everything (the kernel's answer is as long as
//! it knows: a field newer than the running kernel stays `None`); FreeBSD fills cwnd,
//! ssthresh, RTT, MSS, retransmitted packets, the peer's window, its own receive window and
//! out-of-order packets.
//!
//! Counters (`busy_us`, `bytes_acked`, …) count from the connection's start: take deltas.
//! Levels (`cwnd_bytes`, `notsent_bytes`, …) are the value now.

/// One `TCP_INFO` reading.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpInfo {
    /// Retransmitted segments since the connection started (Linux `tcpi_total_retrans`,
    /// FreeBSD `tcpi_snd_rexmitpack`).
    pub total_retrans: u64,
    /// Congestion window in bytes (Linux: segments × MSS; FreeBSD reports bytes).
    pub cwnd_bytes: u64,
    /// Smoothed RTT in microseconds (0: no estimate yet).
    pub rtt_us: u32,
    /// RTT variance in microseconds.
    pub rttvar_us: u32,
    /// Path MTU: 0 on FreeBSD, whose TCP_INFO does not fill it in (`__tcpi_pmtu` is unused).
    pub pmtu: u32,
    /// Sender maximum segment size, bytes.
    pub snd_mss: u32,
    /// Slow-start threshold in bytes; `None` while it is "infinite" (no loss seen yet).
    pub ssthresh_bytes: Option<u64>,
    /// The kernel's windowed minimum RTT, µs (Linux).
    pub min_rtt_us: Option<u32>,
    /// The receiver's RTT estimate, µs (Linux `tcpi_rcv_rtt`; 0 until it has one: `None`).
    pub rcv_rtt_us: Option<u32>,
    /// Time with data in flight, µs: the total of the busy, receive-window-limited and
    /// send-buffer-limited clocks (Linux `tcpi_busy_time`, 4.10).
    pub busy_us: Option<u64>,
    /// Time limited by the peer's receive window, µs (Linux `tcpi_rwnd_limited`).
    pub rwnd_limited_us: Option<u64>,
    /// Time limited by this side's send buffer, µs (Linux `tcpi_sndbuf_limited`).
    pub sndbuf_limited_us: Option<u64>,
    /// The latest delivery-rate sample, bit/s (Linux `tcpi_delivery_rate` × 8).
    pub delivery_rate_bps: Option<u64>,
    /// The delivery-rate sample was taken while the application did not fill the pipe
    /// (Linux `tcpi_delivery_rate_app_limited`).
    pub delivery_app_limited: Option<bool>,
    /// Pacing rate, bit/s; `None` when unpaced (Linux reports ~0 for "no limit").
    pub pacing_rate_bps: Option<u64>,
    /// Segments the sender thinks are lost now (Linux `tcpi_lost`).
    pub lost_segments: Option<u32>,
    /// Reordering degree the sender assumes, segments (Linux `tcpi_reordering`).
    pub reordering: Option<u32>,
    /// Reordering events seen (Linux `tcpi_reord_seen`, 4.19).
    pub reord_seen: Option<u64>,
    /// Duplicate segments reported by D-SACK (Linux `tcpi_dsack_dups`, 4.19).
    pub dsack_dups: Option<u64>,
    /// Bytes written by the application and not yet sent (Linux `tcpi_notsent_bytes`).
    pub notsent_bytes: Option<u64>,
    /// Bytes sent and not yet acknowledged (Linux: `tcpi_unacked` segments × MSS, so
    /// approximate by at most one segment each).
    pub unacked_bytes: Option<u64>,
    /// The window the peer advertises, bytes (Linux `tcpi_snd_wnd`, 5.4; FreeBSD).
    pub peer_window_bytes: Option<u64>,
    /// The window this side advertises, bytes (Linux `tcpi_rcv_wnd`, 6.2; FreeBSD
    /// `tcpi_rcv_space`, which holds the same thing there).
    pub rcv_wnd_bytes: Option<u64>,
    /// The receiver's estimate of what the application reads per RTT, which drives receive
    /// buffer autotuning, bytes (Linux `tcpi_rcv_space`).
    pub rcv_space_bytes: Option<u64>,
    /// The receive window's current clamp during its slow growth, bytes (Linux).
    pub rcv_ssthresh_bytes: Option<u64>,
    /// Bytes acknowledged by the peer (Linux `tcpi_bytes_acked`).
    pub bytes_acked: Option<u64>,
    /// Bytes received (Linux `tcpi_bytes_received`).
    pub bytes_received: Option<u64>,
    /// Bytes sent, retransmissions included (Linux `tcpi_bytes_sent`, 4.19).
    pub bytes_sent: Option<u64>,
    /// Bytes retransmitted (Linux `tcpi_bytes_retrans`, 4.19).
    pub bytes_retrans: Option<u64>,
    /// Packets received out of order (Linux `tcpi_rcv_ooopack`, 5.4; FreeBSD).
    pub rcv_ooo_packets: Option<u64>,
}
