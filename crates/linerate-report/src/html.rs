//! The self-contained HTML report: summary tables, comparison with verdicts, sweep curve,
//! per-run charts, host facts; each in the runs' own metric (bit/s, packets/s,
//! transactions/s). Inline SVG and CSS only; no scripts; a Content-Security-Policy that blocks
//! every fetch; no URLs at all.
//!
//! The page is put together here; its parts live beside it: [`crate::table`] (summary),
//! [`crate::runs`] (charts of single runs), [`crate::host`] (host facts), and the metrics'
//! own reading of a run in [`crate::metric`].

use std::fmt::Write as _;

use linerate_store::{RunId, RunRecord};

use crate::ReportError;
use crate::chart::{self, Bar, Chart, SweepSeries};
use crate::figure::place;
use crate::format::{self, escape_html as esc};
use crate::metric::Metric;
use crate::{host, runs, table};

/// A comparison of variants (experiment) or runs, computed by the caller with linerate-stats.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// Heading.
    pub title: String,
    /// Which samples were compared ("one value per repetition: …").
    pub samples: String,
    /// The confidence level, percent.
    pub confidence: f64,
    /// What the bars are in.
    pub metric: Metric,
    /// One bar per variant or run, baseline first.
    pub bars: Vec<Bar>,
    /// The verdict text (ministat-style), shown verbatim.
    pub verdicts: String,
    /// Warnings (autocorrelation, too few samples).
    pub warnings: Vec<String>,
}

/// A sweep: the mean in the experiment's metric against a swept parameter.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// The parameter and unit, for the x axis.
    pub label: String,
    /// What the means are in.
    pub metric: Metric,
    /// One line per series: one for a plain sweep, one per variant of a grid sweep.
    pub series: Vec<SweepSeries>,
}

/// CPU profiles stored with an experiment's runs: which functions' share changed per variant
/// (text), and the differential flame graphs.
#[derive(Debug, Clone, Default)]
pub struct Profiles {
    /// The share changes, shown verbatim.
    pub text: String,
    /// One differential flame graph per variant.
    pub graphs: Vec<crate::flame::FlameGraph>,
}

/// What the report is about.
#[derive(Debug, Clone, Default)]
pub struct ReportInput {
    /// The page title.
    pub title: String,
    /// When the report was made, Unix seconds.
    pub generated_at: i64,
    /// The database the runs came from.
    pub database: Option<String>,
    /// The runs, in the order to show them.
    pub runs: Vec<(RunId, RunRecord)>,
    /// A comparison, when there is one.
    pub comparison: Option<Comparison>,
    /// A sweep curve, when the experiment sweeps a numeric parameter.
    pub sweep: Option<Sweep>,
    /// Per-run charts for at most this many runs (0: no limit).
    pub max_run_charts: usize,
    /// CPU profiles, when the runs were profiled.
    pub profiles: Option<Profiles>,
}

/// The report and its charts (for `--svg`/`--png`).
#[derive(Debug, Clone)]
pub struct Report {
    /// The HTML document.
    pub html: String,
    /// Every chart in it, in order.
    pub charts: Vec<Chart>,
}

/// Builds the report.
pub fn build(input: &ReportInput) -> Result<Report, ReportError> {
    let mut charts = Vec::new();
    let mut body = String::new();
    let n = input.runs.len();
    let _ = writeln!(
        body,
        "<header><h1>{}</h1><p class=\"meta\">{} run{} · generated {}{}</p></header>",
        esc(&input.title),
        n,
        if n == 1 { "" } else { "s" },
        format::utc(input.generated_at),
        input
            .database
            .as_ref()
            .map(|d| format!(" from <code>{}</code>", esc(d)))
            .unwrap_or_default()
    );
    // RFC 2544 runs have their own section (frames/s, no interval samples, no peer): the
    // generic run tables and charts are for the others.
    let runs: Vec<(RunId, RunRecord)> = input
        .runs
        .iter()
        .filter(|(_, r)| !crate::rfc2544::is_rfc2544(r))
        .cloned()
        .collect();
    if !runs.is_empty() {
        body.push_str(&table::summary(&runs));
    }

    if let Some(c) = &input.comparison {
        let _ = writeln!(body, "<section><h2>{}</h2>", esc(&c.title));
        let _ = writeln!(body, "<p class=\"note\">Samples: {}</p>", esc(&c.samples));
        for w in &c.warnings {
            let _ = writeln!(body, "<p class=\"warn\">⚠ {}</p>", esc(w));
        }
        if !c.bars.is_empty() {
            let chart = chart::bars(
                &c.bars,
                c.metric,
                "comparison",
                &c.title,
                Some(c.confidence),
            );
            place(chart, &mut body, &mut charts)?;
        }
        if !c.verdicts.trim().is_empty() {
            let _ = writeln!(
                body,
                "<pre class=\"verdict\">{}</pre>",
                esc(c.verdicts.trim_end())
            );
        }
        body.push_str("</section>\n");
    }

    if let Some(s) = &input.sweep {
        let chart = chart::sweep_series(
            &s.series,
            (&s.label, s.metric),
            "sweep",
            &format!(
                "{} against {}",
                format::capitalised(s.metric.quantity()),
                s.label
            ),
        );
        body.push_str("<section><h2>Sweep</h2>\n");
        place(chart, &mut body, &mut charts)?;
        body.push_str("</section>\n");
    }

    body.push_str(&crate::rfc2544::section(
        &input.runs,
        &mut |chart, html| place(chart, html, &mut charts),
        esc,
    )?);

    if let Some(p) = &input.profiles {
        body.push_str("<section><h2>Where the CPU time went</h2>\n");
        let _ = writeln!(body, "<pre class=\"verdict\">{}</pre>", esc(p.text.trim()));
        if !p.graphs.is_empty() {
            body.push_str(
                "<p class=\"note\">Differential flame graphs against the baseline: red frames \
                 took a larger share of the samples, blue a smaller one. Hover a frame for its \
                 name and samples; find-in-page searches the names.</p>\n",
            );
        }
        for g in &p.graphs {
            body.push_str(&crate::flame::embed(g, esc));
        }
        body.push_str("</section>\n");
    }

    body.push_str(&runs::repetitions(&runs, &mut charts)?);
    body.push_str(&runs::section(&runs, input.max_run_charts, &mut charts)?);
    body.push_str(&host::section(&input.runs));

    let html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n{body}<footer>Made by linerate {}. Self-contained: no scripts, no external resources.</footer>\n</body>\n</html>\n",
        esc(&input.title),
        env!("CARGO_PKG_VERSION"),
    );
    Ok(Report { html, charts })
}

const CSS: &str = "
:root { color-scheme: light; }
body { font-family: system-ui, 'DejaVu Sans', 'Liberation Sans', sans-serif; color: #222;
  max-width: 960px; margin: 2em auto; padding: 0 1em; line-height: 1.45; background: #fff; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
h3 { font-size: 1.05em; margin: 1.5em 0 0.2em; }
.meta, .note, footer { color: #555; font-size: 0.9em; }
.warn { background: #fff4d6; border-left: 4px solid #e69f00; padding: 0.4em 0.8em; }
table { border-collapse: collapse; width: 100%; font-size: 0.8em; margin: 0.8em 0; }
th, td { padding: 0.3em 0.5em; border-bottom: 1px solid #e3e3e3; text-align: left; vertical-align: top; }
th { background: #f3f5f8; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.nowrap { white-space: nowrap; }
.scroll { overflow-x: auto; }
tbody tr:nth-child(even) { background: #fafafa; }
figure { margin: 0.8em 0; }
figure svg { max-width: 100%; height: auto; display: block; }
figcaption { font-size: 0.85em; color: #555; }
iframe.flame { width: 100%; border: 1px solid #e3e3e3; }
pre.verdict { background: #f6f8fa; border: 1px solid #e3e3e3; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
code { font-size: 0.9em; }
footer { margin-top: 3em; border-top: 1px solid #ccc; padding-top: 0.5em; }
";
