//! What the generator is asked to do: the sender's [`SendConfig`] and the counter's
//! [`ReceiveConfig`], as `linerate gen` (and `gen --receive`) take them from their flags.

use std::net::Ipv4Addr;
use std::time::Duration;

use linerate_units::{BitRate, PacketRate};

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

impl Rate {
    /// Parses `--rate`: `max`, a frame rate (`100kpps`) or an L2 bit rate (`1G`), above zero.
    ///
    /// # Errors
    /// Anything else, with why.
    pub fn parse(s: &str) -> Result<Rate, String> {
        if s.eq_ignore_ascii_case("max") {
            return Ok(Rate::Max);
        }
        if s.to_ascii_lowercase().ends_with("pps")
            && let Ok(p) = s.parse::<PacketRate>()
            && p.pps() > 0.0
        {
            return Ok(Rate::Pps(p.pps()));
        }
        match BitRate::parse_with_unit(s) {
            Ok(b) if b.as_f64() > 0.0 => Ok(Rate::Bits(b.as_f64())),
            Ok(_) => Err(format!("'{s}': a rate must be greater than zero")),
            Err(e) => Err(format!(
                "'{s}' is not max, a frame rate (100kpps) or a bit rate: {e}"
            )),
        }
    }
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

/// Parses `--cpu`: CPU numbers and ranges (`0-2,5`), in the order given (thread `i` runs on
/// the `i`-th, round-robin); whether this process may use them is the sender's to check.
///
/// # Errors
/// A part that is not a number or a range, a backwards range, or no CPU at all.
pub fn parse_cpus(s: &str) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        let num = |v: &str| {
            v.trim()
                .parse::<usize>()
                .map_err(|_| format!("--cpu '{s}': '{v}' is not a CPU number"))
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("--cpu '{s}': range '{part}' runs backwards"));
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(num(part)?),
        }
    }
    if cpus.is_empty() {
        return Err(format!("--cpu '{s}': no CPU given"));
    }
    Ok(cpus)
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
    fn rates_parse() {
        assert_eq!(Rate::parse("max"), Ok(Rate::Max));
        assert_eq!(Rate::parse("100kpps"), Ok(Rate::Pps(100_000.0)));
        assert_eq!(Rate::parse("1G"), Ok(Rate::Bits(1e9)));
        assert!(Rate::parse("fast").is_err());
        assert!(Rate::parse("0").is_err());
    }

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(parse_cpus("0"), Ok(vec![0]));
        assert_eq!(parse_cpus("1,0"), Ok(vec![1, 0]));
        assert_eq!(parse_cpus("0-2,5"), Ok(vec![0, 1, 2, 5]));
        assert!(parse_cpus("2-1").unwrap_err().contains("backwards"));
        assert!(parse_cpus("x").unwrap_err().contains("'x'"));
        assert!(parse_cpus("").is_err());
    }

    #[test]
    fn macs_parse() {
        assert_eq!(parse_mac("02:00:00:00:00:0a"), Ok([2, 0, 0, 0, 0, 10]));
        assert!(parse_mac("02:00").is_err());
        assert!(parse_mac("02:00:00:00:00:zz").unwrap_err().contains("'zz'"));
    }

    #[test]
    fn a_count_lifts_the_default_duration() {
        let two = Some(Duration::from_secs(2));
        assert_eq!(limit_seconds(two, Some(5)), 2.0);
        assert_eq!(limit_seconds(None, Some(5)), f64::INFINITY);
        assert_eq!(limit_seconds(None, None), 10.0);
    }
}
