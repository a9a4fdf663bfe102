//! Interval sampling: reads every stream's counters (and TCP_INFO) and turns the differences
//! since the previous sample into an [`Interval`].

use std::time::{Duration, Instant};

use crate::config::{Direction, Protocol};
use crate::result::{Interval, StreamInterval, TcpSample, UdpSample};
use crate::stream::{CounterSnapshot, StreamHandle};

/// Running TCP_INFO aggregates of a sending stream.
#[derive(Debug, Clone, Copy, Default)]
pub struct TcpAggregate {
    /// Largest cwnd seen, bytes.
    pub max_cwnd: u64,
    /// Smallest RTT, µs.
    pub min_rtt: u32,
    /// Largest RTT, µs.
    pub max_rtt: u32,
    rtt_sum: u64,
    rtt_n: u64,
}

impl TcpAggregate {
    fn add(&mut self, s: &TcpSample) {
        self.max_cwnd = self.max_cwnd.max(s.snd_cwnd);
        if s.rtt_us > 0 {
            self.min_rtt = if self.rtt_n == 0 {
                s.rtt_us
            } else {
                self.min_rtt.min(s.rtt_us)
            };
            self.max_rtt = self.max_rtt.max(s.rtt_us);
            self.rtt_sum += u64::from(s.rtt_us);
            self.rtt_n += 1;
        }
    }

    /// Mean RTT over the samples, µs.
    pub fn mean_rtt(&self) -> u32 {
        self.rtt_sum.checked_div(self.rtt_n).unwrap_or(0) as u32
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
