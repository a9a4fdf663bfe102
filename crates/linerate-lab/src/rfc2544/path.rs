//! Where a lab's trial frames go: `gen`'s interface and address, the next hop's MAC (the
//! DUT's in a router lab, `recv`'s in a pair), and `recv`'s interface and address, resolved
//! from the lab's state. Resolving a path first takes the lab's measuring lock
//! ([`super::guard`]: one measurement of a lab at a time), then repairs what an interrupted
//! ceiling measurement left ([`super::forwarding`]).

use std::net::Ipv4Addr;
use std::path::PathBuf;

use super::forwarding::{self, Restored};
use super::guard::Measuring;
use crate::state::{LabState, StateDir};
use crate::topology::Topology;
use crate::{LabError, control};

/// Where a trial's frames go: the lab's nodes, interfaces and addresses.
#[derive(Debug, Clone)]
pub struct LabPath {
    /// The `linerate` binary run in the nodes.
    pub binary: PathBuf,
    /// `gen`'s namespace and interface (toward the DUT).
    pub gen_netns: String,
    /// `gen`'s interface.
    pub gen_dev: String,
    /// `gen`'s address.
    pub src_ip: Ipv4Addr,
    /// The DUT's interface toward `gen`, and its MAC (the frames' destination).
    pub dut_netns: String,
    /// The DUT's ingress interface.
    pub dut_dev: String,
    /// Its MAC.
    pub dut_mac: String,
    /// `recv`'s namespace, interface and address (the frames' IP destination).
    pub recv_netns: String,
    /// `recv`'s interface.
    pub recv_dev: String,
    /// `recv`'s address.
    pub dst_ip: Ipv4Addr,
    /// Sending threads of the generator.
    pub threads: u16,
    /// The marker that holds the DUT's `ip_forward` while the ceiling is measured
    /// ([`forwarding`]).
    pub forwarding_marker: PathBuf,
    /// What resolving the path repaired: `ip_forward` put back in the DUT after an
    /// interrupted ceiling measurement (for the caller to say so).
    pub restored: Option<Restored>,
    /// The lab's measuring lock, held while the path is in use (shared by its clones).
    pub lock: std::sync::Arc<Measuring>,
}

fn node<'a>(lab: &'a LabState, name: &str) -> Result<&'a crate::state::NodeState, LabError> {
    lab.nodes
        .iter()
        .find(|n| n.name == name)
        .ok_or_else(|| LabError::NoSuchNode {
            lab: lab.name.clone(),
            node: name.to_owned(),
            nodes: lab
                .nodes
                .iter()
                .map(|n| n.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

fn address(a: &str, what: &str) -> Result<Ipv4Addr, LabError> {
    a.split('/')
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| LabError::Io {
            what: format!("{what}: {a:?} is not an IPv4 address"),
            source: std::io::Error::from(std::io::ErrorKind::InvalidData),
        })
}

impl LabPath {
    /// The path through a `router` lab (gen → dut → recv); other topologies are refused.
    /// Like [`LabPath::through`], it first repairs what an interrupted run left.
    pub fn of(
        dir: &StateDir,
        lab: &LabState,
        binary: PathBuf,
        threads: u16,
    ) -> Result<LabPath, LabError> {
        if lab.topology != Topology::Router {
            return Err(LabError::Io {
                what: format!(
                    "lab {} is a {} lab: RFC 2544 throughput needs a device under test, a router \
                     lab (linerate lab up {} --topology router)",
                    lab.name, lab.topology, lab.name
                ),
                source: std::io::Error::from(std::io::ErrorKind::Unsupported),
            });
        }
        LabPath::through(dir, lab, binary, threads)
    }

    /// The path from `gen` to `recv` of any lab without a tunnel: through the DUT in a router
    /// lab (frames to the DUT's MAC), straight to `recv` in a pair (then the "DUT" fields name
    /// `recv`). `dir` holds the lab's state: a marker there left by a ceiling measurement that
    /// was killed has its `ip_forward` written back to the DUT (and is removed) before the path
    /// is used for traffic; [`LabPath::restored`] says so. Another process measuring the lab
    /// holds its lock ([`super::guard`]): then the path is refused, naming it.
    pub fn through(
        dir: &StateDir,
        lab: &LabState,
        binary: PathBuf,
        threads: u16,
    ) -> Result<LabPath, LabError> {
        if lab.tunnel.is_some() {
            return Err(LabError::Io {
                what: format!(
                    "lab {} has a tunnel: the frame generator sends plain Ethernet frames to the \
                     next hop, not into the tunnel (use generator = \"socket\" for a tunnel's \
                     packet rate)",
                    lab.name
                ),
                source: std::io::Error::from(std::io::ErrorKind::Unsupported),
            });
        }
        let g = node(lab, "gen")?;
        let r = node(lab, "recv")?;
        let hop = if lab.topology == Topology::Router {
            node(lab, "dut")?
        } else {
            r
        };
        let gi = g.interfaces.first();
        let ri = r.interfaces.first();
        let hi = gi.and_then(|gi| hop.interfaces.iter().find(|i| i.link == gi.link));
        let (Some(gi), Some(hi), Some(ri)) = (gi, hi, ri) else {
            return Err(LabError::Io {
                what: format!("lab {}: its state names no gen–recv path", lab.name),
                source: std::io::Error::from(std::io::ErrorKind::InvalidData),
            });
        };
        // Before any repair: a repair under another measurement would undo its ceiling's
        // forwarding-off.
        let lock = std::sync::Arc::new(Measuring::take(dir, &lab.name)?);
        let mut path = LabPath {
            binary,
            gen_netns: control::node_netns(lab, "gen")?.to_owned(),
            gen_dev: gi.name.clone(),
            src_ip: address(&gi.address, "gen's address")?,
            dut_netns: control::node_netns(lab, &hop.name)?.to_owned(),
            dut_dev: hi.name.clone(),
            dut_mac: hi.mac.clone(),
            recv_netns: control::node_netns(lab, "recv")?.to_owned(),
            recv_dev: ri.name.clone(),
            dst_ip: address(&ri.address, "recv's address")?,
            threads,
            forwarding_marker: forwarding::marker_path(dir, &lab.name),
            restored: None,
            lock,
        };
        path.restored = forwarding::restore_interrupted(&path.forwarding_marker, &path.dut_netns)?;
        Ok(path)
    }
}
