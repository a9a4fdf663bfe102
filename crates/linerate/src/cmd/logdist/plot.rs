//! `--svg` and `--png`: the histogram (share of requests per bin) over the CDF, one series per
//! data set, drawn with `plotters` as SVG; PNG is that SVG rasterised by the report crate
//! (which needs a system font, Debian: `fonts-dejavu-core`). Files are written to a temporary
//! name beside the target and renamed, so a failed run never leaves half a picture.

use std::path::Path;

use anyhow::{Context, anyhow};
use plotters::prelude::*;

use super::report::Summary;

const SIZE: (u32, u32) = (900, 700);
const COLORS: [RGBColor; 2] = [RGBColor(0x1f, 0x77, 0xb4), RGBColor(0xd6, 0x27, 0x28)];

/// Draws into any backend.
fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    sets: &[(&str, &Summary)],
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("drawing the chart: {e}");
    root.fill(&WHITE).map_err(fail)?;
    let (top, bottom) = root.split_vertically(SIZE.1 / 2);
    let max_s = sets
        .iter()
        .map(|(_, s)| s.histogram.max_s)
        .fold(0.0, f64::max)
        .max(1e-9);
    let tallest = sets
        .iter()
        .flat_map(|(_, s)| s.histogram.bins.iter().map(|b| b.share * 100.0))
        .fold(0.0, f64::max)
        .max(1.0);

    let mut hist = ChartBuilder::on(&top)
        .caption(
            "Response times: share of requests per bin",
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..max_s, 0.0..tallest * 1.05)
        .map_err(fail)?;
    hist.configure_mesh()
        .x_desc("response time (s)")
        .y_desc("requests (%)")
        .draw()
        .map_err(fail)?;
    let n = sets.len() as f64;
    for (i, (name, s)) in sets.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let width = s.histogram.bin_s / n;
        let offset = width * i as f64;
        let series = hist
            .draw_series(
                s.histogram
                    .bins
                    .iter()
                    .filter(|b| b.to_s.is_some() && b.count > 0)
                    .map(move |b| {
                        Rectangle::new(
                            [
                                (b.from_s + offset, 0.0),
                                (b.from_s + offset + width, b.share * 100.0),
                            ],
                            color.mix(0.75).filled(),
                        )
                    }),
            )
            .map_err(fail)?;
        if !name.is_empty() {
            series.label(*name).legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled())
            });
        }
    }
    if sets.iter().any(|(name, _)| !name.is_empty()) {
        hist.configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(fail)?;
    }

    let mut cdf = ChartBuilder::on(&bottom)
        .caption("Cumulative share (CDF)", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..max_s, 0.0..100.0)
        .map_err(fail)?;
    cdf.configure_mesh()
        .x_desc("response time (s)")
        .y_desc("requests at or below (%)")
        .draw()
        .map_err(fail)?;
    for (i, (name, s)) in sets.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let mut points = vec![(0.0, 0.0)];
        let mut cumulative = 0.0;
        for b in s.histogram.bins.iter().filter(|b| b.to_s.is_some()) {
            cumulative += b.share * 100.0;
            points.push((b.to_s.unwrap_or(b.from_s), cumulative));
        }
        let series = cdf
            .draw_series(LineSeries::new(points, color.stroke_width(2)))
            .map_err(fail)?;
        if !name.is_empty() {
            series
                .label(*name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], color));
        }
    }
    if sets.iter().any(|(name, _)| !name.is_empty()) {
        cdf.configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(fail)?;
    }
    root.present().map_err(fail)?;
    Ok(())
}

fn extension(path: &Path) -> String {
    path.extension()
        .map_or_else(|| "png".to_owned(), |e| e.to_string_lossy().into_owned())
}

fn svg(sets: &[(&str, &Summary)]) -> anyhow::Result<String> {
    let mut text = String::new();
    draw(
        SVGBackend::with_string(&mut text, SIZE).into_drawing_area(),
        sets,
    )?;
    Ok(text)
}

/// Writes `path` whole or not at all (linerate-sys's `atomic_write`); the error names `path`,
/// the file the user asked for.
fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    linerate_sys::atomic_write(path, bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Writes an SVG chart atomically.
pub fn write_svg(path: &Path, sets: &[(&str, &Summary)]) -> anyhow::Result<()> {
    write_atomically(path, svg(sets)?.as_bytes())
}

/// Writes a PNG chart atomically.
pub fn write_png(path: &Path, sets: &[(&str, &Summary)]) -> anyhow::Result<()> {
    if !extension(path).eq_ignore_ascii_case("png") {
        anyhow::bail!("--png {}: the file name must end in .png", path.display());
    }
    let png = linerate_report::png::svg_to_png(&svg(sets)?, 1.0)
        .with_context(|| format!("cannot draw {}", path.display()))?;
    write_atomically(path, &png)
}

/// Writes whichever charts were asked for.
pub fn write_requested(
    svg: Option<&Path>,
    png: Option<&Path>,
    sets: &[(&str, &Summary)],
) -> anyhow::Result<()> {
    if let Some(path) = svg {
        write_svg(path, sets)?;
    }
    if let Some(path) = png {
        write_png(path, sets)?;
    }
    Ok(())
}
