//! Running backend work inside a named network namespace (`ip netns add NAME` makes
//! `/run/netns/NAME`). `/proc/sys/net` shows the namespace of the *thread* that opens it, so a
//! short-lived thread joins the namespace (linerate-sys's `netns::run_in`) and does the reads
//! and writes; the calling thread never changes namespace.
//!
//! The types are on every OS (a journal names its namespace wherever it is read); entering a
//! namespace is Linux's alone.

use std::path::PathBuf;

#[cfg(target_os = "linux")]
pub use linux::{NETNS_DIR, identify, run_in};

/// A namespace by name and by identity (nsfs device and inode), so a rollback can tell the
/// namespace it changed from a new one that reuses the name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NetnsId {
    /// Name under /run/netns.
    pub name: String,
    /// nsfs device number.
    pub dev: u64,
    /// nsfs inode number.
    pub inode: u64,
}

/// A namespace operation failed.
#[derive(Debug, thiserror::Error)]
pub enum NetnsError {
    /// `/run/netns/NAME` cannot be opened.
    #[error("network namespace `{name}` not found ({}): {error}", path.display())]
    NotFound {
        /// Name.
        name: String,
        /// Path tried.
        path: PathBuf,
        /// The OS error.
        error: std::io::Error,
    },
    /// setns(2) failed.
    #[error("cannot enter network namespace `{name}`: {error}")]
    Enter {
        /// Name.
        name: String,
        /// The error.
        error: std::io::Error,
    },
    /// The name now points at another namespace.
    #[error(
        "network namespace `{name}` is not the one the journal recorded (it was deleted and re-created); nothing restored"
    )]
    Replaced {
        /// Name.
        name: String,
    },
    /// The worker thread panicked.
    #[error("the namespace worker thread failed")]
    Worker,
    /// An invalid name.
    #[error("invalid network namespace name `{0}`")]
    BadName(String),
}

#[cfg(target_os = "linux")]
mod linux {
    use std::fs::File;
    use std::os::fd::AsFd as _;
    use std::os::unix::fs::MetadataExt as _;
    use std::path::{Path, PathBuf};

    use linerate_sys::netns::{self as sys_netns, RunError};

    use super::{NetnsError, NetnsId};

    /// Where named namespaces live.
    pub const NETNS_DIR: &str = sys_netns::NAMED_DIR;

    fn ns_path(name: &str) -> Result<PathBuf, NetnsError> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(NetnsError::BadName(name.to_string()));
        }
        Ok(Path::new(NETNS_DIR).join(name))
    }

    fn open(name: &str) -> Result<(File, NetnsId), NetnsError> {
        let path = ns_path(name)?;
        let not_found = |error| NetnsError::NotFound {
            name: name.to_string(),
            path: path.clone(),
            error,
        };
        let file = File::open(&path).map_err(not_found)?;
        let meta = file.metadata().map_err(not_found)?;
        Ok((
            file,
            NetnsId {
                name: name.to_string(),
                dev: meta.dev(),
                inode: meta.ino(),
            },
        ))
    }

    /// The identity of the namespace currently called `name`.
    pub fn identify(name: &str) -> Result<NetnsId, NetnsError> {
        open(name).map(|(_, id)| id)
    }

    /// Runs `f` on a thread inside namespace `name` and returns its result with the namespace's id.
    /// With `expect`, refuses to run unless the namespace is that exact one.
    pub fn run_in<T: Send>(
        name: &str,
        expect: Option<&NetnsId>,
        f: impl FnOnce(&NetnsId) -> T + Send,
    ) -> Result<T, NetnsError> {
        let (file, id) = open(name)?;
        if let Some(want) = expect {
            if want.dev != id.dev || want.inode != id.inode {
                return Err(NetnsError::Replaced {
                    name: name.to_string(),
                });
            }
        }
        sys_netns::run_in(file.as_fd(), || f(&id)).map_err(|e| match e {
            RunError::Enter(error) => NetnsError::Enter {
                name: name.to_string(),
                error,
            },
            RunError::Panicked => NetnsError::Worker,
        })
    }
}
