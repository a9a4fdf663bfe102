//! The server: many tests at once, each isolated in its own threads, within limits.
//!
//! One TCP listener takes every connection, on one event loop (`handshake`) until its first
//! 37 bytes have arrived, so idle connections cost no thread. Those bytes are a cookie: a cookie that a
//! test is waiting for makes the connection one of its data streams; any other well-formed
//! cookie starts a new test; anything else is logged and closed. UDP streams are opened by a
//! `9876` datagram on the same port; because that datagram carries no cookie, one test at a
//! time (per server) creates UDP streams, and only datagrams from the test's client address
//! are taken. A linerate client may instead ask for a frame-counter session (`frames`), which
//! the server runs only when told it may.

mod accept;
mod allow;
mod bind;
mod frames;
mod handshake;
mod log;
mod pending;
mod registry;
mod session;
mod udp;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, TcpListener, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub use allow::AllowPrefix;
pub use frames::FrameCounterSummary;
pub use log::{Level, LogSink, ServerLog};
pub use session::{Served, TestSummary};

use crate::config::SocketOptions;
use crate::error::TrafficError;
use pending::{Pending, RefusalLog};
use registry::Registry;

/// Server settings and limits.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Address to listen on (default: `::` dual-stack, else `0.0.0.0`).
    pub bind: Option<IpAddr>,
    /// Port (0: any free port).
    pub port: u16,
    /// Serve one test, then exit.
    pub one_off: bool,
    /// Tests running at once.
    pub max_tests: usize,
    /// Tests from one source address running at once.
    pub max_tests_per_ip: usize,
    /// Streams per test (both directions counted).
    pub max_streams: u32,
    /// Longest test accepted.
    pub max_duration: Duration,
    /// A test's total rate (bits/s, all streams, both directions) above which it is refused
    /// or ended, as iperf3's `--server-bitrate-limit`; 0: no limit.
    pub bitrate_limit: u64,
    /// The interval the total rate is averaged over for `bitrate_limit` (iperf3: 5 s).
    pub bitrate_limit_interval: Duration,
    /// Time a client gets for each handshake step.
    pub handshake_timeout: Duration,
    /// Time without any data or control traffic before a test is ended.
    pub idle_timeout: Duration,
    /// Connections still in their handshake (before their cookie) at once; when full, the
    /// oldest is evicted.
    pub max_pending: usize,
    /// Connections from one source address in their handshake at once; when full, that
    /// source's oldest is evicted.
    pub max_pending_per_ip: usize,
    /// A source's refusals and evictions are logged once per this interval.
    pub refusal_log_interval: Duration,
    /// Prefixes clients may connect from (`--allow`); empty: any address.
    pub allow: Vec<AllowPrefix>,
    /// iperf3's RSA authentication (`--rsa-private-key-path`, `--authorized-users-path`):
    /// when set, every test must carry a valid token.
    pub auth: Option<Arc<crate::protocol::auth::Authorizer>>,
    /// Socket options for data streams (`--bind-dev`).
    pub sock: SocketOptions,
    /// Shared with other tests of this host (a measurement agent's own client tests): a test
    /// arriving while it is taken is refused as busy.
    pub gate: Option<std::sync::Arc<crate::gate::TestGate>>,
    /// Whether clients may ask for a frame-counter session (`--allow-frame-counter`), which
    /// opens a raw packet socket on this host.
    pub frame_counter: FrameCounterAccess,
}

/// Which interfaces a client may count `linerate gen`'s frames on through the control channel
/// ([`crate::protocol::frames`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum FrameCounterAccess {
    /// None: a frame-counter session is refused (the default).
    #[default]
    Refused,
    /// Any interface of the server's namespace.
    AnyInterface,
    /// Only these.
    Interfaces(Vec<String>),
}

impl FrameCounterAccess {
    /// What `--allow-frame-counter[=IF,…]` grants: nothing when absent, every interface when
    /// it names none; refused where the counter cannot run (not Linux).
    pub fn from_flag(
        flag: Option<&[String]>,
    ) -> Result<FrameCounterAccess, linerate_sys::os::NotOnThisOs> {
        let Some(list) = flag else {
            return Ok(FrameCounterAccess::Refused);
        };
        if !cfg!(target_os = "linux") {
            return Err(linerate_sys::os::NotOnThisOs::linux(
                "`linerate server --allow-frame-counter`",
                "the counter reads an AF_PACKET receive ring",
            ));
        }
        let list: Vec<String> = list
            .iter()
            .map(|d| d.trim().to_owned())
            .filter(|d| !d.is_empty())
            .collect();
        Ok(if list.is_empty() {
            FrameCounterAccess::AnyInterface
        } else {
            FrameCounterAccess::Interfaces(list)
        })
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            bind: None,
            port: crate::protocol::DEFAULT_PORT,
            one_off: false,
            max_tests: 16,
            max_tests_per_ip: 8,
            max_streams: 128,
            max_duration: Duration::from_secs(3600),
            bitrate_limit: 0,
            bitrate_limit_interval: Duration::from_secs(5),
            handshake_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
            max_pending: 1024,
            max_pending_per_ip: 64,
            refusal_log_interval: Duration::from_secs(10),
            allow: Vec::new(),
            auth: None,
            sock: SocketOptions::default(),
            gate: None,
            frame_counter: FrameCounterAccess::Refused,
        }
    }
}

/// State shared by the listener and every test.
pub(crate) struct Shared {
    pub cfg: ServerConfig,
    pub registry: Registry,
    pub active: AtomicUsize,
    pub tests_per_ip: Mutex<HashMap<IpAddr, usize>>,
    pub pending: Mutex<Pending>,
    pub refusals: Mutex<RefusalLog>,
    pub started: AtomicU64,
    pub finished: AtomicU64,
    pub shutdown: AtomicBool,
    pub udp: UdpSocket,
    pub udp_create: std::sync::Mutex<()>,
    pub log: LogSink,
}

impl Shared {
    pub fn log(&self, level: Level, test: Option<u64>, peer: Option<SocketAddr>, message: String) {
        (self.log)(ServerLog {
            level,
            test,
            peer,
            message,
            refused: None,
            ended: false,
        });
    }

    /// Logs the end of test `test`: its summary, or why it failed.
    pub fn log_end(&self, level: Level, test: u64, peer: SocketAddr, message: String) {
        (self.log)(ServerLog {
            level,
            test: Some(test),
            peer: Some(peer),
            message,
            refused: None,
            ended: true,
        });
    }

    /// Logs a refusal for `reason` (every one: counters see them all).
    pub fn log_refusal(&self, peer: SocketAddr, reason: &'static str, message: String) {
        (self.log)(ServerLog {
            level: Level::Warn,
            test: None,
            peer: Some(peer),
            message,
            refused: Some(reason),
            ended: false,
        });
    }

    /// Logs a refusal of a connection from `peer`, at most once per source address and
    /// `kind` per interval (with the count of those not logged since); the ones not logged
    /// still reach the sink with an empty message, for counters.
    pub fn refuse(&self, peer: SocketAddr, kind: &'static str, message: String) {
        let quiet = lock(&self.refusals).note(peer.ip(), kind, Instant::now());
        let message = match quiet {
            Some(n) if n > 0 => format!(
                "{message} (and {n} more like it from {} in the last {:.0?}, not logged)",
                peer.ip(),
                self.cfg.refusal_log_interval
            ),
            Some(_) => message,
            None => String::new(),
        };
        self.log_refusal(peer, kind, message);
    }

    /// Connections in their handshake now.
    pub fn pending_len(&self) -> usize {
        lock(&self.pending).len()
    }
}

/// Locks `m`, going on with the data of a thread that panicked while holding it.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// A bound server, ready to serve.
pub struct Server {
    tcp: TcpListener,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("tcp", &self.tcp).finish()
    }
}

impl Server {
    /// Binds the TCP and UDP sockets.
    pub fn bind(cfg: ServerConfig, log: LogSink) -> Result<Server, TrafficError> {
        let (tcp, udp) = bind::bind_pair(cfg.bind, cfg.port)?;
        let pending = Pending::new(cfg.max_pending, cfg.max_pending_per_ip);
        let refusals = RefusalLog::new(cfg.refusal_log_interval);
        Ok(Server {
            tcp,
            shared: Arc::new(Shared {
                cfg,
                registry: Registry::default(),
                active: AtomicUsize::new(0),
                tests_per_ip: Mutex::new(HashMap::new()),
                pending: Mutex::new(pending),
                refusals: Mutex::new(refusals),
                started: AtomicU64::new(0),
                finished: AtomicU64::new(0),
                shutdown: AtomicBool::new(false),
                udp,
                udp_create: std::sync::Mutex::new(()),
                log,
            }),
        })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.tcp.local_addr().ok()
    }

    /// Serves until `stop` is set (or after one test with `one_off`). Running tests are told
    /// the server is terminating and are waited for, a few seconds at most.
    pub fn serve(&self, stop: &AtomicBool) -> Result<(), TrafficError> {
        let sh = &self.shared;
        if let Some(a) = self.local_addr() {
            sh.log(
                Level::Info,
                None,
                None,
                format!("listening on {a} (TCP and UDP)"),
            );
        }
        let r = handshake::run(sh, &self.tcp, stop);
        sh.shutdown.store(true, Ordering::Relaxed);
        let t = Instant::now();
        while (sh.active.load(Ordering::Relaxed) > 0 || sh.pending_len() > 0)
            && t.elapsed() < Duration::from_secs(5)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        r
    }

    /// Tests finished so far.
    pub fn tests_finished(&self) -> u64 {
        self.shared.finished.load(Ordering::Relaxed)
    }
}
