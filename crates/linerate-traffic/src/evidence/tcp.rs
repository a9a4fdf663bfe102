//! One TCP stream's `TCP_INFO` readings folded into its [`TcpStreamEvidence`]: counters as
//! deltas from the first reading of the period to the last, levels as gauges. Fixed memory
//! however long the test.

use linerate_iperf3::evidence::{Role, TcpStreamEvidence};

use super::gauge::GaugeAcc;
use crate::sockopt::TcpInfo;

/// The socket buffer sizes read with a sample (`None`: the call failed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Buffers {
    /// `SO_SNDBUF`, bytes.
    pub(crate) send: Option<u64>,
    /// `SO_RCVBUF`, bytes.
    pub(crate) receive: Option<u64>,
}

/// A stream's readings so far.
#[derive(Debug, Clone)]
pub(crate) struct TcpAcc {
    id: i64,
    role: Role,
    samples: u64,
    first: Option<TcpInfo>,
    last: Option<TcpInfo>,
    cwnd: GaugeAcc,
    ssthresh: GaugeAcc,
    rtt: GaugeAcc,
    rttvar: GaugeAcc,
    rcv_rtt: GaugeAcc,
    min_rtt_us: Option<u32>,
    delivery: GaugeAcc,
    app_limited: u64,
    app_known: u64,
    pacing: GaugeAcc,
    lost: GaugeAcc,
    reordering: GaugeAcc,
    notsent: GaugeAcc,
    unacked: GaugeAcc,
    peer_window: GaugeAcc,
    rcv_wnd: GaugeAcc,
    rcv_space: GaugeAcc,
    rcv_ssthresh: GaugeAcc,
    sndbuf: GaugeAcc,
    rcvbuf: GaugeAcc,
}

/// `later − earlier` of a counter both readings know.
fn delta(earlier: Option<u64>, later: Option<u64>) -> Option<u64> {
    Some(later?.saturating_sub(earlier?))
}

impl TcpAcc {
    /// A stream with no reading yet.
    pub(crate) fn new(id: i64, role: Role) -> TcpAcc {
        TcpAcc {
            id,
            role,
            samples: 0,
            first: None,
            last: None,
            cwnd: GaugeAcc::default(),
            ssthresh: GaugeAcc::default(),
            rtt: GaugeAcc::default(),
            rttvar: GaugeAcc::default(),
            rcv_rtt: GaugeAcc::default(),
            min_rtt_us: None,
            delivery: GaugeAcc::default(),
            app_limited: 0,
            app_known: 0,
            pacing: GaugeAcc::default(),
            lost: GaugeAcc::default(),
            reordering: GaugeAcc::default(),
            notsent: GaugeAcc::default(),
            unacked: GaugeAcc::default(),
            peer_window: GaugeAcc::default(),
            rcv_wnd: GaugeAcc::default(),
            rcv_space: GaugeAcc::default(),
            rcv_ssthresh: GaugeAcc::default(),
            sndbuf: GaugeAcc::default(),
            rcvbuf: GaugeAcc::default(),
        }
    }

    /// Adds one reading.
    pub(crate) fn add(&mut self, i: &TcpInfo, buffers: Buffers) {
        self.samples += 1;
        self.first.get_or_insert(*i);
        self.last = Some(*i);
        self.cwnd.add(i.cwnd_bytes as f64);
        self.ssthresh.add_u64(i.ssthresh_bytes);
        // 0: no RTT estimate yet (a receiver that has sent nothing to time).
        if i.rtt_us > 0 {
            self.rtt.add(f64::from(i.rtt_us));
            self.rttvar.add(f64::from(i.rttvar_us));
        }
        self.rcv_rtt.add_u64(i.rcv_rtt_us.map(u64::from));
        if let Some(r) = i.min_rtt_us {
            self.min_rtt_us = Some(self.min_rtt_us.map_or(r, |m| m.min(r)));
        }
        self.delivery.add_u64(i.delivery_rate_bps);
        if let Some(limited) = i.delivery_app_limited {
            self.app_known += 1;
            self.app_limited += u64::from(limited);
        }
        self.pacing.add_u64(i.pacing_rate_bps);
        self.lost.add_u64(i.lost_segments.map(u64::from));
        self.reordering.add_u64(i.reordering.map(u64::from));
        self.notsent.add_u64(i.notsent_bytes);
        self.unacked.add_u64(i.unacked_bytes);
        self.peer_window.add_u64(i.peer_window_bytes);
        self.rcv_wnd.add_u64(i.rcv_wnd_bytes);
        self.rcv_space.add_u64(i.rcv_space_bytes);
        self.rcv_ssthresh.add_u64(i.rcv_ssthresh_bytes);
        self.sndbuf.add_u64(buffers.send);
        self.rcvbuf.add_u64(buffers.receive);
    }

    /// The evidence of the readings so far.
    pub(crate) fn evidence(&self) -> TcpStreamEvidence {
        let (Some(a), Some(b)) = (self.first, self.last) else {
            return TcpStreamEvidence::empty(self.id, self.role);
        };
        TcpStreamEvidence {
            id: self.id,
            role: self.role,
            samples: self.samples,
            busy_us: delta(a.busy_us, b.busy_us),
            rwnd_limited_us: delta(a.rwnd_limited_us, b.rwnd_limited_us),
            sndbuf_limited_us: delta(a.sndbuf_limited_us, b.sndbuf_limited_us),
            cwnd_bytes: self.cwnd.gauge(),
            ssthresh_bytes: self.ssthresh.gauge(),
            rtt_us: self.rtt.gauge(),
            rttvar_us: self.rttvar.gauge(),
            min_rtt_us: self.min_rtt_us.map(u64::from),
            rcv_rtt_us: self.rcv_rtt.gauge(),
            delivery_rate_bps: self.delivery.gauge(),
            app_limited_percent: (self.app_known > 0)
                .then(|| self.app_limited as f64 * 100.0 / self.app_known as f64),
            pacing_rate_bps: self.pacing.gauge(),
            retransmits: Some(b.total_retrans.saturating_sub(a.total_retrans)),
            bytes_retransmitted: delta(a.bytes_retrans, b.bytes_retrans),
            lost_segments: self.lost.gauge(),
            reordering: self.reordering.gauge(),
            reord_seen: delta(a.reord_seen, b.reord_seen),
            dsack_dups: delta(a.dsack_dups, b.dsack_dups),
            out_of_order_packets: delta(a.rcv_ooo_packets, b.rcv_ooo_packets),
            notsent_bytes: self.notsent.gauge(),
            unacked_bytes: self.unacked.gauge(),
            peer_window_bytes: self.peer_window.gauge(),
            rcv_wnd_bytes: self.rcv_wnd.gauge(),
            rcv_space_bytes: self.rcv_space.gauge(),
            rcv_ssthresh_bytes: self.rcv_ssthresh.gauge(),
            sndbuf_bytes: self.sndbuf.gauge(),
            rcvbuf_bytes: self.rcvbuf.gauge(),
            mss_bytes: (b.snd_mss > 0).then_some(u64::from(b.snd_mss)),
            pmtu_bytes: (b.pmtu > 0).then_some(u64::from(b.pmtu)),
            bytes_acked: delta(a.bytes_acked, b.bytes_acked),
            bytes_received: delta(a.bytes_received, b.bytes_received),
            bytes_sent: delta(a.bytes_sent, b.bytes_sent),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linux(t: u64, cwnd: u64, rtt: u32, app_limited: bool) -> TcpInfo {
        TcpInfo {
            total_retrans: 10 + t,
            cwnd_bytes: cwnd,
            rtt_us: rtt,
            rttvar_us: rtt / 4,
            pmtu: 1500,
            snd_mss: 1448,
            ssthresh_bytes: None,
            min_rtt_us: Some(20_000 - t as u32),
            busy_us: Some(1_000_000 + t * 10_000),
            rwnd_limited_us: Some(0),
            sndbuf_limited_us: Some(500 + t * 7_000),
            delivery_rate_bps: Some(900_000_000 + t),
            delivery_app_limited: Some(app_limited),
            bytes_acked: Some(t * 1_000_000),
            notsent_bytes: Some(1_000_000),
            ..TcpInfo::default()
        }
    }

    #[test]
    fn counters_are_deltas_over_the_period_and_levels_are_gauges() {
        let mut acc = TcpAcc::new(1, Role::Sender);
        let bufs = Buffers {
            send: Some(4 << 20),
            receive: None,
        };
        for (t, cwnd, app) in [(0, 10_000, false), (1, 30_000, true), (2, 20_000, false)] {
            acc.add(&linux(t, cwnd, 20_000 + t as u32 * 100, app), bufs);
        }
        acc.add(&linux(3, 40_000, 0, false), bufs);
        let e = acc.evidence();
        assert_eq!((e.id, e.role, e.samples), (1, Role::Sender, 4));
        assert_eq!(e.busy_us, Some(30_000));
        assert_eq!(e.sndbuf_limited_us, Some(21_000));
        assert_eq!(e.rwnd_limited_us, Some(0), "known and zero stays zero");
        assert_eq!(e.retransmits, Some(3));
        assert_eq!(e.bytes_acked, Some(3_000_000));
        let cwnd = e.cwnd_bytes.unwrap();
        assert_eq!(
            (cwnd.min, cwnd.mean, cwnd.max, cwnd.last),
            (10_000.0, 25_000.0, 40_000.0, 40_000.0)
        );
        // The reading without an RTT estimate is not a zero RTT.
        let rtt = e.rtt_us.unwrap();
        assert_eq!((rtt.min, rtt.max, rtt.last), (20_000.0, 20_200.0, 20_200.0));
        assert_eq!(e.min_rtt_us, Some(19_997));
        assert_eq!(e.app_limited_percent, Some(25.0));
        assert_eq!(e.sndbuf_bytes.map(|g| g.max), Some(4_194_304.0));
        assert_eq!(e.rcvbuf_bytes, None);
        assert_eq!((e.mss_bytes, e.pmtu_bytes), (Some(1448), Some(1500)));
        assert_eq!(e.ssthresh_bytes, None, "infinite throughout");
    }

    #[test]
    fn what_freebsd_does_not_report_stays_unknown() {
        // What FreeBSD's TCP_INFO fills: cwnd, ssthresh, RTT, MSS, retransmits, windows.
        let bsd = |retrans: u64, ssthresh: Option<u64>| TcpInfo {
            total_retrans: retrans,
            cwnd_bytes: 65_000,
            rtt_us: 300,
            rttvar_us: 50,
            pmtu: 0,
            snd_mss: 1460,
            ssthresh_bytes: ssthresh,
            peer_window_bytes: Some(1 << 20),
            rcv_wnd_bytes: Some(65_535),
            rcv_ooo_packets: Some(2),
            ..TcpInfo::default()
        };
        let mut acc = TcpAcc::new(3, Role::Receiver);
        acc.add(&bsd(5, None), Buffers::default());
        acc.add(&bsd(9, Some(40_000)), Buffers::default());
        let e = acc.evidence();
        assert_eq!(e.retransmits, Some(4));
        assert_eq!(
            e.ssthresh_bytes.map(|g| (g.min, g.last)),
            Some((40_000.0, 40_000.0))
        );
        assert_eq!(e.out_of_order_packets, Some(0));
        assert!(e.peer_window_bytes.is_some() && e.rcv_wnd_bytes.is_some());
        assert_eq!(
            (e.busy_us, e.rwnd_limited_us, e.sndbuf_limited_us),
            (None, None, None)
        );
        assert_eq!((e.delivery_rate_bps, e.app_limited_percent), (None, None));
        assert_eq!(
            (e.min_rtt_us, e.notsent_bytes, e.bytes_acked),
            (None, None, None)
        );
        assert_eq!(
            (e.pmtu_bytes, e.rcv_space_bytes, e.lost_segments),
            (None, None, None)
        );
    }

    #[test]
    fn a_stream_never_read_has_no_figures() {
        let e = TcpAcc::new(4, Role::Sender).evidence();
        assert_eq!(e, TcpStreamEvidence::empty(4, Role::Sender));
        assert_eq!((e.samples, e.retransmits), (0, None));
    }
}
