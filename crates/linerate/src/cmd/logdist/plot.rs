//! `--svg` and `--png`: the histogram (share of requests per bin) over the CDF, one series per
//! data set, drawn by `linerate-report` as SVG; PNG is that SVG rasterised by the report crate
//! (which needs a system font, Debian: `fonts-dejavu-core`). Files are written to a temporary
//! name beside the target and renamed, so a failed run never leaves half a picture.

use std::path::Path;

use anyhow::Context;
use linerate_logdist::Summary;
use linerate_report::chart::{self, DistributionBin, DistributionSeries};

/// A data set as the chart draws it: its regular bins, and the share beyond them.
fn series(label: &str, summary: &Summary) -> DistributionSeries {
    let histogram = &summary.histogram;
    DistributionSeries {
        label: label.to_owned(),
        bin_s: histogram.bin_s,
        bins: histogram
            .bins
            .iter()
            .filter_map(|b| {
                Some(DistributionBin {
                    from_s: b.from_s,
                    to_s: b.to_s?,
                    share: b.share,
                })
            })
            .collect(),
        overflow_share: histogram
            .bins
            .iter()
            .filter(|b| b.to_s.is_none())
            .map(|b| b.share)
            .sum(),
    }
}

fn extension(path: &Path) -> String {
    path.extension()
        .map_or_else(|| "png".to_owned(), |e| e.to_string_lossy().into_owned())
}

fn svg(sets: &[(&str, &Summary)]) -> anyhow::Result<String> {
    let series: Vec<DistributionSeries> = sets.iter().map(|(l, s)| series(l, s)).collect();
    let drawn = chart::distribution(
        &series,
        "logdist",
        "Response times: share of requests per bin",
    )
    .context("drawing the chart")?;
    Ok(drawn.svg)
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
