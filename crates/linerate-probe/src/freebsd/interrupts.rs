//! `vmstat -i`: interrupts per vector since boot, and their average rate.
//!
//! ```text
//! interrupt                          total       rate
//! cpu0:timer                        749022        583
//! irq273: igb1:que 0                  1291          1
//! irq284: t5nex0:0a0                608689        474
//! irq268: ixl0:rxq0                3028517          9
//! Total                           11978149       9318
//! ```
//!
//! The name column is everything before the last two numbers (it may contain spaces:
//! `igb1:que 0`). Queue vectors are named by the driver: iflib drivers `rxqN`/`txqN` and `aq`
//! (admin), the older Intel drivers `que N`, `queN` or `qN` (one vector for RX and TX), cxgbe
//! `PaQ` (port `P`, virtual interface `a`/`b`…, queue `Q`, hex), nvme `ioN`/`admin`.

use super::{Command, ParseError, number, shown, split_unit};

/// What raised the interrupt.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum InterruptSource {
    /// A device interrupt: `irqN: …`.
    Irq {
        /// The interrupt number.
        irq: u32,
    },
    /// A per-CPU local interrupt: `cpuN:timer`.
    Cpu {
        /// The CPU.
        cpu: u32,
        /// What it is (`timer`).
        what: String,
    },
    /// x86's counter of spurious interrupts on a line (`stray irq7`, shown by `vmstat -ia`).
    Stray {
        /// The interrupt number.
        irq: u32,
    },
    /// Another controller's naming (`gic0,s27: …` on arm64): the part before `: `.
    Other {
        /// The controller and line as printed.
        controller: String,
    },
}

/// What a vector serves.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueRole {
    /// A receive queue (iflib `rxqN`, cxgbe NIC queues, which serve receive).
    Rx,
    /// A transmit queue (`txqN`).
    Tx,
    /// One vector for a receive and a transmit queue (`que N`, `qN`).
    RxTx,
    /// Admin, link or firmware events (`aq`, `link`, `evt`, `err`, `admin`).
    Control,
    /// Something else the device names (nvme `io3`).
    Other,
}

/// The queue behind a vector.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct QueueRef {
    /// What the vector serves.
    pub role: QueueRole,
    /// Queue index, when the name has one.
    pub index: Option<u32>,
    /// cxgbe: the port (the `cxl`/`cc` interface of the nexus).
    pub port: Option<u32>,
}

/// One line of `vmstat -i`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InterruptLine {
    /// The name column as printed (`irq268: ixl0:rxq0`).
    pub name: String,
    /// IRQ or CPU-local.
    pub source: InterruptSource,
    /// The device (`ixl0`, `t5nex0`, `uart0`); none for CPU-local interrupts.
    pub device: Option<String>,
    /// What follows the device's `:` (`rxq0`, `que 0`, `0a7`), if anything.
    pub vector: Option<String>,
    /// The queue, for vectors named like one.
    pub queue: Option<QueueRef>,
    /// Several devices share the IRQ (`irq16: uhci0 ehci0+`).
    pub shared: bool,
    /// Interrupts since boot.
    pub total: u64,
    /// Average per second since boot, as vmstat prints it.
    pub rate: u64,
    /// 1-based line in the input.
    pub line: usize,
}

/// Parsed `vmstat -i`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct VmstatInterrupts {
    /// The interrupt lines in printed order.
    pub lines: Vec<InterruptLine>,
    /// The `Total` line (total, rate), when present.
    pub total: Option<(u64, u64)>,
}

impl VmstatInterrupts {
    /// Parses `vmstat -i` or `vmstat -ia`. The header and `Total` lines are optional, so an
    /// excerpt (`vmstat -i | grep ix0`) parses too.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let mut out = VmstatInterrupts::default();
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            let line = raw.trim();
            if line.is_empty() {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            if words == ["interrupt", "total", "rate"] {
                continue;
            }
            if words.len() < 3 {
                return Err(malformed(n, raw));
            }
            let rate = number(Command::VmstatI, n, "rate", words[words.len() - 1])?;
            let total = number(Command::VmstatI, n, "total", words[words.len() - 2])?;
            // The name is the line up to the total column, whatever spaces it contains.
            let name = line[..find_column(line, words.len() - 2)].trim_end();
            if name == "Total" {
                out.total = Some((total, rate));
                continue;
            }
            out.lines.push(interrupt(name, total, rate, n, raw)?);
        }
        Ok(out)
    }

    /// The lines of one device (`ix0`, `t5nex0`), in printed order.
    pub fn device<'a>(&'a self, device: &'a str) -> impl Iterator<Item = &'a InterruptLine> {
        self.lines
            .iter()
            .filter(move |l| l.device.as_deref() == Some(device))
    }

    /// The device's queue vectors that carry receive work (RX or combined), in printed order.
    pub fn receive_vectors<'a>(&'a self, device: &'a str) -> Vec<&'a InterruptLine> {
        self.device(device)
            .filter(|l| {
                l.queue
                    .as_ref()
                    .is_some_and(|q| matches!(q.role, QueueRole::Rx | QueueRole::RxTx))
            })
            .collect()
    }

    /// Sum of the per-line totals (to check against the `Total` line).
    pub fn sum(&self) -> u64 {
        self.lines.iter().map(|l| l.total).sum()
    }
}

fn malformed(n: usize, raw: &str) -> ParseError {
    ParseError::Malformed {
        command: Command::VmstatI,
        line: n,
        expected: "NAME TOTAL RATE",
        found: shown(raw),
    }
}

/// Byte offset where the `k`-th whitespace-separated word of `line` starts.
fn find_column(line: &str, k: usize) -> usize {
    let mut seen = 0;
    let mut in_word = false;
    for (at, c) in line.char_indices() {
        if c.is_whitespace() {
            in_word = false;
        } else if !in_word {
            if seen == k {
                return at;
            }
            seen += 1;
            in_word = true;
        }
    }
    line.len()
}

fn interrupt(
    name: &str,
    total: u64,
    rate: u64,
    n: usize,
    raw: &str,
) -> Result<InterruptLine, ParseError> {
    let (source, attached) = classify(name).ok_or_else(|| malformed(n, raw))?;
    let mut line = InterruptLine {
        name: name.to_string(),
        source,
        device: None,
        vector: None,
        queue: None,
        shared: false,
        total,
        rate,
        line: n,
    };
    if let Some(what) = attached {
        attach(&mut line, what);
    }
    Ok(line)
}

/// The source of a name column, and the text naming the device behind it, if any.
fn classify(name: &str) -> Option<(InterruptSource, Option<&str>)> {
    if let Some((irq, what)) = name.strip_prefix("irq").and_then(|r| r.split_once(':')) {
        return Some((InterruptSource::Irq { irq: small(irq)? }, Some(what)));
    }
    if let Some(irq) = name.strip_prefix("stray irq").and_then(small) {
        return Some((InterruptSource::Stray { irq }, None));
    }
    let (head, what) = name.split_once(':')?;
    // Per-CPU: `cpu0:timer`.
    if let Some(("cpu", cpu)) = split_unit(head) {
        let what = what.to_string();
        return Some((InterruptSource::Cpu { cpu, what }, None));
    }
    // Another controller's `name: device` (no spaces in the controller part).
    (what.starts_with(' ') && !head.is_empty() && !head.contains(char::is_whitespace)).then(|| {
        let controller = head.to_string();
        (InterruptSource::Other { controller }, Some(what))
    })
}

fn small(digits: &str) -> Option<u32> {
    digits.trim().parse().ok()
}

/// Fills in the device, vector and queue from what follows `irqN:` (`ix0:rxq0`, `uart0`,
/// `uhci0 ehci0+`).
fn attach(line: &mut InterruptLine, what: &str) {
    let what = what.trim();
    match what.split_once(':') {
        Some((device, vector)) => {
            line.device = Some(device.to_string());
            line.queue = queue(device, vector);
            line.vector = Some(vector.to_string());
        }
        None => {
            let mut devices = what.split_whitespace();
            line.device = devices.next().map(|d| d.trim_end_matches('+').to_string());
            line.shared = devices.next().is_some() || what.ends_with('+');
        }
    }
}

/// Reads a queue out of a vector name, by the conventions in the module notes.
fn queue(device: &str, vector: &str) -> Option<QueueRef> {
    let v = vector.trim();
    let indexed = |role: QueueRole, digits: &str| {
        digits.trim().parse().ok().map(|index| QueueRef {
            role,
            index: Some(index),
            port: None,
        })
    };
    let control = || QueueRef {
        role: QueueRole::Control,
        index: None,
        port: None,
    };
    let driver = split_unit(device).map(|(d, _)| d).unwrap_or(device);
    if matches!(driver, "t4nex" | "t5nex" | "t6nex" | "t7nex") {
        // `0a7`: port 0, first virtual interface, queue 7 (all hex).
        let b = v.as_bytes();
        if b.len() >= 3 && b[1].is_ascii_lowercase() {
            let port = u32::from_str_radix(&v[..1], 16).ok();
            let index = u32::from_str_radix(&v[2..], 16).ok();
            if port.is_some() && index.is_some() {
                return Some(QueueRef {
                    role: QueueRole::Rx,
                    index,
                    port,
                });
            }
        }
        return matches!(v, "evt" | "err").then(control);
    }
    if let Some(d) = v.strip_prefix("rxq") {
        return indexed(QueueRole::Rx, d);
    }
    if let Some(d) = v.strip_prefix("txq") {
        return indexed(QueueRole::Tx, d);
    }
    for prefix in ["que", "q"] {
        if let Some(q) = v
            .strip_prefix(prefix)
            .and_then(|d| indexed(QueueRole::RxTx, d))
        {
            return Some(q);
        }
    }
    if matches!(v, "aq" | "admin" | "link" | "evt" | "err" | "adminq") {
        return Some(control());
    }
    let digits = v.len() - v.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    (digits > 0).then(|| QueueRef {
        role: QueueRole::Other,
        index: v[v.len() - digits..].parse().ok(),
        port: None,
    })
}

#[cfg(test)]
mod tests;
