//! Arbitrary text against every parser: none may panic, whatever it is fed. Two kinds of
//! input, both from a fixed-seed generator so a failure reproduces: random strings over an
//! alphabet heavy in the characters these formats use, and the real fixtures cut, spliced and
//! corrupted at random points.
//!
//! (proptest would shrink failures; it is not a dependency of this crate yet, and this crate's
//! manifest is not ours to change in this task. The generator below is a stand-in with the same
//! contract: thousands of inputs per parser, reproducible.)

use super::{
    CpuFacts, CpuTopology, NetisrSettings, NetstatQ, NetworkLimits, SysctlDump, VmstatInterrupts,
    nic, pciconf,
};

/// xorshift64*: small, deterministic, good enough to spread inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[rustfmt::skip]
const ALPHABET: &[&str] = &[
    "a", "x", "0", "9", "1", ".", ":", " ", "\t", "\n", "\n", "=", "'", "\"", "<", ">", "/", "(",
    ")", "[", "]", ",", "-", "%", "é", "\u{0}", "irq", "dev.", "ix0", "cpu", "group", "cpu count=",
    "link x", "speed ", "cap 10[a0] = PCI-Express ", "@pci0:", "0x", "WSID", "Name Proto",
    "Thread count", "kern.sched.topology_spec: ", "<groups>", "</group>", "99999999999999999999",
];

const FIXTURES: &[&str] = &[
    include_str!("../../testdata/freebsd/ocochard-epyc7502p-igb/vmstat-i.txt"),
    include_str!("../../testdata/freebsd/bsdrp-hp-dl360p-gen8-t540/vmstat-i.txt"),
    include_str!("../../testdata/freebsd/bsdhw-supermicro-x10slh-cb0cbeb38b08/pciconf-lvc.txt"),
    include_str!("../../testdata/freebsd/bsdrp-ibm-x3550m3-82599eb/pciconf-lvc.txt"),
    include_str!("../../testdata/freebsd/pytorch-cpuinfo-172/sysctl-kern-sched-topology_spec.txt"),
    include_str!("../../testdata/freebsd/intel-mfd-x550t2/sysctl-dev-ix-1.txt"),
    include_str!("../../testdata/freebsd/ocochard-apu2-netisr/netstat-Q.txt"),
    include_str!("../../testdata/freebsd/oshi-2309-truenas/sysctl-kern-hw.txt"),
];

fn random_text(rng: &mut Rng) -> String {
    let len = rng.below(120);
    (0..len)
        .map(|_| ALPHABET[rng.below(ALPHABET.len())])
        .collect()
}

/// A fixture cut at a random character, with random pieces of other text spliced in.
fn mangled_fixture(rng: &mut Rng) -> String {
    let base = FIXTURES[rng.below(FIXTURES.len())];
    let chars: Vec<char> = base.chars().collect();
    let cut = rng.below(chars.len() + 1);
    let mut s: String = chars[..cut].iter().collect();
    for _ in 0..rng.below(4) {
        let at = rng.below(s.chars().count() + 1);
        let byte = s.char_indices().nth(at).map_or(s.len(), |(b, _)| b);
        s.insert_str(byte, &random_text(rng));
    }
    s
}

/// Runs every parser on `text`; results are ignored, only a panic fails.
fn every_parser(text: &str) {
    let _ = VmstatInterrupts::parse(text);
    let _ = pciconf::parse(text);
    let _ = NetstatQ::parse(text);
    let _ = CpuTopology::parse(text);
    if let Ok(dump) = SysctlDump::parse(text) {
        let _ = CpuFacts::from_sysctl(&dump);
        let _ = NetworkLimits::from_sysctl(&dump);
        let _ = NetisrSettings::from_sysctl(&dump);
        let _ = nic::nics(&dump);
    }
    // The same text as the values of the sysctls the fact readers interpret.
    for name in [
        "kern.sched.topology_spec",
        "hw.ncpu",
        "kern.ipc.maxsockbuf",
        "net.isr.maxthreads",
        "dev.ix.0.queue0.rx_packets",
        "dev.cxl.0.nrxq",
        "dev.ix.0.%pnpinfo",
        "dev.ix.0.%domain",
    ] {
        let dump = SysctlDump::from_pairs([(name, text)]);
        let _ = CpuFacts::from_sysctl(&dump);
        let _ = NetworkLimits::from_sysctl(&dump);
        let _ = NetisrSettings::from_sysctl(&dump);
        let _ = nic::nics(&dump);
    }
}

#[test]
fn no_parser_panics_on_random_text() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..3000 {
        every_parser(&random_text(&mut rng));
    }
}

#[test]
fn no_parser_panics_on_cut_and_spliced_real_output() {
    let mut rng = Rng(0xd1b5_4a32_d192_ed03);
    for _ in 0..1500 {
        every_parser(&mangled_fixture(&mut rng));
    }
}
