//! RFC 2544 throughput against frame size: NDR and PDR in frames/s per frame size (`lab
//! rfc2544`), one point per size, the sizes on a logarithmic axis (64 to 1518 bytes and more).

use plotters::prelude::*;

use super::{Chart, FONT, PALETTE, err, legend, mesh, render, text_width, tick};
use crate::ReportError;

/// One frame size's result.
#[derive(Debug, Clone, PartialEq)]
pub struct FramePoint {
    /// `64`, `imix`.
    pub label: String,
    /// L2 bytes per frame (the mean for a mix): the x position.
    pub bytes: f64,
    /// NDR, frames/s.
    pub ndr_pps: f64,
    /// PDR, frames/s.
    pub pdr_pps: f64,
    /// The result is the generator's, not the DUT's.
    pub generator_bound: bool,
}

/// (divisor, unit) for frame rates.
fn pps_scale(max: f64) -> (f64, &'static str) {
    if max >= 1e6 {
        (1e6, "Mpps")
    } else if max >= 1e3 {
        (1e3, "kpps")
    } else {
        (1.0, "pps")
    }
}

/// NDR and PDR (frames/s) against frame size.
pub fn ndr_pdr(points: &[FramePoint], name: &str, title: &str) -> Result<Chart, ReportError> {
    let mut points: Vec<FramePoint> = points
        .iter()
        .filter(|p| p.bytes.is_finite() && p.bytes > 0.0)
        .cloned()
        .collect();
    points.sort_by(|a, b| a.bytes.total_cmp(&b.bytes));
    if points.is_empty() {
        return Err(ReportError::NoData(format!(
            "{title}: no frame size measured"
        )));
    }
    let lo = points.first().map_or(64.0, |p| p.bytes);
    let hi = points.last().map_or(1518.0, |p| p.bytes).max(lo * 2.0);
    let max = points
        .iter()
        .map(|p| p.pdr_pps.max(p.ndr_pps))
        .fold(0.0_f64, f64::max);
    let (div, unit) = pps_scale(max);
    let top = if max > 0.0 { max / div * 1.25 } else { 1.0 };
    let y_desc = format!("frames/s ({unit})");
    render(name.to_owned(), title.to_owned(), (900, 420), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 20))
            .margin(12)
            .x_label_area_size(52)
            .y_label_area_size(text_width(&tick(top), 14).max(40) + 30)
            .build_cartesian_2d(((lo / 1.4)..(hi * 1.4)).log_scale(), 0.0..top)
            .map_err(err)?;
        mesh(
            &mut chart,
            "frame size (bytes, FCS included)",
            &y_desc,
            Some(6),
        )?;
        for (i, (what, pick)) in [
            (
                "NDR (no loss)",
                (|p: &FramePoint| p.ndr_pps) as fn(&FramePoint) -> f64,
            ),
            ("PDR", |p: &FramePoint| p.pdr_pps),
        ]
        .into_iter()
        .enumerate()
        {
            let colour = PALETTE[i];
            chart
                .draw_series(LineSeries::new(
                    points.iter().map(|p| (p.bytes, pick(p) / div)),
                    colour.stroke_width(2),
                ))
                .map_err(err)?
                .label(what)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 22, y)], colour.stroke_width(2))
                });
            chart
                .draw_series(
                    points
                        .iter()
                        .map(|p| Circle::new((p.bytes, pick(p) / div), 4, colour.filled())),
                )
                .map_err(err)?;
        }
        // Each size named at its NDR point, "(!)" when generator-bound.
        chart
            .draw_series(points.iter().map(|p| {
                let label = if p.generator_bound {
                    format!("{} (!)", p.label)
                } else {
                    p.label.clone()
                };
                Text::new(label, (p.bytes, p.ndr_pps / div), (FONT, 13))
            }))
            .map_err(err)?;
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_both_series_with_labelled_axes() {
        let points = [
            FramePoint {
                label: "64".into(),
                bytes: 64.0,
                ndr_pps: 120_000.0,
                pdr_pps: 125_000.0,
                generator_bound: true,
            },
            FramePoint {
                label: "imix".into(),
                bytes: 361.8,
                ndr_pps: 110_000.0,
                pdr_pps: 111_000.0,
                generator_bound: false,
            },
            FramePoint {
                label: "1518".into(),
                bytes: 1518.0,
                ndr_pps: 90_000.0,
                pdr_pps: 95_000.0,
                generator_bound: false,
            },
        ];
        let c = ndr_pdr(&points, "rfc2544", "RFC 2544").unwrap();
        for text in [
            "NDR (no loss)",
            "PDR",
            "kpps",
            "frame size",
            "64 (!)",
            "imix",
        ] {
            assert!(c.svg.contains(text), "{text} missing");
        }
        assert!(matches!(
            ndr_pdr(&[], "x", "t"),
            Err(ReportError::NoData(_))
        ));
    }
}
