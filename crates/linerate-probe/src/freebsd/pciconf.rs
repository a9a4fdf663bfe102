//! `pciconf -lv[c][b]`: PCI functions with their IDs, names and, with `-c`, capabilities, of
//! which the PCI Express one carries the link:
//!
//! ```text
//! ix0@pci0:3:0:0:  class=0x020000 rev=0x01 hdr=0x00 vendor=0x8086 device=0x1528 subvendor=0x8086 subdevice=0x35c5
//!     vendor     = 'Intel Corporation'
//!     device     = 'Ethernet Controller 10-Gigabit X540-AT2'
//!     class      = network
//!     subclass   = ethernet
//!     cap 10[a0] = PCI-Express 2 endpoint max data 256(512) FLR RO NS
//!                  max read 512
//!                  link x8(x8) speed 5.0(5.0) ASPM disabled(L0s/L1)
//! ```
//!
//! (The selector and the fields are separated by a tab.) `link xW(xM) speed S(T)` is the current width and speed, the maximum in parentheses; speeds
//! are GT/s, which fixes the generation. Before FreeBSD 11 the header said
//! `card=0xSSSSVVVV chip=0xDDDDVVVV` (subsystem and device IDs packed with the vendor) and the
//! capability could wrap between `link` and `speed`; both are read.

use linerate_calc::bus::PcieGen;

use super::{Command, ParseError, shown, split_unit};
use crate::Probed;
use crate::pcie::{LinkState, PciInfo};

/// A PCI Express link as pciconf reports it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PciconfLink {
    /// Negotiated lanes (0 = link down).
    pub width: u32,
    /// Lanes the device supports.
    pub max_width: u32,
    /// Negotiated GT/s (0.0 = link down); none when pciconf printed no speed (FreeBSD 8).
    pub speed_gts: Option<f64>,
    /// GT/s the device supports.
    pub max_speed_gts: Option<f64>,
}

fn state(lanes: u32, gts: Option<f64>, what: &str) -> Probed<LinkState> {
    if lanes == 0 {
        return Probed::unknown(format!("{what} link is down (x0)"));
    }
    let Some(gts) = gts else {
        return Probed::unknown("pciconf printed the link width but no speed");
    };
    match PcieGen::from_sysfs_speed(&format!("{gts}")) {
        Some(generation) => Probed::Value(LinkState { generation, lanes }),
        None => Probed::unknown(format!("{what} speed {gts} GT/s is not a PCIe rate")),
    }
}

impl PciconfLink {
    /// The negotiated link as generation and lanes, for the bus arithmetic.
    pub fn current(&self) -> Probed<LinkState> {
        state(self.width, self.speed_gts, "current")
    }

    /// The best link the device supports.
    pub fn max(&self) -> Probed<LinkState> {
        state(self.max_width, self.max_speed_gts, "maximum")
    }

    /// True when the device trained below what it supports (fewer lanes or a lower rate).
    pub fn degraded(&self) -> bool {
        let slower = match (self.speed_gts, self.max_speed_gts) {
            (Some(s), Some(m)) => s < m,
            _ => false,
        };
        self.width > 0 && (self.width < self.max_width || slower)
    }
}

/// The PCI Express capability (`cap 10`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PcieCapability {
    /// Capability version (1 or 2).
    pub version: u32,
    /// `endpoint`, `root endpoint`, `legacy endpoint`, `root port`, `upstream port`,
    /// `downstream port`, `PCI bridge`.
    pub port_type: String,
    /// The link, when the capability reports one (integrated endpoints do not).
    pub link: Option<PciconfLink>,
}

/// One PCI function.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PciconfDevice {
    /// Device name (`ix0`; `none3` when no driver attached).
    pub name: String,
    /// Driver (`ix`), none for `noneN`.
    pub driver: Option<String>,
    /// Unit number.
    pub unit: u32,
    /// The selector (`pci0:3:0:0`), as `dev.<driver>.<unit>.%location` names it (`dbsf=`).
    pub selector: String,
    /// Class code (`0x020000` = Ethernet).
    pub class: u32,
    /// Vendor ID.
    pub vendor_id: u16,
    /// Device ID.
    pub device_id: u16,
    /// Subsystem vendor ID.
    pub subvendor_id: u16,
    /// Subsystem device ID.
    pub subdevice_id: u16,
    /// Revision.
    pub revision: u8,
    /// `vendor = '…'` (with `-v`).
    pub vendor: Option<String>,
    /// `device = '…'` (with `-v`).
    pub device: Option<String>,
    /// `class = …` (with `-v`).
    pub class_name: Option<String>,
    /// `subclass = …` (with `-v`).
    pub subclass_name: Option<String>,
    /// The PCI Express capability (with `-c`).
    pub pcie: Option<PcieCapability>,
    /// 1-based line of the header in the input.
    pub line: usize,
}

impl PciconfDevice {
    /// True for an Ethernet controller (class 0x0200).
    pub fn is_ethernet(&self) -> bool {
        self.class >> 8 == 0x0200
    }

    /// The function as the Linux probe's [`PciInfo`], so the same bus checks judge it. pciconf
    /// does not print the NUMA domain (`dev.<driver>.<unit>.%domain` has it) nor the bridge
    /// above the device, so those stay unknown / empty.
    pub fn pci_info(&self) -> PciInfo {
        let link = self.pcie.as_ref().and_then(|p| p.link);
        let missing = || {
            Probed::unknown(if self.pcie.is_some() {
                "pciconf shows no link for this PCI Express function"
            } else {
                "pciconf shows no PCI Express capability (not PCIe, or run without -c)"
            })
        };
        PciInfo {
            address: self.selector.clone(),
            id: Probed::Value(format!("{:04x}:{:04x}", self.vendor_id, self.device_id)),
            numa_node: Probed::unknown(
                "pciconf does not print it; see dev.<driver>.<unit>.%domain",
            ),
            current: link.map_or_else(missing, |l| l.current()),
            max: link.map_or_else(missing, |l| l.max()),
            upstream: Vec::new(),
        }
    }
}

fn malformed(n: usize, expected: &'static str, line: &str) -> ParseError {
    ParseError::Malformed {
        command: Command::Pciconf,
        line: n,
        expected,
        found: shown(line),
    }
}

fn hex(n: usize, field: &str, v: &str) -> Result<u32, ParseError> {
    v.strip_prefix("0x")
        .and_then(|h| u32::from_str_radix(h, 16).ok())
        .ok_or_else(|| ParseError::BadNumber {
            command: Command::Pciconf,
            line: n,
            field: field.to_string(),
            value: shown(v),
        })
}

/// Parses pciconf output into its functions, in printed order.
pub fn parse(text: &str) -> Result<Vec<PciconfDevice>, ParseError> {
    let mut devices: Vec<PciconfDevice> = Vec::new();
    // The PCI Express capability being read: its text so far and the line it started on.
    let mut cap10: Option<(String, usize)> = None;
    let mut in_cap = false;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if !raw.starts_with(char::is_whitespace) && !line.starts_with("ecap ") {
            finish(&mut devices, cap10.take())?;
            in_cap = false;
            devices.push(header(line, n)?);
            continue;
        }
        let Some(dev) = devices.last_mut() else {
            return Err(malformed(n, "a device line (name@pciD:B:S:F: …)", raw));
        };
        if let Some((key, value)) = field(line) {
            finish_one(dev, cap10.take())?;
            in_cap = false;
            let value = value.trim_matches('\'').to_string();
            match key {
                "vendor" => dev.vendor = Some(value),
                "device" => dev.device = Some(value),
                "class" => dev.class_name = Some(value),
                _ => dev.subclass_name = Some(value),
            }
        } else if line.starts_with("bar ") {
            finish_one(dev, cap10.take())?;
            in_cap = false;
        } else if line.starts_with("cap ") || line.starts_with("ecap ") {
            finish_one(dev, cap10.take())?;
            in_cap = true;
            if let Some(body) = line.strip_prefix("cap 10[") {
                cap10 = Some((body.to_string(), n));
            }
        } else if in_cap {
            // A wrapped capability line; only the PCI Express one matters here.
            if let Some((text, _)) = cap10.as_mut() {
                text.push(' ');
                text.push_str(line);
            }
        } else {
            return Err(malformed(
                n,
                "a vendor/device/class line, a bar, a cap or its continuation",
                raw,
            ));
        }
    }
    finish(&mut devices, cap10.take())?;
    Ok(devices)
}

/// `vendor     = 'Intel Corporation'` → (`vendor`, `'Intel Corporation'`).
fn field(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once('=')?;
    let key = key.trim();
    matches!(key, "vendor" | "device" | "class" | "subclass").then(|| (key, value.trim()))
}

fn finish(devices: &mut [PciconfDevice], cap: Option<(String, usize)>) -> Result<(), ParseError> {
    match devices.last_mut() {
        Some(dev) => finish_one(dev, cap),
        None => Ok(()),
    }
}

fn finish_one(dev: &mut PciconfDevice, cap: Option<(String, usize)>) -> Result<(), ParseError> {
    if let Some((text, n)) = cap {
        dev.pcie = Some(pcie(&text, n)?);
    }
    Ok(())
}

/// `a0] = PCI-Express 2 endpoint max data 256(512) FLR RO NS max read 512 link x8(x8) speed 5.0(5.0) …`
fn pcie(body: &str, n: usize) -> Result<PcieCapability, ParseError> {
    let after = body.split_once("] = PCI-Express ").map(|(_, a)| a);
    let Some(after) = after else {
        return Err(malformed(n, "cap 10[..] = PCI-Express …", body));
    };
    let words: Vec<&str> = after.split_whitespace().collect();
    let version = words
        .first()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| malformed(n, "a PCI-Express capability version", after))?;
    let port_type = words[1..]
        .iter()
        .take_while(|w| !matches!(**w, "max" | "link" | "MSI" | "FLR" | "RO" | "NS"))
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    let link = match words.iter().position(|w| *w == "link") {
        None => None,
        Some(at) => {
            let (width, max_width) = pair(words.get(at + 1).copied(), 'x', n, "link width")?;
            let (speed, max_speed) = match words.iter().position(|w| *w == "speed") {
                Some(at) => {
                    let (s, m) = pair_f(words.get(at + 1).copied(), n)?;
                    (Some(s), Some(m))
                }
                None => (None, None),
            };
            Some(PciconfLink {
                width,
                max_width,
                speed_gts: speed,
                max_speed_gts: max_speed,
            })
        }
    };
    Ok(PcieCapability {
        version,
        port_type,
        link,
    })
}

/// `x8(x16)` → (8, 16).
fn pair(word: Option<&str>, prefix: char, n: usize, field: &str) -> Result<(u32, u32), ParseError> {
    let bad = |w: &str| ParseError::BadNumber {
        command: Command::Pciconf,
        line: n,
        field: field.to_string(),
        value: shown(w),
    };
    let w = word.ok_or_else(|| bad(""))?;
    let (cur, max) = w
        .strip_suffix(')')
        .and_then(|w| w.split_once('('))
        .ok_or_else(|| bad(w))?;
    let num = |s: &str| {
        s.strip_prefix(prefix)
            .and_then(|d| d.parse::<u32>().ok())
            .ok_or_else(|| bad(w))
    };
    Ok((num(cur)?, num(max)?))
}

/// `5.0(8.0)` → (5.0, 8.0).
fn pair_f(word: Option<&str>, n: usize) -> Result<(f64, f64), ParseError> {
    let bad = |w: &str| ParseError::BadNumber {
        command: Command::Pciconf,
        line: n,
        field: "link speed".into(),
        value: shown(w),
    };
    let w = word.ok_or_else(|| bad(""))?;
    let (cur, max) = w
        .strip_suffix(')')
        .and_then(|w| w.split_once('('))
        .ok_or_else(|| bad(w))?;
    let num = |s: &str| {
        s.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| bad(w))
    };
    Ok((num(cur)?, num(max)?))
}

/// `ix0@pci0:3:0:0:<tab>class=0x020000 … vendor=0x8086 device=0x1528 …`
fn header(line: &str, n: usize) -> Result<PciconfDevice, ParseError> {
    let bad = |expected| malformed(n, expected, line);
    let (name, rest) = line
        .split_once('@')
        .ok_or_else(|| bad("name@pciD:B:S:F:"))?;
    let (selector, fields) = rest
        .split_once(|c: char| c.is_whitespace())
        .ok_or_else(|| bad("fields after the selector"))?;
    let selector = selector.trim_end_matches(':');
    if !selector.starts_with("pci") || selector.split(':').count() != 4 {
        return Err(bad("a selector pciD:B:S:F"));
    }
    let (driver, unit) = split_unit(name).ok_or_else(|| bad("a device name with a unit"))?;
    let mut dev = PciconfDevice {
        name: name.to_string(),
        driver: (driver != "none").then(|| driver.to_string()),
        unit,
        selector: selector.to_string(),
        class: 0,
        vendor_id: 0,
        device_id: 0,
        subvendor_id: 0,
        subdevice_id: 0,
        revision: 0,
        vendor: None,
        device: None,
        class_name: None,
        subclass_name: None,
        pcie: None,
        line: n,
    };
    let mut seen_ids = false;
    for kv in fields.split_whitespace() {
        let Some((key, value)) = kv.split_once('=') else {
            return Err(bad("key=value fields"));
        };
        let low16 = |v: u32| (v & 0xffff) as u16;
        match key {
            "class" => dev.class = hex(n, key, value)?,
            "rev" => dev.revision = hex(n, key, value)? as u8,
            "vendor" => (dev.vendor_id, seen_ids) = (low16(hex(n, key, value)?), true),
            "device" => dev.device_id = low16(hex(n, key, value)?),
            "subvendor" => dev.subvendor_id = low16(hex(n, key, value)?),
            "subdevice" => dev.subdevice_id = low16(hex(n, key, value)?),
            // Before FreeBSD 11: chip=0xDDDDVVVV card=0xSSSSVVVV.
            "chip" => {
                let v = hex(n, key, value)?;
                (dev.vendor_id, dev.device_id, seen_ids) = (low16(v), (v >> 16) as u16, true);
            }
            "card" => {
                let v = hex(n, key, value)?;
                (dev.subvendor_id, dev.subdevice_id) = (low16(v), (v >> 16) as u16);
            }
            _ => {}
        }
    }
    if !seen_ids {
        return Err(bad("vendor= and device= (or chip=)"));
    }
    Ok(dev)
}

#[cfg(test)]
mod tests;
