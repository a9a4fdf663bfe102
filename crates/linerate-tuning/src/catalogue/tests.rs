use super::*;
use crate::value::Value;

fn all() -> Vec<&'static OsCatalogue> {
    Os::ALL
        .iter()
        .map(|os| catalogue(*os).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

#[test]
fn every_knob_is_complete_and_consistent() {
    for cat in all() {
        let mut names = std::collections::HashSet::new();
        for k in &cat.knobs {
            let id = format!("{} {}", cat.os, k.name);
            assert!(names.insert(k.name.clone()), "{id}: listed twice");
            assert!(!k.summary.trim().is_empty(), "{id}: no summary");
            assert!(!k.source.trim().is_empty(), "{id}: no source");
            assert!(
                k.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-*".contains(c)),
                "{id}: bad name"
            );
            // Every default (current and historical) must be a valid value of the knob's type.
            let defaults = k.default.iter().chain(k.history.iter().map(|h| &h.default));
            for d in defaults {
                let v = Value::parse(k.ty, d).unwrap_or_else(|e| panic!("{id}: default {d}: {e}"));
                if !k.values.is_empty() {
                    assert!(
                        k.values.contains(&v.to_string()),
                        "{id}: default {d} not in values"
                    );
                }
            }
            if k.ty == ValueType::Enum {
                assert!(!k.values.is_empty(), "{id}: enum without values");
            }
            if k.capacity || k.queue {
                assert!(
                    k.unit != Unit::None,
                    "{id}: a capacity or queue needs a unit"
                );
            }
            for h in &k.harmful {
                let bounds = [h.value.is_some(), h.above.is_some(), h.below.is_some()];
                assert_eq!(
                    bounds.iter().filter(|b| **b).count(),
                    1,
                    "{id}: harmful needs one of value/above/below"
                );
                assert!(
                    !h.why.is_empty() && !h.fix.is_empty(),
                    "{id}: harmful needs why and fix"
                );
                if let Some(v) = &h.value {
                    Value::parse(k.ty, v)
                        .unwrap_or_else(|e| panic!("{id}: harmful value {v}: {e}"));
                }
            }
            // A knob that still exists has a default or says how it is sized (or is a trigger).
            let gone = k.removed.is_some() || k.noop.is_some() || k.renamed_in.is_some();
            if !gone && k.default.is_none() && k.autosized.is_none() {
                let allowed = [
                    "net.ipv4.route.flush",
                    "net.ipv6.conf.*.mtu",
                    "kern.random.harvest.mask",
                    "hw.cxgbe.nrxq",
                    "dev.*.*.fc",
                ];
                assert!(
                    allowed.contains(&k.name.as_str()),
                    "{id}: no default and not autosized"
                );
            }
            if cat.os == Os::Linux {
                assert!(
                    k.removed.is_some() || toml_has_scope(&k.name),
                    "{id}: Linux knob needs a scope"
                );
            }
            if let Some(to) = &k.renamed_to {
                assert!(cat.get(to).is_some(), "{id}: renamed to unknown {to}");
            }
        }
    }
}

/// Linux knobs must state their scope explicitly in the data (the serde default is `host`).
fn toml_has_scope(name: &str) -> bool {
    let text = include_str!("../../data/linux.toml");
    let Some(start) = text.find(&format!("name = \"{name}\"")) else {
        return false;
    };
    let rest = &text[start..];
    let end = rest.find("[[knob]]").unwrap_or(rest.len());
    rest[..end].contains("\nscope = ")
}

#[test]
fn coverage_meets_the_issue() {
    let count = |os| catalogue(os).map(|c| c.knobs.len()).unwrap_or(0);
    assert!(count(Os::Linux) >= 70, "linux {}", count(Os::Linux));
    assert!(count(Os::Freebsd) >= 40);
    assert!(count(Os::Openbsd) >= 15);
    assert!(count(Os::Windows) >= 12);
    let linux_net = catalogue(Os::Linux)
        .map(|c| {
            c.knobs
                .iter()
                .filter(|k| k.name.starts_with("net."))
                .count()
        })
        .unwrap_or(0);
    assert!(linux_net >= 70, "linux net.* {linux_net}");
}

#[test]
fn tuning_facts_knobs_are_all_known() {
    let linux = [
        "net.ipv4.tcp_timestamps",
        "net.ipv4.tcp_sack",
        "net.ipv4.tcp_window_scaling",
        "net.ipv4.tcp_rmem",
        "net.ipv4.tcp_wmem",
        "net.ipv4.tcp_mem",
        "net.core.rmem_max",
        "net.core.wmem_max",
        "net.core.rmem_default",
        "net.core.wmem_default",
        "net.core.optmem_max",
        "net.core.netdev_max_backlog",
        "net.ipv4.tcp_reordering",
        "net.ipv4.tcp_max_reordering",
        "net.ipv4.tcp_no_metrics_save",
        "net.ipv4.tcp_no_ssthresh_metrics_save",
        "net.ipv4.tcp_congestion_control",
        "net.ipv4.tcp_adv_win_scale",
        "net.ipv4.tcp_tw_recycle",
        "net.ipv4.tcp_fack",
        "net.ipv4.tcp_low_latency",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.tcp_slow_start_after_idle",
        "net.ipv4.tcp_notsent_lowat",
        "net.ipv4.tcp_mtu_probing",
        "net.core.default_qdisc",
        "net.core.somaxconn",
        "net.core.netdev_budget",
        "net.core.netdev_budget_usecs",
        "net.core.dev_weight",
        "net.core.busy_poll",
        "net.core.busy_read",
        "net.core.rps_sock_flow_entries",
        "net.core.flow_limit_table_len",
        "net.ipv4.udp_mem",
        "net.ipv4.tcp_max_orphans",
        "net.ipv4.route.gc_timeout",
        "net.ipv4.neigh.default.gc_thresh3",
        "net.ipv4.udp_rmem_min",
        "net.ipv4.udp_wmem_min",
        "net.ipv4.ip_forward",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_no_pmtu_disc",
        "net.ipv4.ip_default_ttl",
        "net.ipv4.ipfrag_high_thresh",
        "net.ipv4.conf.all.rp_filter",
        "net.netfilter.nf_conntrack_max",
        "net.netfilter.nf_conntrack_buckets",
        "net.ipv4.tcp_fastopen",
        "vm.numa_balancing",
    ];
    let freebsd = [
        "kern.ipc.maxsockbuf",
        "net.inet.tcp.sendspace",
        "net.inet.tcp.recvspace",
        "net.inet.tcp.sendbuf_max",
        "net.inet.tcp.recvbuf_max",
        "net.inet.tcp.recvbuf_inc",
        "net.inet.tcp.sendbuf_inc",
        "net.inet.tcp.rfc1323",
        "kern.ipc.nmbclusters",
        "net.inet.ip.fastforwarding",
        "net.inet.ip.rtexpire",
        "net.inet.ip.rtminexpire",
        "net.inet.ip.rtmaxcache",
        "net.inet.tcp.cc.algorithm",
        "net.inet.tcp.mssdflt",
        "net.inet.tcp.rfc3390",
        "net.inet.tcp.initcwnd_segments",
        "net.inet.tcp.slowstart_flightsize",
        "net.inet.tcp.local_slowstart_flightsize",
        "net.inet.tcp.syncookies",
        "net.inet.tcp.msl",
        "net.inet.tcp.path_mtu_discovery",
        "hw.igb.rx_process_limit",
        "hw.igb.num_queues",
        "dev.igb.0.iflib.override_nrxqs",
        "dev.ix.1.iflib.override_ntxqs",
        "machdep.hyperthreading_allowed",
        "kern.random.harvest.mask",
        "net.pf.states_hashsize",
        "net.inet.ip.fw.dyn_max",
        "net.inet.ip.fw.dyn_buckets",
        "hw.em.rx_process_limit",
        "hw.ix.rx_process_limit",
    ];
    let openbsd = [
        "net.inet.tcp.recvspace",
        "net.inet.tcp.sendspace",
        "net.inet.ip.ifq.maxlen",
        "kern.maxclusters",
        "net.inet.tcp.mssdflt",
        "net.inet.tcp.ackonpush",
        "net.inet.tcp.ecn",
        "net.inet.tcp.rfc3390",
    ];
    let windows = [
        "TcpWindowSize",
        "NumTcbTablePartitions",
        "MaxHashTableSize",
        "Tcp1323Opts",
        "ForwardBufferMemory",
        "NumForwardPackets",
        "netsh.autotuninglevel",
        "netsh.timestamps",
    ];
    for (os, keys) in [
        (Os::Linux, &linux[..]),
        (Os::Freebsd, &freebsd[..]),
        (Os::Openbsd, &openbsd[..]),
        (Os::Windows, &windows[..]),
    ] {
        let cat = catalogue(os).unwrap_or_else(|e| panic!("{e}"));
        for key in keys {
            assert!(
                cat.get(key).is_some(),
                "{os}: {key} missing from the catalogue"
            );
        }
    }
}

#[test]
fn defaults_match_the_reference_dumps() {
    // Every fixed default of a Linux knob present in the 6.18 reference dump equals the dump.
    let cat = catalogue(Os::Linux).unwrap_or_else(|e| panic!("{e}"));
    let v618: Version = "6.18".parse().unwrap_or_else(|e| panic!("{e}"));
    let dump = include_str!("../../testdata/linux-6.18-sysctl-host.txt");
    let mut checked = 0;
    for line in dump.lines() {
        let Some((key, value)) = line.split_once(" = ") else {
            continue;
        };
        let Some(knob) = cat.get(key) else { continue };
        if knob.name.contains('*') || key == "net.ipv4.tcp_congestion_control" {
            continue; // per-interface keys vary; the build's default CC is bbr here
        }
        if let Some(d) = knob.default_on(&v618) {
            assert_eq!(
                crate::value::normalize(d),
                crate::value::normalize(value),
                "{key}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 60, "only {checked} defaults checked");
}

#[test]
fn netns_scope_matches_the_namespace_dump() {
    // A key absent from a fresh namespace's dump must not claim to be per-namespace.
    let cat = catalogue(Os::Linux).unwrap_or_else(|e| panic!("{e}"));
    let host = include_str!("../../testdata/linux-6.18-sysctl-host.txt");
    let netns = include_str!("../../testdata/linux-6.18-sysctl-netns.txt");
    let in_ns: std::collections::HashSet<&str> = netns
        .lines()
        .filter_map(|l| l.split_once(" = ").map(|p| p.0))
        .collect();
    for line in host.lines() {
        let Some((key, _)) = line.split_once(" = ") else {
            continue;
        };
        let Some(knob) = cat.get(key) else { continue };
        if knob.name.contains('*') {
            continue;
        }
        let present = in_ns.contains(key);
        match knob.scope {
            Scope::Netns | Scope::Readonly => assert!(
                present,
                "{key}: scope {:?} but absent from a namespace",
                knob.scope
            ),
            Scope::Host => assert!(
                !present || key.starts_with("net.ipv4.neigh.default"),
                "{key}: host-only but present in a namespace"
            ),
        }
    }
}

#[test]
fn lookup_and_suggestions() {
    let cat = catalogue(Os::Linux).unwrap_or_else(|e| panic!("{e}"));
    assert!(cat.get("net.ipv4.conf.eth0.rp_filter").is_some());
    assert!(cat.get("net.ipv4.conf.eth0.nosuch").is_none());
    assert_eq!(
        cat.did_you_mean("net.ipv4.tcp_rmen"),
        Some("net.ipv4.tcp_rmem")
    );
    assert_eq!(cat.did_you_mean("net.core.wmem_maximum"), None);
    let v = |s: &str| s.parse::<Version>().unwrap_or_else(|e| panic!("{e}"));
    let rmem_max = cat
        .get("net.core.rmem_max")
        .unwrap_or_else(|| panic!("rmem_max"));
    assert_eq!(rmem_max.default_on(&v("6.17")), Some("212992"));
    assert_eq!(rmem_max.default_on(&v("6.18")), Some("4194304"));
    let rmem = cat
        .get("net.ipv4.tcp_rmem")
        .unwrap_or_else(|| panic!("tcp_rmem"));
    assert_eq!(rmem.default_on(&v("4.19")), Some("4096 87380 6291456"));
    assert_eq!(rmem.default_on(&v("6.15")), Some("4096 131072 6291456"));
    assert!(
        !cat.get("net.ipv4.tcp_tw_recycle")
            .is_some_and(|k| k.exists_on(&v("5.10")))
    );
}
