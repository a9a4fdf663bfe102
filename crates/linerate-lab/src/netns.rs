//! Named network namespaces, created and removed the way `ip netns` does it (a bind mount of
//! the namespace under /run/netns), so `ip netns list/exec` see them too. The namespace calls
//! are linerate-sys's; this module names namespaces and maps failures to [`LabError`].

use std::fs;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::linux::fs::MetadataExt;
use std::path::PathBuf;

use linerate_sys::netns::{self as sys_netns, CreateError, RunError};

use crate::LabError;

/// Where named namespaces live.
pub const NETNS_DIR: &str = sys_netns::NAMED_DIR;

/// An open handle on a named network namespace.
#[derive(Debug)]
pub struct Netns {
    /// Its name under /run/netns.
    pub name: String,
    fd: OwnedFd,
}

/// The mount path of namespace `name`.
pub fn path_of(name: &str) -> PathBuf {
    sys_netns::named_path(name)
}

/// Whether namespace `name` exists.
pub fn exists(name: &str) -> bool {
    path_of(name).exists()
}

/// The (device, inode) identity of namespace `name`, to find processes inside it.
pub fn identity(name: &str) -> Option<(u64, u64)> {
    let m = fs::metadata(path_of(name)).ok()?;
    Some((m.st_dev(), m.st_ino()))
}

/// Prepares /run/netns as a shared mount point (once per bring-up).
pub fn prepare_dir() -> Result<(), LabError> {
    sys_netns::prepare_named_dir().map_err(LabError::io(format!("make {NETNS_DIR} a shared mount")))
}

fn worker_panicked(what: String) -> LabError {
    LabError::Io {
        what,
        source: io::Error::other("thread panicked"),
    }
}

impl Netns {
    /// Opens an existing namespace.
    pub fn open(name: &str) -> Result<Netns, LabError> {
        let fd = sys_netns::open_named(&path_of(name))
            .map_err(LabError::io(format!("open namespace {name}")))?;
        Ok(Netns {
            name: name.to_owned(),
            fd,
        })
    }

    /// Creates namespace `name` and runs `init` on a thread inside it (a socket opened there
    /// stays bound to it). Fails if the name is taken.
    pub fn create<T: Send>(
        name: &str,
        init: impl FnOnce() -> Result<T, LabError> + Send,
    ) -> Result<(Netns, T), LabError> {
        let fd = sys_netns::create_named(&path_of(name)).map_err(|e| match e {
            CreateError::Exists(path) => LabError::Exists {
                name: name.to_owned(),
                why: format!("namespace {} exists", path.display()),
            },
            CreateError::Unshare(e) => LabError::NoNetns(e),
            CreateError::Io { step, path, source } => LabError::Io {
                what: format!("{step} {}", path.display()),
                source,
            },
            CreateError::Panicked => worker_panicked(format!("create namespace {name}")),
        })?;
        let ns = Netns {
            name: name.to_owned(),
            fd,
        };
        match ns.run(init) {
            Ok(value) => Ok((ns, value)),
            Err(e) => {
                let _ = remove(name);
                Err(e)
            }
        }
    }

    /// Runs `f` on a thread inside this namespace.
    pub fn run<T: Send>(
        &self,
        f: impl FnOnce() -> Result<T, LabError> + Send,
    ) -> Result<T, LabError> {
        sys_netns::run_in(self.fd.as_fd(), f).map_err(|e| match e {
            RunError::Enter(source) => LabError::Io {
                what: format!("enter namespace {}", self.name),
                source,
            },
            RunError::Panicked => worker_panicked(format!("work in namespace {}", self.name)),
        })?
    }

    /// Moves the calling thread into this namespace for good (before exec).
    pub fn enter(&self) -> Result<(), LabError> {
        sys_netns::enter(self.fd.as_fd())
            .map_err(LabError::io(format!("enter namespace {}", self.name)))
    }

    /// The namespace file descriptor (for IFLA_NET_NS_FD).
    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// Removes namespace `name` (unmount and unlink). Returns whether it existed.
pub fn remove(name: &str) -> Result<bool, LabError> {
    let path = path_of(name);
    sys_netns::remove_named(&path).map_err(|source| LabError::Io {
        what: format!("remove {}", path.display()),
        source,
    })
}
