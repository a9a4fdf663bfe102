//! The self-contained HTML report: summary table, comparison with verdicts, sweep curve,
//! per-run throughput (and latency) charts, host facts. Inline SVG and CSS only; no scripts;
//! a Content-Security-Policy that blocks every fetch; no URLs at all.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use linerate_store::{RunId, RunRecord};

use crate::ReportError;
use crate::chart::{self, Bar, Chart, SweepSeries};
use crate::format;

/// A comparison of variants (experiment) or runs, computed by the caller with linerate-stats.
#[derive(Debug, Clone, Default)]
pub struct Comparison {
    /// Heading.
    pub title: String,
    /// Which samples were compared ("one value per repetition: …").
    pub samples: String,
    /// The confidence level, percent.
    pub confidence: f64,
    /// One bar per variant or run, baseline first.
    pub bars: Vec<Bar>,
    /// The values are RFC 2544 NDRs in frames/s (else bit rates).
    pub frames: bool,
    /// The verdict text (ministat-style), shown verbatim.
    pub verdicts: String,
    /// Warnings (autocorrelation, too few samples).
    pub warnings: Vec<String>,
}

/// A sweep: mean throughput against a swept parameter.
#[derive(Debug, Clone, Default)]
pub struct Sweep {
    /// The parameter and unit, for the x axis.
    pub label: String,
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
        body.push_str(&summary_table(&runs));
    }

    if let Some(c) = &input.comparison {
        let _ = writeln!(body, "<section><h2>{}</h2>", esc(&c.title));
        let _ = writeln!(body, "<p class=\"note\">Samples: {}</p>", esc(&c.samples));
        for w in &c.warnings {
            let _ = writeln!(body, "<p class=\"warn\">⚠ {}</p>", esc(w));
        }
        if !c.bars.is_empty() {
            let chart = if c.frames {
                chart::ndr_bars(&c.bars, "comparison", &c.title, Some(c.confidence))
            } else {
                chart::bars(&c.bars, "comparison", &c.title, Some(c.confidence))
            };
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
            &s.label,
            "sweep",
            &format!("Throughput against {}", s.label),
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

    body.push_str(&variant_overlays(&runs, &mut charts)?);
    let n = runs.len();
    if n > 0 {
        body.push_str("<section><h2>Runs</h2>\n");
    }
    let limit = if input.max_run_charts == 0 {
        n
    } else {
        input.max_run_charts.min(n)
    };
    if limit < n {
        let _ = writeln!(
            body,
            "<p class=\"note\">Charts for the first {limit} of {n} runs (the table above has them all).</p>"
        );
    }
    for (id, run) in runs.iter().take(limit) {
        let _ = writeln!(
            body,
            "<h3 id=\"run-{id}\">Run {id}</h3>\n<p class=\"note\">{}</p>",
            esc(&describe(run))
        );
        let throughput = chart::throughput(
            run,
            &format!("run-{id}-throughput"),
            &format!("Run {id}: throughput over time"),
        );
        place(throughput, &mut body, &mut charts)?;
        if let Some(l) = &run.latency {
            let latency = chart::latency(
                l,
                &format!("run-{id}-latency"),
                &format!("Run {id} latency"),
            );
            place(latency, &mut body, &mut charts)?;
        }
    }
    if n > 0 {
        body.push_str("</section>\n");
    }
    body.push_str(&host_facts(&input.runs));

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

fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The chart inline: the SVG namespace attribute is implied in HTML, and leaving it out keeps
/// the document free of any URL.
/// Puts a drawn chart into `html` (and keeps it for `--svg`/`--png`); a chart without data
/// becomes a note saying why, any other failure ends the report.
fn place(
    chart: Result<Chart, ReportError>,
    html: &mut String,
    charts: &mut Vec<Chart>,
) -> Result<(), ReportError> {
    match chart {
        Ok(chart) => {
            html.push_str(&figure(&chart));
            charts.push(chart);
        }
        Err(ReportError::NoData(why)) => {
            let _ = writeln!(html, "<p class=\"note\">{}</p>", esc(&why));
        }
        Err(e) => return Err(e),
    }
    Ok(())
}

fn figure(chart: &Chart) -> String {
    let svg = chart
        .svg
        .replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1)
        .replacen(
            "<svg ",
            &format!("<svg role=\"img\" aria-label=\"{}\" ", esc(&chart.title)),
            1,
        );
    format!("<figure>\n{svg}\n</figure>\n")
}

/// For an experiment: one chart per variant with its repetitions overlaid.
fn variant_overlays(
    runs: &[(RunId, RunRecord)],
    charts: &mut Vec<Chart>,
) -> Result<String, ReportError> {
    let mut variants: Vec<(&str, Vec<(String, &RunRecord)>)> = Vec::new();
    for (id, run) in runs {
        let Some(e) = &run.experiment else {
            return Ok(String::new());
        };
        let label = format!("run {id} (repetition {})", e.repetition);
        match variants.iter_mut().find(|(v, _)| *v == e.variant) {
            Some((_, list)) => list.push((label, run)),
            None => variants.push((&e.variant, vec![(label, run)])),
        }
    }
    if variants.is_empty() {
        return Ok(String::new());
    }
    let mut out = String::from(
        "<section><h2>Repetitions</h2>\n<p class=\"note\">Each variant's repetitions over time: lines that differ in level or shape show drift or outliers the means hide.</p>\n",
    );
    for (i, (variant, list)) in variants.iter().enumerate() {
        let chart = chart::repetitions(
            list,
            &format!("variant-{}-repetitions", i + 1),
            &format!("Variant {variant}: throughput of each repetition"),
        );
        place(chart, &mut out, charts)?;
    }
    out.push_str("</section>\n");
    Ok(out)
}

fn describe(run: &RunRecord) -> String {
    let mut parts = vec![
        format::utc(run.started_at),
        format!("{} {}", run.mode, run.direction.as_str()),
        run.peer.clone().unwrap_or_else(|| "unknown peer".into()),
        format!(
            "{} stream{}",
            run.streams,
            if run.streams == 1 { "" } else { "s" }
        ),
        run.tool.clone(),
    ];
    if let Some(c) = &run.command_line {
        parts.push(c.clone());
    } else if let Some(p) = &run.source_path {
        parts.push(format!("imported from {p}"));
    }
    if let Some(e) = &run.experiment {
        parts.push(format!(
            "experiment {} · {} · repetition {}",
            e.experiment, e.variant, e.repetition
        ));
    }
    parts.join(" · ")
}

fn summary_table(runs: &[(RunId, RunRecord)]) -> String {
    let variants = runs.iter().any(|(_, r)| r.experiment.is_some());
    // One peer for all: say it once below the table instead of in every row.
    let first_peer = runs.first().and_then(|(_, r)| r.peer.clone());
    let one_peer = runs.iter().all(|(_, r)| r.peer == first_peer);
    let mut t = format!(
        "<section><h2>Summary</h2>\n<div class=\"scroll\"><table>\n<thead><tr><th class=\"num\">Run</th><th>Started (UTC)</th>{}\
         <th>Test</th>{}<th class=\"num\">Time</th><th class=\"num\">Received</th><th class=\"num\">Sent</th>\
         <th class=\"num\">Retr</th><th class=\"num\">RTT</th><th class=\"num\">CPU local / remote</th></tr></thead>\n<tbody>\n",
        if variants { "<th>Variant</th>" } else { "" },
        if one_peer { "" } else { "<th>Peer</th>" },
    );
    for (id, r) in runs {
        let s = &r.summary;
        let started = format::utc(r.started_at);
        let variant = if variants {
            format!(
                "<td class=\"nowrap\">{}</td>",
                r.experiment
                    .as_ref()
                    .map(|e| esc(&format!("{} #{}", e.variant, e.repetition)))
                    .unwrap_or_default()
            )
        } else {
            String::new()
        };
        let streams = if r.streams == 1 {
            String::new()
        } else {
            format!(" ×{}", r.streams)
        };
        let _ = writeln!(
            t,
            "<tr><td class=\"num\"><a href=\"#run-{id}\">{id}</a></td><td class=\"nowrap\">{}</td>{variant}<td class=\"nowrap\">{} {}{}</td>\
             {}<td class=\"num\">{:.1} s</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            esc(started.trim_end_matches(" UTC")),
            esc(&r.mode),
            r.direction.as_str(),
            streams,
            if one_peer {
                String::new()
            } else {
                format!("<td>{}</td>", esc(r.peer.as_deref().unwrap_or("–")))
            },
            r.duration_s,
            format::rate(s.received_bps),
            format::rate(s.sent_bps),
            s.retransmits.map_or_else(|| "–".into(), |n| n.to_string()),
            s.mean_rtt_us
                .filter(|v| *v > 0.0)
                .map_or_else(|| "–".into(), format::micros),
            match (s.cpu_local_percent, s.cpu_remote_percent) {
                (Some(l), Some(r)) => format!("{l:.1}% / {r:.1}%"),
                _ => "–".into(),
            },
        );
    }
    let peer_note = match (&first_peer, one_peer) {
        (Some(peer), true) => format!("All runs against {}. ", esc(peer)),
        _ => String::new(),
    };
    let _ = writeln!(
        t,
        "</tbody>\n</table></div>\n<p class=\"note\">{peer_note}Received: the receiver-side rate over the whole test (the headline number). Test: mode, direction and parallel streams (×N). RTT: the sender's mean smoothed RTT.</p>\n</section>"
    );
    t
}

/// Labelled facts about a host, in display order.
type Facts = Vec<(String, String)>;

/// Host facts: what iperf3's JSON says about the measuring host, and the linerate host
/// snapshot's top-level facts where the run has one. One table per distinct host.
fn host_facts(runs: &[(RunId, RunRecord)]) -> String {
    let mut hosts: BTreeMap<String, (Vec<RunId>, Facts)> = BTreeMap::new();
    for (id, run) in runs {
        let mut facts = Vec::new();
        let start = &run.document["start"];
        if let Some(s) = start["system_info"].as_str() {
            facts.push(("system".to_owned(), s.to_owned()));
        }
        facts.push(("measured with".to_owned(), run.tool.clone()));
        for (key, label) in [
            ("tcp_mss_default", "default TCP MSS (bytes)"),
            ("sndbuf_actual", "socket send buffer (bytes)"),
            ("rcvbuf_actual", "socket receive buffer (bytes)"),
        ] {
            if let Some(v) = start[key].as_u64() {
                facts.push((label.to_owned(), v.to_string()));
            }
        }
        if let Some(cc) = run.document["end"]["sender_tcp_congestion"].as_str() {
            facts.push(("sender congestion control".to_owned(), cc.to_owned()));
        }
        if let Some(h) = &run.host {
            facts.push(("snapshot hash".to_owned(), h.hash.clone()));
            if let Some(snap) = &h.snapshot {
                flatten("", snap, 0, &mut facts);
            }
        }
        let key = run
            .host
            .as_ref()
            .map(|h| h.hash.clone())
            .unwrap_or_else(|| facts.iter().map(|(k, v)| format!("{k}={v};")).collect());
        let entry = hosts.entry(key).or_insert_with(|| (Vec::new(), facts));
        entry.0.push(*id);
    }
    let mut out = String::from("<section><h2>Host facts</h2>\n");
    for (ids, facts) in hosts.values() {
        let ids: Vec<String> = ids.iter().map(ToString::to_string).collect();
        let _ = writeln!(
            out,
            "<p class=\"note\">Runs {}</p>\n<table><tbody>",
            ids.join(", ")
        );
        for (k, v) in facts.iter().take(60) {
            let _ = writeln!(out, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
        }
        out.push_str("</tbody></table>\n");
    }
    out.push_str("</section>\n");
    out
}

fn flatten(prefix: &str, v: &serde_json::Value, depth: usize, out: &mut Vec<(String, String)>) {
    use serde_json::Value;
    match v {
        Value::Object(m) if depth < 3 => {
            for (k, v) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, depth + 1, out);
            }
        }
        Value::Array(list) if depth < 3 && list.len() <= 8 => {
            for (i, v) in list.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), v, depth + 1, out);
            }
        }
        Value::Null => {}
        Value::String(s) => out.push((prefix.to_owned(), s.clone())),
        Value::Array(list) => out.push((prefix.to_owned(), format!("{} items", list.len()))),
        other => out.push((prefix.to_owned(), other.to_string())),
    }
}
