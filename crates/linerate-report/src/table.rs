//! The report's summary: one table per metric among the runs (one table for the usual report
//! of one kind of test), with the columns every run has (run, start, variant, test, peer,
//! time) and its metric's own; a column no run in the table has a value for is left out.

use std::fmt::Write as _;

use linerate_store::{RunId, RunRecord};

use crate::format;
use crate::format::escape_html as esc;
use crate::metric::{Column, Metric};

/// The summary section: a table per metric, in [`Metric::ALL`]'s order.
pub fn summary(runs: &[(RunId, RunRecord)]) -> String {
    let by_metric: Vec<(Metric, Vec<&(RunId, RunRecord)>)> = Metric::ALL
        .iter()
        .map(|&m| {
            (
                m,
                runs.iter()
                    .filter(|(_, r)| Metric::of_run(r) == m)
                    .collect(),
            )
        })
        .filter(|(_, runs): &(Metric, Vec<_>)| !runs.is_empty())
        .collect();
    let several = by_metric.len() > 1;
    let mut out = String::from("<section><h2>Summary</h2>\n");
    for (metric, runs) in &by_metric {
        if several {
            let _ = writeln!(out, "<h3>{}</h3>", metric.runs_heading());
        }
        out.push_str(&table(*metric, runs));
    }
    out.push_str("</section>\n");
    out
}

fn table(metric: Metric, runs: &[&(RunId, RunRecord)]) -> String {
    let variants = runs.iter().any(|(_, r)| r.experiment.is_some());
    // One peer for all: say it once below the table instead of in every row.
    let first_peer = runs.first().and_then(|(_, r)| r.peer.clone());
    let one_peer = runs.iter().all(|(_, r)| r.peer == first_peer);
    let columns: Vec<&Column> = metric
        .columns()
        .iter()
        .filter(|c| runs.iter().any(|(_, r)| (c.cell)(r).is_some()))
        .collect();
    let mut t = format!(
        "<div class=\"scroll\"><table>\n<thead><tr><th class=\"num\">Run</th><th>Started (UTC)</th>{}\
         <th>Test</th>{}<th class=\"num\">Time</th>",
        if variants { "<th>Variant</th>" } else { "" },
        if one_peer { "" } else { "<th>Peer</th>" },
    );
    for c in &columns {
        let _ = write!(t, "<th class=\"num\">{}</th>", esc(c.header));
    }
    t.push_str("</tr></thead>\n<tbody>\n");
    for (id, r) in runs {
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
        let _ = write!(
            t,
            "<tr><td class=\"num\"><a href=\"#run-{id}\">{id}</a></td><td class=\"nowrap\">{}</td>{variant}<td class=\"nowrap\">{} {}{}</td>\
             {}<td class=\"num\">{:.1} s</td>",
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
        );
        for c in &columns {
            let cell = (c.cell)(r).unwrap_or_else(|| "–".to_owned());
            let _ = write!(t, "<td class=\"num\">{}</td>", esc(&cell));
        }
        t.push_str("</tr>\n");
    }
    let peer_note = match (&first_peer, one_peer) {
        (Some(peer), true) => format!("All runs against {}. ", esc(peer)),
        _ => String::new(),
    };
    let mut notes = vec!["Test: mode, direction and parallel streams (×N).".to_owned()];
    notes.extend(
        columns
            .iter()
            .filter(|c| !c.note.is_empty())
            .map(|c| esc(c.note)),
    );
    // The headline column's note first, as the table reads.
    if let Some(first) = columns.first().filter(|c| !c.note.is_empty()) {
        notes.retain(|n| *n != esc(first.note));
        notes.insert(0, esc(first.note));
    }
    let _ = writeln!(
        t,
        "</tbody>\n</table></div>\n<p class=\"note\">{peer_note}{}</p>",
        notes.join(" ")
    );
    t
}
