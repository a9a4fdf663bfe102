//! One data set as counted: the plan it was read by, its response times (distribution and
//! fixed-width bins), and every skipped line by reason with the first line numbers. Memory is
//! bounded: the histogram (or the distinct values with `--exact`), the bins, and a few line
//! numbers per skip reason.

use std::collections::BTreeMap;

use linerate_stats::distribution::{Distribution, LinearBins};

use crate::filter::Filters;
use crate::format::{FieldChoice, Format, Layout};
use crate::input::ReadEnd;
use crate::progress::Progress;
use crate::reason::{Outcome, Reason};

/// Line numbers kept per skip reason.
pub const FIRST_LINES: usize = 5;

/// How to read and bin a data set.
pub struct Plan<'a> {
    /// `--format`.
    pub format: Format,
    /// `--field`, `--unit`, `--regex`.
    pub choice: &'a FieldChoice,
    /// The filters.
    pub filters: &'a Filters,
    /// `--exact`.
    pub exact: bool,
    /// `--last N`.
    pub last: Option<u64>,
    /// `--bin` in ns.
    pub bin_ns: u64,
    /// Number of bins up to `--max`.
    pub bins: usize,
    /// `--threshold` in ns.
    pub threshold_ns: u64,
    /// Parsing threads (1: parse on the reading thread).
    pub threads: usize,
    /// Told how far the reading of each file has come.
    pub progress: &'a dyn Progress,
}

/// Skips of one reason.
#[derive(Debug, Clone, Default)]
pub struct Skips {
    /// How many lines.
    pub count: u64,
    /// The first few as (input index, line number).
    pub first: Vec<(usize, u64)>,
}

/// One input as read.
#[derive(Debug, Clone)]
pub struct InputInfo {
    /// Its name.
    pub name: String,
    /// Its layout.
    pub layout: Layout,
    /// How reading ended.
    pub end: ReadEnd,
}

/// The first line that gave no time, for the error when nothing parses.
#[derive(Debug, Clone)]
pub struct BadLine {
    /// Input index.
    pub input: usize,
    /// Line number.
    pub line: u64,
    /// The reason.
    pub reason: Reason,
    /// Up to 200 bytes of it, lossily decoded.
    pub text: String,
}

/// A data set's results.
pub struct DataSet {
    /// Inputs in order.
    pub inputs: Vec<InputInfo>,
    /// Lines considered (all, or the last N).
    pub lines: u64,
    /// Lines left out by filters.
    pub filtered: u64,
    /// Lines ending in CRLF (parsed normally).
    pub crlf_lines: u64,
    /// Skips by reason.
    pub skipped: BTreeMap<Reason, Skips>,
    /// The response times.
    pub distribution: Distribution,
    /// Fixed-width bins.
    pub bins: LinearBins,
    /// Samples strictly under the threshold.
    pub under_threshold: u64,
    /// The threshold.
    pub threshold_ns: u64,
    /// The first unusable line.
    pub first_bad: Option<BadLine>,
}

impl BadLine {
    /// Keeps up to 200 bytes of the line.
    pub fn new(input: usize, line: u64, reason: Reason, bytes: &[u8]) -> Self {
        Self {
            input,
            line,
            reason,
            text: String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned(),
        }
    }
}

impl DataSet {
    /// An empty data set for a plan.
    pub fn new(plan: &Plan<'_>) -> Self {
        Self {
            inputs: Vec::new(),
            lines: 0,
            filtered: 0,
            crlf_lines: 0,
            skipped: BTreeMap::new(),
            distribution: if plan.exact {
                Distribution::exact()
            } else {
                Distribution::histogram()
            },
            bins: LinearBins::new(plan.bin_ns, plan.bins),
            under_threshold: 0,
            threshold_ns: plan.threshold_ns,
            first_bad: None,
        }
    }

    /// Lines skipped in all.
    pub fn skipped_total(&self) -> u64 {
        self.skipped.values().map(|s| s.count).sum()
    }

    /// Counts one response time.
    #[inline]
    pub fn sample(&mut self, ns: u64) {
        self.distribution.record(ns);
        self.bins.record(ns);
        if ns < self.threshold_ns {
            self.under_threshold += 1;
        }
    }

    /// Counts one line's outcome.
    #[inline]
    pub fn count(&mut self, input: usize, line: u64, outcome: Outcome) {
        self.lines += 1;
        match outcome {
            Outcome::Sample(ns) => self.sample(ns),
            Outcome::Filtered => self.filtered += 1,
            Outcome::Skipped(reason) => {
                let skips = self.skipped.entry(reason).or_default();
                skips.count += 1;
                if skips.first.len() < FIRST_LINES {
                    skips.first.push((input, line));
                }
            }
        }
    }
}
