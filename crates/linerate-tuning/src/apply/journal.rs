//! The journal: old values written to disk before anything changes, so any apply can be undone
//! later with `--rollback`, even after a crash.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::apply::netns::NetnsId;

/// Default journal directory (hier(7): `/var/lib` on Linux, `/var/db` on the BSDs).
#[cfg(target_os = "linux")]
pub const DEFAULT_DIR: &str = "/var/lib/linerate/journal";
/// Default journal directory (hier(7): `/var/lib` on Linux, `/var/db` on the BSDs).
#[cfg(not(target_os = "linux"))]
pub const DEFAULT_DIR: &str = "/var/db/linerate/journal";

/// Where an apply stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JournalState {
    /// Written, changes under way (a crash leaves this; rollback still works).
    Pending,
    /// Every change written and read back.
    Applied,
    /// A change failed; everything already changed was restored.
    Restored,
    /// A change failed and some restores failed too (keys listed in `unrestored`).
    RestoreFailed,
    /// Undone by `--rollback`.
    RolledBack,
}

/// One key's old and new value.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct JournalEntry {
    /// Sysctl key.
    pub key: String,
    /// Value before the apply.
    pub old: String,
    /// Value the apply set.
    pub new: String,
}

/// A whole file an apply wrote, with what it held before (`None`: it did not exist), so a
/// rollback can put it back or remove it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileEntry {
    /// The file.
    pub path: PathBuf,
    /// Its content before the apply.
    pub old: Option<String>,
    /// The content the apply wrote.
    pub new: String,
}

/// A journal file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Journal {
    /// `linerate.journal/1`.
    pub schema: String,
    /// Seconds since the Unix epoch when the apply started.
    pub created_unix: u64,
    /// The namespace the values belong to; `None` is the host's own namespace.
    pub netns: Option<NetnsId>,
    /// Where the apply stands.
    pub state: JournalState,
    /// The changes, in apply order.
    pub entries: Vec<JournalEntry>,
    /// Keys a failed restore could not put back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unrestored: Vec<String>,
    /// Whole files the apply wrote before changing the keys (FreeBSD's loader drop-in).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileEntry>,
}

/// The journal schema id.
pub const SCHEMA: &str = "linerate.journal/1";

impl Journal {
    /// A pending journal for `entries` in `netns`.
    pub fn new(netns: Option<NetnsId>, entries: Vec<JournalEntry>) -> Self {
        Journal {
            schema: SCHEMA.to_string(),
            created_unix: now_unix(),
            netns,
            state: JournalState::Pending,
            entries,
            unrestored: Vec::new(),
            files: Vec::new(),
        }
    }

    /// Reads a journal file.
    pub fn load(path: &Path) -> Result<Journal, JournalError> {
        let text = fs::read_to_string(path).map_err(|error| JournalError::Io {
            path: path.to_path_buf(),
            error,
        })?;
        let j: Journal = serde_json::from_str(&text).map_err(|e| JournalError::Invalid {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        if j.schema != SCHEMA {
            return Err(JournalError::Invalid {
                path: path.to_path_buf(),
                message: format!("schema `{}`, expected `{SCHEMA}`", j.schema),
            });
        }
        Ok(j)
    }

    /// Writes the journal atomically (temp file + fsync + rename).
    pub fn save(&self, path: &Path) -> Result<(), JournalError> {
        let text = serde_json::to_string_pretty(self).map_err(|e| JournalError::Invalid {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        linerate_sys::atomic_write(path, text.as_bytes()).map_err(|error| JournalError::Io {
            path: path.to_path_buf(),
            error,
        })
    }
}

/// Seconds since the Unix epoch (0 if the clock is before it).
pub fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A new journal path in `dir` (created if needed): `apply-<unix seconds>-<pid>-<n>.json`.
pub fn new_path(dir: &Path, created_unix: u64) -> Result<PathBuf, JournalError> {
    fs::create_dir_all(dir).map_err(|error| JournalError::Io {
        path: dir.to_path_buf(),
        error,
    })?;
    let pid = std::process::id();
    (0..1000)
        .map(|n| dir.join(format!("apply-{created_unix}-{pid}-{n}.json")))
        .find(|p| !p.exists())
        .ok_or_else(|| JournalError::Io {
            path: dir.to_path_buf(),
            error: io::Error::other("no free journal name"),
        })
}

/// The newest journal in `dir` that has not been rolled back.
pub fn latest(dir: &Path) -> Result<PathBuf, JournalError> {
    let read = fs::read_dir(dir).map_err(|error| JournalError::Io {
        path: dir.to_path_buf(),
        error,
    })?;
    let mut best: Option<(u64, PathBuf)> = None;
    for entry in read.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let Ok(j) = Journal::load(&path) else {
            continue;
        };
        if j.state == JournalState::RolledBack || j.state == JournalState::Restored {
            continue;
        }
        let mtime = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as u64);
        if best.as_ref().is_none_or(|(t, _)| mtime > *t) {
            best = Some((mtime, path));
        }
    }
    best.map(|(_, p)| p)
        .ok_or_else(|| JournalError::NoneFound(dir.to_path_buf()))
}

/// A journal could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// I/O on the file or directory.
    #[error("journal {}: {error}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The OS error.
        error: io::Error,
    },
    /// Not a journal.
    #[error("journal {}: not a linerate journal: {message}", path.display())]
    Invalid {
        /// The path.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// `--rollback` without a file and nothing to roll back.
    #[error("no journal to roll back in {}", .0.display())]
    NoneFound(PathBuf),
}
