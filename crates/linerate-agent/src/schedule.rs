//! The scheduler: one job per (peer, test), each due at a jittered point of its interval; a
//! busy peer is retried after a random, growing back-off; a reload replaces the tests and
//! peers (not the addresses the agent serves on).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use linerate_traffic::gate::TestGate;
use linerate_traffic::{ClientConfig, Protocol, TrafficError};

use crate::config::{self, Config, Target, TestConfig, TestMode};
use crate::metrics::{Metrics, TestLabels};
use crate::sink::{Event, Sink};

/// How often DNS peers are resolved again.
const RESOLVE_EVERY: Duration = Duration::from_secs(10);

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

/// The scheduler's state.
pub(crate) struct Scheduler<'a> {
    path: PathBuf,
    cfg: Config,
    metrics: &'a Metrics,
    gate: &'a std::sync::Arc<TestGate>,
    sink: &'a dyn Sink,
    stop: &'a AtomicBool,
    jobs: HashMap<JobKey, JobState>,
    targets: Vec<Target>,
    resolved_at: Option<Instant>,
}

impl<'a> Scheduler<'a> {
    /// A scheduler with no job yet (the first [`Scheduler::step`] resolves the peers).
    pub(crate) fn new(
        path: PathBuf,
        cfg: Config,
        metrics: &'a Metrics,
        gate: &'a std::sync::Arc<TestGate>,
        sink: &'a dyn Sink,
        stop: &'a AtomicBool,
    ) -> Self {
        Scheduler {
            path,
            cfg,
            metrics,
            gate,
            sink,
            stop,
            jobs: HashMap::new(),
            targets: Vec::new(),
            resolved_at: None,
        }
    }

    /// One turn of the main loop: resolves peers when due, runs the job due first; `false`
    /// when nothing was due (the caller naps).
    pub(crate) fn step(&mut self) -> bool {
        self.refresh_targets();
        match self.due() {
            Some(key) => {
                self.run_job(&key);
                true
            }
            None => false,
        }
    }

    /// Reads the configuration again: tests and peers change now, the addresses served on
    /// only with a restart; a bad file is reported and the one in use kept.
    pub(crate) fn reload(&mut self) {
        match config::load(&self.path) {
            Ok(cfg) => {
                let addresses_changed =
                    cfg.listen != self.cfg.listen || cfg.metrics != self.cfg.metrics;
                self.sink.event(&Event::Reloaded { addresses_changed });
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
                self.sink.event(&Event::ReloadFailed(&e));
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
        let sink = self.sink;
        self.targets = self.cfg.targets(&mut |name, error| {
            sink.event(&Event::Unresolved { name, error });
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
                match TestGate::try_take(self.gate) {
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
            let outcome = linerate_traffic::run_client(&cfg, self.stop, &mut |_| {});
            drop(guard);
            let seconds = started.elapsed().as_secs_f64();
            match outcome {
                Ok(result) => {
                    let doc = linerate_traffic::iperf3_json::document(&result);
                    self.metrics
                        .completed(&labels, direction, &doc, seconds, unix_now());
                    self.sink.result(&doc);
                }
                Err(TrafficError::Interrupted) => return,
                Err(e) => {
                    let why = reason(&e);
                    self.metrics.failed(&labels, why, seconds);
                    if why == "busy" {
                        busy = true;
                    } else {
                        self.sink.event(&Event::TestFailed {
                            mode: test.mode,
                            peer: &labels.peer,
                            host: &key.target.host,
                            port: key.target.port,
                            direction,
                            reason: why,
                            error: &e,
                        });
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
}
