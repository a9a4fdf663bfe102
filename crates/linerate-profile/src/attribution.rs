//! Where the samples went beyond single functions: per CPU, per network namespace (the lab's
//! nodes), softirq time as its own bucket with the NAPI poll function it ran (which names the
//! driver: `veth_poll`, `virtnet_poll`, `process_backlog` for loopback), and per subsystem a
//! router's budget is spent on (nftables, conntrack, FIB lookup, forwarding, veth, …).
//!
//! Subsystems are recognised by the kernel's function names and counted inclusively: a sample
//! counts for every subsystem with a frame on its stack, so the shares overlap (a packet's
//! nftables evaluation runs inside its forwarding) and do not add up to 100 %.

use std::collections::{BTreeMap, HashMap};

use crate::breakdown::{Breakdown, Share};

/// A kernel subsystem and the function-name prefixes that belong to it.
struct Category {
    name: &'static str,
    prefixes: &'static [&'static str],
}

/// The subsystems shown, in display order. Function names from the Linux sources.
const CATEGORIES: &[Category] = &[
    Category {
        name: "nftables",
        prefixes: &["nft_", "__nft_", "nf_tables_"],
    },
    Category {
        name: "conntrack",
        prefixes: &[
            "nf_conntrack_",
            "__nf_conntrack_",
            "nf_ct_",
            "__nf_ct_",
            "nf_nat_",
        ],
    },
    Category {
        name: "netfilter hooks",
        prefixes: &["nf_hook_slow"],
    },
    Category {
        name: "FIB lookup",
        prefixes: &[
            "fib_table_lookup",
            "fib_lookup",
            "__fib_lookup",
            "ip_route_input",
            "ip_route_output",
            "fib6_",
        ],
    },
    Category {
        name: "IP forwarding",
        prefixes: &["ip_forward", "ip6_forward"],
    },
    Category {
        name: "veth",
        prefixes: &["veth_"],
    },
    Category {
        name: "TCP",
        prefixes: &["tcp_", "__tcp_"],
    },
    Category {
        name: "UDP",
        prefixes: &["udp_", "__udp", "udpv6_"],
    },
    Category {
        name: "AF_PACKET",
        prefixes: &["packet_", "tpacket_", "__packet_"],
    },
    Category {
        name: "user copy",
        prefixes: &[
            "copy_user",
            "_copy_to_user",
            "_copy_from_user",
            "_copy_to_iter",
            "_copy_from_iter",
            "rep_movs_alternative",
            "skb_copy_datagram_",
        ],
    },
    Category {
        name: "idle",
        prefixes: &[
            "default_idle",
            "cpuidle_",
            "do_idle",
            "native_safe_halt",
            "pv_native_safe_halt",
            "acpi_idle_",
            "intel_idle",
        ],
    },
];

/// Frames that mean the sample was taken while softirqs ran.
const SOFTIRQ_FRAMES: &[&str] = &[
    "__do_softirq",
    "handle_softirqs",
    "net_rx_action",
    "do_softirq",
];

/// Frames after which the NAPI poll function (the driver's) follows, root first.
const NAPI_FRAMES: &[&str] = &["__napi_poll", "napi_poll"];

/// Where one sample ran.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Context {
    /// Process context in a network namespace (its name under /run/netns, `host` for the
    /// initial one, `netns:[INODE]` for one without a name).
    Netns(String),
    /// Softirq, with the NAPI poll function that ran when the stack shows one.
    Softirq(Option<String>),
    /// The idle task, outside softirq.
    Idle,
    /// A task that was gone before its namespace could be read.
    Unknown,
}

impl std::fmt::Display for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Context::Netns(n) => write!(f, "netns {n}"),
            Context::Softirq(Some(poll)) => write!(f, "softirq via {poll}"),
            Context::Softirq(None) => f.write_str("softirq"),
            Context::Idle => f.write_str("idle"),
            Context::Unknown => f.write_str("unknown task"),
        }
    }
}

/// Sample counts per CPU, per context and per subsystem.
#[derive(Debug, Default)]
pub struct Attribution {
    samples: u64,
    by_cpu: BTreeMap<u32, u64>,
    by_context: HashMap<Context, u64>,
    by_category: Vec<u64>,
}

/// What a sample's stack says about softirq: whether it ran in one, and the NAPI poll
/// function (the frame after `__napi_poll`, root first) when it shows.
pub fn softirq(frames_leaf_first: &[String]) -> Option<Option<String>> {
    let root_first: Vec<&str> = frames_leaf_first.iter().rev().map(String::as_str).collect();
    root_first.iter().position(|f| SOFTIRQ_FRAMES.contains(f))?;
    let poll = root_first
        .iter()
        .position(|f| NAPI_FRAMES.contains(f))
        .and_then(|i| root_first.get(i + 1))
        .map(|f| (*f).to_owned());
    Some(poll)
}

impl Attribution {
    /// Counts one sample taken on `cpu`, in `netns` (`None`: the task was gone, or it is the
    /// idle task when `idle`), with `frames` innermost first.
    pub fn add(&mut self, cpu: u32, idle: bool, netns: Option<&str>, frames: &[String]) {
        self.samples += 1;
        *self.by_cpu.entry(cpu).or_insert(0) += 1;
        let context = match (softirq(frames), idle, netns) {
            (Some(poll), _, _) => Context::Softirq(poll),
            (None, true, _) => Context::Idle,
            (None, false, Some(n)) => Context::Netns(n.to_owned()),
            (None, false, None) => Context::Unknown,
        };
        *self.by_context.entry(context).or_insert(0) += 1;
        if self.by_category.is_empty() {
            self.by_category = vec![0; CATEGORIES.len()];
        }
        for (i, c) in CATEGORIES.iter().enumerate() {
            if frames
                .iter()
                .any(|f| c.prefixes.iter().any(|p| f.starts_with(p)))
            {
                self.by_category[i] += 1;
            }
        }
    }

    /// The shares, largest first (CPUs in order); subsystems with no sample are left out.
    pub fn breakdown(&self) -> Breakdown {
        let share = |name: String, n: u64| Share {
            name,
            samples: n,
            percent: if self.samples == 0 {
                0.0
            } else {
                (n as f64 * 10000.0 / self.samples as f64).round() / 100.0
            },
        };
        let by_cpu = self
            .by_cpu
            .iter()
            .map(|(cpu, &n)| share(format!("cpu{cpu}"), n))
            .collect();
        let mut ctx: Vec<(&Context, &u64)> = self.by_context.iter().collect();
        ctx.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let by_context = ctx
            .into_iter()
            .map(|(c, &n)| share(c.to_string(), n))
            .collect();
        let mut by_subsystem: Vec<Share> = CATEGORIES
            .iter()
            .zip(&self.by_category)
            .filter(|(_, n)| **n > 0)
            .map(|(c, &n)| share(c.name.to_owned(), n))
            .collect();
        by_subsystem.sort_by_key(|s| std::cmp::Reverse(s.samples));
        Breakdown {
            by_cpu,
            by_context,
            by_subsystem,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn softirq_names_the_napi_poll_function() {
        let frames = s(&[
            "nft_do_chain",
            "nf_hook_slow",
            "ip_forward",
            "veth_poll",
            "__napi_poll",
            "net_rx_action",
            "handle_softirqs",
            "do_idle",
            "swapper",
        ]);
        assert_eq!(softirq(&frames), Some(Some("veth_poll".to_owned())));
        assert_eq!(softirq(&s(&["net_rx_action", "x"])), Some(None));
        assert_eq!(softirq(&s(&["tcp_sendmsg", "main"])), None);
    }

    #[test]
    fn samples_split_by_cpu_context_and_subsystem() {
        let mut a = Attribution::default();
        let fwd = s(&[
            "nft_do_chain",
            "nf_hook_slow",
            "ip_forward",
            "veth_poll",
            "__napi_poll",
            "net_rx_action",
            "__do_softirq",
            "swapper",
        ]);
        a.add(0, true, None, &fwd);
        a.add(
            1,
            false,
            Some("lr-x-gen"),
            &s(&["packet_sendmsg", "linerate"]),
        );
        a.add(1, true, None, &s(&["default_idle", "do_idle", "swapper"]));
        a.add(1, false, None, &s(&["main", "gone"]));
        let b = a.breakdown();
        assert_eq!(b.by_cpu[0].name, "cpu0");
        assert_eq!((b.by_cpu[1].samples, b.by_cpu[1].percent), (3, 75.0));
        let ctx: Vec<&str> = b.by_context.iter().map(|c| c.name.as_str()).collect();
        assert!(ctx.contains(&"softirq via veth_poll"), "{ctx:?}");
        assert!(ctx.contains(&"netns lr-x-gen"), "{ctx:?}");
        assert!(ctx.contains(&"idle"), "{ctx:?}");
        assert!(ctx.contains(&"unknown task"), "{ctx:?}");
        let sub: HashMap<&str, u64> = b
            .by_subsystem
            .iter()
            .map(|c| (c.name.as_str(), c.samples))
            .collect();
        assert_eq!(sub["nftables"], 1);
        assert_eq!(sub["IP forwarding"], 1);
        assert_eq!(sub["veth"], 1);
        assert_eq!(sub["AF_PACKET"], 1);
        assert_eq!(sub["idle"], 1);
        assert!(!sub.contains_key("conntrack"));
    }
}
