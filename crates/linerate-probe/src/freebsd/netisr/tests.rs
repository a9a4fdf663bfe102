use super::*;

/// Built with the format strings of usr.bin/netstat/netisr.c (FreeBSD 13/14): settings
/// `%-25s %12s %12s`, protocols `%-6s %5u %6u %6s %8s   %s`, work rows
/// `%4u %3u   %-6s %5u %5u %8ju %8ju %8ju %8ju %8ju`.
fn from_netisr_c_formats() -> String {
    let mut s = String::from("Configuration:\n");
    s += &format!("{:<25} {:>12} {:>12}\n", "Setting", "Current", "Limit");
    s += &format!("{:<25} {:>12} {:>12}\n", "Thread count", 4, 4);
    s += &format!("{:<25} {:>12} {:>12}\n", "Default queue limit", 256, 10240);
    s += &format!("{:<25} {:>12} {:>12}\n", "Dispatch policy", "hybrid", "n/a");
    s += &format!(
        "{:<25} {:>12} {:>12}\n\n",
        "Threads bound to CPUs", "enabled", "n/a"
    );
    s += "Protocols:\n";
    s += &format!(
        "{:<6} {:>5} {:>6} {:<6} {:<8} {:<5}\n",
        "Name", "Proto", "QLimit", "Policy", "Dispatch", "Flags"
    );
    for (name, proto, policy, dispatch, flags) in [
        ("ip", 1, "cpu", "hybrid", "C--"),
        ("igmp", 2, "source", "default", "---"),
        ("ether", 5, "cpu", "direct", "C--"),
    ] {
        s += &format!(
            "{name:<6} {proto:>5} {:>6} {policy:>6} {dispatch:>8}   {flags}\n",
            256
        );
    }
    s += "\nWorkstreams:\n";
    s += &format!(
        "{:>4} {:>3} {:2}{:<6} {:>5} {:>5} {:>8} {:>8} {:>8} {:>8} {:>8}\n",
        "WSID",
        "CPU",
        "",
        "Name",
        "Len",
        "WMark",
        "Disp'd",
        "HDisp'd",
        "QDrops",
        "Queued",
        "Handled"
    );
    for ws in 0..4u32 {
        s += &format!(
            "{ws:>4} {ws:>3}   {:<6} {:>5} {:>5} {:>8} {:>8} {:>8} {:>8} {:>8}\n",
            "ip",
            0,
            3,
            0,
            7_847_143 + ws,
            0,
            12,
            7_847_155 + ws
        );
    }
    s
}

#[test]
fn reads_the_layout_netstat_prints() {
    let q = NetstatQ::parse(&from_netisr_c_formats()).unwrap();
    assert_eq!((q.threads, q.max_threads), (Some(4), Some(4)));
    assert_eq!((q.default_qlimit, q.max_qlimit), (Some(256), Some(10240)));
    assert_eq!(q.dispatch.as_deref(), Some("hybrid"));
    assert_eq!(q.bound, Some(true));
    assert_eq!(q.protocols.len(), 3);
    assert_eq!(q.protocols[1].policy, "source");
    assert_eq!(q.protocols[2].dispatch.as_deref(), Some("direct"));
    assert_eq!(q.workstream_count(), 4);
    assert_eq!(q.workstreams[3].hybrid_dispatched, 7_847_146);
    assert_eq!(q.total_qdrops(), 0);
}

#[test]
fn apu2_excerpt_shows_the_single_workstream_drowning() {
    let q = NetstatQ::parse(include_str!(
        "../../../testdata/freebsd/ocochard-apu2-netisr/netstat-Q.txt"
    ))
    .unwrap();
    assert_eq!((q.threads, q.max_threads), (Some(1), Some(1)));
    assert_eq!(q.dispatch.as_deref(), Some("direct"));
    assert_eq!(q.bound, Some(false));
    assert_eq!(q.default_qlimit, None);
    assert_eq!(q.protocols.len(), 3);
    assert_eq!(q.protocols[0].flags, "C--");
    assert_eq!(q.protocols[0].policy, "cpu");
    assert_eq!(q.workstream_count(), 1);
    assert_eq!(q.total_qdrops(), 181_210_251);
    assert_eq!(q.workstreams[1].dispatched, 47_512_660);
}

#[test]
fn errors_name_the_line() {
    let e = NetstatQ::parse("Thread count  x  4\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "netstat -Q output, line 1: Thread count \"x\" is not a number"
    );
    let e = NetstatQ::parse("WSID CPU Name\n 0 0 ip 0 0\n").unwrap_err();
    assert_eq!(e.line(), 2);
    let e = NetstatQ::parse("what is this\n").unwrap_err();
    assert!(matches!(e, ParseError::Malformed { line: 1, .. }));
    let e = NetstatQ::parse("Threads bound to CPUs   maybe   n/a\n").unwrap_err();
    assert!(e.to_string().contains("enabled or disabled"), "{e}");
}

#[test]
fn settings_from_sysctl() {
    let dump = SysctlDump::parse(
        "net.isr.dispatch: hybrid\nnet.isr.maxthreads: -1\nnet.isr.bindthreads: 1\n",
    )
    .unwrap();
    let s = NetisrSettings::from_sysctl(&dump).unwrap();
    assert_eq!(s.dispatch, Probed::Value("hybrid".into()));
    assert_eq!(s.max_threads, Probed::Value(-1));
    assert_eq!(s.bind_threads, Probed::Value(true));
    assert!(s.threads.reason().is_some());
}
