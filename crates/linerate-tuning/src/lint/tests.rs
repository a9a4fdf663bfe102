use super::*;
use crate::os::Os;
use crate::parse::{Format, parse};

fn run(os: Os, version: &str, text: &str) -> Vec<(String, String)> {
    let mut ctx = Context::new(os);
    ctx.version = version.parse().unwrap_or_else(|e| panic!("{e}"));
    let parsed = parse("t.conf", text, Format::Sysctl);
    lint(&parsed.entries, &ctx, Mode::Files)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|f| (f.rule, f.key))
        .collect()
}

fn has(found: &[(String, String)], rule: &str, key: &str) -> bool {
    found.iter().any(|(r, k)| r == rule && k == key)
}

#[test]
fn judgements_depend_on_the_target_version() {
    let text =
        "net.core.rmem_max = 1000000\nnet.ipv4.tcp_adv_win_scale = 2\nnet.core.somaxconn = 1024\n";
    let new = run(Os::Linux, "6.18", text);
    assert!(has(&new, "lowers-default", "net.core.rmem_max"), "{new:?}");
    assert!(has(&new, "noop", "net.ipv4.tcp_adv_win_scale"), "{new:?}");
    assert!(has(&new, "lowers-default", "net.core.somaxconn"), "{new:?}");
    // On 5.3 the rmem_max default was 212992, adv_win_scale still worked, somaxconn was 128.
    let old = run(Os::Linux, "5.3", text);
    assert!(old.is_empty(), "{old:?}");
    let ancient = run(Os::Linux, "3.10", "net.ipv4.tcp_notsent_lowat = 131072\n");
    assert!(
        has(&ancient, "not-in-version", "net.ipv4.tcp_notsent_lowat"),
        "{ancient:?}"
    );
}

#[test]
fn inline_comments_matter_on_linux_only() {
    let linux = run(Os::Linux, "6.18", "net.ipv4.ip_forward = 1 # route\n");
    assert!(has(&linux, "syntax", "net.ipv4.ip_forward"), "{linux:?}");
    let bsd = run(Os::Freebsd, "14.0", "net.inet.ip.forwarding=1 # route\n");
    assert!(!has(&bsd, "syntax", "net.inet.ip.forwarding"), "{bsd:?}");
}

#[test]
fn freebsd_wrong_file_and_power_of_two() {
    let found = run(
        Os::Freebsd,
        "14.0",
        "net.inet.tcp.tcbhashsize=32768\nnet.inet.tcp.syncache.hashsize=1000\n",
    );
    assert!(
        has(&found, "wrong-file", "net.inet.tcp.tcbhashsize"),
        "{found:?}"
    );
    assert!(
        has(&found, "bad-value", "net.inet.tcp.syncache.hashsize"),
        "{found:?}"
    );
}

#[test]
fn rmem_default_above_an_unset_max_is_inconsistent_on_old_kernels() {
    // 2 MB default with no rmem_max line: fine on 6.18 (4 MiB max), wrong on 6.17 (212992).
    let text = "net.core.rmem_default = 2000000\n";
    assert!(!has(
        &run(Os::Linux, "6.18", text),
        "inconsistent",
        "net.core.rmem_default"
    ));
    assert!(has(
        &run(Os::Linux, "6.17", text),
        "inconsistent",
        "net.core.rmem_default"
    ));
}

#[test]
fn keys_of_another_os_are_named_as_such() {
    let mut ctx = Context::new(Os::Linux);
    ctx.version = "6.18".parse().unwrap_or_else(|e| panic!("{e}"));
    let parsed = parse("t.conf", "net.inet.tcp.sendspace=65536\n", Format::Sysctl);
    let f = lint(&parsed.entries, &ctx, Mode::Files).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].rule, "unknown-key");
    assert!(f[0].why.contains("freebsd setting"), "{}", f[0].why);
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    fn line() -> impl Strategy<Value = String> {
        let keys = prop::sample::select(vec![
            "net.ipv4.tcp_rmem",
            "net.ipv4.tcp_mem",
            "net.core.rmem_default",
            "net.core.netdev_max_backlog",
            "kern.ipc.maxsockbuf",
            "net.inet.tcp.cc.algorithm",
            "net.pf.states_hashsize",
            "TcpWindowSize",
            "net.ipv4.conf.eth0.rp_filter",
            "net.ipv4.ip_local_port_range",
            "x",
            "",
            "net.inet.tcp.recvbuf_max",
            "net.inet.tcp.sendspace",
            "net.ipv4.tcp_wmem",
            "net.inet.tcp.msl",
            "net.link.ifqmaxlen",
            "hw.cxgbe.nrxq",
            "net.core.optmem_max",
            "net.inet.tcp.tcbhashsize",
            "net.ipv4.neigh.default.gc_thresh1",
            "net.ipv4.ipfrag_low_thresh",
            "net.ipv4.udp_mem",
        ]);
        let values = prop_oneof![
            any::<i64>().prop_map(|n| n.to_string()),
            (any::<i64>(), any::<i64>(), any::<i64>()).prop_map(|(a, b, c)| format!("{a} {b} {c}")),
            "[ -~]{0,20}",
        ];
        (keys, "[ =:\"#;-]{0,3}", values).prop_map(|(k, sep, v)| format!("{k}{sep}{v}"))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn any_file_any_os(lines in prop::collection::vec(line(), 0..12), rate in any::<u64>(), ram in any::<u64>(), rtt_us in any::<u32>(), mtu in 0u32..70_000) {
            let text = lines.join("\n");
            for format in [Format::Sysctl, Format::Loader, Format::Dump, Format::Reg, Format::Tuned] {
                let parsed = parse("p", &text, format);
                for os in Os::ALL {
                    let mut ctx = Context::new(os);
                    ctx.rate = Some(linerate_units::BitRate::from_bps(rate));
                    ctx.rtt = Some(linerate_units::Duration::from(std::time::Duration::from_micros(u64::from(rtt_us))));
                    ctx.mtu = mtu;
                    ctx.ram = Some(linerate_units::ByteSize::from_bytes(ram));
                    ctx.cores = Some(0);
                    for mode in [Mode::Files, Mode::Live] {
                        let _ = lint(&parsed.entries, &ctx, mode);
                    }
                    let _ = crate::profile::generate(&ctx);
                }
            }
        }

        /// Arbitrary bytes (read as a file would be: lossy UTF-8) in every format: parsing and
        /// linting never panic, and every finding points at a line of the input.
        #[test]
        fn arbitrary_bytes_in_every_format(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
            let text = String::from_utf8_lossy(&bytes);
            let lines = text.lines().count().max(1);
            for format in [Format::Sysctl, Format::Loader, Format::Dump, Format::Reg, Format::Tuned] {
                let parsed = parse("fuzz", &text, format);
                for e in &parsed.entries {
                    let line = e.location.line.unwrap_or(1);
                    prop_assert!(line >= 1 && line <= lines + 1, "line {line} of {lines}");
                }
                for os in Os::ALL {
                    let _ = lint(&parsed.entries, &Context::new(os), Mode::Files);
                }
            }
        }
    }
}

#[test]
fn misordered_buffer_triples_are_fixed_by_ordering_them() {
    let mut ctx = Context::new(Os::Linux);
    ctx.version = "6.18".parse().unwrap_or_else(|e| panic!("{e}"));
    for (line, fix) in [
        ("net.ipv4.tcp_rmem = 100 50 10", "10 50 100"),
        (
            "net.ipv4.tcp_wmem = 4096 200000 131072",
            "4096 131072 200000",
        ),
    ] {
        let parsed = parse("t.conf", line, Format::Sysctl);
        let found = lint(&parsed.entries, &ctx, Mode::Files).unwrap_or_else(|e| panic!("{e}"));
        let f = found
            .iter()
            .find(|f| f.rule == "inconsistent")
            .unwrap_or_else(|| panic!("{line}: {found:?}"));
        assert_eq!(f.fix, Fix::Set(fix.into()), "{line}");
    }
}

fn severities(os: Os, version: &str, text: &str) -> Vec<(String, String, Severity)> {
    let mut ctx = Context::new(os);
    ctx.version = version.parse().unwrap_or_else(|e| panic!("{e}"));
    let parsed = parse("t.conf", text, Format::Sysctl);
    lint(&parsed.entries, &ctx, Mode::Files)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|f| (f.rule, f.key, f.severity))
        .collect()
}

#[test]
fn unknown_keys_need_evidence() {
    let text = "net.ipv4.tcp_nosuch = 1\nkernel.vendor_knob = 1\nnet.ipv4.tcp_rmen = 1 2 3\n-net.ipv4.tcp_nosuch2 = 1\n";
    let f = severities(Os::Linux, "6.18", text);
    let sev = |key: &str| {
        f.iter()
            .find(|(_, k, _)| k == key)
            .map(|(r, _, s)| (r.as_str(), *s))
    };
    // net.ipv4 is listed completely for 6.18.
    assert_eq!(
        sev("net.ipv4.tcp_nosuch"),
        Some(("unknown-key", Severity::Error))
    );
    // Nothing says kernel.* is complete: outside linerate's knowledge.
    assert_eq!(
        sev("kernel.vendor_knob"),
        Some(("unchecked", Severity::Info))
    );
    assert_eq!(
        sev("net.ipv4.tcp_rmen"),
        Some(("unknown-key", Severity::Error))
    );
    // sysctl ignores failures on `-key` lines.
    assert_eq!(
        sev("net.ipv4.tcp_nosuch2"),
        Some(("unknown-key", Severity::Warning))
    );
    // 6.18's completeness says nothing about 6.1.
    let old = severities(Os::Linux, "6.1", "net.ipv4.tcp_nosuch = 1\n");
    assert_eq!(old[0].0, "unchecked");
    assert_eq!(old[0].2, Severity::Info);
}

#[test]
fn duplicates_depend_on_whether_the_values_agree() {
    let f = severities(
        Os::Linux,
        "6.18",
        "vm.swappiness = 10\nvm.swappiness = 10\nnet.ipv4.tcp_fin_timeout = 30\nnet.ipv4.tcp_fin_timeout = 15\n",
    );
    let dup: Vec<(&str, Severity)> = f
        .iter()
        .filter(|(r, _, _)| r == "duplicate")
        .map(|(_, k, s)| (k.as_str(), *s))
        .collect();
    assert_eq!(
        dup,
        [
            ("vm.swappiness", Severity::Info),
            ("net.ipv4.tcp_fin_timeout", Severity::Warning)
        ]
    );
}

#[test]
fn module_keys_say_so_unless_loader_conf_loads_the_module() {
    let mut ctx = Context::new(Os::Freebsd);
    ctx.version = "14.0".parse().unwrap_or_else(|e| panic!("{e}"));
    let sysctl = parse("s.conf", "net.inet.ip.fw.dyn_max=65536\n", Format::Sysctl);
    let alone = lint(&sysctl.entries, &ctx, Mode::Files).unwrap_or_else(|e| panic!("{e}"));
    assert!(alone.iter().any(|f| f.rule == "needs-module"), "{alone:?}");
    let loader = parse("l.conf", "ipfw_load=\"YES\"\n", Format::Loader);
    let both: Vec<_> = loader
        .entries
        .iter()
        .chain(&sysctl.entries)
        .cloned()
        .collect();
    let f = lint(&both, &ctx, Mode::Files).unwrap_or_else(|e| panic!("{e}"));
    assert!(!f.iter().any(|f| f.rule == "needs-module"), "{f:?}");
}
