use super::*;

fn keys(p: &Parsed) -> Vec<(&str, &str, usize)> {
    p.entries
        .iter()
        .map(|e| {
            (
                e.key.as_str(),
                e.value.as_str(),
                e.location.line.unwrap_or(0),
            )
        })
        .collect()
}

#[test]
fn sysctl_conf_grammar() {
    let text = "# c\n; c\n\n  net.ipv4.tcp_sack=1\n-net.ipv4.tcp_x = 2\nnet/ipv4/tcp_rmem =\t4096\t131072   6291456\nnet.ipv4.ip_forward = 1 # on\nno equals here\n= 3\nnet.core.somaxconn =\n";
    let p = parse("f.conf", text, Format::Sysctl);
    assert_eq!(
        keys(&p),
        vec![
            ("net.ipv4.tcp_sack", "1", 4),
            ("net.ipv4.tcp_x", "2", 5),
            ("net.ipv4.tcp_rmem", "4096 131072 6291456", 6),
            ("net.ipv4.ip_forward", "1", 7),
        ]
    );
    assert!(p.entries[1].ignore_errors);
    assert_eq!(p.entries[3].inline_comment.as_deref(), Some("# on"));
    let lines: Vec<Option<usize>> = p
        .syntax
        .iter()
        .map(|f| f.location.as_ref().and_then(|l| l.line))
        .collect();
    assert_eq!(lines, vec![Some(8), Some(9), Some(10)]);
    assert!(
        p.syntax
            .iter()
            .all(|f| f.rule == "syntax" && f.severity == Severity::Error)
    );
}

#[test]
fn loader_conf_grammar() {
    let text = "kern.ipc.nmbclusters=\"32768\"       # comment\nhw.igb.rxd=2048\naccf_http_load=\"YES\"\nbroken=\"open\nx=\"1\" junk\n";
    let p = parse("loader.conf", text, Format::Loader);
    assert_eq!(
        keys(&p),
        vec![
            ("kern.ipc.nmbclusters", "32768", 1),
            ("hw.igb.rxd", "2048", 2),
            ("accf_http_load", "YES", 3)
        ]
    );
    assert_eq!(p.syntax.len(), 2);
}

#[test]
fn dumps_and_registry_exports() {
    let linux = "net.ipv4.tcp_rmem = 4096\t131072\t33554432\nnet.ipv4.ip_local_reserved_ports = \n";
    let p = parse("d", linux, Format::Dump);
    assert_eq!(
        keys(&p),
        vec![("net.ipv4.tcp_rmem", "4096 131072 33554432", 1)]
    );
    let bsd = "kern.ipc.maxsockbuf: 2097152\nnet.inet.tcp.hostcache.list: \nIP address   MTU\nnet.inet.tcp.msl: 30000\n";
    let p = parse("d", bsd, Format::Dump);
    assert_eq!(
        keys(&p),
        vec![
            ("kern.ipc.maxsockbuf", "2097152", 1),
            ("net.inet.tcp.msl", "30000", 4)
        ]
    );
    let reg = "Windows Registry Editor Version 5.00\r\n\r\n[HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Services\\Tcpip\\Parameters]\r\n\"TcpWindowSize\"=dword:00020148\r\n\"Name\"=\"text\"\r\n\"Bad\"=dword:zz\r\n[HKEY_CURRENT_USER\\Other]\r\n\"Ignored\"=dword:1\r\n";
    let p = parse("x.reg", reg, Format::Reg);
    assert_eq!(
        keys(&p),
        vec![("TcpWindowSize", "131400", 4), ("Name", "text", 5)]
    );
    assert_eq!(p.syntax.len(), 1);
}

#[test]
fn format_and_os_detection() {
    assert_eq!(
        detect_format("/boot/loader.conf", "x=\"1\""),
        Format::Loader
    );
    assert_eq!(detect_format("tcp.reg", ""), Format::Reg);
    assert_eq!(
        detect_format("a.txt", "kern.a: 1\nkern.b: 2\n"),
        Format::Dump
    );
    assert_eq!(
        detect_format("sysctl.conf", "# hi\nnet.ipv4.tcp_sack = 1\n"),
        Format::Sysctl
    );
    let os = |text: &str| detect_os(&parse("f", text, Format::Sysctl).entries, Format::Sysctl);
    assert_eq!(os("net.ipv4.tcp_sack=1\n"), Some(Os::Linux));
    assert_eq!(
        os("kern.ipc.maxsockbuf=1\nnet.inet.tcp.sendspace=1\n"),
        Some(Os::Freebsd)
    );
    assert_eq!(
        os("kern.maxclusters=1\nnet.inet.ip.ifq.maxlen=1\nddb.panic=0\n"),
        Some(Os::Openbsd)
    );
    assert_eq!(os("completely.unknown=1\n"), None);
    assert_eq!("sysctl.d".parse::<Format>(), Ok(Format::Sysctl));
    assert!("xml".parse::<Format>().is_err());
}

#[test]
fn utf16_registry_exports_are_decoded() {
    let text = "Windows Registry Editor Version 5.00\r\n\"TcpWindowSize\"=dword:00010000\r\n";
    let mut bytes = vec![0xFF, 0xFE];
    for unit in text.encode_utf16() {
        bytes.extend_from_slice(&unit.to_le_bytes());
    }
    assert_eq!(decode(&bytes), text);
    assert_eq!(decode("\u{feff}a=1".as_bytes()), "a=1");
    assert_eq!(decode(b"a=\xff"), "a=\u{fffd}");
}

#[test]
fn tuned_profiles_contribute_their_sysctl_section() {
    let text = "[main]\nsummary=x\ninclude=throughput-performance\n\n[sysctl]\n# c\nnet.ipv4.tcp_rmem=4096 131072 16777216\n[vm]\ntransparent_hugepages=never\n";
    assert_eq!(
        detect_format("/etc/tuned/x/tuned.conf", text),
        Format::Tuned
    );
    let p = parse("tuned.conf", text, Format::Tuned);
    assert_eq!(
        keys(&p),
        vec![("net.ipv4.tcp_rmem", "4096 131072 16777216", 7)]
    );
    assert!(p.syntax.is_empty());
    assert_eq!(detect_os(&p.entries, Format::Tuned), Some(Os::Linux));
}

#[test]
fn loader_conf_by_name_and_by_content() {
    for name in [
        "loader.conf",
        "/boot/loader.conf.local",
        "/boot/loader.conf.d/10-nic.conf",
        "C:\\backup\\loader.conf.local",
    ] {
        assert_eq!(detect_format(name, "kern.x=1\n"), Format::Loader, "{name}");
    }
    let quoted = "hw.em.rxd=\"2048\"\nhw.em.txd=\"2048\"\nnet.link.ifqmaxlen=512\n";
    assert_eq!(detect_format("tunables", quoted), Format::Loader);
    assert_eq!(
        detect_format("boot.txt", "# nic\nif_em_load=\"YES\"\n"),
        Format::Loader
    );
    // A sysctl.conf with one quoted string is still a sysctl.conf.
    assert_eq!(
        detect_format(
            "sysctl.conf",
            "kernel.core_pattern = \"core\"\nnet.ipv4.tcp_sack = 1\nvm.swappiness = 10\n"
        ),
        Format::Sysctl
    );
}

#[test]
fn keys_in_path_form_keep_dots_inside_names() {
    assert_eq!(
        normalize_key("net/ipv4/conf/eth0.100/rp_filter"),
        "net.ipv4.conf.eth0/100.rp_filter"
    );
    assert_eq!(
        normalize_key("net.ipv4.conf.eth0/100.rp_filter"),
        "net.ipv4.conf.eth0/100.rp_filter"
    );
    assert_eq!(normalize_key("net.ipv4.tcp_sack"), "net.ipv4.tcp_sack");
    let p = parse(
        "d.conf",
        "net/ipv4/ip_forward = 1\n-net.ipv4.conf.all.rp_filter\nnet.ipv4.conf.*.rp_filter = 2\n",
        Format::Sysctl,
    );
    assert!(p.syntax.is_empty(), "{:?}", p.syntax);
    let keys: Vec<&str> = p.entries.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(keys, ["net.ipv4.ip_forward", "net.ipv4.conf.*.rp_filter"]);
}

#[test]
fn quotes_are_removed_and_remembered() {
    let p = parse(
        "s.conf",
        "kern.ipc.maxsockbuf=\"16777216\"\nnet.ipv4.tcp_rmem = '4096 131072 6291456'\nvm.swappiness = 10\r\n",
        Format::Sysctl,
    );
    let got: Vec<(&str, bool)> = p
        .entries
        .iter()
        .map(|e| (e.value.as_str(), e.quoted))
        .collect();
    assert_eq!(
        got,
        [
            ("16777216", true),
            ("4096 131072 6291456", true),
            ("10", false)
        ]
    );
    let l = parse(
        "l.conf",
        "hw.igb.rxd=\"2048\"\nkern.vty=vt\n",
        Format::Loader,
    );
    let got: Vec<(&str, bool)> = l
        .entries
        .iter()
        .map(|e| (e.value.as_str(), e.quoted))
        .collect();
    assert_eq!(got, [("2048", true), ("vt", false)]);
}
