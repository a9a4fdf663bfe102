//! Applying settings safely, the same way on every OS: plan (read old values, skip what a
//! namespace cannot take), write a journal of the old values, write each value and read it
//! back, and restore everything already changed if any write fails or reads back different.
//! [`rollback`] undoes a journal (keys, then whole files with [`restore_files`]); [`persist`]
//! writes the sysctl.d drop-in atomically.
//!
//! The engine talks to the kernel only through a [`Backend`]: `/proc/sys` on Linux
//! ([`ProcSys`], entry points `apply_in` / `rollback_file` (Linux only), which the lab calls with a
//! [`Where::Netns`] target), `sysctl(3)` on FreeBSD ([`freebsd`], which adds the loader
//! tunables' drop-in file), and [`MemoryBackend`] or a fake sysctl in tests.

pub mod backend;
pub mod freebsd;
pub mod journal;
#[cfg(target_os = "linux")]
mod linux;
pub mod netns;

use std::io;
use std::path::{Path, PathBuf};

pub use backend::{Access, Backend, BackendError, MemoryBackend, ProcSys};
pub use journal::{FileEntry, Journal, JournalEntry, JournalError, JournalState};
#[cfg(target_os = "linux")]
pub use linux::{apply_in, rollback_file};
pub use netns::{NetnsError, NetnsId};

use crate::catalogue::{Scope, catalogue};
use crate::os::Os;
use crate::value::normalize;

/// Where to apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Where {
    /// The calling process's own network namespace (the host).
    Host,
    /// A named network namespace (`/run/netns/NAME`).
    Netns(String),
}

/// A key that will change.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Change {
    /// Key.
    pub key: String,
    /// Current value.
    pub old: String,
    /// Value to set.
    pub new: String,
}

/// A key left alone, with why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Skipped {
    /// Key.
    pub key: String,
    /// Value that was asked for.
    pub value: String,
    /// Why it is skipped.
    pub reason: String,
}

/// What an apply will do.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Plan {
    /// Keys that change (old → new).
    pub changes: Vec<Change>,
    /// Keys already at the asked value.
    pub unchanged: Vec<String>,
    /// Keys not applicable here.
    pub skipped: Vec<Skipped>,
}

/// An apply, plan or rollback that failed.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// A key asked for explicitly cannot be set here.
    #[error("{key}: {reason}")]
    NotApplicable {
        /// Key.
        key: String,
        /// Why.
        reason: String,
    },
    /// Reading a current value failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// A write failed or read back different; everything already changed was restored.
    #[error(
        "{cause}; restored the {restored} setting(s) already changed, nothing is left modified"
    )]
    Restored {
        /// What went wrong.
        cause: String,
        /// How many keys were put back.
        restored: usize,
    },
    /// A write failed and the restore failed too.
    #[error("{cause}; RESTORE FAILED for {}: see the journal {}", unrestored.join(", "), journal.as_ref().map_or("(none)".into(), |p| p.display().to_string()))]
    RestoreFailed {
        /// What went wrong first.
        cause: String,
        /// Keys still modified.
        unrestored: Vec<String>,
        /// The journal with the old values.
        journal: Option<PathBuf>,
    },
    /// A rollback read back a different value.
    #[error("rollback of {key}: wrote `{want}`, reads back `{got}`")]
    RollbackMismatch {
        /// Key.
        key: String,
        /// Expected.
        want: String,
        /// Read.
        got: String,
    },
    /// Journal I/O.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// Namespace handling.
    #[error(transparent)]
    Netns(#[from] NetnsError),
    /// `--netns` given to a rollback does not match the journal.
    #[error("the journal was recorded in {recorded}, not in {given}")]
    WrongNamespace {
        /// Where the journal says.
        recorded: String,
        /// What was asked.
        given: String,
    },
    /// Catalogue failure.
    #[error(transparent)]
    Catalogue(#[from] crate::catalogue::CatalogueError),
    /// A whole file (FreeBSD's loader drop-in) could not be read, written or restored.
    #[error("{}: {error}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// The OS error.
        error: io::Error,
    },
    /// A file the apply wrote was changed by someone else since: a rollback leaves it alone.
    #[error("{}: changed since linerate wrote it; not restored (its previous content is in the journal)", path.display())]
    FileChanged {
        /// The file.
        path: PathBuf,
    },
    /// A value that cannot go into the file it is meant for.
    #[error("{key}: {reason}")]
    BadValue {
        /// Key.
        key: String,
        /// Why.
        reason: String,
    },
}

/// Plans applying `wanted` through `backend`. Inside a namespace (`in_netns`), host-only and
/// read-only keys are skipped with the reason; with `explicit` (the caller named these keys
/// one by one) such a key is an error instead.
pub fn plan(
    backend: &mut dyn Backend,
    wanted: &[(String, String)],
    in_netns: bool,
    explicit: bool,
) -> Result<Plan, ApplyError> {
    let cat = catalogue(Os::Linux)?;
    let mut plan = Plan::default();
    for (key, value) in wanted {
        let value = normalize(value);
        let scope = cat.get(key).map(|k| k.scope);
        let reason = match (in_netns, scope, backend.access(key)) {
            (true, Some(Scope::Host), _) => {
                Some("host-only: a global key, set in the initial namespace only".to_string())
            }
            (true, Some(Scope::Readonly), _) => {
                Some("read-only inside a network namespace (mirrors the host's value)".to_string())
            }
            (_, _, Access::Missing) => Some(if in_netns {
                "not present in this namespace (host-only, or its module is not loaded)".into()
            } else {
                "no such setting on this host (unknown key, or its module is not loaded)".into()
            }),
            (_, _, Access::ReadOnly) => Some("read-only here".into()),
            (_, _, Access::Tunable) => Some(
                "a loader tunable, read at boot only: it belongs in loader.conf, not sysctl".into(),
            ),
            (_, _, Access::Writable) => None,
        };
        if let Some(reason) = reason {
            if explicit {
                return Err(ApplyError::NotApplicable {
                    key: key.clone(),
                    reason,
                });
            }
            plan.skipped.push(Skipped {
                key: key.clone(),
                value,
                reason,
            });
            continue;
        }
        let old = backend.read(key)?;
        if old == value {
            plan.unchanged.push(key.clone());
        } else {
            plan.changes.push(Change {
                key: key.clone(),
                old,
                new: value,
            });
        }
    }
    Ok(plan)
}

/// Applies `plan`: saves the journal at `journal_path` first (when given), then writes and
/// reads back each change. On any failure, restores every change already made (newest first),
/// records the outcome in the journal and returns the error.
pub fn execute(
    backend: &mut dyn Backend,
    plan: &Plan,
    netns: Option<NetnsId>,
    journal_path: Option<&Path>,
) -> Result<Journal, ApplyError> {
    let journal = Journal::new(netns, journal_entries(plan));
    if let Some(path) = journal_path {
        journal.save(path)?;
    }
    execute_journaled(backend, plan, journal, journal_path)
}

/// The journal entries of `plan`'s changes, in apply order.
pub fn journal_entries(plan: &Plan) -> Vec<JournalEntry> {
    plan.changes
        .iter()
        .map(|c| JournalEntry {
            key: c.key.clone(),
            old: c.old.clone(),
            new: c.new.clone(),
        })
        .collect()
}

/// [`execute`] with a journal the caller made and already saved (it may record more than the
/// plan's keys, such as a file written before): writes and reads back each change, restores
/// on failure, and saves the journal's final state at `journal_path`.
pub fn execute_journaled(
    backend: &mut dyn Backend,
    plan: &Plan,
    mut journal: Journal,
    journal_path: Option<&Path>,
) -> Result<Journal, ApplyError> {
    let mut done: Vec<&Change> = Vec::new();
    let mut failure = None;
    for change in &plan.changes {
        if let Err(e) = backend.write(&change.key, &change.new) {
            failure = Some(e.to_string());
            // A failed write may still have changed the value (partial parse): restore it too.
            done.push(change);
            break;
        }
        done.push(change);
        match backend.read(&change.key) {
            Ok(got) if got == change.new => {}
            Ok(got) => {
                failure = Some(format!(
                    "{}: wrote `{}`, reads back `{got}` (the kernel adjusted or ignored it)",
                    change.key, change.new
                ));
                break;
            }
            Err(e) => {
                failure = Some(e.to_string());
                break;
            }
        }
    }
    let Some(cause) = failure else {
        journal.state = JournalState::Applied;
        if let Some(path) = journal_path {
            journal.save(path)?;
        }
        return Ok(journal);
    };
    let mut unrestored = Vec::new();
    for change in done.iter().rev() {
        let ok = match backend.read(&change.key) {
            Ok(now) if now == change.old => true,
            _ => {
                backend.write(&change.key, &change.old).is_ok()
                    && backend.read(&change.key).is_ok_and(|v| v == change.old)
            }
        };
        if !ok {
            unrestored.push(change.key.clone());
        }
    }
    journal.state = if unrestored.is_empty() {
        JournalState::Restored
    } else {
        JournalState::RestoreFailed
    };
    journal.unrestored = unrestored.clone();
    if let Some(path) = journal_path {
        journal.save(path)?;
    }
    if unrestored.is_empty() {
        Err(ApplyError::Restored {
            cause,
            restored: done.len(),
        })
    } else {
        Err(ApplyError::RestoreFailed {
            cause,
            unrestored,
            journal: journal_path.map(Path::to_path_buf),
        })
    }
}

/// Writes back the old values of `journal` (newest change first) and reads each back.
pub fn rollback(
    backend: &mut dyn Backend,
    journal: &mut Journal,
) -> Result<Vec<Change>, ApplyError> {
    let mut restored = Vec::new();
    for e in journal.entries.iter().rev() {
        let now = backend.read(&e.key)?;
        if now != e.old {
            backend.write(&e.key, &e.old)?;
            let got = backend.read(&e.key)?;
            if got != e.old {
                return Err(ApplyError::RollbackMismatch {
                    key: e.key.clone(),
                    want: e.old.clone(),
                    got,
                });
            }
        }
        restored.push(Change {
            key: e.key.clone(),
            old: now,
            new: e.old.clone(),
        });
    }
    journal.state = JournalState::RolledBack;
    Ok(restored)
}

/// A file's content, `None` when it does not exist.
pub(crate) fn read_optional(path: &Path) -> Result<Option<String>, ApplyError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(ApplyError::File {
            path: path.to_path_buf(),
            error,
        }),
    }
}

/// Puts `content` at `path` (atomically) or, for `None`, removes the file.
pub(crate) fn put_file(path: &Path, content: Option<&str>) -> Result<(), ApplyError> {
    let done = match content {
        Some(text) => linerate_sys::atomic_write(path, text.as_bytes()),
        None => match std::fs::remove_file(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        },
    };
    done.map_err(|error| ApplyError::File {
        path: path.to_path_buf(),
        error,
    })
}

/// Restores the files `journal` recorded (newest first) to what they held before the apply,
/// removing those that did not exist. A file that no longer holds what the apply wrote was
/// edited since: it is left alone and the rollback stops with [`ApplyError::FileChanged`].
/// Returns the files put back (one already as before counts, and is not rewritten).
pub fn restore_files(journal: &Journal) -> Result<Vec<PathBuf>, ApplyError> {
    let mut restored = Vec::new();
    for f in journal.files.iter().rev() {
        let now = read_optional(&f.path)?;
        if now != f.old {
            if now.as_deref() != Some(f.new.as_str()) {
                return Err(ApplyError::FileChanged {
                    path: f.path.clone(),
                });
            }
            put_file(&f.path, f.old.as_deref())?;
        }
        restored.push(f.path.clone());
    }
    Ok(restored)
}

/// Options of `apply_in` (Linux) and [`freebsd::apply`].
#[derive(Debug, Clone)]
pub struct ApplyOptions {
    /// Journal directory (default [`journal::DEFAULT_DIR`]).
    pub journal_dir: PathBuf,
    /// The keys were named one by one: a key that cannot be set here is an error.
    pub explicit: bool,
    /// Only plan; change nothing and write no journal.
    pub dry_run: bool,
}

impl Default for ApplyOptions {
    fn default() -> Self {
        ApplyOptions {
            journal_dir: PathBuf::from(journal::DEFAULT_DIR),
            explicit: false,
            dry_run: false,
        }
    }
}

/// The result of `apply_in` (Linux) and [`freebsd::apply`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct Applied {
    /// What was planned (and, unless dry-run, done).
    pub plan: Plan,
    /// The journal file (none for a dry run or when nothing changed).
    pub journal: Option<PathBuf>,
    /// The namespace, when not the host.
    pub netns: Option<NetnsId>,
    /// The boot-time file written beside the run-time changes (FreeBSD's loader drop-in).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boot_file: Option<BootFile>,
}

/// A file of boot-time settings (FreeBSD loader tunables): they take effect at the next boot.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BootFile {
    /// The file.
    pub path: PathBuf,
    /// The settings it holds, in order.
    pub settings: Vec<(String, String)>,
    /// Whether its content changes (false: it already holds exactly this).
    pub changed: bool,
    /// Always true: nothing in it applies before a reboot.
    pub needs_reboot: bool,
}

/// What a rollback did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RolledBack {
    /// The journal.
    pub journal: PathBuf,
    /// The namespace, when not the host.
    pub netns: Option<NetnsId>,
    /// Each key: value before the rollback → restored value.
    pub restored: Vec<Change>,
    /// Files put back as they were before the apply (FreeBSD's loader drop-in).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<PathBuf>,
}

/// Writes `content` as `dir/90-linerate.conf` atomically and returns the path. Never touches
/// any other file in `dir`.
pub fn persist(dir: &Path, content: &str) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join("90-linerate.conf");
    linerate_sys::atomic_write(&path, content.as_bytes())?;
    Ok(path)
}

/// A `--set` item that is not `KEY=VALUE`.
#[derive(Debug, thiserror::Error)]
pub enum SetError {
    /// A control character: a line break would add a line of its own to the persisted drop-in.
    #[error("--set {0:?}: control characters (line breaks) are not allowed")]
    Control(String),
    /// Not `KEY=VALUE` with a key of one word and a value.
    #[error("--set {0}: expected KEY=VALUE, e.g. --set net.ipv4.tcp_mtu_probing=1")]
    NotAPair(String),
}

/// The settings of `tune --set KEY=VALUE …`: keys trimmed, `/` read as `.` (as `sysctl` does),
/// values trimmed.
///
/// # Errors
/// The first item that is not `KEY=VALUE` or holds a control character.
pub fn parse_set(items: &[String]) -> Result<Vec<(String, String)>, SetError> {
    items
        .iter()
        .map(|item| match item.split_once('=') {
            _ if item.chars().any(|c| c.is_control() && c != '\t') => {
                Err(SetError::Control(item.clone()))
            }
            Some((k, v))
                if !k.trim().is_empty()
                    && !k.trim().contains(char::is_whitespace)
                    && !v.trim().is_empty() =>
            {
                Ok((k.trim().replace('/', "."), v.trim().to_string()))
            }
            _ => Err(SetError::NotAPair(item.clone())),
        })
        .collect()
}

#[cfg(test)]
mod tests;
