//! Charts from synthetic runs: the paths the fixtures do not reach (many streams, log axes,
//! empty data), checked on the SVG text.

use linerate_store::{
    Direction, IntervalSample, Latency, LatencyBucket, RunRecord, RunSource, RunSummary,
};

use super::*;

fn run(streams: u32, intervals: u32) -> RunRecord {
    let mut samples = Vec::new();
    for i in 0..intervals {
        let (start_s, end_s) = (f64::from(i), f64::from(i + 1));
        let sample = |stream, bps| IntervalSample {
            index: i,
            stream,
            start_s,
            end_s,
            bytes: 1,
            bits_per_second: bps,
            sender: true,
            omitted: false,
            retransmits: None,
            rtt_us: None,
            snd_cwnd: None,
            packets: None,
        };
        for s in 0..streams {
            samples.push(sample(Some(i64::from(s) + 5), 1e8));
        }
        samples.push(sample(None, 1e8 * f64::from(streams)));
    }
    RunRecord {
        partial: false,
        started_at: 0,
        source: RunSource::Import,
        source_path: None,
        command_line: None,
        tool: "t".into(),
        mode: "tcp".into(),
        direction: Direction::Send,
        peer: None,
        streams,
        duration_s: f64::from(intervals),
        params: serde_json::json!({}),
        summary: RunSummary::default(),
        intervals: samples,
        stream_results: Vec::new(),
        latency: None,
        host: None,
        experiment: None,
        document: serde_json::json!({}),
    }
}

#[test]
fn many_streams_share_one_legend_entry() -> Result<(), ReportError> {
    let chart = throughput(&run(12, 10), "x", "Run 1")?;
    assert!(chart.svg.contains("each of 12 streams"));
    assert!(
        !chart.svg.contains("stream 9<"),
        "no legend entry per stream"
    );
    assert!(
        chart.svg.contains("throughput (Gbit/s)"),
        "1.2 Gbit/s total scales to Gbit/s"
    );
    Ok(())
}

#[test]
fn few_streams_get_a_legend_entry_each() -> Result<(), ReportError> {
    let chart = throughput(&run(3, 4), "x", "Run 1")?;
    for label in ["stream 5", "stream 6", "stream 7", "total"] {
        assert!(chart.svg.contains(label), "{label}");
    }
    Ok(())
}

#[test]
fn a_run_without_intervals_is_no_chart() {
    let r = throughput(&run(1, 0), "x", "Run 1");
    assert!(matches!(r, Err(ReportError::NoData(_))));
}

#[test]
fn wide_latency_ranges_get_a_log_axis() -> Result<(), ReportError> {
    let latency = Latency {
        buckets: [10.0, 100.0, 1000.0, 10_000.0]
            .iter()
            .map(|&upper_us| LatencyBucket { upper_us, count: 5 })
            .collect(),
        percentiles: vec![(50.0, 90.0), (99.0, 9000.0)],
        mean_us: None,
    };
    let chart = latency_chart(&latency)?;
    // Ticks at powers of ten on a log axis.
    for label in [">10<", ">100<", ">1000<"] {
        assert!(chart.svg.replace('\n', "").contains(label), "{label}");
    }
    assert!(chart.svg.contains("p99: 9000 µs"));
    let empty = super::latency(&Latency::default(), "x", "Run 1");
    assert!(matches!(empty, Err(ReportError::NoData(_))));
    Ok(())
}

fn latency_chart(l: &Latency) -> Result<Chart, ReportError> {
    super::latency(l, "run-1-latency", "Run 1 latency")
}

#[test]
fn bars_and_sweeps_draw_their_intervals() -> Result<(), ReportError> {
    let bars = [
        Bar {
            label: "baseline".into(),
            mean: 9.0e9,
            ci: Some((8.5e9, 9.5e9)),
        },
        Bar {
            label: "a variant with a very long name that will not fit".into(),
            mean: 9.4e9,
            ci: None,
        },
    ];
    let chart = super::bars(&bars, Metric::Throughput, "cmp", "Variants", Some(95.0))?;
    assert!(chart.svg.contains("whiskers: 95% confidence interval"));
    assert!(
        chart.svg.contains("a variant with a very long …"),
        "long names are shortened"
    );
    let points: Vec<SweepPoint> = [65_536.0, 262_144.0, 4_194_304.0]
        .iter()
        .map(|&x| SweepPoint {
            x,
            mean: x * 100.0,
            ci: Some((x * 90.0, x * 110.0)),
        })
        .collect();
    let chart = sweep(
        &points,
        ("buffer (bytes)", Metric::Throughput),
        "sweep",
        "Sweep",
    )?;
    assert!(chart.svg.contains("buffer (bytes)"));
    let one = sweep(
        &points[..1],
        ("buffer (bytes)", Metric::Throughput),
        "sweep",
        "Sweep",
    );
    assert!(matches!(one, Err(ReportError::NoData(_))));
    Ok(())
}

#[test]
fn a_grid_sweep_has_a_line_and_coloured_bars_per_series() -> Result<(), ReportError> {
    let line = |name: &str, scale: f64| super::SweepSeries {
        name: name.into(),
        points: [1500.0, 9000.0, 24000.0, 60000.0]
            .iter()
            .map(|&x| SweepPoint {
                x,
                mean: scale * x.ln(),
                ci: Some((scale * x.ln() * 0.95, scale * x.ln() * 1.05)),
            })
            .collect(),
    };
    let chart = super::sweep_series(
        &[line("AES-256-GCM", 1e8), line("CHACHA20-POLY1305", 0.8e8)],
        ("tunnel.tun-mtu", Metric::Throughput),
        "sweep",
        "Throughput against tunnel.tun-mtu",
    )?;
    for label in ["AES-256-GCM", "CHACHA20-POLY1305", "confidence interval"] {
        assert_eq!(chart.svg.matches(label).count(), 1, "legend entry {label}");
    }
    if let Ok(dir) = std::env::var("LINERATE_CHART_DUMP") {
        let _ = std::fs::write(format!("{dir}/grid-sweep.svg"), &chart.svg);
    }
    // Each series: one line through its 4 values, and 6 strokes in its colour (the line,
    // the legend sample and the 4 interval bars).
    for colour in ["#0072B2", "#E69F00"] {
        let strokes: Vec<&str> = chart
            .svg
            .lines()
            .filter(|l| l.contains(&format!("stroke=\"{colour}\"")))
            .collect();
        let lines = strokes
            .iter()
            .filter(|l| {
                l.split("points=\"")
                    .nth(1)
                    .and_then(|p| p.split('"').next())
                    .is_some_and(|p| p.split_whitespace().count() == 4)
            })
            .count();
        assert_eq!((strokes.len(), lines), (6, 1), "{colour}: {strokes:#?}");
    }
    // One value is no curve, however many series.
    let short = |name: &str| super::SweepSeries {
        name: name.into(),
        points: vec![SweepPoint {
            x: 1500.0,
            mean: 1e8,
            ci: None,
        }],
    };
    assert!(matches!(
        super::sweep_series(
            &[short("a"), short("b")],
            ("x", Metric::Throughput),
            "s",
            "S"
        ),
        Err(ReportError::NoData(_))
    ));
    Ok(())
}

/// 100 ms bins up to `bins` × 100 ms, shares from `shares` (the rest overflows).
fn series(label: &str, shares: &[f64], bins: usize) -> DistributionSeries {
    #[allow(clippy::cast_precision_loss)]
    let bins: Vec<DistributionBin> = (0..bins)
        .map(|i| DistributionBin {
            from_s: i as f64 * 0.1,
            to_s: (i + 1) as f64 * 0.1,
            share: shares.get(i).copied().unwrap_or(0.0),
        })
        .collect();
    let drawn: f64 = bins.iter().map(|b| b.share).sum();
    DistributionSeries {
        label: label.into(),
        bin_s: 0.1,
        bins,
        overflow_share: (1.0 - drawn).max(0.0),
    }
}

/// Counts the bars: rectangles in the bars' translucent colour (the background and the
/// legend box are drawn otherwise).
fn bars_in(svg: &str) -> usize {
    svg.lines()
        .filter(|l| l.starts_with("<rect") && l.contains(r#"opacity="0.8""#))
        .count()
}

#[test]
fn one_distribution_has_no_legend_and_states_its_overflow() -> Result<(), ReportError> {
    let one = series("", &[0.5, 0.25, 0.0, 0.15], 4);
    let chart = distribution(std::slice::from_ref(&one), "dist", "Response times")?;
    assert!(chart.svg.contains("Cumulative share (CDF)"));
    assert!(chart.svg.contains("requests at or below (%)"));
    assert!(
        chart.svg.contains("above 0.4 s: 10.00 % (not drawn)"),
        "the 10 % beyond the last bin is stated"
    );
    assert_eq!((chart.width, chart.height), (900, 700));
    let full = series("", &[0.5, 0.5], 2);
    let chart = distribution(&[full], "dist", "Response times")?;
    assert!(!chart.svg.contains("not drawn"));
    // three non-empty bins of the first chart against two here: empty bins draw no bar
    let first = distribution(&[one], "dist", "Response times")?;
    assert_eq!(bars_in(&first.svg) - bars_in(&chart.svg), 1);
    Ok(())
}

#[test]
fn two_distributions_overlay_with_a_legend_each() -> Result<(), ReportError> {
    let before = series("BEFORE", &[0.3, 0.3, 0.4], 3);
    let after = series("AFTER", &[0.7, 0.2, 0.05], 3);
    let chart = distribution(&[before, after], "cmp", "Response times")?;
    // a legend entry in each panel
    assert_eq!(chart.svg.matches("\nBEFORE\n").count(), 2);
    assert_eq!(chart.svg.matches("\nAFTER\n").count(), 2);
    assert!(chart.svg.contains("AFTER 5.00 %"), "only AFTER overflows");
    assert!(!chart.svg.contains("BEFORE 0.00 %"));
    assert!(matches!(
        distribution(&[], "cmp", "Response times"),
        Err(ReportError::NoData(_))
    ));
    Ok(())
}
