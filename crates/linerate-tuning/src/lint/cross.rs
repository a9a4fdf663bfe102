//! Rules that relate several settings: orderings inside triples, defaults above maxima,
//! features that depend on another knob or a loaded module.

use crate::finding::{Finding, Fix, Severity};
use crate::lint::{Effective, Mode, State, about};
use crate::os::Os;
use crate::wording::bytes;

pub(crate) fn check(st: &State<'_>, out: &mut Vec<Finding>) {
    match st.ctx.os {
        Os::Linux => linux(st, out),
        Os::Freebsd => freebsd(st, out),
        Os::Openbsd | Os::Windows => {}
    }
}

/// Whether a rule about these values should speak: at least one of them was set (a lint of a
/// file should not blame the kernel's defaults) or the whole state is live.
fn relevant(st: &State<'_>, effs: &[&Effective]) -> bool {
    st.mode == Mode::Live || effs.iter().any(|e| e.set)
}

fn linux(st: &State<'_>, out: &mut Vec<Finding>) {
    for (def, max) in [
        ("net.core.rmem_default", "net.core.rmem_max"),
        ("net.core.wmem_default", "net.core.wmem_max"),
    ] {
        let (Some(d), Some(m)) = (st.effective(def), st.effective(max)) else {
            continue;
        };
        let (Some(dv), Some(mv)) = (d.value.as_int(), m.value.as_int()) else {
            continue;
        };
        if dv > mv && relevant(st, &[&d, &m]) {
            let target = if d.set { &d } else { &m };
            let key = if d.set { def } else { max };
            out.push(about(
                "inconsistent",
                Severity::Error,
                key,
                target,
                format!("{def} {} is above {max} {}: every non-TCP socket starts above the cap applications may request (the default is not clamped)", bytes(dv), bytes(mv)),
                Fix::Set(if d.set { mv.to_string() } else { dv.to_string() }),
                st.cat.get(key),
            ));
        }
    }
    for key in ["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"] {
        let Some(eff) = st.effective(key) else {
            continue;
        };
        if !eff.set {
            continue;
        }
        let Some(&[min, def, max]) = eff.value.as_ints() else {
            continue;
        };
        let knob = st.cat.get(key);
        if min > def || def > max {
            out.push(about("inconsistent", Severity::Error, key, &eff,
                format!("min {} ≤ default {} ≤ max {} does not hold; the kernel does not check the ordering", bytes(min), bytes(def), bytes(max)),
                {
                    // The same three numbers in order: nothing invented, and the fix lints clean.
                    let mut v = [min, def, max];
                    v.sort_unstable();
                    Fix::Set(format!("{} {} {}", v[0], v[1], v[2]))
                }, knob));
            continue;
        }
        if def == max {
            out.push(about("inconsistent", Severity::Warning, key, &eff,
                format!("default = max ({}): every socket starts at the cap, so autotuning has nothing to do and memory is spent on idle sockets", bytes(max)),
                {
                    let d: i64 = if key.ends_with("rmem") { 131_072 } else { 16_384 };
                    let d = d.min(max);
                    Fix::Set(format!("{} {d} {max}", min.min(d)))
                }, knob));
        }
        if min > 131_072 {
            out.push(about("inconsistent", Severity::Warning, key, &eff,
                format!("min {} is guaranteed to every socket even under memory pressure; 4096 is the kernel's value", bytes(min)),
                Fix::Set(format!("4096 {def} {max}")), knob));
        }
    }
    for key in ["net.ipv4.tcp_mem", "net.ipv4.udp_mem"] {
        let Some(eff) = st.effective(key) else {
            continue;
        };
        let Some(&[a, b, c]) = eff.value.as_ints() else {
            continue;
        };
        if !eff.set {
            continue;
        }
        if a > b || b > c {
            out.push(about(
                "inconsistent",
                Severity::Error,
                key,
                &eff,
                format!("min {a} ≤ pressure {b} ≤ max {c} pages does not hold"),
                Fix::Remove,
                st.cat.get(key),
            ));
        } else if a == c {
            out.push(about("inconsistent", Severity::Warning, key, &eff,
                "min = pressure = max: there is no pressure range in which TCP trims buffers before failing allocations".into(),
                Fix::Remove, st.cat.get(key)));
        }
    }
    ordered(st, out, "net.ipv4.ip_local_port_range", "low ≤ high");
    pair(
        st,
        out,
        "net.ipv4.ipfrag_low_thresh",
        "net.ipv4.ipfrag_high_thresh",
    );
    pair(
        st,
        out,
        "net.ipv4.neigh.default.gc_thresh1",
        "net.ipv4.neigh.default.gc_thresh2",
    );
    pair(
        st,
        out,
        "net.ipv4.neigh.default.gc_thresh2",
        "net.ipv4.neigh.default.gc_thresh3",
    );

    if let (Some(reuse), Some(ts)) = (
        st.effective("net.ipv4.tcp_tw_reuse"),
        st.effective("net.ipv4.tcp_timestamps"),
    ) {
        if reuse.value.as_int().is_some_and(|v| v >= 1)
            && ts.value.to_string() == "0"
            && relevant(st, &[&reuse, &ts])
        {
            out.push(about(
                "inconsistent",
                Severity::Warning,
                "net.ipv4.tcp_tw_reuse",
                &reuse,
                "tcp_tw_reuse needs timestamps, and tcp_timestamps is 0: reuse never happens"
                    .into(),
                Fix::None,
                st.cat.get("net.ipv4.tcp_tw_reuse"),
            ));
        }
    }
}

fn ordered(st: &State<'_>, out: &mut Vec<Finding>, key: &str, rule: &str) {
    let Some(eff) = st.effective(key) else { return };
    if let Some(&[lo, hi]) = eff.value.as_ints() {
        if lo > hi && eff.set {
            out.push(about(
                "inconsistent",
                Severity::Error,
                key,
                &eff,
                format!("{rule} does not hold ({lo} > {hi})"),
                Fix::Set(format!("{hi} {lo}")),
                st.cat.get(key),
            ));
        }
    }
}

fn pair(st: &State<'_>, out: &mut Vec<Finding>, low: &str, high: &str) {
    let (Some(l), Some(h)) = (st.effective(low), st.effective(high)) else {
        return;
    };
    let (Some(lv), Some(hv)) = (l.value.as_int(), h.value.as_int()) else {
        return;
    };
    if lv > hv && (l.set || h.set) {
        let (key, eff) = if l.set { (low, &l) } else { (high, &h) };
        out.push(about(
            "inconsistent",
            Severity::Error,
            key,
            eff,
            format!("{low} {lv} is above {high} {hv}"),
            Fix::None,
            st.cat.get(key),
        ));
    }
}

fn freebsd(st: &State<'_>, out: &mut Vec<Finding>) {
    if let Some(maxsock) = st.effective("kern.ipc.maxsockbuf") {
        for key in ["net.inet.tcp.recvbuf_max", "net.inet.tcp.sendbuf_max"] {
            let Some(buf) = st.effective(key) else {
                continue;
            };
            let (Some(m), Some(b)) = (maxsock.value.as_int(), buf.value.as_int()) else {
                continue;
            };
            if m < b && relevant(st, &[&maxsock, &buf]) {
                let eff = if maxsock.set { &maxsock } else { &buf };
                let k = if maxsock.set {
                    "kern.ipc.maxsockbuf"
                } else {
                    key
                };
                out.push(about("inconsistent", Severity::Warning, k, eff,
                    format!("kern.ipc.maxsockbuf {} is below {key} {}: autotuning stops at maxsockbuf (less mbuf overhead)", bytes(m), bytes(b)),
                    Fix::Set(b.saturating_mul(2).to_string()), st.cat.get(k)));
            }
        }
    }
    for (init, max) in [
        ("net.inet.tcp.sendspace", "net.inet.tcp.sendbuf_max"),
        ("net.inet.tcp.recvspace", "net.inet.tcp.recvbuf_max"),
    ] {
        let (Some(i), Some(m)) = (st.effective(init), st.effective(max)) else {
            continue;
        };
        let (Some(iv), Some(mv)) = (i.value.as_int(), m.value.as_int()) else {
            continue;
        };
        if iv > mv && relevant(st, &[&i, &m]) {
            out.push(about(
                "inconsistent",
                Severity::Warning,
                init,
                &i,
                format!(
                    "the initial buffer {} is above the autotuning cap {max} {}",
                    bytes(iv),
                    bytes(mv)
                ),
                Fix::Set(mv.to_string()),
                st.cat.get(init),
            ));
        }
    }
    // Congestion control modules other than the built-in ones must be loaded at boot.
    if let Some(cc) = st.effective("net.inet.tcp.cc.algorithm") {
        let name = cc.value.to_string();
        let builtin = ["newreno", "cubic"];
        let load = format!("cc_{name}_load");
        let loaded = st
            .all_keys
            .get(&load)
            .is_some_and(|v| v.eq_ignore_ascii_case("yes"));
        if cc.set && !builtin.contains(&name.as_str()) && !loaded {
            let where_ = if st.saw_loader {
                "the linted loader.conf does not load it"
            } else {
                "no loader.conf was linted alongside"
            };
            out.push(about("inconsistent", Severity::Error, "net.inet.tcp.cc.algorithm", &cc,
                format!("{name} is a kernel module: it needs {load}=\"YES\" in /boot/loader.conf ({where_}), otherwise setting the algorithm fails"),
                Fix::Command(format!("echo '{load}=\"YES\"' >> /boot/loader.conf")), st.cat.get("net.inet.tcp.cc.algorithm")));
        }
    }
    if let Some(h) = st.effective("net.pf.states_hashsize") {
        if let Some(n) = h.value.as_int().filter(|_| h.set) {
            let cost = n.saturating_mul(80);
            let (sev, extra) = match st.ctx.ram {
                Some(ram) if (cost.max(0) as u64).saturating_mul(8) > ram.bytes() => (
                    Severity::Warning,
                    format!(", over 1/8 of the {} of RAM", bytes(ram.bytes())),
                ),
                _ => (Severity::Info, String::new()),
            };
            out.push(about("memory-cost", sev, "net.pf.states_hashsize", &h,
                format!("{n} buckets × 80 bytes = {} of kernel memory{extra}; keep it about 3 × the pf states limit", bytes(cost)),
                Fix::None, st.cat.get("net.pf.states_hashsize")));
        }
    }
}
