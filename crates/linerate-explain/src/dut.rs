//! When a router lab's DUT is the limit, where its CPU goes: the samples of a short profile
//! taken (on every CPU) at the limiting load, each busy sample counted once for the innermost
//! frame of its stack that names a subsystem of the router's path — nftables, conntrack,
//! forwarding/routing, softirq/veth — the lab's generator and counter (AF_PACKET, when the
//! stack has no frame of the router's path) apart, else `other`; idle samples are left out. The verdict is the router's CPU when that work took about a
//! core or more ([`CPU_BOUND_CORES`]); a DUT that drops with less has CPU to spare, and its
//! limit is a rule, a queue or a shaper.

use linerate_iperf3::dut_limit::{DutLimit, DutShare, DutVerdict};

/// Router work of at least this many cores at the limiting load: the DUT's CPU is the limit
/// (forwarding in softirq spreads little across CPUs on a veth lab; a core busy with it is
/// the ceiling of one flow). Not a whole core: on one host that core also runs the
/// generator's send calls (the forwarding runs in the sender's softirq), and a 1–2 s profile
/// at ~200 Hz counts to ± 10 %. Measured on a 2000-rule DUT profiled a quarter above NDR (as
/// `lab rfc2544` does): 0.84 to 0.93 cores in six runs, nftables 85 % of the busy samples (at
/// NDR itself 0.61 to 1.08); a DUT dropping by rule or shaper shows a tenth of a core or so.
pub const CPU_BOUND_CORES: f64 = 0.7;

/// Busy samples of at least this share of every CPU: the CPUs were saturated, and the DUT's
/// work (when it is the largest of the lab's) got less than a core only because other work
/// took the rest — still its CPU.
pub const SATURATED: f64 = 0.9;

/// The subsystems, innermost match wins; `idle` is counted apart. Function-name prefixes
/// from the Linux sources.
const SUBSYSTEMS: &[(&str, &[&str])] = &[
    ("nftables", &["nft_", "__nft_", "nf_tables_"]),
    (
        "conntrack",
        &[
            "nf_conntrack_",
            "__nf_conntrack_",
            "nf_ct_",
            "__nf_ct_",
            "nf_nat_",
            "ipv4_conntrack_",
        ],
    ),
    (
        "forwarding/routing",
        &[
            "ip_forward",
            "ip6_forward",
            "fib_",
            "__fib_",
            "fib6_",
            "ip_route_",
            "ip_rcv",
            "ip_sublist_rcv",
            "ip_list_rcv",
            "ip_output",
            "ip_finish_output",
            "__ip_finish_output",
            "neigh_",
            "nf_hook_slow",
        ],
    ),
    (
        "softirq/veth",
        &[
            "veth_",
            "__netif_receive_skb",
            "netif_receive_skb",
            "__napi_poll",
            "net_rx_action",
            "process_backlog",
            "__do_softirq",
            "handle_softirqs",
            "dev_queue_xmit",
            "__dev_queue_xmit",
            "dev_hard_start_xmit",
            "napi_gro_",
            "gro_",
        ],
    ),
];

/// Frames of the idle loop (a sample whose innermost named frame is one is not busy).
const IDLE: &[&str] = &[
    "default_idle",
    "cpuidle_",
    "do_idle",
    "native_safe_halt",
    "pv_native_safe_halt",
    "acpi_idle_",
    "intel_idle",
    "poll_idle",
];

/// Frames of the lab's own generator and frame counter (AF_PACKET): a sample with one and
/// no frame of the router's path is theirs, not the DUT's.
const PACKET: &[&str] = &["packet_", "tpacket_", "__packet_", "xsk_", "__xsk_", "xp_"];

/// Frames only the router's path has (a sample with one is the DUT's work).
const ROUTER: &[&str] = &[
    "ip_rcv",
    "ip_forward",
    "ip6_forward",
    "nf_",
    "nft_",
    "__nft_",
    "__nf_",
];

/// What one sample was doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// The router's work, in [`SUBSYSTEMS`]`[i]`.
    Router(usize),
    /// The lab's generator or counter.
    Packet,
    /// Idle.
    Idle,
    /// Anything else.
    Other,
}

/// Classifies a sample: the router's work by the innermost frame naming a subsystem (when
/// the stack has a frame of the router's path, or none of the generator's), the generator's
/// and counter's AF_PACKET work, idle, or other.
fn classify(frames_leaf_first: &[&str]) -> Class {
    let has = |set: &[&str]| {
        frames_leaf_first
            .iter()
            .any(|f| set.iter().any(|p| f.starts_with(p)))
    };
    let router = has(ROUTER);
    if !router && has(PACKET) {
        return Class::Packet;
    }
    for f in frames_leaf_first {
        if let Some(i) = SUBSYSTEMS
            .iter()
            .position(|(_, p)| p.iter().any(|p| f.starts_with(p)))
        {
            return Class::Router(i);
        }
        if IDLE.iter().any(|p| f.starts_with(p)) {
            return Class::Idle;
        }
    }
    Class::Other
}

/// The DUT's limit from a profile taken at `load_pps` for `profile_seconds` (of which the
/// generator sent for `seconds`, the time the router's cores are counted over) at
/// `frequency_hz` on each of `cpus` CPUs: `stacks` are folded lines (`root;…;leaf COUNT`, the profile crate's format).
pub fn from_folded(
    load_pps: f64,
    seconds: f64,
    profile_seconds: f64,
    frequency_hz: u64,
    cpus: usize,
    stacks: &[String],
) -> DutLimit {
    let mut counts = vec![0u64; SUBSYSTEMS.len()];
    let (mut other, mut packet, mut samples) = (0u64, 0u64, 0u64);
    for line in stacks {
        let Some((stack, n)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(n) = n.parse::<u64>() else {
            continue;
        };
        samples += n;
        let frames: Vec<&str> = stack.rsplit(';').collect();
        match classify(&frames) {
            Class::Router(i) => counts[i] += n,
            Class::Packet => packet += n,
            Class::Idle => {}
            Class::Other => other += n,
        }
    }
    let router: u64 = counts.iter().sum();
    let busy = router + packet + other;
    let share = |name: &str, n: u64| DutShare {
        name: name.to_owned(),
        samples: n,
        percent: if busy == 0 {
            0.0
        } else {
            (n as f64 * 10_000.0 / busy as f64).round() / 100.0
        },
    };
    let mut subsystems: Vec<DutShare> = SUBSYSTEMS
        .iter()
        .zip(&counts)
        .map(|((name, _), &n)| share(name, n))
        .chain([
            share("generator/counter (AF_PACKET)", packet),
            share("other", other),
        ])
        .filter(|s| s.samples > 0)
        .collect();
    subsystems.sort_by_key(|s| std::cmp::Reverse(s.samples));
    let cores = |n: u64, secs: f64| {
        let one_core = secs * frequency_hz as f64;
        if one_core > 0.0 {
            (n as f64 / one_core * 100.0).round() / 100.0
        } else {
            0.0
        }
    };
    let router_cores = cores(router, seconds);
    let busy_cores = cores(busy, profile_seconds.max(seconds));
    let saturated = busy_cores >= SATURATED * cpus as f64 && router >= packet;
    let (verdict, note) = if samples == 0 {
        (
            DutVerdict::NotProfiled,
            Some("the profile took no sample".to_owned()),
        )
    } else if router_cores >= CPU_BOUND_CORES {
        (DutVerdict::Cpu, None)
    } else if saturated {
        (
            DutVerdict::Cpu,
            Some(format!(
                "every CPU was busy ({busy_cores:.2} of {cpus} cores), the router's work \
                 {router_cores:.2} of them and other work the rest: the DUT had less than a \
                 core"
            )),
        )
    } else {
        (
            DutVerdict::NotCpu,
            Some(format!(
                "the router's work took {router_cores:.2} cores at the limiting load with CPU \
                 to spare ({busy_cores:.2} of {cpus} cores busy): its drops come from a rule, a \
                 queue or a shaper, not from its CPU"
            )),
        )
    };
    DutLimit {
        verdict,
        load_pps,
        seconds,
        samples,
        router_cores,
        busy_cores,
        cpus,
        subsystems,
        note,
    }
}

/// A limit judged where the search called the result generator-bound (the generator fell
/// short far below its own ceiling into a sink): when the router's CPU is the verdict, the
/// note says the shortfall was the DUT's forwarding on the generator's CPU.
pub fn generator_short(mut l: DutLimit) -> DutLimit {
    if l.verdict == DutVerdict::Cpu {
        let why = "the generator fell short far below its own ceiling because the DUT's \
                   forwarding ran on the same CPUs (a veth peer forwards in the sender's \
                   softirq): the DUT's CPU is the limit, not the generator";
        l.note = Some(match l.note.take() {
            Some(n) => format!("{why}; {n}"),
            None => why.to_owned(),
        });
    }
    l
}

/// The limit as one line for people: `limit: DUT (router) CPU at 180000 fps: 0.95 cores of
/// router work in 2.0 s; nftables 61 %, conntrack 14 %, …`.
pub fn line(l: &DutLimit) -> String {
    let mut text = format!("limit: {} at {:.0} fps", l.verdict.label(), l.load_pps);
    if l.samples > 0 {
        text.push_str(&format!(
            ": {:.2} cores of router work in {:.1} s; CPU (busy samples, every CPU): {}",
            l.router_cores,
            l.seconds,
            l.top(5)
        ));
    }
    if let Some(note) = &l.note {
        text.push_str(&format!(" ({note})"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(v: &[(&str, u64)]) -> Vec<String> {
        v.iter().map(|(s, n)| format!("{s} {n}")).collect()
    }

    const SOFTIRQ: &str = "swapper;do_idle;handle_softirqs;net_rx_action;__napi_poll;veth_poll";

    #[test]
    fn a_busy_router_is_its_cpu_and_nftables_leads() {
        // 2 s at 100 Hz: one core is 200 samples.
        let stacks = lines(&[
            (
                &format!("{SOFTIRQ};ip_rcv;ip_forward;nf_hook_slow;nft_do_chain;memcmp"),
                120,
            ),
            (
                &format!("{SOFTIRQ};ip_rcv;nf_hook_slow;nf_conntrack_in;__nf_conntrack_find_get"),
                30,
            ),
            (&format!("{SOFTIRQ};ip_rcv;ip_forward;fib_table_lookup"), 10),
            (&format!("{SOFTIRQ};veth_xdp_rcv"), 20),
            (
                "linerate;packet_sendmsg;packet_snd;dev_queue_xmit;veth_xmit",
                20,
            ),
            ("swapper;do_idle;default_idle", 200),
        ]);
        let l = from_folded(150_000.0, 2.0, 2.0, 100, 2, &stacks);
        assert_eq!(l.verdict, DutVerdict::Cpu, "{l:?}");
        assert_eq!(l.samples, 400);
        assert!((l.router_cores - 0.9).abs() < 1e-9, "{l:?}");
        assert_eq!(l.subsystems[0].name, "nftables");
        assert!((l.subsystems[0].percent - 60.0).abs() < 1e-9);
        let names: Vec<&str> = l.subsystems.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "nftables",
                "conntrack",
                "softirq/veth",
                "generator/counter (AF_PACKET)",
                "forwarding/routing"
            ]
        );
        assert_eq!(l.top(2), "nftables 60 %, conntrack 15 %");
        assert_eq!(l.note, None);
        assert!(
            line(&l).starts_with(
                "limit: DUT (router) CPU at 150000 fps: 0.90 cores of router work in 2.0 s; \
                 CPU (busy samples, every CPU): nftables 60 %, conntrack 15 %"
            ),
            "{}",
            line(&l)
        );
    }

    #[test]
    fn saturated_cpus_with_the_router_the_lab_s_largest_work_are_its_cpu() {
        // Two CPUs, 400 samples all busy: half a core of forwarding, the rest another
        // program's (a compiler on the shared host).
        let stacks = lines(&[
            (
                &format!("{SOFTIRQ};ip_rcv;ip_forward;nf_hook_slow;nft_do_chain"),
                100,
            ),
            ("rustc;llvm_pass", 300),
        ]);
        let l = from_folded(20_000.0, 2.0, 2.0, 100, 2, &stacks);
        assert_eq!(l.verdict, DutVerdict::Cpu, "{l:?}");
        assert!(
            l.note
                .as_deref()
                .is_some_and(|n| n.contains("2.00 of 2 cores"))
        );
        assert_eq!(l.subsystems[0].name, "other");
        assert_eq!(l.subsystems[1].name, "nftables");
        let short = generator_short(l);
        assert!(short.note.as_deref().is_some_and(
            |n| n.starts_with("the generator fell short") && n.contains("2.00 of 2 cores")
        ));
    }

    #[test]
    fn a_dut_dropping_with_cpu_to_spare_is_not_its_cpu() {
        let stacks = lines(&[
            (&format!("{SOFTIRQ};ip_rcv;ip_forward;nft_do_chain"), 20),
            ("swapper;do_idle;default_idle", 380),
        ]);
        let l = from_folded(50_000.0, 2.0, 2.0, 100, 2, &stacks);
        assert_eq!(l.verdict, DutVerdict::NotCpu);
        assert!(l.note.as_deref().is_some_and(|n| n.contains("0.10 cores")));
        // No sample at all is not a verdict.
        let none = from_folded(50_000.0, 2.0, 2.0, 100, 2, &[]);
        assert_eq!(none.verdict, DutVerdict::NotProfiled);
    }
}
