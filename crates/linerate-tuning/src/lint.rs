//! The rules: judge a set of settings (from files, a dump or the live host) for a target
//! [`Context`] and return [`Finding`]s. Per-setting rules live in `lint/entry.rs`, rules that
//! relate several settings in `lint/cross.rs`, and rules about the stated path in `lint/path.rs`.

mod capacity;
mod cross;
mod entry;
mod path;

use std::collections::HashMap;

use crate::catalogue::{CatalogueError, Knob, OsCatalogue, catalogue};
use crate::context::Context;
use crate::finding::{Finding, Fix, Location, Severity};
use crate::parse::Entry;
use crate::value::Value;

/// What the entries represent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Configuration files: only what they set. Values equal to the default are redundant.
    Files,
    /// The whole live state (audit, `sysctl -a` dump): defaults are expected, not redundant.
    Live,
}

/// The effective value of one knob: set by an entry, or the target's default.
#[derive(Debug, Clone)]
pub(crate) struct Effective {
    pub value: Value,
    pub location: Option<Location>,
    /// Whether an entry set it (as opposed to the default).
    pub set: bool,
}

/// The state the rules look at: the last valid assignment of each key.
pub(crate) struct State<'a> {
    pub ctx: &'a Context,
    pub cat: &'a OsCatalogue,
    pub mode: Mode,
    pub set: HashMap<String, (Value, Location)>,
    /// Every key of every entry (valid or not), for dependency checks (loader commands).
    pub all_keys: HashMap<String, String>,
    /// Whether any loader.conf file was among the inputs.
    pub saw_loader: bool,
}

impl State<'_> {
    /// The value in force for `key`: the file's, else the default for the target version.
    pub fn effective(&self, key: &str) -> Option<Effective> {
        if let Some((value, location)) = self.set.get(key) {
            return Some(Effective {
                value: value.clone(),
                location: Some(location.clone()),
                set: true,
            });
        }
        let knob = self.cat.get(key)?;
        let default = knob.default_on(&self.ctx.version)?;
        let value = Value::parse(knob.ty, default).ok()?;
        Some(Effective {
            value,
            location: None,
            set: false,
        })
    }
}

/// Judges `entries` for `ctx`. Syntax findings from parsing are not included (the caller has
/// them); everything else is.
pub fn lint(entries: &[Entry], ctx: &Context, mode: Mode) -> Result<Vec<Finding>, CatalogueError> {
    let cat = catalogue(ctx.os)?;
    let mut findings = Vec::new();
    let mut state = State {
        ctx,
        cat,
        mode,
        set: HashMap::new(),
        all_keys: HashMap::new(),
        saw_loader: false,
    };
    let mut seen: HashMap<&str, &Location> = HashMap::new();
    for e in entries {
        state.all_keys.insert(e.key.clone(), e.value.clone());
        state.saw_loader |= e.format == crate::parse::Format::Loader;
        if mode == Mode::Files {
            if let Some(first) = seen.insert(e.key.as_str(), &e.location) {
                findings.push(finding(
                    "duplicate",
                    Severity::Warning,
                    Some(e.location.clone()),
                    &e.key,
                    Some(&e.value),
                    format!("also set at {first}; only the last assignment takes effect"),
                    Fix::Remove,
                    "sysctl.conf(5)",
                ));
            }
        }
        if let Some(value) = entry::check(e, &state, &mut findings) {
            state.set.insert(e.key.clone(), (value, e.location.clone()));
        }
    }
    cross::check(&state, &mut findings);
    path::check(&state, &mut findings);
    Ok(findings)
}

/// Builds a finding.
#[allow(clippy::too_many_arguments)]
pub(crate) fn finding(
    rule: &str,
    severity: Severity,
    location: Option<Location>,
    key: &str,
    value: Option<&str>,
    why: String,
    fix: Fix,
    source: &str,
) -> Finding {
    Finding {
        rule: rule.to_string(),
        severity,
        location,
        key: key.to_string(),
        value: value.map(str::to_string),
        why,
        fix,
        source: source.to_string(),
    }
}

/// A finding about a knob whose value is in force (set or default).
pub(crate) fn about(
    rule: &str,
    severity: Severity,
    key: &str,
    eff: &Effective,
    why: String,
    fix: Fix,
    knob: Option<&Knob>,
) -> Finding {
    let why = if eff.set {
        why
    } else {
        format!("{why} (not set: this is the default)")
    };
    finding(
        rule,
        severity,
        eff.location.clone(),
        key,
        Some(&eff.value.to_string()),
        why,
        fix,
        knob.map_or("tuning-facts.md", |k| k.source.as_str()),
    )
}

/// Human byte counts for messages: `100 MB`, `32 MiB`, `2.4 MiB`. Takes any integer; negative
/// counts print as 0.
pub(crate) fn bytes(n: impl Into<i128>) -> String {
    let n = u64::try_from(n.into().max(0)).unwrap_or(u64::MAX);
    let s = linerate_units::ByteSize::from_bytes(n);
    let exact = s.to_string();
    // Round and short exact forms read best (`100 MB`, `32 MiB`, `1.25 GiB`); long ones are
    // rounded (`2.4 MiB`), and so is kernel memory (whole KiB, pages) whose short form is SI:
    // `572.2 GiB`, not `614.4 GB`, beside a RAM size in GiB.
    let round = !exact.contains('.');
    let memory_in_si = n % 1024 == 0 && !exact.ends_with("iB");
    if n < 1024 || round || (exact.len() <= 8 && !memory_in_si) {
        exact
    } else {
        format!("{s:.1}")
    }
}

#[cfg(test)]
mod tests;
