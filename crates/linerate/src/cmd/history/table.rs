//! Renderings of the run list.

use std::fmt::Write as _;
use std::path::Path;

use linerate_report::format;
use linerate_store::RunListing;

fn experiment(r: &RunListing) -> String {
    r.experiment
        .as_ref()
        .map(|e| format!("{}/{}#{}", e.experiment, e.variant, e.repetition))
        .unwrap_or_default()
}

fn retransmits(r: &RunListing) -> String {
    r.summary
        .retransmits
        .map(|n| n.to_string())
        .unwrap_or_else(|| "-".into())
}

/// An aligned table.
pub fn text(runs: &[RunListing]) -> String {
    let header = [
        "ID",
        "Started (UTC)",
        "Mode",
        "Dir",
        "Peer",
        "Str",
        "Time",
        "Throughput",
        "Retr",
        "Source",
        "Experiment",
    ];
    let rows: Vec<[String; 11]> = runs
        .iter()
        .map(|r| {
            let started = format::utc(r.started_at);
            [
                r.id.to_string(),
                started.trim_end_matches(" UTC").to_owned(),
                r.mode.clone(),
                r.direction.as_str().to_owned(),
                r.peer.clone().unwrap_or_else(|| "-".into()),
                r.streams.to_string(),
                if r.partial {
                    // Ended early by a signal: the numbers cover only this time.
                    format!("{:.1}s partial", r.duration_s)
                } else {
                    format!("{:.1}s", r.duration_s)
                },
                format::rate(r.received_bps),
                retransmits(r),
                format!("{} ({})", r.source.as_str(), r.tool),
                experiment(r),
            ]
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    // Numbers right-aligned, words left-aligned.
    let right = [
        true, false, false, false, false, true, true, true, true, false, false,
    ];
    // The experiment column only when some run belongs to one.
    let columns = if runs.iter().any(|r| r.experiment.is_some()) {
        header.len()
    } else {
        header.len() - 1
    };
    let mut out = String::new();
    let mut line = |cells: &[String]| {
        let mut l = String::new();
        for (i, cell) in cells.iter().enumerate().take(columns) {
            if i > 0 {
                l.push_str("  ");
            }
            let pad = widths[i].saturating_sub(cell.chars().count());
            if right[i] {
                l.push_str(&" ".repeat(pad));
                l.push_str(cell);
            } else {
                l.push_str(cell);
                l.push_str(&" ".repeat(pad));
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(&header.map(str::to_owned));
    for row in &rows {
        line(row);
    }
    out
}

/// The JSON document (schema `linerate.history/1`).
pub fn json(db: &Path, runs: &[RunListing]) -> serde_json::Value {
    let runs: Vec<serde_json::Value> = runs
        .iter()
        .map(|r| {
            let mut v = serde_json::to_value(r).unwrap_or_default();
            if let Some(o) = v.as_object_mut() {
                o.insert("started".into(), format::rfc3339(r.started_at).into());
            }
            v
        })
        .collect();
    serde_json::json!({
        "schema": "linerate.history/1",
        "database": db.display().to_string(),
        "runs": runs,
    })
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// CSV with raw numbers (bits/s, seconds) for spreadsheets.
pub fn csv(runs: &[RunListing]) -> String {
    let mut out = String::from(
        "id,started,source,tool,mode,direction,peer,streams,duration_s,received_bps,sent_bps,retransmits,experiment,variant,repetition\n",
    );
    for r in runs {
        let exp = r.experiment.as_ref();
        let fields = [
            r.id.to_string(),
            format::rfc3339(r.started_at),
            r.source.as_str().to_owned(),
            r.tool.clone(),
            r.mode.clone(),
            r.direction.as_str().to_owned(),
            r.peer.clone().unwrap_or_default(),
            r.streams.to_string(),
            r.duration_s.to_string(),
            r.received_bps.to_string(),
            r.summary.sent_bps.to_string(),
            r.summary
                .retransmits
                .map(|n| n.to_string())
                .unwrap_or_default(),
            exp.map(|e| e.experiment.clone()).unwrap_or_default(),
            exp.map(|e| e.variant.clone()).unwrap_or_default(),
            exp.map(|e| e.repetition.to_string()).unwrap_or_default(),
        ];
        let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        let _ = writeln!(out, "{}", line.join(","));
    }
    out
}
