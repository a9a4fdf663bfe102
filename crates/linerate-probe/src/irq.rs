//! Interrupts: `/proc/interrupts` (per-CPU counts and action names) and
//! `/proc/irq/N/{smp_affinity_list,effective_affinity_list}` (where each may and does run).

use std::collections::BTreeMap;

use crate::roots::{parse_cpu_list, read_trimmed};
use crate::{ProbeRoots, Probed};

/// One line of `/proc/interrupts` with a numeric IRQ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterruptLine {
    /// IRQ number.
    pub irq: u32,
    /// Count per CPU column (index = column, see [`InterruptTable::cpus`]).
    pub counts: Vec<u64>,
    /// The action name(s): `eth0-TxRx-0`, `virtio2-input.0`, `mlx5_comp3@pci:0000:01:00.0`.
    pub name: String,
}

/// `/proc/interrupts`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InterruptTable {
    /// The CPU of each count column.
    pub cpus: Vec<u32>,
    /// Numeric IRQ lines.
    pub lines: Vec<InterruptLine>,
}

/// One interrupt of a NIC, with where it may and does run.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Irq {
    /// IRQ number.
    pub irq: u32,
    /// Action name.
    pub name: String,
    /// True when the name marks a queue vector (not config/link/async events).
    pub queue: bool,
    /// CPUs it may run on (`smp_affinity_list`).
    pub affinity: Probed<Vec<u32>>,
    /// CPUs it runs on now (`effective_affinity_list`; x86 picks one of the allowed CPUs).
    pub effective: Probed<Vec<u32>>,
    /// Interrupts handled per CPU since boot.
    pub counts: BTreeMap<u32, u64>,
}

impl Irq {
    /// The CPUs it runs on: the effective list when known, otherwise the allowed list.
    pub fn cpus(&self) -> Option<&Vec<u32>> {
        self.effective.value().or_else(|| self.affinity.value())
    }
}

/// The queue vectors among `irqs` and the CPUs that serve them (sorted, each once).
pub fn queue_irq_cpus(irqs: &[Irq]) -> (Vec<&Irq>, Vec<u32>) {
    let queue: Vec<&Irq> = irqs.iter().filter(|i| i.queue).collect();
    let mut on: Vec<u32> = queue
        .iter()
        .filter_map(|i| i.cpus())
        .flatten()
        .copied()
        .collect();
    on.sort_unstable();
    on.dedup();
    (queue, on)
}

/// Parses `/proc/interrupts`.
pub fn parse_interrupts(text: &str) -> Result<InterruptTable, String> {
    let mut lines = text.lines();
    let header = lines.next().ok_or("empty file")?;
    let cpus = header
        .split_whitespace()
        .map(|c| {
            c.strip_prefix("CPU")
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| format!("line 1: '{c}' is not a CPU column"))
        })
        .collect::<Result<Vec<u32>, _>>()?;
    let mut table = InterruptTable {
        cpus,
        lines: Vec::new(),
    };
    for line in lines {
        let Some((irq, rest)) = line.split_once(':') else {
            continue;
        };
        // Named rows (NMI, LOC, …) are per-CPU architecture counters, not device IRQs.
        let Ok(irq) = irq.trim().parse::<u32>() else {
            continue;
        };
        let mut tokens = rest.split_whitespace();
        let mut counts = Vec::with_capacity(table.cpus.len());
        for _ in 0..table.cpus.len() {
            match tokens.next().and_then(|t| t.parse::<u64>().ok()) {
                Some(n) => counts.push(n),
                None => break,
            }
        }
        let tail: Vec<&str> = tokens.collect();
        // After the counts: the chip, the hardware IRQ and trigger, then the action names.
        let name = if tail.len() > 2 {
            tail[2..].join(" ")
        } else {
            tail.last().map(|s| (*s).to_owned()).unwrap_or_default()
        };
        table.lines.push(InterruptLine { irq, counts, name });
    }
    Ok(table)
}

/// Reads `/proc/interrupts` from the procfs root.
pub fn read_interrupts(roots: &ProbeRoots) -> Probed<InterruptTable> {
    let path = roots.proc("interrupts");
    read_trimmed(&path).and_then(|t| match parse_interrupts(&t) {
        Ok(table) => Probed::Value(table),
        Err(e) => Probed::unknown(format!("{}: {e}", path.display())),
    })
}

/// Whether an action name marks a queue vector.
pub fn is_queue_vector(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    if ["config", "async", "lsc", "-link", "mgmt", "event"]
        .iter()
        .any(|w| n.contains(w))
    {
        return false;
    }
    [
        "txrx", "rx", "tx", "input", "output", "comp", "queue", "fp-", "-q",
    ]
    .iter()
    .any(|w| n.contains(w))
}

/// The IRQs of one interface: those listed for its PCI function (`msi_irqs/`) plus those whose
/// action name starts with the interface or its virtio device name.
pub(crate) fn interface_irqs(
    roots: &ProbeRoots,
    table: &InterruptTable,
    msi: &[u32],
    prefixes: &[String],
) -> Vec<Irq> {
    let mut out = Vec::new();
    for line in &table.lines {
        let named = prefixes.iter().any(|p| {
            line.name.split([' ', ',']).any(|action| {
                action.starts_with(&format!("{p}-"))
                    || action.contains(&format!("-{p}-"))
                    || action == p
            })
        });
        if !named && !msi.contains(&line.irq) {
            continue;
        }
        let list = |file: &str| {
            let path = roots.proc(&format!("irq/{}/{file}", line.irq));
            read_trimmed(&path).and_then(|s| match parse_cpu_list(&s) {
                Some(v) => Probed::Value(v),
                None => Probed::unknown(format!("{}: '{s}' is not a CPU list", path.display())),
            })
        };
        out.push(Irq {
            irq: line.irq,
            queue: is_queue_vector(&line.name),
            name: line.name.clone(),
            affinity: list("smp_affinity_list"),
            effective: list("effective_affinity_list"),
            counts: table
                .cpus
                .iter()
                .copied()
                .zip(line.counts.iter().copied())
                .collect(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "           CPU0       CPU1       
 24:          1          0  IO-APIC   5-edge      ACPI:Ged
 37:          0          0 PCI-MSIX-0000:00:03.0   0-edge      virtio2-config
 38:          0       3529 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0
 39:       2661          0 PCI-MSIX-0000:00:03.0   2-edge      virtio2-output.0
 60:         10         20  IR-PCI-MSI 524288-edge      eth2-TxRx-0
NMI:          0          0   Non-maskable interrupts
";

    #[test]
    fn parses_proc_interrupts() {
        let t = parse_interrupts(SAMPLE).unwrap();
        assert_eq!(t.cpus, vec![0, 1]);
        assert_eq!(t.lines.len(), 5);
        assert_eq!(t.lines[2].name, "virtio2-input.0");
        assert_eq!(t.lines[2].counts, vec![0, 3529]);
        assert_eq!(t.lines[4].name, "eth2-TxRx-0");
        assert!(parse_interrupts("").is_err());
        assert!(parse_interrupts("CPUx\n").is_err());
    }

    #[test]
    fn queue_vectors() {
        assert!(is_queue_vector("eth2-TxRx-0"));
        assert!(is_queue_vector("virtio2-input.0"));
        assert!(is_queue_vector("mlx5_comp3@pci:0000:01:00.0"));
        assert!(!is_queue_vector("virtio2-config"));
        assert!(!is_queue_vector("mlx5_async0@pci:0000:01:00.0"));
        assert!(!is_queue_vector("eth2"));
    }
}
