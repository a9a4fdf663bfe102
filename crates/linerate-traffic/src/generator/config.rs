//! What the generator is asked to do: the sender's [`SendConfig`] and the counter's
//! [`ReceiveConfig`], as `linerate gen` (and `gen --receive`) take them from their flags.

use std::net::Ipv4Addr;
use std::time::Duration;

/// A send rate over all threads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rate {
    /// As fast as the rings drain.
    Max,
    /// Frames per second.
    Pps(f64),
    /// Bits per second at L2 (frame bytes with FCS).
    Bits(f64),
}

/// How frames are handed to the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// AF_XDP where the interface takes an AF_XDP socket per thread, else packet.
    Auto,
    /// An AF_PACKET `TPACKET_V2` transmit ring per thread, qdisc bypassed.
    Packet,
    /// An AF_XDP socket per thread, each on its own queue of the interface.
    Xdp,
}

/// Where the sending threads run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// Not pinned: the scheduler places them.
    Unpinned,
    /// Pinned one each, in turn, to the CPUs this process may use.
    Allowed,
    /// Pinned one each, in turn, to these CPUs (each must be one this process may use).
    Cpus(Vec<usize>),
}

/// What to send (`linerate gen`).
#[derive(Debug, Clone, PartialEq)]
pub struct SendConfig {
    /// The interface to send on.
    pub dev: String,
    /// Frame sizes with FCS in the order of one cycle (an IMIX interleaved; see
    /// [`crate::frame::interleave`]); never empty.
    pub frames: Vec<usize>,
    /// Rate over all threads.
    pub rate: Rate,
    /// Sending threads, each with its own ring or socket (at least 1).
    pub threads: u16,
    /// The engine.
    pub engine: Engine,
    /// Where the threads run.
    pub placement: Placement,
    /// Flows: the UDP source port steps through this many values (at least 1).
    pub flows: u16,
    /// Destination MAC; `None`: the neighbour entry of `dst_ip` on `dev`.
    pub dst_mac: Option<[u8; 6]>,
    /// Source IPv4 address; `None`: the first IPv4 address of `dev` (refused, saying so,
    /// when it has none).
    pub src_ip: Option<Ipv4Addr>,
    /// Destination IPv4 address.
    pub dst_ip: Ipv4Addr,
    /// UDP destination port.
    pub port: u16,
    /// How long to send; `None`: 10 s, or until `count` when it is given.
    pub duration: Option<Duration>,
    /// Frames to send over all threads, then stop.
    pub count: Option<u64>,
}

/// What to count (`linerate gen --receive`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiveConfig {
    /// The interface to count on.
    pub dev: String,
    /// How long to count; `None`: 10 s, or until `count` when it is given.
    pub duration: Option<Duration>,
    /// Signed frames to count, then stop.
    pub count: Option<u64>,
}

/// Parses `aa:bb:cc:dd:ee:ff`.
pub fn parse_mac(s: &str) -> Result<[u8; 6], String> {
    let parts: Vec<&str> = s.split(':').collect();
    let mut mac = [0u8; 6];
    if parts.len() != 6 {
        return Err(format!(
            "'{s}' is not a MAC address (expected aa:bb:cc:dd:ee:ff)"
        ));
    }
    for (m, p) in mac.iter_mut().zip(parts) {
        *m = u8::from_str_radix(p, 16)
            .map_err(|_| format!("'{s}' is not a MAC address (bad byte '{p}')"))?;
    }
    Ok(mac)
}

/// Parses `--frame`'s text (`64`, `64,1518`, `imix`, `64B`): frame sizes with FCS in the order
/// of one cycle, an IMIX's weights interleaved ([`crate::frame::interleave`]). An error names
/// the part that is not a size, or the size out of range.
pub fn frame_order(text: &str) -> Result<Vec<usize>, String> {
    use crate::frame::{MAX_FRAME, MIN_FRAME, interleave};
    let mut sizes: Vec<(usize, u32)> = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.eq_ignore_ascii_case("imix") {
            for c in linerate_calc::ethernet::simple_imix() {
                let bytes = usize::try_from(c.frame.bytes()).unwrap_or(usize::MAX);
                sizes.push((bytes, c.weight));
            }
            continue;
        }
        let n: usize = part
            .trim_end_matches(['B', 'b'])
            .parse()
            .map_err(|_| format!("--frame '{part}': not a frame size in bytes or imix"))?;
        if !(MIN_FRAME..=MAX_FRAME).contains(&n) {
            return Err(format!(
                "--frame {n}: out of range, expected {MIN_FRAME} … {MAX_FRAME} bytes (FCS \
                 included)"
            ));
        }
        sizes.push((n, 1));
    }
    let weights: Vec<u32> = sizes.iter().map(|s| s.1).collect();
    Ok(interleave(&weights)
        .into_iter()
        .map(|i| sizes[i].0)
        .collect())
}

/// Seconds a run lasts at most: the duration, else unbounded when a count ends it, else 10 s.
pub fn limit_seconds(duration: Option<Duration>, count: Option<u64>) -> f64 {
    match (duration, count) {
        (Some(d), _) => d.as_secs_f64(),
        (None, Some(_)) => f64::INFINITY,
        (None, None) => 10.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macs_parse() {
        assert_eq!(parse_mac("02:00:00:00:00:0a"), Ok([2, 0, 0, 0, 0, 10]));
        assert!(parse_mac("02:00").is_err());
        assert!(parse_mac("02:00:00:00:00:zz").unwrap_err().contains("'zz'"));
    }

    #[test]
    fn frames_parse_and_interleave() {
        assert_eq!(frame_order("64"), Ok(vec![64]));
        assert_eq!(frame_order("64,1518"), Ok(vec![64, 1518]));
        let imix = frame_order("imix").expect("imix");
        assert_eq!(imix.len(), 12);
        assert_eq!(imix.iter().filter(|&&s| s == 64).count(), 7);
        assert_eq!(imix.iter().filter(|&&s| s == 594).count(), 4);
        assert_eq!(imix.iter().filter(|&&s| s == 1518).count(), 1);
        assert!(frame_order("63").unwrap_err().contains("out of range"));
        assert!(frame_order("big").unwrap_err().contains("'big'"));
    }

    #[test]
    fn a_count_lifts_the_default_duration() {
        let two = Some(Duration::from_secs(2));
        assert_eq!(limit_seconds(two, Some(5)), 2.0);
        assert_eq!(limit_seconds(None, Some(5)), f64::INFINITY);
        assert_eq!(limit_seconds(None, None), 10.0);
    }
}
