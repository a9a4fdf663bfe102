//! Putting drawn charts into the page: inline SVG in a `<figure>` (kept for `--svg`/`--png`),
//! and for charts without data a sentence instead; per-run charts without data are gathered
//! ([`Missing`]) and said once per report, not once per run.

use std::fmt::Write as _;

use crate::ReportError;
use crate::chart::Chart;
use crate::format::{self, escape_html as esc};

/// Puts a drawn chart into `html` (and keeps it for `--svg`/`--png`); a chart without data
/// becomes a note saying why, any other failure ends the report.
pub fn place(
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

/// Like [`place`], but a chart without data is noted in `missing` under `kind` for `who`
/// instead of in the page.
pub fn place_or_note(
    chart: Result<Chart, ReportError>,
    html: &mut String,
    charts: &mut Vec<Chart>,
    (missing, kind, who): (&mut Missing, Lack, String),
) -> Result<(), ReportError> {
    match chart {
        Err(ReportError::NoData(_)) => {
            missing.add(kind, who);
            Ok(())
        }
        other => place(other, html, charts),
    }
}

/// The chart inline: the SVG namespace attribute is implied in HTML, and leaving it out keeps
/// the document free of any URL.
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

/// What a run (or variant) lacked for a kind of chart, and what is left out for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lack {
    /// What they have not: `interval samples`.
    pub what: &'static str,
    /// The charts left out: `no chart of throughput over time`.
    pub left_out: &'static str,
}

/// Per-run charts left out for want of data, by kind, with whose.
#[derive(Debug, Default)]
pub struct Missing {
    kinds: Vec<(Lack, Vec<String>)>,
}

impl Missing {
    /// `who` (`run 3`, `variant baseline`) has no data for a chart of `kind`.
    pub fn add(&mut self, kind: Lack, who: String) {
        match self.kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, list)) => list.push(who),
            None => self.kinds.push((kind, vec![who])),
        }
    }

    /// One sentence per kind, as notes: `Runs 3, 4 and 5 have no interval samples: no chart
    /// of throughput over time.`; `all` (`the runs`) stands for the whole list when `total`
    /// of them lack it.
    pub fn notes(&self, all: &str, total: usize) -> String {
        let mut out = String::new();
        for (kind, who) in &self.kinds {
            let (subject, plural) = if who.len() == total && total > 1 {
                (format::capitalised(all), true)
            } else {
                (format::capitalised(&list(who)), who.len() > 1)
            };
            let verb = if plural { "have" } else { "has" };
            let _ = writeln!(
                out,
                "<p class=\"note\">{} {verb} no {}: {}.</p>",
                esc(&subject),
                kind.what,
                kind.left_out
            );
        }
        out
    }
}

/// `a`, `a and b`, `a, b and c`.
fn list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLES: Lack = Lack {
        what: "interval samples",
        left_out: "no chart over time",
    };

    #[test]
    fn one_sentence_per_kind_whoever_lacks_it() {
        let mut m = Missing::default();
        for id in [3, 4, 5] {
            m.add(SAMPLES, format!("run {id}"));
        }
        assert_eq!(
            m.notes("the runs", 6),
            "<p class=\"note\">Run 3, run 4 and run 5 have no interval samples: no chart over time.</p>\n"
        );
        assert_eq!(
            m.notes("the runs", 3),
            "<p class=\"note\">The runs have no interval samples: no chart over time.</p>\n"
        );
        let mut one = Missing::default();
        one.add(SAMPLES, "run 2".into());
        assert_eq!(
            one.notes("the runs", 4),
            "<p class=\"note\">Run 2 has no interval samples: no chart over time.</p>\n"
        );
        assert_eq!(
            one.notes("the runs", 1),
            "<p class=\"note\">Run 2 has no interval samples: no chart over time.</p>\n"
        );
        assert_eq!(Missing::default().notes("the runs", 3), "");
    }
}
