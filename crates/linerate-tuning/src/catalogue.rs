//! The knob catalogue: what linerate knows about each setting of each OS, loaded from the TOML
//! data files in `data/` (embedded at build time) and validated on load.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::os::{Os, Version};
use crate::value::{Value, ValueType};

/// The unit a knob's numbers are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// Bytes.
    Bytes,
    /// KiB (`vm.min_free_kbytes`).
    Kib,
    /// Memory pages (`tcp_mem`).
    Pages,
    /// Packets.
    Packets,
    /// Milliseconds.
    Ms,
    /// Seconds.
    S,
    /// Microseconds.
    Us,
    /// A count of things (entries, sockets, queues).
    Count,
    /// No unit (flags, enums, names).
    None,
}

impl Unit {
    /// The unit as written in messages.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Bytes => "bytes",
            Unit::Kib => "KiB",
            Unit::Pages => "pages",
            Unit::Packets => "packets",
            Unit::Ms => "ms",
            Unit::S => "s",
            Unit::Us => "µs",
            Unit::Count => "count",
            Unit::None => "none",
        }
    }
}

/// Where a Linux knob lives with respect to network namespaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Global: only the initial namespace has it (or it is not network-namespaced at all).
    #[default]
    Host,
    /// Per network namespace and writable inside one.
    Netns,
    /// Visible inside a namespace but read-only there (mirrors the host).
    Readonly,
}

/// When a FreeBSD knob can be set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum When {
    /// At run time (sysctl.conf).
    #[default]
    Runtime,
    /// Only at boot (loader.conf tunable).
    Boot,
    /// Either.
    Both,
}

/// How a setting is expressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A sysctl (Linux, BSD) or registry value (Windows).
    #[default]
    Sysctl,
    /// A `netsh int tcp set global` / `Set-NetTCPSetting` parameter (Windows).
    Netsh,
}

/// A default that held before some version.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OldDefault {
    /// The default applied to versions below this one.
    pub before: Version,
    /// The old default.
    pub default: String,
}

/// A value that makes the knob do nothing.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Noop {
    /// First version where the knob has no effect (always, when absent).
    #[serde(default)]
    pub since: Option<Version>,
    /// Why.
    pub why: String,
}

/// A known-bad value: an exact value, or anything above / below a bound.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Harmful {
    /// Exact value that is harmful.
    #[serde(default)]
    pub value: Option<String>,
    /// Harmful when strictly above this.
    #[serde(default)]
    pub above: Option<i64>,
    /// Harmful when strictly below this.
    #[serde(default)]
    pub below: Option<i64>,
    /// How bad.
    pub severity: crate::Severity,
    /// The fact, one sentence.
    pub why: String,
    /// The value to set instead, or `remove`.
    pub fix: String,
}

/// A ceiling past which a value buys nothing.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SaneMax {
    /// The ceiling.
    pub value: i64,
    /// Why nothing above it helps.
    pub why: String,
}

/// One knob of one OS.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Knob {
    /// Full name; `*` stands for one name component (an interface, a device unit).
    pub name: String,
    /// Value type.
    #[serde(rename = "type")]
    pub ty: ValueType,
    /// Unit of the numbers.
    pub unit: Unit,
    /// Linux: namespace scope.
    #[serde(default)]
    pub scope: Scope,
    /// FreeBSD: when it can be set.
    #[serde(default)]
    pub when: When,
    /// Windows: registry value or netsh parameter.
    #[serde(default)]
    pub kind: Kind,
    /// Allowed values of an enum.
    #[serde(default)]
    pub values: Vec<String>,
    /// Smallest valid value.
    #[serde(default)]
    pub min: Option<i64>,
    /// Largest valid value.
    #[serde(default)]
    pub max: Option<i64>,
    /// Must be a power of two.
    #[serde(default)]
    pub power_of_two: bool,
    /// Default on the catalogue's reference version.
    #[serde(default)]
    pub default: Option<String>,
    /// Older defaults.
    #[serde(default)]
    pub history: Vec<OldDefault>,
    /// The default is computed at boot (from RAM etc.); how.
    #[serde(default)]
    pub autosized: Option<String>,
    /// Larger means more resources: setting it below the default is a downgrade.
    #[serde(default)]
    pub capacity: bool,
    /// A queue of packets: huge values are bufferbloat.
    #[serde(default)]
    pub queue: bool,
    /// A count of queues or threads that each want a core of their own.
    #[serde(default)]
    pub per_core: bool,
    /// First version that has it.
    #[serde(default)]
    pub added: Option<Version>,
    /// First version without it.
    #[serde(default)]
    pub removed: Option<Version>,
    /// Its replacement.
    #[serde(default)]
    pub renamed_to: Option<String>,
    /// When the rename happened, for renames whose old name still works.
    #[serde(default)]
    pub renamed_in: Option<Version>,
    /// When it stopped doing anything.
    #[serde(default)]
    pub noop: Option<Noop>,
    /// Values known to hurt.
    #[serde(default)]
    pub harmful: Vec<Harmful>,
    /// Past this nothing is gained.
    #[serde(default)]
    pub sane_max: Option<SaneMax>,
    /// Windows: the modern netsh/PowerShell equivalent.
    #[serde(default)]
    pub modern: Option<String>,
    /// What it does, one line.
    pub summary: String,
    /// Known harms.
    #[serde(default)]
    pub harms: Option<String>,
    /// Where the facts come from.
    pub source: String,
}

impl Knob {
    /// The default on `version`, if the knob has a fixed one.
    pub fn default_on(&self, version: &Version) -> Option<&str> {
        let mut old: Vec<&OldDefault> = self.history.iter().collect();
        old.sort_by(|a, b| a.before.cmp(&b.before));
        old.iter()
            .find(|h| version < &h.before)
            .map(|h| h.default.as_str())
            .or(self.default.as_deref())
    }

    /// Whether `key` is this knob (with `*` matching one component).
    pub fn matches(&self, key: &str) -> bool {
        if !self.name.contains('*') {
            return self.name == key;
        }
        let pattern: Vec<&str> = self.name.split('.').collect();
        let parts: Vec<&str> = key.split('.').collect();
        pattern.len() == parts.len() && pattern.iter().zip(&parts).all(|(p, k)| *p == "*" || p == k)
    }

    /// Whether the knob exists on `version`.
    pub fn exists_on(&self, version: &Version) -> bool {
        self.added.as_ref().is_none_or(|a| version >= a)
            && self.removed.as_ref().is_none_or(|r| version < r)
    }
}

/// The knobs of one OS.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OsCatalogue {
    /// The OS.
    pub os: Os,
    /// The version whose defaults the file records.
    pub default_version: Version,
    /// FreeBSD loader.conf commands (module loads, boot options), matched as suffix or prefix.
    #[serde(default)]
    pub loader_commands: Vec<String>,
    /// The knobs.
    #[serde(rename = "knob")]
    pub knobs: Vec<Knob>,
    #[serde(skip)]
    exact: HashMap<String, usize>,
}

impl OsCatalogue {
    /// Parses one data file.
    pub fn from_toml(text: &str) -> Result<Self, String> {
        let mut cat: OsCatalogue = toml::from_str(text).map_err(|e| e.to_string())?;
        cat.exact = cat
            .knobs
            .iter()
            .enumerate()
            .filter(|(_, k)| !k.name.contains('*'))
            .map(|(i, k)| (k.name.clone(), i))
            .collect();
        Ok(cat)
    }

    /// The knob called `key`, exact names first, then patterns.
    pub fn get(&self, key: &str) -> Option<&Knob> {
        if let Some(&i) = self.exact.get(key) {
            return self.knobs.get(i);
        }
        self.knobs.iter().find(|k| k.matches(key))
    }

    /// Whether a loader.conf line is a loader command rather than a tunable.
    pub fn is_loader_command(&self, key: &str) -> bool {
        self.loader_commands
            .iter()
            .any(|c| key.ends_with(c.as_str()) || key.starts_with(c.as_str()))
    }

    /// The catalogued name `key` is a typo of: the same parent and a leaf a typo's worth of
    /// edits away (see the `near` module for the rule).
    pub fn did_you_mean(&self, key: &str) -> Option<&str> {
        let parts: Vec<String> = key.split('.').map(str::to_string).collect();
        self.knobs
            .iter()
            .filter(|k| !k.name.contains('*'))
            .filter_map(|k| {
                let known: Vec<String> = k.name.split('.').map(str::to_string).collect();
                crate::near::leaf_near_miss(&parts, &known).map(|d| (d, k.name.as_str()))
            })
            .min()
            .map(|(_, n)| n)
    }

    /// The catalogued names without `*`, for near-miss checks.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.knobs
            .iter()
            .filter(|k| !k.name.contains('*'))
            .map(|k| k.name.as_str())
    }

    /// Parses `raw` as a value of `knob`.
    pub fn parse_value(knob: &Knob, raw: &str) -> Result<Value, String> {
        Value::parse(knob.ty, raw)
    }
}

const DATA: [(Os, &str); 4] = [
    (Os::Linux, include_str!("../data/linux.toml")),
    (Os::Freebsd, include_str!("../data/freebsd.toml")),
    (Os::Openbsd, include_str!("../data/openbsd.toml")),
    (Os::Windows, include_str!("../data/windows.toml")),
];

/// The embedded catalogue of `os`. The data is validated by this crate's tests, so a parse
/// failure here is a build defect; it is reported as an error, not a panic.
pub fn catalogue(os: Os) -> Result<&'static OsCatalogue, CatalogueError> {
    static CELLS: [OnceLock<Result<OsCatalogue, String>>; 4] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    let i = Os::ALL.iter().position(|o| *o == os).unwrap_or(0);
    let cell = &CELLS[i];
    let text = DATA[i].1;
    cell.get_or_init(|| OsCatalogue::from_toml(text))
        .as_ref()
        .map_err(|e| CatalogueError {
            os,
            message: e.clone(),
        })
}

/// The embedded data file of `os` failed to parse.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the built-in {os} knob catalogue is invalid: {message}")]
pub struct CatalogueError {
    /// Which file.
    pub os: Os,
    /// The TOML error.
    pub message: String,
}

#[cfg(test)]
mod tests;
