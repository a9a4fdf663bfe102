//! Where a capture reads from: the live `/sys` and `/proc` and the ethtool ioctl, or a captured
//! tree (tests, offline audits of another machine), and the small file-reading helpers that turn
//! every failure into a reason.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::Probed;

/// Where ethtool data comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EthtoolSource {
    /// The `SIOCETHTOOL` ioctl on the live host (in the caller's network namespace).
    Live,
    /// A directory of `<iface>.json` files, each an [`crate::EthtoolInfo`]: captured data for
    /// fixture trees.
    Dir(PathBuf),
    /// Not available (a captured sysfs tree without ethtool data): recorded as unknown.
    Absent,
}

/// The roots a capture reads from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeRoots {
    /// Where sysfs is mounted (`/sys` live).
    pub sysfs: PathBuf,
    /// Where procfs is mounted (`/proc` live).
    pub procfs: PathBuf,
    /// Where ethtool data comes from.
    pub ethtool: EthtoolSource,
}

impl ProbeRoots {
    /// The live host: `/sys`, `/proc` and the ethtool ioctl.
    pub fn live() -> Self {
        ProbeRoots {
            sysfs: PathBuf::from("/sys"),
            procfs: PathBuf::from("/proc"),
            ethtool: EthtoolSource::Live,
        }
    }

    /// A captured tree. Ethtool data is read from `<sysfs>/../ethtool/` when that directory
    /// exists, and is unknown otherwise: the live ioctl would describe this host, not the tree.
    pub fn captured(sysfs: impl Into<PathBuf>, procfs: impl Into<PathBuf>) -> Self {
        let sysfs = sysfs.into();
        let ethtool_dir = sysfs
            .parent()
            .map(|p| p.join("ethtool"))
            .filter(|p| p.is_dir());
        ProbeRoots {
            procfs: procfs.into(),
            ethtool: ethtool_dir.map_or(EthtoolSource::Absent, EthtoolSource::Dir),
            sysfs,
        }
    }

    /// True when reading the live host.
    pub fn is_live(&self) -> bool {
        self.ethtool == EthtoolSource::Live
    }

    /// A path under the sysfs root.
    pub fn sys(&self, rel: &str) -> PathBuf {
        self.sysfs.join(rel.trim_start_matches('/'))
    }

    /// A path under the procfs root.
    pub fn proc(&self, rel: &str) -> PathBuf {
        self.procfs.join(rel.trim_start_matches('/'))
    }
}

/// Why reading `path` failed, in words that name the path and the OS error.
pub(crate) fn reason(path: &Path, err: &io::Error) -> String {
    match err.raw_os_error() {
        // Reading sysfs `speed`/`duplex` of a link that is down fails with EINVAL.
        Some(libc::EINVAL) => format!(
            "{}: the driver refused the read (EINVAL: link down or not supported)",
            path.display()
        ),
        _ => format!("cannot read {}: {err}", path.display()),
    }
}

/// A file's contents with surrounding whitespace trimmed.
pub(crate) fn read_trimmed(path: &Path) -> Probed<String> {
    match fs::read_to_string(path) {
        Ok(s) => Probed::Value(s.trim().to_owned()),
        Err(e) => Probed::Unknown(reason(path, &e)),
    }
}

/// A file's contents parsed as a number (decimal, or hex with `0x`).
pub(crate) fn read_number<T>(path: &Path) -> Probed<T>
where
    T: TryFrom<u64>,
{
    read_trimmed(path).and_then(|s| match parse_number(&s) {
        Some(n) => match T::try_from(n) {
            Ok(v) => Probed::Value(v),
            Err(_) => Probed::unknown(format!("{}: {s} is out of range", path.display())),
        },
        None => Probed::unknown(format!("{}: '{s}' is not a number", path.display())),
    })
}

/// Parses decimal or `0x` hex.
pub(crate) fn parse_number(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Parses a kernel CPU list (`0-3,8,10-11`). Returns `None` on malformed input.
pub fn parse_cpu_list(s: &str) -> Option<Vec<u32>> {
    let s = s.trim();
    let mut cpus = Vec::new();
    if s.is_empty() {
        return Some(cpus);
    }
    for part in s.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                let a: u32 = a.trim().parse().ok()?;
                let b: u32 = b.trim().parse().ok()?;
                if b < a || b - a > 65_536 {
                    return None;
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.trim().parse().ok()?),
        }
    }
    Some(cpus)
}

/// Parses a kernel CPU mask (`ff`, `00000000,00000003`) into CPU numbers.
pub fn parse_cpu_mask(s: &str) -> Option<Vec<u32>> {
    let mut cpus = Vec::new();
    let words: Vec<&str> = s.trim().split(',').collect();
    for (i, word) in words.iter().rev().enumerate() {
        let bits = u32::from_str_radix(word.trim(), 16).ok()?;
        for bit in 0..32 {
            if bits & (1 << bit) != 0 {
                cpus.push(u32::try_from(i).ok()? * 32 + bit);
            }
        }
    }
    cpus.sort_unstable();
    Some(cpus)
}

/// Formats CPU numbers as a kernel CPU list (`0-3,8`).
pub fn format_cpu_list(cpus: &[u32]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_and_masks() {
        assert_eq!(parse_cpu_list("0-3,8"), Some(vec![0, 1, 2, 3, 8]));
        assert_eq!(parse_cpu_list(""), Some(vec![]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("a"), None);
        assert_eq!(parse_cpu_mask("00000000,00000003"), Some(vec![0, 1]));
        assert_eq!(parse_cpu_mask("1,00000000"), Some(vec![32]));
        assert_eq!(parse_cpu_mask("zz"), None);
        assert_eq!(format_cpu_list(&[3, 0, 1, 2, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(parse_number("0x1af4"), Some(0x1af4));
    }

    #[test]
    fn unreadable_files_give_reasons() {
        let r: Probed<u32> = read_number(Path::new("/nonexistent/linerate/x"));
        assert!(r.reason().unwrap().contains("/nonexistent/linerate/x"));
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("n");
        fs::write(&p, "abc\n").unwrap();
        let r: Probed<u32> = read_number(&p);
        assert!(r.reason().unwrap().contains("'abc' is not a number"));
    }
}
