//! Applying settings on FreeBSD. Run-time sysctls go through `sysctl(3)` ([`SysctlBackend`])
//! with the engine Linux uses: the same plan, journal, read-back and restore on failure, and the
//! same `--rollback`. Loader tunables (read at boot only) go into one drop-in file,
//! [`LOADER_DROPIN`] (the loader reads every file in `/boot/loader.conf.d/` since FreeBSD
//! 13.0), written atomically before the sysctls change and journaled with what it held, so a
//! failure or a rollback puts it back; they are reported as needing a reboot. rc.conf variables
//! and commands (pf.conf lines, ifconfig flags) are not applied: they are listed as skipped.
//!
//! Everything here but `LiveSysctls` (FreeBSD only) is plain logic over the [`Sysctls`] trait, so it is
//! tested on any OS against a fake kernel (`freebsd/tests.rs`) that stores values as the bytes
//! `sysctl(3)` moves and checks types and flags as FreeBSD does.

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use linerate_sys::sysctl::{Kind, OidInfo, SysctlError};

use super::{
    Access, Applied, ApplyError, ApplyOptions, Backend, BackendError, BootFile, FileEntry, Journal,
    JournalState, RolledBack, Skipped, execute_journaled, journal, journal_entries, plan, put_file,
    read_optional, restore_files, rollback,
};
use crate::catalogue::{When, catalogue};
use crate::os::Os;
use crate::profile::{Profile, Target};
use crate::value::normalize;

/// The loader drop-in `tune --apply` writes.
pub const LOADER_DROPIN: &str = "/boot/loader.conf.d/linerate.conf";

/// The kernel's sysctl interface, as the applier needs it.
pub trait Sysctls {
    /// Type, flags and format of `name` (`ENOENT` when there is no such MIB).
    fn info(&mut self, name: &str) -> Result<OidInfo, SysctlError>;
    /// The value as `sysctl -n` prints it.
    fn get(&mut self, name: &str) -> Result<String, SysctlError>;
    /// Sets the value from text.
    fn set(&mut self, name: &str, text: &str) -> Result<(), SysctlError>;
}

/// The running kernel, through linerate-sys's `sysctlbyname(3)` calls.
#[cfg(target_os = "freebsd")]
#[derive(Debug, Clone, Copy, Default)]
pub struct LiveSysctls;

#[cfg(target_os = "freebsd")]
impl Sysctls for LiveSysctls {
    fn info(&mut self, name: &str) -> Result<OidInfo, SysctlError> {
        linerate_sys::sysctl::info(name)
    }
    fn get(&mut self, name: &str) -> Result<String, SysctlError> {
        linerate_sys::sysctl::get(name)
    }
    fn set(&mut self, name: &str, text: &str) -> Result<(), SysctlError> {
        linerate_sys::sysctl::set(name, text)
    }
}

/// A [`Backend`] over [`Sysctls`]: values normalised like `/proc/sys` ones, access from the
/// MIB's flags, errors mapped to the engine's.
#[derive(Debug, Clone, Default)]
pub struct SysctlBackend<S> {
    /// The sysctl interface.
    pub sysctls: S,
}

impl<S: Sysctls> SysctlBackend<S> {
    /// A backend over `sysctls`.
    pub fn new(sysctls: S) -> Self {
        SysctlBackend { sysctls }
    }
}

fn missing(e: &SysctlError) -> bool {
    e.raw_os_error() == Some(libc_enoent())
}

/// `ENOENT` is 2 on every Unix linerate targets (libc's constant is per OS).
const fn libc_enoent() -> i32 {
    2
}

fn as_io(e: SysctlError) -> io::Error {
    match e {
        SysctlError::Os { source, .. } => source,
        SysctlError::Value { source, .. } => io::Error::new(io::ErrorKind::InvalidInput, source),
    }
}

impl<S: Sysctls> Backend for SysctlBackend<S> {
    fn read(&mut self, key: &str) -> Result<String, BackendError> {
        match self.sysctls.get(key) {
            Ok(v) => Ok(normalize(&v)),
            Err(e) if missing(&e) => Err(BackendError::Missing(key.into())),
            Err(e) => Err(BackendError::Read {
                key: key.into(),
                error: as_io(e),
            }),
        }
    }

    fn write(&mut self, key: &str, value: &str) -> Result<(), BackendError> {
        match self.sysctls.set(key, value) {
            Ok(()) => Ok(()),
            Err(e) if missing(&e) => Err(BackendError::Missing(key.into())),
            Err(e) => Err(BackendError::Rejected {
                key: key.into(),
                value: value.into(),
                error: as_io(e),
            }),
        }
    }

    fn access(&mut self, key: &str) -> Access {
        match self.sysctls.info(key) {
            Err(_) => Access::Missing,
            Ok(i) if i.kind == Kind::Node => Access::Missing,
            Ok(i) if i.writable() && i.kind != Kind::Opaque => Access::Writable,
            Ok(i) if i.tunable() => Access::Tunable,
            Ok(_) => Access::ReadOnly,
        }
    }
}

/// One loader.conf line.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LoaderLine {
    /// Tunable or loader variable (`kern.ipc.nmbclusters`, `accf_http_load`).
    pub key: String,
    /// Value, written in double quotes.
    pub value: String,
    /// Why (the formula), written as a comment above the line.
    pub comment: Option<String>,
}

/// What to apply on FreeBSD, sorted by where each setting goes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Request {
    /// Run-time sysctls, through `sysctl(3)`.
    pub sysctls: Vec<(String, String)>,
    /// Boot-time tunables, into the loader drop-in.
    pub loader: Vec<LoaderLine>,
    /// Settings not applied (rc.conf variables, commands), with why.
    pub not_applied: Vec<Skipped>,
}

impl Request {
    /// The settings of a generated profile: sysctls at run time, loader tunables in the
    /// drop-in, the rest listed as not applied.
    pub fn from_profile(profile: &Profile) -> Request {
        let mut r = Request::default();
        for s in &profile.settings {
            match s.target {
                Target::Sysctl => r.sysctls.push((s.key.clone(), s.value.clone())),
                Target::Loader => r.loader.push(LoaderLine {
                    key: s.key.clone(),
                    value: s.value.clone(),
                    comment: Some(s.formula.clone()),
                }),
                Target::RcConf => r.not_applied.push(Skipped {
                    key: s.key.clone(),
                    value: s.value.clone(),
                    reason: "an rc.conf variable: add it to /etc/rc.conf (tune --format freebsd \
                             prints the lines); linerate does not edit rc.conf"
                        .into(),
                }),
                Target::Command | Target::Netsh => r.not_applied.push(Skipped {
                    key: s.key.clone(),
                    value: s.value.clone(),
                    reason: "a command or configuration line, not a setting: run or install it \
                             by hand"
                        .into(),
                }),
            }
        }
        r
    }

    /// Settings named one by one (`--set KEY=VALUE`): a key the running kernel can change goes
    /// to `sysctl(3)`; a boot-time tunable (`CTLFLAG_RDTUN`, a catalogue knob set only at boot,
    /// or a loader command such as `if_ix_load`) goes to the loader drop-in; anything else is
    /// left to the planner, which refuses it with the reason.
    pub fn from_pairs(
        backend: &mut dyn Backend,
        pairs: &[(String, String)],
    ) -> Result<Request, ApplyError> {
        let cat = catalogue(Os::Freebsd)?;
        let mut r = Request::default();
        for (key, value) in pairs {
            let boot_only =
                || cat.is_loader_command(key) || cat.get(key).is_some_and(|k| k.when == When::Boot);
            match backend.access(key) {
                Access::Tunable => r.loader.push(LoaderLine {
                    key: key.clone(),
                    value: value.clone(),
                    comment: None,
                }),
                Access::Missing if boot_only() => r.loader.push(LoaderLine {
                    key: key.clone(),
                    value: value.clone(),
                    comment: None,
                }),
                _ => r.sysctls.push((key.clone(), value.clone())),
            }
        }
        Ok(r)
    }
}

/// The drop-in's text: a header, then each line as `key="value"` with its comment above it.
/// Values are refused when loader.conf cannot hold them (quotes, line breaks), keys when they
/// are not a loader variable name.
pub fn loader_conf(lines: &[LoaderLine]) -> Result<String, ApplyError> {
    let mut out = format!(
        "# {LOADER_DROPIN}\n# Written by linerate tune --apply; read by the loader at boot.\n\
         # Undo with linerate tune --rollback (the journal holds the previous content).\n"
    );
    for l in lines {
        let key_ok = !l.key.is_empty()
            && l.key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if !key_ok {
            return Err(ApplyError::BadValue {
                key: l.key.clone(),
                reason: "not a loader variable name (letters, digits, '.', '_', '-')".into(),
            });
        }
        if l.value
            .chars()
            .any(|c| c == '"' || c == '\\' || c.is_control())
        {
            return Err(ApplyError::BadValue {
                key: l.key.clone(),
                reason: format!(
                    "{:?}: loader.conf values cannot hold quotes, backslashes or line breaks",
                    l.value
                ),
            });
        }
        if let Some(c) = &l.comment {
            let _ = writeln!(out, "\n# {}", c.replace(['\n', '\r'], " "));
        } else {
            out.push('\n');
        }
        let _ = writeln!(out, "{}=\"{}\"", l.key, l.value);
    }
    Ok(out)
}

/// Where [`apply`] writes.
#[derive(Debug, Clone)]
pub struct Paths {
    /// The journal directory.
    pub journal_dir: PathBuf,
    /// The loader drop-in (default [`LOADER_DROPIN`]).
    pub loader: PathBuf,
}

impl Paths {
    /// The real paths, with `opts`' journal directory.
    pub fn live(opts: &ApplyOptions) -> Paths {
        Paths {
            journal_dir: opts.journal_dir.clone(),
            loader: PathBuf::from(LOADER_DROPIN),
        }
    }
}

/// Applies `req` on FreeBSD: plans the sysctls (refusing explicit keys that cannot be set),
/// then — unless it is a dry run or nothing changes — saves the journal (old values and the
/// drop-in's old content), writes the drop-in atomically, writes and reads back each sysctl,
/// and on any failure restores the sysctls already changed and the drop-in.
pub fn apply(
    backend: &mut dyn Backend,
    req: &Request,
    opts: &ApplyOptions,
    paths: &Paths,
) -> Result<Applied, ApplyError> {
    let mut planned = plan(backend, &req.sysctls, false, opts.explicit)?;
    planned.skipped.extend(req.not_applied.iter().cloned());
    // The drop-in's new text, what it holds now, and whether that differs.
    let boot = if req.loader.is_empty() {
        None
    } else {
        let text = loader_conf(&req.loader)?;
        let old = read_optional(&paths.loader)?;
        let changed = old.as_deref() != Some(text.as_str());
        Some((text, old, changed))
    };
    let boot_file = boot.as_ref().map(|(_, _, changed)| BootFile {
        path: paths.loader.clone(),
        settings: req
            .loader
            .iter()
            .map(|l| (l.key.clone(), l.value.clone()))
            .collect(),
        changed: *changed,
        needs_reboot: true,
    });
    let file_changes = boot.as_ref().is_some_and(|(_, _, changed)| *changed);
    if opts.dry_run || (planned.changes.is_empty() && !file_changes) {
        return Ok(Applied {
            plan: planned,
            journal: None,
            netns: None,
            boot_file,
        });
    }
    let path = journal::new_path(&paths.journal_dir, journal::now_unix())?;
    let mut record = Journal::new(None, journal_entries(&planned));
    if let Some((text, old, true)) = &boot {
        record.files.push(FileEntry {
            path: paths.loader.clone(),
            old: old.clone(),
            new: text.clone(),
        });
    }
    record.save(&path)?;
    if let Some((text, _, true)) = &boot {
        if let Err(e) = write_loader(&paths.loader, text) {
            // Nothing changed yet: the journal says so.
            record.state = JournalState::Restored;
            record.save(&path)?;
            return Err(e);
        }
    }
    match execute_journaled(backend, &planned, record.clone(), Some(&path)) {
        Ok(_) => Ok(Applied {
            plan: planned,
            journal: Some(path),
            netns: None,
            boot_file,
        }),
        Err(e) => Err(undo_file(e, &record, &path)),
    }
}

/// Writes the drop-in, creating `/boot/loader.conf.d` when the system has none yet.
fn write_loader(path: &Path, text: &str) -> Result<(), ApplyError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|error| ApplyError::File {
            path: dir.to_path_buf(),
            error,
        })?;
    }
    put_file(path, Some(text))
}

/// After the sysctls failed (and were restored), puts the drop-in back too; when that fails
/// as well, the journal and the error say so.
fn undo_file(err: ApplyError, record: &Journal, path: &Path) -> ApplyError {
    let Some(restore) = restore_files(record).err() else {
        return err;
    };
    let file = record
        .files
        .first()
        .map(|f| f.path.display().to_string())
        .unwrap_or_default();
    if let Ok(mut saved) = Journal::load(path) {
        saved.state = JournalState::RestoreFailed;
        saved.unrestored.push(file.clone());
        let _ = saved.save(path);
    }
    let (cause, mut unrestored) = match err {
        ApplyError::Restored { cause, .. } => (cause, Vec::new()),
        ApplyError::RestoreFailed {
            cause, unrestored, ..
        } => (cause, unrestored),
        other => (other.to_string(), Vec::new()),
    };
    unrestored.push(format!("{file} ({restore})"));
    ApplyError::RestoreFailed {
        cause,
        unrestored,
        journal: Some(path.to_path_buf()),
    }
}

/// Rolls back the journal at `path` through `backend`: the sysctls (newest first), then the
/// files it wrote. A journal recorded inside a Linux network namespace is refused.
pub fn rollback_path(backend: &mut dyn Backend, path: &Path) -> Result<RolledBack, ApplyError> {
    let mut record = Journal::load(path)?;
    if let Some(ns) = &record.netns {
        return Err(ApplyError::WrongNamespace {
            recorded: format!("Linux network namespace `{}`", ns.name),
            given: "this FreeBSD host".into(),
        });
    }
    let restored = rollback(backend, &mut record)?;
    let files = restore_files(&record)?;
    record.save(path)?;
    Ok(RolledBack {
        journal: path.to_path_buf(),
        netns: None,
        restored,
        files,
    })
}

#[cfg(test)]
mod tests;
