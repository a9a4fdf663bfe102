//! The agent as a whole: binds its test server and `/metrics` endpoint, runs each on its own
//! thread, and turns the scheduler until the caller's stop flag is raised (or the test server
//! ends).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use linerate_traffic::gate::TestGate;
use linerate_traffic::server::{Level, LogSink, ServerLog};
use linerate_traffic::{Server, ServerConfig, TrafficError};

use crate::config::Config;
use crate::http::serve_metrics;
use crate::metrics::Metrics;
use crate::schedule::Scheduler;
use crate::sink::{Event, Sink};

/// How long the main loop naps when no job is due.
const IDLE: Duration = Duration::from_millis(100);

/// Why the agent could not start, or stopped on its own.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The test server could not listen.
    #[error("starting the test server on {addr}")]
    TestServer {
        /// The configured `listen` address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: TrafficError,
    },
    /// The `/metrics` endpoint could not listen.
    #[error("serving metrics on {addr}")]
    Metrics {
        /// The configured `metrics` address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The test server failed while the agent ran.
    #[error("the test server")]
    Server(#[source] TrafficError),
    /// The test server's thread panicked.
    #[error("the test server panicked")]
    ServerPanicked,
}

/// Runs the agent with `cfg` (read from `path`, which a reload reads again) until `stop` is
/// raised: then the test in progress ends early and `run` returns `Ok`. Raising `reload` makes
/// the agent read `path` again before its next job (the flag is lowered when seen). Results
/// and log lines go to `sink`.
pub fn run(
    path: &Path,
    cfg: Config,
    stop: &AtomicBool,
    reload: &AtomicBool,
    sink: Arc<dyn Sink>,
) -> Result<(), AgentError> {
    let metrics = Arc::new(Metrics::new());
    let gate = TestGate::new();
    let server = Server::bind(
        ServerConfig {
            bind: Some(cfg.listen.ip()),
            port: cfg.listen.port(),
            gate: Some(Arc::clone(&gate)),
            ..ServerConfig::default()
        },
        server_log(Arc::clone(&metrics), Arc::clone(&sink)),
    )
    .map_err(|source| AgentError::TestServer {
        addr: cfg.listen,
        source,
    })?;
    let http = tiny_http::Server::http(cfg.metrics).map_err(|source| AgentError::Metrics {
        addr: cfg.metrics,
        source,
    })?;
    sink.event(&Event::Serving {
        listen: cfg.listen,
        metrics: cfg.metrics,
        peers: cfg.peers.len(),
        tests: cfg.tests.len(),
    });
    // Raised when the loop ends without a stop (the test server ended): ends the metrics
    // thread. The caller's flag is only read.
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let server_thread = s.spawn(|| server.serve(stop));
        s.spawn(|| {
            serve_metrics(&http, &metrics, &|| {
                stop.load(Ordering::Relaxed) || done.load(Ordering::Relaxed)
            });
        });
        let mut scheduler = Scheduler::new(path.to_path_buf(), cfg, &metrics, &gate, &*sink, stop);
        while !stop.load(Ordering::Relaxed) {
            if reload.swap(false, Ordering::Relaxed) {
                scheduler.reload();
            }
            if !scheduler.step() {
                nap(stop, IDLE);
            }
            if server_thread.is_finished() {
                break;
            }
        }
        done.store(true, Ordering::Relaxed);
        match server_thread.join() {
            Ok(r) => r.map_err(AgentError::Server),
            Err(_) => Err(AgentError::ServerPanicked),
        }
    })
}

/// Sleeps for `time`, waking early when `stop` is raised.
fn nap(stop: &AtomicBool, time: Duration) {
    const TICK: Duration = Duration::from_millis(50);
    let until = Instant::now() + time;
    while !stop.load(Ordering::Relaxed) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(TICK));
    }
}

/// The server's log records: counted, and handed to the sink (as `linerate server` prints
/// them).
fn server_log(metrics: Arc<Metrics>, sink: Arc<dyn Sink>) -> LogSink {
    Arc::new(move |rec: ServerLog| {
        if let Some(reason) = rec.refused {
            metrics.server_refusal(reason);
        } else if rec.ended {
            metrics.server_test(match rec.level {
                Level::Info => "served",
                Level::Warn => "failed",
            });
        }
        if rec.message.is_empty() {
            return;
        }
        sink.event(&Event::Server {
            peer: rec.peer,
            message: &rec.message,
        });
    })
}
