//! ministat's output, byte for byte: the legend, the ASCII plot with its avg/median/stddev
//! bars, the summary table and a verdict for each set against the first.
//!
//! Follows current FreeBSD ministat, quirks included where they shape the output (the plot
//! height is the last set's stack height, so a taller stack of an earlier set is cut; a point
//! where sets x and + coincide prints as `*`, the third set's symbol). Widths that crash
//! ministat (1) or draw nothing (0) give a frame without a crash.
#![deny(missing_docs)]

pub mod json;
mod plot;

use std::io::{self, Write};

use crate::Sample;
pub use crate::comparison::Test;
use crate::comparison::{self, TestOutcome, test_pair};
use crate::ministat_ttest::TSource;
use crate::printf::format_g_width;
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
    /// Where Student's t takes its critical value: ministat's table (the default, so `linerate
    /// stat` prints ministat's digits) or the exact quantile (linerate's own comparisons, which
    /// show ministat's layout but must agree with `lab run` digit for digit).
    pub t_source: TSource,
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
            t_source: TSource::MinistatTable,
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
) -> TestOutcome {
    compare_sets_with(baseline, other, confidence, test, TSource::MinistatTable)
}

/// Compares `other` with `baseline` with Student's t from `t_source` (ministat's table falls
/// back to the exact quantile at a level the table lacks).
fn compare_sets_with(
    baseline: &Sample,
    other: &Sample,
    confidence: Confidence,
    test: Test,
    t_source: TSource,
) -> TestOutcome {
    test_pair(
        baseline,
        other,
        &comparison::Options {
            confidence,
            test,
            t_source,
        },
    )
}

/// Renders ministat's whole output for `sets` (1 to [`MAX_SETS`]; more are rendered too, but
/// their plot symbols repeat) as a `String`.
#[must_use]
pub fn render(sets: &[Dataset<'_>], options: &Options) -> String {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write(&mut out, sets, options);
    String::from_utf8_lossy(&out).into_owned()
}

/// Writes ministat's whole output for `sets` to `out` as it is produced (the plot of ten
/// million points has a million rows; nothing holds them all).
///
/// # Errors
/// Whatever writing to `out` returns.
pub fn write(out: &mut impl Write, sets: &[Dataset<'_>], options: &Options) -> io::Result<()> {
    let summaries: Vec<Summary> = sets.iter().map(|set| set.sample.summary()).collect();
    if !options.quiet {
        for (index, set) in sets.iter().enumerate() {
            writeln!(out, "{} {}", symbol(index + 1), set.name)?;
        }
    }
    if options.plot {
        let layers: Vec<(&[f64], &Summary)> = sets
            .iter()
            .zip(&summaries)
            .map(|(set, summary)| (set.sample.sorted(), summary))
            .collect();
        match plot::build(&layers, options.width, options.separate_bars) {
            Some(plot) => plot.write(out)?,
            None => out.write_all(b"[no plot, span is zero width]\n")?,
        }
    }
    if !options.quiet {
        out.write_all(TABLE_HEADER.as_bytes())?;
    }
    let Some(first) = sets.first() else {
        return Ok(());
    };
    for (index, (set, summary)) in sets.iter().zip(&summaries).enumerate() {
        out.write_all(table_row(index, summary).as_bytes())?;
        if index > 0 && options.compare {
            let outcome = compare_sets_with(
                first.sample,
                set.sample,
                options.confidence,
                options.test,
                options.t_source,
            );
            out.write_all(outcome.verdict().as_bytes())?;
        }
    }
    Ok(())
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
