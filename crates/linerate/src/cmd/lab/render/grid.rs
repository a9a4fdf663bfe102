//! A sweep over several variants as a table, the shape of the OpenVPN guide's: one row per
//! swept value, one column per variant (a cipher), cells mean ± confidence-interval half-width;
//! then the best value of each column and whether it beats its neighbours.

use linerate_lab::experiment::Sweep;
use linerate_lab::runner::ExperimentResult;

use super::quantity;

/// Half-width of the confidence interval of the mean (Student's t, n − 1 degrees of freedom);
/// `None` below two values.
fn half_width(s: &linerate_stats::Summary, confidence: f64) -> Option<f64> {
    (s.n >= 2 && s.stddev.is_finite()).then(|| {
        let t = linerate_stats::student::t_quantile(0.5 + confidence / 2.0, (s.n - 1) as f64);
        t * s.stddev / (s.n as f64).sqrt()
    })
}

/// The grid table of `sweep` over `r`'s variants (base `b`, value `v` at `b × values + v`).
pub fn table(sweep: &Sweep, r: &ExperimentResult) -> String {
    let nv = sweep.values.len();
    let level = r.confidence.percent();
    let unit = r.variants.iter().find_map(|v| v.unit).unwrap_or("");
    let cell = |b: usize, v: usize| -> String {
        let Some(var) = r.variants.get(b * nv + v) else {
            return "-".to_owned();
        };
        if var.values.is_empty() {
            return "no run".to_owned();
        }
        match half_width(&var.summary, level / 100.0) {
            Some(h) => format!(
                "{} ± {}",
                quantity(var.summary.mean, unit),
                quantity(h, unit)
            ),
            None => quantity(var.summary.mean, unit),
        }
    };
    let first = sweep
        .parameter
        .len()
        .max(sweep.values.iter().map(String::len).max().unwrap_or(0));
    let widths: Vec<usize> = sweep
        .bases
        .iter()
        .enumerate()
        .map(|(b, name)| {
            (0..nv)
                .map(|v| cell(b, v).chars().count())
                .max()
                .unwrap_or(0)
                .max(name.chars().count())
        })
        .collect();
    let mut out = format!(
        "\n  mean ± {} % confidence interval\n  {:<first$}",
        linerate_units::human::number(level, linerate_units::human::Digits::Max(1)),
        sweep.parameter
    );
    for (name, w) in sweep.bases.iter().zip(&widths) {
        out.push_str(&format!("  {name:>w$}"));
    }
    out.push('\n');
    for (v, value) in sweep.values.iter().enumerate() {
        out.push_str(&format!("  {value:<first$}"));
        for (b, w) in widths.iter().enumerate() {
            out.push_str(&format!("  {:>w$}", cell(b, v)));
        }
        out.push('\n');
    }
    for (b, name) in sweep.bases.iter().enumerate() {
        let means: Vec<f64> = (0..nv)
            .map(|v| {
                r.variants
                    .get(b * nv + v)
                    .filter(|x| !x.values.is_empty())
                    .map_or(f64::NAN, |x| x.summary.mean)
            })
            .collect();
        let Some(best) = (0..nv)
            .filter(|&v| means[v].is_finite())
            .max_by(|&a, &c| means[a].total_cmp(&means[c]))
        else {
            continue;
        };
        out.push_str(&format!(
            "  {name}: best {} = {} ({})\n",
            sweep.parameter,
            sweep.values[best],
            quantity(means[best], unit)
        ));
        for n in [best.checked_sub(1), Some(best + 1).filter(|&i| i < nv)]
            .into_iter()
            .flatten()
        {
            match r.verdict(b * nv + n, b * nv + best) {
                Some(verdict) => out.push_str(&format!(
                    "    against {} = {}:{}\n",
                    sweep.parameter,
                    sweep.values[n],
                    crate::cmd::lab::verdict::line("", 0, &verdict.outcome, unit)
                )),
                None => out.push_str(&format!(
                    "    against {} = {}: needs at least 2 runs of each\n",
                    sweep.parameter, sweep.values[n]
                )),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use linerate_lab::runner::VariantResult;

    fn variant(name: &str, values: &[f64]) -> VariantResult {
        VariantResult {
            name: name.into(),
            unit: Some("bit/s"),
            values: values.to_vec(),
            failed: 0,
            summary: linerate_stats::Summary::of(values),
            vs_baseline: None,
        }
    }

    #[test]
    fn rows_are_values_columns_are_variants_and_each_column_names_its_best() {
        let r = ExperimentResult {
            schema: linerate_lab::runner::SCHEMA,
            experiment: "g".into(),
            lab: "x".into(),
            load: "linerate",
            confidence: linerate_stats::Confidence::P95,
            runs: vec![],
            variants: vec![
                variant("A m=1", &[100e6, 102e6, 98e6]),
                variant("A m=2", &[200e6, 202e6, 198e6]),
                variant("B m=1", &[300e6, 300e6, 300e6]),
                variant("B m=2", &[50e6, 52e6, 48e6]),
            ],
            interrupted: None,
        };
        let sweep = Sweep {
            parameter: "m".into(),
            values: vec!["1".into(), "2".into()],
            bases: vec!["A".into(), "B".into()],
        };
        let text = table(&sweep, &r);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "  mean ± 95 % confidence interval");
        assert!(
            lines[2].starts_with("  m") && lines[2].ends_with('B'),
            "{text}"
        );
        // 100 ± t(0.975, 2) × 2 / √3 = 100 ± 4.97 Mbit/s.
        assert!(
            lines[3].starts_with("  1  100.0 Mbit/s ± 5.0 Mbit/s"),
            "{text}"
        );
        assert!(lines[4].contains("200.0 Mbit/s"), "{text}");
        assert_eq!(lines[5], "  A: best m = 2 (200.0 Mbit/s)");
        assert!(
            lines[6].contains("against m = 1:") && lines[6].contains("proven"),
            "{text}"
        );
        assert_eq!(lines[7], "  B: best m = 1 (300.0 Mbit/s)");
    }

    #[test]
    fn half_width_is_t_times_standard_error() {
        let s = linerate_stats::Summary::of(&[10.0, 12.0, 14.0]);
        // mean 12, s = 2, n = 3: t(0.975, 2) = 4.302653; 4.302653 × 2 / √3 = 4.968275.
        let h = half_width(&s, 0.95).unwrap_or(0.0);
        assert!((h - 4.968_275).abs() < 1e-5, "{h}");
        assert!(half_width(&linerate_stats::Summary::of(&[1.0]), 0.95).is_none());
    }
}
