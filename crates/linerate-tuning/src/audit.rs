//! Auditing live settings: read every catalogued key through a [`Backend`], judge the values
//! with the lint rules in live mode, and add recommendations from the profile the inputs imply.
//! Hardware findings (from `linerate-probe`) are appended by the caller to the same list.
//! Where the values come from (a dump, this host) is [`source`].

pub mod source;

use crate::apply::Backend;
use crate::catalogue::{CatalogueError, catalogue};
use crate::context::Context;
use crate::finding::{Finding, Fix, Location};
use crate::lint::{self, Mode};
use crate::os::Os;
use crate::parse::{Entry, Format};
use crate::profile::{self, Target};
use crate::value::Value;

/// Per-interface keys read for the `all` and `default` pseudo-interfaces.
const CONF_SCOPES: [&str; 2] = ["all", "default"];

/// Reads the live value of every catalogued Linux key that exists here. `source` names where
/// the values come from (e.g. `/proc/sys` or `netns lab-a:/proc/sys`).
pub fn read_live(backend: &mut dyn Backend, source: &str) -> Result<Vec<Entry>, CatalogueError> {
    let keys = |name: &str| -> Vec<String> {
        if name.contains('*') {
            CONF_SCOPES.iter().map(|s| name.replace('*', s)).collect()
        } else {
            vec![name.to_owned()]
        }
    };
    read_catalogued(backend, Os::Linux, keys, |key| {
        format!("{source}/{}", key.replace('.', "/"))
    })
}

/// Reads the live value of every catalogued FreeBSD key this kernel has, through `backend`
/// (`sysctl(3)`). Per-device knobs (`dev.*.*.iflib.override_nrxqs`) are read for each of
/// `devices` (`dev.ix.0`, …: the NICs the probe found). `source` names the host.
pub fn read_live_freebsd(
    backend: &mut dyn Backend,
    source: &str,
    devices: &[String],
) -> Result<Vec<Entry>, CatalogueError> {
    let keys = |name: &str| -> Vec<String> {
        match name.strip_prefix("dev.*.*.") {
            Some(rest) => devices.iter().map(|d| format!("{d}.{rest}")).collect(),
            None if name.contains('*') => Vec::new(),
            None => vec![name.to_owned()],
        }
    };
    read_catalogued(backend, Os::Freebsd, keys, |key| {
        format!("{source} sysctl {key}")
    })
}

/// Reads each catalogued knob of `os` (as `keys` expands its name) that exists and is not
/// empty; `location` names where each value came from.
fn read_catalogued(
    backend: &mut dyn Backend,
    os: Os,
    keys: impl Fn(&str) -> Vec<String>,
    location: impl Fn(&str) -> String,
) -> Result<Vec<Entry>, CatalogueError> {
    let cat = catalogue(os)?;
    let mut entries = Vec::new();
    for knob in &cat.knobs {
        for key in keys(&knob.name) {
            let Ok(value) = backend.read(&key) else {
                continue;
            };
            if value.is_empty() {
                continue;
            }
            entries.push(Entry {
                location: Location {
                    source: location(&key),
                    line: None,
                },
                key,
                value,
                quoted: false,
                ignore_errors: false,
                inline_comment: None,
                format: Format::Dump,
            });
        }
    }
    Ok(entries)
}

/// Judges live `entries` for `ctx`: the lint rules (live mode), then — when the path is
/// stated — what the generated profile would change, as `recommend` findings.
pub fn audit(entries: &[Entry], ctx: &Context) -> Result<Vec<Finding>, CatalogueError> {
    let mut findings = lint::lint(entries, ctx, Mode::Live)?;
    if ctx.rate.is_some() && ctx.rtt.is_some() {
        if let Ok(p) = profile::generate(ctx) {
            recommend(&p, entries, &mut findings)?;
        }
    }
    Ok(findings)
}

fn recommend(
    p: &profile::Profile,
    entries: &[Entry],
    out: &mut Vec<Finding>,
) -> Result<(), CatalogueError> {
    let cat = catalogue(p.context.os)?;
    for s in p.of(Target::Sysctl).chain(p.of(Target::Netsh)) {
        if out
            .iter()
            .any(|f| f.key == s.key && f.rule == "path-too-small")
        {
            continue;
        }
        let live = entries.iter().rev().find(|e| e.key == s.key);
        let knob = cat.get(&s.key);
        let (live_value, location) = match live {
            Some(e) => (e.value.clone(), Some(e.location.clone())),
            None => match knob.and_then(|k| k.default_on(&p.context.version)) {
                Some(d) => (d.to_string(), None),
                None => continue,
            },
        };
        if crate::value::normalize(&live_value) == crate::value::normalize(&s.value) {
            continue;
        }
        // A capacity already at or above the recommendation needs nothing.
        if let Some(k) = knob.filter(|k| k.capacity) {
            let (Ok(have), Ok(want)) = (
                Value::parse(k.ty, &live_value),
                Value::parse(k.ty, &s.value),
            ) else {
                continue;
            };
            let (h, w) = (have.numbers(), want.numbers());
            if h.len() == w.len() && h.iter().zip(&w).all(|(a, b)| a >= b) {
                continue;
            }
        }
        out.push(Finding {
            rule: "recommend".into(),
            severity: s.need,
            location,
            key: s.key.clone(),
            value: Some(live_value),
            why: format!(
                "for {} at {} × {}: {}",
                p.role,
                p.context.rate.unwrap_or_default(),
                p.context.rtt.unwrap_or_default(),
                s.formula
            ),
            fix: Fix::Set(s.value.clone()),
            source: knob
                .map_or("linerate tune", |k| k.source.as_str())
                .to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::MemoryBackend;
    use crate::context::Role;

    #[test]
    fn audit_reads_live_values_and_recommends_for_the_path() {
        let mut b = MemoryBackend::with(&[
            ("net.ipv4.tcp_rmem", "4096 131072 6291456"),
            ("net.ipv4.tcp_wmem", "4096 16384 4194304"),
            ("net.ipv4.tcp_timestamps", "0"),
            ("net.ipv4.ip_forward", "0"),
            ("net.ipv4.conf.all.rp_filter", "1"),
            ("net.core.netdev_max_backlog", "1000"),
        ]);
        let entries = read_live(&mut b, "/proc/sys").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(entries.len(), 6);
        assert!(
            entries
                .iter()
                .any(|e| e.key == "net.ipv4.conf.all.rp_filter")
        );
        let mut ctx = Context::new(Os::Linux);
        ctx.rate = "10G".parse().ok();
        ctx.rtt = "80ms".parse().ok();
        ctx.role = Some(Role::Router);
        let f = audit(&entries, &ctx).unwrap_or_else(|e| panic!("{e}"));
        let rules: Vec<(&str, &str)> = f
            .iter()
            .map(|f| (f.rule.as_str(), f.key.as_str()))
            .collect();
        assert!(
            rules.contains(&("harmful", "net.ipv4.tcp_timestamps")),
            "{rules:?}"
        );
        assert!(
            rules.contains(&("recommend", "net.ipv4.ip_forward")),
            "{rules:?}"
        );
        // A router terminates no bulk TCP: buffers are not judged against the path.
        assert!(!rules.iter().any(|r| r.0 == "path-too-small"), "{rules:?}");
        // Live mode: defaults are not redundant.
        assert!(!rules.iter().any(|r| r.0 == "redundant"), "{rules:?}");

        ctx.role = Some(Role::Host);
        let f = audit(&entries, &ctx).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            f.iter()
                .any(|f| f.rule == "path-too-small" && f.key == "net.ipv4.tcp_rmem")
        );
        assert!(
            !f.iter()
                .any(|f| f.rule == "recommend" && f.key == "net.ipv4.tcp_rmem")
        );
    }

    #[test]
    fn freebsd_live_values_are_read_per_device_and_judged() {
        let mut b = MemoryBackend::with(&[
            ("net.inet.tcp.sendbuf_max", "2097152"),
            ("net.inet.tcp.recvbuf_max", "2097152"),
            ("kern.ipc.maxsockbuf", "2097152"),
            ("net.inet.ip.forwarding", "0"),
            ("dev.ix.0.iflib.override_nrxqs", "0"),
            ("dev.ix.1.iflib.override_nrxqs", "0"),
            ("dev.igb.0.iflib.override_nrxqs", "0"),
        ]);
        let devices = ["dev.ix.0".to_string(), "dev.ix.1".to_string()];
        let entries =
            read_live_freebsd(&mut b, "router1", &devices).unwrap_or_else(|e| panic!("{e}"));
        let keys: Vec<&str> = entries.iter().map(|e| e.key.as_str()).collect();
        assert!(keys.contains(&"dev.ix.1.iflib.override_nrxqs"), "{keys:?}");
        assert!(
            !keys.contains(&"dev.igb.0.iflib.override_nrxqs"),
            "only the devices asked for"
        );
        assert!(keys.contains(&"kern.ipc.maxsockbuf"), "{keys:?}");
        let e = entries
            .iter()
            .find(|e| e.key == "kern.ipc.maxsockbuf")
            .unwrap();
        assert_eq!(e.location.source, "router1 sysctl kern.ipc.maxsockbuf");
        let mut ctx = Context::new(Os::Freebsd);
        ctx.rate = "10G".parse().ok();
        ctx.rtt = "80ms".parse().ok();
        ctx.role = Some(Role::Host);
        let f = audit(&entries, &ctx).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            f.iter().any(|f| f.key == "net.inet.tcp.recvbuf_max"),
            "the 2 MiB autotuning maximum is judged against a 100 MB BDP: {f:?}"
        );
    }
}
