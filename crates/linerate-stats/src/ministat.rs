//! ministat's output, byte for byte: the legend, the ASCII plot with its avg/median/stddev
//! bars, the summary table and a verdict for each set against the first.
//!
//! Follows current FreeBSD ministat, quirks included where they shape the output (the plot
//! height is the last set's stack height, so a taller stack of an earlier set is cut; a point
//! where sets x and + coincide prints as `*`, the third set's symbol). Widths that crash
//! ministat (1) or draw nothing (0) give a frame without a crash.

use std::fmt::Write as _;

use crate::Sample;
use crate::cfmt::format_g_width;
use crate::compare::{Comparison, TSource, compare_with};
use crate::rank::{MannWhitney, mann_whitney};
use crate::student::Confidence;
use crate::summary::Summary;

/// Most data sets ministat compares at once (one symbol each).
pub const MAX_SETS: usize = 7;

/// Plot symbols: index = set number + 1; indexes combine by bitwise OR where sets share a
/// cell.
pub const SYMBOLS: [u8; 8] = [b' ', b'x', b'+', b'*', b'%', b'#', b'@', b'O'];

/// ministat's default plot width (the frame adds 2 columns).
pub const DEFAULT_WIDTH: usize = 74;

/// One named data set to render.
#[derive(Debug, Clone, Copy)]
pub struct Dataset<'a> {
    /// The legend name (ministat prints the file name, or `<stdin>`).
    pub name: &'a str,
    /// The values.
    pub sample: &'a Sample,
}

/// Which test compares each set with the first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Test {
    /// Student's t with pooled variance (ministat's).
    #[default]
    StudentT,
    /// The Mann–Whitney U rank test.
    MannWhitney,
}

/// What to print, mirroring ministat's flags.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Plot width in columns inside the frame (`-w`; default 74).
    pub width: usize,
    /// Draw the plot (off with `-A` or `-n`).
    pub plot: bool,
    /// One bar line per set (`-s`) instead of one shared line.
    pub separate_bars: bool,
    /// Compare each set with the first (off with `-n`).
    pub compare: bool,
    /// Leave out the legend and the table header (`-q`).
    pub quiet: bool,
    /// Confidence level of the comparisons (`-c`).
    pub confidence: Confidence,
    /// The test used for the comparisons.
    pub test: Test,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            width: DEFAULT_WIDTH,
            plot: true,
            separate_bars: false,
            compare: true,
            quiet: false,
            confidence: Confidence::P95,
            test: Test::StudentT,
        }
    }
}

/// The comparison of one set with the first, by the test chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// Student's t.
    StudentT(Comparison),
    /// Mann–Whitney U.
    MannWhitney(MannWhitney),
}

impl Outcome {
    /// The verdict lines in ministat's wording.
    #[must_use]
    pub fn verdict(&self) -> String {
        match self {
            Self::StudentT(c) => c.verdict(),
            Self::MannWhitney(m) => m.verdict(),
        }
    }

    /// Whether a difference is proven.
    #[must_use]
    pub fn significant(&self) -> bool {
        match self {
            Self::StudentT(c) => c.significant,
            Self::MannWhitney(m) => m.significant,
        }
    }
}

/// Compares `other` with `baseline` as `linerate stat` does: Student's t uses ministat's
/// table at ministat's six levels (so the digits match) and exact quantiles at any other.
#[must_use]
pub fn compare_sets(
    baseline: &Sample,
    other: &Sample,
    confidence: Confidence,
    test: Test,
) -> Outcome {
    match test {
        Test::StudentT => {
            let source = if confidence.ministat_column().is_some() {
                TSource::MinistatTable
            } else {
                TSource::Exact
            };
            let (base, new) = (baseline.summary(), other.summary());
            let comparison = compare_with(&base, &new, confidence, source)
                .unwrap_or_else(|_| crate::compare::compare(&base, &new, confidence));
            Outcome::StudentT(comparison)
        }
        Test::MannWhitney => Outcome::MannWhitney(mann_whitney(baseline, other, confidence)),
    }
}

/// Renders ministat's whole output for `sets` (1 to [`MAX_SETS`]; more are rendered too, but
/// their plot symbols repeat).
#[must_use]
pub fn render(sets: &[Dataset<'_>], options: &Options) -> String {
    let summaries: Vec<Summary> = sets.iter().map(|set| set.sample.summary()).collect();
    let mut out = String::new();
    if !options.quiet {
        for (index, set) in sets.iter().enumerate() {
            let _ = writeln!(out, "{} {}", symbol(index + 1), set.name);
        }
    }
    if options.plot {
        out.push_str(&render_plot(sets, &summaries, options));
    }
    if !options.quiet {
        out.push_str(TABLE_HEADER);
    }
    let Some(first) = sets.first() else {
        return out;
    };
    for (index, (set, summary)) in sets.iter().zip(&summaries).enumerate() {
        out.push_str(&table_row(index, summary));
        if index > 0 && options.compare {
            let outcome = compare_sets(first.sample, set.sample, options.confidence, options.test);
            out.push_str(&outcome.verdict());
        }
    }
    out
}

/// The table header line.
pub const TABLE_HEADER: &str =
    "    N           Min           Max        Median           Avg        Stddev\n";

/// One table row: `%c %3zu %13.8g %13.8g %13.8g %13.8g %13.8g`.
#[must_use]
pub fn table_row(index: usize, summary: &Summary) -> String {
    let mut row = format!("{} {:>3}", symbol(index + 1), summary.n);
    for value in [
        summary.min,
        summary.max,
        summary.median,
        summary.mean,
        summary.stddev,
    ] {
        row.push(' ');
        row.push_str(&format_g_width(value, 13, 8));
    }
    row.push('\n');
    row
}

fn symbol(value: usize) -> char {
    char::from(SYMBOLS[value % SYMBOLS.len()])
}

/// C's `(int)` conversion of a double as x86 performs it for in-range values; NaN maps to 0.
fn cell(value: f64) -> i64 {
    value as i64
}

/// The plot frame with points and bars, or ministat's zero-span notice.
fn render_plot(sets: &[Dataset<'_>], summaries: &[Summary], options: &Options) -> String {
    let width = options.width;
    // ministat starts from ±999e99, so values beyond that never move the edges.
    let (mut min, mut max) = (999e99_f64, -999e99_f64);
    for s in summaries {
        for value in [s.min, s.max, s.mean - s.stddev, s.mean + s.stddev] {
            if value < min {
                min = value;
            }
            if value > max {
                max = value;
            }
        }
    }
    let span = max - min;
    if span == 0.0 {
        return "[no plot, span is zero width]\n".to_owned();
    }
    let dx = span / (width as f64 - 1.0);
    let x0 = min - 0.5 * dx;
    let column = |value: f64| cell((value - x0) / dx);

    let mut grid = Grid::new(width);
    let mut bars: Vec<Option<Vec<u8>>> = vec![None; sets.len()];
    for (index, (set, summary)) in sets.iter().zip(summaries).enumerate() {
        let value = u8::try_from(index + 1).unwrap_or(u8::MAX) & 7;
        grid.plot(set.sample.sorted(), value, &column);
        let bar_index = if options.separate_bars { index } else { 0 };
        let bar = bars[bar_index].get_or_insert_with(|| vec![0; width]);
        draw_bar(bar, summary, &column);
    }

    let mut out = String::new();
    let frame = format!("+{}+\n", "-".repeat(width));
    out.push_str(&frame);
    grid.dump(&mut out);
    for bar in bars.iter().flatten() {
        out.push('|');
        out.extend(
            bar.iter()
                .map(|&b| if b == 0 { ' ' } else { char::from(b) }),
        );
        out.push_str("|\n");
    }
    out.push_str(&frame);
    out
}

/// Writes `mark` into `bar` at `index` when it lies inside (ministat writes unchecked).
fn put(bar: &mut [u8], index: i64, mark: u8) {
    if let Some(slot) = usize::try_from(index).ok().and_then(|i| bar.get_mut(i)) {
        *slot = mark;
    }
}

/// The `|____M___A____|` line: stddev edges, underscores between (not over earlier marks),
/// then the median and the mean, the mean winning a shared cell.
fn draw_bar(bar: &mut [u8], summary: &Summary, column: &impl Fn(f64) -> i64) {
    let (mean, sd) = (summary.mean, summary.stddev);
    if !sd.is_nan() {
        let left = column(mean - sd);
        let right = column(mean + sd);
        put(bar, right, b'|');
        put(bar, left, b'|');
        let start = usize::try_from(left.saturating_add(1)).unwrap_or(0);
        let end = usize::try_from(right).unwrap_or(0).min(bar.len());
        for slot in bar.iter_mut().take(end).skip(start) {
            if *slot == 0 {
                *slot = b'_';
            }
        }
    }
    put(bar, column(summary.median), b'M');
    put(bar, column(mean), b'A');
}

/// The point rows. Row j (1-based, bottom up) of a cell holds the j-th point falling in it.
struct Grid {
    width: usize,
    /// Rows × width cells, row 0 unused, as ministat allocates them.
    cells: Vec<u8>,
    /// ministat's "height": rows + 1, taken from the LAST set plotted.
    height: usize,
}

impl Grid {
    fn new(width: usize) -> Self {
        Self {
            width,
            cells: Vec::new(),
            height: 0,
        }
    }

    fn plot(&mut self, sorted: &[f64], value: u8, column: &impl Fn(f64) -> i64) {
        // Tallest stack of this set (consecutive sorted points in one cell).
        let mut tallest = 1_usize;
        let mut previous = -1_i64;
        let mut run = 0_usize;
        for &point in sorted {
            let x = column(point);
            if x == previous {
                run += 1;
                tallest = tallest.max(run);
            } else {
                run = 1;
                previous = x;
            }
        }
        let rows = tallest + 1;
        if rows > self.height {
            // realloc keeps what fits; the new rows above the old height are cleared.
            self.cells.resize(self.width * rows, 0);
            self.cells.truncate(self.width * rows);
            for cell in &mut self.cells[self.height * self.width..] {
                *cell = 0;
            }
        }
        self.height = rows;
        previous = -1;
        for &point in sorted {
            let x = column(point);
            if x == previous {
                run += 1;
            } else {
                run = 1;
                previous = x;
            }
            if let Ok(x) = usize::try_from(x) {
                if x < self.width {
                    if let Some(cell) = self.cells.get_mut(run * self.width + x) {
                        *cell |= value;
                    }
                }
            }
        }
    }

    fn dump(&self, out: &mut String) {
        for row in (1..self.height).rev() {
            out.push('|');
            let start = row * self.width;
            for &cell in self.cells.get(start..start + self.width).unwrap_or(&[]) {
                out.push(char::from(SYMBOLS[usize::from(cell & 7)]));
            }
            out.push_str("|\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render_values(sets: &[&[f64]], options: &Options) -> String {
        let samples: Vec<Sample> = sets.iter().map(|v| Sample::new(v.to_vec())).collect();
        let names = ["a", "b", "c", "d", "e", "f", "g"];
        let datasets: Vec<Dataset<'_>> = samples
            .iter()
            .zip(names)
            .map(|(sample, name)| Dataset { name, sample })
            .collect();
        render(&datasets, options)
    }

    #[test]
    fn single_set_matches_ministat() {
        // Debian's ministat prints this with its upper-middle median (3) as an M right of
        // the A; current FreeBSD's median is 2.5, the mean, so the A covers the M.
        let expected = "\
x a
+--------------------------------------------------------------------------+
|x                       x                        x                       x|
|     |_______________________________A______________________________|     |
+--------------------------------------------------------------------------+
    N           Min           Max        Median           Avg        Stddev
x   4             1             4           2.5           2.5     1.2909944
";
        let got = render_values(&[&[1.0, 2.0, 3.0, 4.0]], &Options::default());
        assert_eq!(got, expected);
    }

    #[test]
    fn zero_span_and_quiet() {
        let options = Options {
            quiet: true,
            ..Options::default()
        };
        let got = render_values(&[&[5.0, 5.0, 5.0]], &options);
        assert_eq!(
            got,
            "[no plot, span is zero width]\nx   3             5             5             5             5             0\n"
        );
    }

    #[test]
    fn width_zero_and_one_do_not_panic() {
        for width in [0, 1, 2, 3] {
            let options = Options {
                width,
                ..Options::default()
            };
            let got = render_values(&[&[1.0, 2.0, 3.0, 4.0], &[2.0, 9.0, 9.0]], &options);
            assert!(got.contains(&format!("+{}+\n", "-".repeat(width))));
        }
    }
}
