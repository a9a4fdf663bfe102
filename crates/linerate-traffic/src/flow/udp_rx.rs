//! UDP receive accounting: loss and out-of-order as iperf3 counts them, duplicates (which
//! iperf3 cannot tell from late arrivals) and RFC 3550 jitter. Pure and allocation-free.

/// Sequence numbers remembered for duplicate detection.
pub const DUP_WINDOW: u64 = 4096;
const WORDS: usize = (DUP_WINDOW / 64) as usize;

/// The receiver's state.
#[derive(Debug, Clone)]
pub struct UdpRxTracker {
    /// Highest sequence number seen (iperf3's packet count).
    pub max_seq: u64,
    /// Lost: gaps opened, less gaps later filled.
    pub lost: u64,
    /// Arrived after a higher sequence number.
    pub out_of_order: u64,
    /// Arrived twice.
    pub duplicates: u64,
    /// Jitter in seconds.
    pub jitter: f64,
    prev_transit: Option<f64>,
    seen: [u64; WORDS],
}

impl Default for UdpRxTracker {
    fn default() -> Self {
        UdpRxTracker {
            max_seq: 0,
            lost: 0,
            out_of_order: 0,
            duplicates: 0,
            jitter: 0.0,
            prev_transit: None,
            seen: [0; WORDS],
        }
    }
}

impl UdpRxTracker {
    fn bit(seq: u64) -> (usize, u64) {
        let slot = seq % DUP_WINDOW;
        ((slot / 64) as usize, 1u64 << (slot % 64))
    }

    /// Accounts one datagram with sequence `seq` whose one-way transit time (arrival − send,
    /// in seconds, clocks need not agree) is `transit`.
    pub fn on_datagram(&mut self, seq: u64, transit: f64) {
        if seq > self.max_seq {
            // Forget the slots the window slides over.
            if seq - self.max_seq >= DUP_WINDOW {
                self.seen = [0; WORDS];
            } else {
                for s in self.max_seq + 1..=seq {
                    let (w, m) = Self::bit(s);
                    self.seen[w] &= !m;
                }
            }
            if seq > self.max_seq + 1 {
                self.lost += seq - self.max_seq - 1;
            }
            self.max_seq = seq;
            let (w, m) = Self::bit(seq);
            self.seen[w] |= m;
        } else if self.max_seq - seq < DUP_WINDOW && seq > 0 {
            let (w, m) = Self::bit(seq);
            if self.seen[w] & m != 0 {
                self.duplicates += 1;
                return;
            }
            self.seen[w] |= m;
            self.out_of_order += 1;
            self.lost = self.lost.saturating_sub(1);
        } else {
            // Older than the window: a late arrival (or a replay we cannot tell apart).
            self.out_of_order += 1;
            self.lost = self.lost.saturating_sub(1);
        }
        // RFC 3550 §6.4.1: J += (|D| − J) / 16, from the second datagram on.
        if let Some(prev) = self.prev_transit {
            let d = (transit - prev).abs();
            self.jitter += (d - self.jitter) / 16.0;
        }
        self.prev_transit = Some(transit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(seqs: &[u64]) -> UdpRxTracker {
        let mut t = UdpRxTracker::default();
        for &s in seqs {
            t.on_datagram(s, 0.001);
        }
        t
    }

    #[test]
    fn in_order_has_no_loss() {
        let t = feed(&[1, 2, 3, 4, 5]);
        assert_eq!(
            (t.max_seq, t.lost, t.out_of_order, t.duplicates),
            (5, 0, 0, 0)
        );
    }

    #[test]
    fn known_drops_are_counted() {
        let t = feed(&[1, 2, 5, 6, 10]);
        assert_eq!((t.max_seq, t.lost, t.out_of_order), (10, 5, 0));
    }

    #[test]
    fn reordering_is_not_loss() {
        let t = feed(&[1, 3, 2, 4]);
        assert_eq!((t.lost, t.out_of_order, t.duplicates), (0, 1, 0));
    }

    #[test]
    fn duplicates_are_not_reordering() {
        let t = feed(&[1, 2, 2, 3, 1]);
        assert_eq!((t.lost, t.out_of_order, t.duplicates), (0, 0, 2));
    }

    #[test]
    fn window_slides_past_old_duplicates() {
        let mut seqs: Vec<u64> = (1..=3 * DUP_WINDOW).collect();
        seqs.push(DUP_WINDOW + 1 + 5); // still inside the window? no: too old.
        let t = feed(&seqs);
        assert_eq!(t.duplicates, 0);
        assert_eq!(t.out_of_order, 1);
        let t = feed(&[1, 2, 3 + 2 * DUP_WINDOW, 3]);
        assert_eq!(t.lost, 2 * DUP_WINDOW - 1);
        assert_eq!(t.duplicates, 0);
    }

    #[test]
    fn jitter_follows_rfc3550() {
        let mut t = UdpRxTracker::default();
        t.on_datagram(1, 0.010);
        assert_eq!(t.jitter, 0.0);
        t.on_datagram(2, 0.026); // D = 16 ms → J = 1 ms
        assert!((t.jitter - 0.001).abs() < 1e-12);
        t.on_datagram(3, 0.026); // D = 0 → J = 15/16 ms
        assert!((t.jitter - 0.001 * 15.0 / 16.0).abs() < 1e-12);
    }

    #[test]
    fn hostile_sequences_do_not_overflow() {
        let t = feed(&[u64::MAX, 1, u64::MAX, 5, u64::MAX - 1]);
        assert_eq!(t.max_seq, u64::MAX);
        assert_eq!(t.duplicates, 1);
        let t = feed(&[0, 0, 3]);
        assert_eq!(t.max_seq, 3);
    }

    #[test]
    fn sixty_four_bit_sequences_work() {
        let base = u64::from(u32::MAX) + 10;
        let t = feed(&[base, base + 1, base + 3]);
        assert_eq!(t.lost, base - 1 + 1);
        assert_eq!(t.max_seq, base + 3);
    }
}
