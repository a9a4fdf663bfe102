//! One data set's results as data: what `--json` prints (schema `linerate.logdist/1`) and
//! what the text and chart renderers draw. Times are in seconds (floats); shares are
//! fractions in `[0, 1]`.

use linerate_stats::distribution::Distribution;
use serde::Serialize;

use crate::dataset::DataSet;
use crate::format::Layout;
use crate::reason::Reason;

/// The percentiles reported, in percent.
pub const PERCENTILES: [f64; 6] = [50.0, 90.0, 95.0, 99.0, 99.9, 100.0];

/// Nanoseconds as seconds.
pub(crate) fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// One input.
#[derive(Debug, Serialize)]
pub struct InputReport {
    /// Path or `<stdin>`.
    pub name: String,
    /// Format, field and unit.
    pub layout: Layout,
    /// Lines read.
    pub lines: u64,
    /// Gzip-compressed.
    pub gzip: bool,
    /// A compressed stream that ended early or was corrupt: the error. The lines before it
    /// were used.
    pub stream_error: Option<String>,
}

/// One skip reason.
#[derive(Debug, Serialize)]
pub struct SkipReport {
    /// Machine name.
    pub reason: Reason,
    /// Human description.
    pub description: &'static str,
    /// Lines.
    pub count: u64,
    /// The first few as `file:line`.
    pub first_lines: Vec<String>,
}

/// One percentile.
#[derive(Debug, Serialize, Clone, Copy)]
pub struct Percentile {
    /// In percent (100 is the maximum).
    pub percentile: f64,
    /// The value.
    pub seconds: f64,
}

/// One histogram bin `[from, to)`.
#[derive(Debug, Serialize)]
pub struct Bin {
    /// Lower edge.
    pub from_s: f64,
    /// Upper edge (exclusive); `null` for the overflow bin.
    pub to_s: Option<f64>,
    /// Samples.
    pub count: u64,
    /// Share of all samples.
    pub share: f64,
}

/// The ASCII/SVG histogram.
#[derive(Debug, Serialize)]
pub struct Histogram {
    /// Bin width.
    pub bin_s: f64,
    /// Upper edge of the last regular bin.
    pub max_s: f64,
    /// Regular bins, then the overflow bin (`to_s` null) if anything reached `max_s`.
    pub bins: Vec<Bin>,
}

/// One data set's distribution.
#[derive(Debug, Serialize)]
pub struct Summary {
    /// Inputs.
    pub inputs: Vec<InputReport>,
    /// `histogram` (bounded memory) or `exact`.
    pub mode: &'static str,
    /// Largest relative error of a percentile (0 when exact).
    pub relative_precision: f64,
    /// Lines considered.
    pub lines: u64,
    /// Lines with a time that passed the filters.
    pub count: u64,
    /// Lines the filters left out.
    pub filtered_out: u64,
    /// Lines without a usable time.
    pub skipped: u64,
    /// By reason.
    pub skipped_by_reason: Vec<SkipReport>,
    /// Lines that ended in CRLF (parsed normally).
    pub crlf_lines: u64,
    /// Mean.
    pub mean_s: f64,
    /// Minimum.
    pub min_s: f64,
    /// Maximum.
    pub max_s: f64,
    /// p50 … max.
    pub percentiles: Vec<Percentile>,
    /// The threshold for the share (the first bin's upper edge unless `--threshold`).
    pub threshold_s: f64,
    /// Samples under it.
    pub under_threshold: u64,
    /// Their share.
    pub under_threshold_share: f64,
    /// The binned histogram.
    pub histogram: Histogram,
}

impl Summary {
    /// Summarises a data set.
    pub fn new(set: &DataSet) -> Self {
        let d = &set.distribution;
        let count = d.count();
        let share = |n: u64| {
            if count == 0 {
                0.0
            } else {
                n as f64 / count as f64
            }
        };
        let qs: Vec<f64> = PERCENTILES.iter().map(|p| p / 100.0).collect();
        let percentiles = PERCENTILES
            .iter()
            .zip(d.quantiles(&qs))
            .map(|(&percentile, v)| Percentile {
                percentile,
                seconds: secs(v.unwrap_or(0)),
            })
            .collect();
        let width = set.bins.width();
        let mut bins: Vec<Bin> = set
            .bins
            .counts()
            .iter()
            .enumerate()
            .map(|(i, &n)| Bin {
                from_s: secs(width * i as u64),
                to_s: Some(secs(width * (i as u64 + 1))),
                count: n,
                share: share(n),
            })
            .collect();
        let max_ns = width * set.bins.counts().len() as u64;
        if set.bins.overflow() > 0 {
            bins.push(Bin {
                from_s: secs(max_ns),
                to_s: None,
                count: set.bins.overflow(),
                share: share(set.bins.overflow()),
            });
        }
        let name = |i: usize| set.inputs.get(i).map_or("?", |inp| inp.name.as_str());
        Self {
            inputs: set
                .inputs
                .iter()
                .map(|i| InputReport {
                    name: i.name.clone(),
                    layout: i.layout.clone(),
                    lines: i.end.lines,
                    gzip: i.end.gzip,
                    stream_error: i.end.stream_error.clone(),
                })
                .collect(),
            mode: match d {
                Distribution::Histogram(_) => "histogram",
                Distribution::Exact(_) => "exact",
            },
            relative_precision: d.relative_error(),
            lines: set.lines,
            count,
            filtered_out: set.filtered,
            skipped: set.skipped_total(),
            skipped_by_reason: set
                .skipped
                .iter()
                .map(|(&reason, s)| SkipReport {
                    reason,
                    description: reason.describe(),
                    count: s.count,
                    first_lines: s
                        .first
                        .iter()
                        .map(|&(input, line)| format!("{}:{line}", name(input)))
                        .collect(),
                })
                .collect(),
            crlf_lines: set.crlf_lines,
            mean_s: d.mean().unwrap_or(0.0) / 1e9,
            min_s: secs(d.min().unwrap_or(0)),
            max_s: secs(d.max().unwrap_or(0)),
            percentiles,
            threshold_s: secs(set.threshold_ns),
            under_threshold: set.under_threshold,
            under_threshold_share: share(set.under_threshold),
            histogram: Histogram {
                bin_s: secs(width),
                max_s: secs(max_ns),
                bins,
            },
        }
    }
}

/// `linerate logdist FILE --json`.
#[derive(Debug, Serialize)]
pub struct Report {
    /// `linerate.logdist/1`.
    pub schema: &'static str,
    /// The distribution.
    #[serde(flatten)]
    pub summary: Summary,
}
