//! The finding model shared by every rule that judges a host: settings rules (lint, audit) and
//! hardware rules (`linerate-probe`). The binary renders findings; rules only produce them.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// How bad a finding is. Ordered: `Info < Warning < Error`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing to fix.
    Info,
    /// Probably wrong or wasteful for the stated role and path.
    Warning,
    /// Wrong: harmful, removed, invalid or inconsistent.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// Where the judged value came from: a file and line, or a live source such as
/// `/proc/sys/net/core/rmem_max` or `eth0`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Location {
    /// File path, or a live source name.
    pub source: String,
    /// 1-based line number, when the source is a file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}", self.source),
            None => f.write_str(&self.source),
        }
    }
}

/// What to do about a finding.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "lowercase")]
pub enum Fix {
    /// Delete the line or setting.
    Remove,
    /// Set this value instead.
    Set(String),
    /// Use this key instead (a renamed or misspelt key).
    Rename(String),
    /// Run this command (e.g. `ethtool -K eth0 lro off`).
    Command(String),
    /// Nothing to change (informational findings).
    None,
}

/// One judgement about one setting or piece of hardware.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Finding {
    /// Stable rule id, e.g. `removed-key`, `harmful`, `bus-too-slow`.
    pub rule: String,
    /// How bad it is.
    pub severity: Severity,
    /// Where the value came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
    /// The setting or object judged (a sysctl key, an interface name, `cpu`).
    pub key: String,
    /// Its value as found, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Why, in one sentence that states the fact.
    pub why: String,
    /// What to do.
    pub fix: Fix,
    /// The document the fact comes from.
    pub source: String,
}

impl fmt::Display for Fix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fix::Remove => f.write_str("remove"),
            Fix::Set(v) => write!(f, "set {v}"),
            Fix::Rename(k) => write!(f, "use {k}"),
            Fix::Command(c) => write!(f, "run `{c}`"),
            Fix::None => f.write_str("nothing to change"),
        }
    }
}

/// `--fail-on` (`lint`, `audit`): the severity at or above which the command exits 1.
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
