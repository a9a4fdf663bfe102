//! The human rendering of an RFC 2544 result (`lab rfc2544`, `rfc2544`): one table of NDR/PDR
//! per frame size (frames/s, L1 and L2 bit rates, % of line rate), one of latency with how its
//! clocks were judged, and the generator-bound warnings.

use linerate_lab::rfc2544::procedure::Throughput;
use linerate_store::rfc2544::{FrameResult, Rate, SearchMethod, Settings};
use linerate_units::{BitRate, PacketRate};
use serde::Serialize;

/// The JSON schema of the results.
pub const SCHEMA: &str = linerate_store::rfc2544::SCHEMA;

/// The whole result as `--json` prints it (`linerate.rfc2544/1`).
#[derive(Debug, Clone, Serialize)]
pub struct Report<'a> {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// The test bed's name (the lab's).
    pub lab: &'a str,
    /// Link rate used for line rate, bits/s (L1).
    pub link_bps: f64,
    /// Where the link rate came from.
    pub link_source: &'a str,
    /// Search settings.
    pub settings: &'a Settings,
    /// What the test bed repaired before the search.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repaired: Option<&'a str>,
    /// How the clocks of one-way latency were judged (a receiver on another host).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock: Option<&'a str>,
    /// Per frame size, in the order asked.
    pub results: &'a [FrameResult],
    /// The stored experiment, when stored.
    pub stored_as: Option<String>,
    /// What was measured, for the text's title (`lab demo (gen → dut → recv)`).
    #[serde(skip)]
    pub bed: String,
    /// The path of one-way latency, for the text (`gen → recv`).
    #[serde(skip)]
    pub path: String,
}

impl<'a> Report<'a> {
    pub fn of(t: &'a Throughput, bed: String, path: String) -> Report<'a> {
        Report {
            schema: SCHEMA,
            lab: &t.lab,
            link_bps: t.link.rate.as_f64(),
            link_source: &t.link.source,
            settings: &t.settings,
            repaired: t.repaired.as_deref(),
            clock: t.clock.as_deref(),
            results: &t.results,
            stored_as: None,
            bed,
            path,
        }
    }
}

fn gbit(bps: f64) -> String {
    format!("{:.3}", bps / 1e9)
}

fn cells(r: &Rate) -> [String; 4] {
    [
        format!("{:.0}", r.pps),
        gbit(r.l1_bps),
        gbit(r.l2_bps),
        format!("{:.2}", r.line_rate_percent),
    ]
}

/// Columns padded to their widest cell; the first left-aligned, the rest right-aligned.
fn table(rows: &[Vec<String>]) -> String {
    use crate::cmd::calc::format::{Align, Table};
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let align: Vec<Align> = (0..n)
        .map(|c| if c == 0 { Align::Left } else { Align::Right })
        .collect();
    let mut t = Table::bare(&align);
    for r in rows {
        t.row(r.clone());
    }
    t.render("")
}

/// The report as text.
pub fn text(r: &Report<'_>) -> String {
    let s = &r.settings;
    let mut out = format!(
        "RFC 2544 throughput of {}, line rate {} at L1 ({})\n\
         search ({}): NDR (no loss) and PDR (loss ≤ {}%), trials {} s to {} s over {} \
         phase(s), width {}%, each final bound over {} trial(s)\n\n",
        r.bed,
        BitRate::from_bps_f64(r.link_bps).human(),
        r.link_source,
        if s.search == SearchMethod::Binary {
            "plain binary search, one goal after the other"
        } else {
            "MLRsearch-style"
        },
        s.pdr_loss_ratio * 100.0,
        s.initial_trial_s,
        s.trial_s,
        s.phases,
        s.width * 100.0,
        s.repeat,
    );
    let mut rows = vec![vec![
        "frame".to_owned(),
        "NDR fps".into(),
        "L1 Gbit/s".into(),
        "L2 Gbit/s".into(),
        "% line".into(),
        "PDR fps".into(),
        "L1 Gbit/s".into(),
        "L2 Gbit/s".into(),
        "% line".into(),
        "trials".into(),
        "time s".into(),
    ]];
    for f in r.results {
        let mut row = vec![if f.generator_bound {
            format!("{} (!)", f.frame)
        } else {
            f.frame.clone()
        }];
        row.extend(cells(&f.ndr));
        row.extend(cells(&f.pdr));
        row.push(f.trial_count.to_string());
        row.push(format!("{:.1}", f.search_seconds));
        rows.push(row);
    }
    out.push_str(&table(&rows));
    if r.results
        .iter()
        .any(|f| f.latency_us.iter().any(|l| l.latency.is_some()))
    {
        out.push_str(&format!("\none-way latency, µs ({})\n", r.path));
        let mut rows = vec![vec![
            "frame".to_owned(),
            "load".into(),
            "fps".into(),
            "min".into(),
            "p50".into(),
            "p90".into(),
            "p99".into(),
            "max".into(),
            "lost".into(),
        ]];
        for f in r.results {
            for l in &f.latency_us {
                let mut row = vec![
                    f.frame.clone(),
                    format!("{:.0}% NDR", l.ndr_percent),
                    format!("{:.0}", l.load_pps),
                ];
                match &l.latency {
                    Some(x) => {
                        row.extend([x.min, x.p50, x.p90, x.p99, x.max].map(|v| format!("{v:.1}")))
                    }
                    None => row.extend(std::iter::repeat_n("-".to_owned(), 5)),
                }
                row.push(l.lost.to_string());
                rows.push(row);
            }
        }
        out.push_str(&table(&rows));
    }
    if let Some(clock) = r.clock {
        out.push_str(&format!("\nclocks: {clock}\n"));
    }
    out.push('\n');
    for f in r.results {
        out.push_str(&format!(
            "frame {}: {}; line rate {}; NDR upper bound {}{}\n",
            f.frame,
            f.generator_ceiling_pps.map_or_else(
                || "the generator's own ceiling unknown".to_owned(),
                |c| format!(
                    "generator alone {} into a sink",
                    PacketRate::from_pps(c).human()
                )
            ),
            PacketRate::from_pps(f.line_rate_pps).human(),
            f.ndr_upper_pps
                .map_or("none (the maximum load passed)".to_owned(), |u| format!(
                    "{:.0} fps",
                    u
                )),
            if f.converged {
                ""
            } else {
                "; NOT converged (--max-trials reached)"
            },
        ));
        if let Some(why) = &f.generator_bound_reason {
            out.push_str(&format!(
                "  (!) {}generator-bound: {why}; this measures the generator, not the DUT, whose \
                 NDR may be higher (try more --threads, or a faster generator)\n",
                if f.generator_ceiling_pps.is_none() {
                    "possibly "
                } else {
                    ""
                }
            ));
        }
        if let Some(l) = &f.dut_limit {
            out.push_str(&format!("  {}\n", linerate_explain::dut::line(l)));
        }
        if f.ring_drops > 0 {
            out.push_str(&format!(
                "  the receiver's ring dropped {} frame(s) during the search (counted as loss)\n",
                f.ring_drops
            ));
        }
    }
    out
}
