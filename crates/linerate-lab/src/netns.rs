//! Named network namespaces, created and removed the way `ip netns` does it (a bind mount of
//! the namespace under /run/netns), so `ip netns list/exec` see them too.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::linux::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::{LabError, sys};

/// Where named namespaces live.
pub const NETNS_DIR: &str = "/run/netns";

/// An open handle on a named network namespace.
#[derive(Debug)]
pub struct Netns {
    /// Its name under /run/netns.
    pub name: String,
    fd: OwnedFd,
}

/// The mount path of namespace `name`.
pub fn path_of(name: &str) -> PathBuf {
    Path::new(NETNS_DIR).join(name)
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
    fs::create_dir_all(NETNS_DIR).map_err(LabError::io(format!("create {NETNS_DIR}")))?;
    sys::make_shared_mount(Path::new(NETNS_DIR))
        .map_err(LabError::io(format!("make {NETNS_DIR} a shared mount")))
}

impl Netns {
    /// Opens an existing namespace.
    pub fn open(name: &str) -> Result<Netns, LabError> {
        let f =
            File::open(path_of(name)).map_err(LabError::io(format!("open namespace {name}")))?;
        Ok(Netns {
            name: name.to_owned(),
            fd: OwnedFd::from(f),
        })
    }

    /// Creates namespace `name` and runs `init` on a thread inside it (a socket opened there
    /// stays bound to it). Fails if the name is taken.
    pub fn create<T: Send>(
        name: &str,
        init: impl FnOnce() -> Result<T, LabError> + Send,
    ) -> Result<(Netns, T), LabError> {
        let path = path_of(name);
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| match e.kind() {
                io::ErrorKind::AlreadyExists => LabError::Exists {
                    name: name.to_owned(),
                    why: format!("namespace {} exists", path.display()),
                },
                _ => LabError::Io {
                    what: format!("create {}", path.display()),
                    source: e,
                },
            })?;
        let made = std::thread::scope(|s| {
            s.spawn(|| -> Result<(OwnedFd, T), LabError> {
                sys::unshare_netns().map_err(LabError::NoNetns)?;
                sys::bind_mount(Path::new("/proc/thread-self/ns/net"), &path).map_err(
                    LabError::io(format!("bind-mount namespace onto {}", path.display())),
                )?;
                let fd =
                    File::open(&path).map_err(LabError::io(format!("open {}", path.display())))?;
                let value = init()?;
                Ok((OwnedFd::from(fd), value))
            })
            .join()
            .unwrap_or_else(|_| {
                Err(LabError::Io {
                    what: format!("create namespace {name}"),
                    source: io::Error::other("thread panicked"),
                })
            })
        });
        match made {
            Ok((fd, value)) => Ok((
                Netns {
                    name: name.to_owned(),
                    fd,
                },
                value,
            )),
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
        std::thread::scope(|s| {
            s.spawn(|| {
                sys::setns_net(self.fd.as_fd())
                    .map_err(LabError::io(format!("enter namespace {}", self.name)))?;
                f()
            })
            .join()
            .unwrap_or_else(|_| {
                Err(LabError::Io {
                    what: format!("work in namespace {}", self.name),
                    source: io::Error::other("thread panicked"),
                })
            })
        })
    }

    /// Moves the calling thread into this namespace for good (before exec).
    pub fn enter(&self) -> Result<(), LabError> {
        sys::setns_net(self.fd.as_fd())
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
    if fs::symlink_metadata(&path).is_err() {
        return Ok(false);
    }
    match sys::umount_detach(&path) {
        Ok(()) => {}
        // Not mounted (a crash between creating the file and mounting): just unlink.
        Err(e)
            if e.raw_os_error() == Some(libc::EINVAL) || e.raw_os_error() == Some(libc::ENOENT) => {
        }
        Err(e) => {
            return Err(LabError::Io {
                what: format!("unmount {}", path.display()),
                source: e,
            });
        }
    }
    match fs::remove_file(&path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(LabError::Io {
            what: format!("remove {}", path.display()),
            source: e,
        }),
    }
}
