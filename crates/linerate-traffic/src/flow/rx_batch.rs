//! How many datagrams a receiver asks `recvmmsg` for: sized from how full the last call came
//! back (doubled when it filled, halved when it came back three-quarters empty), between
//! [`RxBatch::MIN`] and the batch's room. A queue's datagram count is not something the
//! kernel says: `FIONREAD` on UDP gives the next datagram's length, and `SO_MEMINFO` gives
//! bytes charged with per-buffer overhead, not datagrams; the last call's fill is free and is
//! the queue as it was a moment ago. Pure, so its bounds are tested without sockets.

/// The receive batch size and what it did.
#[derive(Debug, Clone)]
pub struct RxBatch {
    want: usize,
    max: usize,
    peak: usize,
    calls: u64,
    datagrams: u64,
}

impl RxBatch {
    /// The smallest batch asked for.
    pub const MIN: usize = 8;
    /// Where a receiver starts.
    pub const START: usize = 64;

    /// A batch of at most `max` datagrams per call (at least 1).
    pub fn new(max: usize) -> RxBatch {
        let max = max.max(1);
        let want = Self::START.min(max);
        RxBatch {
            want,
            max,
            peak: want,
            calls: 0,
            datagrams: 0,
        }
    }

    /// Datagrams to ask for on the next call.
    pub fn want(&self) -> usize {
        self.want
    }

    /// Notes that a call asking for [`RxBatch::want`] got `got` datagrams.
    pub fn on_receive(&mut self, got: usize) {
        self.calls += 1;
        self.datagrams += got as u64;
        if got >= self.want {
            self.want = (self.want * 2).min(self.max);
        } else if got * 4 <= self.want {
            self.want = (self.want / 2).max(Self::MIN.min(self.max));
        }
        self.peak = self.peak.max(self.want);
    }

    /// The largest batch asked for.
    pub fn peak(&self) -> usize {
        self.peak
    }

    /// Receive calls made.
    pub fn calls(&self) -> u64 {
        self.calls
    }

    /// Datagrams (or coalesced GRO datagrams) received per call, on average.
    pub fn per_call(&self) -> f64 {
        if self.calls == 0 {
            0.0
        } else {
            self.datagrams as f64 / self.calls as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_calls_grow_to_the_room_and_no_further() {
        let mut b = RxBatch::new(1024);
        assert_eq!(b.want(), 64);
        for _ in 0..20 {
            let w = b.want();
            b.on_receive(w);
        }
        assert_eq!((b.want(), b.peak()), (1024, 1024));
    }

    #[test]
    fn short_calls_shrink_to_the_floor_and_middling_ones_hold() {
        let mut b = RxBatch::new(1024);
        b.on_receive(20); // 20 of 64: more than a quarter, holds
        assert_eq!(b.want(), 64);
        for _ in 0..20 {
            b.on_receive(1);
        }
        assert_eq!(b.want(), RxBatch::MIN);
        assert_eq!(b.peak(), 64);
        assert_eq!(b.calls(), 21);
        assert!((b.per_call() - 40.0 / 21.0).abs() < 1e-12);
    }

    #[test]
    fn a_small_room_bounds_start_and_floor() {
        let mut b = RxBatch::new(4);
        assert_eq!(b.want(), 4);
        b.on_receive(0);
        assert_eq!(b.want(), 4);
        let mut z = RxBatch::new(0);
        z.on_receive(1);
        assert_eq!((z.want(), z.per_call()), (1, 1.0));
    }
}
