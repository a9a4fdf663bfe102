//! [`HostSnapshot`]: the whole host in one serialisable value, captured live or from a tree,
//! saved and loaded as JSON.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::host::{self, CpuInfo, Forwarding, HostInfo, NetCore};
use crate::interface::{self, Interface};
use crate::softnet::{self, SoftnetCpu};
use crate::{ProbeRoots, Probed, irq};

/// The schema of a saved snapshot.
pub const SCHEMA: &str = "linerate.host-snapshot/1";

/// Everything the hardware findings and `linerate nic` need to know about a host.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HostSnapshot {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// Seconds since the Unix epoch at capture.
    pub captured_at: u64,
    /// Where it was read from: `live`, or the sysfs and procfs roots of a captured tree.
    pub source: String,
    /// OS, kernel, memory.
    pub host: HostInfo,
    /// CPU model and topology.
    pub cpu: CpuInfo,
    /// Forwarding switches.
    pub forwarding: Forwarding,
    /// Receive-path budget knobs.
    pub net_core: NetCore,
    /// Interfaces, sorted by name.
    pub interfaces: Probed<Vec<Interface>>,
    /// Softnet counters per CPU.
    pub softnet: Probed<Vec<SoftnetCpu>>,
    /// FreeBSD's own facts (netisr, mbuf limits, the NICs' `dev.<driver>.<unit>` nodes);
    /// absent for Linux hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub freebsd: Option<crate::freebsd::FreebsdHost>,
}

/// Why a snapshot could not be saved or loaded.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// Reading or writing the file failed.
    #[error("{}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is not a snapshot.
    #[error("{}: not a linerate host snapshot", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// Where and why JSON parsing failed.
        source: serde_json::Error,
    },
    /// The file is FreeBSD `sysctl` output that does not parse (the source names the line).
    #[error("{}", path.display())]
    Sysctl {
        /// The file.
        path: PathBuf,
        /// Where and why.
        source: crate::freebsd::ParseError,
    },
    /// The file is a snapshot of another schema version.
    #[error("{path}: schema '{found}' is not supported (expected '{SCHEMA}')")]
    Schema {
        /// The file.
        path: PathBuf,
        /// The schema it declares.
        found: String,
    },
}

impl HostSnapshot {
    /// Captures the host the roots point at. Never fails: what cannot be read is recorded as
    /// unknown with the reason. On FreeBSD the live host is read through `sysctlbyname`,
    /// `getifaddrs`, `vmstat -i` and `pciconf -lvc` (`freebsd::live`).
    pub fn capture(roots: &ProbeRoots) -> HostSnapshot {
        #[cfg(target_os = "freebsd")]
        if roots.is_live() {
            return crate::freebsd::live::capture();
        }
        let interrupts = irq::read_interrupts(roots);
        let interfaces = interface::list(roots).map(|names| {
            names
                .iter()
                .map(|n| interface::read(roots, n, &interrupts))
                .collect()
        });
        HostSnapshot {
            schema: SCHEMA.to_owned(),
            captured_at: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            source: if roots.is_live() {
                "live".to_owned()
            } else {
                format!(
                    "sysfs {} procfs {}",
                    roots.sysfs.display(),
                    roots.procfs.display()
                )
            },
            host: host::host_info(roots),
            cpu: host::cpu_info(roots),
            forwarding: host::forwarding(roots),
            net_core: host::net_core(roots),
            interfaces: interfaces.into(),
            softnet: softnet::read(roots),
            freebsd: None,
        }
    }

    /// Whether the snapshot is of a FreeBSD host (its rules speak loader.conf and ifconfig).
    pub fn is_freebsd(&self) -> bool {
        self.freebsd.is_some()
    }

    /// Keeps only the interfaces named (all when `names` is empty).
    ///
    /// # Errors
    /// A name the snapshot does not have.
    pub fn keep_interfaces(&mut self, names: &[String]) -> Result<(), UnknownInterface> {
        if names.is_empty() {
            return Ok(());
        }
        let have: Vec<String> = self.interfaces().iter().map(|i| i.name.clone()).collect();
        check_names(names, &have)?;
        if let Probed::Value(list) = &mut self.interfaces {
            list.retain(|i| names.contains(&i.name));
        }
        Ok(())
    }

    /// The interfaces (empty when the list itself was unreadable).
    pub fn interfaces(&self) -> &[Interface] {
        self.interfaces.value().map_or(&[], Vec::as_slice)
    }

    /// One interface by name.
    pub fn interface(&self, name: &str) -> Option<&Interface> {
        self.interfaces().iter().find(|i| i.name == name)
    }

    /// Serialises as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Writes the snapshot as JSON, atomically (temporary file in the same directory, fsync,
    /// rename), so a reader never sees half a file.
    pub fn save(&self, path: &Path) -> Result<(), SnapshotError> {
        let mut text = self.to_json();
        text.push('\n');
        linerate_sys::atomic_write(path, text.as_bytes()).map_err(|source| SnapshotError::Io {
            path: path.to_owned(),
            source,
        })
    }

    /// Parses a snapshot from JSON text; `path` names it in errors.
    pub fn from_json(text: &str, path: &Path) -> Result<HostSnapshot, SnapshotError> {
        #[derive(serde::Deserialize)]
        struct Header {
            schema: Option<String>,
        }
        let header: Header = serde_json::from_str(text).map_err(|source| SnapshotError::Parse {
            path: path.to_owned(),
            source,
        })?;
        match header.schema.as_deref() {
            Some(SCHEMA) => {}
            other => {
                return Err(SnapshotError::Schema {
                    path: path.to_owned(),
                    found: other.unwrap_or("(none)").to_owned(),
                });
            }
        }
        serde_json::from_str(text).map_err(|source| SnapshotError::Parse {
            path: path.to_owned(),
            source,
        })
    }

    /// Loads a snapshot saved by [`HostSnapshot::save`].
    pub fn load(path: &Path) -> Result<HostSnapshot, SnapshotError> {
        let text = fs::read_to_string(path).map_err(|source| SnapshotError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::from_json(&text, path)
    }

    /// Loads a saved snapshot, or builds one from FreeBSD `sysctl` output (`sysctl -a` taken
    /// on a router): JSON when the file starts with `{`, sysctl text otherwise.
    pub fn read_file(path: &Path) -> Result<HostSnapshot, SnapshotError> {
        let text = fs::read_to_string(path).map_err(|source| SnapshotError::Io {
            path: path.to_owned(),
            source,
        })?;
        if text.trim_start().starts_with('{') {
            return Self::from_json(&text, path);
        }
        crate::freebsd::snapshot::from_sysctl_text(&text, format!("sysctl {}", path.display()))
            .map_err(|source| SnapshotError::Sysctl {
                path: path.to_owned(),
                source,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_capture_round_trips_through_a_file() {
        let snap = HostSnapshot::capture(&ProbeRoots::live());
        assert_eq!(snap.schema, SCHEMA);
        assert!(snap.interface("lo").is_some());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("host.json");
        snap.save(&path).unwrap();
        let back = HostSnapshot::load(&path).unwrap();
        assert_eq!(back, snap);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "no temp left");
    }

    #[test]
    fn bad_files_name_the_problem() {
        let p = Path::new("x.json");
        let e = HostSnapshot::from_json("{\"schema\":\"other/9\"}", p).unwrap_err();
        assert!(e.to_string().contains("schema 'other/9'"), "{e}");
        let e = HostSnapshot::from_json("{", p).unwrap_err();
        assert!(e.to_string().starts_with("x.json: not a linerate"), "{e}");
        let e = HostSnapshot::load(Path::new("/nonexistent/s.json")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/s.json"), "{e}");
    }
}

/// An interface asked for by name that is not there.
#[derive(Debug, thiserror::Error)]
#[error("no interface '{name}' (there are: {})", have.join(", "))]
pub struct UnknownInterface {
    /// The name asked for.
    pub name: String,
    /// The interfaces there are.
    pub have: Vec<String>,
}

/// Every name of `names` must be one of `have`.
///
/// # Errors
/// The first that is not.
pub fn check_names(names: &[String], have: &[String]) -> Result<(), UnknownInterface> {
    match names.iter().find(|n| !have.contains(n)) {
        Some(name) => Err(UnknownInterface {
            name: name.clone(),
            have: have.to_vec(),
        }),
        None => Ok(()),
    }
}
