//! Streaming distributions of non-negative integer samples (response times in nanoseconds, say)
//! with percentiles, in two modes:
//!
//! - [`LogHistogram`]: HDR-style log-linear buckets. Memory is bounded by the precision, not
//!   by the number of samples (at the default [`DEFAULT_PRECISION_BITS`] = 10, at most
//!   56 320 counters, 450 KiB, for the whole `u64` range). Every reported percentile is within
//!   a relative error of `2^-(bits+1)` of the exact one (1/2048 ≈ 0.049 % at 10 bits);
//!   values below `2^(bits+1)` are counted exactly.
//! - [`ExactCounts`]: one counter per distinct value, so percentiles are exact. Memory grows
//!   with the number of *distinct* values, which stays small for quantised data (nginx logs
//!   times in milliseconds, Apache in microseconds) but not for arbitrary floats.
//!
//! Both use the **nearest-rank** percentile: the `q`-quantile of `n` samples is the smallest
//! sample `x` such that at least `ceil(q·n)` samples are `<= x` (the 0-quantile is the
//! minimum). It always returns an observed value, so a test can assert it exactly.
//!
//! [`Distribution`] wraps either mode behind one interface; [`LinearBins`] counts samples in
//! fixed-width bins for a histogram drawn to a chosen bin width (calomel's 100 ms bins).

use std::collections::HashMap;

/// The default precision of [`LogHistogram`]: 10 bits, so percentiles are within 1/2048.
pub const DEFAULT_PRECISION_BITS: u32 = 10;

/// Where a percentile rank falls: the nearest-rank definition (see the module docs). `q` is
/// clamped to `[0, 1]`; returns a rank in `1..=n`, or `None` for an empty distribution.
pub fn nearest_rank(q: f64, n: u64) -> Option<u64> {
    if n == 0 {
        return None;
    }
    let q = if q.is_nan() { 0.0 } else { q.clamp(0.0, 1.0) };
    // `q * n` in f64 loses nothing for n below 2^53; ceil of a value like 0.9 * 10 computed as
    // 9.000000000000002 would give 10, so snap values within a relative 1e-12 of an integer.
    let exact = q * n as f64;
    let rounded = exact.round();
    let rank = if (exact - rounded).abs() <= 1e-12 * exact.max(1.0) {
        rounded
    } else {
        exact.ceil()
    };
    Some((rank as u64).clamp(1, n))
}

/// A log-linear histogram over `u64` with bounded memory and a stated relative precision.
#[derive(Debug, Clone, PartialEq)]
pub struct LogHistogram {
    bits: u32,
    counts: Vec<u64>,
    summary: Summary,
}

/// Count, sum, minimum and maximum, kept exactly in every mode.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Summary {
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Summary {
    fn record_n(&mut self, value: u64, n: u64) {
        if n == 0 {
            return;
        }
        if self.count == 0 || value < self.min {
            self.min = value;
        }
        if value > self.max {
            self.max = value;
        }
        self.count += n;
        self.sum += u128::from(value) * u128::from(n);
    }

    fn merge(&mut self, other: &Summary) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 || other.min < self.min {
            self.min = other.min;
        }
        self.max = self.max.max(other.max);
        self.count += other.count;
        self.sum += other.sum;
    }

    fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }
}

impl Default for LogHistogram {
    fn default() -> Self {
        Self::new(DEFAULT_PRECISION_BITS)
    }
}

impl LogHistogram {
    /// A histogram whose buckets are at most `2^-bits` of their lower edge wide. `bits` is
    /// clamped to `1..=20` (20 bits is already 1 in a million and 360 MiB of counters at most).
    pub fn new(bits: u32) -> Self {
        Self {
            bits: bits.clamp(1, 20),
            counts: Vec::new(),
            summary: Summary::default(),
        }
    }

    /// The precision in bits.
    pub fn precision_bits(&self) -> u32 {
        self.bits
    }

    /// The largest relative error of a reported percentile: `2^-(bits+1)`.
    pub fn relative_error(&self) -> f64 {
        (-f64::from(self.bits + 1)).exp2()
    }

    /// The bucket holding `value`.
    fn index(&self, value: u64) -> usize {
        let p = self.bits;
        if value < (1 << p) {
            return value as usize;
        }
        let msb = 63 - value.leading_zeros();
        let shift = msb - p;
        let group = (shift + 1) as usize;
        (group << p) + ((value >> shift) - (1 << p)) as usize
    }

    /// The bucket `index` as `[low, low + width)`.
    fn bounds(&self, index: usize) -> (u64, u64) {
        let p = self.bits;
        let group = index >> p;
        let mantissa = (index & ((1 << p) - 1)) as u64;
        if group == 0 {
            return (mantissa, 1);
        }
        let shift = (group - 1) as u32;
        (((1u64 << p) + mantissa) << shift, 1u64 << shift)
    }

    /// Counts one sample.
    pub fn record(&mut self, value: u64) {
        self.record_n(value, 1);
    }

    /// Counts `n` samples of `value`.
    pub fn record_n(&mut self, value: u64, n: u64) {
        if n == 0 {
            return;
        }
        let index = self.index(value);
        if index >= self.counts.len() {
            self.counts.resize(index + 1, 0);
        }
        self.counts[index] += n;
        self.summary.record_n(value, n);
    }

    /// Adds another histogram's samples (precisions must match; a mismatched one is re-binned
    /// at its buckets' representative values, losing nothing beyond both precisions).
    pub fn merge(&mut self, other: &LogHistogram) {
        if other.bits == self.bits {
            if other.counts.len() > self.counts.len() {
                self.counts.resize(other.counts.len(), 0);
            }
            for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
                *mine += theirs;
            }
            self.summary.merge(&other.summary);
        } else {
            for (value, n) in other.steps() {
                self.record_n(value, n);
            }
        }
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.summary.count
    }

    /// Exact smallest sample.
    pub fn min(&self) -> Option<u64> {
        (self.summary.count > 0).then_some(self.summary.min)
    }

    /// Exact largest sample.
    pub fn max(&self) -> Option<u64> {
        (self.summary.count > 0).then_some(self.summary.max)
    }

    /// Exact arithmetic mean.
    pub fn mean(&self) -> Option<f64> {
        self.summary.mean()
    }

    /// The value reported for a bucket: its middle, kept inside the observed range.
    fn representative(&self, index: usize) -> u64 {
        let (low, width) = self.bounds(index);
        (low + (width - 1) / 2).clamp(self.summary.min, self.summary.max)
    }

    /// The nearest-rank `q`-quantile (`q` in `[0, 1]`), within [`Self::relative_error`].
    pub fn quantile(&self, q: f64) -> Option<u64> {
        let rank = nearest_rank(q, self.summary.count)?;
        if rank == 1 {
            return self.min();
        }
        if rank == self.summary.count {
            return self.max();
        }
        let mut seen = 0u64;
        for (index, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Some(self.representative(index));
            }
        }
        self.max()
    }

    /// Non-empty buckets as `(representative value, count)`, ascending.
    pub fn steps(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(index, &n)| (self.representative(index), n))
    }

    /// Non-empty buckets as `(low, high exclusive, count)`, ascending.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(index, &n)| {
                let (low, width) = self.bounds(index);
                (low, low.saturating_add(width), n)
            })
    }

    /// Bytes of counters held (the memory bound in action).
    pub fn memory_bytes(&self) -> usize {
        self.counts.capacity() * std::mem::size_of::<u64>()
    }
}

/// Exact counts per distinct value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExactCounts {
    counts: HashMap<u64, u64>,
    summary: Summary,
}

impl ExactCounts {
    /// An empty distribution.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts one sample.
    pub fn record(&mut self, value: u64) {
        self.record_n(value, 1);
    }

    /// Counts `n` samples of `value`.
    pub fn record_n(&mut self, value: u64, n: u64) {
        if n == 0 {
            return;
        }
        *self.counts.entry(value).or_insert(0) += n;
        self.summary.record_n(value, n);
    }

    /// Adds another distribution's samples.
    pub fn merge(&mut self, other: &ExactCounts) {
        for (&value, &n) in &other.counts {
            *self.counts.entry(value).or_insert(0) += n;
        }
        self.summary.merge(&other.summary);
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.summary.count
    }

    /// Number of distinct values (what the memory grows with).
    pub fn distinct(&self) -> usize {
        self.counts.len()
    }

    /// Smallest sample.
    pub fn min(&self) -> Option<u64> {
        (self.summary.count > 0).then_some(self.summary.min)
    }

    /// Largest sample.
    pub fn max(&self) -> Option<u64> {
        (self.summary.count > 0).then_some(self.summary.max)
    }

    /// Arithmetic mean.
    pub fn mean(&self) -> Option<f64> {
        self.summary.mean()
    }

    /// `(value, count)` ascending.
    pub fn steps(&self) -> Vec<(u64, u64)> {
        let mut steps: Vec<(u64, u64)> = self.counts.iter().map(|(&v, &n)| (v, n)).collect();
        steps.sort_unstable_by_key(|&(v, _)| v);
        steps
    }

    /// Exact nearest-rank quantiles for each `q` in `qs`, in the same order.
    pub fn quantiles(&self, qs: &[f64]) -> Vec<Option<u64>> {
        let steps = self.steps();
        qs.iter()
            .map(|&q| {
                let rank = nearest_rank(q, self.summary.count)?;
                let mut seen = 0;
                steps.iter().find_map(|&(v, n)| {
                    seen += n;
                    (seen >= rank).then_some(v)
                })
            })
            .collect()
    }
}

/// Either mode behind one interface.
#[derive(Debug, Clone, PartialEq)]
pub enum Distribution {
    /// Bounded memory, stated precision.
    Histogram(LogHistogram),
    /// Exact percentiles.
    Exact(ExactCounts),
}

impl Distribution {
    /// A bounded-memory distribution at the default precision.
    pub fn histogram() -> Self {
        Self::Histogram(LogHistogram::default())
    }

    /// An exact distribution.
    pub fn exact() -> Self {
        Self::Exact(ExactCounts::new())
    }

    /// Counts one sample.
    pub fn record(&mut self, value: u64) {
        match self {
            Self::Histogram(h) => h.record(value),
            Self::Exact(e) => e.record(value),
        }
    }

    /// Adds another distribution of the same mode (a different mode is added value by value).
    pub fn merge(&mut self, other: &Distribution) {
        match (self, other) {
            (Self::Histogram(a), Self::Histogram(b)) => a.merge(b),
            (Self::Exact(a), Self::Exact(b)) => a.merge(b),
            (a, b) => {
                for (v, n) in b.steps() {
                    match a {
                        Self::Histogram(h) => h.record_n(v, n),
                        Self::Exact(e) => e.record_n(v, n),
                    }
                }
            }
        }
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        match self {
            Self::Histogram(h) => h.count(),
            Self::Exact(e) => e.count(),
        }
    }

    /// Smallest sample (exact in both modes).
    pub fn min(&self) -> Option<u64> {
        match self {
            Self::Histogram(h) => h.min(),
            Self::Exact(e) => e.min(),
        }
    }

    /// Largest sample (exact in both modes).
    pub fn max(&self) -> Option<u64> {
        match self {
            Self::Histogram(h) => h.max(),
            Self::Exact(e) => e.max(),
        }
    }

    /// Arithmetic mean (exact in both modes).
    pub fn mean(&self) -> Option<f64> {
        match self {
            Self::Histogram(h) => h.mean(),
            Self::Exact(e) => e.mean(),
        }
    }

    /// Nearest-rank quantiles for each `q`.
    pub fn quantiles(&self, qs: &[f64]) -> Vec<Option<u64>> {
        match self {
            Self::Histogram(h) => qs.iter().map(|&q| h.quantile(q)).collect(),
            Self::Exact(e) => e.quantiles(qs),
        }
    }

    /// The largest relative error of a percentile: 0 when exact.
    pub fn relative_error(&self) -> f64 {
        match self {
            Self::Histogram(h) => h.relative_error(),
            Self::Exact(_) => 0.0,
        }
    }

    /// `(value, count)` ascending (bucket representatives for a histogram).
    pub fn steps(&self) -> Vec<(u64, u64)> {
        match self {
            Self::Histogram(h) => h.steps().collect(),
            Self::Exact(e) => e.steps(),
        }
    }

    /// `(position, count)` ascending, for comparing two distributions of the same mode and
    /// precision: the values when exact, each bucket's lower edge for a histogram. (Not the
    /// representatives: those are kept inside each distribution's own min..max, so one bucket
    /// could sit at two different positions in two histograms and show a gap that is not
    /// there.)
    pub fn comparable_steps(&self) -> Vec<(u64, u64)> {
        match self {
            Self::Histogram(h) => h.buckets().map(|(low, _, n)| (low, n)).collect(),
            Self::Exact(e) => e.steps(),
        }
    }
}

/// Fixed-width bins `[i·width, (i+1)·width)` for `i < bins`, plus one overflow bin for
/// everything at or above `bins·width`. Counts are exact.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearBins {
    width: u64,
    counts: Vec<u64>,
    overflow: u64,
}

impl LinearBins {
    /// `bins` bins of `width` (a zero width is taken as 1).
    pub fn new(width: u64, bins: usize) -> Self {
        Self {
            width: width.max(1),
            counts: vec![0; bins],
            overflow: 0,
        }
    }

    /// Counts one sample.
    #[inline]
    pub fn record(&mut self, value: u64) {
        let bin = value / self.width;
        match usize::try_from(bin)
            .ok()
            .and_then(|b| self.counts.get_mut(b))
        {
            Some(count) => *count += 1,
            None => self.overflow += 1,
        }
    }

    /// Adds another set of bins with the same shape (returns false and adds nothing if the
    /// shapes differ).
    pub fn merge(&mut self, other: &LinearBins) -> bool {
        if other.width != self.width || other.counts.len() != self.counts.len() {
            return false;
        }
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            *mine += theirs;
        }
        self.overflow += other.overflow;
        true
    }

    /// The bin width.
    pub fn width(&self) -> u64 {
        self.width
    }

    /// Counts of the regular bins.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Samples at or above the last bin's upper edge.
    pub fn overflow(&self) -> u64 {
        self.overflow
    }

    /// All samples counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum::<u64>() + self.overflow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic generator (SplitMix64), so tests need no dependency.
    struct SplitMix(u64);
    impl SplitMix {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
    }

    fn exact_quantile(sorted: &[u64], q: f64) -> u64 {
        let rank = nearest_rank(q, sorted.len() as u64).unwrap_or(1);
        sorted[(rank - 1) as usize]
    }

    #[test]
    fn nearest_rank_matches_the_definition() {
        assert_eq!(nearest_rank(0.5, 10), Some(5));
        assert_eq!(nearest_rank(0.9, 10), Some(9)); // 0.9*10 is 9.000000000000002 in f64
        assert_eq!(nearest_rank(0.99, 100), Some(99));
        assert_eq!(nearest_rank(0.999, 1000), Some(999));
        assert_eq!(nearest_rank(0.95, 7), Some(7));
        assert_eq!(nearest_rank(0.0, 7), Some(1));
        assert_eq!(nearest_rank(1.0, 7), Some(7));
        assert_eq!(nearest_rank(0.5, 0), None);
    }

    #[test]
    fn bucket_index_and_bounds_round_trip() {
        for bits in [1, 3, 7, 10] {
            let h = LogHistogram::new(bits);
            let mut r = SplitMix(bits.into());
            for _ in 0..20_000 {
                let v = r.next() >> (r.next() % 64);
                let (low, width) = h.bounds(h.index(v));
                assert!(
                    low <= v && v - low < width,
                    "bits {bits} v {v} low {low} w {width}"
                );
                if v >= 1 << (bits + 1) {
                    assert!(width as f64 <= low as f64 * (-f64::from(bits)).exp2());
                } else {
                    assert_eq!(width, 1);
                }
            }
            let (low, width) = h.bounds(h.index(u64::MAX));
            assert!(u64::MAX - low < width);
        }
    }

    #[test]
    fn small_values_are_exact() {
        let mut h = LogHistogram::new(4);
        let values: Vec<u64> = (0..32).collect();
        for &v in &values {
            h.record(v);
        }
        for q in [0.1, 0.25, 0.5, 0.75, 0.9] {
            assert_eq!(h.quantile(q), Some(exact_quantile(&values, q)));
        }
    }

    #[test]
    fn histogram_percentiles_are_within_the_stated_precision() {
        let mut h = LogHistogram::default();
        let mut e = ExactCounts::new();
        let mut values = Vec::new();
        let mut r = SplitMix(7);
        for _ in 0..200_000 {
            // log-uniform over 1 µs .. 10 s in nanoseconds
            let u = (r.next() >> 11) as f64 / (1u64 << 53) as f64;
            let v = (1e3 * 1e7f64.powf(u)) as u64;
            h.record(v);
            e.record(v);
            values.push(v);
        }
        values.sort_unstable();
        let qs = [0.0, 0.001, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0];
        let exact = e.quantiles(&qs);
        for (&q, want) in qs.iter().zip(exact) {
            let want = want.unwrap_or(0);
            assert_eq!(want, exact_quantile(&values, q));
            let got = h.quantile(q).unwrap_or(0);
            let err = (got as f64 - want as f64).abs() / want as f64;
            assert!(err <= h.relative_error(), "q {q}: {got} vs {want}: {err}");
        }
        assert_eq!(h.count(), 200_000);
        assert_eq!(h.min(), values.first().copied());
        assert_eq!(h.max(), values.last().copied());
        let mean = values.iter().map(|&v| v as f64).sum::<f64>() / values.len() as f64;
        assert!((h.mean().unwrap_or(0.0) - mean).abs() < 1e-6 * mean);
        // bounded: never more than (65 - bits)·2^bits counters, whatever the sample count
        assert!(h.memory_bytes() <= 55 * 1024 * 8, "{}", h.memory_bytes());
    }

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let mut r = SplitMix(3);
        let (mut a, mut b, mut all) = (
            LogHistogram::default(),
            LogHistogram::default(),
            LogHistogram::default(),
        );
        for i in 0..10_000 {
            let v = r.next() % 5_000_000_000;
            if i % 3 == 0 { &mut a } else { &mut b }.record(v);
            all.record(v);
        }
        a.merge(&b);
        assert_eq!(a, all);
    }

    #[test]
    fn exact_counts_give_exact_quantiles_with_ties() {
        let mut e = ExactCounts::new();
        // 7142 at 50 ms, 2858 spread 100 ms .. 2957 ms
        for _ in 0..7142 {
            e.record(50);
        }
        for i in 0..2858 {
            e.record(100 + i);
        }
        let q = e.quantiles(&[0.5, 0.7142, 0.7143, 0.99, 1.0]);
        assert_eq!(
            q,
            vec![Some(50), Some(50), Some(100), Some(100 + 2757), Some(2957)]
        );
        assert_eq!(e.distinct(), 2859);
    }

    #[test]
    fn comparable_steps_put_a_bucket_at_one_place() {
        // both samples fall in the bucket [2048, 2050) at 10 bits, with different extremes
        let (mut a, mut b) = (Distribution::histogram(), Distribution::histogram());
        a.record(2048);
        b.record(2049);
        assert_eq!(a.comparable_steps(), b.comparable_steps());
        assert_ne!(a.steps(), b.steps()); // the representatives differ: min/max clamp
    }

    #[test]
    fn empty_distributions_have_no_statistics() {
        let d = Distribution::histogram();
        assert_eq!(d.quantiles(&[0.5]), vec![None]);
        assert_eq!(d.mean(), None);
        assert_eq!(Distribution::exact().max(), None);
    }

    #[test]
    fn linear_bins_count_exactly_with_overflow() {
        let mut b = LinearBins::new(100, 3);
        for v in [0, 99, 100, 250, 299, 300, 5000, u64::MAX] {
            b.record(v);
        }
        assert_eq!(b.counts(), &[2, 1, 2]);
        assert_eq!(b.overflow(), 3);
        assert_eq!(b.total(), 8);
        let mut c = LinearBins::new(100, 3);
        assert!(c.merge(&b));
        assert!(!c.merge(&LinearBins::new(10, 3)));
    }
}
