//! The report's charts of single runs, each in its own metric: an experiment's repetitions
//! overlaid per variant, and per run its value over time (throughput per stream, packets/s,
//! transactions/s) and, for request/response runs, its latency histogram and CDF. A kind of
//! chart the runs have no data for is one sentence for the report, not one per run (and no
//! repetitions section at all when no run has a series over time).

use std::fmt::Write as _;

use linerate_store::{RunId, RunRecord};

use crate::ReportError;
use crate::chart::{self, Chart};
use crate::figure::{Lack, Missing, place_or_note};
use crate::format::{self, escape_html as esc};
use crate::metric::Metric;
use linerate_store::lab_run::LabRun;

const NO_SAMPLES: Lack = Lack {
    what: "interval samples",
    left_out: "no chart over time",
};
const NO_REPETITION_SAMPLES: Lack = Lack {
    what: "interval samples",
    left_out: "no repetitions chart",
};
const NO_HISTOGRAM: Lack = Lack {
    what: "latency histogram",
    left_out: "no latency chart",
};

/// For an experiment: one chart per variant with its repetitions overlaid.
pub fn repetitions(
    runs: &[(RunId, RunRecord)],
    charts: &mut Vec<Chart>,
) -> Result<String, ReportError> {
    let mut variants: Vec<(&str, Vec<(RunId, &RunRecord)>)> = Vec::new();
    for (id, run) in runs {
        let Some(e) = &run.experiment else {
            return Ok(String::new());
        };
        match variants.iter_mut().find(|(v, _)| *v == e.variant) {
            Some((_, list)) => list.push((*id, run)),
            None => variants.push((&e.variant, vec![(*id, run)])),
        }
    }
    if variants.is_empty() {
        return Ok(String::new());
    }
    let mut out = String::from(
        "<section><h2>Repetitions</h2>\n<p class=\"note\">Each variant's repetitions over time: lines that differ in level or shape show drift or outliers the means hide.</p>\n",
    );
    // Without a series in any run the section would only say so: the runs section does.
    if !variants
        .iter()
        .flat_map(|(_, list)| list)
        .any(|(_, r)| !Metric::of_run(r).series(r).is_empty())
    {
        return Ok(String::new());
    }
    let mut missing = Missing::default();
    for (i, (variant, list)) in variants.iter().enumerate() {
        let metric = Metric::of_runs(list.iter().map(|(_, r)| *r));
        let series: Vec<(String, Vec<_>)> = list
            .iter()
            .map(|(id, r)| {
                let rep = r.experiment.as_ref().map_or(0, |e| e.repetition);
                (format!("run {id} (repetition {rep})"), metric.series(r))
            })
            .collect();
        let chart = chart::repetitions(
            &series,
            metric,
            &format!("variant-{}-repetitions", i + 1),
            &format!(
                "Variant {variant}: {} of each repetition",
                metric.quantity()
            ),
        );
        place_or_note(
            chart,
            &mut out,
            charts,
            (
                &mut missing,
                NO_REPETITION_SAMPLES,
                format!("variant {variant}"),
            ),
        )?;
    }
    out.push_str(&missing.notes("the variants", variants.len()));
    out.push_str("</section>\n");
    Ok(out)
}

/// The runs section: each run's description and charts, for at most `limit` runs (0: all).
pub fn section(
    runs: &[(RunId, RunRecord)],
    limit: usize,
    charts: &mut Vec<Chart>,
) -> Result<String, ReportError> {
    let n = runs.len();
    let limit = if limit == 0 { n } else { limit.min(n) };
    let mut body = String::from("<section><h2>Runs</h2>\n");
    if limit < n {
        let _ = writeln!(
            body,
            "<p class=\"note\">Charts for the first {limit} of {n} runs (the table above has them all).</p>"
        );
    }
    let mut missing = Missing::default();
    for (id, run) in runs.iter().take(limit) {
        let _ = writeln!(
            body,
            "<h3 id=\"run-{id}\">Run {id}</h3>\n<p class=\"note\">{}</p>",
            esc(&describe(run))
        );
        let who = format!("run {id}");
        let metric = Metric::of_run(run);
        let over_time = match metric {
            // Bulk transfers: a line per stream beside the total.
            Metric::Throughput => chart::throughput(
                run,
                &format!("run-{id}-throughput"),
                &format!("Run {id}: throughput over time"),
            ),
            Metric::PacketRate | Metric::Transactions | Metric::FrameRate => chart::over_time(
                &metric.series(run),
                metric,
                &format!("run-{id}-{}", file_word(metric)),
                &format!("Run {id}: {} over time", metric.quantity()),
            ),
        };
        place_or_note(
            over_time,
            &mut body,
            charts,
            (&mut missing, NO_SAMPLES, who.clone()),
        )?;
        let latency = match (&run.latency, metric) {
            (Some(l), _) => Some(chart::latency(
                l,
                &format!("run-{id}-latency"),
                &format!("Run {id} latency"),
            )),
            (None, Metric::Transactions) => Some(Err(ReportError::NoData(String::new()))),
            (None, _) => None,
        };
        if let Some(latency) = latency {
            place_or_note(
                latency,
                &mut body,
                charts,
                (&mut missing, NO_HISTOGRAM, who),
            )?;
        }
    }
    body.push_str(&missing.notes("the runs", limit));
    body.push_str("</section>\n");
    Ok(body)
}

/// The word a chart's file name has for the metric.
fn file_word(metric: Metric) -> &'static str {
    match metric {
        Metric::Throughput => "throughput",
        Metric::PacketRate => "packet-rate",
        Metric::Transactions => "transactions",
        Metric::FrameRate => "frame-rate",
    }
}

/// What the run was: when, which test, against what, with which tool, from where.
fn describe(run: &RunRecord) -> String {
    let mut parts = vec![
        format::utc(run.started_at),
        format!("{} {}", run.mode, run.direction.as_str()),
    ];
    if let Some(peer) = &run.peer {
        parts.push(peer.clone());
    }
    if let Ok(Some(lab)) = LabRun::of(run) {
        parts.push(format!("lab {} ({})", lab.lab, lab.topology));
    }
    parts.push(format!(
        "{} stream{}",
        run.streams,
        if run.streams == 1 { "" } else { "s" }
    ));
    parts.push(run.tool.clone());
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
