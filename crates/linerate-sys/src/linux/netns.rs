//! Network namespaces. A namespace belongs to a *thread*: sockets opened and `/proc/sys/net`
//! files read by a thread act in that thread's namespace. So work inside a namespace runs on a
//! short-lived thread that joins it ([`run_in`], [`run_in_new`]) and the caller never changes
//! namespace; a process about to exec a command joins for good ([`enter`]).
//!
//! Named namespaces are made the way `ip netns` makes them: a bind mount of the namespace onto
//! a file under [`NAMED_DIR`], which must be a shared mount point so the mount propagates to
//! other mount namespaces ([`prepare_named_dir`]). `ip netns list/exec` see them too.
//!
//! The calls themselves (unshare, setns, mount, umount) go through nix.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::mount::{MntFlags, MsFlags, mount, umount2};
use nix::sched::{CloneFlags, setns, unshare};

/// Where named namespaces live.
pub const NAMED_DIR: &str = "/run/netns";

/// The mount path of the namespace named `name`.
pub fn named_path(name: &str) -> PathBuf {
    Path::new(NAMED_DIR).join(name)
}

/// Work inside a namespace could not run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The thread could not join (or create) the namespace.
    #[error("{0}")]
    Enter(io::Error),
    /// The work panicked.
    #[error("the namespace worker thread panicked")]
    Panicked,
}

/// Creating a named namespace failed.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    /// The name is taken.
    #[error("namespace {} exists", .0.display())]
    Exists(PathBuf),
    /// The kernel would not create a network namespace (no CONFIG_NET_NS, or no
    /// CAP_SYS_ADMIN).
    #[error("cannot create a network namespace: {0}")]
    Unshare(io::Error),
    /// A file-system step failed: `step` is what was done to `path`.
    #[error("{step} {}: {source}", path.display())]
    Io {
        /// `create`, `bind-mount namespace onto`, `open`.
        step: &'static str,
        /// The path it was done to.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The worker thread panicked.
    #[error("the namespace worker thread panicked")]
    Panicked,
}

/// Moves the calling thread into a new, empty network namespace.
pub fn unshare_current() -> io::Result<()> {
    unshare(CloneFlags::CLONE_NEWNET).map_err(io::Error::from)
}

/// Moves the calling thread into the network namespace `ns` (an nsfs descriptor) for good.
pub fn enter(ns: BorrowedFd<'_>) -> io::Result<()> {
    setns(ns, CloneFlags::CLONE_NEWNET).map_err(io::Error::from)
}

/// Runs `f` on a new thread inside namespace `ns` and returns what it returns.
pub fn run_in<T: Send>(ns: BorrowedFd<'_>, f: impl FnOnce() -> T + Send) -> Result<T, RunError> {
    on_thread(|| {
        enter(ns).map_err(RunError::Enter)?;
        Ok(f())
    })
}

/// Runs `f` on a new thread inside a new, anonymous namespace, which vanishes with the thread
/// unless `f` keeps a handle on it (nothing to clean up).
pub fn run_in_new<T: Send>(f: impl FnOnce() -> T + Send) -> Result<T, RunError> {
    on_thread(|| {
        unshare_current().map_err(RunError::Enter)?;
        Ok(f())
    })
}

fn on_thread<T: Send>(f: impl FnOnce() -> Result<T, RunError> + Send) -> Result<T, RunError> {
    std::thread::scope(|s| s.spawn(f).join().unwrap_or(Err(RunError::Panicked)))
}

/// Prepares [`NAMED_DIR`] for named namespaces: creates it and makes it a shared mount point,
/// binding it onto itself first when it is not a mount point yet (as `ip netns` does).
pub fn prepare_named_dir() -> io::Result<()> {
    fs::create_dir_all(NAMED_DIR)?;
    make_shared_mount(Path::new(NAMED_DIR))
}

fn make_shared_mount(dir: &Path) -> io::Result<()> {
    let shared = || {
        mount(
            None::<&str>,
            dir,
            None::<&str>,
            MsFlags::MS_SHARED | MsFlags::MS_REC,
            None::<&str>,
        )
    };
    match shared() {
        Err(nix::errno::Errno::EINVAL) => {
            mount(
                Some(dir),
                dir,
                None::<&str>,
                MsFlags::MS_BIND | MsFlags::MS_REC,
                None::<&str>,
            )?;
            shared().map_err(io::Error::from)
        }
        other => other.map_err(io::Error::from),
    }
}

/// Creates a network namespace named by `path` (a file under [`NAMED_DIR`] after
/// [`prepare_named_dir`]) and returns a handle on it. Fails with [`CreateError::Exists`] when
/// the name is taken; on any other failure nothing is left behind.
pub fn create_named(path: &Path) -> Result<OwnedFd, CreateError> {
    let io = |step: &'static str| {
        move |source: io::Error| CreateError::Io {
            step,
            path: path.to_owned(),
            source,
        }
    };
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| match e.kind() {
            io::ErrorKind::AlreadyExists => CreateError::Exists(path.to_owned()),
            _ => io("create")(e),
        })?;
    let made = std::thread::scope(|s| {
        s.spawn(|| {
            unshare_current().map_err(CreateError::Unshare)?;
            mount(
                Some("/proc/thread-self/ns/net"),
                path,
                Some("none"),
                MsFlags::MS_BIND,
                None::<&str>,
            )
            .map_err(|e| io("bind-mount namespace onto")(e.into()))?;
            File::open(path).map(OwnedFd::from).map_err(io("open"))
        })
        .join()
        .unwrap_or(Err(CreateError::Panicked))
    });
    if made.is_err() {
        let _ = remove_named(path);
    }
    made
}

/// Opens the namespace named by `path`.
pub fn open_named(path: &Path) -> io::Result<OwnedFd> {
    File::open(path).map(OwnedFd::from)
}

/// Removes the namespace named by `path` (unmount and unlink); the namespace itself ends when
/// its last process and handle are gone. Returns whether the name existed.
pub fn remove_named(path: &Path) -> io::Result<bool> {
    if fs::symlink_metadata(path).is_err() {
        return Ok(false);
    }
    match umount2(path, MntFlags::MNT_DETACH) {
        // Not mounted (a crash between creating the file and mounting): just unlink.
        Ok(()) | Err(nix::errno::Errno::EINVAL | nix::errno::Errno::ENOENT) => {}
        Err(e) => return Err(e.into()),
    }
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(e),
    }
}

/// Gives the calling (single-threaded, about to exec) process a private mount namespace with
/// /sys remounted, so /sys/class/net shows the network namespace it entered (as
/// `ip netns exec` does).
pub fn remount_sys() -> io::Result<()> {
    unshare(CloneFlags::CLONE_NEWNS)?;
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_SLAVE | MsFlags::MS_REC,
        None::<&str>,
    )?;
    umount2("/sys", MntFlags::MNT_DETACH)?;
    mount(
        Some("sysfs"),
        "/sys",
        Some("sysfs"),
        MsFlags::empty(),
        None::<&str>,
    )?;
    Ok(())
}

/// A named namespace removed on drop; for tests here and in other crates.
#[derive(Debug)]
pub struct TempNamed {
    path: PathBuf,
    fd: OwnedFd,
}

impl TempNamed {
    /// Creates namespace `name` (which should start with `lr-` and be unique to the caller).
    pub fn create(name: &str) -> Result<TempNamed, CreateError> {
        prepare_named_dir().map_err(|source| CreateError::Io {
            step: "prepare",
            path: PathBuf::from(NAMED_DIR),
            source,
        })?;
        let path = named_path(name);
        let fd = create_named(&path)?;
        Ok(TempNamed { path, fd })
    }

    /// Its handle.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Its path under [`NAMED_DIR`].
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempNamed {
    fn drop(&mut self) {
        let _ = remove_named(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::linux::fs::MetadataExt;

    fn ns_inode() -> u64 {
        fs::metadata("/proc/thread-self/ns/net").unwrap().st_ino()
    }

    #[test]
    fn a_named_namespace_is_created_entered_and_removed() {
        if !crate::is_root() {
            eprintln!("SKIP: namespaces need root");
            return;
        }
        let name = format!("lr-sys-{}-named", std::process::id());
        let ns = TempNamed::create(&name).unwrap();
        let path = ns.path().to_owned();
        assert!(path.exists());
        let outside = ns_inode();
        let inside = run_in(ns.fd(), ns_inode).unwrap();
        assert_ne!(inside, outside);
        assert_eq!(ns_inode(), outside, "the caller never moved");
        // A second thread lands in the same namespace.
        assert_eq!(run_in(ns.fd(), ns_inode).unwrap(), inside);
        let reopened = open_named(&path).unwrap();
        assert_eq!(run_in(reopened.as_fd(), ns_inode).unwrap(), inside);
        // The name is taken now.
        assert!(matches!(create_named(&path), Err(CreateError::Exists(_))));
        drop(ns);
        assert!(!path.exists());
        assert!(!remove_named(&path).unwrap(), "already gone");
    }

    #[test]
    fn anonymous_namespaces_are_fresh_each_time() {
        if !crate::is_root() {
            eprintln!("SKIP: namespaces need root");
            return;
        }
        let a = run_in_new(ns_inode).unwrap();
        let b = run_in_new(ns_inode).unwrap();
        assert_ne!(a, ns_inode());
        assert_ne!(a, b);
        assert!(matches!(
            run_in_new(|| panic!("inside")),
            Err::<(), _>(RunError::Panicked)
        ));
    }

    #[test]
    fn a_missing_directory_fails_cleanly() {
        let path = Path::new("/proc/lr-sys-no-such-dir/x");
        match create_named(path) {
            Err(CreateError::Io { step, .. }) => assert_eq!(step, "create"),
            other => panic!("{other:?}"),
        }
        assert!(!remove_named(path).unwrap());
    }
}
