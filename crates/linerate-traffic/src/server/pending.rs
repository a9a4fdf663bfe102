//! Connections still in their handshake (before a cookie), and the refusals they cause.
//!
//! The table is bounded twice, overall and per source address; when a bound is reached the
//! **oldest** pending connection (of that address, or overall) is evicted, so a client that
//! floods the port with idle connections only ever pushes out its own stale ones and never
//! keeps a newcomer out. Refusals are logged once per source address per interval, with the
//! count of those not logged.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// One pending connection: its source, and a handle to close it if it is evicted.
#[derive(Debug)]
struct Entry {
    peer: SocketAddr,
    handle: Option<TcpStream>,
}

/// The pending connections, by accept order (`seq`).
#[derive(Debug)]
pub struct Pending {
    max: usize,
    max_per_ip: usize,
    by_seq: BTreeMap<u64, Entry>,
    per_ip: HashMap<IpAddr, usize>,
}

/// A connection pushed out of the table to make room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evicted {
    /// Its accept order.
    pub seq: u64,
    /// Its source.
    pub peer: SocketAddr,
    /// Whether it made room for a connection from the same address (the per-address bound)
    /// rather than the overall bound.
    pub same_source: bool,
}

impl Pending {
    /// An empty table holding at most `max` connections, `max_per_ip` from one address.
    pub fn new(max: usize, max_per_ip: usize) -> Pending {
        Pending {
            max: max.max(1),
            max_per_ip: max_per_ip.max(1),
            by_seq: BTreeMap::new(),
            per_ip: HashMap::new(),
        }
    }

    /// Connections pending now.
    pub fn len(&self) -> usize {
        self.by_seq.len()
    }

    /// Adds connection `seq` from `peer` (`handle` closes it on eviction), evicting the oldest
    /// pending connections as the bounds require. The new connection is always admitted.
    pub fn admit(&mut self, seq: u64, peer: SocketAddr, handle: Option<TcpStream>) -> Vec<Evicted> {
        let ip = peer.ip();
        let mut out = Vec::new();
        while self.per_ip.get(&ip).copied().unwrap_or(0) >= self.max_per_ip {
            let oldest = self
                .by_seq
                .iter()
                .find(|(_, e)| e.peer.ip() == ip)
                .map(|(s, _)| *s);
            match oldest.and_then(|s| self.evict(s).map(|p| (s, p))) {
                Some((s, old)) => out.push(Evicted {
                    seq: s,
                    peer: old,
                    same_source: true,
                }),
                None => break,
            }
        }
        while self.by_seq.len() >= self.max {
            let Some(s) = self.by_seq.keys().next().copied() else {
                break;
            };
            if let Some(old) = self.evict(s) {
                out.push(Evicted {
                    seq: s,
                    peer: old,
                    same_source: false,
                });
            }
        }
        self.by_seq.insert(seq, Entry { peer, handle });
        *self.per_ip.entry(ip).or_insert(0) += 1;
        out
    }

    fn evict(&mut self, seq: u64) -> Option<SocketAddr> {
        let e = self.remove_entry(seq)?;
        if let Some(h) = e.handle {
            // Wakes the handshake's blocked read, which then finds itself evicted.
            let _ = h.shutdown(Shutdown::Both);
        }
        Some(e.peer)
    }

    fn remove_entry(&mut self, seq: u64) -> Option<Entry> {
        let e = self.by_seq.remove(&seq)?;
        let ip = e.peer.ip();
        if let Some(n) = self.per_ip.get_mut(&ip) {
            *n -= 1;
            if *n == 0 {
                self.per_ip.remove(&ip);
            }
        }
        Some(e)
    }

    /// Takes connection `seq` out of the table at the end of its handshake; false if it was
    /// evicted meanwhile (its socket is shut down: the caller drops it).
    pub fn finish(&mut self, seq: u64) -> bool {
        self.remove_entry(seq).is_some()
    }
}

/// Refusals per source address and kind: the first of each interval is logged, the rest
/// counted.
#[derive(Debug)]
pub struct RefusalLog {
    interval: Duration,
    sources: HashMap<(IpAddr, &'static str), (Instant, u64)>,
}

/// Sources remembered at most; older ones are forgotten first when the map is full.
const MAX_SOURCES: usize = 4096;

impl RefusalLog {
    /// A log that speaks about each source at most once per `interval`.
    pub fn new(interval: Duration) -> RefusalLog {
        RefusalLog {
            interval,
            sources: HashMap::new(),
        }
    }

    /// Records a refusal of kind `kind` from `ip` at `now`: `Some(n)` when it should be
    /// logged, `n` being the refusals of that source and kind not logged since the last one.
    pub fn note(&mut self, ip: IpAddr, kind: &'static str, now: Instant) -> Option<u64> {
        if let Some((last, quiet)) = self.sources.get_mut(&(ip, kind)) {
            if now.duration_since(*last) < self.interval {
                *quiet += 1;
                return None;
            }
            let n = *quiet;
            *last = now;
            *quiet = 0;
            return Some(n);
        }
        if self.sources.len() >= MAX_SOURCES {
            let interval = self.interval;
            self.sources
                .retain(|_, (last, _)| now.duration_since(*last) < interval);
            if self.sources.len() >= MAX_SOURCES {
                // Under a flood from many addresses: forget them all rather than grow.
                self.sources.clear();
            }
        }
        self.sources.insert((ip, kind), (now, 0));
        Some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(n: u8) -> IpAddr {
        IpAddr::from([198, 18, 0, n])
    }

    fn peer(n: u8) -> SocketAddr {
        SocketAddr::new(ip(n), 40000 + u16::from(n))
    }

    #[test]
    fn a_full_table_evicts_the_oldest_never_the_newest() {
        let mut p = Pending::new(3, 10);
        for s in 1..=3 {
            assert!(p.admit(s, peer(s as u8), None).is_empty());
        }
        let ev = p.admit(4, peer(9), None);
        assert_eq!(
            ev,
            vec![Evicted {
                seq: 1,
                peer: peer(1),
                same_source: false
            }]
        );
        assert_eq!(p.len(), 3);
        assert!(!p.finish(1), "the oldest was evicted");
        assert!(p.finish(4), "the newest is pending");
        assert!(p.finish(2) && p.finish(3));
        assert_eq!(p.len(), 0);
    }

    #[test]
    fn one_source_only_pushes_out_its_own_connections() {
        let mut p = Pending::new(100, 2);
        p.admit(1, peer(1), None);
        p.admit(2, peer(2), None);
        p.admit(3, peer(1), None);
        let ev = p.admit(4, peer(1), None);
        assert_eq!(
            ev,
            vec![Evicted {
                seq: 1,
                peer: peer(1),
                same_source: true
            }]
        );
        assert!(!p.finish(1));
        assert!(p.finish(2), "another source's connection stays");
        assert!(p.finish(3) && p.finish(4));
    }

    #[test]
    fn eviction_shuts_the_connection_down() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let c = TcpStream::connect(l.local_addr().expect("addr")).expect("connect");
        let (s, _) = l.accept().expect("accept");
        let mut p = Pending::new(1, 1);
        p.admit(1, peer(1), Some(s.try_clone().expect("clone")));
        p.admit(2, peer(1), None);
        let mut buf = [0u8; 1];
        // The server side's read returns at once: the socket is shut down.
        s.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let t = Instant::now();
        assert_eq!(std::io::Read::read(&mut &s, &mut buf).expect("read"), 0);
        assert!(t.elapsed() < Duration::from_secs(2));
        drop(c);
    }

    #[test]
    fn refusals_are_logged_once_per_source_per_interval() {
        let mut r = RefusalLog::new(Duration::from_secs(10));
        let t0 = Instant::now();
        assert_eq!(r.note(ip(1), "x", t0), Some(0));
        for i in 1..=5 {
            assert_eq!(r.note(ip(1), "x", t0 + Duration::from_secs(i)), None);
        }
        assert_eq!(r.note(ip(2), "x", t0 + Duration::from_secs(1)), Some(0));
        assert_eq!(r.note(ip(1), "x", t0 + Duration::from_secs(11)), Some(5));
        assert_eq!(r.note(ip(1), "x", t0 + Duration::from_secs(12)), None);
        assert_eq!(r.note(ip(1), "y", t0 + Duration::from_secs(12)), Some(0));
    }

    #[test]
    fn the_refusal_log_stays_bounded() {
        let mut r = RefusalLog::new(Duration::from_secs(10));
        let t0 = Instant::now();
        for i in 0..(MAX_SOURCES as u32 * 3) {
            r.note(IpAddr::from(i.to_be_bytes()), "x", t0);
        }
        assert!(r.sources.len() <= MAX_SOURCES);
    }
}
