//! The cost of a bit: each side's CPU seconds per GB moved (TCP) or per million datagrams
//! (UDP), user and system apart, computed from a finished test's document.
//!
//! The CPU time comes from the side's recorded evidence (`linerate.evidence`, the process's
//! user and system time over the measured period) where there is some, else from iperf3's
//! `end.cpu_utilization_percent` (which covers the whole test). A document written by iperf3
//! itself has only the latter, so the same procedure prices both tools. Whatever cannot be
//! read is absent (`None`), never 0.

use serde::{Deserialize, Serialize};

use crate::evidence::Evidence;
use crate::{CpuUtilization, Document};

/// What a cost is counted per.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CostUnit {
    /// Per 10⁹ bytes received (TCP).
    Gb,
    /// Per 10⁶ datagrams received (UDP).
    MillionDatagrams,
}

impl CostUnit {
    /// The unit as people read it after "CPU s/".
    pub fn label(self) -> &'static str {
        match self {
            CostUnit::Gb => "GB",
            CostUnit::MillionDatagrams => "M datagrams",
        }
    }
}

/// Where a side's CPU time was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CpuSource {
    /// The side's recorded evidence (`linerate.evidence`): the measured period only.
    Evidence,
    /// iperf3's `cpu_utilization_percent`: the whole test, omitted seconds included.
    Iperf3,
}

/// One side's cost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SideCost {
    /// Where the CPU time was read.
    pub source: CpuSource,
    /// User CPU seconds per unit.
    pub user_seconds: f64,
    /// System CPU seconds per unit (the kernel's copies and protocol work).
    pub system_seconds: f64,
    /// User plus system CPU seconds per unit.
    pub total_seconds: f64,
}

/// The `linerate.cost` object: both sides' CPU seconds per unit moved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestCost {
    /// What the seconds are per.
    pub unit: CostUnit,
    /// How many units moved (GB or million datagrams received).
    pub moved: f64,
    /// The period the units moved in, seconds.
    pub seconds: f64,
    /// This side (the client, or whoever wrote the document).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<SideCost>,
    /// The peer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<SideCost>,
}

impl TestCost {
    /// The cost of the test `doc` records; `None` when nothing moved or the document does
    /// not say how much.
    pub fn of(doc: &Document) -> Option<TestCost> {
        let udp = doc
            .start
            .test_start
            .as_ref()
            .and_then(|t| t.protocol.as_deref())
            .is_some_and(|p| p.eq_ignore_ascii_case("udp"));
        let (unit, moved, seconds) = moved(doc, udp)?;
        if moved <= 0.0 || seconds <= 0.0 {
            return None;
        }
        let evidence = doc.linerate.as_ref().and_then(|l| l.evidence.as_ref());
        let cpu = doc.end.cpu_utilization_percent.as_ref();
        let local = evidence
            .and_then(|e| from_evidence(&e.local))
            .or_else(|| cpu.and_then(|c| from_percent(c.host_user, c.host_system, seconds)));
        let remote = evidence
            .and_then(|e| e.remote.as_ref())
            .and_then(from_evidence)
            .or_else(|| cpu.and_then(|c| remote_percent(c, seconds)));
        let per = |s: Option<(CpuSource, f64, f64)>| {
            s.map(|(source, user, system)| SideCost {
                source,
                user_seconds: user / moved,
                system_seconds: system / moved,
                total_seconds: (user + system) / moved,
            })
        };
        Some(TestCost {
            unit,
            moved,
            seconds,
            local: per(local),
            remote: per(remote),
        })
    }
}

/// Units moved and the period: received bytes (TCP) or received datagrams (UDP).
fn moved(doc: &Document, udp: bool) -> Option<(CostUnit, f64, f64)> {
    let end = &doc.end;
    if udp {
        let pps = doc.linerate.as_ref().and_then(|l| l.pps.as_ref());
        let sum = end.sum.as_ref().or(end.sum_received.as_ref())?;
        let received = match pps {
            Some(p) => p.received_packets,
            None => {
                let sent = sum.packets?;
                sent.saturating_sub(sum.lost_packets.unwrap_or(0))
            }
        };
        let seconds = sum.seconds.or_else(|| span(sum.start, sum.end))?;
        Some((CostUnit::MillionDatagrams, received as f64 / 1e6, seconds))
    } else {
        let sum = end.sum_received.as_ref()?;
        let mut bytes = sum.bytes;
        if let Some(r) = &end.sum_received_bidir_reverse {
            bytes += r.bytes;
        }
        let seconds = sum.seconds.or_else(|| span(sum.start, sum.end))?;
        Some((CostUnit::Gb, bytes as f64 / 1e9, seconds))
    }
}

fn span(start: Option<f64>, end: Option<f64>) -> Option<f64> {
    Some(end? - start.unwrap_or(0.0))
}

/// CPU seconds (user, system) from a side's evidence.
fn from_evidence(e: &Evidence) -> Option<(CpuSource, f64, f64)> {
    let c = &e.cpu;
    if c.seconds <= 0.0 {
        return None;
    }
    Some((
        CpuSource::Evidence,
        c.process.user_percent / 100.0 * c.seconds,
        c.process.system_percent / 100.0 * c.seconds,
    ))
}

/// CPU seconds (user, system) from iperf3's percentages of the test's wall time.
fn from_percent(
    user: Option<f64>,
    system: Option<f64>,
    seconds: f64,
) -> Option<(CpuSource, f64, f64)> {
    Some((
        CpuSource::Iperf3,
        user? / 100.0 * seconds,
        system? / 100.0 * seconds,
    ))
}

fn remote_percent(c: &CpuUtilization, seconds: f64) -> Option<(CpuSource, f64, f64)> {
    // iperf3 writes zeros for a remote it never heard from: that is absence, not free.
    if c.remote_total.is_some_and(|t| t <= 0.0) {
        return None;
    }
    from_percent(c.remote_user, c.remote_system, seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(json: &str) -> Document {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn tcp_cost_from_iperf3_percentages() {
        // 10 s, 20 GB received; local 50 % user + 100 % system = 15 CPU s → 0.75 s/GB.
        let d = doc(
            r#"{"start":{"test_start":{"protocol":"TCP"}},"intervals":[],
            "end":{"sum_received":{"start":0,"end":10,"seconds":10,"bytes":20000000000,"bits_per_second":1.6e10},
            "cpu_utilization_percent":{"host_total":150,"host_user":50,"host_system":100,
            "remote_total":40,"remote_user":10,"remote_system":30}}}"#,
        );
        let c = TestCost::of(&d).unwrap();
        assert_eq!(c.unit, CostUnit::Gb);
        let l = c.local.unwrap();
        assert_eq!(l.source, CpuSource::Iperf3);
        assert!((l.user_seconds - 0.25).abs() < 1e-9);
        assert!((l.system_seconds - 0.5).abs() < 1e-9);
        assert!((l.total_seconds - 0.75).abs() < 1e-9);
        let r = c.remote.unwrap();
        assert!((r.total_seconds - 0.2).abs() < 1e-9);
    }

    #[test]
    fn udp_cost_counts_received_datagrams_and_absent_remote_is_none() {
        // 2 M sent, 1 M lost → 1 M received; 10 s at 100 % system → 10 s per M datagrams.
        let d = doc(
            r#"{"start":{"test_start":{"protocol":"UDP"}},"intervals":[],
            "end":{"sum":{"start":0,"end":10,"seconds":10,"bytes":128000000,"bits_per_second":1e8,
            "packets":2000000,"lost_packets":1000000},
            "cpu_utilization_percent":{"host_total":100,"host_user":0,"host_system":100,
            "remote_total":0,"remote_user":0,"remote_system":0}}}"#,
        );
        let c = TestCost::of(&d).unwrap();
        assert_eq!(c.unit, CostUnit::MillionDatagrams);
        assert!((c.moved - 1.0).abs() < 1e-9);
        assert!((c.local.unwrap().system_seconds - 10.0).abs() < 1e-9);
        assert_eq!(c.remote, None);
    }

    #[test]
    fn nothing_moved_has_no_cost() {
        let d = doc(
            r#"{"start":{},"intervals":[],"end":{"sum_received":{"seconds":10,"bytes":0,"bits_per_second":0}}}"#,
        );
        assert_eq!(TestCost::of(&d), None);
        let d = doc(r#"{"start":{},"intervals":[],"end":{}}"#);
        assert_eq!(TestCost::of(&d), None);
    }
}
