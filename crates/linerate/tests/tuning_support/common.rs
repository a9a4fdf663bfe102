//! Helpers the `tuning_*` integration tests share: the binary, the fixtures, and a throw-away
//! network namespace. Each test file includes this with `#[path]` (a folder without a
//! `main.rs` is not a test target of its own).

#![allow(dead_code)] // each test file uses a subset

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::PathBuf;
use std::process::{Command, Output};

/// A fixture under `tests/data/tuning`.
pub fn data(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/tuning")
        .join(name)
        .display()
        .to_string()
}

/// Runs the binary.
pub fn linerate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_linerate"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run linerate: {e}"))
}

/// Standard output then standard error, for assertions and failure messages.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A network namespace that is deleted on drop, even when the test fails.
pub struct Netns(pub String);

impl Netns {
    /// `lr-tu-<pid>-<tag>`, or `None` (with the reason printed) where namespaces are
    /// truly unavailable: not root, or `ip netns` does not work.
    pub fn new(tag: &str) -> Option<Netns> {
        if std::fs::metadata("/proc/self").map_or(u32::MAX, |m| m.uid()) != 0 {
            eprintln!("SKIP: not root, cannot create network namespaces");
            return None;
        }
        let name = format!("lr-tu-{}-{tag}", std::process::id());
        if !Command::new("ip")
            .args(["netns", "add", &name])
            .status()
            .is_ok_and(|s| s.success())
        {
            eprintln!("SKIP: `ip netns add` does not work here");
            return None;
        }
        Some(Netns(name))
    }

    /// Every net.* value in the namespace.
    pub fn snapshot(&self) -> BTreeMap<String, String> {
        let out = Command::new("ip")
            .args([
                "netns",
                "exec",
                &self.0,
                "sysctl",
                "-a",
                "--pattern",
                "^net\\.",
            ])
            .output();
        let text = out
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        let map: BTreeMap<String, String> = text
            .lines()
            .filter_map(|l| {
                l.split_once(" = ").map(|(k, v)| {
                    (
                        k.to_string(),
                        v.split_whitespace().collect::<Vec<_>>().join(" "),
                    )
                })
            })
            // Counters that move by themselves are not settings.
            .filter(|(k, _)| !k.contains("stable_secret") && !k.ends_with("nf_conntrack_count"))
            .collect();
        assert!(
            map.len() > 100,
            "namespace snapshot too small: {}",
            map.len()
        );
        map
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}
