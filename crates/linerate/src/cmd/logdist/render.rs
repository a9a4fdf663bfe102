//! The human rendering: an ASCII histogram (one row per bin, the share in the first bin
//! stated as the guides quote it), the percentiles, the skipped lines by reason, and for a
//! comparison both distributions side by side with the test's verdict.

use std::fmt::Write;

use linerate_logdist::human::time_s;
use linerate_logdist::summary::Bin;
use linerate_logdist::{Comparison, Summary};

/// Bar width in characters.
const BAR: usize = 40;

fn signed_time_s(s: f64) -> String {
    if s > 0.0 {
        format!("+{}", time_s(s))
    } else if s < 0.0 {
        format!("-{}", time_s(-s))
    } else {
        "0".to_owned()
    }
}

fn percent(share: f64) -> String {
    format!("{:.2} %", share * 100.0)
}

fn percentile_name(p: f64) -> String {
    if p >= 100.0 {
        "max".to_owned()
    } else {
        format!("p{p}")
    }
}

fn bin_label(bin: &Bin) -> String {
    match bin.to_s {
        Some(to) => format!("{} - {}", time_s(bin.from_s), time_s(to)),
        None => format!(">= {}", time_s(bin.from_s)),
    }
}

/// The bins worth drawing: up to the last non-empty regular bin, then the overflow bin.
fn shown_bins(bins: &[Bin]) -> usize {
    bins.iter().rposition(|b| b.count > 0).map_or(1, |i| i + 1)
}

fn bar(count: u64, tallest: u64) -> String {
    if tallest == 0 {
        return String::new();
    }
    let len = (count as f64 / tallest as f64 * BAR as f64).round() as usize;
    let len = if count > 0 { len.max(1) } else { 0 };
    "#".repeat(len)
}

fn input_line(s: &Summary) -> String {
    let names: Vec<String> = s
        .inputs
        .iter()
        .map(|i| {
            let detected = if i.layout.detected { ", detected" } else { "" };
            format!(
                "{} ({} {}{detected})",
                i.name,
                i.layout.format.name(),
                i.layout.field
            )
        })
        .collect();
    names.join(", ")
}

fn warnings(s: &Summary, out: &mut String) {
    for input in &s.inputs {
        if let Some(err) = &input.stream_error {
            let _ = writeln!(
                out,
                "warning: {}: the gzip stream ends early ({err}); {} lines were read and used",
                input.name, input.lines
            );
        }
    }
}

fn counts_line(s: &Summary) -> String {
    let mut line = format!("{} lines: {} timed", s.lines, s.count);
    if s.filtered_out > 0 {
        let _ = write!(line, ", {} filtered out", s.filtered_out);
    }
    let _ = write!(line, ", {} skipped", s.skipped);
    if s.crlf_lines > 0 {
        let _ = write!(line, " ({} CRLF line endings, read normally)", s.crlf_lines);
    }
    line
}

fn precision_note(s: &Summary) -> String {
    if s.mode == "exact" {
        "percentiles are exact: nearest rank".to_owned()
    } else {
        format!(
            "percentiles within ±{:.3} %: log-linear histogram; --exact for exact values",
            s.relative_precision * 100.0
        )
    }
}

fn skipped(s: &Summary, out: &mut String) {
    if s.skipped_by_reason.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nskipped lines:");
    for r in &s.skipped_by_reason {
        let more = if r.count > r.first_lines.len() as u64 {
            ", …"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  {:>9}  {:<48} {}{more}",
            r.count,
            r.description,
            r.first_lines.join(", ")
        );
    }
}

/// The report of one data set.
pub fn summary(s: &Summary) -> String {
    let mut out = String::new();
    warnings(s, &mut out);
    let _ = writeln!(out, "{}", input_line(s));
    let _ = writeln!(out, "{}\n", counts_line(s));
    let bins = &s.histogram.bins;
    let shown = shown_bins(bins);
    let tallest = bins.iter().map(|b| b.count).max().unwrap_or(0);
    let labels: Vec<String> = bins.iter().map(bin_label).collect();
    let label_width = label_width(&labels);
    let count_width = tallest.to_string().len().max(5);
    let _ = writeln!(
        out,
        "  {:<label_width$}  {:>count_width$}  {:>8}  {:>8}",
        "time", "count", "share", "cumul"
    );
    let mut cumulative = 0.0;
    for (bin, label) in bins.iter().zip(&labels).take(shown) {
        cumulative += bin.share;
        let _ = writeln!(
            out,
            "  {label:<label_width$}  {:>count_width$}  {:>8}  {:>8}  |{}",
            bin.count,
            percent(bin.share),
            percent(cumulative),
            bar(bin.count, tallest)
        );
    }
    if let Some(last) = bins
        .last()
        .filter(|b| b.to_s.is_none() && shown < bins.len())
    {
        let label = labels.last().map_or("", String::as_str);
        let _ = writeln!(
            out,
            "  {label:<label_width$}  {:>count_width$}  {:>8}  {:>8}  |{}",
            last.count,
            percent(last.share),
            percent(1.0),
            bar(last.count, tallest)
        );
    }
    let _ = writeln!(
        out,
        "\n{} of requests under {} ({} of {})",
        percent(s.under_threshold_share),
        time_s(s.threshold_s),
        s.under_threshold,
        s.count
    );
    let _ = writeln!(
        out,
        "\nn {}   mean {}   min {}   max {}",
        s.count,
        time_s(s.mean_s),
        time_s(s.min_s),
        time_s(s.max_s)
    );
    let pcts: Vec<String> = s
        .percentiles
        .iter()
        .map(|p| format!("{} {}", percentile_name(p.percentile), time_s(p.seconds)))
        .collect();
    let _ = writeln!(out, "{}", pcts.join("   "));
    let _ = writeln!(out, "({})", precision_note(s));
    skipped(s, &mut out);
    trim_lines(&out)
}

/// The side-by-side comparison.
pub fn comparison(c: &Comparison) -> String {
    let mut out = String::new();
    warnings(&c.before, &mut out);
    warnings(&c.after, &mut out);
    let _ = writeln!(out, "BEFORE: {}", input_line(&c.before));
    let _ = writeln!(out, "        {}", counts_line(&c.before));
    let _ = writeln!(out, "AFTER:  {}", input_line(&c.after));
    let _ = writeln!(out, "        {}\n", counts_line(&c.after));

    let _ = writeln!(
        out,
        "  {:<14} {:>12} {:>12} {:>24}",
        "", "BEFORE", "AFTER", "shift"
    );
    let _ = writeln!(
        out,
        "  {:<14} {:>12} {:>12}",
        "count", c.before.count, c.after.count
    );
    let rel = |from: f64, to: f64| {
        if from > 0.0 {
            format!(
                "{} ({:+.1} %)",
                signed_time_s(to - from),
                (to - from) / from * 100.0
            )
        } else {
            signed_time_s(to - from)
        }
    };
    let _ = writeln!(
        out,
        "  {:<14} {:>12} {:>12} {:>24}",
        "mean",
        time_s(c.before.mean_s),
        time_s(c.after.mean_s),
        rel(c.before.mean_s, c.after.mean_s)
    );
    for s in &c.shifts {
        let _ = writeln!(
            out,
            "  {:<14} {:>12} {:>12} {:>24}",
            percentile_name(s.percentile),
            time_s(s.before_s),
            time_s(s.after_s),
            rel(s.before_s, s.after_s)
        );
    }
    let _ = writeln!(
        out,
        "  {:<14} {:>12} {:>12} {:>24}",
        format!("under {}", time_s(c.threshold_s)),
        percent(c.share_before),
        percent(c.share_after),
        format!("{:+.2} points", (c.share_after - c.share_before) * 100.0)
    );

    // Side-by-side histogram of shares.
    let (bb, ab) = (&c.before.histogram.bins, &c.after.histogram.bins);
    let regular = |bins: &[Bin]| bins.iter().filter(|b| b.to_s.is_some()).count();
    let shown = shown_bins(&bb[..regular(bb)]).max(shown_bins(&ab[..regular(ab)]));
    let tallest = bb
        .iter()
        .chain(ab.iter())
        .map(|b| b.share)
        .fold(0.0, f64::max);
    let half = BAR / 2;
    let share_bar = |share: f64| {
        let len = if tallest > 0.0 {
            (share / tallest * half as f64).round() as usize
        } else {
            0
        };
        "#".repeat(if share > 0.0 { len.max(1) } else { 0 })
    };
    let labels: Vec<String> = bb.iter().take(shown).map(bin_label).collect();
    let label_width = label_width(&labels);
    let _ = writeln!(
        out,
        "\n  {:<label_width$}  {:>8} {:<half$}  {:>8} {:<half$}",
        "time", "BEFORE", "", "AFTER", ""
    );
    for (i, label) in labels.iter().enumerate() {
        let (b, a) = (
            bb.get(i).map_or(0.0, |b| b.share),
            ab.get(i).map_or(0.0, |b| b.share),
        );
        let _ = writeln!(
            out,
            "  {label:<label_width$}  {:>8} {:<half$}  {:>8} {}",
            percent(b),
            share_bar(b),
            percent(a),
            share_bar(a)
        );
    }
    let overflow = |bins: &[Bin]| {
        bins.last()
            .filter(|b| b.to_s.is_none())
            .map_or(0.0, |b| b.share)
    };
    let (ob, oa) = (overflow(bb), overflow(ab));
    if ob > 0.0 || oa > 0.0 {
        let _ = writeln!(
            out,
            "  {:<label_width$}  {:>8} {:<half$}  {:>8} {}",
            format!(">= {}", time_s(c.before.histogram.max_s)),
            percent(ob),
            share_bar(ob),
            percent(oa),
            share_bar(oa)
        );
    }

    let _ = writeln!(out);
    match &c.test {
        Some(t) => {
            let _ = writeln!(
                out,
                "two-sample Kolmogorov-Smirnov: D = {:.4} (at {}), λ = {:.3}, p = {}",
                t.ks.d,
                time_s(t.at_s),
                t.ks.lambda,
                format_p(t.ks.p_value)
            );
            let _ = writeln!(out, "=> {}", t.verdict);
            let _ = writeln!(
                out,
                "(KS, not Mann-Whitney: it compares whole distributions, so a shorter tail or \
                 a larger share under a threshold counts even when the median stays put)"
            );
        }
        None => {
            let _ = writeln!(out, "no test: one side has no timed lines");
        }
    }
    let (nb, na) = (precision_note(&c.before), precision_note(&c.after));
    if nb == na {
        let _ = writeln!(out, "({nb})");
    } else {
        let _ = writeln!(out, "(BEFORE: {nb}; AFTER: {na})");
    }
    trim_lines(&out)
}

/// Drops the padding that trails some table rows.
fn trim_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// A p-value: 3 significant digits, or `< 1e-300` at the floor of f64.
pub fn format_p(p: f64) -> String {
    if p <= 0.0 {
        "< 1e-300".to_owned()
    } else if p >= 0.001 {
        format!("{p:.3}")
    } else {
        format!("{p:.2e}")
    }
}

/// The width of the time column: the longest bin label, at least as wide as "time".
fn label_width(labels: &[String]) -> usize {
    labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(4)
        .max(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifts_carry_their_sign() {
        assert_eq!(signed_time_s(-0.0123), "-12.3 ms");
        assert_eq!(signed_time_s(0.5), "+500 ms");
        assert_eq!(signed_time_s(0.0), "0");
    }

    #[test]
    fn p_values_print_readably() {
        assert_eq!(format_p(0.5411), "0.541");
        assert_eq!(format_p(0.0000123), "1.23e-5");
        assert_eq!(format_p(0.0), "< 1e-300");
    }

    #[test]
    fn bars_scale_and_show_any_nonzero_count() {
        assert_eq!(bar(0, 10), "");
        assert_eq!(bar(1, 10_000), "#");
        assert_eq!(bar(10, 10).len(), BAR);
    }
}
