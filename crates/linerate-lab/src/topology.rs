//! The two test beds and their fixed addressing plan.
//!
//! `pair`: `gen` 198.18.0.1/24 — link l0 — `recv` 198.18.0.2/24.
//! `router` (the BSD Router Project bench lab): `gen` 198.18.0.1/24 — l0 — 198.18.0.254 `dut`
//! 198.19.0.254 — l1 — 198.19.0.1/24 `recv`, with static routes on both hosts, forwarding on in
//! the DUT and static neighbour entries everywhere (no ARP on the measured path).

use std::fmt;
use std::net::Ipv4Addr;
use std::str::FromStr;

use linerate_sys::netlink::Mac;

/// Which test bed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Topology {
    /// `gen` — `recv`.
    Pair,
    /// `gen` — `dut` — `recv`.
    Router,
}

impl Topology {
    /// All topology names, for messages.
    pub const NAMES: &'static str = "pair, router";

    /// The nodes, in order along the path.
    pub fn nodes(self) -> &'static [&'static str] {
        match self {
            Topology::Pair => &["gen", "recv"],
            Topology::Router => &["gen", "dut", "recv"],
        }
    }

    /// Number of links (`l0`, `l1`, …).
    pub fn link_count(self) -> usize {
        self.nodes().len() - 1
    }

    /// The full plan: links with their ends, and routes.
    pub fn plan(self) -> Plan {
        match self {
            Topology::Pair => Plan {
                links: vec![LinkPlan {
                    id: "l0",
                    a: EndPlan {
                        node: "gen",
                        suffix: "g0",
                        addr: Ipv4Addr::new(198, 18, 0, 1),
                        prefix: 24,
                    },
                    b: EndPlan {
                        node: "recv",
                        suffix: "r0",
                        addr: Ipv4Addr::new(198, 18, 0, 2),
                        prefix: 24,
                    },
                }],
                routes: vec![],
                forwarding: vec![],
            },
            Topology::Router => Plan {
                links: vec![
                    LinkPlan {
                        id: "l0",
                        a: EndPlan {
                            node: "gen",
                            suffix: "g0",
                            addr: Ipv4Addr::new(198, 18, 0, 1),
                            prefix: 24,
                        },
                        b: EndPlan {
                            node: "dut",
                            suffix: "d0",
                            addr: Ipv4Addr::new(198, 18, 0, 254),
                            prefix: 24,
                        },
                    },
                    LinkPlan {
                        id: "l1",
                        a: EndPlan {
                            node: "dut",
                            suffix: "d1",
                            addr: Ipv4Addr::new(198, 19, 0, 254),
                            prefix: 24,
                        },
                        b: EndPlan {
                            node: "recv",
                            suffix: "r1",
                            addr: Ipv4Addr::new(198, 19, 0, 1),
                            prefix: 24,
                        },
                    },
                ],
                routes: vec![
                    RoutePlan {
                        node: "gen",
                        dst: Ipv4Addr::new(198, 19, 0, 0),
                        prefix: 24,
                        via: Ipv4Addr::new(198, 18, 0, 254),
                        suffix: "g0",
                    },
                    RoutePlan {
                        node: "recv",
                        dst: Ipv4Addr::new(198, 18, 0, 0),
                        prefix: 24,
                        via: Ipv4Addr::new(198, 19, 0, 254),
                        suffix: "r1",
                    },
                ],
                forwarding: vec!["dut"],
            },
        }
    }
}

impl FromStr for Topology {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "pair" => Ok(Topology::Pair),
            "router" => Ok(Topology::Router),
            other => Err(format!(
                "unknown topology {other:?}; expected one of: {}",
                Topology::NAMES
            )),
        }
    }
}

impl fmt::Display for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Topology::Pair => "pair",
            Topology::Router => "router",
        })
    }
}

/// A topology's links, routes and forwarding nodes.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Links in path order.
    pub links: Vec<LinkPlan>,
    /// Static routes.
    pub routes: Vec<RoutePlan>,
    /// Nodes that forward IPv4.
    pub forwarding: Vec<&'static str>,
}

/// One link: end `a` is toward `gen`, end `b` toward `recv` ("fwd" is a → b).
#[derive(Debug, Clone)]
pub struct LinkPlan {
    /// `l0`, `l1`.
    pub id: &'static str,
    /// The end toward the generator.
    pub a: EndPlan,
    /// The end toward the receiver.
    pub b: EndPlan,
}

/// One node's end of a link.
#[derive(Debug, Clone)]
pub struct EndPlan {
    /// The node.
    pub node: &'static str,
    /// Interface name suffix (`lr-NAME-<suffix>`).
    pub suffix: &'static str,
    /// The node's address on the link.
    pub addr: Ipv4Addr,
    /// Prefix length.
    pub prefix: u8,
}

/// A static route.
#[derive(Debug, Clone)]
pub struct RoutePlan {
    /// Where it is installed.
    pub node: &'static str,
    /// Destination network.
    pub dst: Ipv4Addr,
    /// Its prefix length.
    pub prefix: u8,
    /// Next hop.
    pub via: Ipv4Addr,
    /// Outgoing interface suffix.
    pub suffix: &'static str,
}

/// A locally administered hardware address: `02:6c:72:<lab tag>:<link>:<end>`. End 0 and 1 are
/// the nodes' ends (a, b); 2 and 3 the emulator's.
pub fn mac(tag: u8, link: usize, end: u8) -> Mac {
    [0x02, 0x6c, 0x72, tag, link as u8, end]
}

/// Prints a hardware address.
pub fn mac_string(m: &Mac) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}
