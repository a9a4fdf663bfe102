//! What the binary's integration tests share, in one place: skipping a test whose precondition
//! this machine truly lacks (with the reason printed), the real binary run in an isolated
//! environment, temporary directories and fixtures, network namespaces and labs removed on drop,
//! and the traffic processes (servers, clients) killed on drop.
//!
//! Each test file declares `mod support;` and uses a part of it. (`tests/support/mod.rs` rather
//! than `tests/support.rs`: Cargo would build the latter as a test binary of its own.)

// Each test file uses a part of this module.
#![allow(dead_code)]

pub mod bin;
pub mod browser;
pub mod lab;
pub mod net;
pub mod netns;
pub mod rng;
pub mod spinner;
pub mod traffic;

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

/// Ends the calling test here, passing, with the reason on stderr. Only for what this machine
/// truly lacks (see [`require!`]); anything else that goes wrong must fail the test.
#[allow(unused_macros)] // not every test binary skips
macro_rules! skip {
    ($($why:tt)+) => {{
        $crate::support::skipping(format_args!($($why)+));
        return;
    }};
}

/// Skips the calling test (see [`skip!`]) unless every precondition holds: each argument is a
/// [`Need`], such as `require!(root(), program("iperf3"))`.
#[allow(unused_macros)]
macro_rules! require {
    ($($need:expr),+ $(,)?) => {
        $(
            if let Err(why) = $need {
                $crate::support::skip!("{why}");
            }
        )+
    };
}

#[allow(unused_imports)]
pub(crate) use {require, skip};

/// A precondition of a test: `Err(why)` where this machine truly lacks it.
pub type Need = Result<(), String>;

/// Prints why the current test (or a part of it) does not run: `SKIP <test name>: <why>`.
pub fn skipping(why: std::fmt::Arguments<'_>) {
    // The test harness names each test's thread after the test.
    let current = std::thread::current();
    eprintln!("SKIP {}: {why}", current.name().unwrap_or("this test"));
}

/// Whether this process runs as root (the owner of `/proc/self` is the effective uid).
pub fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Root, for network namespaces, labs and sysctl writes.
pub fn root() -> Need {
    if is_root() {
        Ok(())
    } else {
        Err("not root: network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN".to_owned())
    }
}

/// `program` installed: an executable file on `PATH`.
pub fn program(program: &str) -> Need {
    use std::os::unix::fs::PermissionsExt as _;
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path).any(|dir| {
        std::fs::metadata(dir.join(program))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    });
    if found {
        return Ok(());
    }
    let package = match program {
        "ip" => "iproute2",
        "nft" => "nftables",
        "script" => "bsdutils",
        "setpriv" => "util-linux",
        "dnsmasq" => "dnsmasq-base",
        other => other,
    };
    Err(format!(
        "`{program}` is not installed (Debian package `{package}`)"
    ))
}

/// What a throw-away network namespace needs: root and iproute2's `ip`.
pub fn namespaces() -> Need {
    root().and_then(|()| program("ip"))
}

/// A fresh temporary directory, removed when the returned guard drops.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("cannot make a temporary directory: {e}"))
}

/// A fixture under `tests/data` (`rel` may be empty for the folder itself).
pub fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

/// `path` as a command-line argument (fixtures and temporary paths are UTF-8).
pub fn arg(path: &Path) -> &str {
    path.to_str()
        .unwrap_or_else(|| panic!("{} is not UTF-8", path.display()))
}
