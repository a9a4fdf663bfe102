//! Per-node sysctls. Only per-network-namespace keys are accepted; anything that would change
//! the whole host is refused with the reason. The write itself goes through the tuning crate's
//! applier (`linerate_tuning::apply::apply_in`) inside the node's namespace: the catalogue's
//! type checks, a journal of the old value (under [`JOURNAL_DIR`]), read-back, and restore on
//! failure — the same path as `linerate tune --apply --netns`.

use std::fs;
use std::io;
use std::path::PathBuf;

use crate::LabError;
use crate::netns::Netns;

/// Where the applier's journals of lab sysctls go (tmpfs: they die with the boot, as the labs'
/// namespaces do).
pub const JOURNAL_DIR: &str = "/run/linerate/lab-journal";

/// One sysctl written in a node, with the value before and after.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SysctlWrite {
    /// The node.
    pub node: String,
    /// The key, dotted.
    pub key: String,
    /// The value before the write.
    pub before: String,
    /// The value read back after the write.
    pub after: String,
}

/// The /proc/sys path (relative) of a dotted or slashed key.
pub fn key_path(key: &str) -> String {
    if key.contains('/') {
        key.trim_matches('/').to_owned()
    } else {
        key.replace('.', "/")
    }
}

fn normalise(v: &str) -> String {
    v.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Refuses keys that cannot be per namespace without looking at any namespace.
pub fn check_scope(key: &str) -> Result<(), LabError> {
    let path = key_path(key);
    if !path.starts_with("net/") {
        return Err(LabError::HostOnlyKey {
            key: key.to_owned(),
            reason: "only net.* keys can be per network namespace; this one is kernel-wide and \
                     would change the whole host (tune the host with `linerate tune` instead)"
                .to_owned(),
        });
    }
    if path
        .split('/')
        .any(|p| p == ".." || p == "." || p.is_empty())
    {
        return Err(LabError::HostOnlyKey {
            key: key.to_owned(),
            reason: "not a sysctl key".to_owned(),
        });
    }
    Ok(())
}

/// Writes `key = value` in node `node` (namespace `ns`) and reads it back.
pub fn apply_in_node(
    ns: &Netns,
    node: &str,
    key: &str,
    value: &str,
) -> Result<SysctlWrite, LabError> {
    check_scope(key)?;
    let rel = key_path(key);
    let path = PathBuf::from("/proc/sys").join(&rel);
    let inside = ns.run(|| Ok(path.exists()))?;
    if inside {
        let dotted = rel.replace('/', ".");
        let opts = linerate_tuning::apply::ApplyOptions {
            journal_dir: PathBuf::from(JOURNAL_DIR),
            explicit: true,
            dry_run: false,
        };
        let applied = linerate_tuning::apply::apply_in(
            &linerate_tuning::apply::Where::Netns(ns.name.clone()),
            &[(dotted, value.to_owned())],
            &opts,
        )
        .map_err(|e| LabError::Io {
            what: format!("set {key} = {value:?} in node {node}"),
            source: io::Error::other(e.to_string()),
        })?;
        let after = ns.run(|| {
            fs::read_to_string(&path).map_err(LabError::io(format!(
                "read back {} in node {node}",
                path.display()
            )))
        })?;
        let after = normalise(&after);
        if after != normalise(value) {
            return Err(LabError::ReadBack {
                key: key.to_owned(),
                node: node.to_owned(),
                wrote: value.to_owned(),
                read: after,
            });
        }
        let before = applied
            .plan
            .changes
            .first()
            .map_or_else(|| after.clone(), |c| normalise(&c.old));
        return Ok(SysctlWrite {
            node: node.to_owned(),
            key: key.to_owned(),
            before,
            after,
        });
    }
    // Absent inside the namespace: global (host-only) if the host has it, else unknown.
    if path.exists() {
        Err(LabError::HostOnlyKey {
            key: key.to_owned(),
            reason: "it is not per network namespace on this kernel (it exists only in the host's \
                     initial namespace), so setting it would change the whole host"
                .to_owned(),
        })
    } else {
        Err(LabError::UnknownKey {
            key: key.to_owned(),
            path: rel,
            place: format!("in node {node}"),
        })
    }
}

/// Whether `key` can be set per network namespace on this kernel, asked of a throw-away
/// anonymous namespace (created on a thread, gone when the thread ends; nothing to clean up).
pub fn probe_scope(key: &str) -> Result<(), LabError> {
    check_scope(key)?;
    let rel = key_path(key);
    let path = PathBuf::from("/proc/sys").join(&rel);
    let inside = linerate_sys::netns::run_in_new(|| path.exists()).map_err(|e| match e {
        linerate_sys::netns::RunError::Enter(e) => LabError::NoNetns(e),
        linerate_sys::netns::RunError::Panicked => LabError::Io {
            what: "probe a namespace".into(),
            source: io::Error::other("thread panicked"),
        },
    })?;
    match (inside, path.exists()) {
        (true, _) => Ok(()),
        (false, true) => Err(LabError::HostOnlyKey {
            key: key.to_owned(),
            reason: "it is not per network namespace on this kernel (it exists only in the host's \
                     initial namespace), so setting it would change the whole host"
                .to_owned(),
        }),
        (false, false) => Err(LabError::UnknownKey {
            key: key.to_owned(),
            path: rel,
            place: "in a network namespace".to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_wide_keys_are_refused_with_the_reason() {
        for key in [
            "vm.swappiness",
            "kernel.pid_max",
            "fs.file-max",
            "net/../vm/x",
        ] {
            let msg = check_scope(key)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(msg.contains("refusing"), "{key}: {msg}");
        }
        assert!(check_scope("net.ipv4.tcp_rmem").is_ok());
        assert_eq!(key_path("net.ipv4.tcp_rmem"), "net/ipv4/tcp_rmem");
        assert_eq!(
            key_path("net/ipv4/conf/eth0.100/rp_filter"),
            "net/ipv4/conf/eth0.100/rp_filter"
        );
    }
}
