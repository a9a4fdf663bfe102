//! Rendering findings for people (grouped by file, worst first within a line order) and the
//! `--fail-on` threshold shared by `lint` and `audit`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::str::FromStr;

use linerate_report::format;
use linerate_tuning::{Finding, Severity};

/// The severity at or above which the command exits 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOn {
    /// At this severity or worse.
    At(Severity),
    /// Never.
    Never,
}

impl FromStr for FailOn {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "error" => Ok(FailOn::At(Severity::Error)),
            "warning" => Ok(FailOn::At(Severity::Warning)),
            "info" => Ok(FailOn::At(Severity::Info)),
            "never" => Ok(FailOn::Never),
            _ => Err(format!("`{s}`: expected error, warning, info or never")),
        }
    }
}

impl FailOn {
    /// Whether `findings` trip the threshold.
    pub fn tripped(self, findings: &[Finding]) -> bool {
        match self {
            FailOn::Never => false,
            FailOn::At(min) => findings.iter().any(|f| f.severity >= min),
        }
    }
}

/// Counts by severity.
#[derive(Debug, Default, serde::Serialize)]
pub struct Summary {
    /// Errors.
    pub error: usize,
    /// Warnings.
    pub warning: usize,
    /// Infos.
    pub info: usize,
    /// Counts by rule id.
    pub by_rule: BTreeMap<String, usize>,
}

impl Summary {
    /// Counts `findings`.
    pub fn of(findings: &[Finding]) -> Summary {
        let mut s = Summary::default();
        for f in findings {
            match f.severity {
                Severity::Error => s.error += 1,
                Severity::Warning => s.warning += 1,
                Severity::Info => s.info += 1,
            }
            *s.by_rule.entry(f.rule.clone()).or_default() += 1;
        }
        s
    }
}

/// Sorts findings by file, then line, then severity (worst first).
pub fn sort(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        let key = |f: &Finding| {
            (
                f.location.as_ref().map(|l| l.source.clone()),
                f.location.as_ref().and_then(|l| l.line),
            )
        };
        key(a).cmp(&key(b)).then(b.severity.cmp(&a.severity))
    });
}

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
