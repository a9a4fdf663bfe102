//! The agent's mesh configuration (TOML): where it serves tests and metrics, its peers, and
//! the tests it runs to each of them. Validated whole before use; every error names the file,
//! the line and column, and the key.
//!
//! ```toml
//! listen = "198.18.0.1:5201"      # the test server of this agent
//! metrics = "198.18.0.1:9201"     # Prometheus /metrics
//! [[peer]]
//! host = "198.18.0.2"             # port 5201 unless host:port
//! [[peer]]
//! dns = "linerate.fleet.svc"      # every A/AAAA address of the name, re-resolved each round
//! [[peer]]
//! srv = "_linerate._tcp.fleet.svc" # every server of an SRV record set, with its port
//! [[test]]
//! mode = "tcp"                    # tcp | udp | rr
//! every = "5s"
//! duration = "1s"
//! ```

use std::net::{IpAddr, SocketAddr, ToSocketAddrs as _};
use std::ops::Range;
use std::path::{Path, PathBuf};

use linerate_units::{BitRate, Duration};

use toml::Spanned;

use crate::dns;

/// The port a peer's server listens on unless the config says otherwise (iperf3's).
pub const DEFAULT_PORT: u16 = 5201;

/// A bad configuration, located: `mesh.toml:5:9: test.every: ...` (file, line, column, key;
/// line and column 0 when the file could not be read, no key for a TOML syntax error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}:{column}: {}{message}", file.display(), KeyPrefix(key))]
pub struct ConfigError {
    /// The configuration file.
    pub file: PathBuf,
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1.
    pub column: usize,
    /// The key at fault (`test.every`), empty when none is.
    pub key: String,
    /// What is wrong with it.
    pub message: String,
}

/// `key: `, or nothing for no key.
struct KeyPrefix<'a>(&'a str);

impl std::fmt::Display for KeyPrefix<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            Ok(())
        } else {
            write!(f, "{}: ", self.0)
        }
    }
}

/// What a scheduled test measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TestMode {
    /// TCP throughput, each direction in turn.
    Tcp,
    /// UDP at a set rate: throughput and loss, each direction in turn.
    Udp,
    /// TCP request/response latency.
    Rr,
}

impl TestMode {
    /// Its name in the configuration and in the `test` label.
    pub fn name(self) -> &'static str {
        match self {
            TestMode::Tcp => "tcp",
            TestMode::Udp => "udp",
            TestMode::Rr => "rr",
        }
    }

    /// Throughput tests hold the host's test gate (one at a time in either role).
    pub fn is_throughput(self) -> bool {
        matches!(self, TestMode::Tcp | TestMode::Udp)
    }
}

/// Where a peer is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeerSource {
    /// A name or address with a port.
    Host {
        /// The name or address as written.
        host: String,
        /// Its test server's port.
        port: u16,
    },
    /// Every address a DNS name resolves to (A and AAAA), re-resolved every round; a
    /// Kubernetes headless Service is such a name.
    Dns {
        /// The name.
        name: String,
        /// The port of every address's test server.
        port: u16,
    },
    /// Every server an SRV name lists (`_service._proto.domain`), with the port it gives;
    /// re-resolved every round.
    Srv {
        /// The SRV name.
        name: String,
    },
}

/// A peer as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerConfig {
    /// Where it is.
    pub source: PeerSource,
    /// The `peer` label (default: the host as written).
    pub name: Option<String>,
}

/// A test as configured.
#[derive(Debug, Clone, PartialEq)]
pub struct TestConfig {
    /// What it measures.
    pub mode: TestMode,
    /// How often it runs to each peer (jittered ±10 %).
    pub every: std::time::Duration,
    /// How long each direction runs.
    pub duration: std::time::Duration,
    /// UDP: the rate each direction is sent at.
    pub rate: BitRate,
}

/// The whole configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Where this agent's test server listens.
    pub listen: SocketAddr,
    /// Where its `/metrics` endpoint listens.
    pub metrics: SocketAddr,
    /// The peers it tests.
    pub peers: Vec<PeerConfig>,
    /// The tests it runs to each peer.
    pub tests: Vec<TestConfig>,
    /// Nameservers for `dns` and `srv` peers; empty: the system's (`/etc/resolv.conf`, and
    /// the C library's resolver for `dns` peers, so `/etc/hosts` counts).
    pub resolvers: Vec<SocketAddr>,
}

/// A peer to test now: its label and address.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Target {
    /// The `peer` label.
    pub label: String,
    /// The address (or name) to connect to.
    pub host: String,
    /// Its test server's port.
    pub port: u16,
}

mod raw {
    use serde::Deserialize;
    use toml::Spanned;

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Config {
        pub listen: Option<Spanned<String>>,
        pub metrics: Option<Spanned<String>>,
        #[serde(default)]
        pub resolvers: Vec<Spanned<String>>,
        #[serde(default)]
        pub peer: Vec<Spanned<Peer>>,
        #[serde(default)]
        pub test: Vec<Spanned<Test>>,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Peer {
        pub host: Option<Spanned<String>>,
        pub dns: Option<Spanned<String>>,
        pub srv: Option<Spanned<String>>,
        pub port: Option<Spanned<i64>>,
        pub name: Option<Spanned<String>>,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Test {
        pub mode: Spanned<String>,
        pub every: Spanned<String>,
        pub duration: Option<Spanned<String>>,
        pub rate: Option<Spanned<String>>,
    }
}

struct Ctx<'a> {
    file: &'a Path,
    text: &'a str,
}

impl Ctx<'_> {
    fn err(&self, span: Range<usize>, key: &str, message: impl Into<String>) -> ConfigError {
        let start = span.start.min(self.text.len());
        let before = &self.text[..start];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        ConfigError {
            file: self.file.to_path_buf(),
            line,
            column,
            key: key.to_owned(),
            message: message.into(),
        }
    }

    fn duration(&self, v: &Spanned<String>, key: &str) -> Result<std::time::Duration, ConfigError> {
        let d = Duration::parse_with_unit(v.get_ref())
            .map_err(|e| self.err(v.span(), key, e.to_string()))?;
        let d = d.as_std();
        if d.is_zero() || d > std::time::Duration::from_secs(86_400) {
            return Err(self.err(
                v.span(),
                key,
                format!("{}: expected more than 0 and at most 1 day", v.get_ref()),
            ));
        }
        Ok(d)
    }

    fn dns_name(&self, v: &Spanned<String>, key: &str) -> Result<String, ConfigError> {
        let name = v.get_ref().trim();
        if name.is_empty()
            || name.len() > 253
            || name.contains(|c: char| c.is_whitespace() || matches!(c, ':' | '/' | '@'))
        {
            return Err(self.err(v.span(), key, format!("{name:?} is not a DNS name")));
        }
        Ok(name.to_owned())
    }

    fn addr(&self, v: &Spanned<String>, key: &str) -> Result<SocketAddr, ConfigError> {
        v.get_ref().parse::<SocketAddr>().map_err(|_| {
            self.err(
                v.span(),
                key,
                format!(
                    "{:?} is not ADDRESS:PORT (e.g. 198.18.0.1:5201 or [2001:db8::1]:5201)",
                    v.get_ref()
                ),
            )
        })
    }
}

/// Splits `host[:port]` (`[v6]:port` for IPv6 with a port).
fn host_port(s: &str) -> Option<(String, Option<u16>)> {
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Some((ip.to_string(), None));
    }
    if let Ok(sa) = s.parse::<SocketAddr>() {
        return Some((sa.ip().to_string(), Some(sa.port())));
    }
    match s.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() && !h.contains(':') => {
            Some((h.to_owned(), Some(p.parse().ok()?)))
        }
        Some(_) => None,
        None if !s.is_empty() && !s.contains(char::is_whitespace) => Some((s.to_owned(), None)),
        None => None,
    }
}

/// Parses and validates `text` (the contents of `file`).
pub fn parse(text: &str, file: &Path) -> Result<Config, ConfigError> {
    let ctx = Ctx { file, text };
    let raw: raw::Config = toml::from_str(text)
        .map_err(|e| ctx.err(e.span().unwrap_or(0..0), "", e.message().trim().to_owned()))?;
    let listen = match &raw.listen {
        Some(v) => ctx.addr(v, "listen")?,
        None => SocketAddr::from(([0, 0, 0, 0], DEFAULT_PORT)),
    };
    let metrics = match &raw.metrics {
        Some(v) => ctx.addr(v, "metrics")?,
        None => SocketAddr::from(([0, 0, 0, 0], 9201)),
    };
    if metrics == listen {
        let span = raw.metrics.as_ref().map_or(0..0, Spanned::span);
        return Err(ctx.err(span, "metrics", "must differ from listen"));
    }
    let mut peers = Vec::new();
    for p in &raw.peer {
        let span = p.span();
        let p = p.get_ref();
        let port = match &p.port {
            Some(v) => Some(
                u16::try_from(*v.get_ref())
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| {
                        ctx.err(
                            v.span(),
                            "peer.port",
                            format!("{}: expected 1 to 65535", v.get_ref()),
                        )
                    })?,
            ),
            None => None,
        };
        let source = match (&p.host, &p.dns, &p.srv) {
            (Some(h), None, None) => {
                let (host, in_host) = host_port(h.get_ref()).ok_or_else(|| {
                    ctx.err(
                        h.span(),
                        "peer.host",
                        format!("{:?} is not HOST or HOST:PORT", h.get_ref()),
                    )
                })?;
                PeerSource::Host {
                    host,
                    port: port.or(in_host).unwrap_or(DEFAULT_PORT),
                }
            }
            (None, Some(d), None) => PeerSource::Dns {
                name: ctx.dns_name(d, "peer.dns")?,
                port: port.unwrap_or(DEFAULT_PORT),
            },
            (None, None, Some(d)) => {
                if let Some(v) = &p.port {
                    return Err(ctx.err(
                        v.span(),
                        "peer.port",
                        "an SRV record gives the port; leave port out",
                    ));
                }
                PeerSource::Srv {
                    name: ctx.dns_name(d, "peer.srv")?,
                }
            }
            _ => {
                return Err(ctx.err(span, "peer", "give exactly one of host, dns or srv"));
            }
        };
        peers.push(PeerConfig {
            source,
            name: p.name.as_ref().map(|n| n.get_ref().clone()),
        });
    }
    let mut resolvers = Vec::new();
    for r in &raw.resolvers {
        let text = r.get_ref();
        let addr = text
            .parse::<SocketAddr>()
            .or_else(|_| text.parse::<IpAddr>().map(|ip| SocketAddr::new(ip, 53)))
            .map_err(|_| {
                ctx.err(
                    r.span(),
                    "resolvers",
                    format!("{text:?} is not ADDRESS or ADDRESS:PORT of a nameserver"),
                )
            })?;
        resolvers.push(addr);
    }
    let mut tests = Vec::new();
    for t in &raw.test {
        let t = t.get_ref();
        let mode = match t.mode.get_ref().as_str() {
            "tcp" => TestMode::Tcp,
            "udp" => TestMode::Udp,
            "rr" => TestMode::Rr,
            other => {
                return Err(ctx.err(
                    t.mode.span(),
                    "test.mode",
                    format!("{other:?}: expected tcp, udp or rr"),
                ));
            }
        };
        let every = ctx.duration(&t.every, "test.every")?;
        let duration = match &t.duration {
            Some(d) => ctx.duration(d, "test.duration")?,
            None => std::time::Duration::from_secs(1),
        };
        if duration * 2 > every && mode.is_throughput() {
            let span = t.duration.as_ref().map_or(t.every.span(), Spanned::span);
            return Err(ctx.err(
                span,
                "test.duration",
                format!(
                    "{duration:?} each way does not fit in every {every:?} (a throughput test \
                     runs both directions)"
                ),
            ));
        }
        let rate = match (&t.rate, mode) {
            (Some(r), TestMode::Udp) => BitRate::parse_with_unit(r.get_ref())
                .map_err(|e| ctx.err(r.span(), "test.rate", e.to_string()))?,
            (Some(r), _) => {
                return Err(ctx.err(r.span(), "test.rate", "only udp tests take a rate"));
            }
            (None, _) => BitRate::from_bps(10_000_000),
        };
        tests.push(TestConfig {
            mode,
            every,
            duration,
            rate,
        });
    }
    Ok(Config {
        listen,
        metrics,
        peers,
        tests,
        resolvers,
    })
}

/// Reads and parses `file`.
pub fn load(file: &Path) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(file).map_err(|e| ConfigError {
        file: file.to_path_buf(),
        line: 0,
        column: 0,
        key: String::new(),
        message: format!("cannot read it: {e}"),
    })?;
    parse(&text, file)
}

impl Config {
    /// The peers to test this round: static ones as configured, DNS and SRV ones resolved now
    /// (a name that does not resolve gives nothing this round, and says so through
    /// `unresolved`). The agent's own listening address is left out.
    pub fn targets(&self, unresolved: &mut dyn FnMut(&str, &std::io::Error)) -> Vec<Target> {
        let mut out = Vec::new();
        let resolver = || {
            if self.resolvers.is_empty() {
                dns::Resolver::system()
            } else {
                Ok(dns::Resolver::with_servers(self.resolvers.clone()))
            }
        };
        for p in &self.peers {
            match &p.source {
                PeerSource::Host { host, port } => out.push(Target {
                    label: p.name.clone().unwrap_or_else(|| host.clone()),
                    host: host.clone(),
                    port: *port,
                }),
                PeerSource::Dns { name, port } => {
                    let addrs = if self.resolvers.is_empty() {
                        (name.as_str(), *port)
                            .to_socket_addrs()
                            .map(|a| a.map(|a| a.ip()).collect())
                    } else {
                        resolver().and_then(|r| r.lookup_ip(name))
                    };
                    match addrs {
                        Ok(addrs) => out.extend(addrs.into_iter().map(|ip| Target {
                            label: ip.to_string(),
                            host: ip.to_string(),
                            port: *port,
                        })),
                        Err(e) => unresolved(name, &e),
                    }
                }
                // One peer per server, named by its target and tested at its first address
                // (a server with A and AAAA records is one host, not two).
                PeerSource::Srv { name } => match resolver().and_then(|r| r.lookup_srv(name)) {
                    Ok(servers) => out.extend(servers.into_iter().filter_map(|s| {
                        Some(Target {
                            host: s.addrs.first()?.to_string(),
                            label: s.host,
                            port: s.port,
                        })
                    })),
                    Err(e) => unresolved(name, &e),
                },
            }
        }
        out.retain(|t| {
            t.host.parse::<IpAddr>().ok() != Some(self.listen.ip()) || t.port != self.listen.port()
        });
        out.sort();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(s: &str) -> Result<Config, ConfigError> {
        parse(s, Path::new("mesh.toml"))
    }

    #[test]
    fn the_issue_example_parses() {
        let c = parse_str(
            "listen = \"198.18.0.1:5201\"\nmetrics = \"198.18.0.1:9201\"\n[[peer]]\nhost = \
             \"198.18.0.2\"\n[[test]]\nmode = \"tcp\"\nevery = \"5s\"\nduration = \"1s\"\n",
        )
        .expect("valid");
        assert_eq!(c.listen, "198.18.0.1:5201".parse().expect("addr"));
        assert_eq!(
            c.peers[0].source,
            PeerSource::Host {
                host: "198.18.0.2".into(),
                port: 5201
            }
        );
        assert_eq!(c.tests[0].mode, TestMode::Tcp);
        assert_eq!(c.tests[0].every, std::time::Duration::from_secs(5));
        let t = c.targets(&mut |_, _| panic!("no DNS here"));
        assert_eq!(t[0].label, "198.18.0.2");
    }

    #[test]
    fn ports_names_and_dns_peers() {
        let c = parse_str(
            "[[peer]]\nhost = \"b.example:6000\"\nname = \"b\"\n[[peer]]\nhost = \"[2001:db8::2]:7000\"\n\
             [[peer]]\ndns = \"localhost\"\nport = 5301\n[[test]]\nmode = \"udp\"\nevery = \"10s\"\nrate = \"50M\"\n",
        )
        .expect("valid");
        assert_eq!(
            c.peers[0].source,
            PeerSource::Host {
                host: "b.example".into(),
                port: 6000
            }
        );
        assert_eq!(c.peers[0].name.as_deref(), Some("b"));
        assert_eq!(
            c.peers[1].source,
            PeerSource::Host {
                host: "2001:db8::2".into(),
                port: 7000
            }
        );
        assert_eq!(c.tests[0].rate, BitRate::from_bps(50_000_000));
        // localhost resolves without a network: the DNS peer is every address of the name.
        let t = c.targets(&mut |n, e| panic!("{n}: {e}"));
        assert!(
            t.iter().any(|t| t.port == 5301 && t.host.contains('1')),
            "{t:?}"
        );
    }

    #[test]
    fn errors_name_line_column_and_key() {
        let e = parse_str("[[test]]\nmode = \"tcp\"\nevery = \"5\"\n").expect_err("bare number");
        assert_eq!((e.line, e.key.as_str()), (3, "test.every"), "{e}");
        assert!(
            e.to_string().starts_with("mesh.toml:3:9: test.every: "),
            "{e}"
        );
        let e = parse_str("[[test]]\nmode = \"icmp\"\nevery = \"5s\"\n").expect_err("mode");
        assert!(
            e.to_string()
                .contains("test.mode: \"icmp\": expected tcp, udp or rr"),
            "{e}"
        );
        let e = parse_str("listen = \"nope\"\n").expect_err("listen");
        assert_eq!((e.line, e.key.as_str()), (1, "listen"), "{e}");
        let e = parse_str("[[peer]]\nhost = \"a\"\ndns = \"b\"\n").expect_err("both");
        assert!(
            e.to_string().contains("exactly one of host, dns or srv"),
            "{e}"
        );
        let e = parse_str("[[peer]]\nsrv = \"_l._tcp.x\"\nport = 5201\n").expect_err("srv port");
        assert_eq!((e.line, e.key.as_str()), (3, "peer.port"), "{e}");
        let e = parse_str("resolvers = [\"ns1\"]\n").expect_err("resolver");
        assert_eq!(e.key, "resolvers", "{e}");
        let c = parse_str("resolvers = [\"198.18.0.53\", \"[2001:db8::53]:5353\"]\n[[peer]]\nsrv = \"_l._tcp.x\"\n").unwrap();
        assert_eq!(
            c.resolvers,
            [
                "198.18.0.53:53".parse::<SocketAddr>().unwrap(),
                "[2001:db8::53]:5353".parse().unwrap()
            ]
        );
        assert_eq!(
            c.peers[0].source,
            PeerSource::Srv {
                name: "_l._tcp.x".into()
            }
        );
        let e = parse_str("[[peer]]\nhots = \"a\"\n").expect_err("unknown key");
        assert_eq!(e.line, 2, "{e}");
        let e = parse_str("[[test]]\nmode = \"tcp\"\nevery = \"1s\"\nduration = \"1s\"\n")
            .expect_err("does not fit");
        assert_eq!(e.key, "test.duration", "{e}");
        let e = parse_str("[[test]]\nmode = \"rr\"\nevery = \"1s\"\nrate = \"1M\"\n")
            .expect_err("rate");
        assert_eq!(e.key, "test.rate", "{e}");
        let e = parse_str("[[peer]]\nhost = \"a\"\nport = 70000\n").expect_err("port");
        assert_eq!(e.key, "peer.port", "{e}");
    }

    proptest::proptest! {

        /// Arbitrary bytes as a mesh file: a located error or a configuration, never a panic.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300)) {
            let text = String::from_utf8_lossy(&bytes);
            if let Err(e) = parse_str(&text) {
                proptest::prop_assert!(e.line <= text.lines().count() + 1, "{}", e);
            }
        }
    }
}
