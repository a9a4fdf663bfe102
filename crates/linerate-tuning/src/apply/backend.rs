//! Where settings are read and written: the [`Backend`] trait, an in-memory backend for tests
//! and `/proc/sys` for real on Linux (FreeBSD's `sysctl(3)` backend is in
//! [`super::freebsd`]).

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use crate::value::normalize;

/// Whether a key can be changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// Not present here (host-only key inside a namespace, module not loaded, no such key).
    Missing,
    /// Present but read-only here.
    ReadOnly,
    /// A boot-time tunable (FreeBSD `CTLFLAG_RDTUN`): read-only while running, set in
    /// loader.conf for the next boot.
    Tunable,
    /// Readable and writable.
    Writable,
}

/// A read or write that failed.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// The key does not exist here.
    #[error("{0}: no such setting here")]
    Missing(String),
    /// The key cannot be written here.
    #[error("{0}: read-only here")]
    ReadOnly(String),
    /// The kernel refused the value (EINVAL, ENOENT for an unknown congestion control, …).
    #[error("{key}: the kernel refused `{value}`: {error}")]
    Rejected {
        /// Key.
        key: String,
        /// Value written.
        value: String,
        /// The OS error.
        error: io::Error,
    },
    /// Reading failed.
    #[error("{key}: cannot read: {error}")]
    Read {
        /// Key.
        key: String,
        /// The OS error.
        error: io::Error,
    },
}

/// Reads and writes settings by sysctl key (`net.ipv4.tcp_rmem`).
pub trait Backend {
    /// The current value, whitespace-normalised.
    fn read(&mut self, key: &str) -> Result<String, BackendError>;
    /// Writes `value`.
    fn write(&mut self, key: &str, value: &str) -> Result<(), BackendError>;
    /// Whether `key` exists and can be written.
    fn access(&mut self, key: &str) -> Access;
}

/// An in-memory backend. Keys not inserted are missing; keys marked read-only refuse writes;
/// a `lie` makes the next write of a key store something else (like a kernel that clamps);
/// a `reject` makes writes of that key fail.
#[derive(Debug, Clone, Default)]
pub struct MemoryBackend {
    /// Current values.
    pub values: BTreeMap<String, String>,
    /// Keys that cannot be written.
    pub read_only: Vec<String>,
    /// Keys whose writes fail.
    pub reject: Vec<String>,
    /// Keys whose next write stores this value instead.
    pub lie: BTreeMap<String, String>,
    /// Every successful write, in order.
    pub writes: Vec<(String, String)>,
}

impl MemoryBackend {
    /// A backend holding `pairs`.
    pub fn with(pairs: &[(&str, &str)]) -> Self {
        MemoryBackend {
            values: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), normalize(v)))
                .collect(),
            ..Default::default()
        }
    }
}

impl Backend for MemoryBackend {
    fn read(&mut self, key: &str) -> Result<String, BackendError> {
        self.values
            .get(key)
            .cloned()
            .ok_or_else(|| BackendError::Missing(key.to_string()))
    }

    fn write(&mut self, key: &str, value: &str) -> Result<(), BackendError> {
        match self.access(key) {
            Access::Missing => return Err(BackendError::Missing(key.to_string())),
            Access::ReadOnly | Access::Tunable => {
                return Err(BackendError::ReadOnly(key.to_string()));
            }
            Access::Writable => {}
        }
        if self.reject.iter().any(|k| k == key) {
            return Err(BackendError::Rejected {
                key: key.to_string(),
                value: value.to_string(),
                error: io::Error::from_raw_os_error(libc_einval()),
            });
        }
        let stored = self.lie.remove(key).unwrap_or_else(|| normalize(value));
        self.values.insert(key.to_string(), stored);
        self.writes.push((key.to_string(), value.to_string()));
        Ok(())
    }

    fn access(&mut self, key: &str) -> Access {
        if !self.values.contains_key(key) {
            Access::Missing
        } else if self.read_only.iter().any(|k| k == key) {
            Access::ReadOnly
        } else {
            Access::Writable
        }
    }
}

const fn libc_einval() -> i32 {
    22 // EINVAL on every Unix linerate targets
}

/// `/proc/sys` (or a copy of its layout under another root, for tests).
#[derive(Debug, Clone)]
pub struct ProcSys {
    root: PathBuf,
}

impl ProcSys {
    /// The real `/proc/sys` of the calling thread's network namespace.
    pub fn new() -> Self {
        ProcSys {
            root: PathBuf::from("/proc/sys"),
        }
    }

    /// A tree rooted elsewhere.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        ProcSys { root: root.into() }
    }

    /// The file of `key`: dots separate components; a `/` in the key (sysctl's alternative
    /// separator, needed for interface names with dots) is taken as given.
    pub fn path(&self, key: &str) -> PathBuf {
        let rel = if key.contains('/') {
            key.to_string()
        } else {
            key.replace('.', "/")
        };
        self.root.join(rel)
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

impl Default for ProcSys {
    fn default() -> Self {
        Self::new()
    }
}

impl Backend for ProcSys {
    fn read(&mut self, key: &str) -> Result<String, BackendError> {
        match fs::read_to_string(self.path(key)) {
            Ok(s) => Ok(normalize(&s)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(BackendError::Missing(key.into())),
            Err(error) => Err(BackendError::Read {
                key: key.into(),
                error,
            }),
        }
    }

    fn write(&mut self, key: &str, value: &str) -> Result<(), BackendError> {
        let path = self.path(key);
        let file = fs::OpenOptions::new().write(true).open(&path);
        let mut file = match file {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(BackendError::Missing(key.into()));
            }
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                return Err(BackendError::ReadOnly(key.into()));
            }
            Err(error) => {
                return Err(BackendError::Rejected {
                    key: key.into(),
                    value: value.into(),
                    error,
                });
            }
        };
        // One write call: procfs parses the buffer of a single write.
        file.write_all(format!("{value}\n").as_bytes())
            .map_err(|error| BackendError::Rejected {
                key: key.into(),
                value: value.into(),
                error,
            })
    }

    fn access(&mut self, key: &str) -> Access {
        match fs::metadata(self.path(key)) {
            Err(_) => Access::Missing,
            Ok(m) if m.is_dir() => Access::Missing,
            Ok(m) => {
                use std::os::unix::fs::PermissionsExt as _;
                if m.permissions().mode() & 0o200 == 0 {
                    Access::ReadOnly
                } else {
                    Access::Writable
                }
            }
        }
    }
}
