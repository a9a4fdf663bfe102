//! Which keys exist, with evidence. Each OS has an inventory of real sysctl names (the lists in
//! `data/inventory/`, embedded at build time): every list records where it comes from and which
//! version it describes; the index says which subtrees a version's lists cover completely, which
//! keys exist only with a kernel module, and which were removed in a version.
//!
//! The lint asks the inventory before it calls a key unknown: a key is only "no such key" with
//! positive evidence (removed in a stated version, absent from a subtree known completely for
//! the target version, or a near miss of a known key). Anything else is outside linerate's
//! knowledge and said to be so.

mod glob;

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::catalogue::CatalogueError;
use crate::os::{Os, Version};

use crate::near;

/// One list of keys and its provenance.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct List {
    /// File name under `data/inventory/`.
    pub file: String,
    /// The version the list describes.
    pub version: Version,
    /// Where the names come from, short enough for a finding's `source`.
    pub source: String,
}

/// Subtrees a version's lists cover completely.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Complete {
    /// The version (major.minor) this holds for.
    pub version: Version,
    /// Key shapes (`*` = one component) whose every instance is listed.
    pub patterns: Vec<String>,
    /// Why the lists are complete there.
    pub evidence: String,
}

/// Keys that exist only while a kernel module is loaded.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Module {
    /// Key prefix.
    pub prefix: String,
    /// The module that creates them.
    pub module: String,
}

/// Keys removed in a version (beyond the catalogue's own removed knobs).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Removed {
    /// Key or pattern; a trailing `.**` stands for the whole subtree.
    pub key: String,
    /// First version without it.
    pub since: Version,
    /// What happened, one sentence.
    pub why: String,
    /// Where that is stated.
    pub source: String,
}

#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Index {
    os: Os,
    #[serde(rename = "list")]
    lists: Vec<List>,
    #[serde(default)]
    complete: Vec<Complete>,
    #[serde(default, rename = "module")]
    modules: Vec<Module>,
    #[serde(default)]
    removed: Vec<Removed>,
}

/// Flags a list gives a key.
#[derive(Debug, Clone, Copy, Default)]
struct Flags {
    list: usize,
    read_only: bool,
    write_only: bool,
}

/// A key found in the inventory.
#[derive(Debug, Clone, Copy)]
pub struct Known<'a> {
    /// The first list that names it.
    pub list: &'a List,
    /// Mode 0444: a counter or a fact, never settable.
    pub read_only: bool,
    /// Mode 0200: a trigger, not a setting.
    pub write_only: bool,
}

/// The inventory of one OS.
#[derive(Debug)]
pub struct Inventory {
    /// The OS.
    pub os: Os,
    lists: Vec<List>,
    complete: Vec<Complete>,
    modules: Vec<Module>,
    removed: Vec<Removed>,
    exact: HashMap<String, Flags>,
    patterns: Vec<(Vec<String>, Flags)>,
    subtrees: Vec<(Vec<String>, Flags)>,
}

impl Inventory {
    /// Builds an inventory from its index and the texts of its lists (`file name → text`).
    pub fn from_parts(index: &str, files: &[(&str, &str)]) -> Result<Self, String> {
        let index: Index = toml::from_str(index).map_err(|e| e.to_string())?;
        let mut inv = Inventory {
            os: index.os,
            lists: index.lists,
            complete: index.complete,
            modules: index.modules,
            removed: index.removed,
            exact: HashMap::new(),
            patterns: Vec::new(),
            subtrees: Vec::new(),
        };
        for (i, list) in inv.lists.iter().enumerate() {
            let text = files
                .iter()
                .find(|(name, _)| *name == list.file)
                .map(|(_, t)| *t)
                .ok_or_else(|| format!("{} is not embedded", list.file))?;
            for (n, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let mut words = line.split_whitespace();
                let key = words.next().unwrap_or_default();
                let mut flags = Flags {
                    list: i,
                    ..Flags::default()
                };
                for w in words {
                    match w {
                        "ro" => flags.read_only = true,
                        "wo" => flags.write_only = true,
                        other => {
                            return Err(format!("{}:{}: unknown flag `{other}`", list.file, n + 1));
                        }
                    }
                }
                if let Some(prefix) = key.strip_suffix(".**") {
                    inv.subtrees.push((split(prefix), flags));
                } else if key.contains('*') {
                    inv.patterns.push((split(key), flags));
                } else {
                    inv.exact.entry(key.to_string()).or_insert(flags);
                }
            }
        }
        Ok(inv)
    }

    /// Every list, in index order.
    pub fn lists(&self) -> &[List] {
        &self.lists
    }

    fn known(&self, flags: Flags) -> Known<'_> {
        Known {
            list: &self.lists[flags.list],
            read_only: flags.read_only,
            write_only: flags.write_only,
        }
    }

    /// The key, if some list names it: exactly, through a `*` pattern, inside a `**` subtree,
    /// or (for a systemd-sysctl glob such as `net.ipv4.conf.*.rp_filter`) any key it matches.
    pub fn find(&self, key: &str) -> Option<Known<'_>> {
        if let Some(f) = self.exact.get(key) {
            return Some(self.known(*f));
        }
        let parts = split(key);
        let globbed = glob::is_glob(key);
        if globbed {
            if let Some(f) = self
                .exact
                .iter()
                .find_map(|(k, f)| glob::key_matches(&parts, &split(k)).then_some(*f))
            {
                return Some(self.known(f));
            }
        }
        self.patterns
            .iter()
            .find(|(p, _)| glob::key_matches(&parts, p))
            .or_else(|| self.subtrees.iter().find(|(p, _)| glob::under(&parts, p)))
            .map(|(_, f)| self.known(*f))
    }

    /// The module a key needs, if any.
    pub fn module(&self, key: &str) -> Option<&str> {
        self.modules
            .iter()
            .find(|m| key.starts_with(&m.prefix))
            .map(|m| m.module.as_str())
    }

    /// The removal of `key` that applies on `version`.
    pub fn removed(&self, key: &str, version: &Version) -> Option<&Removed> {
        let parts = split(key);
        self.removed.iter().find(|r| {
            version >= &r.since
                && match r.key.strip_suffix(".**") {
                    Some(prefix) => glob::under(&parts, &split(prefix)),
                    None => glob::key_matches(&parts, &split(&r.key)),
                }
        })
    }

    /// The completeness claim that covers `key` on `version` (same major.minor), if any.
    pub fn complete_for(&self, key: &str, version: &Version) -> Option<&Complete> {
        let parts = split(key);
        self.complete.iter().find(|c| {
            same_release(&c.version, version)
                && c.patterns
                    .iter()
                    .any(|p| glob::key_matches(&parts, &split(p)))
        })
    }

    /// Whether this OS has the node `key` hangs from (its first two components, or its root
    /// for a two-component key): a key whose node this OS does not have at all (`net.inet.*`
    /// on Linux, `net.ipv4.*` on FreeBSD) belongs to another OS.
    pub fn has_node(&self, key: &str) -> bool {
        let parts = split(key);
        let depth = (parts.len() - 1).clamp(1, 2);
        let head = &parts[..depth];
        let same = |a: &String, b: &String| a == "*" || a == b;
        // A key under the node: longer than it, and equal to it up to its length.
        let starts = |k: &[String]| k.len() > depth && k.iter().zip(head).all(|(a, b)| same(a, b));
        // A subtree covers the node when either is a prefix of the other.
        let covers = |p: &[String]| p.iter().zip(head).all(|(a, b)| same(a, b));
        self.exact.keys().any(|k| starts(&split(k)))
            || self.patterns.iter().any(|(p, _)| starts(p))
            || self.subtrees.iter().any(|(p, _)| covers(p))
    }

    /// A known key that `key` is a near miss of: the same parent and a leaf within a small
    /// edit distance (a typo), or the same name missing its root (`cxgbe.x` for `hw.cxgbe.x`).
    /// `extra` are further known names (the catalogue's). Patterns are shown with the user's
    /// own interface or unit name.
    pub fn near_miss(&self, key: &str, extra: &[&str]) -> Option<String> {
        let parts = split(key);
        let mut best: Option<(usize, String)> = None;
        let mut consider = |cand: &[String]| {
            let Some(d) = near::leaf_near_miss(&parts, cand) else {
                return;
            };
            let shown = cand
                .iter()
                .zip(&parts)
                .map(|(c, p)| if c == "*" { p.as_str() } else { c.as_str() })
                .collect::<Vec<_>>()
                .join(".");
            if best.as_ref().is_none_or(|(bd, bn)| (d, &shown) < (*bd, bn)) {
                best = Some((d, shown));
            }
        };
        for k in self.exact.keys() {
            consider(&split(k));
        }
        for k in extra {
            consider(&split(k));
        }
        for (p, _) in &self.patterns {
            consider(p);
        }
        if best.is_none() && parts.len() >= 2 {
            let mut rooted: Vec<&String> = self
                .exact
                .keys()
                .filter(|k| k.split_once('.').is_some_and(|(_, rest)| rest == key))
                .collect();
            rooted.sort();
            return rooted.first().map(|k| (*k).clone());
        }
        best.map(|(_, n)| n)
    }
}

/// Whether two versions are the same release line (`6.18` and `6.18.44`).
fn same_release(a: &Version, b: &Version) -> bool {
    let head = |v: &Version| {
        v.to_string()
            .split('.')
            .take(2)
            .collect::<Vec<_>>()
            .join(".")
    };
    head(a) == head(b)
}

/// A key's components.
pub(crate) fn split(key: &str) -> Vec<String> {
    key.split('.').map(str::to_string).collect()
}

const INDEXES: [(Os, &str); 3] = [
    (Os::Linux, include_str!("../data/inventory/linux.toml")),
    (Os::Freebsd, include_str!("../data/inventory/freebsd.toml")),
    (Os::Openbsd, include_str!("../data/inventory/openbsd.toml")),
];

const FILES: [(&str, &str); 6] = [
    (
        "linux-6.18-proc.txt",
        include_str!("../data/inventory/linux-6.18-proc.txt"),
    ),
    (
        "linux-6.12-docs.txt",
        include_str!("../data/inventory/linux-6.12-docs.txt"),
    ),
    (
        "freebsd-12.2-man.txt",
        include_str!("../data/inventory/freebsd-12.2-man.txt"),
    ),
    (
        "freebsd-tuning7.txt",
        include_str!("../data/inventory/freebsd-tuning7.txt"),
    ),
    (
        "freebsd-15.0-tcp.txt",
        include_str!("../data/inventory/freebsd-15.0-tcp.txt"),
    ),
    (
        "openbsd-7.3-sysctl2.txt",
        include_str!("../data/inventory/openbsd-7.3-sysctl2.txt"),
    ),
];

/// The embedded inventory of `os`; `None` for an OS without one (Windows: its registry values
/// are all in the catalogue). The data is validated by this crate's tests, so a parse failure is
/// a build defect, reported as an error rather than a panic.
pub fn inventory(os: Os) -> Result<Option<&'static Inventory>, CatalogueError> {
    static CELLS: [OnceLock<Result<Inventory, String>>; 3] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let Some(i) = INDEXES.iter().position(|(o, _)| *o == os) else {
        return Ok(None);
    };
    CELLS[i]
        .get_or_init(|| Inventory::from_parts(INDEXES[i].1, &FILES))
        .as_ref()
        .map(Some)
        .map_err(|e| CatalogueError {
            os,
            message: format!("inventory: {e}"),
        })
}

#[cfg(test)]
mod tests;
