//! Charts drawn with plotters into SVG strings (and rasterised to PNG by [`crate::png`]).
//!
//! Readability rules every chart follows: axes carry their quantity and unit, every series
//! has a legend entry (or the chart has one series and a caption that names it), the y range
//! leaves headroom so the legend never sits on the data, and label areas are sized from the
//! longest label so nothing overlaps.

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::ReportError;
use crate::metric::{Metric, Step};
use crate::unit::Unit;
use linerate_store::{Direction, Latency, RunRecord};

mod distribution;
pub(crate) mod frames;

pub use distribution::{DistributionBin, DistributionSeries, distribution};
pub use frames::{FramePoint, ndr_pdr};

/// One chart: a name for files (`run-3-throughput`) and its SVG text.
#[derive(Debug, Clone)]
pub struct Chart {
    /// File stem: letters, digits and dashes.
    pub name: String,
    /// What the chart shows, for captions and alt text.
    pub title: String,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The SVG document.
    pub svg: String,
}

/// A bar of a comparison chart: one variant (or run) with its mean and confidence interval,
/// in the comparison's metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// The label under the bar.
    pub label: String,
    /// The mean.
    pub mean: f64,
    /// The confidence interval of the mean.
    pub ci: Option<(f64, f64)>,
}

/// A point of a sweep curve, in the experiment's metric.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPoint {
    /// The swept parameter's value.
    pub x: f64,
    /// The mean.
    pub mean: f64,
    /// Its confidence interval.
    pub ci: Option<(f64, f64)>,
}

/// One line of a sweep chart: a variant's means at each swept value (a grid sweep such as
/// tun-mtu × cipher has one per cipher; a plain sweep has one).
#[derive(Debug, Clone, PartialEq)]
pub struct SweepSeries {
    /// The legend entry (`AES-256-GCM`; `mean` for a plain sweep).
    pub name: String,
    /// The points.
    pub points: Vec<SweepPoint>,
}

impl SweepSeries {
    /// The one line of a plain sweep.
    pub fn single(points: Vec<SweepPoint>) -> SweepSeries {
        SweepSeries {
            name: "mean".to_owned(),
            points,
        }
    }
}

/// Okabe–Ito colours: distinguishable with the common colour-vision deficiencies.
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
];

const FONT: &str = "sans-serif";
const AXIS: RGBColor = RGBColor(60, 60, 60);

fn err<E: std::fmt::Display>(e: E) -> ReportError {
    ReportError::Chart(e.to_string())
}

fn render(
    name: String,
    title: String,
    (width, height): (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), ReportError>,
) -> Result<Chart, ReportError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        draw(&root)?;
        root.present().map_err(err)?;
    }
    Ok(Chart {
        name,
        title,
        width,
        height,
        svg,
    })
}

/// Pixels a label needs at `size`-pixel sans-serif (an upper estimate: browsers' fonts vary).
fn text_width(text: &str, size: u32) -> u32 {
    let chars = u32::try_from(text.chars().count()).unwrap_or(u32::MAX);
    chars.saturating_mul(size * 62 / 100) + 8
}

/// "3.50" → "3.5", "4.00" → "4": tick labels without noise.
fn tick(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.to_owned() }
}

/// One line of a chart over time: points (seconds, value), how it is drawn, and its legend
/// entry (none for lines that share one).
struct TimeLine {
    points: Vec<(f64, f64)>,
    style: ShapeStyle,
    label: Option<String>,
}

/// Draws lines over time on one chart: time axis from 0, a `unit` axis at the scale that suits
/// the data, and headroom above the data for the legend box.
fn time_chart(
    name: &str,
    title: &str,
    height: u32,
    (y_quantity, unit): (&str, Unit),
    lines: &[TimeLine],
) -> Result<Chart, ReportError> {
    let points = || lines.iter().flat_map(|l| l.points.iter());
    let max_x = points().map(|p| p.0).fold(0.0_f64, f64::max).max(1.0);
    let max_y = points().map(|p| p.1).fold(0.0_f64, f64::max);
    let (div, unit) = unit.axis(max_y);
    // ≈ 20 px per legend row of a 330 px plot.
    let legend_rows = lines.iter().filter(|l| l.label.is_some()).count();
    #[allow(clippy::cast_precision_loss)]
    let headroom = 1.1 + 0.075 * legend_rows as f64;
    let top = if max_y > 0.0 {
        max_y / div * headroom
    } else {
        1.0
    };
    let y_label_width = text_width(&tick(top), 15) + 34;
    render(name.to_owned(), title.to_owned(), (900, height), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 20))
            .margin(14)
            .x_label_area_size(50)
            .y_label_area_size(y_label_width)
            .build_cartesian_2d(0.0..max_x, 0.0..top)
            .map_err(err)?;
        mesh(
            &mut chart,
            "time since start (s)",
            &format!("{y_quantity} ({unit})"),
            None,
        )?;
        for line in lines {
            let pts: Vec<(f64, f64)> = line.points.iter().map(|&(x, y)| (x, y / div)).collect();
            let drawn = chart
                .draw_series(LineSeries::new(pts, line.style))
                .map_err(err)?;
            if let Some(label) = &line.label {
                let style = line.style;
                drawn
                    .label(label.clone())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], style));
            }
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    })
}

/// Each step drawn flat over its interval.
fn steps(series: &[Step]) -> Vec<(f64, f64)> {
    series
        .iter()
        .flat_map(|s| [(s.start, s.value), (s.end, s.value)])
        .collect()
}

/// One variant's repetitions overlaid: each run's total over time in `metric` (forward
/// direction, warm-up excluded), so drift and outliers between repetitions show.
pub fn repetitions(
    runs: &[(String, Vec<Step>)],
    metric: Metric,
    name: &str,
    title: &str,
) -> Result<Chart, ReportError> {
    let lines: Vec<TimeLine> = runs
        .iter()
        .map(|(_, series)| steps(series))
        .zip(runs)
        .filter(|(points, _)| !points.is_empty())
        .enumerate()
        .map(|(i, (points, (label, _)))| TimeLine {
            points,
            style: PALETTE[[0, 1, 2, 3, 4, 5, 7][i % 7]].stroke_width(2),
            // Ten legend rows at most; more repetitions share the colours.
            label: (i < 10).then(|| label.clone()),
        })
        .collect();
    if lines.is_empty() {
        return Err(ReportError::NoData(format!(
            "{title}: the runs have no interval samples"
        )));
    }
    let quantity = format!("total {}", metric.quantity());
    time_chart(name, title, 380, (&quantity, metric.unit()), &lines)
}

/// One run's total over time in `metric` (for metrics without per-stream lines).
pub fn over_time(
    series: &[Step],
    metric: Metric,
    name: &str,
    title: &str,
) -> Result<Chart, ReportError> {
    if series.is_empty() {
        return Err(ReportError::NoData(format!(
            "{title}: the run has no interval samples"
        )));
    }
    let lines = [TimeLine {
        points: steps(series),
        style: PALETTE[7].stroke_width(3),
        label: Some("total".to_owned()),
    }];
    time_chart(name, title, 420, (metric.quantity(), metric.unit()), &lines)
}

/// Throughput over time: each interval's rate drawn as a step over the interval, one line
/// per stream and a bold line for the total (one per direction for `--bidir`).
pub fn throughput(run: &RunRecord, name: &str, title: &str) -> Result<Chart, ReportError> {
    struct Series {
        label: String,
        points: Vec<(f64, f64)>,
        total: bool,
        forward: bool,
    }
    let mut series: Vec<Series> = Vec::new();
    let bidir = run.direction == Direction::Bidir;
    let direction_label = |sender: bool| {
        if !bidir {
            ""
        } else if sender {
            " (client → server)"
        } else {
            " (server → client)"
        }
    };
    let per_stream = run.streams > 1;
    for s in &run.intervals {
        let (label, total) = match s.stream {
            Some(id) if per_stream => (format!("stream {id}{}", direction_label(s.sender)), false),
            Some(_) => continue,
            None => (format!("total{}", direction_label(s.sender)), true),
        };
        let series = match series.iter_mut().position(|x| x.label == label) {
            Some(i) => &mut series[i],
            None => {
                series.push(Series {
                    label,
                    points: Vec::new(),
                    total,
                    forward: s.sender || !bidir,
                });
                let last = series.len() - 1;
                &mut series[last]
            }
        };
        series.points.push((s.start_s, s.bits_per_second));
        series.points.push((s.end_s, s.bits_per_second));
    }
    if series.is_empty() {
        return Err(ReportError::NoData(format!(
            "{title}: the run has no interval samples"
        )));
    }
    // Many streams: draw them thin and grey under one legend entry.
    let streams = series.iter().filter(|s| !s.total).count();
    let crowded = streams > 8;
    let mut colour = 0;
    let mut grey_labelled = false;
    let lines: Vec<TimeLine> = series
        .into_iter()
        .map(|s| {
            let (style, label) = if s.total {
                if s.forward {
                    (PALETTE[7].stroke_width(4), Some(s.label))
                } else {
                    (PALETTE[5].stroke_width(2), Some(s.label))
                }
            } else if crowded {
                let label = (!grey_labelled).then(|| format!("each of {streams} streams"));
                grey_labelled = true;
                (RGBColor(170, 170, 170).stroke_width(1), label)
            } else {
                let c = PALETTE[[0, 1, 2, 3, 4, 6][colour % 6]];
                colour += 1;
                (c.stroke_width(2), Some(s.label))
            };
            TimeLine {
                points: s.points,
                style,
                label,
            }
        })
        .collect();
    time_chart(name, title, 420, ("throughput", Unit::BitRate), &lines)
}

/// The legend box every chart uses, at `position` (where the data leaves room).
fn legend<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    position: SeriesLabelPosition,
) -> Result<(), ReportError>
where
    DB: DrawingBackend + 'a,
    X: Ranged,
    Y: Ranged,
{
    chart
        .configure_series_labels()
        .position(position)
        .label_font((FONT, 15))
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(180, 180, 180))
        .draw()
        .map_err(err)
}

/// The latency distribution of a request/response run: histogram on the left, CDF on the
/// right. The latency axis is logarithmic when the buckets span more than a factor of 20.
pub fn latency(latency: &Latency, name: &str, title: &str) -> Result<Chart, ReportError> {
    let buckets: Vec<_> = latency
        .buckets
        .iter()
        .filter(|b| b.upper_us > 0.0)
        .copied()
        .collect();
    let total: u64 = buckets.iter().map(|b| b.count).sum();
    if buckets.is_empty() || total == 0 {
        return Err(ReportError::NoData(format!(
            "{title}: the latency histogram is empty"
        )));
    }
    // Each bucket spans (previous bound, its bound]; the first one gets its neighbour's width
    // (its ratio on a log axis).
    let mut spans = Vec::new();
    for (i, b) in buckets.iter().enumerate() {
        let lower = if i == 0 {
            match buckets.get(1) {
                Some(next) => b.upper_us * b.upper_us / next.upper_us,
                None => b.upper_us / 2.0,
            }
        } else {
            buckets[i - 1].upper_us
        };
        #[allow(clippy::cast_precision_loss)]
        let share = b.count as f64 / total as f64 * 100.0;
        spans.push((lower.max(b.upper_us * 1e-3), b.upper_us, share));
    }
    let lo = spans.first().map_or(1.0, |s| s.0);
    let hi = spans.last().map_or(10.0, |s| s.1);
    let log = hi / lo > 20.0;
    let data = LatencyData {
        spans,
        percentiles: latency.percentiles.clone(),
        title: title.to_owned(),
    };
    render(name.to_owned(), title.to_owned(), (900, 400), |root| {
        let (left, right) = root.split_horizontally(450);
        if log {
            let x = || ((lo / 1.1)..(hi * 1.1)).log_scale();
            data.draw(&left, &right, x(), x())
        } else {
            let pad = (hi - lo) * 0.04;
            let x = || (lo - pad).max(0.0)..(hi + pad);
            data.draw(&left, &right, x(), x())
        }
    })
}

struct LatencyData {
    /// (lower µs, upper µs, share %).
    spans: Vec<(f64, f64, f64)>,
    percentiles: Vec<(f64, f64)>,
    title: String,
}

impl LatencyData {
    fn draw<X>(
        &self,
        left: &DrawingArea<SVGBackend<'_>, Shift>,
        right: &DrawingArea<SVGBackend<'_>, Shift>,
        x_hist: X,
        x_cdf: X,
    ) -> Result<(), ReportError>
    where
        X: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
    {
        let max_share = self.spans.iter().map(|s| s.2).fold(0.0, f64::max);
        let mut hist = ChartBuilder::on(left)
            .caption(format!("{}: histogram", self.title), (FONT, 18))
            .margin(10)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .build_cartesian_2d(x_hist, 0.0..(max_share * 1.15))
            .map_err(err)?;
        mesh(&mut hist, "latency (µs)", "transactions (%)", Some(6))?;
        hist.draw_series(self.spans.iter().map(|&(l, u, share)| {
            Rectangle::new([(l, 0.0), (u, share)], PALETTE[0].mix(0.8).filled())
        }))
        .map_err(err)?;
        let mut cdf = ChartBuilder::on(right)
            .caption(format!("{}: CDF", self.title), (FONT, 18))
            .margin(10)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .build_cartesian_2d(x_cdf, 0.0..100.0)
            .map_err(err)?;
        mesh(
            &mut cdf,
            "latency (µs)",
            "transactions at or below (%)",
            Some(6),
        )?;
        let mut cumulative = 0.0;
        let mut points = vec![(self.spans.first().map_or(0.0, |s| s.0), 0.0)];
        for &(_, u, share) in &self.spans {
            cumulative += share;
            points.push((u, cumulative.min(100.0)));
        }
        let style = PALETTE[5].stroke_width(2);
        cdf.draw_series(LineSeries::new(points, style))
            .map_err(err)?
            .label("share at or below")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], style));
        let marks: Vec<(f64, f64)> = self
            .percentiles
            .iter()
            .copied()
            .filter(|(p, _)| [50.0, 90.0, 99.0].contains(p))
            .collect();
        if !marks.is_empty() {
            cdf.draw_series(
                marks
                    .iter()
                    .map(|&(p, us)| Circle::new((us, p), 4, PALETTE[0].filled())),
            )
            .map_err(err)?
            .label("percentiles the engine measured")
            .legend(|(x, y)| Circle::new((x + 11, y), 4, PALETTE[0].filled()));
            // Labels right of the point, below it so the curve does not cross them.
            cdf.draw_series(marks.iter().map(|&(p, us)| {
                EmptyElement::at((us, p))
                    + Text::new(
                        format!("p{p}: {} µs", tick(us)),
                        (8, 6),
                        (FONT, 14).into_font().color(&AXIS),
                    )
            }))
            .map_err(err)?;
        }
        // A CDF climbs from lower left to upper right: the lower right corner is free.
        legend(&mut cdf, SeriesLabelPosition::LowerRight)
    }
}

/// The grid, axis descriptions and tick labels every x/y chart uses; `x_labels` caps the
/// number of x ticks (plotters' own choice when `None`).
fn mesh<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    x_desc: &str,
    y_desc: &str,
    x_labels: Option<usize>,
) -> Result<(), ReportError>
where
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let formatter = |v: &f64| tick(*v);
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x_desc)
        .y_desc(y_desc)
        .axis_desc_style((FONT, 17))
        .label_style((FONT, 15))
        .x_label_formatter(&formatter)
        .y_label_formatter(&formatter)
        .max_light_lines(0)
        .bold_line_style(RGBColor(225, 225, 225))
        .axis_style(AXIS);
    if let Some(n) = x_labels {
        mesh.x_labels(n);
    }
    mesh.draw().map_err(err)
}

/// Horizontal bars, one per variant (or run), with the confidence interval as an error bar;
/// the values in `metric`.
pub fn bars(
    bars: &[Bar],
    metric: Metric,
    name: &str,
    title: &str,
    confidence: Option<f64>,
) -> Result<Chart, ReportError> {
    if bars.is_empty() {
        return Err(ReportError::NoData(format!("{title}: nothing to compare")));
    }
    let max = bars
        .iter()
        .map(|b| b.ci.map_or(b.mean, |c| c.1.max(b.mean)))
        .fold(0.0_f64, f64::max);
    let (div, unit) = metric.unit().axis(max);
    let quantity = metric.quantity();
    let labels: Vec<String> = bars.iter().map(|b| shorten(&b.label, 28)).collect();
    let label_width = labels.iter().map(|l| text_width(l, 15)).max().unwrap_or(60) + 10;
    let n = bars.len();
    let height = u32::try_from(110 + 44 * n).unwrap_or(2000).min(2000);
    let top = if max > 0.0 { max / div * 1.15 } else { 1.0 };
    let x_desc = match confidence {
        Some(c) => format!("mean {quantity} ({unit}); whiskers: {c}% confidence interval"),
        None => format!("mean {quantity} ({unit})"),
    };
    #[allow(clippy::cast_precision_loss)]
    let rows = n as f64;
    // Row i (from the top) is centred at y = n − i − ½.
    #[allow(clippy::cast_precision_loss)]
    let centre = |i: usize| rows - i as f64 - 0.5;
    render(name.to_owned(), title.to_owned(), (900, height), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 20))
            .margin(12)
            .x_label_area_size(52)
            .y_label_area_size(label_width)
            .build_cartesian_2d(0.0..top, 0.0..rows)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .axis_desc_style((FONT, 17))
            .label_style((FONT, 15))
            .x_label_formatter(&|v| tick(*v))
            .y_labels(0)
            .disable_y_mesh()
            .max_light_lines(0)
            .bold_line_style(RGBColor(225, 225, 225))
            .axis_style(AXIS)
            .draw()
            .map_err(err)?;
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| {
                Rectangle::new(
                    [(0.0, centre(i) - 0.32), (b.mean / div, centre(i) + 0.32)],
                    PALETTE[i % 7].mix(0.85).filled(),
                )
            }))
            .map_err(err)?;
        // Whiskers: the interval as a line with end caps (plotters' ErrorBar adds a circle at
        // the mean that hides a narrow interval).
        for (i, b) in bars.iter().enumerate() {
            if let Some((lo, hi)) = b.ci {
                let y = centre(i);
                let style = BLACK.stroke_width(2);
                chart
                    .draw_series([
                        PathElement::new(vec![(lo / div, y), (hi / div, y)], style),
                        PathElement::new(vec![(lo / div, y - 0.15), (lo / div, y + 0.15)], style),
                        PathElement::new(vec![(hi / div, y - 0.15), (hi / div, y + 0.15)], style),
                    ])
                    .map_err(err)?;
            }
        }
        // The names left of the axis and the means right of each bar, in pixels, so they
        // line up with the bars whatever the tick algorithm would choose.
        let name_style = (FONT, 15)
            .into_font()
            .color(&AXIS)
            .pos(Pos::new(HPos::Right, VPos::Center));
        let value_style = (FONT, 14)
            .into_font()
            .color(&AXIS)
            .pos(Pos::new(HPos::Left, VPos::Center));
        for (i, (b, label)) in bars.iter().zip(&labels).enumerate() {
            let (x0, y) = chart.backend_coord(&(0.0, centre(i)));
            root.draw(&Text::new(label.clone(), (x0 - 8, y), name_style.clone()))
                .map_err(err)?;
            let end = b.ci.map_or(b.mean, |c| c.1.max(b.mean)) / div;
            let (x1, _) = chart.backend_coord(&(end, centre(i)));
            root.draw(&Text::new(
                tick(b.mean / div),
                (x1 + 8, y),
                value_style.clone(),
            ))
            .map_err(err)?;
        }
        Ok(())
    })
}

/// A sweep: the mean in `metric` against the swept parameter, with confidence intervals.
/// The x axis is logarithmic when the values span more than a factor of 20 (buffer sizes).
pub fn sweep(
    points: &[SweepPoint],
    (x_label, metric): (&str, Metric),
    name: &str,
    title: &str,
) -> Result<Chart, ReportError> {
    sweep_series(
        &[SweepSeries::single(points.to_vec())],
        (x_label, metric),
        name,
        title,
    )
}

/// A sweep with one line per series (a grid sweep: one per cipher, say), each point with its
/// confidence interval as a bar in the series' colour; bars of different series at one value
/// are drawn side by side (a few pixels apart) so they stay readable. The x axis is
/// logarithmic when the values span more than a factor of 20.
pub fn sweep_series(
    series: &[SweepSeries],
    (x_label, metric): (&str, Metric),
    name: &str,
    title: &str,
) -> Result<Chart, ReportError> {
    let mut series: Vec<SweepSeries> = series
        .iter()
        .map(|s| {
            let mut points = s.points.clone();
            points.retain(|p| p.x.is_finite() && p.mean.is_finite());
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            SweepSeries {
                name: s.name.clone(),
                points,
            }
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    series.truncate(PALETTE.len());
    let all = || series.iter().flat_map(|s| s.points.iter());
    let mut xs: Vec<f64> = all().map(|p| p.x).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    if xs.len() < 2 {
        return Err(ReportError::NoData(format!(
            "{title}: a sweep needs two values or more"
        )));
    }
    let lo = xs.first().copied().unwrap_or(0.0);
    let hi = xs.last().copied().unwrap_or(1.0);
    let max = all()
        .map(|p| p.ci.map_or(p.mean, |c| c.1.max(p.mean)))
        .fold(0.0_f64, f64::max);
    let (div, unit) = metric.unit().axis(max);
    // Headroom for the legend: one series keeps its legend in the lower right (a sweep
    // curve rarely dips there); several go above the data, a legend line each.
    let headroom = if series.len() == 1 {
        1.15
    } else {
        1.1 + 0.08 * (series.len() + 1) as f64
    };
    let top = if max > 0.0 { max / div * headroom } else { 1.0 };
    let y_desc = format!("mean {} ({unit})", metric.quantity());
    let log = lo > 0.0 && hi / lo > 20.0;
    render(name.to_owned(), title.to_owned(), (900, 420), |root| {
        let builder = |root| {
            let mut b = ChartBuilder::on(root);
            b.caption(title, (FONT, 20))
                .margin(12)
                .x_label_area_size(52)
                .y_label_area_size(text_width(&tick(top), 14).max(40) + 30);
            b
        };
        if log {
            let mut chart = builder(root)
                .build_cartesian_2d(((lo / 1.3)..(hi * 1.3)).log_scale(), 0.0..top)
                .map_err(err)?;
            draw_sweep(root, &mut chart, &series, div, x_label, &y_desc)
        } else {
            let pad = (hi - lo) * 0.05;
            let mut chart = builder(root)
                .build_cartesian_2d((lo - pad)..(hi + pad), 0.0..top)
                .map_err(err)?;
            draw_sweep(root, &mut chart, &series, div, x_label, &y_desc)
        }
    })
}

fn draw_sweep<'a, X>(
    root: &DrawingArea<SVGBackend<'a>, Shift>,
    chart: &mut ChartContext<
        'a,
        SVGBackend<'a>,
        Cartesian2d<X, plotters::coord::types::RangedCoordf64>,
    >,
    series: &[SweepSeries],
    div: f64,
    x_desc: &str,
    y_desc: &str,
) -> Result<(), ReportError>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    mesh(chart, x_desc, y_desc, Some(6))?;
    let n = series.len();
    for (i, s) in series.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        chart
            .draw_series(LineSeries::new(
                s.points.iter().map(|p| (p.x, p.mean / div)),
                colour.stroke_width(2),
            ))
            .map_err(err)?
            .label(s.name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 22, y)], colour.stroke_width(2))
            });
        chart
            .draw_series(
                s.points
                    .iter()
                    .map(|p| Circle::new((p.x, p.mean / div), 4, colour.filled())),
            )
            .map_err(err)?;
        // The interval as a vertical bar, shifted a few pixels per series so the bars of
        // several series at one value do not hide each other (caps would need a pixel width
        // on any x scale).
        let shift = (2 * i32::try_from(i).unwrap_or(0) - i32::try_from(n).unwrap_or(1) + 1) * 3;
        let bar_colour = if n == 1 { BLACK } else { colour };
        let bars: Vec<(i32, i32, i32)> = s
            .points
            .iter()
            .filter_map(|p| {
                let (lo, hi) = p.ci?;
                let (x, y0) = chart.backend_coord(&(p.x, lo / div));
                let (_, y1) = chart.backend_coord(&(p.x, hi / div));
                Some((x + if n == 1 { 0 } else { shift }, y0, y1))
            })
            .collect();
        for (x, y0, y1) in bars {
            root.draw(&PathElement::new(
                vec![(x, y0), (x, y1)],
                bar_colour.stroke_width(2),
            ))
            .map_err(err)?;
        }
    }
    // One legend entry says what the bars are.
    chart
        .draw_series(std::iter::empty::<PathElement<(f64, f64)>>())
        .map_err(err)?
        .label("confidence interval")
        .legend(|(x, y)| {
            PathElement::new(
                vec![(x + 11, y - 6), (x + 11, y + 6)],
                BLACK.stroke_width(1),
            )
        });
    legend(
        chart,
        if n == 1 {
            SeriesLabelPosition::LowerRight
        } else {
            SeriesLabelPosition::UpperRight
        },
    )
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let head: String = s.chars().take(max - 1).collect();
        format!("{head}…")
    }
}

#[cfg(test)]
mod tests;
