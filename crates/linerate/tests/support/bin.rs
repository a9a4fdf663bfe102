//! Running the `linerate` binary under test. Every run gets the same isolated environment: no
//! `COLUMNS` (help and tables wrap alike on every terminal), no `LINERATE_DB` (help texts show
//! its value), and `HOME` and the XDG directories inside a directory of this test process, so
//! nothing a test runs reads or writes the user's own files; runs stored without `--db` land
//! in this process's own results database.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_linerate");

/// This process's stand-in for the user's home, under cargo's `target/tmp`, made on first use.
/// Left behind by a process that ended, it is removed by the next one.
fn sandbox() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("linerate-tests");
        if let Ok(entries) = std::fs::read_dir(&root) {
            for entry in entries.flatten() {
                let pid = entry.file_name().to_string_lossy().into_owned();
                if !Path::new("/proc").join(&pid).exists() {
                    // Best effort: a leftover that cannot be removed harms no test.
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        let dir = root.join(std::process::id().to_string());
        for sub in ["home", "data", "config", "state", "cache"] {
            std::fs::create_dir_all(dir.join(sub))
                .unwrap_or_else(|e| panic!("cannot make {}: {e}", dir.join(sub).display()));
        }
        dir
    })
}

/// Gives `cmd` (the binary, or a wrapper that runs it: `ip netns exec`, `script`, `sh -c`) the
/// isolated environment.
pub fn isolate(cmd: &mut Command) -> &mut Command {
    let dir = sandbox();
    cmd.env_remove("COLUMNS")
        .env_remove("LINERATE_DB")
        .env("HOME", dir.join("home"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
}

/// `linerate`, isolated.
pub fn linerate() -> Command {
    let mut cmd = Command::new(BIN);
    isolate(&mut cmd);
    cmd
}

/// Runs `linerate ARGS`, whatever its exit status.
pub fn run(args: &[&str]) -> Output {
    linerate().args(args).output().expect("run linerate")
}

/// The standard output of a run that must have succeeded.
pub fn succeeded(out: &Output) -> String {
    assert!(
        out.status.success(),
        "linerate failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("utf-8 output")
}

/// The standard output of `linerate ARGS`, which must succeed.
pub fn stdout(args: &[&str]) -> String {
    let out = run(args);
    assert!(out.status.success(), "linerate {args:?} failed: {out:?}");
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// `linerate ARGS --json`, which must succeed, parsed.
pub fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    serde_json::from_str(&stdout(&all)).expect("valid JSON")
}

/// Runs `linerate ARGS --db DB`.
pub fn run_db(db: &Path, args: &[&str]) -> Output {
    linerate()
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .expect("run linerate")
}

/// The standard output of `linerate ARGS --db DB`, which must succeed.
pub fn ok_db(db: &Path, args: &[&str]) -> String {
    let out = run_db(db, args);
    assert!(
        out.status.success(),
        "linerate {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// The standard error of `linerate ARGS --db DB`, which must fail with exit code 2.
pub fn fails_db(db: &Path, args: &[&str]) -> String {
    let out = run_db(db, args);
    assert_eq!(out.status.code(), Some(2), "linerate {args:?}: {out:?}");
    String::from_utf8(out.stderr).expect("utf-8 errors")
}

/// Standard output then standard error, for assertions and failure messages.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `cmd` with its output collected, killing it (and failing the test) after `limit`.
pub fn run_bounded(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let o = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let e = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for the child") {
            break s;
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: o.join().unwrap_or_default(),
        stderr: e.join().unwrap_or_default(),
    }
}

/// Runs `linerate ARGS` with its stdout closed before it writes (as `| head` does after a
/// line), and returns the exit code and stderr.
pub fn with_closed_stdout(args: &[&str]) -> (Option<i32>, String) {
    let mut child = linerate()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn linerate");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait for linerate");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
