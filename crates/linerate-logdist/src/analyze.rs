//! Streaming one data set (one or more inputs read as one log) into its distribution, bins
//! and skip statistics. Memory is bounded: the histogram (or the distinct values with
//! `--exact`), the bins, a few line numbers per skip reason, and with `--last N` a ring of N
//! outcomes.

use std::collections::{BTreeMap, VecDeque};

use anyhow::Context;
use linerate_stats::distribution::{Distribution, LinearBins};

use super::filter::Filters;
use super::format::{self, FieldChoice, Format, Layout};
use super::input::{LineReader, ReadEnd, Source};
use super::parse::{Outcome, Reason};

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

/// Reads every input of a data set: on worker threads when there are several cores and no
/// `--last`, else on this thread.
pub fn analyze(sources: &[Source], plan: &Plan<'_>) -> anyhow::Result<DataSet> {
    let Some(first_source) = sources.first() else {
        anyhow::bail!("no input given");
    };
    let mut first = LineReader::open(first_source)?;
    let layout = resolve_layout(&mut first, &first_source.name(), plan)?;
    if plan.last.is_none() && plan.threads > 1 {
        super::parallel::analyze(sources, first, &layout, plan)
    } else {
        sequential(sources, first, &layout, plan)
    }
}

/// The layout: the explicit format, or the one detected from the first input's start.
fn resolve_layout(reader: &mut LineReader, name: &str, plan: &Plan<'_>) -> anyhow::Result<Layout> {
    match plan.format {
        Format::Auto if plan.choice.regex.is_some() => Layout::explicit(Format::Regex, plan.choice),
        Format::Auto => {
            reader
                .peek()
                .with_context(|| format!("cannot read {name}"))?;
            let broken = reader.stream_error().map(str::to_owned);
            let head = reader
                .peek()
                .with_context(|| format!("cannot read {name}"))?;
            let complete = head.len() < (1 << 18);
            format::detect(head, complete, plan.choice).map_err(|why| {
                if let Some(why) = why {
                    return format!("{name}: cannot detect the log format: {why}");
                }
                let first = head
                    .split(|&b| b == b'\n')
                    .find(|l| !l.trim_ascii().is_empty())
                    .map(|l| String::from_utf8_lossy(&l[..l.len().min(200)]).into_owned())
                    .unwrap_or_default();
                if let (true, Some(err)) = (first.is_empty(), &broken) {
                    format!("{name}: the gzip stream breaks before the first line: {err}")
                } else if first.is_empty() {
                    format!("{name}: no log lines to detect the format from")
                } else {
                    format!(
                        "{name}: cannot detect the log format from the first lines \
                         (first line: {first:?}); name it with --format \
                         nginx|apache-us|apache-s|json or give --regex"
                    )
                }
            })
        }
        explicit => Layout::explicit(explicit, plan.choice),
    }
    .map_err(anyhow::Error::msg)
}

/// Reads the inputs in order on this thread (needed for `--last`).
fn sequential(
    sources: &[Source],
    first: LineReader,
    layout: &Layout,
    plan: &Plan<'_>,
) -> anyhow::Result<DataSet> {
    let mut set = DataSet::new(plan);
    let mut ring: VecDeque<(usize, u64, Outcome)> = VecDeque::new();
    let mut line_parser = layout.parser(plan.choice).map_err(anyhow::Error::msg)?;
    let mut first = Some(first);
    for (index, source) in sources.iter().enumerate() {
        let name = source.name();
        let reader = match first.take() {
            Some(reader) => reader,
            None => LineReader::open(source)?,
        };
        let mut crlf = 0u64;
        let mut first_bad: Option<BadLine> = None;
        let filters = plan.filters;
        let mut sink = |number: u64, outcome: Outcome, bytes: &[u8]| {
            if let (Outcome::Skipped(reason), None) = (outcome, &first_bad) {
                first_bad = Some(BadLine::new(index, number, reason, bytes));
            }
            match plan.last {
                Some(n) => {
                    if ring.len() as u64 >= n {
                        ring.pop_front();
                    }
                    if n > 0 {
                        ring.push_back((index, number, outcome));
                    }
                }
                None => set.count(index, number, outcome),
            }
        };
        let (end, cut) = reader
            .for_each_line(|line| {
                crlf += u64::from(line.crlf);
                let outcome = if line.too_long {
                    Outcome::Skipped(Reason::TooLong)
                } else {
                    line_parser.classify(line.bytes, filters)
                };
                sink(line.number, outcome, line.bytes);
            })
            .with_context(|| format!("cannot read {name}"))?;
        if let Some(number) = cut {
            sink(number, Outcome::Skipped(Reason::CutByStreamEnd), b"");
        }
        set.crlf_lines += crlf;
        if set.first_bad.is_none() {
            set.first_bad = first_bad;
        }
        set.inputs.push(InputInfo {
            name,
            layout: layout.clone(),
            end,
        });
    }
    for (index, number, outcome) in ring {
        set.count(index, number, outcome);
    }
    Ok(set)
}
