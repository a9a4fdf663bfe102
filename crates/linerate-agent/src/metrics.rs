//! The agent's Prometheus metrics, kept by the prometheus-client crate and exposed in its text
//! format. Names start with `linerate_`, use base units (bytes, seconds; counters end in
//! `_total`, which the crate appends), and carry the `peer` (and `test`, `direction`) labels.

use std::sync::atomic::AtomicU64;

use linerate_iperf3::Document;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// A path and test: who, what, which way.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PathLabels {
    /// The peer's label.
    pub peer: String,
    /// The test's mode.
    pub test: String,
    /// `send` or `receive`.
    pub direction: String,
}

/// A peer and test.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TestLabels {
    /// The peer's label.
    pub peer: String,
    /// The test's mode.
    pub test: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FailureLabels {
    peer: String,
    test: String,
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PeerLabels {
    peer: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QuantileLabels {
    peer: String,
    test: String,
    percentile: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: String,
}

type FloatGauge = Gauge<f64, AtomicU64>;
type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

/// Round-trip latency buckets: 10 µs to ~5 s.
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.000_01, 2.0, 20))
}

/// Test duration buckets: 0.25 s to ~2 min.
fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.25, 2.0, 10))
}

/// Every metric of the agent.
pub struct Metrics {
    registry: Registry,
    throughput: Family<PathLabels, FloatGauge>,
    retransmits: Family<PathLabels, FloatGauge>,
    rtt: Family<PathLabels, FloatGauge>,
    loss: Family<PathLabels, FloatGauge>,
    latency: HistogramFamily<TestLabels>,
    latency_quantile: Family<QuantileLabels, FloatGauge>,
    duration: HistogramFamily<TestLabels>,
    runs: Family<TestLabels, Counter>,
    failures: Family<FailureLabels, Counter>,
    last_success: Family<TestLabels, FloatGauge>,
    peer_up: Family<PeerLabels, FloatGauge>,
    served: Family<ResultLabels, Counter>,
    refused: Family<ReasonLabels, Counter>,
    reloads: Family<ResultLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Every metric registered, none set yet.
    pub fn new() -> Metrics {
        let mut registry = Registry::default();
        let m = Metrics {
            throughput: Family::default(),
            retransmits: Family::default(),
            rtt: Family::default(),
            loss: Family::default(),
            latency: Family::new_with_constructor(latency_histogram),
            latency_quantile: Family::default(),
            duration: Family::new_with_constructor(duration_histogram),
            runs: Family::default(),
            failures: Family::default(),
            last_success: Family::default(),
            peer_up: Family::default(),
            served: Family::default(),
            refused: Family::default(),
            reloads: Family::default(),
            registry: Registry::default(),
        };
        registry.register(
            "linerate_test_throughput_bytes_per_second",
            "Receiver-side throughput of the last test to the peer, per direction",
            m.throughput.clone(),
        );
        registry.register(
            "linerate_test_retransmits",
            "TCP retransmits of the sender in the last test to the peer",
            m.retransmits.clone(),
        );
        registry.register(
            "linerate_test_rtt_seconds",
            "Mean smoothed TCP round-trip time of the sender in the last test to the peer",
            m.rtt.clone(),
        );
        registry.register(
            "linerate_test_udp_loss_ratio",
            "Share of UDP datagrams lost in the last test to the peer (0 to 1)",
            m.loss.clone(),
        );
        registry.register(
            "linerate_test_latency_seconds",
            "Request/response round-trip latency of every transaction of rr tests",
            m.latency.clone(),
        );
        registry.register(
            "linerate_test_latency_percentile_seconds",
            "Request/response latency percentiles of the last rr test to the peer",
            m.latency_quantile.clone(),
        );
        registry.register(
            "linerate_test_duration_seconds",
            "Wall-clock time of each test, connection and results exchange included",
            m.duration.clone(),
        );
        registry.register(
            "linerate_test_runs",
            "Tests that completed, per peer and test",
            m.runs.clone(),
        );
        registry.register(
            "linerate_test_failures",
            "Tests that failed, by reason (unreachable, busy, error)",
            m.failures.clone(),
        );
        registry.register(
            "linerate_test_last_success_timestamp_seconds",
            "When a test to the peer last completed (Unix time)",
            m.last_success.clone(),
        );
        registry.register(
            "linerate_peer_up",
            "1 when the last test to the peer reached it, 0 when it was unreachable",
            m.peer_up.clone(),
        );
        registry.register(
            "linerate_server_tests",
            "Tests this agent's server ran for other hosts, by result (served, failed)",
            m.served.clone(),
        );
        registry.register(
            "linerate_server_refusals",
            "Connections or tests this agent's server refused, by reason",
            m.refused.clone(),
        );
        registry.register(
            "linerate_agent_config_reloads",
            "Configuration reloads (SIGHUP), by result (ok, error)",
            m.reloads.clone(),
        );
        Metrics { registry, ..m }
    }

    /// The exposition in OpenMetrics text (what the crate writes, and what Prometheus asks
    /// for first).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }

    /// The exposition in Prometheus's older text format (0.0.4), for scrapers and tools that
    /// do not read OpenMetrics (`promtool check metrics`, curl users).
    pub fn encode_prometheus_text(&self) -> String {
        openmetrics_to_text(&self.encode())
    }

    /// Records a completed test: its document's figures for `direction`.
    pub fn completed(
        &self,
        t: &TestLabels,
        direction: &str,
        doc: &Document,
        seconds: f64,
        now: f64,
    ) {
        let path = PathLabels {
            peer: t.peer.clone(),
            test: t.test.clone(),
            direction: direction.to_owned(),
        };
        let end = &doc.end;
        let rr = doc.linerate.as_ref().and_then(|l| l.rr.as_ref());
        if rr.is_none() {
            if let Some(r) = end.sum_received.as_ref().or(end.sum.as_ref()) {
                self.throughput
                    .get_or_create(&path)
                    .set(r.bits_per_second / 8.0);
            }
            if let Some(r) = end.sum_sent.as_ref().and_then(|s| s.retransmits) {
                self.retransmits.get_or_create(&path).set(r as f64);
            }
        }
        let rtts: Vec<u64> = end
            .streams
            .iter()
            .filter_map(|s| s.sender.as_ref()?.mean_rtt)
            .collect();
        if !rtts.is_empty() {
            let mean_us = rtts.iter().sum::<u64>() as f64 / rtts.len() as f64;
            self.rtt.get_or_create(&path).set(mean_us / 1e6);
        }
        if let Some(p) = end.sum.as_ref().and_then(|s| s.lost_percent) {
            if doc
                .start
                .test_start
                .as_ref()
                .is_some_and(|s| s.protocol.as_deref() == Some("UDP"))
            {
                self.loss.get_or_create(&path).set(p / 100.0);
            }
        }
        if let Some(rr) = rr {
            let h = self.latency.get_or_create(t);
            let scale = if rr.histogram.unit == "ns" {
                1e-9
            } else {
                1e-6
            };
            for [value, count] in &rr.histogram.buckets {
                for _ in 0..*count {
                    h.observe(*value as f64 * scale);
                }
            }
            let l = &rr.latency;
            for (q, us) in [("50", l.p50_us), ("90", l.p90_us), ("99", l.p99_us)] {
                self.latency_quantile
                    .get_or_create(&QuantileLabels {
                        peer: t.peer.clone(),
                        test: t.test.clone(),
                        percentile: q.to_owned(),
                    })
                    .set(us / 1e6);
            }
            // rr has no sender RTT of its own: the median transaction time stands for it.
            self.rtt.get_or_create(&path).set(l.p50_us / 1e6);
        }
        self.duration.get_or_create(t).observe(seconds);
        self.runs.get_or_create(t).inc();
        self.last_success.get_or_create(t).set(now);
        self.peer_up(&t.peer, true);
    }

    /// Records a failed test.
    pub fn failed(&self, t: &TestLabels, reason: &str, seconds: f64) {
        self.failures
            .get_or_create(&FailureLabels {
                peer: t.peer.clone(),
                test: t.test.clone(),
                reason: reason.to_owned(),
            })
            .inc();
        self.duration.get_or_create(t).observe(seconds);
        if reason == "unreachable" {
            self.peer_up(&t.peer, false);
        }
    }

    fn peer_up(&self, peer: &str, up: bool) {
        self.peer_up
            .get_or_create(&PeerLabels {
                peer: peer.to_owned(),
            })
            .set(if up { 1.0 } else { 0.0 });
    }

    /// A test this agent's server ran (`served` or `failed`).
    pub fn server_test(&self, result: &str) {
        self.served
            .get_or_create(&ResultLabels {
                result: result.to_owned(),
            })
            .inc();
    }

    /// A refusal by this agent's server.
    pub fn server_refusal(&self, reason: &str) {
        self.refused
            .get_or_create(&ReasonLabels {
                reason: reason.to_owned(),
            })
            .inc();
    }

    /// A configuration reload (`ok` or `error`).
    pub fn reload(&self, result: &str) {
        self.reloads
            .get_or_create(&ResultLabels {
                result: result.to_owned(),
            })
            .inc();
    }
}

/// OpenMetrics text to Prometheus text 0.0.4: the two differ, for what the crate writes, in
/// that OpenMetrics names a counter family without its `_total` suffix in `# HELP`/`# TYPE`
/// (the samples carry it), has `# UNIT` lines, and ends with `# EOF`.
pub fn openmetrics_to_text(om: &str) -> String {
    let mut counters = std::collections::HashSet::new();
    for line in om.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            if let Some(name) = rest.strip_suffix(" counter") {
                counters.insert(name.to_owned());
            }
        }
    }
    let mut out = String::with_capacity(om.len());
    for line in om.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|p| {
            let rest = line.strip_prefix(p)?;
            let (name, tail) = rest.split_once(' ').unwrap_or((rest, ""));
            counters
                .contains(name)
                .then(|| format!("{p}{name}_total {tail}").trim_end().to_owned())
        });
        out.push_str(renamed.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_named_with_total_in_the_old_text_format() {
        let om = "# HELP linerate_test_runs Tests.\n# TYPE linerate_test_runs counter\n\
                  linerate_test_runs_total{peer=\"b\"} 2\n# HELP g A gauge.\n# TYPE g gauge\ng 1\n# EOF\n";
        assert_eq!(
            openmetrics_to_text(om),
            "# HELP linerate_test_runs_total Tests.\n# TYPE linerate_test_runs_total counter\n\
             linerate_test_runs_total{peer=\"b\"} 2\n# HELP g A gauge.\n# TYPE g gauge\ng 1\n"
        );
    }

    #[test]
    fn a_completed_test_and_a_failure_show_with_their_labels() {
        let m = Metrics::new();
        let t = TestLabels {
            peer: "b".into(),
            test: "tcp".into(),
        };
        m.failed(&t, "unreachable", 3.0);
        let text = m.encode_prometheus_text();
        assert!(
            text.contains(
                "linerate_test_failures_total{peer=\"b\",test=\"tcp\",reason=\"unreachable\"} 1"
            ),
            "{text}"
        );
        assert!(text.contains("linerate_peer_up{peer=\"b\"} 0"), "{text}");
        assert!(!text.contains("# EOF"));
    }
}
