//! What the integration tests of `calc`, `stat`, `logdist` and the CLI's shape share: running
//! the real binary and deterministic random data.
//!
//! (`tests/common/mod.rs` rather than `tests/common.rs`: Cargo would build the latter as a test
//! binary of its own.)

// Each test file uses a part of this module.
#![allow(dead_code)]

use std::process::{Command, Output};

use serde_json::Value;

/// The `linerate` binary under test, with a fixed environment: no `COLUMNS`, so help and tables
/// wrap the same way on every terminal.
pub fn linerate() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_linerate"));
    command.env_remove("COLUMNS");
    command
}

/// Runs `linerate ARGS`, whatever its exit status.
pub fn run(args: &[&str]) -> Output {
    linerate().args(args).output().expect("run linerate")
}

/// The standard output of `linerate ARGS`, which must succeed.
pub fn stdout(args: &[&str]) -> String {
    let out = run(args);
    assert!(out.status.success(), "linerate {args:?} failed: {out:?}");
    String::from_utf8(out.stdout).expect("utf-8")
}

/// `linerate ARGS --json`, which must succeed, parsed.
pub fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    serde_json::from_str(&stdout(&all)).expect("valid JSON")
}

/// SplitMix64: deterministic test data without a dependency, reproducible from its seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1_u64 << 53) as f64
    }

    /// Roughly standard normal (the sum of 12 uniforms): good enough for test data.
    pub fn normal(&mut self) -> f64 {
        (0..12).map(|_| self.unit()).sum::<f64>() - 6.0
    }
}

/// Runs `linerate ARGS` with its stdout closed before it writes (as `| head` does after a
/// line), and returns the exit code and stderr.
pub fn with_closed_stdout(args: &[&str]) -> (Option<i32>, String) {
    let mut child = linerate()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn linerate");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait for linerate");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
