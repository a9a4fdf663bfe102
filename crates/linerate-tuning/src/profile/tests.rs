use super::*;
use crate::finding::Location;
use crate::lint::{Mode, lint};
use crate::parse::{Entry, Format};

fn ctx(os: Os, role: Role, rate: &str, rtt: &str) -> Context {
    let mut c = Context::new(os);
    c.role = Some(role);
    c.rate = rate.parse().ok();
    c.rtt = rtt.parse().ok();
    c.ram = "64GiB".parse().ok();
    c.cores = Some(16);
    c.flows = Some(500_000);
    c.ifaces = vec!["ix0".into()];
    c
}

fn entries(p: &Profile) -> Vec<Entry> {
    p.settings
        .iter()
        .filter(|s| matches!(s.target, Target::Sysctl | Target::Loader | Target::Netsh))
        .enumerate()
        .map(|(i, s)| Entry {
            key: s.key.clone(),
            value: s.value.clone(),
            quoted: false,
            location: Location {
                source: "profile".into(),
                line: Some(i + 1),
            },
            ignore_errors: false,
            inline_comment: None,
            format: if s.target == Target::Loader {
                Format::Loader
            } else {
                Format::Sysctl
            },
        })
        .collect()
}

#[test]
fn every_generated_profile_lints_clean_for_its_own_inputs() {
    let roles = [
        Role::Host,
        Role::Router,
        Role::Firewall,
        Role::Web,
        Role::Vpn,
    ];
    let paths = [
        ("100M", "5ms"),
        ("1G", "20ms"),
        ("10G", "80ms"),
        ("40G", "150ms"),
        ("100G", "300ms"),
    ];
    let old_kernel = Context::new(Os::Linux).version.clone();
    for os in Os::ALL {
        for role in roles {
            for (rate, rtt) in paths {
                let mut c = ctx(os, role, rate, rtt);
                if os == Os::Linux && rate == "10G" {
                    // An old kernel: no default_qdisc (3.12), older buffer defaults.
                    c.version = "3.10".parse().unwrap_or(old_kernel.clone());
                }
                let p = generate(&c).unwrap_or_else(|e| panic!("{e}"));
                let found = lint(&entries(&p), &c, Mode::Files).unwrap_or_else(|e| panic!("{e}"));
                let bad: Vec<_> = found
                    .iter()
                    .filter(|f| f.severity >= Severity::Warning)
                    .collect();
                assert!(bad.is_empty(), "{os} {role} {rate} {rtt}: {bad:#?}");
                let redundant: Vec<_> = found.iter().filter(|f| f.rule == "redundant").collect();
                assert!(
                    redundant.is_empty(),
                    "{os} {role} {rate} {rtt}: {redundant:#?}"
                );
            }
        }
    }
}

#[test]
fn values_follow_the_formulas() {
    let p = generate(&ctx(Os::Linux, Role::Host, "10G", "80ms")).unwrap_or_else(|e| panic!("{e}"));
    let get = |k: &str| {
        p.settings
            .iter()
            .find(|s| s.key == k)
            .map(|s| s.value.clone())
    };
    // BDP = 10e9 × 0.08 / 8 = 100 MB; 2 × BDP = 200 MB → 256 MiB.
    assert_eq!(p.bdp.bytes(), 100_000_000);
    assert_eq!(
        get("net.ipv4.tcp_rmem").as_deref(),
        Some("4096 131072 268435456")
    );
    assert_eq!(
        get("net.ipv4.tcp_wmem").as_deref(),
        Some("4096 16384 268435456")
    );
    assert_eq!(get("net.core.rmem_max").as_deref(), Some("268435456"));
    assert_eq!(get("net.ipv4.tcp_mtu_probing").as_deref(), Some("1"));
    // 1 ms of 10G at MTU 1500 is 813 frames → 1024.
    assert_eq!(get("net.core.netdev_max_backlog").as_deref(), Some("1024"));
    assert!(get("net.ipv4.ip_forward").is_none());
    assert!(p.settings.iter().all(|s| !s.formula.is_empty()));

    // A LAN path needs nothing beyond the 6.18 defaults for buffers.
    let p = generate(&ctx(Os::Linux, Role::Host, "1G", "1ms")).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        p.settings.iter().all(|s| s.key != "net.ipv4.tcp_rmem"),
        "{:#?}",
        p.settings
    );
    assert!(
        p.notes.iter().any(|n| n.starts_with("net.ipv4.tcp_rmem")),
        "{:#?}",
        p.notes
    );

    // The same path on an old kernel (6.15: rmem max 6 MiB) does need it.
    let mut c = ctx(Os::Linux, Role::Host, "1G", "60ms");
    c.version = "6.15".parse().unwrap_or_else(|e| panic!("{e}"));
    let p = generate(&c).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        p.settings
            .iter()
            .find(|s| s.key == "net.ipv4.tcp_rmem")
            .map(|s| s.value.as_str()),
        Some("4096 131072 16777216")
    );

    // Router: forwarding, no TCP buffers. Firewall: conntrack from flows.
    let p =
        generate(&ctx(Os::Linux, Role::Firewall, "10G", "80ms")).unwrap_or_else(|e| panic!("{e}"));
    let keys: Vec<&str> = p.settings.iter().map(|s| s.key.as_str()).collect();
    assert!(
        keys.contains(&"net.ipv4.ip_forward") && !keys.contains(&"net.ipv4.tcp_rmem"),
        "{keys:?}"
    );
    assert_eq!(
        p.settings
            .iter()
            .find(|s| s.key == "net.netfilter.nf_conntrack_max")
            .map(|s| s.value.as_str()),
        Some("1048576")
    );

    // Windows: 100 MB BDP exceeds the 16 MiB normal autotuning reach.
    let p =
        generate(&ctx(Os::Windows, Role::Host, "10G", "80ms")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        p.settings
            .iter()
            .find(|s| s.key == "netsh.autotuninglevel")
            .map(|s| s.value.as_str()),
        Some("experimental")
    );
    let p =
        generate(&ctx(Os::Windows, Role::Host, "100M", "10ms")).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        p.settings
            .iter()
            .all(|s| s.key != "netsh.autotuninglevel" && s.key != "netsh.timestamps"),
        "{:#?}",
        p.settings
    );
}

#[test]
fn missing_inputs_are_errors() {
    let mut c = Context::new(Os::Linux);
    assert!(matches!(
        generate(&c),
        Err(ProfileError::MissingInput("--rate"))
    ));
    c.rate = "10G".parse().ok();
    assert!(matches!(
        generate(&c),
        Err(ProfileError::MissingInput("--rtt"))
    ));
    c.rtt = "1ms".parse().ok();
    c.rate = "0".parse().ok();
    assert!(matches!(generate(&c), Err(ProfileError::ZeroRate)));
}

#[test]
fn interface_names_are_checked_and_vlans_named_as_rc_conf_wants() {
    let mut c = ctx(Os::Freebsd, Role::Router, "10G", "1ms");
    c.ifaces = vec!["ix0".into(), "ix1.100".into()];
    let p = generate(&c).unwrap_or_else(|e| panic!("{e}"));
    let keys: Vec<&str> = p.settings.iter().map(|s| s.key.as_str()).collect();
    assert!(keys.contains(&"ifconfig_ix0"), "{keys:?}");
    assert!(keys.contains(&"ifconfig_ix1_100"), "{keys:?}");
    for bad in [
        "ix0\"; reboot; \"",
        "",
        "0ix",
        "a very long interface name",
        "ix0\n",
    ] {
        c.ifaces = vec![bad.into()];
        assert!(
            matches!(generate(&c), Err(ProfileError::BadInterface(_))),
            "{bad:?}"
        );
    }
}
