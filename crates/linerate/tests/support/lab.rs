//! A `linerate lab` of one test: its own name and state directory, taken down on drop (also
//! when the test fails). Tests first `require!(root())`.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use super::bin::linerate;

/// A lab name and state directory of this test process; `lab down` on drop.
pub struct Lab {
    pub name: String,
    state: tempfile::TempDir,
}

impl Lab {
    /// `t<pid digits><letter>`: at most 8 characters, as lab names must be, and unique to this
    /// process (the letter tells the tests of one file apart).
    pub fn new(letter: char) -> Lab {
        Lab {
            name: format!("t{}{letter}", std::process::id() % 100_000),
            state: super::tempdir(),
        }
    }

    /// The lab's state directory (`LINERATE_LAB_STATE_DIR`), also a place for a test's files.
    pub fn state(&self) -> &Path {
        self.state.path()
    }

    /// `linerate` (isolated) with this lab's state directory.
    pub fn linerate(&self) -> Command {
        let mut cmd = linerate();
        cmd.env("LINERATE_LAB_STATE_DIR", self.state());
        cmd
    }

    /// `linerate lab`, for arguments still to add.
    pub fn cmd(&self) -> Command {
        let mut cmd = self.linerate();
        cmd.arg("lab");
        cmd
    }

    /// Runs `linerate lab ARGS`, killed (and the test failed) when it lasts more than `limit`.
    pub fn bounded(&self, args: &[&str], limit: std::time::Duration) -> Output {
        super::bin::run_bounded(self.cmd().args(args), limit)
    }

    /// Runs `linerate lab ARGS`, whatever its exit status.
    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().expect("run linerate lab")
    }

    /// The standard output of `linerate lab ARGS`, which must succeed.
    pub fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(
            o.status.success(),
            "linerate lab {args:?} failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// The standard error of `linerate lab ARGS`, which must fail with exit code 2.
    pub fn fails(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert_eq!(
            o.status.code(),
            Some(2),
            "linerate lab {args:?} should fail with 2: {o:?}"
        );
        String::from_utf8_lossy(&o.stderr).into_owned()
    }

    /// `linerate lab exec NAME NODE -- CMD…`.
    pub fn exec(&self, node: &str, cmd: &[&str]) -> Output {
        let mut args = vec!["exec", &self.name, node, "--"];
        args.extend_from_slice(cmd);
        self.run(&args)
    }

    /// This lab's network namespaces (`lr-<name>-…`) as they exist now.
    pub fn namespaces(&self) -> Vec<String> {
        let prefix = format!("lr-{}-", self.name);
        // What `ip netns list` lists: the mount points under /run/netns (absent: none yet).
        let mut found: Vec<String> = match std::fs::read_dir("/run/netns") {
            Ok(entries) => entries
                .map(|e| e.expect("read /run/netns").file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&prefix))
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => panic!("cannot read /run/netns: {e}"),
        };
        found.sort();
        found
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        // Also after a test that took its lab down itself: then this is a no-op error.
        let _ = self
            .cmd()
            .args(["down", &self.name])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}
