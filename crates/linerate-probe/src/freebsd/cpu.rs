//! CPU count, cores and SMT from `hw.ncpu`, `kern.smp.*` and `kern.sched.topology_spec`.
//!
//! `kern.smp.cores` and `kern.smp.threads_per_core` (FreeBSD 12 and later) are the kernel's own
//! answer; the topology XML is the cross-check and the only source of which CPUs are siblings.
//! (`kern.smp.topology` is not the topology: it is a debugging tunable that forces a fake one,
//! 0 on every real machine.) FreeBSD has no sysctl for the number of packages; dmesg's
//! `FreeBSD/SMP: N package(s) x …` line has it, so packages are reported unknown here.

use super::sysctl::SysctlDump;
use super::topology::CpuTopology;
use super::{Command, ParseError};
use crate::Probed;

/// CPU facts of a FreeBSD host.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CpuFacts {
    /// Logical CPUs (`hw.ncpu`).
    pub logical: Probed<u32>,
    /// Physical cores (`kern.smp.cores`, else counted in the topology).
    pub cores: Probed<u32>,
    /// Hardware threads per core (`kern.smp.threads_per_core`, else from the topology).
    pub threads_per_core: Probed<u32>,
    /// True when a core runs more than one hardware thread.
    pub smt: Probed<bool>,
    /// CPU packages: not exposed by sysctl (see the module notes).
    pub packages: Probed<u32>,
    /// `hw.model`.
    pub model: Probed<String>,
    /// The scheduler topology, when `kern.sched.topology_spec` was in the input.
    pub topology: Option<CpuTopology>,
}

fn count(dump: &SysctlDump, name: &str) -> Result<Probed<u32>, ParseError> {
    Ok(match dump.u64(name)? {
        Some(n) => match u32::try_from(n) {
            Ok(n) => Probed::Value(n),
            Err(_) => {
                return Err(ParseError::BadNumber {
                    command: Command::Sysctl,
                    line: dump.line_of(name).unwrap_or(0),
                    field: name.to_string(),
                    value: n.to_string(),
                });
            }
        },
        None => Probed::unknown(format!("{name} is not in the input")),
    })
}

impl CpuFacts {
    /// Reads the CPU facts from a dump. Errors only for values that are present and wrong
    /// (a non-numeric `hw.ncpu`, a broken topology XML); absent ones are unknown.
    pub fn from_sysctl(dump: &SysctlDump) -> Result<Self, ParseError> {
        let topology = match dump.get("kern.sched.topology_spec") {
            Some(xml) => Some(CpuTopology::parse(xml).map_err(|e| {
                // The XML starts on the line of its name.
                e.shifted(
                    dump.line_of("kern.sched.topology_spec")
                        .unwrap_or(1)
                        .saturating_sub(1),
                )
            })?),
            None => None,
        };
        let logical = match count(dump, "hw.ncpu")? {
            Probed::Unknown(r) => match &topology {
                Some(t) => Probed::Value(t.logical_cpus() as u32),
                None => Probed::Unknown(r),
            },
            v => v,
        };
        let from_topology = |what: fn(&CpuTopology) -> usize, r: String| match &topology {
            Some(t) => Probed::Value(what(t) as u32),
            None => Probed::Unknown(r),
        };
        let cores = match count(dump, "kern.smp.cores")? {
            Probed::Unknown(r) => from_topology(CpuTopology::cores, r),
            v => v,
        };
        let threads_per_core = match count(dump, "kern.smp.threads_per_core")? {
            Probed::Unknown(r) => from_topology(CpuTopology::threads_per_core, r),
            v => v,
        };
        let smt = threads_per_core.clone().map(|t| t > 1);
        let model = match dump.get("hw.model") {
            Some(m) => Probed::Value(m.trim().to_string()),
            None => Probed::unknown("hw.model is not in the input"),
        };
        Ok(CpuFacts {
            logical,
            cores,
            threads_per_core,
            smt,
            packages: Probed::unknown(
                "FreeBSD has no sysctl for it (dmesg's FreeBSD/SMP line has the package count)",
            ),
            model,
            topology,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(text: &str) -> CpuFacts {
        CpuFacts::from_sysctl(&SysctlDump::parse(text).unwrap()).unwrap()
    }

    #[test]
    fn truenas_i7_3770_from_kern_smp() {
        let f = facts(include_str!(
            "../../testdata/freebsd/oshi-2309-truenas/sysctl-kern-hw.txt"
        ));
        assert_eq!(f.logical, Probed::Value(8));
        assert_eq!(f.cores, Probed::Value(4));
        assert_eq!(f.threads_per_core, Probed::Value(2));
        assert_eq!(f.smt, Probed::Value(true));
        assert_eq!(
            f.model.value().map(String::as_str),
            Some("Intel(R) Core(TM) i7-3770 CPU @ 3.40GHz")
        );
        assert!(f.packages.reason().unwrap().contains("FreeBSD/SMP"));
        assert!(f.topology.is_none());
    }

    #[test]
    fn ten64_arm64_has_no_smt() {
        let f = facts(include_str!(
            "../../testdata/freebsd/fastfetch-1726-ten64/sysctl-kern-smp.txt"
        ));
        assert_eq!(f.cores, Probed::Value(8));
        assert_eq!(f.smt, Probed::Value(false));
        // hw.ncpu was not asked for in that `sysctl kern.smp`.
        assert!(f.logical.reason().unwrap().contains("hw.ncpu"));
    }

    #[test]
    fn ryzen_3900x_ncpu_and_model() {
        let f = facts(include_str!(
            "../../testdata/freebsd/haproxy-3456-ryzen/sysctl-hw-ncpu-model.txt"
        ));
        assert_eq!(f.logical, Probed::Value(24));
        assert_eq!(
            f.model.value().map(String::as_str),
            Some("AMD Ryzen 9 3900X 12-Core Processor")
        );
        assert!(f.cores.reason().is_some());
    }

    #[test]
    fn topology_alone_gives_cores_and_smt() {
        let f = facts(include_str!(
            "../../testdata/freebsd/pytorch-cpuinfo-172/sysctl-kern-sched-topology_spec.txt"
        ));
        assert_eq!(f.logical, Probed::Value(8));
        assert_eq!(f.cores, Probed::Value(4));
        assert_eq!(f.threads_per_core, Probed::Value(2));
        assert_eq!(f.smt, Probed::Value(true));
    }

    #[test]
    fn topology_errors_carry_the_dump_line() {
        let text = "hw.ncpu: 2\nkern.sched.topology_spec: <groups>\n<group level=\"1\" cache-level=\"0\">\n<cpu count=\"2\" mask=\"3\">0</cpu>\n</group>\n</groups>\n";
        let e = CpuFacts::from_sysctl(&SysctlDump::parse(text).unwrap()).unwrap_err();
        // <cpu> is the XML's third line; the XML starts on the dump's second.
        assert_eq!(e.line(), 4);
        let e = CpuFacts::from_sysctl(&SysctlDump::from_pairs([("hw.ncpu", "99999999999")]))
            .unwrap_err();
        assert!(e.to_string().contains("hw.ncpu"), "{e}");
    }
}
