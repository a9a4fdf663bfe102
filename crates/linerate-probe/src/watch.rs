//! Live counters for `linerate nic --watch`: samples of interface, per-queue and softnet
//! counters, and rates from their deltas over the measured time between samples. Counters that
//! go backwards are told apart: a 32- or 64-bit wrap is bridged, anything else is a reset
//! (driver reload, interface re-created) and counts from zero.

use std::collections::BTreeMap;
use std::time::Instant;

use linerate_units::{BitRate, ByteSize, PacketRate};

use crate::interface;
use crate::softnet;
use crate::{ProbeRoots, Probed, ethtool};

/// The schema of one `--json-stream` line.
pub const SCHEMA: &str = "linerate.nic-watch/1";

pub use crate::queue::{Direction, QueueCounters};
pub use crate::sample::{InterfaceSample, Sample};

/// Splits a driver statistic name into (direction, queue, counter), for the naming schemes of
/// the common drivers: `rx_queue_0_packets` (virtio_net, ixgbe, igb, ice), `rx0_packets`
/// (mlx5), `rx-0.rx_packets` / `rx-0.packets` (i40e).
pub fn parse_queue_stat(name: &str) -> Option<(Direction, u32, &str)> {
    let (dir, rest) = if let Some(r) = name.strip_prefix("rx") {
        (Direction::Rx, r)
    } else if let Some(r) = name.strip_prefix("tx") {
        (Direction::Tx, r)
    } else {
        return None;
    };
    let (queue, counter) = if let Some(r) = rest.strip_prefix("_queue_") {
        r.split_once('_')?
    } else if let Some(r) = rest.strip_prefix('-') {
        let (q, c) = r.split_once('.')?;
        let c = c
            .strip_prefix("rx_")
            .or_else(|| c.strip_prefix("tx_"))
            .unwrap_or(c);
        (q, c)
    } else {
        rest.split_once('_')?
    };
    let queue: u32 = queue.parse().ok()?;
    let counter = match counter {
        "packets" => "packets",
        "bytes" => "bytes",
        "drops" | "dropped" => "drops",
        _ => return None,
    };
    Some((dir, queue, counter))
}

/// Per-queue counters from a driver statistics map.
pub fn queue_counters(stats: &BTreeMap<String, u64>) -> BTreeMap<(Direction, u32), QueueCounters> {
    let mut out: BTreeMap<(Direction, u32), QueueCounters> = BTreeMap::new();
    for (name, value) in stats {
        if let Some((dir, q, counter)) = parse_queue_stat(name) {
            let e = out.entry((dir, q)).or_default();
            match counter {
                "packets" => e.packets = Some(*value),
                "bytes" => e.bytes = Some(*value),
                _ => e.drops = Some(*value),
            }
        }
    }
    out.retain(|_, c| c.packets.is_some());
    out
}

/// Reads samples of a set of interfaces (or all of them).
#[derive(Debug, Clone)]
pub struct Sampler {
    roots: ProbeRoots,
    names: Vec<String>,
}

impl Sampler {
    /// Watches `names`, or every interface (re-listed at each sample) when empty.
    pub fn new(roots: ProbeRoots, names: Vec<String>) -> Self {
        Sampler { roots, names }
    }

    /// Reads one sample. On FreeBSD the live host is read through `getifaddrs` and each NIC's
    /// `dev.<driver>.<unit>` sysctls (`freebsd::live::sample`).
    pub fn sample(&self) -> Sample {
        #[cfg(target_os = "freebsd")]
        if self.roots.is_live() {
            return crate::freebsd::live::sample(&self.names);
        }
        let names = if self.names.is_empty() {
            interface::list(&self.roots).unwrap_or_default()
        } else {
            self.names.clone()
        };
        let interfaces = names
            .into_iter()
            .map(|name| {
                let s = self.sample_interface(&name);
                (name, s)
            })
            .collect();
        Sample {
            softnet: softnet::read(&self.roots),
            at: Instant::now(),
            interfaces,
        }
    }

    fn sample_interface(&self, name: &str) -> Result<InterfaceSample, String> {
        let at = Instant::now();
        let counters = match interface::read_counters(&self.roots, name) {
            Probed::Value(c) => c,
            Probed::Unknown(r) => return Err(r),
        };
        let ifindex =
            crate::roots::read_number(&self.roots.sys(&format!("class/net/{name}/ifindex")))
                .into_value();
        let queues = ethtool::read_stats(&self.roots, name)
            .value()
            .map(queue_counters)
            .unwrap_or_default();
        // Drivers that moved queue counters out of `ethtool -S` report them over netlink.
        #[cfg(target_os = "linux")]
        let queues = if queues.is_empty() && self.roots.is_live() {
            match ifindex.map(crate::qstats::read) {
                Some(Ok(q)) => q,
                _ => queues,
            }
        } else {
            queues
        };
        Ok(InterfaceSample {
            at,
            ifindex,
            counters,
            queues,
        })
    }
}

/// How a counter moved between two samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delta {
    /// It grew by this much.
    Normal(u64),
    /// It wrapped past 2³² (a 32-bit counter) and grew by this much.
    Wrapped32(u64),
    /// It wrapped past 2⁶⁴ and grew by this much.
    Wrapped64(u64),
    /// It went back to near zero (reset); this much since the reset.
    Reset(u64),
}

impl Delta {
    /// The increase the delta stands for.
    pub fn value(self) -> u64 {
        match self {
            Delta::Normal(v) | Delta::Wrapped32(v) | Delta::Wrapped64(v) | Delta::Reset(v) => v,
        }
    }
}

/// The increase from `old` to `new`, bridging counter wrap.
pub fn counter_delta(old: u64, new: u64) -> Delta {
    if new >= old {
        return Delta::Normal(new - old);
    }
    const HALF32: u64 = 1 << 31;
    if old <= u64::from(u32::MAX) {
        let wrapped = (u64::from(u32::MAX) - old) + new + 1;
        if wrapped < HALF32 {
            return Delta::Wrapped32(wrapped);
        }
    } else {
        let wrapped = (u64::MAX - old).wrapping_add(new).wrapping_add(1);
        if wrapped < (1 << 63) {
            return Delta::Wrapped64(wrapped);
        }
    }
    Delta::Reset(new)
}

/// What happened to an interface between two samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Read both times: rates are valid.
    Ok,
    /// Not there (any more): no rates.
    Gone,
    /// First seen now: rates from the next interval on.
    New,
    /// Re-created (new ifindex) or counters reset: rates from the next interval on.
    Reset,
}

/// One queue's rates over an interval.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct QueueRates {
    /// Receive or transmit.
    pub direction: Direction,
    /// Queue number.
    pub queue: u32,
    /// Packets in the interval.
    pub packets: u64,
    /// Packets per second.
    pub pps: PacketRate,
    /// Bit rate, when the driver counts bytes per queue.
    pub rate: Option<BitRate>,
    /// Drops in the interval, when counted per queue.
    pub drops: Option<u64>,
}

/// One interface's rates over an interval.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InterfaceRates {
    /// Interface name.
    pub name: String,
    /// What happened to it.
    pub status: Status,
    /// Why, when it is gone or reset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Measured time between its two readings, in seconds.
    pub elapsed_seconds: f64,
    /// Packets received / sent in the interval.
    pub rx_packets: u64,
    /// Packets sent in the interval.
    pub tx_packets: u64,
    /// Received packets per second.
    pub rx_pps: PacketRate,
    /// Sent packets per second.
    pub tx_pps: PacketRate,
    /// Receive bit rate.
    pub rx_rate: BitRate,
    /// Transmit bit rate.
    pub tx_rate: BitRate,
    /// Drops and errors in the interval: rx_dropped, tx_dropped, rx_errors, tx_errors,
    /// rx_missed_errors, rx_fifo_errors.
    pub drops_errors: BTreeMap<String, u64>,
    /// Per-queue rates (empty when the driver has no per-queue counters).
    pub queues: Vec<QueueRates>,
    /// Counters that wrapped in this interval (bridged).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wrapped: Vec<String>,
}

/// One CPU's softnet activity over an interval.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SoftnetRates {
    /// CPU.
    pub cpu: u32,
    /// Packets processed per second.
    pub pps: PacketRate,
    /// Drops in the interval (backlog full).
    pub dropped: u64,
    /// Squeezes in the interval (budget ran out).
    pub time_squeeze: u64,
}

/// Everything over one interval.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Interval {
    /// Interfaces.
    pub interfaces: Vec<InterfaceRates>,
    /// Softnet per CPU (empty when unreadable).
    pub softnet: Vec<SoftnetRates>,
    /// Why softnet is empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub softnet_unknown: Option<String>,
}

fn per_second(n: u64, secs: f64) -> f64 {
    if secs > 0.0 { n as f64 / secs } else { 0.0 }
}

fn empty_rates(name: &str, status: Status, reason: Option<String>) -> InterfaceRates {
    InterfaceRates {
        name: name.to_owned(),
        status,
        reason,
        elapsed_seconds: 0.0,
        rx_packets: 0,
        tx_packets: 0,
        rx_pps: PacketRate::from_pps(0.0),
        tx_pps: PacketRate::from_pps(0.0),
        rx_rate: BitRate::ZERO,
        tx_rate: BitRate::ZERO,
        drops_errors: BTreeMap::new(),
        queues: Vec::new(),
        wrapped: Vec::new(),
    }
}

fn interface_rates(name: &str, old: &InterfaceSample, new: &InterfaceSample) -> InterfaceRates {
    if old.ifindex != new.ifindex {
        return empty_rates(
            name,
            Status::Reset,
            Some(format!(
                "re-created (ifindex {:?} → {:?})",
                old.ifindex, new.ifindex
            )),
        );
    }
    let secs = new.at.duration_since(old.at).as_secs_f64();
    let mut wrapped = Vec::new();
    let mut reset = false;
    let mut deltas = BTreeMap::new();
    for ((field, a), (_, b)) in old.counters.fields().into_iter().zip(new.counters.fields()) {
        let d = counter_delta(a, b);
        match d {
            Delta::Wrapped32(_) | Delta::Wrapped64(_) => wrapped.push(field.to_owned()),
            Delta::Reset(_) => reset = true,
            Delta::Normal(_) => {}
        }
        deltas.insert(field, d.value());
    }
    if reset {
        return empty_rates(
            name,
            Status::Reset,
            Some("counters went back to zero".to_owned()),
        );
    }
    let get = |f: &str| deltas.get(f).copied().unwrap_or(0);
    let mut queues = Vec::new();
    for (key, q) in &new.queues {
        let Some(prev) = old.queues.get(key) else {
            continue;
        };
        let (Some(p0), Some(p1)) = (prev.packets, q.packets) else {
            continue;
        };
        let packets = counter_delta(p0, p1).value();
        let bytes = prev
            .bytes
            .zip(q.bytes)
            .map(|(a, b)| counter_delta(a, b).value());
        queues.push(QueueRates {
            direction: key.0,
            queue: key.1,
            packets,
            pps: PacketRate::from_pps(per_second(packets, secs)),
            rate: bytes.map(|b| ByteSize::from_bytes(b).per_seconds(secs)),
            drops: prev
                .drops
                .zip(q.drops)
                .map(|(a, b)| counter_delta(a, b).value()),
        });
    }
    InterfaceRates {
        name: name.to_owned(),
        status: Status::Ok,
        reason: None,
        elapsed_seconds: secs,
        rx_packets: get("rx_packets"),
        tx_packets: get("tx_packets"),
        rx_pps: PacketRate::from_pps(per_second(get("rx_packets"), secs)),
        tx_pps: PacketRate::from_pps(per_second(get("tx_packets"), secs)),
        rx_rate: ByteSize::from_bytes(get("rx_bytes")).per_seconds(secs),
        tx_rate: ByteSize::from_bytes(get("tx_bytes")).per_seconds(secs),
        drops_errors: [
            "rx_dropped",
            "tx_dropped",
            "rx_errors",
            "tx_errors",
            "rx_missed_errors",
            "rx_fifo_errors",
        ]
        .into_iter()
        .map(|f| (f.to_owned(), get(f)))
        .collect(),
        queues,
        wrapped,
    }
}

/// The rates between two samples.
pub fn rates(old: &Sample, new: &Sample) -> Interval {
    let mut interfaces = Vec::new();
    for (name, cur) in &new.interfaces {
        let rates = match (old.interfaces.get(name), cur) {
            (_, Err(reason)) => empty_rates(name, Status::Gone, Some(reason.clone())),
            (Some(Ok(prev)), Ok(cur)) => interface_rates(name, prev, cur),
            (None | Some(Err(_)), Ok(_)) => empty_rates(name, Status::New, None),
        };
        interfaces.push(rates);
    }
    for name in old.interfaces.keys() {
        if !new.interfaces.contains_key(name) {
            interfaces.push(empty_rates(
                name,
                Status::Gone,
                Some("no longer listed in /sys/class/net".to_owned()),
            ));
        }
    }
    let secs = new.at.duration_since(old.at).as_secs_f64();
    let (softnet, softnet_unknown) = match (old.softnet.value(), new.softnet.value()) {
        (Some(a), Some(b)) => (
            b.iter()
                .filter_map(|cur| {
                    let prev = a.iter().find(|p| p.cpu == cur.cpu)?;
                    Some(SoftnetRates {
                        cpu: cur.cpu,
                        pps: PacketRate::from_pps(per_second(
                            counter_delta(prev.processed, cur.processed).value(),
                            secs,
                        )),
                        dropped: counter_delta(prev.dropped, cur.dropped).value(),
                        time_squeeze: counter_delta(prev.time_squeeze, cur.time_squeeze).value(),
                    })
                })
                .collect(),
            None,
        ),
        _ => (
            Vec::new(),
            new.softnet
                .reason()
                .or(old.softnet.reason())
                .map(str::to_owned),
        ),
    };
    Interval {
        interfaces,
        softnet,
        softnet_unknown,
    }
}

/// How often and how long `nic --watch` samples.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    /// The time between samples.
    pub interval: std::time::Duration,
    /// Intervals at most.
    pub count: Option<u64>,
    /// Time at most (the last interval is cut short to end on time).
    pub duration: Option<std::time::Duration>,
}

/// Samples `sampler` on `schedule` until it ends or `sleep_until` returns `false` (a stop),
/// handing each interval's rates to `each` with its number (from 1) and the seconds since the
/// start. Returns how many intervals were handed and the seconds it ran.
///
/// # Errors
/// The first of `each`'s.
pub fn run<E>(
    sampler: &Sampler,
    schedule: Schedule,
    mut sleep_until: impl FnMut(Instant) -> bool,
    mut each: impl FnMut(u64, f64, &Interval) -> Result<(), E>,
) -> Result<(u64, f64), E> {
    let start = Instant::now();
    let end = schedule.duration.map(|d| start + d);
    let mut prev = sampler.sample();
    let mut n: u64 = 0;
    let mut due = start + schedule.interval;
    loop {
        if schedule.count.is_some_and(|c| n >= c) {
            break;
        }
        let at = end.map_or(due, |e| due.min(e));
        if !sleep_until(at) {
            break;
        }
        let cur = sampler.sample();
        let interval = rates(&prev, &cur);
        n += 1;
        each(n, start.elapsed().as_secs_f64(), &interval)?;
        prev = cur;
        if end.is_some_and(|e| at >= e) {
            break;
        }
        due = next_due(due, Instant::now(), schedule.interval);
    }
    Ok((n, start.elapsed().as_secs_f64()))
}

/// When the sample after the one `due` at should be taken, seen at `now`: one interval later,
/// keeping the cadence; but after a stall (the process woke late) at least half an interval
/// from now, so the next rates are not measured over a few microseconds.
fn next_due(due: Instant, now: Instant, interval: std::time::Duration) -> Instant {
    (due + interval).max(now + interval / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_late_sample_does_not_make_the_next_interval_tiny() {
        let t0 = Instant::now();
        let second = std::time::Duration::from_secs(1);
        // On time (or a little late): the cadence holds.
        assert_eq!(next_due(t0, t0, second), t0 + second);
        let a_little = std::time::Duration::from_millis(200);
        assert_eq!(next_due(t0, t0 + a_little, second), t0 + second);
        // A whole interval late: the next sample is half an interval away, not due at once.
        let late = t0 + second + std::time::Duration::from_millis(10);
        assert_eq!(next_due(t0, late, second), late + second / 2);
    }
    use crate::interface::Counters;

    #[test]
    fn queue_stat_names_of_common_drivers() {
        assert_eq!(
            parse_queue_stat("rx_queue_3_packets"),
            Some((Direction::Rx, 3, "packets"))
        );
        assert_eq!(
            parse_queue_stat("tx_queue_0_bytes"),
            Some((Direction::Tx, 0, "bytes"))
        );
        assert_eq!(
            parse_queue_stat("rx12_packets"),
            Some((Direction::Rx, 12, "packets"))
        );
        assert_eq!(
            parse_queue_stat("rx-1.rx_packets"),
            Some((Direction::Rx, 1, "packets"))
        );
        assert_eq!(
            parse_queue_stat("tx-2.bytes"),
            Some((Direction::Tx, 2, "bytes"))
        );
        assert_eq!(
            parse_queue_stat("rx_queue_0_drops"),
            Some((Direction::Rx, 0, "drops"))
        );
        assert_eq!(parse_queue_stat("rx_queue_0_xdp_packets"), None);
        assert_eq!(parse_queue_stat("rx_packets"), None);
        assert_eq!(parse_queue_stat("rx_csum_complete"), None);
        assert_eq!(parse_queue_stat("peer_ifindex"), None);
    }

    #[test]
    fn counter_wrap_and_reset() {
        assert_eq!(counter_delta(10, 15), Delta::Normal(5));
        assert_eq!(
            counter_delta(u64::from(u32::MAX) - 4, 5),
            Delta::Wrapped32(10)
        );
        assert_eq!(counter_delta(u64::MAX - 1, 3), Delta::Wrapped64(5));
        // A counter that drops from 1000 to 7 did not wrap: it was reset.
        assert_eq!(counter_delta(1000, 7), Delta::Reset(7));
        assert_eq!(counter_delta(1 << 40, 7), Delta::Reset(7));
    }

    fn sample(at: Instant, ifindex: u32, rx: u64) -> InterfaceSample {
        InterfaceSample {
            at,
            ifindex: Some(ifindex),
            counters: Counters {
                rx_packets: rx,
                rx_bytes: rx,
                ..Counters::default()
            },
            queues: BTreeMap::from([(
                (Direction::Rx, 0),
                QueueCounters {
                    packets: Some(rx),
                    bytes: Some(rx),
                    drops: None,
                },
            )]),
        }
    }

    #[test]
    fn rates_over_measured_time() {
        let t0 = Instant::now();
        let t1 = t0 + std::time::Duration::from_millis(500);
        let a = sample(t0, 1, u64::from(u32::MAX) - 99);
        let b = sample(t1, 1, 400);
        let r = interface_rates("x", &a, &b);
        assert_eq!(r.status, Status::Ok);
        assert_eq!(r.rx_packets, 500);
        assert!((r.rx_pps.pps() - 1000.0).abs() < 1e-6);
        assert_eq!(
            r.wrapped,
            vec!["rx_packets".to_owned(), "rx_bytes".to_owned()]
        );
        assert_eq!(r.rx_rate.bps(), 8000);
        assert_eq!(r.queues[0].packets, 500);
        let c = sample(t1, 2, 400);
        assert_eq!(interface_rates("x", &a, &c).status, Status::Reset);
    }

    #[test]
    fn vanished_and_new_interfaces() {
        let t0 = Instant::now();
        let old = Sample {
            at: t0,
            interfaces: BTreeMap::from([
                ("a".to_owned(), Ok(sample(t0, 1, 0))),
                ("b".to_owned(), Ok(sample(t0, 2, 0))),
            ]),
            softnet: Probed::unknown("test"),
        };
        let new = Sample {
            at: t0,
            interfaces: BTreeMap::from([
                ("a".to_owned(), Err("cannot read".to_owned())),
                ("c".to_owned(), Ok(sample(t0, 3, 0))),
            ]),
            softnet: Probed::unknown("test"),
        };
        let r = rates(&old, &new);
        let status: Vec<_> = r.interfaces.iter().map(|i| (&*i.name, i.status)).collect();
        assert_eq!(
            status,
            vec![("a", Status::Gone), ("c", Status::New), ("b", Status::Gone)]
        );
        assert_eq!(r.softnet_unknown.as_deref(), Some("test"));
    }
}
