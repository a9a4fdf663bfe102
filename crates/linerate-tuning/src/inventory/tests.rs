use super::*;

fn inv(os: Os) -> &'static Inventory {
    match inventory(os) {
        Ok(Some(i)) => i,
        Ok(None) => panic!("no inventory for {os}"),
        Err(e) => panic!("{e}"),
    }
}

fn v(s: &str) -> Version {
    s.parse().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_inventory_loads_and_every_list_has_keys() {
    for os in [Os::Linux, Os::Freebsd, Os::Openbsd] {
        let i = inv(os);
        assert_eq!(i.os, os);
        for (n, list) in i.lists().iter().enumerate() {
            let count = i.exact.values().filter(|f| f.list == n).count()
                + i.patterns.iter().filter(|(_, f)| f.list == n).count()
                + i.subtrees.iter().filter(|(_, f)| f.list == n).count();
            assert!(count > 20, "{}: only {count} keys", list.file);
        }
    }
    assert!(matches!(inventory(Os::Windows), Ok(None)));
}

#[test]
fn the_reference_dumps_are_entirely_known() {
    let linux = inv(Os::Linux);
    for file in [
        include_str!("../../testdata/linux-6.18-sysctl-host.txt"),
        include_str!("../../testdata/linux-6.18-sysctl-netns.txt"),
    ] {
        for line in file.lines() {
            let Some((key, _)) = line.split_once(" = ") else {
                continue;
            };
            assert!(linux.find(key).is_some(), "{key} is not in the inventory");
        }
    }
}

#[test]
fn the_keys_the_issue_saw_called_unknown_are_known() {
    let linux = inv(Os::Linux);
    for key in [
        "net.ipv4.conf.eth1.rp_filter",
        "net.ipv4.conf.enp3s0/100.arp_ignore",
        "net.ipv6.conf.all.accept_ra",
        "net.ipv6.conf.default.use_tempaddr",
        "net.ipv4.icmp_echo_ignore_all",
        "net.ipv4.icmp_ignore_bogus_error_responses",
        "net.ipv4.igmp_max_memberships",
        "net.core.bpf_jit_harden",
        "net.core.bpf_jit_kallsyms",
        "net.ipv4.route.flush",
        "net.ipv4.vs.conntrack",
        "kernel.kptr_restrict",
        "vm.dirty_ratio",
    ] {
        assert!(linux.find(key).is_some(), "{key}");
    }
    let bsd = inv(Os::Freebsd);
    for key in [
        "net.inet.tcp.sendbuf_inc",
        "net.inet.tcp.hostcache.expire",
        "net.inet.tcp.rack.misc.dnd",
        "net.inet6.ip6.redirect",
        "hw.cxgbe.toecaps_allowed",
        "kern.ipc.shm_use_phys",
        "net.fibs",
    ] {
        assert!(bsd.find(key).is_some(), "{key}");
    }
    let obsd = inv(Os::Openbsd);
    for key in [
        "ddb.panic",
        "net.inet.ip.forwarding",
        "net.inet6.icmp6.errppslimit",
        "kern.bufcachepercent",
        "vm.swapencrypt.enable",
        "machdep.allowaperture",
    ] {
        assert!(obsd.find(key).is_some(), "{key}");
    }
}

#[test]
fn systemd_globs_match_what_they_would_set() {
    let linux = inv(Os::Linux);
    assert!(linux.find("net.ipv4.conf.*.rp_filter").is_some());
    assert!(linux.find("net.ipv4.tcp_*mem").is_some());
    assert!(linux.find("net.ipv4.conf.*.no_such_leaf").is_none());
}

#[test]
fn completeness_holds_only_for_the_version_and_shape_it_was_measured_on() {
    let linux = inv(Os::Linux);
    assert!(
        linux
            .complete_for("net.ipv4.tcp_nosuch", &v("6.18"))
            .is_some()
    );
    assert!(
        linux
            .complete_for("net.ipv4.tcp_nosuch", &v("6.18.44"))
            .is_some()
    );
    assert!(
        linux
            .complete_for("net.ipv4.tcp_nosuch", &v("5.15"))
            .is_none()
    );
    assert!(
        linux
            .complete_for("net.ipv4.vs.nosuch", &v("6.18"))
            .is_none()
    );
    assert!(
        linux
            .complete_for("net.netfilter.nosuch", &v("6.18"))
            .is_none()
    );
    assert!(linux.complete_for("kernel.nosuch", &v("6.18")).is_none());
}

#[test]
fn removals_apply_from_their_version() {
    let bsd = inv(Os::Freebsd);
    assert!(bsd.removed("hw.igb.rxd", &v("14.0")).is_some());
    assert!(bsd.removed("hw.igb.rxd", &v("11.4")).is_none());
    assert!(bsd.removed("hw.em.rxd", &v("14.0")).is_none());
}

#[test]
fn near_misses_are_typos_under_the_same_parent() {
    let linux = inv(Os::Linux);
    assert_eq!(
        linux.near_miss("net.ipv4.tcp_fin_timout", &[]).as_deref(),
        Some("net.ipv4.tcp_fin_timeout")
    );
    assert_eq!(
        linux
            .near_miss("net.ipv4.conf.eth0.rp_fitler", &[])
            .as_deref(),
        Some("net.ipv4.conf.eth0.rp_filter")
    );
    assert_eq!(linux.near_miss("net.ipv4.tcp_nosuch_key", &[]), None);
    let bsd = inv(Os::Freebsd);
    assert_eq!(
        bsd.near_miss("cxgbe.toecaps_allowed", &[]).as_deref(),
        Some("hw.cxgbe.toecaps_allowed")
    );
}

#[test]
fn modules_and_nodes() {
    let linux = inv(Os::Linux);
    assert_eq!(
        linux.module("net.netfilter.nf_conntrack_max"),
        Some("nf_conntrack")
    );
    assert_eq!(linux.module("net.ipv4.tcp_rmem"), None);
    assert!(linux.has_node("net.ipv4.anything"));
    assert!(!linux.has_node("net.inet.ip.forwarding"));
    let bsd = inv(Os::Freebsd);
    assert_eq!(bsd.module("net.inet.ip.fw.dyn_max"), Some("ipfw"));
    assert!(bsd.has_node("net.inet.ip.forwarding"));
    assert!(!bsd.has_node("net.ipv4.ip_forward"));
}
