//! Rate pacing for `-b`: a sender may be ahead of `rate × elapsed` by at most one write.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Paces one sender.
#[derive(Debug)]
pub struct Pacer {
    bytes_per_sec: f64,
    start: Instant,
    timer: Duration,
}

impl Pacer {
    /// A pacer for `rate_bps` bits/s, sleeping at most `timer` at a time; `None` for unlimited.
    pub fn new(rate_bps: u64, timer: Duration) -> Option<Pacer> {
        (rate_bps > 0).then(|| Pacer {
            bytes_per_sec: rate_bps as f64 / 8.0,
            start: Instant::now(),
            timer: timer.clamp(Duration::from_micros(50), Duration::from_millis(100)),
        })
    }

    /// How long to wait before sending more, having sent `sent` bytes so far.
    pub fn delay(&self, sent: u64, now: Instant) -> Duration {
        let allowed = self.bytes_per_sec * now.duration_since(self.start).as_secs_f64();
        let ahead = sent as f64 - allowed;
        if ahead <= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(ahead / self.bytes_per_sec)
        }
    }

    /// Sleeps until `sent` bytes are within the rate, or until `stop` is set.
    pub fn wait(&self, sent: u64, stop: &AtomicBool) {
        loop {
            let d = self.delay(sent, Instant::now());
            if d.is_zero() || stop.load(Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(d.min(self.timer));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_is_the_time_the_rate_needs() {
        let p = Pacer::new(8_000_000, Duration::from_millis(1)).unwrap();
        // 1 MB/s: 500 kB ahead at t=0 is 0.5 s of waiting.
        let d = p.delay(500_000, p.start);
        assert!((d.as_secs_f64() - 0.5).abs() < 1e-9, "{d:?}");
        assert_eq!(
            p.delay(500_000, p.start + Duration::from_secs(1)),
            Duration::ZERO
        );
        assert!(Pacer::new(0, Duration::from_millis(1)).is_none());
    }

    #[test]
    fn paced_sends_hold_the_rate() {
        let p = Pacer::new(80_000_000, Duration::from_millis(1)).unwrap();
        let stop = AtomicBool::new(false);
        let mut sent = 0u64;
        while sent < 2_000_000 {
            p.wait(sent, &stop);
            sent += 10_000;
        }
        // 2 MB at 10 MB/s is 0.2 s (less the last write).
        let secs = p.start.elapsed().as_secs_f64();
        assert!((0.18..0.4).contains(&secs), "{secs}");
    }
}
