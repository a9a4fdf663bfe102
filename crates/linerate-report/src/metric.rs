//! What runs are measured in, and what follows from it: the value a comparison uses, the
//! series a chart draws over time, and the columns a summary table shows. One module per kind
//! of metric ([`throughput`], [`packet_rate`], [`transactions`], [`frame_rate`]): a new kind is
//! one more variant and one more module.
//!
//! A run `lab run` measured carries the value the lab compared ([`LabRun`]): that value is the
//! one used, so `compare` and `lab run` compare the same numbers.

pub mod frame_rate;
pub mod packet_rate;
pub mod throughput;
pub mod transactions;

use linerate_iperf3::linerate::Linerate;
use linerate_store::RunRecord;

use crate::unit::Unit;
use linerate_store::lab_run::{LabRun, LabRunError};

/// The quantity runs are valued, compared and charted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Receiver-side bit/s: tcp, udp, sctp (and modes without a metric of their own).
    Throughput,
    /// Received packets/s: pps.
    PacketRate,
    /// Transactions/s, with the latency percentiles: rr, crr.
    Transactions,
    /// RFC 2544's NDR, frames/s: rfc2544 (`lab rfc2544`, `lab run`'s rfc2544 workloads).
    FrameRate,
}

/// One step of a series over time: the value held from `start` to `end` (seconds since the
/// start of the run).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// Seconds since the start.
    pub start: f64,
    /// Seconds since the start.
    pub end: f64,
    /// The value over the step, in the metric's unit.
    pub value: f64,
}

/// A column of a summary table: its header, what it says (for the note under the table) and
/// its cell for a run, `None` where the run has no value (a column no run has a value for is
/// left out).
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// The header.
    pub header: &'static str,
    /// What the column holds, for the note under the table; empty when the header says it.
    pub note: &'static str,
    /// The cell.
    pub cell: fn(&RunRecord) -> Option<String>,
}

impl Metric {
    /// Every metric, in the order a report shows its tables.
    pub const ALL: [Metric; 4] = [
        Metric::Throughput,
        Metric::PacketRate,
        Metric::Transactions,
        Metric::FrameRate,
    ];

    /// The metric of a run of `mode` (`tcp`, `pps`, `rr`, …).
    pub fn of_mode(mode: &str) -> Metric {
        match mode {
            "pps" => Metric::PacketRate,
            "rr" | "crr" => Metric::Transactions,
            linerate_store::rfc2544::MODE => Metric::FrameRate,
            _ => Metric::Throughput,
        }
    }

    /// A run's metric: its lab workload's when `lab run` measured it (an iperf3 pps workload
    /// is stored as a udp run), else its mode's.
    pub fn of_run(run: &RunRecord) -> Metric {
        match LabRun::of(run) {
            Ok(Some(lab)) => Metric::of_mode(&lab.workload),
            _ => Metric::of_mode(&run.mode),
        }
    }

    /// The metric the runs share; throughput (which every run has) when they differ.
    pub fn of_runs<'a>(runs: impl IntoIterator<Item = &'a RunRecord>) -> Metric {
        let mut kinds = runs.into_iter().map(Metric::of_run);
        let Some(first) = kinds.next() else {
            return Metric::Throughput;
        };
        if kinds.all(|k| k == first) {
            first
        } else {
            Metric::Throughput
        }
    }

    /// The unit of its values.
    pub fn unit(self) -> Unit {
        match self {
            Metric::Throughput => Unit::BitRate,
            Metric::PacketRate | Metric::FrameRate => Unit::PacketRate,
            Metric::Transactions => Unit::TransactionRate,
        }
    }

    /// What it is called in a sentence or on an axis: `throughput`, `packet rate`,
    /// `transaction rate`.
    pub fn quantity(self) -> &'static str {
        match self {
            Metric::Throughput => "throughput",
            Metric::PacketRate => "packet rate",
            Metric::Transactions => "transaction rate",
            Metric::FrameRate => "NDR, frames/s",
        }
    }

    /// What one run's value is, in words (for "one value per repetition: …").
    pub fn run_value(self) -> &'static str {
        match self {
            Metric::Throughput => "each run's receiver-side throughput over the whole test",
            Metric::PacketRate => "each run's received packets per second over the whole test",
            Metric::Transactions => "each run's transactions per second over the whole test",
            Metric::FrameRate => {
                "each run's NDR (frames/s, the highest load forwarded without loss)"
            }
        }
    }

    /// What one interval's value is, in words (for "per-interval …").
    pub fn interval_value(self) -> &'static str {
        match self {
            Metric::Throughput => {
                "per-interval throughput of each run (the sum over streams for every reporting interval, warm-up excluded)"
            }
            Metric::PacketRate => {
                "per-interval packet rate of each run (the packets in every reporting interval over its length, warm-up excluded)"
            }
            Metric::Transactions => {
                "per-interval transaction rate of each run (the transactions in every reporting interval over its length)"
            }
            Metric::FrameRate => "none: an RFC 2544 search has no reporting intervals",
        }
    }

    /// The run's value over the whole test: what `lab run` compared when it measured the run
    /// in this metric's unit, else the metric's own reading of the run; `None` when the run
    /// has none (a pps run without packet counts).
    ///
    /// # Errors
    /// The run's lab facts do not read (see [`LabRun::of`]).
    pub fn value(self, run: &RunRecord) -> Result<Option<f64>, LabRunError> {
        if let Some(lab) = LabRun::of(run)? {
            if Unit::from_name(&lab.unit) == Some(self.unit()) {
                return Ok(Some(lab.value));
            }
        }
        Ok(match self {
            Metric::Throughput => Some(throughput::value(run)),
            Metric::PacketRate => packet_rate::value(run),
            Metric::Transactions => transactions::value(run),
            Metric::FrameRate => frame_rate::value(run),
        })
    }

    /// The run's value over time (forward direction, warm-up excluded); empty when the run
    /// has no interval samples of it.
    pub fn series(self, run: &RunRecord) -> Vec<Step> {
        match self {
            Metric::Throughput => throughput::series(run),
            Metric::PacketRate => packet_rate::series(run),
            Metric::Transactions => transactions::series(run),
            Metric::FrameRate => Vec::new(),
        }
    }

    /// The summary table's columns for runs of this metric, beside the ones every run has
    /// (run, start, test, time).
    pub fn columns(self) -> &'static [Column] {
        match self {
            Metric::Throughput => throughput::COLUMNS,
            Metric::PacketRate => packet_rate::COLUMNS,
            Metric::Transactions => transactions::COLUMNS,
            Metric::FrameRate => frame_rate::COLUMNS,
        }
    }

    /// The heading of its summary table when a report has runs of several metrics.
    pub fn runs_heading(self) -> &'static str {
        match self {
            Metric::Throughput => "Throughput runs",
            Metric::PacketRate => "Packet-rate runs",
            Metric::Transactions => "Request/response runs",
            Metric::FrameRate => "RFC 2544 runs",
        }
    }
}

/// The document's `linerate` object, when it has one that reads (it was read when the run was
/// stored, so it does).
fn extension(run: &RunRecord) -> Option<Linerate> {
    serde::Deserialize::deserialize(run.document.get("linerate")?).ok()
}

#[cfg(test)]
mod tests;
