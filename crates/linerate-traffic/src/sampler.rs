//! Interval sampling: reads every stream's counters (and TCP_INFO) and turns the differences
//! since the previous sample into an [`Interval`].

use std::time::{Duration, Instant};

use crate::config::{Direction, Protocol};
use crate::evidence::GaugeAcc;
use crate::result::{Interval, StreamInterval, TcpSample, UdpSample};
use crate::stream::{CounterSnapshot, StreamHandle};

/// Running TCP_INFO aggregates of a sending stream, over the interval readings (iperf3's
/// `max_snd_cwnd`, `min_rtt`, `mean_rtt`, `max_rtt`; 0 before any reading).
#[derive(Debug, Clone, Copy, Default)]
pub struct TcpAggregate {
    cwnd: GaugeAcc,
    rtt: GaugeAcc,
}

impl TcpAggregate {
    fn add(&mut self, s: &TcpSample) {
        self.cwnd.add(s.snd_cwnd as f64);
        // 0: no RTT estimate yet.
        if s.rtt_us > 0 {
            self.rtt.add(f64::from(s.rtt_us));
        }
    }

    /// Largest cwnd seen, bytes.
    pub fn max_cwnd(&self) -> u64 {
        self.cwnd.gauge().map_or(0, |g| g.max as u64)
    }

    /// Smallest RTT, µs.
    pub fn min_rtt(&self) -> u32 {
        self.rtt.gauge().map_or(0, |g| g.min as u32)
    }

    /// Largest RTT, µs.
    pub fn max_rtt(&self) -> u32 {
        self.rtt.gauge().map_or(0, |g| g.max as u32)
    }

    /// Mean RTT over the samples, µs (truncated, as before).
    pub fn mean_rtt(&self) -> u32 {
        self.rtt.gauge().map_or(0, |g| g.mean as u32)
    }
}

/// Samples a fixed set of streams.
#[derive(Debug)]
pub struct Sampler {
    origin: Instant,
    last: Instant,
    prev: Vec<CounterSnapshot>,
    base: Vec<CounterSnapshot>,
    in_omit: bool,
    /// Per stream, in the order of the handles.
    pub tcp: Vec<TcpAggregate>,
}

fn read(h: &StreamHandle) -> (CounterSnapshot, Option<crate::sockopt::TcpInfo>) {
    let mut c = h.counters.snapshot();
    let info = if h.spec.direction == Direction::Send {
        h.tcp_info()
    } else {
        None
    };
    if let Some(i) = info {
        c.retransmits = i.total_retrans;
    }
    (c, info)
}

impl Sampler {
    /// Starts sampling now; `omit` > 0 flags samples until [`Sampler::end_omit`].
    pub fn new(streams: &[StreamHandle], omit: Duration) -> Sampler {
        let now = Instant::now();
        let snaps: Vec<CounterSnapshot> = streams.iter().map(|h| read(h).0).collect();
        Sampler {
            origin: now,
            last: now,
            base: snaps.clone(),
            prev: snaps,
            in_omit: !omit.is_zero(),
            tcp: vec![TcpAggregate::default(); streams.len()],
        }
    }

    /// Whether samples are still in the omitted period.
    pub fn in_omit(&self) -> bool {
        self.in_omit
    }

    /// Seconds since the start of measurement.
    pub fn elapsed(&self) -> f64 {
        self.origin.elapsed().as_secs_f64()
    }

    /// Ends the omitted period: totals and interval times start again from here.
    pub fn end_omit(&mut self, streams: &[StreamHandle]) {
        let now = Instant::now();
        let snaps: Vec<CounterSnapshot> = streams.iter().map(|h| read(h).0).collect();
        self.base = snaps.clone();
        self.prev = snaps;
        self.origin = now;
        self.last = now;
        self.in_omit = false;
        self.tcp = vec![TcpAggregate::default(); streams.len()];
    }

    /// The interval since the previous sample.
    pub fn sample(&mut self, streams: &[StreamHandle]) -> Interval {
        let now = Instant::now();
        let secs = now.duration_since(self.last).as_secs_f64();
        let start = self.last.duration_since(self.origin).as_secs_f64();
        let end = now.duration_since(self.origin).as_secs_f64();
        let mut out = Vec::with_capacity(streams.len());
        for (i, h) in streams.iter().enumerate() {
            let (snap, info) = read(h);
            let d = snap.since(&self.prev[i]);
            self.prev[i] = snap;
            let tcp = match (h.spec.protocol, info) {
                (Protocol::Tcp, Some(info)) => {
                    let s = TcpSample {
                        retransmits: d.retransmits,
                        snd_cwnd: info.cwnd_bytes,
                        rtt_us: info.rtt_us,
                        rttvar_us: info.rttvar_us,
                        pmtu: info.pmtu,
                    };
                    if !self.in_omit {
                        self.tcp[i].add(&s);
                    }
                    Some(s)
                }
                _ => None,
            };
            let udp = (h.spec.protocol == Protocol::Udp).then_some(UdpSample {
                packets: d.packets,
                lost: d.lost,
                out_of_order: d.out_of_order,
                duplicates: d.duplicates,
                jitter_ms: d.jitter * 1000.0,
            });
            out.push(StreamInterval {
                id: h.spec.id,
                direction: h.spec.direction,
                bytes: d.bytes,
                bits_per_second: if secs > 0.0 {
                    d.bytes as f64 * 8.0 / secs
                } else {
                    0.0
                },
                tcp,
                udp,
            });
        }
        self.last = now;
        Interval {
            start,
            end,
            omitted: self.in_omit,
            streams: out,
        }
    }

    /// Totals since the end of the omitted period (or the start), and the seconds covered.
    pub fn totals(&self, streams: &[StreamHandle]) -> (Vec<CounterSnapshot>, f64) {
        let secs = self.last.duration_since(self.origin).as_secs_f64();
        let t = streams
            .iter()
            .enumerate()
            .map(|(i, h)| read(h).0.since(&self.base[i]))
            .collect();
        (t, secs)
    }
}
