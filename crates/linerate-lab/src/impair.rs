//! What an emulated link does to the frames of one direction.

use linerate_units::{BitRate, Duration, Percent};

/// The impairment of one direction of a link. Everything defaults to "no effect".
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Impairment {
    /// Serialisation rate (frame bytes incl. the Ethernet header, as netem and tbf count);
    /// `None` is unlimited.
    pub rate: Option<BitRate>,
    /// One-way delay added to every frame.
    pub delay: Duration,
    /// Uniform jitter: each frame's delay is `delay ± jitter` (never below zero).
    pub jitter: Duration,
    /// Bernoulli loss probability.
    pub loss: Percent,
    /// Tail-drop limit: frames held in this direction (queued and in flight), as netem's limit.
    pub limit: u32,
    /// Whether jitter may reorder frames (default: no, a frame never overtakes another).
    pub reorder: bool,
}

impl Impairment {
    /// The default queue limit for a direction: twice the bandwidth-delay product in
    /// full-size frames, at least 1000 (netem's default); 10000 when the rate is unlimited.
    pub fn default_limit(
        rate: Option<BitRate>,
        delay: Duration,
        jitter: Duration,
        mtu: u32,
    ) -> u32 {
        match rate {
            None => 10_000,
            Some(rate) => {
                let frame_bits = f64::from(mtu + 14) * 8.0;
                let rtt_share = delay.as_secs_f64() + jitter.as_secs_f64();
                let bdp_frames = rate.as_f64() * rtt_share / frame_bits;
                let want = (2.0 * bdp_frames).ceil();
                if want > f64::from(u32::MAX) {
                    u32::MAX
                } else {
                    (want as u32).max(1000)
                }
            }
        }
    }

    /// A short human description, e.g. `1 Gbit/s, 20 ms ± 1 ms, loss 0.1%, limit 10000`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        parts.push(match self.rate {
            Some(r) => r.to_string(),
            None => "unlimited".to_owned(),
        });
        if self.jitter > Duration::ZERO {
            parts.push(format!(
                "{} ± {}{}",
                self.delay,
                self.jitter,
                if self.reorder { " (may reorder)" } else { "" }
            ));
        } else {
            parts.push(format!("delay {}", self.delay));
        }
        if self.loss.fraction() > 0.0 {
            parts.push(format!("loss {}", self.loss));
        }
        parts.push(format!("limit {}", self.limit));
        parts.join(", ")
    }
}
