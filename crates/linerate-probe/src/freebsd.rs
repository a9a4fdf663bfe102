//! FreeBSD facts read from the text of FreeBSD's own tools: `sysctl` (any subtree, `sysctl -a`
//! included), `vmstat -i`, `pciconf -lvc` and `netstat -Q`. Every parser is a pure function of
//! the text, so a dump taken on a router can be judged on any host, and the parsers are tested
//! on Linux against real FreeBSD output (`testdata/freebsd/`, sources in its `SOURCES.md`).
//!
//! On top of a parsed [`SysctlDump`]: NIC facts from `dev.<driver>.<unit>.*` ([`nic`]), CPU
//! count and SMT from `hw.ncpu`, `kern.smp.*` and `kern.sched.topology_spec` ([`cpu`],
//! [`topology`]), mbuf and socket-buffer limits ([`limits`]) and netisr settings ([`netisr`]).
//!
//! The parsers read no live system; the caller runs the commands (or `sysctlbyname`) and hands
//! the text over. [`snapshot`] builds a [`crate::HostSnapshot`] from their results, the same way
//! for a dump taken elsewhere and for this host; `live` (FreeBSD only) gathers this host's
//! inputs and [`watch`] its per-queue counters for `nic --watch`.

pub mod cpu;
pub mod interrupts;
pub mod limits;
#[cfg(target_os = "freebsd")]
pub mod live;
pub mod netisr;
pub mod nic;
pub mod pciconf;
pub mod snapshot;
pub mod sysctl;
pub mod topology;
pub mod watch;

#[cfg(test)]
mod fuzz;

use std::fmt;

pub use cpu::CpuFacts;
pub use interrupts::{InterruptLine, InterruptSource, QueueRole, VmstatInterrupts};
pub use limits::NetworkLimits;
pub use netisr::{NetisrSettings, NetstatQ};
pub use nic::{NicQueues, NicSysctl, QueueCounters};
pub use pciconf::{PciconfDevice, PcieCapability};
pub use snapshot::{FreebsdHost, Link, Sources};
pub use sysctl::SysctlDump;
pub use topology::{CpuGroup, CpuTopology};

/// The FreeBSD command whose output a parser reads; named in every error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `sysctl` (`sysctl -a`, `sysctl NAME…`).
    Sysctl,
    /// The XML value of `kern.sched.topology_spec`.
    TopologySpec,
    /// `vmstat -i` (or `vmstat -ia`).
    VmstatI,
    /// `pciconf -lv`, `-lvc`, `-lvcb`.
    Pciconf,
    /// `netstat -Q`.
    NetstatQ,
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Command::Sysctl => "sysctl output",
            Command::TopologySpec => "kern.sched.topology_spec",
            Command::VmstatI => "vmstat -i output",
            Command::Pciconf => "pciconf output",
            Command::NetstatQ => "netstat -Q output",
        })
    }
}

/// Why a piece of FreeBSD output could not be read. Lines are 1-based; the text shown is
/// shortened to [`SHOWN`] characters so a binary blob cannot flood the message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// A line has neither of the shapes the command prints there.
    #[error("{command}, line {line}: expected {expected}, found {found:?}")]
    Malformed {
        /// Which output.
        command: Command,
        /// 1-based line number.
        line: usize,
        /// What would have been valid here.
        expected: &'static str,
        /// The offending text (shortened).
        found: String,
    },
    /// A field that must be a number is not one.
    #[error("{command}, line {line}: {field} {value:?} is not a number")]
    BadNumber {
        /// Which output.
        command: Command,
        /// 1-based line number.
        line: usize,
        /// The field (a sysctl name or a column).
        field: String,
        /// The text that failed to parse (shortened).
        value: String,
    },
    /// The same sysctl appears twice: two dumps glued together cannot be told apart.
    #[error("{command}, line {line}: {name} already appeared on line {first_line}")]
    Duplicate {
        /// Which output.
        command: Command,
        /// The second appearance.
        line: usize,
        /// The line of the first appearance.
        first_line: usize,
        /// The repeated name.
        name: String,
    },
    /// The input stops inside something it opened (a cut XML document, a wrapped line).
    #[error("{command}: input ends inside {what} opened on line {line}")]
    Truncated {
        /// Which output.
        command: Command,
        /// Where the unfinished part starts.
        line: usize,
        /// What was left open.
        what: String,
    },
    /// Two facts in the output contradict each other (a CPU count that its list disagrees with).
    #[error("{command}, line {line}: {what}")]
    Inconsistent {
        /// Which output.
        command: Command,
        /// 1-based line number.
        line: usize,
        /// What disagrees with what.
        what: String,
    },
}

impl ParseError {
    /// The 1-based line the error points at.
    pub fn line(&self) -> usize {
        match self {
            ParseError::Malformed { line, .. }
            | ParseError::BadNumber { line, .. }
            | ParseError::Duplicate { line, .. }
            | ParseError::Truncated { line, .. }
            | ParseError::Inconsistent { line, .. } => *line,
        }
    }

    /// This error moved down by `lines` (for text that starts inside a larger file, like a
    /// sysctl value that begins on line 40 of a dump).
    pub fn shifted(self, lines: usize) -> Self {
        match self {
            ParseError::Malformed {
                command,
                line,
                expected,
                found,
            } => ParseError::Malformed {
                command,
                line: line.saturating_add(lines),
                expected,
                found,
            },
            ParseError::BadNumber {
                command,
                line,
                field,
                value,
            } => ParseError::BadNumber {
                command,
                line: line.saturating_add(lines),
                field,
                value,
            },
            ParseError::Duplicate {
                command,
                line,
                first_line,
                name,
            } => ParseError::Duplicate {
                command,
                line: line.saturating_add(lines),
                first_line: first_line.saturating_add(lines),
                name,
            },
            ParseError::Truncated {
                command,
                line,
                what,
            } => ParseError::Truncated {
                command,
                line: line.saturating_add(lines),
                what,
            },
            ParseError::Inconsistent {
                command,
                line,
                what,
            } => ParseError::Inconsistent {
                command,
                line: line.saturating_add(lines),
                what,
            },
        }
    }
}

/// How much of an offending line an error quotes.
pub const SHOWN: usize = 80;

/// `text` cut to [`SHOWN`] characters (on a character boundary), with `…` when cut.
pub(crate) fn shown(text: &str) -> String {
    match text.char_indices().nth(SHOWN) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// Parses a decimal counter, naming the field and line when it is not one.
pub(crate) fn number(
    command: Command,
    line: usize,
    field: &str,
    text: &str,
) -> Result<u64, ParseError> {
    text.parse().map_err(|_| ParseError::BadNumber {
        command,
        line,
        field: field.to_string(),
        value: shown(text),
    })
}

/// Splits a trailing decimal unit number off a device name: `ix0` → (`ix`, 0),
/// `t5nex12` → (`t5nex`, 12). `None` when there is no unit or no name before it.
pub(crate) fn split_unit(name: &str) -> Option<(&str, u32)> {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits == name.len() {
        return None;
    }
    let (driver, unit) = name.split_at(name.len() - digits);
    Some((driver, unit.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_split_off_device_names() {
        assert_eq!(split_unit("ix0"), Some(("ix", 0)));
        assert_eq!(split_unit("t5nex12"), Some(("t5nex", 12)));
        assert_eq!(split_unit("mlx5_core3"), Some(("mlx5_core", 3)));
        assert_eq!(split_unit("ix"), None);
        assert_eq!(split_unit("0"), None);
        assert_eq!(split_unit("ix99999999999"), None);
    }

    #[test]
    fn shown_cuts_long_text_on_a_char_boundary() {
        let long = "é".repeat(200);
        let s = shown(&long);
        assert_eq!(s.chars().count(), SHOWN + 1);
        assert!(s.ends_with('…'));
        assert_eq!(shown("short"), "short");
    }

    #[test]
    fn errors_name_the_command_line_and_text() {
        let e = number(Command::VmstatI, 7, "total", "12x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "vmstat -i output, line 7: total \"12x\" is not a number"
        );
        assert_eq!(e.clone().shifted(10).line(), 17);
    }
}
