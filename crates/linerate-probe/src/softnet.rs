//! `/proc/net/softnet_stat`: per-CPU receive backlog counters. A drop means the CPU's backlog
//! (`netdev_max_backlog`) was full; a squeeze means a NAPI poll round ran out of budget
//! (`netdev_budget` / `netdev_budget_usecs`) with work left.

use crate::roots::read_trimmed;
use crate::{ProbeRoots, Probed};

/// One CPU's softnet counters (since boot; 32-bit in older kernels, so they wrap).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SoftnetCpu {
    /// The CPU.
    pub cpu: u32,
    /// Packets processed.
    pub processed: u64,
    /// Packets dropped because the backlog queue was full.
    pub dropped: u64,
    /// Poll rounds that ended with work left (budget or time exhausted).
    pub time_squeeze: u64,
    /// Packets steered here by RPS/RFS (`received_rps`).
    pub received_rps: u64,
    /// Packets dropped by the flow limit.
    pub flow_limit: u64,
}

/// Reads softnet counters from the procfs root.
pub fn read(roots: &ProbeRoots) -> Probed<Vec<SoftnetCpu>> {
    let path = roots.proc("net/softnet_stat");
    read_trimmed(&path).and_then(|text| match parse(&text) {
        Ok(v) => Probed::Value(v),
        Err(e) => Probed::unknown(format!("{}: {e}", path.display())),
    })
}

/// Parses the file: one line per CPU of hex words. Since Linux 5.10 the 13th word is the CPU
/// number (lines skip offline CPUs); before, the line number is the CPU.
pub fn parse(text: &str) -> Result<Vec<SoftnetCpu>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let words = line
            .split_whitespace()
            .map(|w| u64::from_str_radix(w, 16))
            .collect::<Result<Vec<u64>, _>>()
            .map_err(|_| format!("line {}: not hex words: '{line}'", i + 1))?;
        if words.len() < 3 {
            return Err(format!("line {}: fewer than 3 words", i + 1));
        }
        let at = |n: usize| words.get(n).copied().unwrap_or(0);
        let cpu = match words.get(12) {
            Some(&c) => u32::try_from(c).map_err(|_| format!("line {}: bad CPU", i + 1))?,
            None => u32::try_from(i).map_err(|_| format!("line {}: too many lines", i + 1))?,
        };
        out.push(SoftnetCpu {
            cpu,
            processed: at(0),
            dropped: at(1),
            time_squeeze: at(2),
            received_rps: at(9),
            flow_limit: at(10),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_old_and_new_layouts() {
        let new = "00000011 00000002 00000003 00000000 00000000 00000000 00000000 00000000 \
                   00000000 00000004 00000005 00000000 00000001 00000000 00000000\n";
        let v = parse(new).unwrap();
        assert_eq!(v[0].cpu, 1);
        assert_eq!(
            (v[0].processed, v[0].dropped, v[0].time_squeeze),
            (17, 2, 3)
        );
        assert_eq!((v[0].received_rps, v[0].flow_limit), (4, 5));
        let old = "0000ffff 00000000 00000001 00000000 00000000 00000000 00000000 00000000 \
                   00000000 00000000\n0000000a 00000000 00000000 00000000 00000000 00000000 \
                   00000000 00000000 00000000 00000000\n";
        let v = parse(old).unwrap();
        assert_eq!(v[1].cpu, 1);
        assert_eq!(v[0].processed, 0xffff);
        assert!(parse("zz 1 2").is_err());
        assert!(parse("1 2").is_err());
    }
}
