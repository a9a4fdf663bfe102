//! Rendering findings for people (grouped by file, worst first within a line order), shared by
//! `lint` and `audit`; their order, counts and `--fail-on` threshold are
//! `linerate_tuning::finding`'s.

use std::fmt::Write as _;

use linerate_report::format;
use linerate_tuning::Finding;
use linerate_tuning::finding::Summary;

/// Human rendering: one block per file, one finding per two lines.
pub fn render(findings: &[Finding], unlocated_title: &str) -> String {
    let mut out = String::new();
    let mut current: Option<Option<String>> = None;
    for f in findings {
        let file = f
            .location
            .as_ref()
            .filter(|l| l.line.is_some())
            .map(|l| l.source.clone());
        if current.as_ref() != Some(&file) {
            let title = file.clone().unwrap_or_else(|| unlocated_title.to_string());
            let _ = writeln!(out, "{}{title}", if current.is_some() { "\n" } else { "" });
            current = Some(file);
        }
        let at = match &f.location {
            Some(l) => match l.line {
                Some(n) => format!("{n}: "),
                None => format!("{}: ", l.source),
            },
            None => String::new(),
        };
        // A syntax finding has no key: its value is the whole line, shown as written.
        let value = match (f.key.is_empty(), f.value.as_deref()) {
            (true, Some(line)) => format!("`{}`", format::excerpt(line, format::EXCERPT_CHARS)),
            (false, Some(v)) => format!(" = {}", format::printable(v)),
            (_, None) => String::new(),
        };
        let key = format::printable(&f.key);
        let _ = writeln!(out, "  {at}{}[{}] {key}{value}", f.severity, f.rule);
        let _ = writeln!(out, "      {}", format::printable(&f.why));
        let _ = writeln!(out, "      fix: {} (source: {})", f.fix, f.source);
    }
    let s = Summary::of(findings);
    let _ = writeln!(
        out,
        "{}{} error(s), {} warning(s), {} info",
        if findings.is_empty() { "" } else { "\n" },
        s.error,
        s.warning,
        s.info
    );
    out
}
