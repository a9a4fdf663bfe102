//! A router lab's side of "why not line rate": [`DutLimit`], the `dut_limit` object of an RFC
//! 2544 result whose limit is the DUT's (not the generator's): whether the router's CPU held
//! it, and where that CPU went — the subsystems of a short profile taken at the limiting
//! load (nftables, conntrack, forwarding/routing, softirq/veth, other), with shares. Built by
//! `linerate_explain::dut`; absent means not judged (a generator-bound result), and a profile
//! that could not be taken says why, never a guess.

use serde::{Deserialize, Serialize};

/// What held the DUT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DutVerdict {
    /// The router's CPU: its forwarding work took about a core or more at the limiting load.
    Cpu,
    /// The DUT dropped with CPU to spare (a rule, a queue, a shaper: not its CPU).
    NotCpu,
    /// The DUT's CPU could not be profiled here (the reason is in `note`).
    NotProfiled,
}

impl DutVerdict {
    /// The verdict as printed.
    pub fn label(self) -> &'static str {
        match self {
            DutVerdict::Cpu => "DUT (router) CPU",
            DutVerdict::NotCpu => "DUT drops, CPU to spare",
            DutVerdict::NotProfiled => "DUT (CPU not profiled)",
        }
    }
}

/// One subsystem's share of the sampled busy CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DutShare {
    /// `nftables`, `conntrack`, `forwarding/routing`, `softirq/veth`, `generator/counter
    /// (AF_PACKET)` or `other`.
    pub name: String,
    /// Samples counted for it (each busy sample counts once, for the innermost frame that
    /// names a subsystem).
    pub samples: u64,
    /// Percent of the busy samples.
    pub percent: f64,
}

/// The DUT's limit at one frame size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DutLimit {
    /// What held it.
    pub verdict: DutVerdict,
    /// The load the profile was taken at, frames/s (just above NDR).
    pub load_pps: f64,
    /// How long the generator sent while the profile sampled, seconds (0 when not profiled):
    /// the time cores are counted over.
    pub seconds: f64,
    /// Samples taken on all CPUs.
    pub samples: u64,
    /// Samples in the router's work (nftables, conntrack, forwarding/routing, softirq/veth),
    /// in cores (1.0 = one CPU busy with it the whole time).
    pub router_cores: f64,
    /// All busy samples (the lab's and the host's other work), in cores over the profile's
    /// whole time.
    pub busy_cores: f64,
    /// CPUs sampled.
    pub cpus: usize,
    /// Where the busy CPU went, largest first.
    pub subsystems: Vec<DutShare>,
    /// Why it was not profiled, or what to read the figures with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl DutLimit {
    /// A limit whose CPU could not be profiled, with the reason.
    pub fn not_profiled(load_pps: f64, reason: String) -> DutLimit {
        DutLimit {
            verdict: DutVerdict::NotProfiled,
            load_pps,
            seconds: 0.0,
            samples: 0,
            router_cores: 0.0,
            busy_cores: 0.0,
            cpus: 0,
            subsystems: Vec::new(),
            note: Some(reason),
        }
    }

    /// `nftables 41 %, conntrack 12 %, …` (the top `n`).
    pub fn top(&self, n: usize) -> String {
        self.subsystems
            .iter()
            .take(n)
            .map(|s| format!("{} {:.0} %", s.name, s.percent))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
