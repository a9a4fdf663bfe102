//! The library applier against the real /proc/sys of a throw-away network namespace.
//! Namespaces are Linux's: on other systems this file is empty.

#![cfg(target_os = "linux")]
#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::process::Command;

use linerate_tuning::apply::{self, ApplyError, ApplyOptions, JournalState, Where};

/// Ends the test here, passing with the reason on stderr, where network namespaces are truly
/// out of reach (not root, or no `ip`); anything else that goes wrong fails the test.
macro_rules! skip_without_namespaces {
    () => {
        if let Some(why) = namespaces_unavailable() {
            eprintln!("SKIP: {why}");
            return;
        }
    };
}

/// Why network namespaces cannot be made here, or `None` when they can.
fn namespaces_unavailable() -> Option<&'static str> {
    if effective_uid() != 0 {
        Some("not root, cannot create network namespaces")
    } else if Command::new("ip").arg("-V").output().is_err() {
        Some("no `ip` command (iproute2), cannot create network namespaces")
    } else {
        None
    }
}

/// A network namespace deleted on drop, even when the test fails.
struct Netns(String);

impl Netns {
    /// `lr-tu-<pid>-<tag>`; failing to make it fails the test.
    fn new(tag: &str) -> Netns {
        let name = format!("lr-tu-{}-{tag}", std::process::id());
        let out = Command::new("ip")
            .args(["netns", "add", &name])
            .output()
            .unwrap_or_else(|e| panic!("cannot run ip netns add: {e}"));
        assert!(
            out.status.success(),
            "ip netns add {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Netns(name)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

fn effective_uid() -> u32 {
    // The owner of /proc/self is the effective uid.
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata("/proc/self").map_or(u32::MAX, |m| m.uid())
}

/// Applying for real, journaled in `journal_dir`; `explicit`: the keys were named one by one.
fn options(journal_dir: &std::path::Path, explicit: bool) -> ApplyOptions {
    ApplyOptions {
        journal_dir: journal_dir.to_path_buf(),
        explicit,
        dry_run: false,
    }
}

/// Every readable value under /proc/sys/net of the namespace, for before/after comparisons.
fn snapshot(ns: &str) -> BTreeMap<String, String> {
    let out = Command::new("ip")
        .args([
            "netns",
            "exec",
            ns,
            "sysctl",
            "-a",
            "--pattern",
            "^net\\.(ipv4\\.tcp|core)",
        ])
        .output();
    let text = out
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            l.split_once(" = ").map(|(k, v)| {
                (
                    k.to_string(),
                    v.split_whitespace().collect::<Vec<_>>().join(" "),
                )
            })
        })
        .collect()
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn apply_and_rollback_inside_a_namespace_leave_the_host_alone() {
    skip_without_namespaces!();
    let ns = Netns::new("lib");
    let host_before =
        std::fs::read_to_string("/proc/sys/net/ipv4/tcp_mtu_probing").unwrap_or_default();
    let before = snapshot(&ns.0);
    assert!(
        before.len() > 50,
        "sysctl -a in the namespace shows too little: {}",
        before.len()
    );
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let opts = options(dir.path(), false);
    let wanted = pairs(&[
        ("net.ipv4.tcp_mtu_probing", "1"),
        ("net.ipv4.tcp_rmem", "4096 131072 67108864"),
        ("net.core.rmem_max", "67108864"),
        ("net.core.netdev_max_backlog", "4096"),
    ]);
    let done = apply::apply_in(&Where::Netns(ns.0.clone()), &wanted, &opts)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(done.plan.changes.len(), 2, "{:?}", done.plan);
    assert_eq!(done.plan.skipped.len(), 2, "{:?}", done.plan);
    let after = snapshot(&ns.0);
    assert_eq!(after["net.ipv4.tcp_mtu_probing"], "1");
    assert_eq!(after["net.ipv4.tcp_rmem"], "4096 131072 67108864");
    assert_eq!(
        std::fs::read_to_string("/proc/sys/net/ipv4/tcp_mtu_probing").unwrap_or_default(),
        host_before
    );

    let journal = done.journal.unwrap_or_else(|| panic!("no journal"));
    let back = apply::rollback_file(&journal, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back.restored.len(), 2);
    assert_eq!(snapshot(&ns.0), before);
    let j = apply::Journal::load(&journal).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(j.state, JournalState::RolledBack);
    assert_eq!(j.netns.map(|n| n.name), Some(ns.0.clone()));
}

#[test]
fn a_failed_apply_leaves_the_namespace_exactly_as_before() {
    skip_without_namespaces!();
    let ns = Netns::new("fail");
    let before = snapshot(&ns.0);
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let opts = options(dir.path(), false);
    let wanted = pairs(&[
        ("net.ipv4.tcp_mtu_probing", "2"),
        ("net.ipv4.tcp_slow_start_after_idle", "0"),
        ("net.ipv4.tcp_congestion_control", "no-such-cc"),
    ]);
    let err = apply::apply_in(&Where::Netns(ns.0.clone()), &wanted, &opts);
    assert!(matches!(err, Err(ApplyError::Restored { .. })), "{err:?}");
    assert_eq!(snapshot(&ns.0), before);
}

#[test]
fn rollback_refuses_a_recreated_namespace() {
    skip_without_namespaces!();
    let ns = Netns::new("re");
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let opts = options(dir.path(), true);
    let done = apply::apply_in(
        &Where::Netns(ns.0.clone()),
        &pairs(&[("net.ipv4.tcp_mtu_probing", "1")]),
        &opts,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let journal = done.journal.unwrap_or_else(|| panic!("no journal"));
    let name = ns.0.clone();
    drop(ns);
    let again = Netns(name.clone());
    assert!(
        Command::new("ip")
            .args(["netns", "add", &name])
            .status()
            .is_ok_and(|s| s.success())
    );
    let err = apply::rollback_file(&journal, None);
    assert!(
        matches!(
            err,
            Err(ApplyError::Netns(apply::NetnsError::Replaced { .. }))
        ),
        "{err:?}"
    );
    let wrong = apply::rollback_file(&journal, Some("lr-tu-other"));
    assert!(
        matches!(wrong, Err(ApplyError::WrongNamespace { .. })),
        "{wrong:?}"
    );
    drop(again);
}
