//! RFC 2544 throughput against frame size: NDR and PDR in frames/s per frame size (`lab
//! rfc2544`), one point per size, the sizes on a logarithmic axis (64 to 1518 bytes and more);
//! one pair of lines per series when the points belong to several (`lab run`'s variants).

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
    /// The series it belongs to (a variant of `lab run`); empty when there is one.
    pub series: String,
}

/// Said in the caption when the two series are one line.
const SAME_NOTE: &str = "(PDR = NDR at every size)";

/// Whether PDR equals NDR at every size (a generator-bound lab: nothing was lost below the
/// generator's ceiling, so both goals end at the same load).
fn pdr_is_ndr(points: &[FramePoint]) -> bool {
    points
        .iter()
        .all(|p| (p.pdr_pps - p.ndr_pps).abs() <= 1e-9 * p.pdr_pps.abs().max(p.ndr_pps.abs()))
}

/// NDR and PDR (frames/s) against frame size. PDR is drawn first, dashed, thicker and with
/// hollow squares, and NDR over it, thin, solid and with filled dots, so that where the two
/// coincide both stay visible; when they coincide at every size the caption says so.
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
    let caption = if pdr_is_ndr(&points) {
        format!("{title} {SAME_NOTE}")
    } else {
        title.to_owned()
    };
    let lo = points.first().map_or(64.0, |p| p.bytes);
    let hi = points.last().map_or(1518.0, |p| p.bytes).max(lo * 2.0);
    let max = points
        .iter()
        .map(|p| p.pdr_pps.max(p.ndr_pps))
        .fold(0.0_f64, f64::max);
    let (div, unit) = crate::unit::Unit::PacketRate.axis(max);
    let top = if max > 0.0 { max / div * 1.25 } else { 1.0 };
    let y_desc = format!("frames/s ({unit})");
    // One pair of lines per series, in the order first seen; a lone series keeps the plain
    // names.
    let mut series: Vec<&str> = Vec::new();
    for p in &points {
        if !series.contains(&p.series.as_str()) {
            series.push(&p.series);
        }
    }
    let named = series.len() > 1;
    render(name.to_owned(), caption.clone(), (900, 420), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(&caption, (FONT, 20))
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
        for (k, name) in series.iter().enumerate() {
            let ndr_colour = PALETTE[(2 * k) % PALETTE.len()];
            let pdr_colour = PALETTE[(2 * k + 1) % PALETTE.len()];
            let of = |label: &str| {
                if named {
                    format!("{label} · {name}")
                } else {
                    label.to_owned()
                }
            };
            let points: Vec<&FramePoint> = points.iter().filter(|p| p.series == *name).collect();
            // PDR underneath: dashed, 4 px, hollow squares of 12 px.
            let pdr_line = pdr_colour.stroke_width(PDR_WIDTH);
            chart
                .draw_series(DashedLineSeries::new(
                    points.iter().map(|p| (p.bytes, p.pdr_pps / div)),
                    10,
                    6,
                    pdr_line,
                ))
                .map_err(err)?
                .label(of("PDR"))
                .legend(move |(x, y)| {
                    EmptyElement::at((x, y))
                        + PathElement::new(vec![(0, 0), (8, 0)], pdr_line)
                        + PathElement::new(vec![(14, 0), (22, 0)], pdr_line)
                        + square(11, pdr_colour)
                });
            chart
                .draw_series(
                    points.iter().map(|p| {
                        EmptyElement::at((p.bytes, p.pdr_pps / div)) + square(0, pdr_colour)
                    }),
                )
                .map_err(err)?;
            // NDR on top: solid, 2 px, filled dots.
            chart
                .draw_series(LineSeries::new(
                    points.iter().map(|p| (p.bytes, p.ndr_pps / div)),
                    ndr_colour.stroke_width(NDR_WIDTH),
                ))
                .map_err(err)?
                .label(of("NDR (no loss)"))
                .legend(move |(x, y)| {
                    EmptyElement::at((x, y))
                        + PathElement::new(
                            vec![(0, 0), (22, 0)],
                            ndr_colour.stroke_width(NDR_WIDTH),
                        )
                        + Circle::new((11, 0), 4, ndr_colour.filled())
                });
            chart
                .draw_series(
                    points
                        .iter()
                        .map(|p| Circle::new((p.bytes, p.ndr_pps / div), 4, ndr_colour.filled())),
                )
                .map_err(err)?;
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
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    })
}

/// Stroke widths: PDR's dashes wider than NDR's line, which runs inside them where they meet.
const PDR_WIDTH: u32 = 4;
const NDR_WIDTH: u32 = 2;

/// A hollow square of 12 px centred `dx` pixels right of its anchor (PDR's marker).
fn square(dx: i32, colour: RGBColor) -> Rectangle<(i32, i32)> {
    Rectangle::new([(dx - 6, -6), (dx + 6, 6)], colour.stroke_width(2))
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
                series: String::new(),
            },
            FramePoint {
                label: "imix".into(),
                bytes: 361.8,
                ndr_pps: 110_000.0,
                pdr_pps: 111_000.0,
                generator_bound: false,
                series: String::new(),
            },
            FramePoint {
                label: "1518".into(),
                bytes: 1518.0,
                ndr_pps: 90_000.0,
                pdr_pps: 95_000.0,
                generator_bound: false,
                series: String::new(),
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

    fn point(label: &str, bytes: f64, ndr: f64, pdr: f64) -> FramePoint {
        FramePoint {
            label: label.into(),
            bytes,
            ndr_pps: ndr,
            pdr_pps: pdr,
            generator_bound: false,
            series: String::new(),
        }
    }

    fn hex(c: RGBColor) -> String {
        format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
    }

    /// SVG elements (`<polyline`, `<circle`, `<rect`) of `colour` with `attr` among their
    /// attributes.
    fn count(svg: &str, element: &str, colour: RGBColor, attr: &str) -> usize {
        let colour = hex(colour);
        svg.split('<')
            .filter(|e| e.starts_with(element))
            .filter(|e| e.to_uppercase().contains(&colour) && e.contains(attr))
            .count()
    }

    #[test]
    fn pdr_equal_to_ndr_stays_visible_under_it_and_the_caption_says_so() {
        let sizes = [("64", 64.0), ("512", 512.0), ("1518", 1518.0)];
        let same: Vec<_> = sizes
            .iter()
            .map(|&(l, b)| point(l, b, 300_000.0 - b * 10.0, 300_000.0 - b * 10.0))
            .collect();
        let c = ndr_pdr(&same, "rfc2544", "NDR and PDR").unwrap();
        assert!(c.svg.contains(SAME_NOTE), "no note");
        assert_eq!(c.title, format!("NDR and PDR {SAME_NOTE}"));
        let (ndr, pdr) = (PALETTE[0], PALETTE[1]);
        // NDR: one solid 2 px line; PDR: dashes of 4 px (many short lines, one per dash).
        assert_eq!(
            count(&c.svg, "polyline", ndr, "stroke-width=\"2\""),
            2,
            "{}",
            c.svg
        );
        assert!(
            count(&c.svg, "polyline", pdr, "stroke-width=\"4\"") > 10,
            "{}",
            c.svg
        );
        assert_eq!(count(&c.svg, "polyline", pdr, "stroke-width=\"2\""), 0);
        // Markers of different shapes: NDR filled dots, PDR hollow squares (and one of each in
        // the legend).
        assert_eq!(count(&c.svg, "circle", ndr, "fill=\"#"), 4, "{}", c.svg);
        assert_eq!(count(&c.svg, "rect", pdr, "fill=\"none\""), 4, "{}", c.svg);
        // NDR is drawn after PDR: on top where they coincide.
        let first = |colour| c.svg.to_uppercase().find(&hex(colour)).unwrap();
        assert!(first(pdr) < first(ndr));
    }

    #[test]
    fn the_note_appears_only_when_pdr_equals_ndr_everywhere() {
        let mut points = vec![
            point("64", 64.0, 200_000.0, 200_000.0),
            point("1518", 1518.0, 80_000.0, 80_000.0),
        ];
        assert!(ndr_pdr(&points, "x", "t").unwrap().svg.contains(SAME_NOTE));
        // One size where PDR is above NDR: two lines, no note.
        points[1].pdr_pps = 81_000.0;
        let c = ndr_pdr(&points, "x", "t").unwrap();
        assert!(!c.svg.contains(SAME_NOTE));
        assert_eq!(c.title, "t");
        assert!(c.svg.contains("PDR") && c.svg.contains("NDR (no loss)"));
    }

    #[test]
    fn several_series_each_get_their_lines_and_names() {
        let mut a = point("64", 64.0, 500_000.0, 510_000.0);
        a.series = "no-firewall".into();
        let mut b = point("64", 64.0, 300_000.0, 320_000.0);
        b.series = "conntrack".into();
        let c = ndr_pdr(&[a, b], "x", "t").unwrap();
        for text in ["NDR (no loss) · no-firewall", "PDR · conntrack"] {
            assert!(c.svg.contains(text), "{text} missing");
        }
        // The second series in its own colours.
        assert!(
            count(&c.svg, "circle", PALETTE[2], "fill=\"#") >= 1,
            "{}",
            c.svg
        );
    }
}
