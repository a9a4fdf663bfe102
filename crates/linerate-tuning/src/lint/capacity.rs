//! Rules about amounts: the value against the target's default (redundant, lowers-default),
//! boot-time sized knobs against RAM (autosized, unit-error for pages), and packet queues
//! against the rate (bufferbloat).

use crate::catalogue::{Knob, Unit};
use crate::finding::{Finding, Fix, Severity};
use crate::formula;
use crate::lint::{Mode, State, finding};
use crate::parse::Entry;
use crate::value::Value;
use crate::wording::{bytes, bytes_or};

pub(crate) fn compare_with_default(
    e: &Entry,
    st: &State<'_>,
    knob: &Knob,
    value: &Value,
    out: &mut Vec<Finding>,
) {
    let ctx = st.ctx;
    let loc = Some(e.location.clone());
    if let Some(auto) = &knob.autosized {
        autosized(e, st, knob, value, auto, out);
        return;
    }
    let Some(default_text) = knob.default_on(&ctx.version) else {
        return;
    };
    let Ok(default) = Value::parse(knob.ty, default_text) else {
        return;
    };
    if *value == default {
        if st.mode == Mode::Files {
            out.push(finding(
                "redundant",
                Severity::Info,
                loc,
                &e.key,
                Some(&e.value),
                format!("equals the {} {} default", ctx.os, ctx.version),
                Fix::Remove,
                &knob.source,
            ));
        }
        return;
    }
    if !knob.capacity {
        return;
    }
    let (v, d) = (value.numbers(), default.numbers());
    if v.len() != d.len() || v.is_empty() {
        return;
    }
    let lower: Vec<usize> = (0..v.len()).filter(|&i| v[i] < d[i]).collect();
    if lower.is_empty() {
        return;
    }
    let what = if v.len() == 1 {
        format!(
            "{} is below the {} {} default {}",
            bytes_or(v[0], knob.unit),
            ctx.os,
            ctx.version,
            bytes_or(d[0], knob.unit)
        )
    } else {
        let names = ["min", "default", "max"];
        let parts: Vec<String> = lower
            .iter()
            .map(|&i| {
                format!(
                    "{} {} < {}",
                    names.get(i).unwrap_or(&"?"),
                    bytes_or(v[i], knob.unit),
                    bytes_or(d[i], knob.unit)
                )
            })
            .collect();
        format!(
            "lowers the {} {} default: {}",
            ctx.os,
            ctx.version,
            parts.join(", ")
        )
    };
    let merged: Vec<String> = v
        .iter()
        .zip(&d)
        .map(|(a, b)| (*a).max(*b).to_string())
        .collect();
    let fix = if v.len() == 1 {
        Fix::Remove
    } else {
        Fix::Set(merged.join(" "))
    };
    out.push(finding(
        "lowers-default",
        Severity::Warning,
        loc,
        &e.key,
        Some(&e.value),
        what,
        fix,
        &knob.source,
    ));
}

pub(crate) fn autosized(
    e: &Entry,
    st: &State<'_>,
    knob: &Knob,
    value: &Value,
    how: &str,
    out: &mut Vec<Finding>,
) {
    let ctx = st.ctx;
    let loc = Some(e.location.clone());
    let key = e.key.as_str();
    // FreeBSD reads 0 as "size it automatically" (kern_mbuf.c tunable_mbinit).
    if key == "kern.ipc.nmbclusters" && value.as_int() == Some(0) {
        return;
    }
    // Page-unit knobs: compare with RAM (the classic bytes-for-pages mistake).
    if knob.unit == Unit::Pages {
        if let Some(max) = value.as_ints().and_then(|v| v.last().copied()) {
            let mem = (max.max(0) as u64).saturating_mul(ctx.page_size.bytes());
            let memtxt = bytes(mem);
            match ctx.ram {
                Some(ram) if mem >= ram.bytes() => {
                    out.push(finding("unit-error", Severity::Error, loc, key, Some(&e.value),
                        format!("{key} is in pages: max {max} pages × {} = {memtxt}, more than the {} of RAM, so memory pressure never starts", bytes(ctx.page_size.bytes()), bytes(ram.bytes())),
                        Fix::Remove, &knob.source));
                    return;
                }
                Some(ram) if mem.saturating_mul(2) > ram.bytes() => {
                    out.push(finding("unit-error", Severity::Warning, loc, key, Some(&e.value),
                        format!("{key} is in pages: max {max} pages = {memtxt}, over half of the {} of RAM", bytes(ram.bytes())),
                        Fix::Remove, &knob.source));
                    return;
                }
                None if mem >= 256 << 30 => {
                    out.push(finding("unit-error", Severity::Warning, loc, key, Some(&e.value),
                        format!("{key} is in pages: max {max} pages = {memtxt}, more RAM than most hosts have (pass --ram to check)"),
                        Fix::Remove, &knob.source));
                    return;
                }
                _ => {}
            }
        }
    }
    let auto = match (key, ctx.ram) {
        ("net.ipv4.tcp_mem", Some(ram)) => {
            Some(formula::linux_tcp_mem_auto(ram, ctx.page_size).to_vec())
        }
        ("net.ipv4.udp_mem", Some(ram)) => Some(
            formula::linux_tcp_mem_auto(ram, ctx.page_size)
                .iter()
                .map(|v| v.saturating_mul(2))
                .collect(),
        ),
        ("kern.ipc.nmbclusters", Some(ram)) => Some(vec![formula::freebsd_nmbclusters_auto(ram)]),
        _ => None,
    };
    if let Some(auto) = auto {
        let v = value.numbers();
        if v.len() == auto.len()
            && v.iter()
                .zip(&auto)
                .any(|(a, b)| (*a as f64) * 2.0 < *b as f64)
        {
            let autotxt: Vec<String> = auto.iter().map(u64::to_string).collect();
            out.push(finding(
                "lowers-default",
                Severity::Warning,
                loc,
                key,
                Some(&e.value),
                format!(
                    "less than half of what the kernel computes for {} of RAM ({})",
                    bytes(ctx.ram.map_or(0, |r| r.bytes())),
                    autotxt.join(" ")
                ),
                Fix::Remove,
                &knob.source,
            ));
            return;
        }
    }
    if st.mode == Mode::Files {
        out.push(finding(
            "autosized",
            Severity::Info,
            loc,
            key,
            Some(&e.value),
            format!("the default is {how}; a fixed value stops it following the RAM"),
            Fix::None,
            &knob.source,
        ));
    }
}

pub(crate) fn bufferbloat(
    e: &Entry,
    st: &State<'_>,
    knob: &Knob,
    value: &Value,
    out: &mut Vec<Finding>,
) {
    let ctx = st.ctx;
    let Some(n) = value.as_int() else { return };
    let default = knob
        .default_on(&ctx.version)
        .and_then(|d| d.parse::<i64>().ok())
        .unwrap_or(0);
    if n <= default {
        return;
    }
    let (rate, assumed) = match ctx.rate {
        Some(r) => (r, ""),
        None => (formula::ASSUMED_RATE, " (assumed; pass --rate)"),
    };
    let t = formula::drain_seconds(n as u64, ctx.mtu, rate);
    if t > formula::BLOAT_LIMIT_SECONDS {
        let fits =
            (formula::BLOAT_LIMIT_SECONDS * formula::mtu_frames_per_second(rate, ctx.mtu)) as i64;
        out.push(finding(
            "bufferbloat",
            Severity::Warning,
            Some(e.location.clone()),
            &e.key,
            Some(&e.value),
            format!(
                "{n} packets of {} bytes take {:.0} ms to drain at {rate}{assumed}: a standing queue, not a buffer; raise only when drops are measured",
                ctx.mtu,
                t * 1000.0
            ),
            Fix::Set(fits.max(default).to_string()),
            &knob.source,
        ));
    }
}
