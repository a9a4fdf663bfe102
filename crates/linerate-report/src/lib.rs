//! Charts (SVG, PNG), the self-contained HTML report of stored runs, and the comparison of
//! stored runs that `compare` and `report` share.
//!
//! Pure functions from data to bytes, plus the store queries a comparison needs: the binary
//! parses the command line and writes the files.
//!
//! - [`groups`]: which stored runs form the groups a comparison uses (runs by id, an
//!   experiment's variants), and their values for linerate-stats' comparison engine.
//! - [`verdicts`]: the comparison (Student's t with exact quantiles, as `lab run`), its text
//!   and its section of the report; [`words`] says the engine's sample kinds and warnings.
//! - [`metric`]: what runs are measured in (bit/s, packets/s, transactions/s): the value a
//!   comparison uses, the series over time and the table columns, one module per metric;
//!   [`unit`](mod@unit) scales and labels their values; what `lab run` stores with a run (test
//!   bed and the value it compared) is `linerate_store::lab_run`.
//! - [`chart`]: values over time, latency histogram + CDF, comparison bars with confidence
//!   intervals, sweep curves, response-time distributions (one, or two overlaid), NDR/PDR
//!   against frame size — as SVG, drawn with plotters.
//! - [`png`]: the same charts as PNG (rendered from the SVG by resvg).
//! - [`profiles`]: the CPU profiles stored with an experiment's runs, compared per variant
//!   (text and differential flame graphs).
//! - [`select`]: what a report covers and compares (an experiment, a listing, runs by id).
//! - [`rfc2544`]: RFC 2544 runs (NDR and PDR in frames/s, latency, generator-bound marks).
//! - [`html`]: one HTML file with inline SVG and CSS, no scripts, no external resources (a
//!   Content-Security-Policy forbids every fetch), put together from [`table`] (summary),
//!   [`runs`] (charts of single runs), [`host`] (host facts) and [`figure`] (placing charts).
//! - [`format`](mod@format): dates, HTML escaping, and the digits stored-run tables print
//!   rates and sizes with (through `linerate_units::human`).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod chart;
pub mod figure;
pub mod flame;
pub mod format;
pub mod groups;
pub mod host;
pub mod html;
pub mod metric;
pub mod png;
pub mod profiles;
pub mod rfc2544;
pub mod runs;
pub mod select;
pub mod table;
pub mod unit;
pub mod verdicts;
pub mod words;

pub use chart::{Bar, Chart, SweepPoint, SweepSeries};
pub use flame::FlameGraph;
pub use html::{Comparison, Profiles, ReportInput, Sweep, build};
pub use metric::Metric;
pub use unit::Unit;

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
