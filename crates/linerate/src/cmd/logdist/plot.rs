//! `--svg` and `--png`: the histogram (share of requests per bin) over the CDF, one series per
//! data set, drawn with `plotters` (the report crate will take this over when it lands).
//! Files are written to a temporary name beside the target and renamed, so a failed run never
//! leaves half a picture. Text needs a TrueType font from the system (Debian:
//! `fonts-dejavu-core`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, anyhow};
use plotters::prelude::*;

use super::report::Summary;

const SIZE: (u32, u32) = (900, 700);
const FONT_PATHS: [&str; 6] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
];
const COLORS: [RGBColor; 2] = [RGBColor(0x1f, 0x77, 0xb4), RGBColor(0xd6, 0x27, 0x28)];

/// Registers a system font with plotters once.
fn ensure_font() -> anyhow::Result<()> {
    static FONT: OnceLock<Result<(), String>> = OnceLock::new();
    FONT.get_or_init(|| {
        let bytes = FONT_PATHS
            .iter()
            .find_map(|p| std::fs::read(p).ok())
            .ok_or_else(|| {
                format!(
                    "no TrueType font found for the chart text (looked in {}); install \
                     fonts-dejavu-core",
                    FONT_PATHS.join(", ")
                )
            })?;
        // Read once per process and kept for its lifetime, as plotters requires.
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
            .map_err(|_| "the system font could not be read".to_owned())
    })
    .clone()
    .map_err(|e| anyhow!(e))
}

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

/// A temporary path beside `target`, keeping its extension (the PNG encoder goes by it).
fn temp_beside(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map_or_else(|| "chart".into(), |n| n.to_string_lossy().into_owned());
    target.with_file_name(format!(
        ".{name}.{}.tmp.{}",
        std::process::id(),
        extension(target)
    ))
}

fn extension(path: &Path) -> String {
    path.extension()
        .map_or_else(|| "png".to_owned(), |e| e.to_string_lossy().into_owned())
}

/// Writes an SVG chart atomically.
pub fn write_svg(path: &Path, sets: &[(&str, &Summary)]) -> anyhow::Result<()> {
    ensure_font()?;
    let mut text = String::new();
    draw(
        SVGBackend::with_string(&mut text, SIZE).into_drawing_area(),
        sets,
    )?;
    let temp = temp_beside(path);
    std::fs::write(&temp, text).with_context(|| format!("cannot write {}", temp.display()))?;
    std::fs::rename(&temp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// Writes a PNG chart atomically.
pub fn write_png(path: &Path, sets: &[(&str, &Summary)]) -> anyhow::Result<()> {
    ensure_font()?;
    if !extension(path).eq_ignore_ascii_case("png") {
        anyhow::bail!("--png {}: the file name must end in .png", path.display());
    }
    let temp = temp_beside(path);
    let result = draw(BitMapBackend::new(&temp, SIZE).into_drawing_area(), sets);
    if let Err(e) = result {
        let _ = std::fs::remove_file(&temp);
        return Err(e).with_context(|| format!("cannot write {}", path.display()));
    }
    std::fs::rename(&temp, path).with_context(|| format!("cannot write {}", path.display()))
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
