//! A byte budget shared by the sending streams of one direction (`-n`, `-k`).

use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes left to send.
#[derive(Debug)]
pub struct Budget {
    left: AtomicU64,
}

impl Budget {
    /// A budget of `bytes`.
    pub fn new(bytes: u64) -> Budget {
        Budget {
            left: AtomicU64::new(bytes),
        }
    }

    /// Takes up to `want` bytes; 0 when the budget is spent.
    pub fn take(&self, want: u64) -> u64 {
        let mut granted = 0;
        let _ = self
            .left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                granted = left.min(want);
                Some(left - granted)
            });
        granted
    }

    /// Returns bytes that were taken but not sent.
    pub fn give_back(&self, bytes: u64) {
        self.left.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Bytes left.
    pub fn left(&self) -> u64 {
        self.left.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_never_exceed_the_budget() {
        let b = Budget::new(10);
        assert_eq!(b.take(4), 4);
        assert_eq!(b.take(8), 6);
        assert_eq!(b.take(1), 0);
        b.give_back(3);
        assert_eq!(b.take(5), 3);
        assert_eq!(b.left(), 0);
    }
}
