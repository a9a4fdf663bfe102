//! `sysctl` output (`sysctl -a`, `sysctl dev.ix.0`, `sysctl hw.ncpu kern.smp`) as a map from
//! name to value.
//!
//! `sysctl` prints `name: value`, one per line, except that some values span lines: tables
//! (`net.inet.tcp.functions_available`), XML (`kern.sched.topology_spec`), the kernel config
//! (`kern.conftxt`). A line starts a new entry only if it begins, unindented, with a MIB name
//! under one of the top-level nodes FreeBSD has, followed by `:`; every other line continues
//! the previous value. `name=value` lines (sysctl.conf, `sysctl -e`) are refused rather than
//! glued onto a value.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use super::{Command, ParseError, number, shown};

/// The top-level MIB nodes of FreeBSD 12–15 (`sysctl -aN | cut -d. -f1 | sort -u`). A line
/// counts as a new entry only under one of these, so a dmesg line (`ix0: <Intel…>`) or an XML
/// line inside a value is never mistaken for one.
const ROOTS: &[&str] = &[
    "compat", "debug", "dev", "hw", "kern", "kstat", "machdep", "net", "p1003_1b", "security",
    "sysctl", "user", "vfs", "vm",
];

/// One sysctl's value and the line it started on.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SysctlValue {
    /// The value as printed; multi-line values keep their newlines, lose trailing blank lines.
    pub value: String,
    /// 1-based line of `name:` in the parsed text (0 when built in memory).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub line: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Parsed `sysctl` output: names in sorted order (so a subtree is a contiguous range).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct SysctlDump {
    entries: BTreeMap<String, SysctlValue>,
}

/// If `line` starts a `name: value` entry, its name and the rest of the line after `:`.
fn entry_start(line: &str) -> Option<(&str, &str)> {
    let colon = line.find(':')?;
    let name = &line[..colon];
    valid_name(name).then(|| (name, &line[colon + 1..]))
}

/// A plausible FreeBSD MIB name: dotted, under a known root, no spaces. `%` appears in the
/// per-device nodes (`dev.ix.0.%desc`), `-` in a few driver nodes, and the jail parameters
/// that are nodes end in a dot (`security.jail.param.allow.mount.: 0`).
fn valid_name(name: &str) -> bool {
    let root = name.split('.').next().unwrap_or("");
    let body = name.strip_suffix('.').unwrap_or(name);
    ROOTS.contains(&root)
        && body.contains('.')
        && body.split('.').all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '%' | '-'))
        })
}

impl SysctlDump {
    /// Parses `sysctl` output. Empty input is an empty dump (a `grep` that matched nothing).
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let mut entries: BTreeMap<String, SysctlValue> = BTreeMap::new();
        // The entry being read: its name, first line and value lines so far.
        let mut open: Option<(String, usize, Vec<&str>)> = None;
        for (i, raw) in text.lines().enumerate() {
            let line_no = i + 1;
            if let Some((name, rest)) = entry_start(raw) {
                if let Some(done) = open.take() {
                    insert(&mut entries, done)?;
                }
                // `name: value`: the space after the colon is sysctl's, not the value's.
                let first = rest.strip_prefix(' ').unwrap_or(rest);
                open = Some((name.to_string(), line_no, vec![first]));
                continue;
            }
            // sysctl.conf's `name=value` and Linux's `sysctl -a` (`name = value`).
            if raw
                .split_once('=')
                .is_some_and(|(name, _)| valid_name(name.trim_end()))
            {
                return Err(ParseError::Malformed {
                    command: Command::Sysctl,
                    line: line_no,
                    expected: "`name: value` as FreeBSD's sysctl prints it (this is `name=value`)",
                    found: shown(raw),
                });
            }
            match open.as_mut() {
                Some((_, _, lines)) => lines.push(raw),
                None if raw.trim().is_empty() => {}
                None => {
                    return Err(ParseError::Malformed {
                        command: Command::Sysctl,
                        line: line_no,
                        expected: "`name: value` with a FreeBSD MIB name",
                        found: shown(raw),
                    });
                }
            }
        }
        if let Some(done) = open.take() {
            insert(&mut entries, done)?;
        }
        Ok(SysctlDump { entries })
    }

    /// Builds a dump from name/value pairs (values read with `sysctlbyname`, or tests).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        SysctlDump {
            entries: pairs
                .into_iter()
                .map(|(n, v)| {
                    (
                        n.to_string(),
                        SysctlValue {
                            value: v.to_string(),
                            line: 0,
                        },
                    )
                })
                .collect(),
        }
    }

    /// Number of sysctls.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing was parsed.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The value of `name`, if present.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.entries.get(name).map(|v| v.value.as_str())
    }

    /// The line `name` started on in the parsed text (0 if built in memory).
    pub fn line_of(&self, name: &str) -> Option<usize> {
        self.entries.get(name).map(|v| v.line)
    }

    /// `name` as an unsigned number: `Ok(None)` when absent, an error naming the line when the
    /// value is not a number.
    pub fn u64(&self, name: &str) -> Result<Option<u64>, ParseError> {
        match self.entries.get(name) {
            None => Ok(None),
            Some(v) => number(Command::Sysctl, v.line, name, v.value.trim()).map(Some),
        }
    }

    /// `name` as a signed number (tunables such as `net.isr.maxthreads` may be -1).
    pub fn i64(&self, name: &str) -> Result<Option<i64>, ParseError> {
        match self.entries.get(name) {
            None => Ok(None),
            Some(v) => v
                .value
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| ParseError::BadNumber {
                    command: Command::Sysctl,
                    line: v.line,
                    field: name.to_string(),
                    value: shown(&v.value),
                }),
        }
    }

    /// Every entry whose name starts with `prefix`, in name order, with the rest of the name.
    /// `with_prefix("dev.ix.0.")` yields (`fc`, `3`), (`iflib.override_nrxqs`, `0`), ….
    pub fn with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a str, &'a str)> {
        self.entries
            .range::<str, _>((
                std::ops::Bound::Included(prefix),
                std::ops::Bound::Unbounded,
            ))
            .take_while(move |(name, _)| name.starts_with(prefix))
            .map(move |(name, v)| (&name[prefix.len()..], v.value.as_str()))
    }

    /// All names and values in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries
            .iter()
            .map(|(n, v)| (n.as_str(), v.value.as_str()))
    }
}

fn insert(
    entries: &mut BTreeMap<String, SysctlValue>,
    (name, line, lines): (String, usize, Vec<&str>),
) -> Result<(), ParseError> {
    // A value that starts on the next line (`name: ` then a table) has an empty first line.
    let body = if lines.len() > 1 && lines[0].trim().is_empty() {
        &lines[1..]
    } else {
        &lines[..]
    };
    let value = body.join("\n").trim_end().to_string();
    match entries.entry(name) {
        Entry::Occupied(o) => Err(ParseError::Duplicate {
            command: Command::Sysctl,
            line,
            first_line: o.get().line,
            name: o.key().clone(),
        }),
        Entry::Vacant(v) => {
            v.insert(SysctlValue { value, line });
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EPYC_TCP: &str =
        include_str!("../../testdata/freebsd/ocochard-epyc7502p-igb/sysctl-net-inet-tcp.txt");

    #[test]
    fn epyc_tcp_subtree_reads_every_entry_and_the_multi_line_tables() {
        let dump = SysctlDump::parse(EPYC_TCP).unwrap();
        // 1 096 lines, of which 14 belong to the two tables (header, rows, blank line).
        assert_eq!(dump.len(), 1096 - 5 - 9);
        assert_eq!(dump.get("net.inet.tcp.sendbuf_max"), Some("2097152"));
        assert_eq!(
            dump.u64("net.inet.tcp.recvbuf_max").unwrap(),
            Some(2_097_152)
        );
        assert_eq!(dump.get("net.inet.tcp.cc.algorithm"), Some("cubic"));
        assert_eq!(dump.get("net.inet.tcp.functions_default"), Some("freebsd"));
        let stacks = dump.get("net.inet.tcp.functions_available").unwrap();
        assert_eq!(stacks.lines().count(), 4);
        assert!(stacks.starts_with("Stack "));
        assert!(stacks.lines().nth(2).unwrap().starts_with("rack "));
        let cc = dump.get("net.inet.tcp.cc.available").unwrap();
        assert_eq!(cc.lines().count(), 8);
        assert_eq!(cc.lines().last(), Some("newreno           0"));
        assert_eq!(dump.line_of("net.inet.tcp.rfc1323"), Some(1));
        assert_eq!(dump.line_of("net.inet.tcp.cc.algorithm"), Some(1096));
        // Values with spaces survive whole.
        assert_eq!(
            dump.get("net.inet.tcp.states"),
            Some("0 19 0 0 2 0 0 0 0 0 0")
        );
    }

    #[test]
    fn prefix_iteration_is_the_subtree_only() {
        let dump = SysctlDump::parse(EPYC_TCP).unwrap();
        let sack: Vec<_> = dump.with_prefix("net.inet.tcp.sack.").collect();
        assert_eq!(sack.len(), 6);
        assert!(sack.contains(&("enable", "1")));
        assert_eq!(dump.with_prefix("net.inet.udp.").count(), 0);
    }

    #[test]
    fn device_nodes_with_percent_and_spaces_in_values() {
        let text = include_str!("../../testdata/freebsd/intel-mfd-x550t2/sysctl-dev-ix-1.txt");
        let dump = SysctlDump::parse(text).unwrap();
        assert_eq!(dump.get("dev.ix.1.%desc"), Some("Intel(R) X550-T2"));
        assert_eq!(
            dump.get("dev.ix.1.fw_version"),
            Some("Option ROM V1-b1767-p0 eTrack 0x80000a42 PHY FW V523")
        );
        assert_eq!(
            dump.get("dev.ix.1.%location"),
            Some("slot=0 function=1 dbsf=pci0:24:0:1")
        );
    }

    #[test]
    fn trailing_spaces_and_xml_values() {
        let kern = include_str!("../../testdata/freebsd/oshi-2309-truenas/sysctl-kern-hw.txt");
        let dump = SysctlDump::parse(kern).unwrap();
        assert_eq!(dump.u64("hw.ncpu").unwrap(), Some(8));
        let topo = include_str!(
            "../../testdata/freebsd/pytorch-cpuinfo-172/sysctl-kern-sched-topology_spec.txt"
        );
        let dump = SysctlDump::parse(topo).unwrap();
        let xml = dump.get("kern.sched.topology_spec").unwrap();
        assert!(xml.starts_with("<groups>\n <group level=\"1\""));
        assert!(xml.ends_with("</groups>"));
        assert_eq!(dump.len(), 1);
    }

    #[test]
    fn refuses_what_is_not_sysctl_output() {
        let e = SysctlDump::parse("hello world\n").unwrap_err();
        assert_eq!(e.line(), 1);
        let e =
            SysctlDump::parse("kern.ipc.maxsockbuf: 1\nkern.ipc.nmbclusters=100\n").unwrap_err();
        assert!(matches!(e, ParseError::Malformed { line: 2, .. }), "{e}");
        let e = SysctlDump::parse("hw.ncpu: 4\nkern.ostype: FreeBSD\nhw.ncpu: 8\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "sysctl output, line 3: hw.ncpu already appeared on line 1"
        );
        let dump = SysctlDump::parse("hw.ncpu: four\n").unwrap();
        assert_eq!(
            dump.u64("hw.ncpu").unwrap_err().to_string(),
            "sysctl output, line 1: hw.ncpu \"four\" is not a number"
        );
        assert!(SysctlDump::parse("").unwrap().is_empty());
        assert!(SysctlDump::parse("\n\n").unwrap().is_empty());
    }

    #[test]
    fn jail_parameter_nodes_end_in_a_dot() {
        let text = "security.jail.param.allow.mount.: 0\nsecurity.jail.param.host.: 0\n";
        let dump = SysctlDump::parse(text).unwrap();
        assert_eq!(dump.len(), 2);
        assert_eq!(dump.get("security.jail.param.host."), Some("0"));
    }

    #[test]
    fn dmesg_like_lines_inside_values_stay_inside() {
        let text = "kern.msgbuf: boot\nix0: <Intel(R) PRO/10GbE> mem 0xfbc00000\nhw.ncpu: 4\n";
        let dump = SysctlDump::parse(text).unwrap();
        assert_eq!(
            dump.get("kern.msgbuf"),
            Some("boot\nix0: <Intel(R) PRO/10GbE> mem 0xfbc00000")
        );
        assert_eq!(dump.i64("hw.ncpu").unwrap(), Some(4));
    }

    #[test]
    fn serialises_as_a_plain_map() {
        let dump = SysctlDump::from_pairs([("hw.ncpu", "8")]);
        let json = serde_json::to_string(&dump).unwrap();
        assert_eq!(json, r#"{"hw.ncpu":{"value":"8"}}"#);
        let back: SysctlDump = serde_json::from_str(&json).unwrap();
        assert_eq!(back, dump);
    }
}
