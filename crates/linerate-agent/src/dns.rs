//! DNS for DNS-discovered peers: A/AAAA and SRV queries sent to the nameservers of
//! `/etc/resolv.conf` (or the config's `resolvers`), with its search list and `ndots`, over
//! UDP with a TCP retry when the answer is truncated. Messages are built and parsed by
//! hickory-proto; only the exchange is here. Blocking and bounded: each server gets
//! `ATTEMPTS` tries of `TIMEOUT` each.
//!
//! A Kubernetes headless Service publishes both: its name has an A/AAAA record per ready pod,
//! and `_port._proto.service.namespace.svc.cluster.local` an SRV record per pod with the
//! port, so a mesh's peers follow the pods.

use std::io::{self, Read as _, Write as _};
use std::net::{IpAddr, SocketAddr, TcpStream, UdpSocket};
use std::time::Duration;

use hickory_proto::op::{Message, MessageType, OpCode, Query, ResponseCode};
use hickory_proto::rr::{Name, RData, Record, RecordType};
use hickory_proto::serialize::binary::BinEncodable as _;

/// How long one server gets to answer one query, unless resolv.conf says.
const TIMEOUT: Duration = Duration::from_secs(2);
/// Tries per server before the next one.
const ATTEMPTS: u32 = 2;
/// Where resolv.conf lives.
const RESOLV_CONF: &str = "/etc/resolv.conf";

/// Where and how names are looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolver {
    /// The nameservers, asked in turn.
    pub servers: Vec<SocketAddr>,
    /// Suffixes tried for names with fewer than `ndots` dots (resolv.conf's `search`).
    pub search: Vec<String>,
    /// Names with at least this many dots are tried as written first.
    pub ndots: u32,
    /// How long one server gets to answer one query.
    pub timeout: Duration,
}

/// One server of an SRV record set, with the addresses of its target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SrvTarget {
    /// The target's name, without the root's dot.
    pub host: String,
    /// The port it serves on.
    pub port: u16,
    /// Lower is tried first.
    pub priority: u16,
    /// Share among servers of one priority.
    pub weight: u16,
    /// Its addresses.
    pub addrs: Vec<IpAddr>,
}

impl Resolver {
    /// The system's resolver: `/etc/resolv.conf`'s nameservers, search list and ndots
    /// (localhost when it names no server, as the C library does).
    pub fn system() -> io::Result<Resolver> {
        let text = std::fs::read(RESOLV_CONF)
            .map_err(|e| io::Error::new(e.kind(), format!("{RESOLV_CONF}: {e}")))?;
        let conf = resolv_conf::Config::parse(&text).map_err(|e| {
            io::Error::new(io::ErrorKind::InvalidData, format!("{RESOLV_CONF}: {e}"))
        })?;
        Ok(Resolver {
            servers: conf
                .get_nameservers_or_local()
                .iter()
                .map(|ip| SocketAddr::new(IpAddr::from(ip), 53))
                .collect(),
            search: conf.get_last_search_or_domain().cloned().collect(),
            ndots: conf.ndots,
            timeout: Duration::from_secs(u64::from(conf.timeout.clamp(1, 5))),
        })
    }

    /// Given servers, no search list: names are taken as written.
    pub fn with_servers(servers: Vec<SocketAddr>) -> Resolver {
        Resolver {
            servers,
            search: Vec::new(),
            ndots: 1,
            timeout: TIMEOUT,
        }
    }

    /// The names to try for `name`, in order (glibc's rule: as written first when it has at
    /// least `ndots` dots, else the search list first; a name ending in a dot is absolute).
    fn candidates(&self, name: &str) -> Vec<String> {
        if name.ends_with('.') {
            return vec![name.to_owned()];
        }
        let searched = self
            .search
            .iter()
            .map(|s| format!("{name}.{}.", s.trim_end_matches('.')));
        let absolute = format!("{name}.");
        if name.matches('.').count() >= self.ndots as usize {
            std::iter::once(absolute).chain(searched).collect()
        } else {
            searched.chain(std::iter::once(absolute)).collect()
        }
    }

    /// Every A and AAAA address of `name` (A first).
    pub fn lookup_ip(&self, name: &str) -> io::Result<Vec<IpAddr>> {
        self.first_existing(name, |fqdn| {
            // A name that does not exist or a server that does not answer fails the A
            // question already; AAAA is asked only of a name that exists.
            let mut out: Vec<IpAddr> =
                addresses(self.query(fqdn, RecordType::A)?.answers()).collect();
            out.extend(addresses(self.query(fqdn, RecordType::AAAA)?.answers()));
            if out.is_empty() {
                return Err(no_records(fqdn, "A or AAAA"));
            }
            Ok(out)
        })
    }

    /// The servers of an SRV name (`_service._proto.name`), in priority order, each with its
    /// target's addresses (from the answer's additional section, else looked up).
    pub fn lookup_srv(&self, name: &str) -> io::Result<Vec<SrvTarget>> {
        self.first_existing(name, |fqdn| {
            let m = self.query(fqdn, RecordType::SRV)?;
            let mut out = Vec::new();
            for r in m.answers() {
                let RData::SRV(srv) = r.data() else { continue };
                // "." as the target: the service is decidedly not available (RFC 2782).
                if srv.target().is_root() {
                    continue;
                }
                let target = srv.target().to_ascii();
                let glue: Vec<IpAddr> = addresses(
                    m.additionals()
                        .iter()
                        .filter(|a| a.name().to_ascii().eq_ignore_ascii_case(&target)),
                )
                .collect();
                let addrs = if glue.is_empty() {
                    self.lookup_ip(&target)?
                } else {
                    glue
                };
                out.push(SrvTarget {
                    host: target.trim_end_matches('.').to_owned(),
                    port: srv.port(),
                    priority: srv.priority(),
                    weight: srv.weight(),
                    addrs,
                });
            }
            if out.is_empty() {
                return Err(no_records(fqdn, "SRV"));
            }
            out.sort_by(|a, b| (a.priority, &a.host).cmp(&(b.priority, &b.host)));
            Ok(out)
        })
    }

    /// Tries each candidate of `name` until one exists (a name that does not exist moves on
    /// to the next; any other failure ends the lookup).
    fn first_existing<T>(
        &self,
        name: &str,
        lookup: impl Fn(&str) -> io::Result<T>,
    ) -> io::Result<T> {
        let mut last = None;
        for fqdn in self.candidates(name) {
            match lookup(&fqdn) {
                Ok(v) => return Ok(v),
                Err(e) if e.kind() == io::ErrorKind::NotFound => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| no_records(name, "any")))
    }

    /// One question to the servers in turn; the first answer that is not a server failure
    /// counts.
    fn query(&self, fqdn: &str, ty: RecordType) -> io::Result<Message> {
        let qname = Name::from_ascii(fqdn).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{fqdn:?} is not a DNS name: {e}"),
            )
        })?;
        if self.servers.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "no nameserver to ask",
            ));
        }
        let mut last = io::Error::new(io::ErrorKind::TimedOut, "no answer");
        for server in &self.servers {
            for _ in 0..ATTEMPTS {
                match exchange(*server, &qname, ty, self.timeout) {
                    Ok(m) => match m.response_code() {
                        ResponseCode::NoError => return Ok(m),
                        ResponseCode::NXDomain => {
                            return Err(io::Error::new(
                                io::ErrorKind::NotFound,
                                format!("{fqdn} does not exist (asked {server})"),
                            ));
                        }
                        code => {
                            last = io::Error::other(format!("{server} answered {code}"));
                            break;
                        }
                    },
                    Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                        last = e;
                        break;
                    }
                    Err(e) => last = io::Error::new(e.kind(), format!("{server}: {e}")),
                }
            }
        }
        Err(last)
    }
}

fn no_records(name: &str, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{} has no {what} record", name.trim_end_matches('.')),
    )
}

fn addresses<'a>(records: impl IntoIterator<Item = &'a Record>) -> impl Iterator<Item = IpAddr> {
    records.into_iter().filter_map(|r| match r.data() {
        RData::A(a) => Some(IpAddr::V4(a.0)),
        RData::AAAA(a) => Some(IpAddr::V6(a.0)),
        _ => None,
    })
}

/// A query id that an off-path sender cannot guess easily.
fn query_id() -> u16 {
    use std::hash::{BuildHasher as _, Hasher as _};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish() as u16
}

/// One query and its answer: UDP, then TCP when the answer was truncated.
fn exchange(
    server: SocketAddr,
    name: &Name,
    ty: RecordType,
    timeout: Duration,
) -> io::Result<Message> {
    let mut q = Message::new();
    let id = query_id();
    q.set_id(id)
        .set_message_type(MessageType::Query)
        .set_op_code(OpCode::Query)
        .set_recursion_desired(true)
        .add_query(Query::query(name.clone(), ty));
    let wire = q.to_bytes().map_err(invalid)?;

    let bind: SocketAddr = if server.is_ipv4() {
        ([0, 0, 0, 0], 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let sock = UdpSocket::bind(bind)?;
    sock.connect(server)?;
    sock.set_read_timeout(Some(timeout))?;
    sock.send(&wire)?;
    let mut buf = [0u8; 4096];
    let answer = loop {
        let n = sock.recv(&mut buf)?;
        // Anything that is not the answer to this question is ignored, as a resolver must.
        match Message::from_vec(&buf[..n]) {
            Ok(m) if m.id() == id && answers(&m, name, ty) => break m,
            _ => continue,
        }
    };
    if !answer.truncated() {
        return Ok(answer);
    }
    let mut tcp = TcpStream::connect_timeout(&server, timeout)?;
    tcp.set_read_timeout(Some(timeout))?;
    tcp.set_write_timeout(Some(timeout))?;
    let len = u16::try_from(wire.len()).map_err(invalid)?;
    let mut framed = len.to_be_bytes().to_vec();
    framed.extend_from_slice(&wire);
    tcp.write_all(&framed)?;
    let mut len = [0u8; 2];
    tcp.read_exact(&mut len)?;
    let mut body = vec![0u8; usize::from(u16::from_be_bytes(len))];
    tcp.read_exact(&mut body)?;
    let m = Message::from_vec(&body).map_err(invalid)?;
    if m.id() != id || !answers(&m, name, ty) {
        return Err(invalid(format!(
            "{server} answered another question over TCP"
        )));
    }
    Ok(m)
}

/// Whether `m` is a response to the question (name, type).
fn answers(m: &Message, name: &Name, ty: RecordType) -> bool {
    m.message_type() == MessageType::Response
        && m.queries()
            .first()
            .is_some_and(|q| q.query_type() == ty && q.name() == name)
}

fn invalid(e: impl ToString) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hickory_proto::rr::rdata::{A, SRV};

    fn resolver(search: &[&str], ndots: u32) -> Resolver {
        Resolver {
            servers: Vec::new(),
            search: search.iter().map(|s| (*s).to_owned()).collect(),
            ndots,
            timeout: TIMEOUT,
        }
    }

    #[test]
    fn search_list_order_follows_ndots() {
        let r = resolver(&["monitoring.svc.cluster.local", "svc.cluster.local"], 5);
        assert_eq!(
            r.candidates("agents"),
            [
                "agents.monitoring.svc.cluster.local.",
                "agents.svc.cluster.local.",
                "agents."
            ]
        );
        assert_eq!(r.candidates("a.example."), ["a.example."]);
        let r = resolver(&["example"], 1);
        assert_eq!(r.candidates("a.b"), ["a.b.", "a.b.example."]);
    }

    /// A tiny authoritative server on loopback, answering from a fixed record set; proves
    /// the exchange, the glue and the truncation retry end to end on real sockets.
    fn serve(records: Vec<Record>, truncate_udp: bool) -> SocketAddr {
        // The kernel picks a free UDP port; the same number may be taken for TCP by another
        // test's connection, so take a new pair until both are free.
        let (udp, tcp, addr) = (0..100)
            .find_map(|_| {
                let udp = UdpSocket::bind("127.0.0.1:0").ok()?;
                let addr = udp.local_addr().ok()?;
                let tcp = std::net::TcpListener::bind(addr).ok()?;
                Some((udp, tcp, addr))
            })
            .expect("a UDP and TCP port pair free on loopback");
        let answer = move |q: &Message| {
            let mut m = Message::new();
            m.set_id(q.id())
                .set_message_type(MessageType::Response)
                .add_query(q.queries()[0].clone());
            for r in &records {
                if r.name() == q.queries()[0].name()
                    && r.record_type() == q.queries()[0].query_type()
                {
                    m.add_answer(r.clone());
                } else if q.queries()[0].query_type() == RecordType::SRV
                    && r.record_type() == RecordType::A
                {
                    m.add_additional(r.clone());
                }
            }
            if m.answers().is_empty() && !records.iter().any(|r| r.name() == q.queries()[0].name())
            {
                m.set_response_code(ResponseCode::NXDomain);
            }
            m
        };
        let a2 = answer.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 512];
            for _ in 0..20 {
                let Ok((n, from)) = udp.recv_from(&mut buf) else {
                    return;
                };
                let q = Message::from_vec(&buf[..n]).unwrap();
                let mut m = answer(&q);
                if truncate_udp {
                    m.set_truncated(true);
                    m.answers_mut().clear();
                }
                udp.send_to(&m.to_bytes().unwrap(), from).unwrap();
            }
        });
        std::thread::spawn(move || {
            for s in tcp.incoming().take(10) {
                let mut s = s.unwrap();
                let mut len = [0u8; 2];
                s.read_exact(&mut len).unwrap();
                let mut body = vec![0u8; usize::from(u16::from_be_bytes(len))];
                s.read_exact(&mut body).unwrap();
                let wire = a2(&Message::from_vec(&body).unwrap()).to_bytes().unwrap();
                let mut out = (wire.len() as u16).to_be_bytes().to_vec();
                out.extend_from_slice(&wire);
                s.write_all(&out).unwrap();
            }
        });
        addr
    }

    fn records() -> Vec<Record> {
        let n = |s: &str| Name::from_ascii(s).unwrap();
        vec![
            Record::from_rdata(
                n("_linerate._tcp.mesh.test."),
                60,
                RData::SRV(SRV::new(10, 5, 5301, n("b.mesh.test."))),
            ),
            Record::from_rdata(
                n("_linerate._tcp.mesh.test."),
                60,
                RData::SRV(SRV::new(0, 5, 5201, n("a.mesh.test."))),
            ),
            Record::from_rdata(n("a.mesh.test."), 60, RData::A(A::new(198, 18, 0, 1))),
            Record::from_rdata(n("b.mesh.test."), 60, RData::A(A::new(198, 18, 0, 2))),
        ]
    }

    #[test]
    fn srv_with_glue_in_priority_order_over_udp_and_tcp() {
        for truncate in [false, true] {
            let r = Resolver::with_servers(vec![serve(records(), truncate)]);
            let got = r.lookup_srv("_linerate._tcp.mesh.test").unwrap();
            let hosts: Vec<_> = got.iter().map(|t| (t.host.as_str(), t.port)).collect();
            assert_eq!(
                hosts,
                [("a.mesh.test", 5201), ("b.mesh.test", 5301)],
                "{truncate}"
            );
            assert_eq!(got[1].addrs, [IpAddr::from([198, 18, 0, 2])]);
            assert_eq!(
                r.lookup_ip("b.mesh.test").unwrap(),
                [IpAddr::from([198, 18, 0, 2])]
            );
        }
    }

    #[test]
    fn missing_names_and_silent_servers_are_errors_not_hangs() {
        let r = Resolver::with_servers(vec![serve(records(), false)]);
        let e = r.lookup_srv("_nothing._tcp.mesh.test").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
        // A socket that never answers: bounded by TIMEOUT × ATTEMPTS.
        let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut r = Resolver::with_servers(vec![silent.local_addr().unwrap()]);
        r.timeout = Duration::from_millis(200);
        let t = std::time::Instant::now();
        let e = r.lookup_ip("a.mesh.test").unwrap_err();
        assert!(t.elapsed() < r.timeout * (ATTEMPTS + 2), "{e}");
    }
}
