//! Hardware rules: judgements of a host snapshot (read by `linerate-probe`) for a role, in the
//! same [`Finding`] model as the settings rules, each with the command that fixes it on Linux.
//! Beside them, what the snapshot means: whether each PCI link carries its ports
//! ([`bus_checks`]) and what bounds each interface's packet rate ([`packet_rate_limits`]).
//!
//! Why here and not in the probe: the probe reads, the rules judge. This crate depends on
//! the probe's snapshot types rather than the other way round, because those types are filled
//! by the probe's readers and belong with them; the rules only look at them.
//!
//! ```no_run
//! use linerate_probe::{HostSnapshot, ProbeRoots};
//! use linerate_tuning::Role;
//! use linerate_tuning::hardware::{HardwareContext, hardware_findings};
//! let snapshot = HostSnapshot::capture(&ProbeRoots::live());
//! let ctx = HardwareContext::for_snapshot(&snapshot, Role::Router);
//! for finding in hardware_findings(&snapshot, &ctx) {
//!     println!("{}: {}", finding.rule, finding.why);
//! }
//! ```

mod bus;
mod cpu;
mod limits;
mod nic;

use linerate_probe::{HostSnapshot, Interface};

pub use bus::{BusCheck, bus_checks, smallest_link_for};
pub use limits::{Limit, packet_rate_limits};

use crate::finding::{Finding, Fix, Location, Severity};
use crate::role::Role;

// The documents the hardware rules' facts come from.
const SRC_BUS: &str = "PCI Express base specification (transfer rates, 8b/10b and 128b/130b \
                       encoding); linerate-calc bus model";
const SRC_BSDRP: &str = "BSD Router Project, \"Tuning FreeBSD for routing and firewalling\" \
                         (Cochard-Labbé): HT off +24% pps; disable LRO and TSO on a router";
const SRC_SCALING: &str = "Linux Documentation/networking/scaling.rst (RSS, RPS, IRQ affinity)";
const SRC_SYSCTL: &str = "Linux Documentation/admin-guide/sysctl/net.rst (netdev_max_backlog, \
                          netdev_budget, netdev_budget_usecs)";
const SRC_ETHTOOL: &str = "ethtool(8)";
const SRC_CPUFREQ: &str = "Linux Documentation/admin-guide/pm/cpufreq.rst";

/// What the judge needs besides the snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HardwareContext {
    /// The host's role.
    pub role: Role,
    /// Whether the host forwards packets (router, firewall, or forwarding switched on).
    pub forwarding: bool,
}

impl HardwareContext {
    /// The context for `role`, forwarding when the role forwards or the snapshot shows IP
    /// forwarding switched on.
    pub fn for_snapshot(snapshot: &HostSnapshot, role: Role) -> Self {
        HardwareContext {
            role,
            forwarding: role.forwards() || snapshot.forwarding.any(),
        }
    }
}

/// Judges the hardware in `snapshot` for `ctx`.
pub fn hardware_findings(snapshot: &HostSnapshot, ctx: &HardwareContext) -> Vec<Finding> {
    let mut out = Vec::new();
    bus::findings(snapshot, &mut out);
    cpu::smt(snapshot, ctx, &mut out);
    for iface in data_interfaces(snapshot) {
        if ctx.forwarding {
            nic::offloads(iface, ctx, &mut out);
        }
        nic::queues(snapshot, iface, &mut out);
        nic::irq_spread(snapshot, iface, &mut out);
        nic::rings(iface, &mut out);
    }
    cpu::irqs_on_one_cpu(snapshot, &mut out);
    cpu::governor(snapshot, &mut out);
    cpu::softnet(snapshot, &mut out);
    if ctx.forwarding {
        nic::mtu(snapshot, &mut out);
    }
    out
}

/// Interfaces that carry traffic worth judging: up, not loopback. A FreeBSD `sysctl -a` dump
/// has no link state: its NICs are judged all the same (a router's dump is taken to judge
/// them).
fn data_interfaces(snapshot: &HostSnapshot) -> impl Iterator<Item = &Interface> {
    let stateless = snapshot.is_freebsd();
    snapshot.interfaces().iter().filter(move |i| {
        i.kind != "loopback" && (i.is_up() || (stateless && i.operstate.value().is_none()))
    })
}

// A flat constructor: every field of a finding, in the order a reader checks them.
#[expect(clippy::too_many_arguments)]
fn finding(
    rule: &str,
    severity: Severity,
    source_loc: &str,
    key: &str,
    value: Option<String>,
    why: String,
    fix: Fix,
    source: &str,
) -> Finding {
    Finding {
        rule: rule.to_owned(),
        severity,
        location: Some(Location {
            source: source_loc.to_owned(),
            line: None,
        }),
        key: key.to_owned(),
        value,
        why,
        fix,
        source: source.to_owned(),
    }
}

#[cfg(test)]
mod tests;
