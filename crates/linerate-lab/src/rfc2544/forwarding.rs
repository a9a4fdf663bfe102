//! Forwarding in the DUT turned off for the generator's ceiling measurement, and put back even
//! when the process doing it dies.
//!
//! While the ceiling is measured into a sink, the DUT's `net.ipv4.ip_forward` is 0; dropping
//! `ForwardingOff` restores it. A `kill -9` in that window skips the drop and would leave the
//! lab's DUT silently losing every frame of every later trial, so before writing 0 the old
//! value goes into a marker beside the lab's state file (`NAME.ip-forward-off`, written whole:
//! temp file + rename). The drop removes it after the restore; the next use of the lab for
//! traffic ([`restore_interrupted`], called where a [`super::path::LabPath`] is resolved) finds a marker left
//! behind, restores the value from it and removes it. `lab down` removes it with the lab's
//! other side files.

use std::io;
use std::path::{Path, PathBuf};

use crate::LabError;
use crate::netns::Netns;
use crate::state::StateDir;

const IP_FORWARD: &str = "/proc/sys/net/ipv4/ip_forward";

/// Suffix of the marker's file name beside the lab's state file.
pub const MARKER_SUFFIX: &str = "ip-forward-off";

/// The marker of lab `lab` in `dir`.
pub fn marker_path(dir: &StateDir, lab: &str) -> PathBuf {
    dir.side_file(lab, MARKER_SUFFIX)
}

/// What the marker holds: the DUT's `ip_forward` before the measurement.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Marker {
    /// The value read from `/proc/sys/net/ipv4/ip_forward` (`"1"`).
    ip_forward: String,
}

fn valid(value: &str) -> bool {
    !value.is_empty() && value.len() <= 3 && value.bytes().all(|b| b.is_ascii_digit())
}

/// Writes the marker at `path` holding `before`, whole or not at all.
fn write_marker(path: &Path, before: &str) -> Result<(), LabError> {
    let mut bytes = serde_json::to_vec(&Marker {
        ip_forward: before.to_owned(),
    })
    .map_err(|e| LabError::Io {
        what: format!("encode {}", path.display()),
        source: io::Error::other(e),
    })?;
    bytes.push(b'\n');
    linerate_sys::atomic_write(path, &bytes).map_err(LabError::io(format!(
        "write {} (the DUT's ip_forward to restore after a kill)",
        path.display()
    )))
}

/// The value the marker at `path` holds; `None` when there is no marker.
fn read_marker(path: &Path) -> Result<Option<String>, LabError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(LabError::io(format!("read {}", path.display()))(e)),
    };
    let bad = |reason: String| LabError::BadState {
        path: path.to_owned(),
        reason,
    };
    let m: Marker = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
    if !valid(&m.ip_forward) {
        return Err(bad(format!(
            "ip_forward {:?} is not a small number",
            m.ip_forward
        )));
    }
    Ok(Some(m.ip_forward))
}

fn remove_marker(path: &Path) -> Result<(), LabError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(LabError::io(format!("remove {}", path.display()))(e)),
    }
}

/// Forwarding in the DUT turned off until dropped (restored even when the measurement fails;
/// after a kill, by [`restore_interrupted`] from the marker).
pub(super) struct ForwardingOff<'a> {
    ns: &'a Netns,
    marker: &'a Path,
    before: String,
}

impl<'a> ForwardingOff<'a> {
    /// Reads the DUT's `ip_forward`, writes the marker, then writes 0.
    pub(super) fn new(ns: &'a Netns, marker: &'a Path) -> Result<ForwardingOff<'a>, LabError> {
        let before = ns.run(|| {
            let before = std::fs::read_to_string(IP_FORWARD)
                .map_err(LabError::io(format!("read {IP_FORWARD}")))?;
            Ok(before.trim().to_owned())
        })?;
        if !valid(&before) {
            return Err(LabError::Io {
                what: format!("{IP_FORWARD} in {} reads {before:?}", ns.name),
                source: io::Error::from(io::ErrorKind::InvalidData),
            });
        }
        write_marker(marker, &before)?;
        let off = ForwardingOff { ns, marker, before };
        // From here the drop restores the value (and removes the marker), also when the write
        // of 0 fails half way.
        ns.run(|| {
            std::fs::write(IP_FORWARD, "0").map_err(LabError::io(format!("write {IP_FORWARD}")))
        })?;
        Ok(off)
    }
}

impl Drop for ForwardingOff<'_> {
    fn drop(&mut self) {
        let before = self.before.clone();
        let restored = self.ns.run(move || {
            std::fs::write(IP_FORWARD, before)
                .map_err(LabError::io(format!("restore {IP_FORWARD}")))
        });
        // A marker whose restore failed stays for the next use of the lab to retry.
        if restored.is_ok() {
            let _ = remove_marker(self.marker);
        }
    }
}

/// `ip_forward` put back in a DUT from the marker of an interrupted ceiling measurement.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Restored {
    /// The DUT's namespace.
    pub netns: String,
    /// The value written back.
    pub ip_forward: String,
}

impl std::fmt::Display for Restored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "restored net.ipv4.ip_forward = {} in the DUT ({}): an interrupted generator-ceiling \
             measurement had left it at 0",
            self.ip_forward, self.netns
        )
    }
}

/// When the lab's marker at `marker` exists (a ceiling measurement was killed), writes its
/// value back to `ip_forward` in the DUT's namespace `dut_netns` and removes it; says what it
/// restored.
pub fn restore_interrupted(marker: &Path, dut_netns: &str) -> Result<Option<Restored>, LabError> {
    let Some(value) = read_marker(marker)? else {
        return Ok(None);
    };
    let ns = Netns::open(dut_netns)?;
    let write = value.clone();
    ns.run(move || {
        std::fs::write(IP_FORWARD, write).map_err(LabError::io(format!("restore {IP_FORWARD}")))
    })?;
    remove_marker(marker)?;
    Ok(Some(Restored {
        netns: dut_netns.to_owned(),
        ip_forward: value,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_keeps_the_value_and_is_gone_once_removed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let states = StateDir::resolve(Some(dir.path().to_owned()));
        let path = marker_path(&states, "demo");
        assert_eq!(path, dir.path().join("demo.ip-forward-off"));
        assert_eq!(read_marker(&path).expect("no marker"), None);
        write_marker(&path, "1").expect("write");
        assert_eq!(read_marker(&path).expect("read"), Some("1".to_owned()));
        // Written again (a second ceiling measurement): replaced, not appended.
        write_marker(&path, "0").expect("rewrite");
        assert_eq!(read_marker(&path).expect("read"), Some("0".to_owned()));
        // Only the marker is in the directory: no temp file left over.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["demo.ip-forward-off"]);
        remove_marker(&path).expect("remove");
        assert_eq!(read_marker(&path).expect("gone"), None);
        // Removing what is not there is fine (the drop after a restore that found it).
        remove_marker(&path).expect("remove again");
    }

    #[test]
    fn lab_down_removes_the_marker_with_the_lab() {
        let dir = tempfile::tempdir().expect("tempdir");
        let states = StateDir::resolve(Some(dir.path().to_owned()));
        let path = marker_path(&states, "demo");
        write_marker(&path, "1").expect("write");
        states.remove("demo").expect("remove the lab's files");
        assert!(!path.exists());
    }

    #[test]
    fn a_marker_that_is_not_a_value_is_refused_naming_its_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("demo.ip-forward-off");
        for text in [
            "",
            "1",
            "{\"ip_forward\":\"1; rm\"}",
            "{\"ip_forward\":\"\"}",
        ] {
            std::fs::write(&path, text).expect("write");
            let err = read_marker(&path).expect_err(text).to_string();
            assert!(err.contains("demo.ip-forward-off"), "{text:?}: {err}");
        }
    }
}
