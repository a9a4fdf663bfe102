//! How an external test bed measures the generator's own ceiling, when the user gives it a
//! way (RFC 2544 results near what the tester can send measure the tester, not the DUT):
//!
//! - [`Ceiling::BackToBack`]: a second pair of tester ports cabled to each other (or the same
//!   ports re-cabled for a calibration run): the generator as fast as it goes, counted at the
//!   other port, the whole tester's ceiling (sending and counting) with no DUT in the way;
//! - [`Ceiling::DutDrops`]: the user's command makes the DUT drop what it receives (e.g. turn
//!   its forwarding off over SSH), the generator sends as fast as it goes through the usual
//!   cabling, and the sink's count is what the tester's port transmitted; the user's undo
//!   command puts the DUT back, also after a failure, and after a `kill -9` the next run on
//!   the same ports runs it first (its text is kept in a marker beside the lab state files,
//!   written whole before the drop command runs).
//!
//! Without either the ceiling is unknown, and the procedure says a result near the most the
//! generator sent may be the generator's.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::LabError;
use crate::child::wait_bounded;

/// The longest the user's drop or undo command may run.
pub const COMMAND_LIMIT: Duration = Duration::from_secs(120);

/// Suffix of the undo marker's file name beside the lab state files.
pub const UNDO_SUFFIX: &str = "ceiling-undo";

/// A way to measure the generator's ceiling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ceiling {
    /// Not measured.
    Unknown,
    /// A pair of tester ports cabled to each other: `tx` sends, `rx` counts (on the counter's
    /// host).
    BackToBack {
        /// The sending port.
        tx: String,
        /// The counting port.
        rx: String,
    },
    /// The DUT made to drop by `drop`, put back by `undo` (both run with `sh -c`).
    DutDrops {
        /// The command that makes the DUT drop.
        drop: String,
        /// The command that puts it back.
        undo: String,
        /// Where the undo command is kept while the DUT drops.
        marker: PathBuf,
    },
}

/// What the marker holds: the command that puts the DUT back.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Marker {
    undo: String,
}

/// Runs `command` with `sh -c`, bounded; an error names it and carries its output.
pub fn run_command(what: &str, command: &str) -> Result<(), LabError> {
    let mut child = Command::new("sh")
        .args(["-c", command])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(LabError::io(format!("run {what} `{command}` with sh")))?;
    let drain = |pipe: Option<Box<dyn io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut text);
            }
            text
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn io::Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn io::Read + Send>),
    );
    let status = wait_bounded(&mut child, COMMAND_LIMIT, &|| false)?;
    let mut text = out.join().unwrap_or_default();
    text.extend(err.join().unwrap_or_default());
    if status.success() {
        return Ok(());
    }
    Err(LabError::Io {
        what: format!(
            "{what} `{command}` failed ({status}): {}",
            String::from_utf8_lossy(&text).trim()
        ),
        source: io::Error::other("command failed"),
    })
}

/// The DUT dropping until dropped: the marker written, the drop command run; the drop of this
/// value runs the undo command and removes the marker when it succeeded.
pub struct Dropping<'a> {
    undo: &'a str,
    marker: &'a Path,
}

impl<'a> Dropping<'a> {
    /// Writes the marker, then runs `drop` (a failing drop command is undone at once).
    pub fn start(drop: &str, undo: &'a str, marker: &'a Path) -> Result<Dropping<'a>, LabError> {
        let mut bytes = serde_json::to_vec(&Marker {
            undo: undo.to_owned(),
        })
        .map_err(|e| LabError::Io {
            what: format!("encode {}", marker.display()),
            source: io::Error::other(e),
        })?;
        bytes.push(b'\n');
        if let Some(parent) = marker.parent() {
            std::fs::create_dir_all(parent)
                .map_err(LabError::io(format!("create {}", parent.display())))?;
        }
        linerate_sys::atomic_write(marker, &bytes).map_err(LabError::io(format!(
            "write {} (the --ceiling-undo command to run after a kill)",
            marker.display()
        )))?;
        let dropping = Dropping { undo, marker };
        run_command("--ceiling-cmd", drop)?;
        Ok(dropping)
    }

    /// Runs the undo command now; the marker goes once it succeeded.
    pub fn finish(self) -> Result<(), LabError> {
        let r = run_command("--ceiling-undo", self.undo);
        if r.is_ok() {
            let _ = std::fs::remove_file(self.marker);
        }
        std::mem::forget(self);
        r
    }
}

impl Drop for Dropping<'_> {
    fn drop(&mut self) {
        if run_command("--ceiling-undo", self.undo).is_ok() {
            let _ = std::fs::remove_file(self.marker);
        }
    }
}

/// When a marker is at `marker` (a ceiling measurement was killed while the DUT dropped),
/// runs the undo command it holds and removes it; says what it ran.
pub fn undo_interrupted(marker: &Path) -> Result<Option<String>, LabError> {
    let bytes = match std::fs::read(marker) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(LabError::io(format!("read {}", marker.display()))(e)),
    };
    let m: Marker = serde_json::from_slice(&bytes).map_err(|e| LabError::BadState {
        path: marker.to_owned(),
        reason: e.to_string(),
    })?;
    run_command("the --ceiling-undo command of an interrupted run", &m.undo)?;
    std::fs::remove_file(marker).map_err(LabError::io(format!("remove {}", marker.display())))?;
    Ok(Some(format!(
        "ran `{}`, the --ceiling-undo command an interrupted ceiling measurement had left (the \
         DUT had been told to drop)",
        m.undo
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_undo_runs_after_the_drop_and_after_a_kill_from_the_marker() {
        let dir = tempfile::tempdir().expect("tempdir");
        let marker = dir.path().join("x.ceiling-undo");
        let flag = dir.path().join("dropping");
        let drop_cmd = format!("touch '{}'", flag.display());
        let undo_cmd = format!("rm '{}'", flag.display());
        let d = Dropping::start(&drop_cmd, &undo_cmd, &marker).expect("start");
        assert!(flag.exists() && marker.exists());
        d.finish().expect("finish");
        assert!(!flag.exists() && !marker.exists());

        // Dropped on an error path: undone too.
        let d = Dropping::start(&drop_cmd, &undo_cmd, &marker).expect("start");
        drop(d);
        assert!(!flag.exists() && !marker.exists());

        // A kill leaves the marker (forget stands for it): the next run undoes.
        let d = Dropping::start(&drop_cmd, &undo_cmd, &marker).expect("start");
        std::mem::forget(d);
        assert!(flag.exists() && marker.exists());
        let said = undo_interrupted(&marker).expect("undo").expect("said");
        assert!(said.contains(&undo_cmd), "{said}");
        assert!(!flag.exists() && !marker.exists());
        assert_eq!(undo_interrupted(&marker).expect("nothing"), None);
    }

    #[test]
    fn a_failing_command_names_itself_and_its_output() {
        let err = run_command("--ceiling-cmd", "echo nope >&2; exit 3")
            .expect_err("fails")
            .to_string();
        assert!(
            err.contains("--ceiling-cmd `echo nope >&2; exit 3` failed"),
            "{err}"
        );
        assert!(err.contains("nope"), "{err}");
    }
}
