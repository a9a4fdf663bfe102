//! RFC 2544 runs in a report (`lab rfc2544`, and `lab run`'s `rfc2544` workloads): their
//! stored results read back typed (`linerate_store::rfc2544`), shown in frames/s — one table
//! row per run with NDR and PDR, their share of the line rate, latency at 10/50/90 % of NDR,
//! the generator's ceiling and the generator-bound mark — and NDR and PDR drawn against frame
//! size (one pair of lines per variant). These runs have no interval samples, peer or TCP
//! figures, so the report's generic run tables and charts leave them out.

use std::fmt::Write as _;

use linerate_store::rfc2544::{self as stored, Rfc2544Run};
use linerate_store::{RunId, RunRecord};

use crate::ReportError;
use crate::chart::{self, Chart, FramePoint};

/// Whether `run` is an RFC 2544 run.
pub fn is_rfc2544(run: &RunRecord) -> bool {
    run.mode == stored::MODE
}

/// Puts a drawn chart into the page (and keeps it), or a note when it has no data.
pub(crate) type Place<'a> =
    dyn FnMut(Result<Chart, ReportError>, &mut String) -> Result<(), ReportError> + 'a;

/// The RFC 2544 section for the RFC 2544 runs among `runs` (empty when there are none); its
/// chart goes through `place`.
pub(crate) fn section(
    runs: &[(RunId, RunRecord)],
    place: &mut Place<'_>,
    esc: fn(&str) -> String,
) -> Result<String, ReportError> {
    let mut read = Vec::new();
    let mut unread = Vec::new();
    for (id, run) in runs.iter().filter(|(_, r)| is_rfc2544(r)) {
        match Rfc2544Run::from_record(run) {
            Ok(doc) => read.push((*id, run, doc)),
            Err(e) => unread.push(format!("run {id}: {e}")),
        }
    }
    if read.is_empty() && unread.is_empty() {
        return Ok(String::new());
    }
    let mut out = String::from("<section><h2>RFC 2544 throughput</h2>\n");
    for why in &unread {
        let _ = writeln!(out, "<p class=\"warn\">⚠ {}</p>", esc(why));
    }
    if read.iter().any(|(_, _, d)| d.result.generator_bound) {
        out.push_str(
            "<p class=\"warn\">⚠ (!) generator-bound: the generator, not the DUT, may have set \
             these results (NDR within 10 % of the generator's own ceiling, or the load above \
             NDR failed only because the generator could not send it).</p>\n",
        );
    }
    if !read.is_empty() {
        out.push_str(&table(&read, esc));
    }
    let chart = chart::ndr_pdr(&points(&read), "rfc2544", "NDR and PDR against frame size");
    place(chart, &mut out)?;
    out.push_str("</section>\n");
    Ok(out)
}

/// The series a run belongs to in the chart: its variant, unless the variants are the frame
/// sizes themselves (`lab rfc2544`) or there are none.
fn series(run: &RunRecord, doc: &Rfc2544Run) -> String {
    match &run.experiment {
        Some(e) if e.variant != doc.result.frame => e.variant.clone(),
        _ => String::new(),
    }
}

/// One point per series and frame size: the mean NDR and PDR of its runs, generator-bound
/// when any of them was.
fn points(read: &[(RunId, &RunRecord, Rfc2544Run)]) -> Vec<FramePoint> {
    let mut points: Vec<(FramePoint, usize)> = Vec::new();
    for (_, run, doc) in read {
        let r = &doc.result;
        let s = series(run, doc);
        match points
            .iter_mut()
            .find(|(p, _)| p.series == s && p.label == r.frame)
        {
            Some((p, n)) => {
                p.ndr_pps += r.ndr_pps;
                p.pdr_pps += r.pdr_pps;
                p.generator_bound |= r.generator_bound;
                *n += 1;
            }
            None => points.push((
                FramePoint {
                    label: r.frame.clone(),
                    bytes: r.frame_bytes,
                    ndr_pps: r.ndr_pps,
                    pdr_pps: r.pdr_pps,
                    generator_bound: r.generator_bound,
                    series: s,
                },
                1,
            )),
        }
    }
    points
        .into_iter()
        .map(|(mut p, n)| {
            p.ndr_pps /= n as f64;
            p.pdr_pps /= n as f64;
            p
        })
        .collect()
}

/// A frame rate for the table: `512.34 kfps`.
fn fps(pps: f64) -> String {
    let (div, unit) = crate::unit::Unit::PacketRate.axis(pps);
    format!("{:.2} {}", pps / div, unit.replace("pps", "fps"))
}

/// One row per run.
fn table(read: &[(RunId, &RunRecord, Rfc2544Run)], esc: fn(&str) -> String) -> String {
    let variants = read.iter().any(|(_, r, d)| !series(r, d).is_empty());
    let mut t = format!(
        "<div class=\"scroll\"><table>\n<thead><tr><th class=\"num\">Run</th>{}<th>Frame</th>\
         <th class=\"num\">NDR</th><th class=\"num\">PDR</th><th class=\"num\">NDR % of line</th>\
         <th class=\"num\">Latency p50 (10/50/90 % NDR)</th>\
         <th class=\"num\">p99 (90 %)</th><th class=\"num\">Generator alone</th>\
         <th class=\"num\">Trials</th><th class=\"num\">Search</th><th>Limit</th></tr></thead>\n\
         <tbody>\n",
        if variants { "<th>Variant</th>" } else { "" },
    );
    for (id, run, doc) in read {
        let r = &doc.result;
        let variant = if variants {
            format!(
                "<td class=\"nowrap\">{}</td>",
                run.experiment
                    .as_ref()
                    .map(|e| esc(&format!("{} #{}", e.variant, e.repetition)))
                    .unwrap_or_default()
            )
        } else {
            String::new()
        };
        let bound = if r.generator_bound {
            format!(
                " <span title=\"{}\">(!)</span>",
                esc(r
                    .generator_bound_reason
                    .as_deref()
                    .unwrap_or("generator-bound"))
            )
        } else {
            String::new()
        };
        let latency = if r.latency_us.is_empty() {
            if doc.settings.latency {
                "–".to_owned()
            } else {
                "not measured".to_owned()
            }
        } else {
            r.latency_us
                .iter()
                .map(|l| {
                    l.latency
                        .map_or("–".to_owned(), |x| format!("{:.1}", x.p50))
                })
                .collect::<Vec<_>>()
                .join(" / ")
                + " µs"
        };
        let p99 = r
            .latency_us
            .iter()
            .find(|l| (l.ndr_percent - 90.0).abs() < 1e-9)
            .and_then(|l| l.latency)
            .map_or("–".to_owned(), |x| format!("{:.1} µs", x.p99));
        let _ = writeln!(
            t,
            "<tr id=\"run-{id}\"><td class=\"num\">{id}</td>{variant}<td>{}</td>\
             <td class=\"num\">{}{bound}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{:.2}%</td><td class=\"num\">{latency}</td>\
             <td class=\"num\">{p99}</td><td class=\"num\">{}</td><td class=\"num\">{}{}</td>\
             <td class=\"num\">{:.1} s</td><td>{}</td></tr>",
            esc(&r.frame),
            fps(r.ndr_pps),
            fps(r.pdr_pps),
            r.ndr.line_rate_percent,
            r.generator_ceiling_pps.map_or("unknown".to_owned(), fps),
            r.trial_count,
            if r.converged { "" } else { " (not converged)" },
            r.search_seconds,
            r.dut_limit.as_ref().map_or("–".to_owned(), |l| {
                let top = l.top(3);
                let text = if top.is_empty() {
                    l.verdict.label().to_owned()
                } else {
                    format!("{}: {top}", l.verdict.label())
                };
                format!(
                    "<span title=\"{}\">{}</span>",
                    esc(l.note.as_deref().unwrap_or("")),
                    esc(&text)
                )
            }),
        );
    }
    let pdr = read
        .first()
        .map_or(0.0, |(_, _, d)| d.settings.pdr_loss_ratio * 100.0);
    let line = read.first().map_or(String::new(), |(_, _, d)| {
        format!(
            " Line rate: {} at L1{}.",
            crate::format::rate(d.link_bps),
            if d.link_source.is_empty() {
                String::new()
            } else {
                format!(" ({})", d.link_source)
            }
        )
    });
    let _ = writeln!(
        t,
        "</tbody>\n</table></div>\n<p class=\"note\">NDR: the highest load forwarded without \
         loss; PDR: with at most {pdr}% lost; in frames per second of the frame size shown \
         (FCS included).{} Latency: one-way, microseconds, at 10, 50 and 90 % of NDR. Generator \
         alone: what the generator sends into a sink, its own ceiling. (!): generator-bound \
         (hover for why). Limit: when the DUT is the limit, whether its CPU held it and where \
         that CPU went in a 2 s profile just above NDR (busy samples, every CPU).</p>",
        esc(&line)
    );
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use linerate_store::rfc2544::{FrameResult, Latency, LatencyAt, SearchMethod, Settings, rate};
    use linerate_store::{ExperimentRef, RunContext, RunSource};

    fn run(variant: &str, repetition: u32, ndr: f64, bound: bool) -> RunRecord {
        let line = 14_880_952.0;
        let doc = Rfc2544Run {
            schema: stored::SCHEMA.into(),
            lab: "router-rfc2544".into(),
            link_bps: 10e9,
            link_source: "veth's nominal 10 Gbit/s".into(),
            settings: Settings {
                trial_s: 2.0,
                initial_trial_s: 0.2,
                phases: 2,
                width: 0.005,
                pdr_loss_ratio: 0.005,
                repeat: 2,
                threads: 1,
                search: SearchMethod::Mlr,
                latency: true,
            },
            repaired: None,
            clock: None,
            result: FrameResult {
                frame: "64".into(),
                frame_bytes: 64.0,
                line_rate_pps: line,
                ndr_pps: ndr,
                pdr_pps: ndr * 1.01,
                ndr: rate(ndr, 64.0, 84.0, line),
                pdr: rate(ndr * 1.01, 64.0, 84.0, line),
                ndr_upper_pps: None,
                pdr_upper_pps: None,
                latency_us: [10.0, 50.0, 90.0]
                    .into_iter()
                    .map(|p| LatencyAt {
                        ndr_percent: p,
                        load_pps: ndr * p / 100.0,
                        lost: 0,
                        latency: Some(Latency {
                            min: 1.0,
                            p50: p / 10.0,
                            p90: 20.0,
                            p99: 33.3,
                            max: 40.0,
                        }),
                    })
                    .collect(),
                generator_ceiling_pps: Some(600_000.0),
                generator_bound: bound,
                generator_bound_reason: bound.then(|| "NDR near the ceiling".into()),
                converged: true,
                trial_count: 9,
                trial_seconds: 10.0,
                search_seconds: 15.0,
                ring_drops: 0,
                trials: Vec::new(),
                dut_limit: (!bound).then(|| DutLimit {
                    verdict: DutVerdict::Cpu,
                    load_pps: ndr * 1.01,
                    seconds: 2.0,
                    samples: 800,
                    router_cores: 0.95,
                    busy_cores: 1.9,
                    cpus: 2,
                    subsystems: vec![DutShare {
                        name: "conntrack".into(),
                        samples: 440,
                        percent: 55.0,
                    }],
                    note: None,
                }),
            },
        };
        let mut context = RunContext::new(RunSource::Lab);
        context.experiment = Some(ExperimentRef {
            experiment: "router-rfc2544-1".into(),
            variant: variant.into(),
            repetition,
            sweep_value: None,
            sweep_label: None,
        });
        doc.record(context, 0).expect("record")
    }

    use linerate_iperf3::dut_limit::{DutLimit, DutShare, DutVerdict};

    fn esc(s: &str) -> String {
        s.replace('<', "&lt;")
    }

    #[test]
    fn the_section_shows_frames_per_second_latency_and_the_generator_bound_mark() {
        let runs = vec![
            (RunId(1), run("no-firewall", 1, 540_000.0, true)),
            (RunId(2), run("conntrack", 1, 310_000.0, false)),
            (RunId(3), run("no-firewall", 2, 530_000.0, false)),
        ];
        let mut charts = Vec::new();
        let html = section(
            &runs,
            &mut |c, html| {
                let c = c?;
                html.push_str(&c.svg);
                charts.push(c);
                Ok(())
            },
            esc,
        )
        .expect("section");
        for text in [
            "RFC 2544 throughput",
            "540.00 kfps",
            "310.00 kfps",
            "1.0 / 5.0 / 9.0 µs",
            "33.3 µs",
            "600.00 kfps",
            "(!)",
            "no-firewall #2",
            "no-firewall",
            "DUT (router) CPU: conntrack 55 %",
        ] {
            assert!(html.contains(text), "{text} missing");
        }
        assert_eq!(charts.len(), 1);
        // One pair of lines per variant, named in the legend.
        assert!(
            charts[0].svg.contains("no loss) · no-firewall"),
            "{}",
            charts[0].svg
        );
        // The mean of the variant's repetitions is drawn, not each run.
        let p = points(
            &runs
                .iter()
                .map(|(id, r)| (*id, r, Rfc2544Run::from_record(r).expect("reads")))
                .collect::<Vec<_>>(),
        );
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].ndr_pps, 535_000.0);
        assert!(p[0].generator_bound);
        assert_eq!(
            crate::metric::Metric::FrameRate
                .value(&runs[1].1)
                .ok()
                .flatten(),
            Some(310_000.0)
        );
    }

    #[test]
    fn a_run_whose_document_does_not_read_is_named_not_skipped() {
        let mut bad = run("a", 1, 1000.0, false);
        bad.document["result"]
            .as_object_mut()
            .expect("object")
            .remove("ndr_pps");
        let html = section(&[(RunId(7), bad)], &mut |_, _| Ok(()), esc).expect("section");
        assert!(
            html.contains("run 7") && html.contains("result.ndr_pps"),
            "{html}"
        );
        // No RFC 2544 run: no section.
        assert_eq!(section(&[], &mut |_, _| Ok(()), esc).expect("none"), "");
    }
}
