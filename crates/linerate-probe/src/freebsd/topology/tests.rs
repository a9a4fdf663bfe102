use super::*;
use crate::freebsd::SysctlDump;

const CPUINFO_172: &str = include_str!(
    "../../../testdata/freebsd/pytorch-cpuinfo-172/sysctl-kern-sched-topology_spec.txt"
);
const HAPROXY_TRUNCATED: &str = include_str!(
    "../../../testdata/freebsd/haproxy-3456-ryzen/sysctl-qn-kern-sched-topology_spec.txt"
);

fn cpuinfo_172() -> CpuTopology {
    let dump = SysctlDump::parse(CPUINFO_172).unwrap();
    CpuTopology::parse(dump.get("kern.sched.topology_spec").unwrap()).unwrap()
}

#[test]
fn four_cores_two_threads_each() {
    let t = cpuinfo_172();
    assert_eq!(t.groups.len(), 1);
    let top = &t.groups[0];
    assert_eq!((top.level, top.cache_level), (1, 3));
    assert_eq!(top.cpus, (0..8).collect::<Vec<_>>());
    assert_eq!(top.mask, "ff,0,0,0");
    assert_eq!(top.children.len(), 4);
    assert_eq!(t.logical_cpus(), 8);
    assert_eq!(t.smt_groups().len(), 4);
    assert_eq!(t.threads_per_core(), 2);
    assert_eq!(t.cores(), 4);
    assert_eq!(t.smt_siblings(5), vec![4]);
    assert_eq!(t.smt_siblings(42), Vec::<u32>::new());
    assert!(t.numa_nodes().is_empty());
    assert_eq!(top.children[3].cpus, vec![6, 7]);
    assert_eq!(top.children[3].flags, vec!["THREAD", "SMT"]);
}

#[test]
fn a_cut_document_is_reported_not_half_read() {
    let e = CpuTopology::parse(HAPROXY_TRUNCATED).unwrap_err();
    // The outermost open element when the text stops is the first-level <children>.
    assert!(matches!(e, ParseError::Truncated { .. }), "{e}");
    assert_eq!(e.line(), 4);
    assert_eq!(
        e.to_string(),
        "kern.sched.topology_spec: input ends inside <children> opened on line 4"
    );
}

#[test]
fn flat_topology_without_smt_and_numa_nodes() {
    // psutil issue #2782 quotes this 4-CPU, no-SMT topology (FreeBSD, 2026).
    let flat = "<groups>\n <group level=\"1\" cache-level=\"0\">\n  <cpu count=\"4\" mask=\"f,0,0,0\">0, 1, 2, 3</cpu>\n </group>\n</groups>\n";
    let t = CpuTopology::parse(flat).unwrap();
    assert_eq!(
        (t.logical_cpus(), t.cores(), t.threads_per_core()),
        (4, 4, 1)
    );
    let numa = "<groups><group level=\"1\" cache-level=\"0\"><cpu count=\"4\" mask=\"0xf\">0, 1, 2, 3</cpu><flags></flags><children>\
        <group level=\"2\" cache-level=\"3\"><cpu count=\"2\" mask=\"0x3\">0, 1</cpu><flags><flag name=\"NODE\">NUMA node</flag></flags></group>\
        <group level=\"2\" cache-level=\"3\"><cpu count=\"2\" mask=\"0xc\">2, 3</cpu><flags><flag name=\"NODE\">NUMA node</flag></flags></group>\
        </children></group></groups>";
    let t = CpuTopology::parse(numa).unwrap();
    assert_eq!(t.numa_nodes().len(), 2);
    assert_eq!(t.numa_nodes()[1].cpus, vec![2, 3]);
    assert_eq!(t.cores(), 4);
}

#[test]
fn errors_point_at_the_line() {
    let bad_count = "<groups>\n<group level=\"1\" cache-level=\"0\">\n<cpu count=\"3\" mask=\"f\">0, 1</cpu>\n</group>\n</groups>";
    let e = CpuTopology::parse(bad_count).unwrap_err();
    assert_eq!(
        e.to_string(),
        "kern.sched.topology_spec, line 3: count=\"3\" but the list has 2 CPUs"
    );
    let bad_id = "<groups>\n<group level=\"1\" cache-level=\"0\">\n<cpu count=\"1\" mask=\"f\">\nx</cpu></group></groups>";
    assert_eq!(CpuTopology::parse(bad_id).unwrap_err().line(), 4);
    let stray = "<groups></groups>\n<oops>";
    assert_eq!(CpuTopology::parse(stray).unwrap_err().line(), 2);
    assert!(CpuTopology::parse("").is_err());
    assert!(CpuTopology::parse("<groups").is_err());
    assert!(CpuTopology::parse("<groups><group level=\"x\" cache-level=\"0\">").is_err());
}

#[test]
fn absurd_nesting_is_refused_not_recursed() {
    let open = "<group level=\"1\" cache-level=\"0\"><cpu count=\"1\" mask=\"1\">0</cpu><children>";
    let xml = format!("<groups>{}", open.repeat(100_000));
    let e = CpuTopology::parse(&xml).unwrap_err();
    assert!(e.to_string().contains("at most 16 nested groups"), "{e}");
}
