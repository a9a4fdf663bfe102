//! A level's running minimum, mean, maximum and last value, in fixed memory.

use linerate_iperf3::evidence::Gauge;

/// Accumulates samples of one level.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct GaugeAcc {
    n: u64,
    min: f64,
    max: f64,
    sum: f64,
    last: f64,
}

impl GaugeAcc {
    /// Adds one sample.
    pub(crate) fn add(&mut self, x: f64) {
        if self.n == 0 {
            self.min = x;
            self.max = x;
        } else {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
        }
        self.sum += x;
        self.last = x;
        self.n += 1;
    }

    /// Adds a sample when it is known.
    pub(crate) fn add_u64(&mut self, x: Option<u64>) {
        if let Some(x) = x {
            self.add(x as f64);
        }
    }

    /// The gauge, `None` before any sample.
    pub(crate) fn gauge(&self) -> Option<Gauge> {
        (self.n > 0).then(|| Gauge {
            min: self.min,
            mean: self.sum / self.n as f64,
            max: self.max,
            last: self.last,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gauges_follow_their_samples() {
        let mut g = GaugeAcc::default();
        assert_eq!(g.gauge(), None);
        for x in [5.0, 1.0, 9.0, 3.0] {
            g.add(x);
        }
        assert_eq!(
            g.gauge(),
            Some(Gauge {
                min: 1.0,
                mean: 4.5,
                max: 9.0,
                last: 3.0
            })
        );
        let mut g = GaugeAcc::default();
        g.add_u64(None);
        assert_eq!(g.gauge(), None, "unknown samples are not zeros");
        g.add_u64(Some(7));
        assert_eq!(g.gauge().map(|g| (g.min, g.max)), Some((7.0, 7.0)));
    }
}
