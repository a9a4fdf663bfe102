//! ministat's ASCII plot: a frame, the point rows (repeated values stack upward; sets sharing
//! a cell combine by OR of their numbers), and the avg/median/stddev bar lines.
//!
//! ministat keeps the whole grid in memory (width × tallest stack, a million rows for ten
//! million points). Here each set keeps only, per column, the height of its tallest stack
//! there; rows are produced one at a time while writing. ministat's quirks are reproduced
//! exactly: the height is the LAST set's stack height + 1 (taller stacks of earlier sets are
//! cut), and when a later set grows the grid again the rows it adds are cleared of earlier
//! sets' points.

use std::io::{self, Write};

use crate::summary::Summary;

use super::SYMBOLS;

/// Maps values to plot columns as ministat does.
#[derive(Debug, Clone, Copy)]
pub(super) struct Scale {
    x0: f64,
    dx: f64,
}

impl Scale {
    /// The column of `value`: C's `(int)((value − x0) / dx)` (NaN gives 0 instead of C's
    /// undefined result).
    fn column(self, value: f64) -> i64 {
        ((value - self.x0) / self.dx) as i64
    }
}

/// One set's contribution to the plot.
struct Layer {
    /// Symbol number (set index + 1, 3 bits).
    value: u8,
    /// Per column, the highest row this set writes (0: none).
    top: Vec<usize>,
    /// The grid height (rows + 1) after this set, as ministat computes it.
    height: usize,
}

/// The plot, ready to write.
pub(super) struct Plot {
    width: usize,
    layers: Vec<Layer>,
    bars: Vec<Option<Vec<u8>>>,
}

/// Builds the plot of `sets` (sorted values with their summaries), or `None` for ministat's
/// "span is zero width".
pub(super) fn build(
    sets: &[(&[f64], &Summary)],
    width: usize,
    separate_bars: bool,
) -> Option<Plot> {
    // ministat starts from ±999e99, so values beyond that never move the edges.
    let (mut min, mut max) = (999e99_f64, -999e99_f64);
    for (_, s) in sets {
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
        return None;
    }
    let dx = span / (width as f64 - 1.0);
    let scale = Scale {
        x0: min - 0.5 * dx,
        dx,
    };
    let mut layers = Vec::with_capacity(sets.len());
    let mut bars: Vec<Option<Vec<u8>>> = vec![None; sets.len()];
    for (index, (sorted, summary)) in sets.iter().enumerate() {
        let value = u8::try_from((index + 1) & 7).unwrap_or(0);
        layers.push(layer(sorted, value, width, scale));
        let bar = bars[if separate_bars { index } else { 0 }].get_or_insert_with(|| vec![0; width]);
        draw_bar(bar, summary, scale);
    }
    Some(Plot {
        width,
        layers,
        bars,
    })
}

/// Stacks one set's sorted points: consecutive points in one column go one row up each.
fn layer(sorted: &[f64], value: u8, width: usize, scale: Scale) -> Layer {
    let mut top = vec![0_usize; width];
    let mut tallest = 1_usize;
    let mut previous = -1_i64;
    let mut run = 0_usize;
    let mut flush = |column: i64, run: usize| {
        if let Some(slot) = usize::try_from(column).ok().and_then(|c| top.get_mut(c)) {
            *slot = (*slot).max(run);
        }
    };
    for &point in sorted {
        let x = scale.column(point);
        if x == previous {
            run += 1;
            tallest = tallest.max(run);
        } else {
            if run > 0 {
                flush(previous, run);
            }
            run = 1;
            previous = x;
        }
    }
    if run > 0 {
        flush(previous, run);
    }
    Layer {
        value,
        top,
        height: tallest + 1,
    }
}

/// Writes `mark` into `bar` at `index` when it lies inside (ministat writes unchecked).
fn put(bar: &mut [u8], index: i64, mark: u8) {
    if let Some(slot) = usize::try_from(index).ok().and_then(|i| bar.get_mut(i)) {
        *slot = mark;
    }
}

/// The `|____M___A____|` line: stddev edges, underscores between (not over earlier marks),
/// then the median and the mean, the mean winning a shared cell.
fn draw_bar(bar: &mut [u8], summary: &Summary, scale: Scale) {
    let (mean, sd) = (summary.mean, summary.stddev);
    if !sd.is_nan() {
        let left = scale.column(mean - sd);
        let right = scale.column(mean + sd);
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
    put(bar, scale.column(summary.median), b'M');
    put(bar, scale.column(mean), b'A');
}

impl Plot {
    /// Writes the frame, the point rows top-down, the bar lines and the frame again.
    pub(super) fn write(&self, out: &mut impl Write) -> io::Result<()> {
        let mut frame = Vec::with_capacity(self.width + 3);
        frame.push(b'+');
        frame.resize(self.width + 1, b'-');
        frame.extend_from_slice(b"+\n");
        out.write_all(&frame)?;
        self.write_rows(out)?;
        let mut line = Vec::with_capacity(self.width + 3);
        for bar in self.bars.iter().flatten() {
            line.clear();
            line.push(b'|');
            line.extend(bar.iter().map(|&b| if b == 0 { b' ' } else { b }));
            line.extend_from_slice(b"|\n");
            out.write_all(&line)?;
        }
        out.write_all(&frame)
    }

    /// The point rows. Row r shows set s at column x when s wrote there (top ≥ r) and s was
    /// plotted after the last time row r was cleared.
    fn write_rows(&self, out: &mut impl Write) -> io::Result<()> {
        let Some(last) = self.layers.last() else {
            return Ok(());
        };
        let height = last.height;
        // first_layer[r]: the earliest layer whose points survive in row r.
        let mut first_layer = vec![0_usize; height];
        let mut grid_height = 0;
        for (index, layer) in self.layers.iter().enumerate() {
            if layer.height > grid_height {
                let cleared = grid_height.min(height)..layer.height.min(height);
                first_layer[cleared].fill(index);
            }
            grid_height = layer.height;
        }
        let mut cells = vec![0_u8; self.width];
        let mut line = Vec::with_capacity(self.width + 3);
        let mut row = height.saturating_sub(1);
        while row >= 1 {
            // Rows [block_end, row] share the same surviving layers.
            let first = first_layer[row];
            let mut block_end = row;
            while block_end > 1 && first_layer[block_end - 1] == first {
                block_end -= 1;
            }
            // (top, column, value) of the surviving layers, highest first.
            let mut events: Vec<(usize, usize, u8)> = self.layers[first..]
                .iter()
                .flat_map(|layer| {
                    layer
                        .top
                        .iter()
                        .enumerate()
                        .filter(|&(_, &top)| top >= block_end)
                        .map(move |(x, &top)| (top, x, layer.value))
                })
                .collect();
            events.sort_unstable_by_key(|&(top, _, _)| std::cmp::Reverse(top));
            cells.fill(0);
            let mut next = 0;
            for r in (block_end..=row).rev() {
                while let Some(&(top, x, value)) = events.get(next) {
                    if top < r {
                        break;
                    }
                    cells[x] |= value;
                    next += 1;
                }
                line.clear();
                line.push(b'|');
                line.extend(cells.iter().map(|&c| SYMBOLS[usize::from(c & 7)]));
                line.extend_from_slice(b"|\n");
                out.write_all(&line)?;
            }
            row = block_end - 1;
        }
        Ok(())
    }
}
