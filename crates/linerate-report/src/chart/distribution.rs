//! A response-time distribution: the share of requests per fixed-width bin over the
//! cumulative share (CDF), for one data set or two overlaid (`logdist --compare`: their bars
//! side by side within each bin, their CDFs on one axis).

use plotters::prelude::*;

use super::{FONT, PALETTE, err, legend, mesh, render};
use crate::{Chart, ReportError};

/// One fixed-width bin `[from_s, to_s)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DistributionBin {
    /// Lower edge, seconds.
    pub from_s: f64,
    /// Upper edge (exclusive), seconds.
    pub to_s: f64,
    /// Share of all samples in it, in `[0, 1]`.
    pub share: f64,
}

/// One data set's distribution.
#[derive(Debug, Clone, PartialEq)]
pub struct DistributionSeries {
    /// Its legend entry; empty for a lone distribution (the captions name it).
    pub label: String,
    /// The bin width, seconds.
    pub bin_s: f64,
    /// The regular bins, in order from 0.
    pub bins: Vec<DistributionBin>,
    /// The share beyond the last bin's upper edge (not drawn; the axis says how much).
    pub overflow_share: f64,
}

/// The histogram (top) over the CDF (bottom), 900 × 700 pixels. Two series or more get
/// distinct colours, bars side by side and a legend; the x axis ends at the widest series'
/// last bin, and a share above it is stated under the axis rather than drawn.
pub fn distribution(
    series: &[DistributionSeries],
    name: &str,
    title: &str,
) -> Result<Chart, ReportError> {
    if series.is_empty() {
        return Err(ReportError::NoData(format!("{title}: no distribution")));
    }
    let max_s = series
        .iter()
        .flat_map(|s| s.bins.last().map(|b| b.to_s))
        .fold(0.0, f64::max)
        .max(1e-9);
    let tallest = series
        .iter()
        .flat_map(|s| s.bins.iter().map(|b| b.share * 100.0))
        .fold(0.0, f64::max)
        .max(1.0);
    let labelled = series.iter().any(|s| !s.label.is_empty());
    // Room above the tallest bar for the legend rows.
    #[allow(clippy::cast_precision_loss)]
    let headroom = if labelled {
        1.1 + 0.075 * series.len() as f64
    } else {
        1.05
    };
    let overflow = series
        .iter()
        .filter(|s| s.overflow_share > 0.0)
        .map(|s| {
            let share = format!("{:.2} %", s.overflow_share * 100.0);
            if s.label.is_empty() {
                share
            } else {
                format!("{} {share}", s.label)
            }
        })
        .collect::<Vec<_>>();
    let x_desc = if overflow.is_empty() {
        "response time (s)".to_owned()
    } else {
        format!(
            "response time (s); above {} s: {} (not drawn)",
            super::tick(max_s),
            overflow.join(", ")
        )
    };
    let colour = |i: usize| PALETTE[[0, 5, 2, 3, 1, 4][i % 6]];
    render(name.to_owned(), title.to_owned(), (900, 700), |root| {
        let (top, bottom) = root.split_vertically(350);
        let mut hist = ChartBuilder::on(&top)
            .caption(title, (FONT, 20))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..max_s, 0.0..tallest * headroom)
            .map_err(err)?;
        mesh(&mut hist, &x_desc, "requests (%)", None)?;
        #[allow(clippy::cast_precision_loss)]
        let n = series.len() as f64;
        for (i, s) in series.iter().enumerate() {
            let fill = colour(i).mix(0.8).filled();
            let width = s.bin_s / n;
            #[allow(clippy::cast_precision_loss)]
            let offset = width * i as f64;
            let drawn = hist
                .draw_series(s.bins.iter().filter(|b| b.share > 0.0).map(|b| {
                    Rectangle::new(
                        [
                            (b.from_s + offset, 0.0),
                            (b.from_s + offset + width, b.share * 100.0),
                        ],
                        fill,
                    )
                }))
                .map_err(err)?;
            if !s.label.is_empty() {
                drawn
                    .label(s.label.clone())
                    .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 22, y + 6)], fill));
            }
        }
        if labelled {
            legend(&mut hist, SeriesLabelPosition::UpperRight)?;
        }

        let mut cdf = ChartBuilder::on(&bottom)
            .caption("Cumulative share (CDF)", (FONT, 20))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..max_s, 0.0..100.0)
            .map_err(err)?;
        mesh(
            &mut cdf,
            "response time (s)",
            "requests at or below (%)",
            None,
        )?;
        for (i, s) in series.iter().enumerate() {
            let style = colour(i).stroke_width(2);
            let mut cumulative = 0.0;
            let points = std::iter::once((0.0, 0.0)).chain(s.bins.iter().map(|b| {
                cumulative += b.share * 100.0;
                (b.to_s, cumulative.min(100.0))
            }));
            let drawn = cdf
                .draw_series(LineSeries::new(points, style))
                .map_err(err)?;
            if !s.label.is_empty() {
                drawn
                    .label(s.label.clone())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], style));
            }
        }
        // A CDF climbs from lower left to upper right: the lower right corner is free.
        if labelled {
            legend(&mut cdf, SeriesLabelPosition::LowerRight)?;
        }
        Ok(())
    })
}
