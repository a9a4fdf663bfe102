//! Using a lab that is up: run a command in a node, set sysctls, read emulator counters.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::Command;

use crate::LabError;
use crate::emulator::{self, EmulatorStats};
use crate::firewall::{self, Firewall};
use crate::name::LabName;
use crate::netns::Netns;
use crate::spec::NodeSysctl;
use crate::state::{LabState, NodeFirewall, StateDir};
use crate::sysctl::{self, SysctlWrite};

/// Loads lab `name` or says it does not exist.
pub fn load(dir: &StateDir, name: &LabName) -> Result<LabState, LabError> {
    dir.load(name.as_str())?
        .ok_or_else(|| LabError::NoSuchLab(name.to_string()))
}

/// The namespace of `node` in `state`.
pub fn node_netns<'a>(state: &'a LabState, node: &str) -> Result<&'a str, LabError> {
    state
        .nodes
        .iter()
        .find(|n| n.name == node)
        .map(|n| n.netns.as_str())
        .ok_or_else(|| LabError::NoSuchNode {
            lab: state.name.clone(),
            node: node.to_owned(),
            nodes: state
                .nodes
                .iter()
                .map(|n| n.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// Replaces this process with `argv` running inside `node`. Returns only on failure. The
/// calling process must be single-threaded (the namespace switch applies to this thread).
pub fn exec(state: &LabState, node: &str, argv: &[OsString]) -> LabError {
    let ns = match node_netns(state, node).and_then(Netns::open) {
        Ok(ns) => ns,
        Err(e) => return e,
    };
    let Some((prog, args)) = argv.split_first() else {
        return LabError::Io {
            what: "lab exec".into(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "no command given after --",
            ),
        };
    };
    if let Err(e) = ns.enter() {
        return e;
    }
    // Best effort, as `ip netns exec`: without it /sys/class/net shows the host's interfaces.
    let _ = linerate_sys::netns::remount_sys();
    let e = Command::new(prog).args(args).exec();
    LabError::Io {
        what: format!("run {} in node {node}", prog.to_string_lossy()),
        source: e,
    }
}

/// Writes sysctls in `node` and records them in the state file.
pub fn set(
    dir: &StateDir,
    name: &LabName,
    node: &str,
    assignments: &[NodeSysctl],
) -> Result<Vec<SysctlWrite>, LabError> {
    if !linerate_sys::is_root() {
        return Err(LabError::NotRoot);
    }
    let mut state = load(dir, name)?;
    let ns = Netns::open(node_netns(&state, node)?)?;
    let mut writes = Vec::new();
    for a in assignments {
        sysctl::check_scope(&a.key)?;
    }
    for a in assignments {
        writes.push(sysctl::apply_in_node(&ns, node, &a.key, &a.value)?);
        state.sysctls.push(NodeSysctl {
            node: node.to_owned(),
            key: a.key.clone(),
            value: a.value.clone(),
        });
    }
    dir.save(&state)?;
    Ok(writes)
}

/// Whether process `pid` is alive (not a zombie).
pub fn process_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with(|c| c != 'Z' && c != 'X'))
        })
        .unwrap_or(false)
}

/// Live counters of each userspace-emulated link: (link id, pid alive, counters).
pub fn emulator_stats(state: &LabState) -> Vec<(String, bool, Option<EmulatorStats>)> {
    state
        .links
        .iter()
        .filter_map(|l| {
            let pid = l.emulator_pid?;
            Some((
                l.id.clone(),
                process_alive(pid),
                l.emulator_stats.as_deref().and_then(emulator::read_stats),
            ))
        })
        .collect()
}

/// The node a firewall goes on by default: the DUT, or the receiver in a pair.
pub fn default_firewall_node(state: &LabState) -> &'static str {
    if state.nodes.iter().any(|n| n.name == "dut") {
        "dut"
    } else {
        "recv"
    }
}

/// Applies a firewall variant in `node` (default: [`default_firewall_node`]) and records it.
pub fn set_firewall(
    dir: &StateDir,
    name: &LabName,
    node: Option<&str>,
    fw: &Firewall,
) -> Result<NodeFirewall, LabError> {
    if !linerate_sys::is_root() {
        return Err(LabError::NotRoot);
    }
    let mut state = load(dir, name)?;
    let node = node.unwrap_or(default_firewall_node(&state)).to_owned();
    let ns = Netns::open(node_netns(&state, &node)?)?;
    let rules = firewall::apply(&ns, &node, fw)?;
    let applied = NodeFirewall {
        node: node.clone(),
        variant: fw.to_string(),
        rules,
    };
    state.firewalls.retain(|f| f.node != node);
    state.firewalls.push(applied.clone());
    dir.save(&state)?;
    Ok(applied)
}
