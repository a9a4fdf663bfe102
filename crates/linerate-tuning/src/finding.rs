//! The finding model shared by every rule that judges a host: settings rules (lint, audit) and
//! hardware rules (`linerate-probe`). The binary renders findings; rules only produce them.

use std::fmt;

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
