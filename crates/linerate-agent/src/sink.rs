//! What the agent reports to its caller: each finished test's result document, and the events
//! of its log. The caller stores the one and prints the other; the engine does neither.

use std::fmt;
use std::net::SocketAddr;

use linerate_iperf3::Document;
use linerate_traffic::TrafficError;

use crate::config::{ConfigError, TestMode};

/// Where the agent's results and log go. Called from the scheduler and from the test server's
/// threads, so it is shared (`Sync`) and takes `&self`.
pub trait Sink: Send + Sync {
    /// A test finished: its iperf3-schema result document (a throughput test gives one per
    /// direction). The metrics have already counted it.
    fn result(&self, document: &Document);

    /// Something the operator should read; its [`Display`](fmt::Display) is the log line.
    fn event(&self, event: &Event<'_>);
}

/// One line of the agent's log, typed.
#[derive(Debug)]
pub enum Event<'a> {
    /// Both servers are up; the scheduler starts.
    Serving {
        /// The test server's address.
        listen: SocketAddr,
        /// The `/metrics` endpoint's address.
        metrics: SocketAddr,
        /// Peers as configured (a DNS or SRV peer counts once).
        peers: usize,
        /// Tests per peer.
        tests: usize,
    },
    /// The configuration was read again and is in use.
    Reloaded {
        /// The new file changed `listen` or `metrics`, which take a restart: the old ones stay.
        addresses_changed: bool,
    },
    /// The configuration could not be read again; the one in use stays.
    ReloadFailed(&'a ConfigError),
    /// A `dns` or `srv` peer gave no address this round.
    Unresolved {
        /// The name as configured.
        name: &'a str,
        /// Why.
        error: &'a std::io::Error,
    },
    /// A scheduled test failed for another reason than a busy peer (that one is retried
    /// quietly, and counted).
    TestFailed {
        /// The test's mode.
        mode: TestMode,
        /// The peer's label.
        peer: &'a str,
        /// The address tested.
        host: &'a str,
        /// Its port.
        port: u16,
        /// `send` or `receive`.
        direction: &'a str,
        /// The `reason` label it was counted under (`unreachable`, `error`).
        reason: &'static str,
        /// The failure.
        error: &'a TrafficError,
    },
    /// A record of the agent's test server, as `linerate server` prints it.
    Server {
        /// The client, when known.
        peer: Option<SocketAddr>,
        /// What happened.
        message: &'a str,
    },
}

impl fmt::Display for Event<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Serving {
                listen,
                metrics,
                peers,
                tests,
            } => write!(
                f,
                "serving tests on {listen}, metrics on http://{metrics}/metrics; {peers} peer(s), \
                 {tests} test(s)"
            ),
            Event::Reloaded {
                addresses_changed: true,
            } => f.write_str("reloaded; listen and metrics addresses change only with a restart"),
            Event::Reloaded {
                addresses_changed: false,
            } => f.write_str("reloaded the configuration"),
            Event::ReloadFailed(e) => {
                write!(f, "warning: {e}; keeping the configuration in use")
            }
            Event::Unresolved { name, error } => write!(
                f,
                "warning: {name} does not resolve ({error}); no peers from it this round"
            ),
            Event::TestFailed {
                mode,
                peer,
                host,
                port,
                direction,
                reason,
                error,
            } => write!(
                f,
                "{} to {peer} ({host}:{port}) {direction}: {reason}: {error}",
                mode.name()
            ),
            Event::Server { peer, message } => {
                f.write_str("server: ")?;
                if let Some(p) = peer {
                    write!(f, "[{p}] ")?;
                }
                f.write_str(message)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_read_as_the_agent_has_always_logged_them() {
        let listen: SocketAddr = "198.18.0.1:5201".parse().expect("addr");
        let metrics: SocketAddr = "198.18.0.1:9201".parse().expect("addr");
        assert_eq!(
            Event::Serving {
                listen,
                metrics,
                peers: 2,
                tests: 1
            }
            .to_string(),
            "serving tests on 198.18.0.1:5201, metrics on http://198.18.0.1:9201/metrics; \
             2 peer(s), 1 test(s)"
        );
        assert_eq!(
            Event::Server {
                peer: Some(listen),
                message: "test 1 ended"
            }
            .to_string(),
            "server: [198.18.0.1:5201] test 1 ended"
        );
        let error = std::io::Error::new(std::io::ErrorKind::NotFound, "x has no SRV record");
        assert_eq!(
            Event::Unresolved {
                name: "x",
                error: &error
            }
            .to_string(),
            "warning: x does not resolve (x has no SRV record); no peers from it this round"
        );
    }
}
