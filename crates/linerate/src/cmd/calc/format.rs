//! Aligned text tables for the calc renderings, and calc's choices of digits and prefixes
//! over the one formatter (`linerate_units::human`).

use linerate_units::human::{self, Digits, Family, Human, Prefix};
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

/// A byte size for calc's figures: exact when that needs at most two decimals (`5 MB`,
/// `64 KiB`, `10 GB`, `10.24 GB`), otherwise rounded in binary prefixes (`8.00 MiB`).
pub fn size(b: ByteSize) -> String {
    let exact = b.human().exact().to_string();
    let decimals = exact
        .split_once(' ')
        .and_then(|(number, _)| number.split_once('.'))
        .map_or(0, |(_, fraction)| fraction.len());
    if decimals <= 2 {
        exact
    } else {
        b.human()
            .family(Family::Binary)
            .digits(Digits::Decimals(2))
            .to_string()
    }
}

/// A bus figure in bytes per second, quoted in MB/s up to 10 GB/s as bus bandwidths usually
/// are: 2.112 Gbit/s → `264 MB/s`, 8.512 Gbit/s → `1064 MB/s`, 128 Gbit/s → `16 GB/s`.
pub fn bus_bytes_per_sec(r: BitRate) -> Human {
    let largest = if r.bytes_per_sec() >= 10e9 {
        Prefix::Giga
    } else {
        Prefix::Mega
    };
    r.human_bytes_per_sec().at_most(largest)
}

/// A time for calc's tables: four significant digits at most, so a frame's time on the wire
/// keeps its tenth of a nanosecond (`67.2 ns`, `1.04 µs`, `40 ms`).
pub fn seconds(secs: f64) -> Human {
    human::seconds(secs).digits(Digits::MaxSignificant(4))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_bus_figures_and_times() {
        assert_eq!(size(ByteSize::from_bytes(5_000_000)), "5 MB");
        assert_eq!(size(ByteSize::from_bytes(8_388_480)), "8.00 MiB");
        assert_eq!(size(ByteSize::from_kib(64)), "64 KiB");
        assert_eq!(size(ByteSize::from_bytes(10_000_000_000)), "10 GB");
        assert_eq!(size(ByteSize::from_bytes(125_000_000_000_000)), "125 TB");
        assert_eq!(size(ByteSize::from_bytes(1_250_000_000)), "1.25 GB");
        assert_eq!(size(ByteSize::from_bytes(16_000_000)), "16 MB");
        assert_eq!(size(ByteSize::from_bytes(10_240_000_000)), "10.24 GB");
        assert_eq!(size(ByteSize::from_bytes(10_000_000_001)), "9.31 GiB");
        let bus = |r: BitRate| bus_bytes_per_sec(r).to_string();
        assert_eq!(bus(BitRate::from_mbps(2_112)), "264 MB/s");
        assert_eq!(bus(BitRate::from_mbps(8_512)), "1064 MB/s");
        assert_eq!(bus(BitRate::from_gbps(128)), "16 GB/s");
        assert_eq!(seconds(67.2e-9).to_string(), "67.2 ns");
        assert_eq!(seconds(12.304e-6).to_string(), "12.3 µs");
        assert_eq!(seconds(0.04).to_string(), "40 ms");
    }

    #[test]
    fn table_aligns() {
        let mut t = Table::new(&["a", "num"], &[Align::Left, Align::Right]);
        t.row(vec!["long".into(), "1".into()]);
        assert_eq!(t.render(""), "a     num\nlong    1\n");
    }
}
