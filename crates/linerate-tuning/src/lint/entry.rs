//! Rules about one setting on its own: does the key exist on the target version, is the value
//! valid, harmful, a no-op, a downgrade, redundant, a bloated queue, or in the wrong file.

use crate::catalogue::{Knob, Unit, When, catalogue};
use crate::finding::{Finding, Fix, Severity};
use crate::formula;
use crate::lint::{Mode, State, bytes, finding};
use crate::os::Os;
use crate::parse::{Entry, Format};
use crate::value::{Value, ValueType};

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

    let Some(knob) = st.cat.get(&e.key) else {
        unknown(e, st, out);
        return None;
    };

    if let Some(removed) = &knob.removed {
        if ctx.version >= *removed {
            let why = format!("removed by {} {removed}: {}", ctx.os, knob.summary);
            let fix = knob
                .renamed_to
                .as_ref()
                .map_or(Fix::Remove, |n| Fix::Rename(n.clone()));
            push(out, "removed-key", Severity::Error, why, fix, &knob.source);
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
                Severity::Warning,
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
                Severity::Warning,
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
            push(out, "harmful", h.severity, h.why.clone(), fix, &knob.source);
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

pub(crate) fn bytes_or(n: i64, unit: Unit) -> String {
    if unit == Unit::Bytes {
        bytes(n)
    } else {
        format!("{n} {}", unit.name())
    }
}

fn unknown(e: &Entry, st: &State<'_>, out: &mut Vec<Finding>) {
    let loc = Some(e.location.clone());
    if e.format == Format::Loader && st.cat.is_loader_command(&e.key) {
        return; // module loads and boot options, not tunables
    }
    if st.mode == Mode::Live {
        return; // a live dump has thousands of keys outside the catalogue
    }
    if st.cat.is_unchecked(&e.key) {
        out.push(finding(
            "unchecked",
            Severity::Info,
            loc,
            &e.key,
            Some(&e.value),
            "outside linerate's network catalogue; not checked".into(),
            Fix::None,
            "linerate catalogue",
        ));
        return;
    }
    let other = Os::ALL
        .iter()
        .filter(|o| **o != st.ctx.os)
        .find(|o| catalogue(**o).is_ok_and(|c| c.get(&e.key).is_some()));
    let (why, fix) = if let Some(other) = other {
        (
            format!("not a {} key: this is a {other} setting", st.ctx.os),
            Fix::Remove,
        )
    } else if let Some(near) = st.cat.did_you_mean(&e.key) {
        (
            format!("no such {} key; did you mean {near}?", st.ctx.os),
            Fix::Rename(near.to_string()),
        )
    } else {
        (
            format!("no such {} key on {}", st.ctx.os, st.ctx.version),
            Fix::Remove,
        )
    };
    let sev = if e.ignore_errors {
        Severity::Warning
    } else {
        Severity::Error
    };
    out.push(finding(
        "unknown-key",
        sev,
        loc,
        &e.key,
        Some(&e.value),
        why,
        fix,
        "linerate catalogue",
    ));
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
            return bad(
                format!("`{t}` is not one of {}", knob.values.join(", ")),
                knob.default.clone().map_or(Fix::Remove, Fix::Set),
            );
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
