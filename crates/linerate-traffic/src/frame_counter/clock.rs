//! Whether one-way latency between two hosts means anything: the receiver subtracts the send
//! stamp (the sender's clock) from its arrival time (its own clock), so the figure is off by
//! the clocks' offset. The judgment, one rule:
//!
//! - the two ends on one kernel (the same boot id: network namespaces of one host) read one
//!   clock: the latency is exact;
//! - otherwise both kernels must report their clocks disciplined by a time daemon
//!   (`adjtimex`: no `STA_UNSYNC`, not `TIME_ERROR`), since a free-running clock drifts away
//!   from any offset measured once; then the offset is measured over the control channel as
//!   NTP does (four timestamps per exchange, several exchanges, the one with the least round
//!   trip kept), and the latency is off by at most |offset| + RTT/2;
//! - a trial's latency figures are kept only when that bound is at most [`MAX_SHARE`] of the
//!   smallest latency the trial measured; the others are left out, and said so.

use super::Exchange;
use crate::protocol::frames::KernelClock;

/// The largest share of a latency its clocks' uncertainty may be for the figure to be kept.
pub const MAX_SHARE: f64 = 0.1;

/// What was learnt about the two clocks.
#[derive(Debug, Clone, PartialEq)]
pub struct ClockCheck {
    /// Exchanges made.
    pub exchanges: u32,
    /// Receiver's clock minus sender's, microseconds, from the exchange with the least RTT.
    pub offset_us: f64,
    /// That exchange's round trip without the server's own time, microseconds.
    pub rtt_us: f64,
    /// Both ends run on one kernel (the same boot id).
    pub one_kernel: bool,
    /// This kernel's clock discipline.
    pub local: Option<KernelClock>,
    /// The receiver kernel's.
    pub remote: Option<KernelClock>,
}

impl ClockCheck {
    /// The check from the exchanges made (`None` when there were none) and what each side
    /// said of its kernel.
    pub fn of(
        exchanges: &[Exchange],
        one_kernel: bool,
        local: Option<KernelClock>,
        remote: Option<KernelClock>,
    ) -> Option<ClockCheck> {
        let best = exchanges
            .iter()
            .min_by(|a, b| a.rtt_ns().total_cmp(&b.rtt_ns()))?;
        Some(ClockCheck {
            exchanges: u32::try_from(exchanges.len()).unwrap_or(u32::MAX),
            offset_us: best.offset_ns() / 1e3,
            rtt_us: best.rtt_ns().max(0.0) / 1e3,
            one_kernel,
            local,
            remote,
        })
    }

    /// |offset| + RTT/2, microseconds: how far apart the clocks may be.
    pub fn bound_us(&self) -> f64 {
        self.offset_us.abs() + self.rtt_us / 2.0
    }

    /// How far a one-way latency may be off, microseconds, or why the clocks are not shown
    /// synchronised.
    pub fn uncertainty_us(&self) -> Result<f64, String> {
        if self.one_kernel {
            return Ok(0.0);
        }
        let said = |k: Option<KernelClock>, whose: &str| match k {
            None => Err(format!(
                "{whose} clock's discipline could not be read (adjtimex)"
            )),
            Some(k) if !k.synchronised => Err(format!(
                "{whose} kernel reports its clock unsynchronised (adjtimex): no time daemon \
                 disciplines it, so it drifts from any offset measured once"
            )),
            Some(_) => Ok(()),
        };
        said(self.local, "this host's")?;
        said(self.remote, "the receiver's")?;
        Ok(self.bound_us())
    }

    /// Whether a trial whose smallest one-way latency was `min_us` keeps its latency figures.
    pub fn keeps(&self, min_us: f64) -> bool {
        self.uncertainty_us()
            .is_ok_and(|u| u == 0.0 || u <= MAX_SHARE * min_us)
    }

    /// The judgment in a sentence, for the record.
    pub fn describe(&self) -> String {
        let measured = format!(
            "measured over the control channel: offset {:+.1} µs, RTT {:.1} µs (best of {} \
             exchanges)",
            self.offset_us, self.rtt_us, self.exchanges
        );
        let kernel = |k: Option<KernelClock>| {
            k.map_or("unknown".to_owned(), |k| {
                if k.synchronised {
                    format!("synchronised, estimated error {} µs", k.est_error_us)
                } else {
                    "unsynchronised".to_owned()
                }
            })
        };
        match self.uncertainty_us() {
            Ok(_) if self.one_kernel => format!(
                "sender and receiver read one kernel clock (the same boot id): one-way latency \
                 exact; {measured}"
            ),
            Ok(u) => format!(
                "both kernels report their clocks synchronised (here: {}; receiver: {}); \
                 {measured}: one-way latency within ±{u:.1} µs, kept where that is at most {:.0} \
                 % of it",
                kernel(self.local),
                kernel(self.remote),
                MAX_SHARE * 100.0
            ),
            Err(why) => format!(
                "clocks not shown synchronised ({why}); {measured}: loss and rate only, no \
                 one-way latency"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(t1: u64, t2: u64, t3: u64, t4: u64) -> Exchange {
        Exchange { t1, t2, t3, t4 }
    }

    fn synced(yes: bool) -> Option<KernelClock> {
        Some(KernelClock {
            synchronised: yes,
            est_error_us: 5,
            max_error_us: 100,
        })
    }

    #[test]
    fn the_exchange_with_the_least_round_trip_gives_the_offset() {
        // The receiver's clock runs 1 000 µs ahead; the paths take 50 µs each way, one
        // exchange was delayed 400 µs on its way back.
        let e = [
            ex(0, 1_050_000, 1_060_000, 510_000),
            ex(2_000_000, 3_050_000, 3_060_000, 2_110_000),
        ];
        let c = ClockCheck::of(&e, false, synced(true), synced(true)).expect("a check");
        assert!((c.offset_us - 1000.0).abs() < 1e-9, "{c:?}");
        assert!((c.rtt_us - 100.0).abs() < 1e-9, "{c:?}");
        assert!((c.bound_us() - 1050.0).abs() < 1e-9);
        assert_eq!(c.exchanges, 2);
        // A delayed return alone would have put the offset 200 µs off.
        assert!((e[0].offset_ns() / 1e3 - 800.0).abs() < 1e-9);
        assert_eq!(ClockCheck::of(&[], false, None, None), None);
    }

    #[test]
    fn one_kernel_is_exact_and_otherwise_both_must_be_disciplined() {
        let e = [ex(0, 60_000, 70_000, 110_000)];
        let one = ClockCheck::of(&e, true, synced(false), None).expect("check");
        assert_eq!(one.uncertainty_us(), Ok(0.0));
        assert!(one.keeps(0.5));
        assert!(
            one.describe().contains("one kernel clock"),
            "{}",
            one.describe()
        );

        let free = ClockCheck::of(&e, false, synced(true), synced(false)).expect("check");
        let why = free.uncertainty_us().expect_err("unsynchronised");
        assert!(
            why.contains("receiver's kernel reports its clock unsynchronised"),
            "{why}"
        );
        assert!(!free.keeps(1e9));
        assert!(
            free.describe().contains("loss and rate only"),
            "{}",
            free.describe()
        );
        let unknown = ClockCheck::of(&e, false, None, synced(true)).expect("check");
        assert!(unknown.uncertainty_us().is_err());

        // Offset +10 µs, RTT 100 µs: within ±60 µs, kept for latencies of 600 µs and more.
        let both = ClockCheck::of(&e, false, synced(true), synced(true)).expect("check");
        assert!((both.uncertainty_us().expect("synced") - 60.0).abs() < 1e-9);
        assert!(both.keeps(600.0) && !both.keeps(599.0));
        assert!(
            both.describe().contains("within ±60.0 µs"),
            "{}",
            both.describe()
        );
    }
}
