//! Writing a file whole or not at all: the bytes go to a temporary file in the same directory
//! (tempfile's `NamedTempFile`), which is flushed to disk, renamed over the target and followed
//! by an fsync of the directory, so after a crash a reader finds the old file or the new one,
//! never half of one, and the rename itself is durable. On any error the temporary file is
//! removed (tempfile deletes it when it is dropped unpersisted).
//!
//! New files get the permissions `File::create` would give them (0666 less the umask), as the
//! writers this replaces did; tempfile's own default (0600) would silently make a sysctl.d
//! drop-in or a report unreadable to other users.

use std::ffi::OsStr;
use std::fs::{File, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Mode passed to open(2) for the temporary file; the process umask applies to it.
const CREATE_MODE: u32 = 0o666;

/// Replaces (or creates) `path` with `bytes` atomically and durably. The directory must exist.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write(path, bytes, Replace::Yes)
}

/// Creates `path` with `bytes` atomically and durably, failing with
/// [`io::ErrorKind::AlreadyExists`] (and writing nothing) when `path` exists.
pub fn atomic_create(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write(path, bytes, Replace::No)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Replace {
    Yes,
    No,
}

fn write(path: &Path, bytes: &[u8], replace: Replace) -> io::Result<()> {
    let dir = directory_of(path);
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names no file", path.display()),
        )
    })?;
    let mut tmp = tempfile::Builder::new()
        .prefix(&temp_prefix(name))
        .rand_bytes(6)
        .permissions(Permissions::from_mode(CREATE_MODE))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    let persisted = match replace {
        Replace::Yes => tmp.persist(path),
        Replace::No => tmp.persist_noclobber(path),
    };
    // On failure the error holds the temporary file; dropping it here removes it.
    persisted.map_err(|e| e.error)?;
    sync_directory(dir)
}

/// `.NAME.tmp.`: hidden, and recognisably a leftover of NAME should a crash leave one.
fn temp_prefix(name: &OsStr) -> String {
    format!(".{}.tmp.", name.to_string_lossy())
}

/// The directory `path` lives in (`.` for a bare file name).
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Makes the directory entry of a rename durable.
fn sync_directory(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Takes an exclusive `flock(2)` on `file` without waiting: `Ok(false)` when another open file
/// description holds one. The kernel drops it when the file is closed, or its process dies
/// (even by `kill -9`). (std's `File::try_lock` does the same from Rust 1.89, above this
/// workspace's MSRV.)
#[expect(unsafe_code)]
pub fn try_lock_exclusive(file: &File) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock only reads the descriptor, which `file` keeps open for the call.
    let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if r == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.kind() == io::ErrorKind::WouldBlock {
        Ok(false)
    } else {
        Err(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_open_file_cannot_take_the_lock_until_the_first_is_closed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let a = File::create(&path).unwrap();
        let b = File::open(&path).unwrap();
        assert!(try_lock_exclusive(&a).unwrap());
        assert!(!try_lock_exclusive(&b).unwrap());
        drop(a);
        assert!(try_lock_exclusive(&b).unwrap());
    }
    use std::os::unix::fs::MetadataExt;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn writes_replaces_and_leaves_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.conf");
        atomic_write(&path, b"one\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"one\n");
        atomic_write(&path, b"two\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two\n");
        assert_eq!(names(dir.path()), ["a.conf"]);
    }

    #[test]
    fn new_files_get_file_create_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        File::create(&plain).unwrap();
        let atomic = dir.path().join("atomic");
        atomic_write(&atomic, b"x").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o777;
        assert_eq!(mode(&atomic), mode(&plain));
        // A restrictive existing file is replaced by one with the default mode, as a
        // create-then-rename writer always did.
        std::fs::set_permissions(&atomic, Permissions::from_mode(0o600)).unwrap();
        atomic_write(&atomic, b"y").unwrap();
        assert_eq!(mode(&atomic), mode(&plain));
    }

    #[test]
    fn a_failed_rename_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // A directory in the way: the temporary file is written, the rename fails.
        let in_the_way = dir.path().join("out.svg");
        std::fs::create_dir(&in_the_way).unwrap();
        let err = atomic_write(&in_the_way, b"<svg/>").unwrap_err();
        assert!(err.kind() != io::ErrorKind::NotFound, "{err}");
        assert_eq!(names(dir.path()), ["out.svg"]);
        // A missing directory fails before anything is written.
        let missing = dir.path().join("no/such/dir/x");
        assert_eq!(
            atomic_write(&missing, b"x").unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        assert_eq!(names(dir.path()), ["out.svg"]);
    }

    #[test]
    fn create_never_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lab.json");
        atomic_create(&path, b"first").unwrap();
        let err = atomic_create(&path, b"second").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        assert_eq!(names(dir.path()), ["lab.json"]);
    }

    #[test]
    fn a_bare_file_name_goes_to_the_current_directory() {
        assert_eq!(directory_of(Path::new("x.json")), Path::new("."));
        assert_eq!(directory_of(Path::new("/x.json")), Path::new("/"));
        assert_eq!(directory_of(Path::new("a/x.json")), Path::new("a"));
        // The directory sync itself works on a real directory and fails on a missing one.
        let dir = tempfile::tempdir().unwrap();
        sync_directory(dir.path()).unwrap();
        assert!(sync_directory(&dir.path().join("missing")).is_err());
        assert!(atomic_write(Path::new("/"), b"x").is_err(), "no file name");
    }

    #[test]
    fn temporary_names_are_hidden_and_name_their_target() {
        assert_eq!(
            temp_prefix(OsStr::new("90-linerate.conf")),
            ".90-linerate.conf.tmp."
        );
    }
}
