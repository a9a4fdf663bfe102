//! A sweep over several variants as a table, the shape of the OpenVPN guide's: one row per
//! swept value, one column per variant (a cipher), cells mean ± confidence-interval half-width;
//! then the best value of each column and whether it beats its neighbours.

use linerate_lab::experiment::Sweep;
use linerate_lab::runner::ExperimentResult;

use super::render::quantity;

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
                    crate::cmd::verdict::line("", 0, &verdict.outcome, unit)
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

    #[test]
    fn half_width_is_t_times_standard_error() {
        let s = linerate_stats::Summary::of(&[10.0, 12.0, 14.0]);
        // mean 12, s = 2, n = 3: t(0.975, 2) = 4.302653; 4.302653 × 2 / √3 = 4.968275.
        let h = half_width(&s, 0.95).unwrap_or(0.0);
        assert!((h - 4.968_275).abs() < 1e-5, "{h}");
        assert!(half_width(&linerate_stats::Summary::of(&[1.0]), 0.95).is_none());
    }
}
