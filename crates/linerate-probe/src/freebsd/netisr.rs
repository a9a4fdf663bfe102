//! netisr, the queues between a driver and the protocols: settings from `net.isr.*` and the
//! live state from `netstat -Q`.
//!
//! `netstat -Q` (usr.bin/netstat/netisr.c) prints three tables:
//!
//! ```text
//! Configuration:
//! Setting                        Current        Limit
//! Thread count                         1            1
//! Default queue limit                256        10240
//! Dispatch policy                 direct          n/a
//! Threads bound to CPUs         disabled          n/a
//!
//! Protocols:
//! Name   Proto QLimit Policy Dispatch Flags
//! ip         1    256   flow  default   ---
//!
//! Workstreams:
//! WSID CPU   Name     Len WMark   Disp'd  HDisp'd   QDrops   Queued  Handled
//!    0   0   ip         0     0        0        0        0        0        0
//! ```
//!
//! The reader goes by the table headers, not the section titles, so an excerpt without the
//! titles (as people paste it) reads the same. FreeBSD 8's two-row dispatch settings and its
//! protocol table without a `Dispatch` column are read too.

use super::sysctl::SysctlDump;
use super::{Command, ParseError, number, shown};
use crate::Probed;

/// netisr settings from `sysctl net.isr`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NetisrSettings {
    /// `net.isr.dispatch`: `direct`, `hybrid` or `deferred`.
    pub dispatch: Probed<String>,
    /// `net.isr.maxthreads`: workstreams allowed (-1 at boot means one per CPU).
    pub max_threads: Probed<i64>,
    /// `net.isr.numthreads`: workstreams running.
    pub threads: Probed<i64>,
    /// `net.isr.bindthreads`: workstream threads pinned to their CPU.
    pub bind_threads: Probed<bool>,
    /// `net.isr.defaultqlimit`: queue length per protocol and workstream.
    pub default_qlimit: Probed<i64>,
    /// `net.isr.maxqlimit`: the ceiling for any protocol's queue.
    pub max_qlimit: Probed<i64>,
}

fn signed(dump: &SysctlDump, name: &str) -> Result<Probed<i64>, ParseError> {
    Ok(match dump.i64(name)? {
        Some(n) => Probed::Value(n),
        None => Probed::unknown(format!("{name} is not in the input")),
    })
}

impl NetisrSettings {
    /// Reads `net.isr.*` from a dump.
    pub fn from_sysctl(dump: &SysctlDump) -> Result<Self, ParseError> {
        Ok(NetisrSettings {
            dispatch: match dump.get("net.isr.dispatch") {
                Some(d) => Probed::Value(d.trim().to_string()),
                None => Probed::unknown("net.isr.dispatch is not in the input"),
            },
            max_threads: signed(dump, "net.isr.maxthreads")?,
            threads: signed(dump, "net.isr.numthreads")?,
            bind_threads: signed(dump, "net.isr.bindthreads")?.map(|n| n != 0),
            default_qlimit: signed(dump, "net.isr.defaultqlimit")?,
            max_qlimit: signed(dump, "net.isr.maxqlimit")?,
        })
    }
}

/// One protocol row of `netstat -Q`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NetisrProtocol {
    /// `ip`, `ip6`, `ether`, `arp`, …
    pub name: String,
    /// netisr protocol number.
    pub proto: u32,
    /// Queue limit.
    pub qlimit: u64,
    /// Work placement: `flow`, `source`, `cpu`.
    pub policy: String,
    /// `direct`, `hybrid`, `deferred`, `default` (absent in FreeBSD 8's layout).
    pub dispatch: Option<String>,
    /// Flags: `C` (m2cpuid, RSS), `D` (drained CPU), `F` (m2flow).
    pub flags: String,
}

/// One (workstream, protocol) row of `netstat -Q`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NetisrWork {
    /// Workstream id.
    pub wsid: u32,
    /// The CPU the workstream runs on.
    pub cpu: u32,
    /// Protocol name.
    pub name: String,
    /// Packets queued now.
    pub len: u64,
    /// Highest queue length seen.
    pub watermark: u64,
    /// Packets dispatched directly.
    pub dispatched: u64,
    /// Packets dispatched directly in hybrid mode.
    pub hybrid_dispatched: u64,
    /// Packets dropped because the queue was full.
    pub qdrops: u64,
    /// Packets queued.
    pub queued: u64,
    /// Packets handled by the workstream.
    pub handled: u64,
}

/// Parsed `netstat -Q`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NetstatQ {
    /// Thread count (current).
    pub threads: Option<u64>,
    /// Thread count limit.
    pub max_threads: Option<u64>,
    /// Default queue limit (current).
    pub default_qlimit: Option<u64>,
    /// Queue limit ceiling.
    pub max_qlimit: Option<u64>,
    /// Dispatch policy.
    pub dispatch: Option<String>,
    /// Threads bound to CPUs.
    pub bound: Option<bool>,
    /// Protocol table.
    pub protocols: Vec<NetisrProtocol>,
    /// Workstream table.
    pub workstreams: Vec<NetisrWork>,
}

#[derive(Clone, Copy, PartialEq)]
enum Table {
    None,
    Protocols,
    Workstreams,
}

/// The labels of the settings rows (the last two are FreeBSD 8's).
const SETTINGS: &[&str] = &[
    "Thread count",
    "Default queue limit",
    "Dispatch policy",
    "Threads bound to CPUs",
    "Direct dispatch",
    "Forced direct dispatch",
];

impl NetstatQ {
    /// Parses `netstat -Q` output.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let mut out = NetstatQ::default();
        let mut table = Table::None;
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let trimmed = line.trim();
            let words: Vec<&str> = trimmed.split_whitespace().collect();
            match words.first().copied() {
                None => continue,
                Some("Configuration:" | "Protocols:" | "Workstreams:") if words.len() == 1 => {
                    continue;
                }
                Some("Setting") => {
                    table = Table::None;
                    continue;
                }
                Some("Name") if words.get(1) == Some(&"Proto") => {
                    table = Table::Protocols;
                    continue;
                }
                Some("WSID") => {
                    table = Table::Workstreams;
                    continue;
                }
                _ => {}
            }
            if let Some(label) = SETTINGS.iter().find(|l| trimmed.starts_with(**l)) {
                out.setting(label, &trimmed[label.len()..], n)?;
                table = Table::None;
                continue;
            }
            match table {
                Table::Protocols => out.protocols.push(protocol(&words, n, line)?),
                Table::Workstreams => out.workstreams.push(work(&words, n, line)?),
                Table::None => {
                    return Err(ParseError::Malformed {
                        command: Command::NetstatQ,
                        line: n,
                        expected: "a setting, a table header or a table row",
                        found: shown(line),
                    });
                }
            }
        }
        Ok(out)
    }

    fn setting(&mut self, label: &str, rest: &str, n: usize) -> Result<(), ParseError> {
        let values: Vec<&str> = rest.split_whitespace().collect();
        let current = values.first().copied().unwrap_or("");
        let limit = values.get(1).copied();
        if current.is_empty() {
            return Err(ParseError::Malformed {
                command: Command::NetstatQ,
                line: n,
                expected: "a value after the setting's name",
                found: label.to_string(),
            });
        }
        let num = |field: &str, v: &str| number(Command::NetstatQ, n, field, v);
        match label {
            "Thread count" => {
                self.threads = Some(num(label, current)?);
                self.max_threads = limit.map(|l| num("thread limit", l)).transpose()?;
            }
            "Default queue limit" => {
                self.default_qlimit = Some(num(label, current)?);
                self.max_qlimit = limit.map(|l| num("queue limit", l)).transpose()?;
            }
            "Dispatch policy" => self.dispatch = Some(current.to_string()),
            "Direct dispatch" => {
                if current == "enabled" && self.dispatch.is_none() {
                    self.dispatch = Some("direct".into());
                }
            }
            "Forced direct dispatch" => {}
            _ => {
                self.bound = Some(match current {
                    "enabled" => true,
                    "disabled" => false,
                    other => {
                        return Err(ParseError::Malformed {
                            command: Command::NetstatQ,
                            line: n,
                            expected: "enabled or disabled",
                            found: shown(other),
                        });
                    }
                });
            }
        }
        Ok(())
    }

    /// Packets dropped on full netisr queues, over all rows.
    pub fn total_qdrops(&self) -> u64 {
        self.workstreams.iter().map(|w| w.qdrops).sum()
    }

    /// Distinct workstreams (one per CPU when `maxthreads` allows it).
    pub fn workstream_count(&self) -> usize {
        let mut ids: Vec<u32> = self.workstreams.iter().map(|w| w.wsid).collect();
        ids.sort_unstable();
        ids.dedup();
        ids.len()
    }
}

fn protocol(words: &[&str], n: usize, line: &str) -> Result<NetisrProtocol, ParseError> {
    let (dispatch, flags) = match words.len() {
        6 => (Some(words[4].to_string()), words[5]),
        5 => (None, words[4]),
        _ => {
            return Err(ParseError::Malformed {
                command: Command::NetstatQ,
                line: n,
                expected: "Name Proto QLimit Policy Dispatch Flags",
                found: shown(line),
            });
        }
    };
    let proto = number(Command::NetstatQ, n, "Proto", words[1])?;
    Ok(NetisrProtocol {
        name: words[0].to_string(),
        proto: u32::try_from(proto).map_err(|_| ParseError::BadNumber {
            command: Command::NetstatQ,
            line: n,
            field: "Proto".into(),
            value: words[1].to_string(),
        })?,
        qlimit: number(Command::NetstatQ, n, "QLimit", words[2])?,
        policy: words[3].to_string(),
        dispatch,
        flags: flags.to_string(),
    })
}

fn work(words: &[&str], n: usize, line: &str) -> Result<NetisrWork, ParseError> {
    if words.len() != 10 {
        return Err(ParseError::Malformed {
            command: Command::NetstatQ,
            line: n,
            expected: "WSID CPU Name Len WMark Disp'd HDisp'd QDrops Queued Handled",
            found: shown(line),
        });
    }
    let num = |i: usize, field: &str| number(Command::NetstatQ, n, field, words[i]);
    let small = |i: usize, field: &str| {
        num(i, field).and_then(|v| {
            u32::try_from(v).map_err(|_| ParseError::BadNumber {
                command: Command::NetstatQ,
                line: n,
                field: field.to_string(),
                value: words[i].to_string(),
            })
        })
    };
    Ok(NetisrWork {
        wsid: small(0, "WSID")?,
        cpu: small(1, "CPU")?,
        name: words[2].to_string(),
        len: num(3, "Len")?,
        watermark: num(4, "WMark")?,
        dispatched: num(5, "Disp'd")?,
        hybrid_dispatched: num(6, "HDisp'd")?,
        qdrops: num(7, "QDrops")?,
        queued: num(8, "Queued")?,
        handled: num(9, "Handled")?,
    })
}

#[cfg(test)]
mod tests;
