//! Number formatting and aligned text tables for the calc renderings.

use linerate_units::{BitRate, ByteSize};

/// Column alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A plain-text table: a header row and data rows, columns separated by two spaces, with
/// trailing spaces trimmed.
#[derive(Debug, Default)]
pub struct Table {
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str], align: &[Align]) -> Self {
        Table {
            align: align.to_vec(),
            rows: vec![header.iter().map(|h| (*h).to_owned()).collect()],
        }
    }

    /// A table without a header row.
    pub fn bare(align: &[Align]) -> Self {
        Table {
            align: align.to_vec(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn render(&self, indent: &str) -> String {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for row in &self.rows {
            let mut line = String::from(indent);
            for (c, cell) in row.iter().enumerate() {
                if c > 0 {
                    line.push_str("  ");
                }
                let pad = widths[c].saturating_sub(cell.chars().count());
                match self.align.get(c).copied().unwrap_or(Align::Left) {
                    Align::Left => {
                        line.push_str(cell);
                        line.push_str(&" ".repeat(pad));
                    }
                    Align::Right => {
                        line.push_str(&" ".repeat(pad));
                        line.push_str(cell);
                    }
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// `1488095` → `1,488,095`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A float with at most `decimals` decimals, trailing zeros dropped: 340.3333 → "340.33",
/// 64.0 → "64".
pub fn trim_float(x: f64, decimals: usize) -> String {
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// A bit rate rounded for humans: "7.62 Gbit/s", "940 Mbit/s".
pub fn rate(r: BitRate) -> String {
    let s = format!("{r:.2}");
    // "1.00 Gbit/s" reads better as "1 Gbit/s".
    match s.split_once(' ') {
        Some((n, unit)) if n.contains('.') => {
            format!("{} {unit}", n.trim_end_matches('0').trim_end_matches('.'))
        }
        _ => s,
    }
}

/// A bit rate as bytes per second with SI prefixes, as bus figures are usually quoted:
/// 2.112 Gbit/s → "264 MB/s".
pub fn bytes_per_sec(r: BitRate) -> String {
    let b = r.bytes_per_sec();
    let (value, unit) = if b >= 10e9 {
        (b / 1e9, "GB/s")
    } else if b >= 1e6 {
        (b / 1e6, "MB/s")
    } else if b >= 1e3 {
        (b / 1e3, "kB/s")
    } else {
        (b, "B/s")
    };
    format!("{} {unit}", trim_float(value, 2))
}

/// A byte size for humans: exact when that is short ("5 MB", "64 KiB", "10 GB"), else rounded
/// ("8.00 MiB"). A size that is short in SI is printed in SI even when it is also a multiple
/// of 1024 (the units crate's exact form of 10 GB is 9765625 KiB).
pub fn size(b: ByteSize) -> String {
    let is_short = |text: &str| {
        let number = text.split_once(' ').map_or(text, |(n, _)| n);
        let (whole, decimals) = number.split_once('.').unwrap_or((number, ""));
        decimals.len() <= 2 && whole.len() <= 4
    };
    let exact = b.to_string();
    if is_short(&exact) {
        return exact;
    }
    if let Some(si) = si_exact(b.bytes()) {
        if is_short(&si) {
            return si;
        }
    }
    format!("{b:.2}")
}

/// The exact size with the largest SI prefix that keeps it at least 1 (`10 GB`), if that
/// prefix divides it into a short decimal.
fn si_exact(bytes: u64) -> Option<String> {
    let (factor, unit) = [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")]
        .into_iter()
        .find(|&(f, _)| bytes as f64 >= f)?;
    let factor = factor as u64;
    let (whole, rest) = (bytes / factor, bytes % factor);
    // Two decimals at most, and exact.
    let hundredths = factor / 100;
    if rest % hundredths != 0 {
        return None;
    }
    let decimals = rest / hundredths;
    Some(match decimals {
        0 => format!("{whole} {unit}"),
        d if d % 10 == 0 => format!("{whole}.{} {unit}", d / 10),
        d => format!("{whole}.{d:02} {unit}"),
    })
}

/// Seconds for humans: "67.2 ns", "1.23 µs", "12.3 ms".
pub fn seconds(s: f64) -> String {
    if s < 1e-6 {
        format!("{} ns", trim_float(s * 1e9, 1))
    } else if s < 1e-3 {
        format!("{} µs", trim_float(s * 1e6, 2))
    } else if s < 1.0 {
        format!("{} ms", trim_float(s * 1e3, 2))
    } else {
        format!("{} s", trim_float(s, 3))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(14_880_952), "14,880,952");
        assert_eq!(trim_float(340.333_333, 2), "340.33");
        assert_eq!(trim_float(64.0, 2), "64");
        assert_eq!(rate(BitRate::from_gbps(1)), "1 Gbit/s");
        assert_eq!(rate(BitRate::from_bps(7_619_047_619)), "7.62 Gbit/s");
        assert_eq!(rate(BitRate::from_mbps(940)), "940 Mbit/s");
        assert_eq!(bytes_per_sec(BitRate::from_mbps(2_112)), "264 MB/s");
        assert_eq!(bytes_per_sec(BitRate::from_mbps(8_512)), "1064 MB/s");
        assert_eq!(bytes_per_sec(BitRate::from_gbps(128)), "16 GB/s");
        assert_eq!(size(ByteSize::from_bytes(5_000_000)), "5 MB");
        assert_eq!(size(ByteSize::from_bytes(8_388_480)), "8.00 MiB");
        assert_eq!(size(ByteSize::from_kib(64)), "64 KiB");
        assert_eq!(size(ByteSize::from_bytes(10_000_000_000)), "10 GB");
        assert_eq!(size(ByteSize::from_bytes(125_000_000_000_000)), "125 TB");
        assert_eq!(size(ByteSize::from_bytes(1_250_000_000)), "1.25 GB");
        assert_eq!(size(ByteSize::from_bytes(16_000_000)), "16 MB");
        assert_eq!(size(ByteSize::from_bytes(10_240_000_000)), "10.24 GB");
        assert_eq!(size(ByteSize::from_bytes(10_000_000_001)), "9.31 GiB");
        assert_eq!(seconds(67.2e-9), "67.2 ns");
        assert_eq!(seconds(12.304e-6), "12.3 µs");
        assert_eq!(seconds(0.04), "40 ms");
    }

    #[test]
    fn table_aligns() {
        let mut t = Table::new(&["a", "num"], &[Align::Left, Align::Right]);
        t.row(vec!["long".into(), "1".into()]);
        assert_eq!(t.render(""), "a     num\nlong    1\n");
    }
}
