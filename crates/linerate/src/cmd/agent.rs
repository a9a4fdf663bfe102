//! `linerate agent --config mesh.toml`: one node of a measurement mesh. It serves tests (the
//! linerate server, which iperf3 clients can use too), runs scheduled tests to its peers
//! (TCP throughput both ways, UDP loss at a set rate, rr latency), exposes the results on
//! `/metrics` for Prometheus, and keeps every result in its results database.
//!
//! One test at a time, in either role: a gate shared by the server and the scheduler keeps a
//! scheduled test and a served one from sharing the host. A peer that answers "busy" is
//! retried after a random back-off (as pScheduler avoids colliding tests), so two agents that
//! chose the same moment to test each other do not lock step. Schedules are jittered (±10 %).
//! SIGHUP reloads the configuration; a bad one is reported (file, line, key) and the agent
//! keeps the one it runs.

mod config;
mod dns;
mod metrics;

use std::collections::HashMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use linerate_sys::signal::{self, Signal};
use linerate_traffic::gate::TestGate;
use linerate_traffic::server::{Level, ServerLog};
use linerate_traffic::{ClientConfig, Protocol, Server, ServerConfig, TrafficError};

use config::{Config, Target, TestConfig, TestMode};
use metrics::{Metrics, TestLabels};

/// Arguments of `linerate agent`.
#[derive(Debug, clap::Args)]
#[command(after_help = "The configuration (TOML):

  listen = \"198.18.0.1:5201\"      # this agent's test server
  metrics = \"198.18.0.1:9201\"     # Prometheus /metrics
  [[peer]]
  host = \"198.18.0.2\"             # port 5201 unless host:port; or dns = \"NAME\" (every A/AAAA)
  [[peer]]
  srv = \"_tests._tcp.mesh.example\" # every server of an SRV record set, on its port
  [[test]]
  mode = \"tcp\"                    # tcp | udp (rate = \"10M\") | rr
  every = \"5s\"
  duration = \"1s\"

SIGHUP reloads it (a bad file is reported and the old configuration kept); SIGINT or SIGTERM
stops the agent (exit 130 or 143). contrib/fleet/ has a Prometheus configuration with alerting
rules, a Grafana dashboard, a Kubernetes DaemonSet and a systemd unit.

Examples:
  linerate agent --config mesh.toml
  linerate agent --config mesh.toml --check
  linerate agent --config mesh.toml --db /var/lib/linerate/agent.db")]
pub struct Args {
    /// The mesh configuration (TOML)
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// Check the configuration, print what it schedules, and exit
    #[arg(long)]
    check: bool,
    /// Where every result is stored (every one is, unless --no-store)
    #[command(flatten)]
    store: crate::cmd::history::db::StoreRunArgs,
}

/// A scheduled job: one test to one peer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct JobKey {
    target: Target,
    test: usize,
}

#[derive(Debug, Clone, Copy)]
struct JobState {
    due: Instant,
    /// Consecutive busy answers (back-off grows with them).
    busy: u32,
}

/// A cheap source of jitter (not for secrets): the std hasher's random keys over a counter.
fn random_unit() -> f64 {
    use std::hash::{BuildHasher as _, Hasher as _};
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(N.fetch_add(1, Ordering::Relaxed));
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "linerate agent: {line}");
}

/// Why a test failed, as the `reason` label says it.
fn reason(e: &TrafficError) -> &'static str {
    match e {
        TrafficError::Busy { .. } | TrafficError::Refused { .. } => "busy",
        TrafficError::Resolve { .. }
        | TrafficError::Connect { .. }
        | TrafficError::Silent { .. }
        | TrafficError::Timeout { .. } => "unreachable",
        _ => "error",
    }
}

fn client_config(target: &Target, test: &TestConfig, reverse: bool) -> ClientConfig {
    let mut cfg = ClientConfig {
        host: target.host.clone(),
        port: target.port,
        duration: test.duration,
        reverse,
        connect_timeout: Duration::from_secs(3),
        ..ClientConfig::default()
    };
    match test.mode {
        TestMode::Tcp => {}
        TestMode::Udp => {
            cfg.protocol = Protocol::Udp;
            cfg.bitrate = Some(test.rate);
        }
        TestMode::Rr => cfg.mode = linerate_traffic::config::Mode::Rr,
    }
    cfg
}

/// The agent's running state.
struct Agent {
    path: PathBuf,
    cfg: Config,
    metrics: Arc<Metrics>,
    gate: Arc<TestGate>,
    store: crate::cmd::history::db::StoreRunArgs,
    stop: Arc<AtomicBool>,
    jobs: HashMap<JobKey, JobState>,
    targets: Vec<Target>,
    resolved_at: Option<Instant>,
    store_warned: bool,
}

/// How often DNS peers are resolved again.
const RESOLVE_EVERY: Duration = Duration::from_secs(10);

impl Agent {
    fn reload(&mut self) {
        match config::load(&self.path) {
            Ok(cfg) => {
                if cfg.listen != self.cfg.listen || cfg.metrics != self.cfg.metrics {
                    say("reloaded; listen and metrics addresses change only with a restart");
                } else {
                    say("reloaded the configuration");
                }
                let (listen, metrics) = (self.cfg.listen, self.cfg.metrics);
                self.cfg = Config {
                    listen,
                    metrics,
                    ..cfg
                };
                self.jobs.clear();
                self.resolved_at = None;
                self.metrics.reload("ok");
            }
            Err(e) => {
                say(&format!("warning: {e}; keeping the configuration in use"));
                self.metrics.reload("error");
            }
        }
    }

    fn refresh_targets(&mut self) {
        if self
            .resolved_at
            .is_some_and(|t| t.elapsed() < RESOLVE_EVERY)
        {
            return;
        }
        self.targets = self.cfg.targets(&mut |name, e| {
            say(&format!(
                "warning: {name} does not resolve ({e}); no peers from it this round"
            ));
        });
        self.resolved_at = Some(Instant::now());
        let now = Instant::now();
        // New jobs start at a random point of their interval, so a mesh started at once
        // does not test in lock step; jobs of peers gone from DNS are dropped.
        let mut live = HashMap::new();
        for target in &self.targets {
            for (i, t) in self.cfg.tests.iter().enumerate() {
                let key = JobKey {
                    target: target.clone(),
                    test: i,
                };
                let state = self.jobs.get(&key).copied().unwrap_or(JobState {
                    due: now + t.every.mul_f64(random_unit()),
                    busy: 0,
                });
                live.insert(key, state);
            }
        }
        self.jobs = live;
    }

    /// The job due first, if it is due.
    fn due(&self) -> Option<JobKey> {
        let now = Instant::now();
        self.jobs
            .iter()
            .filter(|(_, s)| s.due <= now)
            .min_by_key(|(_, s)| s.due)
            .map(|(k, _)| k.clone())
    }

    /// Runs one job (both directions of a throughput test), then schedules it again.
    fn run_job(&mut self, key: &JobKey) {
        let test = self.cfg.tests[key.test].clone();
        let labels = TestLabels {
            peer: key.target.label.clone(),
            test: test.mode.name().to_owned(),
        };
        let directions: &[(&str, bool)] = if test.mode.is_throughput() {
            &[("send", false), ("receive", true)]
        } else {
            &[("send", false)]
        };
        let mut busy = false;
        let mut held_here = false;
        for &(direction, reverse) in directions {
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            // A throughput test holds the host: not while this agent's server serves one.
            let guard = if test.mode.is_throughput() {
                match TestGate::try_take(&self.gate) {
                    Some(g) => Some(g),
                    None => {
                        held_here = true;
                        break;
                    }
                }
            } else {
                None
            };
            let cfg = client_config(&key.target, &test, reverse);
            let started = Instant::now();
            let outcome = linerate_traffic::run_client(&cfg, &self.stop, &mut |_| {});
            drop(guard);
            let seconds = started.elapsed().as_secs_f64();
            match outcome {
                Ok(result) => {
                    let doc = linerate_traffic::iperf3_json::document(&result);
                    self.metrics
                        .completed(&labels, direction, &doc, seconds, unix_now());
                    self.keep(&doc);
                }
                Err(TrafficError::Interrupted) => return,
                Err(e) => {
                    let why = reason(&e);
                    self.metrics.failed(&labels, why, seconds);
                    if why == "busy" {
                        busy = true;
                    } else {
                        say(&format!(
                            "{} to {} ({}:{}) {direction}: {why}: {e}",
                            labels.test, labels.peer, key.target.host, key.target.port
                        ));
                    }
                    break;
                }
            }
        }
        let now = Instant::now();
        if let Some(state) = self.jobs.get_mut(key) {
            if held_here {
                // This host's own server holds the gate for one test of at most its duration:
                // try again shortly, without the back-off meant for a busy peer.
                state.due = now + Duration::from_secs_f64(0.2 + 0.3 * random_unit());
            } else if busy {
                // Back off: 0.5–1.5 s, doubling with each busy answer, never past the interval.
                state.busy += 1;
                let base = 0.5 * f64::from(1u32 << state.busy.min(5));
                let wait = Duration::from_secs_f64(base * (0.5 + random_unit())).min(test.every);
                state.due = now + wait;
            } else {
                state.busy = 0;
                let jitter = 0.9 + 0.2 * random_unit();
                state.due = now + test.every.mul_f64(jitter);
            }
        }
    }

    /// Stores a result; a store that fails is reported once, and the agent goes on.
    fn keep(&mut self, doc: &linerate_iperf3::Document) {
        if let Err(e) = crate::cmd::history::db::store_measured_run(&self.store, doc, None, None) {
            if !self.store_warned {
                say(&format!("warning: results are not stored: {e:#}"));
                self.store_warned = true;
            }
        }
    }
}

/// The server's log records: printed (as `linerate server` prints them) and counted.
fn server_log(metrics: Arc<Metrics>) -> linerate_traffic::server::LogSink {
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
        let who = rec.peer.map(|p| format!("[{p}] ")).unwrap_or_default();
        say(&format!("server: {who}{}", rec.message));
    })
}

/// Serves `/metrics` until `stop` is raised.
fn serve_metrics(http: &tiny_http::Server, metrics: &Metrics, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let Ok(Some(req)) = http.recv_timeout(Duration::from_millis(200)) else {
            continue;
        };
        let response = match (req.method(), req.url()) {
            (tiny_http::Method::Get, "/metrics") => {
                // OpenMetrics to whoever asks for it (Prometheus does), else the older text.
                let open = req.headers().iter().any(|h| {
                    h.field.equiv("Accept")
                        && h.value.as_str().contains("application/openmetrics-text")
                });
                let (body, kind): (String, &[u8]) = if open {
                    (
                        metrics.encode(),
                        b"application/openmetrics-text; version=1.0.0; charset=utf-8",
                    )
                } else {
                    (
                        metrics.encode_prometheus_text(),
                        b"text/plain; version=0.0.4; charset=utf-8",
                    )
                };
                let header = tiny_http::Header::from_bytes(&b"Content-Type"[..], kind).ok();
                let mut r = tiny_http::Response::from_string(body);
                if let Some(h) = header {
                    r.add_header(h);
                }
                r
            }
            (tiny_http::Method::Get, "/") => {
                tiny_http::Response::from_string("linerate agent: metrics at /metrics\n")
            }
            _ => tiny_http::Response::from_string("not found\n").with_status_code(404),
        };
        let _ = req.respond(response);
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cfg = config::load(&args.config)?;
    if args.check {
        let targets = cfg.targets(&mut |name, e| {
            say(&format!("warning: {name} does not resolve now ({e})"));
        });
        let mut text = format!(
            "{}: valid. Serves tests on {}, metrics on http://{}/metrics; {} peer(s) now, {} test(s):\n",
            args.config.display(),
            cfg.listen,
            cfg.metrics,
            targets.len(),
            cfg.tests.len()
        );
        for t in &cfg.tests {
            text.push_str(&format!(
                "  {} for {:?} every {:?}{}\n",
                t.mode.name(),
                t.duration,
                t.every,
                if t.mode.is_throughput() {
                    ", each direction"
                } else {
                    ""
                }
            ));
        }
        crate::output::print_text(&text)?;
        return Ok(ExitCode::SUCCESS);
    }
    let stop = crate::stop::Stop::install()?;
    let hup = Arc::new(AtomicBool::new(false));
    signal::set_flag_on(&[Signal::SIGHUP], &hup).context("installing the SIGHUP handler")?;
    let metrics = Arc::new(Metrics::new());
    let gate = TestGate::new();
    let server = Server::bind(
        ServerConfig {
            bind: Some(cfg.listen.ip()),
            port: cfg.listen.port(),
            gate: Some(Arc::clone(&gate)),
            ..ServerConfig::default()
        },
        server_log(Arc::clone(&metrics)),
    )
    .with_context(|| format!("starting the test server on {}", cfg.listen))?;
    let http = tiny_http::Server::http(cfg.metrics)
        .map_err(|e| anyhow::anyhow!("serving metrics on {}: {e}", cfg.metrics))?;
    say(&format!(
        "serving tests on {}, metrics on http://{}/metrics; {} peer(s), {} test(s)",
        cfg.listen,
        cfg.metrics,
        cfg.peers.len(),
        cfg.tests.len()
    ));
    let flag = Arc::clone(stop.flag());
    std::thread::scope(|s| -> anyhow::Result<()> {
        let server_thread = s.spawn(|| server.serve(&flag));
        s.spawn(|| serve_metrics(&http, &metrics, &flag));
        let mut agent = Agent {
            path: args.config.clone(),
            cfg,
            metrics: Arc::clone(&metrics),
            gate,
            store: args.store.clone(),
            stop: Arc::clone(&flag),
            jobs: HashMap::new(),
            targets: Vec::new(),
            resolved_at: None,
            store_warned: false,
        };
        while !stop.requested() {
            if hup.swap(false, Ordering::Relaxed) {
                agent.reload();
            }
            agent.refresh_targets();
            match agent.due() {
                Some(key) => agent.run_job(&key),
                None => {
                    stop.sleep_until(Instant::now() + Duration::from_millis(100));
                }
            }
            if server_thread.is_finished() {
                break;
            }
        }
        flag.store(true, Ordering::Relaxed);
        match server_thread.join() {
            Ok(r) => r.context("the test server")?,
            Err(_) => anyhow::bail!("the test server panicked"),
        }
        Ok(())
    })?;
    Ok(stop
        .signal()
        .map_or(ExitCode::SUCCESS, crate::stop::exit_code))
}
