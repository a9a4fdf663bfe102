//! Rules about one catalogued setting on its own: is it removed or renamed on the target
//! version, is the value valid, harmful, a no-op, a downgrade, redundant, a bloated queue, or in
//! the wrong file. Keys outside the catalogue go to `lint/existence.rs`.

use crate::catalogue::{Knob, When};
use crate::finding::{Finding, Fix, Severity};
use crate::formula;
use crate::lint::{Mode, State, existence, finding};
use crate::near::distance;
use crate::os::Os;
use crate::parse::{Entry, Format};
use crate::value::{Value, ValueType};
use crate::wording::bytes_or;

/// Checks one entry; returns its parsed value when the key is known and the value valid.
pub(crate) fn check(e: &Entry, st: &State<'_>, out: &mut Vec<Finding>) -> Option<Value> {
    let ctx = st.ctx;
    let loc = Some(e.location.clone());
    let push =
        |out: &mut Vec<Finding>, rule: &str, sev: Severity, why: String, fix: Fix, src: &str| {
            out.push(finding(
                rule,
                sev,
                loc.clone(),
                &e.key,
                Some(&e.value),
                why,
                fix,
                src,
            ));
        };

    if let Some(comment) = &e.inline_comment {
        if ctx.os == Os::Linux && e.format == Format::Sysctl {
            push(
                out,
                "syntax",
                Severity::Warning,
                format!(
                    "sysctl(8) and systemd-sysctl do not strip inline comments: they write `{} {comment}`",
                    e.value
                ),
                Fix::Set(e.value.clone()),
                "sysctl.conf(5)",
            );
        }
    }

    existence::module_note(e, st, out);
    let Some(knob) = st.cat.get(&e.key) else {
        existence::check(e, st, out);
        return None;
    };

    if let Some(removed) = &knob.removed {
        if ctx.version >= *removed {
            let why = format!("removed by {} {removed}: {}", ctx.os, knob.summary);
            let fix = knob
                .renamed_to
                .as_ref()
                .map_or(Fix::Remove, |n| Fix::Rename(n.clone()));
            let sev = if e.ignore_errors {
                Severity::Warning
            } else {
                Severity::Error
            };
            push(out, "removed-key", sev, why, fix, &knob.source);
            return None;
        }
    }
    if let Some(added) = &knob.added {
        if ctx.version < *added {
            push(
                out,
                "not-in-version",
                Severity::Error,
                format!(
                    "first appeared in {} {added}; the target is {}",
                    ctx.os, ctx.version
                ),
                Fix::Remove,
                &knob.source,
            );
            return None;
        }
    }
    if let (Some(new), Some(since)) = (&knob.renamed_to, &knob.renamed_in) {
        if ctx.version >= *since {
            push(
                out,
                "renamed-key",
                Severity::Info,
                format!(
                    "renamed to {new} in {} {since}; the old name is a compatibility alias",
                    ctx.os
                ),
                Fix::Rename(new.clone()),
                &knob.source,
            );
        }
    }
    if ctx.os == Os::Freebsd && st.mode == Mode::Files {
        wrong_file(e, knob, out);
    }

    if e.quoted && ctx.os == Os::Linux && knob.ty != ValueType::String {
        push(
            out,
            "bad-value",
            Severity::Error,
            format!(
                "sysctl(8) and systemd-sysctl pass the quotes to the kernel, which rejects `\"{}\"` for {}",
                e.value,
                knob.ty.describe()
            ),
            Fix::Set(e.value.clone()),
            &knob.source,
        );
        return None;
    }
    let value = match Value::parse(knob.ty, &e.value) {
        Ok(v) => v,
        Err(why) => {
            push(
                out,
                "bad-value",
                Severity::Error,
                format!(
                    "{why}; {} takes {} ({})",
                    e.key,
                    knob.ty.describe(),
                    knob.unit.name()
                ),
                knob.default_on(&ctx.version)
                    .map_or(Fix::Remove, |d| Fix::Set(d.to_string())),
                &knob.source,
            );
            return None;
        }
    };
    if !valid(e, knob, &value, out) {
        return None;
    }

    let at_default = knob
        .default_on(&ctx.version)
        .is_some_and(|d| crate::value::normalize(d) == value.to_string());
    if let Some(noop) = &knob.noop {
        // A live state shows every knob; only a value someone changed is worth a word.
        let live_default = st.mode == Mode::Live && at_default;
        if !live_default && noop.since.as_ref().is_none_or(|s| ctx.version >= *s) {
            let since = noop
                .since
                .as_ref()
                .map(|s| format!(" since {s}"))
                .unwrap_or_default();
            let fix = knob.modern.clone().map_or(Fix::Remove, Fix::Command);
            push(
                out,
                "noop",
                Severity::Info,
                format!("no effect{since}: {}", noop.why),
                fix,
                &knob.source,
            );
            return Some(value);
        }
    }

    for h in &knob.harmful {
        let n = value.as_int();
        let hit = h
            .value
            .as_deref()
            .is_some_and(|v| crate::value::normalize(v) == value.to_string())
            || h.above.zip(n).is_some_and(|(a, n)| n > a)
            || h.below.zip(n).is_some_and(|(b, n)| n < b);
        if hit {
            let fix = if h.fix == "remove" {
                Fix::Remove
            } else {
                Fix::Set(h.fix.clone())
            };
            push(
                out,
                "harmful",
                h.severity,
                explain(&h.why, st),
                fix,
                &knob.source,
            );
        }
    }

    super::capacity::compare_with_default(e, st, knob, &value, out);

    if let (true, Some(cores), Some(n)) = (knob.per_core, ctx.cores, value.as_int()) {
        if n > i64::from(cores) {
            push(
                out,
                "exceeds-cores",
                Severity::Warning,
                format!(
                    "{n} queues or threads on {cores} cores: the extra ones share cores and add contention instead of parallelism"
                ),
                Fix::Set(cores.to_string()),
                &knob.source,
            );
        }
    }
    if knob.queue {
        super::capacity::bufferbloat(e, st, knob, &value, out);
    }
    if let (Some(sane), Some(n)) = (&knob.sane_max, value.as_int()) {
        if n > sane.value {
            push(
                out,
                "excessive",
                Severity::Warning,
                format!(
                    "{} is above {}: {}",
                    bytes_or(n, knob.unit),
                    bytes_or(sane.value, knob.unit),
                    sane.why
                ),
                Fix::Set(sane.value.to_string()),
                &knob.source,
            );
        }
    }
    Some(value)
}

/// Fills the computed parts of a catalogue message: `{paws}` is the time TCP sequence numbers
/// take to wrap at the stated (or assumed) rate.
fn explain(why: &str, st: &State<'_>) -> String {
    if !why.contains("{paws}") {
        return why.to_string();
    }
    let (rate, assumed) = match st.ctx.rate {
        Some(r) => (r, ""),
        None => (formula::ASSUMED_RATE, " (assumed; pass --rate)"),
    };
    let wrap = formula::sequence_wrap_seconds(rate);
    why.replace(
        "{paws}",
        &format!(
            "at {rate}{assumed} sequence numbers wrap in {wrap:.1} s (2^31 bytes × 8 / rate), so a segment delayed that long can be taken for new data"
        ),
    )
}

fn wrong_file(e: &Entry, knob: &Knob, out: &mut Vec<Finding>) {
    let why = match (knob.when, e.format) {
        (When::Boot, Format::Sysctl) => {
            "a boot-time loader tunable: read-only at run time, so sysctl.conf cannot set it; put it in /boot/loader.conf"
        }
        (When::Runtime, Format::Loader) => {
            "not a loader tunable: loader.conf ignores it; put it in /etc/sysctl.conf"
        }
        _ => return,
    };
    out.push(finding(
        "wrong-file",
        Severity::Warning,
        Some(e.location.clone()),
        &e.key,
        Some(&e.value),
        why.into(),
        Fix::None,
        &knob.source,
    ));
}

fn valid(e: &Entry, knob: &Knob, value: &Value, out: &mut Vec<Finding>) -> bool {
    let mut bad = |why: String, fix: Fix| {
        out.push(finding(
            "bad-value",
            Severity::Error,
            Some(e.location.clone()),
            &e.key,
            Some(&e.value),
            why,
            fix,
            &knob.source,
        ));
        false
    };
    if let Value::Text(t) = value {
        if knob.ty == ValueType::Enum
            && !knob.values.is_empty()
            && !knob.values.iter().any(|v| v == t)
        {
            return match nearest(t, &knob.values) {
                Some(near) => bad(
                    format!(
                        "`{t}` is not one of {}; did you mean {near}?",
                        knob.values.join(", ")
                    ),
                    Fix::Set(near.to_string()),
                ),
                None => bad(
                    format!("`{t}` is not one of {}", knob.values.join(", ")),
                    knob.default.clone().map_or(Fix::Remove, Fix::Set),
                ),
            };
        }
        return true;
    }
    if knob.ty == ValueType::Enum {
        let s = value.to_string();
        if !knob.values.is_empty() && !knob.values.contains(&s) {
            return bad(
                format!("`{s}` is not one of {}", knob.values.join(", ")),
                knob.default.clone().map_or(Fix::Remove, Fix::Set),
            );
        }
    }
    for n in value.numbers() {
        if let Some(min) = knob.min {
            if n < min {
                return bad(
                    format!("{n} is below the minimum {min}"),
                    Fix::Set(min.to_string()),
                );
            }
        }
        if let Some(max) = knob.max {
            if n > max {
                return bad(
                    format!("{n} is above the maximum {max}"),
                    Fix::Set(max.to_string()),
                );
            }
        }
        if knob.power_of_two && (n <= 0 || (n & (n - 1)) != 0) {
            let up = formula::next_pow2(n.max(1) as u64);
            return bad(
                format!("{n} is not a power of two, which {} requires", e.key),
                Fix::Set(up.to_string()),
            );
        }
    }
    true
}

/// The allowed value `t` is a typo of, if any (one edit for short names, two for long ones).
fn nearest<'a>(t: &str, values: &'a [String]) -> Option<&'a str> {
    let limit = if t.chars().count() >= 8 { 2 } else { 1 };
    values
        .iter()
        .map(|v| (distance(t, v), v.as_str()))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, v)| v)
}
