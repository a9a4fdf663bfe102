//! Counting the frames of `linerate gen` at a receiver: per sending thread (the top byte of
//! the sequence number) and source address, which sequence numbers arrived, so loss,
//! duplicates and reordering follow from the numbers alone. Pure: the receive ring feeds it.
//!
//! Loss is counted between the lowest and highest sequence number seen per stream: frames
//! lost before the first or after the last arrival of a stream are not visible here (the
//! generator's `sent_frames` is the cross-check). Duplicates are found within a window of
//! [`WINDOW`] sequence numbers behind the highest seen.

use std::collections::HashMap;
use std::net::Ipv4Addr;

use serde::Serialize;

/// Sequence numbers behind the highest seen within which duplicates are recognised.
pub const WINDOW: u64 = 1 << 16;

/// One stream's record.
#[derive(Debug, Clone)]
struct Stream {
    lowest: u64,
    highest: u64,
    received: u64,
    duplicates: u64,
    reordered: u64,
    /// Bit i: sequence `highest - i` arrived (i < WINDOW).
    seen: Vec<u64>,
}

impl Stream {
    fn new(seq: u64) -> Stream {
        let mut seen = vec![0u64; (WINDOW / 64) as usize];
        seen[0] = 1;
        Stream {
            lowest: seq,
            highest: seq,
            received: 1,
            duplicates: 0,
            reordered: 0,
            seen,
        }
    }

    fn bit(&mut self, back: u64) -> (&mut u64, u64) {
        // The window is a ring indexed by sequence number modulo WINDOW.
        let pos = (self.highest - back) % WINDOW;
        (&mut self.seen[(pos / 64) as usize], 1 << (pos % 64))
    }

    fn record(&mut self, seq: u64) {
        if seq > self.highest {
            // Clear the slots the window moves over, then mark seq.
            let step = seq - self.highest;
            if step >= WINDOW {
                self.seen.fill(0);
            } else {
                for s in self.highest + 1..=seq {
                    let pos = s % WINDOW;
                    self.seen[(pos / 64) as usize] &= !(1 << (pos % 64));
                }
            }
            self.highest = seq;
            let (w, m) = self.bit(0);
            *w |= m;
            self.received += 1;
            return;
        }
        let back = self.highest - seq;
        if back < WINDOW {
            let (w, m) = self.bit(back);
            if *w & m != 0 {
                self.duplicates += 1;
                return;
            }
            *w |= m;
        }
        self.received += 1;
        self.reordered += 1;
        self.lowest = self.lowest.min(seq);
    }
}

/// Totals over every stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Totals {
    /// Streams (sending thread × source address) seen.
    pub streams: u64,
    /// Distinct frames received.
    pub received: u64,
    /// Frames missing between each stream's lowest and highest sequence number.
    pub lost: u64,
    /// Frames received again.
    pub duplicates: u64,
    /// Frames that arrived after a higher sequence number of their stream.
    pub reordered: u64,
}

impl Totals {
    /// Lost frames as a fraction of those expected (received + lost); 0 when none expected.
    pub fn loss_ratio(&self) -> f64 {
        let expected = self.received + self.lost;
        if expected == 0 {
            0.0
        } else {
            self.lost as f64 / expected as f64
        }
    }
}

/// Sequence records of every stream seen.
#[derive(Debug, Default)]
pub struct RxTally {
    streams: HashMap<(Ipv4Addr, u8), Stream>,
}

impl RxTally {
    /// An empty tally.
    pub fn new() -> RxTally {
        RxTally::default()
    }

    /// Records frame `seq` from `src` (the generator thread is the sequence's top byte).
    pub fn record(&mut self, src: Ipv4Addr, seq: u64) {
        let thread = (seq >> 56) as u8;
        let seq = seq & ((1 << 56) - 1);
        match self.streams.get_mut(&(src, thread)) {
            Some(s) => s.record(seq),
            None => {
                self.streams.insert((src, thread), Stream::new(seq));
            }
        }
    }

    /// Totals so far.
    pub fn totals(&self) -> Totals {
        let mut t = Totals::default();
        for s in self.streams.values() {
            t.streams += 1;
            t.received += s.received;
            t.duplicates += s.duplicates;
            t.reordered += s.reordered;
            t.lost += (s.highest - s.lowest + 1).saturating_sub(s.received);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);

    #[test]
    fn in_order_frames_have_no_loss() {
        let mut t = RxTally::new();
        for s in 0..100_000 {
            t.record(A, s);
        }
        let got = t.totals();
        assert_eq!(
            got,
            Totals {
                streams: 1,
                received: 100_000,
                ..Totals::default()
            }
        );
        assert_eq!(got.loss_ratio(), 0.0);
    }

    #[test]
    fn every_tenth_lost_is_ten_percent() {
        let mut t = RxTally::new();
        for s in 0..10_000u64 {
            if s % 10 != 5 {
                t.record(A, s);
            }
        }
        let got = t.totals();
        assert_eq!(got.lost, 1000);
        assert_eq!(got.received, 9000);
        assert!((got.loss_ratio() - 0.1).abs() < 1e-12);
    }

    #[test]
    fn duplicates_and_reordering_are_told_apart() {
        let mut t = RxTally::new();
        for s in [0, 1, 3, 2, 2, 4, 4, 5] {
            t.record(A, s);
        }
        let got = t.totals();
        assert_eq!(got.received, 6);
        assert_eq!(got.duplicates, 2);
        assert_eq!(got.reordered, 1);
        assert_eq!(got.lost, 0);
    }

    #[test]
    fn threads_and_sources_are_separate_streams() {
        let mut t = RxTally::new();
        let b = Ipv4Addr::new(198, 18, 0, 2);
        for s in 0..10 {
            t.record(A, s);
            t.record(A, (1 << 56) | (s * 2));
            t.record(b, s + 100);
        }
        let got = t.totals();
        assert_eq!(got.streams, 3);
        assert_eq!(got.received, 30);
        assert_eq!(got.lost, 9); // thread 1 sent only even numbers 0..18
    }

    #[test]
    fn a_jump_past_the_window_forgets_old_numbers() {
        let mut t = RxTally::new();
        t.record(A, 0);
        t.record(A, 3 * WINDOW);
        t.record(A, 3 * WINDOW); // duplicate of the newest
        assert_eq!(t.totals().duplicates, 1);
        assert_eq!(t.totals().lost, 3 * WINDOW - 1);
    }
}
