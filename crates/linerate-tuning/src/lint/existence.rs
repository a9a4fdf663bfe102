//! Rules about whether a key exists where it is set, for keys outside the catalogue: known to
//! the inventory (info: linerate has no rules for its value), read-only, removed in a stated
//! version, another OS's setting, a near miss of a known key, or absent from a subtree the
//! inventory lists completely for the target version. Without such evidence a key is outside
//! linerate's knowledge and said to be so (info), never an error. Also: keys that exist only
//! while a kernel module is loaded.

use crate::catalogue::catalogue;
use crate::finding::{Finding, Fix, Severity};
use crate::inventory::inventory;
use crate::lint::{Mode, State, finding};
use crate::os::Os;
use crate::parse::{Entry, Format};

/// Judges a key the catalogue does not hold.
pub(crate) fn check(e: &Entry, st: &State<'_>, out: &mut Vec<Finding>) {
    if e.format == Format::Loader && st.cat.is_loader_command(&e.key) {
        return; // module loads and boot options, not tunables
    }
    if st.mode == Mode::Live {
        return; // a live state shows thousands of keys that nobody set
    }
    let (os, version) = (st.ctx.os, &st.ctx.version);
    let push =
        |out: &mut Vec<Finding>, rule: &str, sev: Severity, why: String, fix: Fix, src: &str| {
            out.push(finding(
                rule,
                sev,
                Some(e.location.clone()),
                &e.key,
                Some(&e.value),
                why,
                fix,
                src,
            ));
        };
    // sysctl(8) ignores a failure on a `-key` line: what would fail is only a warning there.
    let fails = if e.ignore_errors {
        Severity::Warning
    } else {
        Severity::Error
    };

    if let Some(inv) = st.inv {
        if let Some(r) = inv.removed(&e.key, version) {
            push(
                out,
                "removed-key",
                fails,
                format!("removed in {os} {}: {}", r.since, r.why),
                Fix::Remove,
                &r.source,
            );
            return;
        }
        if let Some(known) = inv.find(&e.key) {
            if known.read_only && e.format != Format::Dump {
                push(
                    out,
                    "read-only",
                    fails,
                    format!(
                        "read-only on {os} (mode 0444 in /proc/sys): it reports a value and cannot be set"
                    ),
                    Fix::Remove,
                    &known.list.source,
                );
                return;
            }
            push(
                out,
                "unchecked",
                Severity::Info,
                format!(
                    "a real {os} key ({} {}); linerate has no rules for its value",
                    os, known.list.version
                ),
                Fix::None,
                &known.list.source,
            );
            return;
        }
    }

    if let Some(other) = other_os(&e.key, os) {
        push(
            out,
            "unknown-key",
            fails,
            format!("not a {os} key: this is a {other} setting, and {os} has no such tree"),
            Fix::Remove,
            "linerate inventory",
        );
        return;
    }

    let names: Vec<&str> = st.cat.names().collect();
    let near = st
        .inv
        .and_then(|inv| inv.near_miss(&e.key, &names))
        .or_else(|| st.cat.did_you_mean(&e.key).map(str::to_string));
    if let Some(near) = near {
        push(
            out,
            "unknown-key",
            fails,
            format!("no such {os} key; did you mean {near}?"),
            Fix::Rename(near),
            "linerate inventory",
        );
        return;
    }

    if let Some(c) = st.inv.and_then(|inv| inv.complete_for(&e.key, version)) {
        push(
            out,
            "unknown-key",
            fails,
            format!(
                "{os} {version} has no such key: linerate knows every key of this shape there ({})",
                c.evidence
            ),
            Fix::Remove,
            "linerate inventory",
        );
        return;
    }

    push(
        out,
        "unchecked",
        Severity::Info,
        format!(
            "not in linerate's inventory of {os} keys: it may exist (a driver, a module, another version) but linerate cannot tell; not checked"
        ),
        Fix::None,
        "linerate inventory",
    );
}

/// The OS whose tree `key` belongs to, when the target OS has no key under its first two
/// components at all (`net.inet.*` on Linux, `net.ipv4.*` on FreeBSD).
fn other_os(key: &str, os: Os) -> Option<Os> {
    if !key.contains('.') {
        return None;
    }
    let here_has_node = inventory(os)
        .ok()
        .flatten()
        .is_some_and(|i| i.has_node(key))
        || catalogue(os).is_ok_and(|c| {
            let parts: Vec<&str> = key.split('.').collect();
            let depth = (parts.len() - 1).clamp(1, 2);
            c.knobs.iter().any(|k| {
                let kp: Vec<&str> = k.name.split('.').collect();
                kp.len() > depth && kp[..depth] == parts[..depth]
            })
        });
    if here_has_node {
        return None;
    }
    Os::ALL.iter().copied().filter(|o| *o != os).find(|o| {
        catalogue(*o).is_ok_and(|c| c.get(key).is_some())
            || inventory(*o)
                .ok()
                .flatten()
                .is_some_and(|i| i.find(key).is_some())
    })
}

/// A note on keys that exist only while a kernel module is loaded, unless a linted loader.conf
/// loads it.
pub(crate) fn module_note(e: &Entry, st: &State<'_>, out: &mut Vec<Finding>) {
    if st.mode == Mode::Live {
        return; // the key is there, so the module is loaded
    }
    let Some(module) = st.inv.and_then(|inv| inv.module(&e.key)) else {
        return;
    };
    let load = format!(
        "{}_load",
        module.split_whitespace().next().unwrap_or(module)
    );
    let loaded = st
        .all_keys
        .get(&load)
        .is_some_and(|v| v.eq_ignore_ascii_case("yes"));
    if loaded {
        return;
    }
    let how = match (st.ctx.os, e.format) {
        (Os::Linux, _) => format!(
            "when sysctl runs before {module} is loaded the line fails; load it early (/etc/modules-load.d/{module}.conf)"
        ),
        (_, Format::Loader) => format!(
            "the tunable is read when {module} loads; load it from loader.conf ({load}=\"YES\")"
        ),
        _ => format!(
            "sysctl.conf runs early at boot, so load {module} first ({load}=\"YES\" in /boot/loader.conf or kld_list in rc.conf)"
        ),
    };
    out.push(finding(
        "needs-module",
        Severity::Info,
        Some(e.location.clone()),
        &e.key,
        Some(&e.value),
        format!("exists only while the {module} module is loaded; {how}"),
        Fix::None,
        "linerate inventory",
    ));
}
