//! The client of a frame-counter session ([`protocol::frames`](crate::protocol::frames)): a
//! receive counter on another host, behind that host's `linerate server
//! --allow-frame-counter`, reached through the control channel with the same allow-list and
//! authentication as any test. [`RemoteCounter`] opens the session, measures the clocks'
//! offset ([`clock`]: what one-way latency between the hosts is worth), opens a count on one
//! of the server's interfaces and stops it, getting the counter's `linerate.gen-receive/1`
//! document back typed.

pub mod clock;

use std::time::Duration;

use crate::client::{accepted_hello, connect};
use crate::config::ClientConfig;
use crate::error::TrafficError;
use crate::generator::document::Received;
use crate::protocol::extension::Extension;
use crate::protocol::frames::{KernelClock, Reply, Request, now_ns, this_kernel};
use crate::protocol::{Control, Cookie, Incoming, MAX_PARAMS_LEN, State, TestParams};

pub use clock::ClockCheck;

/// Where the counter is and how to reach it.
#[derive(Debug, Clone)]
pub struct RemoteConfig {
    /// The server's host name or address.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// iperf3's authentication token, when the server wants one.
    pub authtoken: Option<String>,
    /// Time for the connection and each handshake step.
    pub connect_timeout: Duration,
    /// The longest one count will run (the server refuses more than its `--max-duration`).
    pub longest_count: Duration,
}

/// One clock exchange: the client's send (`t1`) and receive (`t4`) times, the server's
/// receive (`t2`) and send (`t3`) times, nanoseconds on each side's `CLOCK_REALTIME`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exchange {
    /// Client sent the request.
    pub t1: u64,
    /// Server received it.
    pub t2: u64,
    /// Server sent the reply.
    pub t3: u64,
    /// Client received the reply.
    pub t4: u64,
}

impl Exchange {
    /// The server's clock minus the client's, nanoseconds, were the two paths equally long.
    pub fn offset_ns(&self) -> f64 {
        let d = |a: u64, b: u64| i128::from(a) - i128::from(b);
        (d(self.t2, self.t1) + d(self.t3, self.t4)) as f64 / 2.0
    }

    /// The round trip less the server's time, nanoseconds.
    pub fn rtt_ns(&self) -> f64 {
        let d = |a: u64, b: u64| i128::from(a) - i128::from(b);
        (d(self.t4, self.t1) - d(self.t3, self.t2)) as f64
    }
}

/// A frame-counter session with a server.
#[derive(Debug)]
pub struct RemoteCounter {
    ctl: Control,
    timeout: Duration,
}

/// The server kernel's facts from its last clock reply.
#[derive(Debug, Clone, Default)]
struct ServerClock {
    boot_id: Option<String>,
    kernel: Option<KernelClock>,
}

impl RemoteCounter {
    /// Connects and asks for a frame-counter session; a server that refuses (not started
    /// with `--allow-frame-counter`, authentication) or does not know the session is an
    /// error saying so.
    pub fn connect(cfg: &RemoteConfig) -> Result<RemoteCounter, TrafficError> {
        let client = ClientConfig {
            host: cfg.host.clone(),
            port: cfg.port,
            connect_timeout: cfg.connect_timeout,
            ..ClientConfig::default()
        };
        let server = connect::resolve(&client)?;
        let cookie = Cookie::random();
        let stream = connect::control(&client, &server, &cookie)?;
        let mut ctl = Control::new(stream, format!("{}:{}", cfg.host, cfg.port));
        let hs = cfg.connect_timeout;
        let first = ctl.read(hs, "waiting for the server to ask for parameters");
        if let Err(TrafficError::Closed { peer, .. }) = &first {
            return Err(TrafficError::Refused {
                peer: peer.clone(),
                reason: "it closed the connection before the handshake (is this host on its \
                         --allow list?)"
                    .into(),
            });
        }
        match first? {
            Incoming::State(State::ParamExchange) => {}
            Incoming::State(State::AccessDenied) => {
                return Err(TrafficError::Busy {
                    peer: ctl.peer.clone(),
                });
            }
            other => {
                return Err(unexpected(
                    other,
                    "waiting for the server to ask for parameters",
                ));
            }
        }
        let params = TestParams {
            time: cfg.longest_count.as_secs_f64().ceil(),
            client_version: Some(format!("linerate {}", crate::ENGINE_VERSION)),
            extension: Some(Extension {
                frame_counter: true,
                ..Extension::new(crate::config::Mode::Stream)
            }),
            ..TestParams::default()
        };
        let mut v = params.to_json();
        if let (Some(token), Some(m)) = (&cfg.authtoken, v.as_object_mut()) {
            m.insert("authtoken".into(), token.clone().into());
        }
        ctl.send_json(&v, "sending parameters")?;
        match ctl.read(hs, "waiting for the server to accept the frame counter")? {
            Incoming::State(State::LinerateHello) => {}
            Incoming::State(State::ServerError) => {
                let (code, errno) = ctl.read_server_error(hs)?;
                return Err(TrafficError::ServerError {
                    peer: ctl.peer.clone(),
                    code,
                    errno,
                    text: crate::error::iperf_error_text(code),
                });
            }
            Incoming::State(State::CreateStreams) => {
                return Err(not_linerate(&ctl.peer));
            }
            other => {
                return Err(unexpected(
                    other,
                    "waiting for the server to accept the frame counter",
                ));
            }
        }
        let hello = accepted_hello(&mut ctl, hs)?;
        if !hello.frame_counter {
            // A linerate server from before the frame counter: it would run a plain test.
            let _ = ctl.send(State::ClientTerminate, "ending the session");
            return Err(TrafficError::PeerLacksFeature {
                peer: ctl.peer.clone(),
                feature: format!("the frame counter (it runs linerate {})", hello.engine),
            });
        }
        Ok(RemoteCounter { ctl, timeout: hs })
    }

    /// The server's address as given.
    pub fn peer(&self) -> &str {
        &self.ctl.peer
    }

    fn request(
        &mut self,
        r: &Request,
        wait: Duration,
        during: &'static str,
    ) -> Result<Reply, TrafficError> {
        self.ctl.send_json(r, during)?;
        self.reply(wait, during)
    }

    fn reply(&mut self, wait: Duration, during: &'static str) -> Result<Reply, TrafficError> {
        let v = self.ctl.read_json(MAX_PARAMS_LEN, wait, during)?;
        match serde_json::from_value(v)
            .map_err(|e| TrafficError::BadJson(format!("a frame-counter reply: {e}")))?
        {
            Reply::Error { error } => Err(TrafficError::Refused {
                peer: self.ctl.peer.clone(),
                reason: error,
            }),
            r => Ok(r),
        }
    }

    /// Makes `n` clock exchanges and judges the clocks from them ([`clock`]).
    pub fn clock(&mut self, n: u32) -> Result<ClockCheck, TrafficError> {
        let mut exchanges = Vec::new();
        let mut server = ServerClock::default();
        for _ in 0..n.max(1) {
            let t1 = now_ns();
            let reply = self.request(&Request::Clock, self.timeout, "exchanging clock times")?;
            let t4 = now_ns();
            let Reply::Clock {
                t2_ns,
                t3_ns,
                boot_id,
                kernel,
            } = reply
            else {
                return Err(TrafficError::BadJson(format!(
                    "a clock exchange answered with {reply:?}"
                )));
            };
            exchanges.push(Exchange {
                t1,
                t2: t2_ns,
                t3: t3_ns,
                t4,
            });
            server = ServerClock { boot_id, kernel };
        }
        let (here_boot, here_kernel) = this_kernel();
        let one_kernel = here_boot.is_some() && here_boot == server.boot_id;
        ClockCheck::of(&exchanges, one_kernel, here_kernel, server.kernel)
            .ok_or_else(|| TrafficError::BadJson("no clock exchange".into()))
    }

    /// Opens a count of `linerate gen`'s frames on the server's interface `dev`, for at most
    /// `seconds`; returns that interface's MAC once its ring is open.
    pub fn open(&mut self, dev: &str, seconds: f64) -> Result<[u8; 6], TrafficError> {
        let open = Request::Open {
            dev: dev.to_owned(),
            seconds,
        };
        match self.request(&open, self.timeout, "opening a count")? {
            Reply::Ready { mac } => crate::generator::parse_mac(&mac)
                .map_err(|e| TrafficError::BadJson(format!("the counter's interface MAC: {e}"))),
            other => Err(TrafficError::BadJson(format!(
                "an open answered with {other:?}"
            ))),
        }
    }

    /// Stops the open count and returns what it counted.
    pub fn stop(&mut self) -> Result<Received, TrafficError> {
        match self.request(&Request::Stop, self.timeout, "stopping a count")? {
            Reply::Counted { received } => Ok(*received),
            other => Err(TrafficError::BadJson(format!(
                "a stop answered with {other:?}"
            ))),
        }
    }

    /// Ends the session.
    pub fn done(mut self) {
        let _ = self.ctl.send_json(&Request::Done, "ending the session");
        self.ctl.linger_close();
    }
}

/// `HOST`, `HOST:PORT`, `[V6]:PORT` or a bare IPv6 address; `port` when none is given.
pub fn host_and_port(s: &str, port: u16) -> Result<(String, u16), String> {
    let number = |p: &str| {
        p.parse::<u16>()
            .map_err(|_| format!("'{s}': '{p}' is not a port"))
    };
    if let Some(rest) = s.strip_prefix('[') {
        let Some((host, tail)) = rest.split_once(']') else {
            return Err(format!("'{s}': no ']' after the IPv6 address"));
        };
        return match tail.strip_prefix(':') {
            Some(p) => Ok((host.to_owned(), number(p)?)),
            None if tail.is_empty() => Ok((host.to_owned(), port)),
            None => Err(format!("'{s}': expected :PORT after ']'")),
        };
    }
    match s.split_once(':') {
        Some((h, p)) if !p.contains(':') && !h.is_empty() => Ok((h.to_owned(), number(p)?)),
        _ if s.is_empty() => Err("an empty host".into()),
        _ => Ok((s.to_owned(), port)),
    }
}

fn unexpected(got: Incoming, during: &'static str) -> TrafficError {
    let byte = match got {
        Incoming::State(s) => s.to_byte(),
        Incoming::Unknown(b) => b,
    };
    TrafficError::UnexpectedState { byte, during }
}

fn not_linerate(peer: &str) -> TrafficError {
    TrafficError::PeerLacksFeature {
        peer: peer.to_owned(),
        feature: "the frame counter (an iperf3 server, not linerate)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_parse_with_and_without_a_port() {
        let p = |s| host_and_port(s, 5201);
        assert_eq!(p("198.18.0.9"), Ok(("198.18.0.9".into(), 5201)));
        assert_eq!(p("b.example:5202"), Ok(("b.example".into(), 5202)));
        assert_eq!(p("[2001:db8::1]:7"), Ok(("2001:db8::1".into(), 7)));
        assert_eq!(p("2001:db8::1"), Ok(("2001:db8::1".into(), 5201)));
        assert!(p("h:port").unwrap_err().contains("'port' is not a port"));
        assert!(p("[::1").is_err() && p("").is_err());
    }
}
