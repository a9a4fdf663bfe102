//! Transaction latency for the rr and crr modes: an HDR histogram of nanoseconds (3
//! significant digits, so every percentile is within 0.1 % of the exact value), its
//! percentile summary, and the histogram's non-empty buckets for `--json`.

use hdrhistogram::Histogram;
pub use linerate_iperf3::linerate::{HistogramDump, LatencySummary};

/// Largest latency recorded: one hour, in nanoseconds. Longer values are clamped to it.
pub const MAX_NANOS: u64 = 3_600_000_000_000;
/// Significant decimal digits kept.
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// A latency histogram being filled by one worker thread.
#[derive(Debug, Clone)]
pub struct Latency {
    hist: Histogram<u64>,
}

impl Default for Latency {
    fn default() -> Self {
        Latency::new()
    }
}

impl Latency {
    /// An empty histogram covering 1 ns to [`MAX_NANOS`].
    pub fn new() -> Latency {
        // Constant bounds that hdrhistogram accepts (low ≥ 1, high ≥ 2·low, sigfig ≤ 5).
        let hist = Histogram::new_with_bounds(1, MAX_NANOS, SIGNIFICANT_DIGITS)
            .expect("constant histogram bounds are valid");
        Latency { hist }
    }

    /// Records one transaction of `nanos` (0 is counted as 1 ns; above the range, clamped).
    pub fn record(&mut self, nanos: u64) {
        self.hist.saturating_record(nanos.clamp(1, MAX_NANOS));
    }

    /// Adds another histogram's counts (several streams into one).
    pub fn merge(&mut self, other: &Latency) {
        // Same bounds on both sides, so `add` cannot fail; a failure would only lose counts.
        let _ = self.hist.add(&other.hist);
    }

    /// Transactions recorded.
    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// The percentile summary, in microseconds.
    pub fn summary(&self) -> LatencySummary {
        let us = |ns: u64| ns as f64 / 1000.0;
        let empty = self.hist.is_empty();
        let q = |p: f64| {
            if empty {
                0.0
            } else {
                us(self.hist.value_at_quantile(p))
            }
        };
        LatencySummary {
            count: self.hist.len(),
            min_us: if empty { 0.0 } else { us(self.hist.min()) },
            mean_us: if empty {
                0.0
            } else {
                self.hist.mean() / 1000.0
            },
            stdev_us: if empty {
                0.0
            } else {
                self.hist.stdev() / 1000.0
            },
            p50_us: q(0.50),
            p90_us: q(0.90),
            p99_us: q(0.99),
            p999_us: q(0.999),
            max_us: if empty { 0.0 } else { us(self.hist.max()) },
        }
    }

    /// The non-empty buckets, for `--json`.
    pub fn buckets(&self) -> HistogramDump {
        HistogramDump {
            unit: "ns".to_owned(),
            significant_digits: SIGNIFICANT_DIGITS,
            buckets: self
                .hist
                .iter_recorded()
                .map(|v| [v.value_iterated_to(), v.count_at_value()])
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn within(got: f64, want: f64) -> bool {
        (got - want).abs() <= want * 0.001 + 1e-9
    }

    #[test]
    fn percentiles_of_known_latencies() {
        // 1, 2, …, 10 000 µs: the p-th percentile is p % of 10 000 µs.
        let mut l = Latency::new();
        for us in 1..=10_000u64 {
            l.record(us * 1000);
        }
        let s = l.summary();
        assert_eq!(s.count, 10_000);
        assert!(within(s.min_us, 1.0), "{s:?}");
        assert!(within(s.p50_us, 5_000.0), "{s:?}");
        assert!(within(s.p90_us, 9_000.0), "{s:?}");
        assert!(within(s.p99_us, 9_900.0), "{s:?}");
        assert!(within(s.p999_us, 9_990.0), "{s:?}");
        assert!(within(s.max_us, 10_000.0), "{s:?}");
        assert!(within(s.mean_us, 5_000.5), "{s:?}");
        // Population σ of 1..=n is sqrt((n²−1)/12).
        let sigma = ((10_000f64 * 10_000.0 - 1.0) / 12.0).sqrt();
        assert!((s.stdev_us - sigma).abs() / sigma < 0.002, "{s:?}");
    }

    #[test]
    fn a_slow_tail_shows_in_p99_and_not_in_p50() {
        // 98 % at 20 µs, 2 % at 5 ms.
        let mut l = Latency::new();
        for i in 0..10_000 {
            l.record(if i % 50 == 0 { 5_000_000 } else { 20_000 });
        }
        let s = l.summary();
        assert!(within(s.p50_us, 20.0), "{s:?}");
        assert!(within(s.p90_us, 20.0), "{s:?}");
        assert!(within(s.p99_us, 5_000.0), "{s:?}");
        assert!(within(s.max_us, 5_000.0), "{s:?}");
    }

    #[test]
    fn merging_adds_counts_and_buckets_sum_to_the_count() {
        let mut a = Latency::new();
        let mut b = Latency::new();
        for ns in [1_000, 2_000, 3_000] {
            a.record(ns);
        }
        for ns in [0, 7_000, u64::MAX] {
            b.record(ns);
        }
        a.merge(&b);
        assert_eq!(a.count(), 6);
        let dump = a.buckets();
        assert_eq!(dump.buckets.iter().map(|b| b[1]).sum::<u64>(), 6);
        assert!(dump.buckets.windows(2).all(|w| w[0][0] < w[1][0]));
        let s = a.summary();
        assert!(within(s.min_us, 0.001), "{s:?}");
        assert!(within(s.max_us, MAX_NANOS as f64 / 1000.0), "{s:?}");
    }

    #[test]
    fn empty_histogram_summarises_to_zeros() {
        let s = Latency::new().summary();
        assert_eq!(s, LatencySummary::default());
        assert!(Latency::new().buckets().buckets.is_empty());
    }
}
