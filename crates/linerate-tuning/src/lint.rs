//! The rules: judge a set of settings (from files, a dump or the live host) for a target
//! [`Context`] and return [`Finding`]s. Whether a key exists lives in `lint/existence.rs`,
//! per-setting value rules in `lint/entry.rs` (amounts in `lint/capacity.rs`), rules that relate
//! several settings in `lint/cross.rs`, and rules about the stated path in `lint/path.rs`;
//! [`files`] reads `linerate lint`'s files and runs the rules over them.
//!
//! Severity policy, for every rule:
//! - **error**: the line will fail (no such key on the target, a value the kernel rejects, a
//!   read-only key) or does harm (a setting known to break or weaken the stack);
//! - **warning**: a measurable cost or risk, with the formula and the threshold in the message
//!   (a queue that drains in 369 ms at 10 Gbit/s, buffers below the path's BDP);
//! - **info**: style, redundancy, and what is outside linerate's knowledge (a key with no rules,
//!   a value equal to the default, a duplicate with the same value, a renamed key's old name).
//!
//! A key is "unknown" (an error) only with positive evidence: it was removed in a stated
//! version, it is absent from a subtree the inventory lists completely for the target version,
//! it is a near miss of a known key, or it belongs to another OS's tree. A key linerate simply
//! does not know is `info[unchecked]`.

mod capacity;
mod cross;
mod entry;
mod existence;
pub mod files;
mod path;

use std::collections::HashMap;

use crate::catalogue::{CatalogueError, Knob, OsCatalogue, catalogue};
use crate::context::Context;
use crate::finding::{Finding, Fix, Location, Severity};
use crate::inventory::{Inventory, inventory};
use crate::parse::{Entry, Format};
use crate::value::{Value, normalize};

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
    /// The OS's key inventory (none for Windows).
    pub inv: Option<&'a Inventory>,
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
        inv: inventory(ctx.os)?,
        mode,
        set: HashMap::new(),
        all_keys: HashMap::new(),
        saw_loader: false,
    };
    for e in entries {
        state.all_keys.insert(e.key.clone(), e.value.clone());
        state.saw_loader |= e.format == Format::Loader;
    }
    let mut seen: HashMap<(&str, Format), &Entry> = HashMap::new();
    for e in entries {
        if mode == Mode::Files {
            if let Some(first) = seen.insert((e.key.as_str(), e.format), e) {
                findings.push(duplicate(first, e));
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

/// A key set twice in files of the same kind: redundant when the values agree, a warning naming
/// both lines when they do not (only the later one takes effect).
fn duplicate(first: &Entry, again: &Entry) -> Finding {
    let (sev, why) = if normalize(&first.value) == normalize(&again.value) {
        (
            Severity::Info,
            format!(
                "also set to the same value at {}; one of the two lines is redundant",
                first.location
            ),
        )
    } else {
        (
            Severity::Warning,
            format!(
                "set twice with different values: {} at {}, then {} here; only this last assignment takes effect",
                first.value, first.location, again.value
            ),
        )
    };
    finding(
        "duplicate",
        sev,
        Some(again.location.clone()),
        &again.key,
        Some(&again.value),
        why,
        Fix::Remove,
        "sysctl.conf(5), sysctl.d(5)",
    )
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

#[cfg(test)]
mod tests;
