//! Two data sets side by side: what `--compare BEFORE AFTER --json` prints (schema
//! `linerate.logdist.compare/1`): each percentile's shift, the share under the threshold, and
//! the two-sample Kolmogorov–Smirnov test with its verdict.

use linerate_stats::ks::{self, KsTest};
use serde::Serialize;

use crate::dataset::DataSet;
use crate::human;
use crate::summary::{Summary, secs};

/// Why the comparison uses Kolmogorov–Smirnov.
pub const WHY_KS: &str = "Kolmogorov-Smirnov compares the whole distributions (the largest gap \
between the two cumulative curves), so it sees a shorter tail or a larger share under a \
threshold even when the median does not move; Mann-Whitney only tests a shift in location. It \
runs on the streamed histograms without keeping the samples.";

/// One percentile's move.
#[derive(Debug, Serialize)]
pub struct Shift {
    /// In percent.
    pub percentile: f64,
    /// Before.
    pub before_s: f64,
    /// After.
    pub after_s: f64,
    /// After minus before.
    pub shift_s: f64,
    /// Relative to before, in percent (`null` when before is 0).
    pub shift_percent: Option<f64>,
}

/// The test's outcome.
#[derive(Debug, Serialize)]
pub struct TestReport {
    /// `two-sample Kolmogorov-Smirnov`.
    pub name: &'static str,
    /// Why this test.
    pub why: &'static str,
    /// The statistics.
    #[serde(flatten)]
    pub ks: KsTest,
    /// Where the largest gap is, in seconds.
    pub at_s: f64,
    /// Significance level (1 - confidence).
    pub alpha: f64,
    /// Whether `p < alpha`.
    pub differs: bool,
    /// One sentence.
    pub verdict: String,
}

/// `linerate logdist --compare BEFORE AFTER --json`.
#[derive(Debug, Serialize)]
pub struct Comparison {
    /// `linerate.logdist.compare/1`.
    pub schema: &'static str,
    /// The first data set.
    pub before: Summary,
    /// The second.
    pub after: Summary,
    /// Each percentile's move.
    pub shifts: Vec<Shift>,
    /// Mean's move.
    pub mean_shift_s: f64,
    /// The threshold.
    pub threshold_s: f64,
    /// Share under it before.
    pub share_before: f64,
    /// Share under it after.
    pub share_after: f64,
    /// The test (absent when a side has no samples).
    pub test: Option<TestReport>,
}

impl Comparison {
    /// Compares two data sets at confidence `1 - alpha`.
    pub fn new(before: &DataSet, after: &DataSet, alpha: f64) -> Self {
        let (b, a) = (Summary::new(before), Summary::new(after));
        let shifts = b
            .percentiles
            .iter()
            .zip(&a.percentiles)
            .map(|(pb, pa)| Shift {
                percentile: pb.percentile,
                before_s: pb.seconds,
                after_s: pa.seconds,
                shift_s: pa.seconds - pb.seconds,
                shift_percent: (pb.seconds > 0.0)
                    .then(|| (pa.seconds - pb.seconds) / pb.seconds * 100.0),
            })
            .collect();
        let test = ks::two_sample(
            before.distribution.comparable_steps(),
            after.distribution.comparable_steps(),
        )
        .map(|t| {
            let differs = t.differs(alpha);
            let confidence = format_confidence(alpha);
            let verdict = if differs {
                let faster = if t.signed_gap > 0.0 {
                    "faster"
                } else {
                    "slower"
                };
                format!(
                    "the distributions differ at {confidence} confidence: AFTER is {faster} \
                     (largest gap {:.2} points of the cumulative share, at {})",
                    t.d * 100.0,
                    human::time(t.at)
                )
            } else {
                format!("no difference proven at {confidence} confidence")
            };
            TestReport {
                name: "two-sample Kolmogorov-Smirnov",
                why: WHY_KS,
                ks: t,
                at_s: secs(t.at),
                alpha,
                differs,
                verdict,
            }
        });
        Self {
            schema: "linerate.logdist.compare/1",
            mean_shift_s: a.mean_s - b.mean_s,
            threshold_s: b.threshold_s,
            share_before: b.under_threshold_share,
            share_after: a.under_threshold_share,
            shifts,
            before: b,
            after: a,
            test,
        }
    }
}

/// `0.05` → `95 %`.
pub fn format_confidence(alpha: f64) -> String {
    let c = (1.0 - alpha) * 100.0;
    if (c - c.round()).abs() < 1e-9 {
        format!("{c:.0} %")
    } else {
        format!("{c} %")
    }
}
