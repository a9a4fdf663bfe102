//! Operating systems and their version numbers.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// An operating system linerate knows knobs for.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Os {
    /// Linux (sysctl, /proc/sys).
    Linux,
    /// FreeBSD (sysctl.conf, loader.conf, rc.conf).
    Freebsd,
    /// OpenBSD (sysctl.conf).
    Openbsd,
    /// Windows (registry, netsh, PowerShell).
    Windows,
}

impl Os {
    /// Every OS, in catalogue order.
    pub const ALL: [Os; 4] = [Os::Linux, Os::Freebsd, Os::Openbsd, Os::Windows];

    /// The OS this binary runs on, when linerate can read and change its settings live
    /// (Linux, FreeBSD); `None` elsewhere.
    pub fn running() -> Option<Os> {
        if cfg!(target_os = "linux") {
            Some(Os::Linux)
        } else if cfg!(target_os = "freebsd") {
            Some(Os::Freebsd)
        } else {
            None
        }
    }

    /// The lower-case name used on the command line and in the data files.
    pub fn name(self) -> &'static str {
        match self {
            Os::Linux => "linux",
            Os::Freebsd => "freebsd",
            Os::Openbsd => "openbsd",
            Os::Windows => "windows",
        }
    }
}

impl fmt::Display for Os {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Os {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "linux" => Ok(Os::Linux),
            "freebsd" => Ok(Os::Freebsd),
            "openbsd" => Ok(Os::Openbsd),
            "windows" => Ok(Os::Windows),
            _ => Err(format!(
                "unknown OS `{s}` (expected linux, freebsd, openbsd or windows)"
            )),
        }
    }
}

/// A dotted version number such as `6.18`, `4.12` or `14.0`. Missing components compare as 0,
/// so `6.18` equals `6.18.0`. A kernel release string like `6.18.44-fc-v595` parses to `6.18.44`.
#[derive(Debug, Clone)]
pub struct Version(Vec<u32>);

impl Version {
    /// A version from its components.
    pub fn new(parts: &[u32]) -> Self {
        Version(parts.to_vec())
    }

    fn component(&self, i: usize) -> u32 {
        self.0.get(i).copied().unwrap_or(0)
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Version {}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        let n = self.0.len().max(other.0.len());
        (0..n)
            .map(|i| self.component(i).cmp(&other.component(i)))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(u32::to_string).collect();
        f.write_str(&parts.join("."))
    }
}

impl FromStr for Version {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let trimmed = s.trim();
        // Keep the leading dotted digits: `6.18.44-fc-v595` → 6.18.44, `14.1-RELEASE` → 14.1.
        let end = trimmed
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(trimmed.len());
        let head = trimmed[..end].trim_end_matches('.');
        if head.is_empty() {
            return Err(format!(
                "`{s}` is not a version (expected e.g. 6.18 or 14.0)"
            ));
        }
        let parts = head
            .split('.')
            .map(|p| p.parse::<u32>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| format!("`{s}` is not a version (expected e.g. 6.18 or 14.0)"))?;
        Ok(Version(parts))
    }
}

impl serde::Serialize for Version {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Version {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_numerically() {
        let v = |s: &str| s.parse::<Version>().unwrap_or_else(|e| panic!("{e}"));
        assert!(v("6.18") > v("6.6"));
        assert!(v("4.12") < v("4.20"));
        assert_eq!(v("6.18"), v("6.18.0"));
        assert_eq!(v("6.18.44-fc-v595"), v("6.18.44"));
        assert_eq!(v("14.1-RELEASE").to_string(), "14.1");
        assert!("fc".parse::<Version>().is_err());
    }
}
