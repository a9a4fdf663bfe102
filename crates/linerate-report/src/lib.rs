//! Charts (SVG, PNG) and the self-contained HTML report of stored runs.
//!
//! Pure functions from data to bytes: the binary gathers the runs (and the statistics, from
//! `linerate-stats`) and writes the files.
//!
//! - [`chart`]: throughput over time, latency histogram + CDF, comparison bars with
//!   confidence intervals, sweep curves, response-time distributions (one, or two overlaid)
//!   — as SVG, drawn with plotters.
//! - [`png`]: the same charts as PNG (rendered from the SVG by resvg).
//! - [`rfc2544`]: RFC 2544 runs (NDR and PDR in frames/s, latency, generator-bound marks).
//! - [`html`]: one HTML file with inline SVG and CSS, no scripts, no external resources (a
//!   Content-Security-Policy forbids every fetch).
//! - [`format`](mod@format): dates, and the digits stored-run tables print rates and sizes
//!   with (through `linerate_units::human`).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod chart;
pub mod flame;
pub mod format;
pub mod html;
pub mod png;
pub mod rfc2544;

pub use chart::{Bar, Chart, SweepPoint, SweepSeries};
pub use flame::FlameGraph;
pub use html::{Comparison, Profiles, ReportInput, Sweep, build};

/// What can go wrong while drawing.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// plotters failed.
    #[error("drawing a chart failed: {0}")]
    Chart(String),
    /// resvg failed.
    #[error("rendering a chart as PNG failed: {0}")]
    Png(String),
    /// No font to draw text in a PNG.
    #[error(
        "no fonts found for PNG charts (install fonts-dejavu-core or any TrueType font); SVG and HTML need none"
    )]
    NoFonts,
    /// The data cannot make this chart.
    #[error("{0}")]
    NoData(String),
}
