//! The timing model of one direction: tail drop at the limit, Bernoulli loss, serialisation
//! at the rate, then delay ± jitter; frames keep their order unless reordering is allowed.
//! Pure: time comes in as nanoseconds, randomness from a seeded generator.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};

use super::rng::Rng;
use crate::impair::{Impairment, RateLayer};

/// What happens to an arriving frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Dropped by the loss model.
    Lost,
    /// Dropped at the tail: the direction already holds `limit` frames.
    Overflow,
    /// Delivered at this time (ns).
    Due(u64),
}

/// The state of one direction.
#[derive(Debug)]
pub struct Shaper {
    ns_per_byte: f64,
    rate_layer: RateLayer,
    delay_ns: i64,
    jitter_ns: i64,
    loss_threshold: u64,
    limit: usize,
    reorder: bool,
    link_free_at: f64,
    last_due: u64,
    rng: Rng,
}

impl Shaper {
    /// A shaper for `imp`, with a seeded generator.
    pub fn new(imp: &Impairment, seed: u64) -> Shaper {
        let ns_per_byte = imp.rate.map_or(0.0, |r| 8e9 / r.as_f64().max(1.0));
        let p = imp.loss.fraction().clamp(0.0, 1.0);
        Shaper {
            ns_per_byte,
            rate_layer: imp.rate_layer,
            delay_ns: i64::try_from(imp.delay.as_nanos()).unwrap_or(i64::MAX / 4),
            jitter_ns: i64::try_from(imp.jitter.as_nanos()).unwrap_or(i64::MAX / 4),
            loss_threshold: (p * 18_446_744_073_709_551_615.0) as u64,
            limit: imp.limit.max(1) as usize,
            reorder: imp.reorder,
            link_free_at: 0.0,
            last_due: 0,
            rng: Rng::new(seed),
        }
    }

    /// Decides the fate of a frame of `frame_bytes` as the kernel holds it (no FCS) standing
    /// for `segments` wire frames (a GSO super-frame), its bytes counted at the rate's layer.
    pub fn admit_frame(
        &mut self,
        now: u64,
        frame_bytes: u64,
        segments: u64,
        held: usize,
    ) -> Verdict {
        let counted = self.rate_layer.counted_bytes(frame_bytes, segments);
        self.admit(now, usize::try_from(counted).unwrap_or(usize::MAX), held)
    }

    /// Decides the fate of a frame of `wire_bytes` (as the rate counts them) arriving at `now` while `held` frames are
    /// in this direction.
    pub fn admit(&mut self, now: u64, wire_bytes: usize, held: usize) -> Verdict {
        if held >= self.limit {
            return Verdict::Overflow;
        }
        if self.loss_threshold > 0 && self.rng.next_u64() < self.loss_threshold {
            return Verdict::Lost;
        }
        let start = self.link_free_at.max(now as f64);
        self.link_free_at = start + wire_bytes as f64 * self.ns_per_byte;
        let jitter = if self.jitter_ns > 0 {
            self.rng.uniform_i64(-self.jitter_ns, self.jitter_ns)
        } else {
            0
        };
        let delay = (self.delay_ns + jitter).max(0) as u64;
        let mut due = self.link_free_at as u64 + delay;
        if !self.reorder {
            due = due.max(self.last_due);
            self.last_due = due;
        }
        Verdict::Due(due)
    }
}

struct Held {
    due: u64,
    seq: u64,
    frame: Vec<u8>,
}

impl PartialEq for Held {
    fn eq(&self, o: &Self) -> bool {
        (self.due, self.seq) == (o.due, o.seq)
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Held {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.due, self.seq).cmp(&(o.due, o.seq))
    }
}

/// Frames waiting for their due time: a FIFO (due times never decrease) or, when reordering
/// is allowed, a heap.
#[derive(Default)]
pub struct DelayLine {
    fifo: VecDeque<Held>,
    heap: BinaryHeap<Reverse<Held>>,
    seq: u64,
}

impl DelayLine {
    /// Frames held.
    pub fn len(&self) -> usize {
        self.fifo.len() + self.heap.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Holds `frame` until `due`.
    pub fn push(&mut self, due: u64, frame: Vec<u8>, reorder: bool) {
        self.seq += 1;
        let h = Held {
            due,
            seq: self.seq,
            frame,
        };
        if reorder {
            self.heap.push(Reverse(h))
        } else {
            self.fifo.push_back(h)
        }
    }

    /// The earliest due time.
    pub fn next_due(&self) -> Option<u64> {
        let a = self.fifo.front().map(|h| h.due);
        let b = self.heap.peek().map(|h| h.0.due);
        match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        }
    }

    /// Takes the next frame due at or before `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<Vec<u8>> {
        let f = self.fifo.front().map(|h| h.due);
        let h = self.heap.peek().map(|h| h.0.due);
        match (f, h) {
            (Some(x), y) if x <= now && y.is_none_or(|y| x <= y) => {
                self.fifo.pop_front().map(|h| h.frame)
            }
            (_, Some(y)) if y <= now => self.heap.pop().map(|h| h.0.frame),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linerate_units::{BitRate, Duration, Percent};

    fn imp() -> Impairment {
        Impairment {
            limit: 1_000_000,
            ..Impairment::default()
        }
    }

    #[test]
    fn serialisation_spaces_frames_at_the_rate_then_adds_the_delay() {
        let mut s = Shaper::new(
            &Impairment {
                rate: Some(BitRate::from_gbps(1)),
                delay: Duration::from_millis(20),
                ..imp()
            },
            1,
        );
        // Two 1250-byte frames arriving together: 10 µs each on the wire.
        assert_eq!(s.admit(0, 1250, 0), Verdict::Due(10_000 + 20_000_000));
        assert_eq!(s.admit(0, 1250, 1), Verdict::Due(20_000 + 20_000_000));
        // An idle link starts serialising at arrival.
        assert_eq!(
            s.admit(1_000_000, 1250, 0),
            Verdict::Due(1_010_000 + 20_000_000)
        );
    }

    #[test]
    fn an_l1_link_paces_full_frames_at_calc_rates_frames_per_second_and_l2_faster() {
        use linerate_calc::ethernet::{Duplex, FrameSpec, frame_rate};
        let link = BitRate::from_mbps(100);
        let calc = frame_rate(
            link,
            FrameSpec::Size(linerate_units::ByteSize::from_bytes(1518)),
            Duplex::Full,
        )
        .frames_per_second
        .pps();
        let paced = |layer: RateLayer| {
            let mut s = Shaper::new(
                &Impairment {
                    rate: Some(link),
                    rate_layer: layer,
                    ..imp()
                },
                1,
            );
            // 10 000 frames of 1514 bytes (1518 with the FCS the veth does not carry), at once.
            let mut last = 0;
            for i in 0..10_000 {
                if let Verdict::Due(d) = s.admit_frame(0, 1514, 1, i) {
                    last = d;
                }
            }
            10_000.0 / (last as f64 / 1e9)
        };
        let l1 = paced(RateLayer::L1);
        assert!(
            (l1 / calc - 1.0).abs() < 1e-6,
            "L1 {l1} frames/s, calc {calc}"
        );
        let l2 = paced(RateLayer::L2);
        assert!(
            (l2 / (100e6 / (1514.0 * 8.0)) - 1.0).abs() < 1e-6,
            "L2 {l2}"
        );
        assert!(l2 > l1 * 1.015, "L2 lets 1538/1514 as many frames through");
    }

    #[test]
    fn jitter_stays_in_bounds_and_never_reorders_unless_asked() {
        let base = Impairment {
            delay: Duration::from_millis(10),
            jitter: Duration::from_millis(5),
            ..imp()
        };
        let mut s = Shaper::new(&base, 7);
        let mut last = 0;
        let mut spread = (u64::MAX, 0u64);
        for i in 0..10_000u64 {
            let now = i * 1000;
            let Verdict::Due(d) = s.admit(now, 100, 0) else {
                panic!("no loss configured")
            };
            assert!(d >= last, "frame {i} overtook the previous one");
            last = d;
            spread = (spread.0.min(d - now), spread.1.max(d - now));
        }
        assert!(
            spread.0 >= 5_000_000 && spread.1 <= 15_000_000 + 1_000_000,
            "{spread:?}"
        );
        let mut r = Shaper::new(
            &Impairment {
                reorder: true,
                ..base
            },
            7,
        );
        let dues: Vec<u64> = (0..1000u64)
            .filter_map(|i| match r.admit(i * 1000, 100, 0) {
                Verdict::Due(d) => Some(d),
                _ => None,
            })
            .collect();
        assert!(
            dues.windows(2).any(|w| w[1] < w[0]),
            "reordering allowed but never happened"
        );
        assert!(
            dues.iter()
                .enumerate()
                .all(|(i, d)| (5_000_000..=15_000_000).contains(&(d - i as u64 * 1000)))
        );
    }

    #[test]
    fn bernoulli_loss_matches_the_probability() {
        let mut s = Shaper::new(
            &Impairment {
                loss: Percent::new(1.0),
                ..imp()
            },
            42,
        );
        let n = 200_000;
        let lost = (0..n)
            .filter(|_| s.admit(0, 64, 0) == Verdict::Lost)
            .count();
        let rate = lost as f64 / n as f64;
        // 1 % ± 5 σ (σ = sqrt(p(1-p)/n) ≈ 0.022 %).
        assert!((rate - 0.01).abs() < 0.0012, "{rate}");
    }

    #[test]
    fn tail_drop_at_the_limit() {
        let mut s = Shaper::new(
            &Impairment {
                limit: 3,
                ..Impairment::default()
            },
            1,
        );
        assert!(matches!(s.admit(0, 64, 2), Verdict::Due(_)));
        assert_eq!(s.admit(0, 64, 3), Verdict::Overflow);
    }

    #[test]
    fn delay_line_releases_in_due_order() {
        let mut fifo = DelayLine::default();
        fifo.push(10, vec![1], false);
        fifo.push(20, vec![2], false);
        assert_eq!(fifo.pop_due(5), None);
        assert_eq!(fifo.next_due(), Some(10));
        assert_eq!(fifo.pop_due(25), Some(vec![1]));
        assert_eq!(fifo.pop_due(25), Some(vec![2]));
        let mut heap = DelayLine::default();
        heap.push(30, vec![3], true);
        heap.push(10, vec![1], true);
        assert_eq!(heap.pop_due(40), Some(vec![1]));
        assert_eq!(heap.pop_due(40), Some(vec![3]));
        assert!(heap.is_empty());
    }
}
