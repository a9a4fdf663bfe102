//! The engine against known values: Debian's ministat on the same numbers, the printed t
//! table, and series whose properties are known by construction.

use super::*;
use crate::ministat_ttest::TSource;

fn per_repetition(label: &str, values: &[f64]) -> Group {
    Group {
        label: label.into(),
        repetitions: values.iter().map(|&v| Repetition::value(v)).collect(),
    }
}

fn single_run(label: &str, intervals: &[f64]) -> Group {
    Group {
        label: label.into(),
        repetitions: vec![Repetition {
            value: intervals.iter().sum::<f64>() / intervals.len() as f64,
            intervals: intervals.to_vec(),
            test: None,
        }],
    }
}

fn at(percent: f64, test: Test, t_source: TSource) -> Options {
    Options {
        confidence: Confidence::new(percent).unwrap_or_default(),
        test,
        t_source,
    }
}

fn only_verdict(groups: &[Group], options: &Options) -> Verdict {
    let analysis = analyse(groups, SampleKind::PerRepetition, options);
    assert_eq!(analysis.verdicts.len(), 1);
    analysis.verdicts[0].clone()
}

/// The first two lines of a verdict (ministat's percent line uses an older formula in
/// Debian's package, so it is left out).
fn head(verdict: &str) -> Vec<&str> {
    verdict.lines().take(2).collect()
}

const ONE_TO_TEN: [f64; 10] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0];

#[test]
fn ministat_digits_at_each_of_its_levels() {
    // `ministat -c LEVEL a c` with a = 1…10, c = 6…15 (Debian ministat 2015).
    let c: Vec<f64> = ONE_TO_TEN.iter().map(|v| v + 5.0).collect();
    let groups = [per_repetition("a", &ONE_TO_TEN), per_repetition("c", &c)];
    for (level, error) in [
        (80.0, "1.80083"),
        (90.0, "2.34785"),
        (95.0, "2.84477"),
        (98.0, "3.45542"),
        (99.0, "3.89683"),
        (99.5, "4.88796"),
    ] {
        let v = only_verdict(&groups, &at(level, Test::StudentT, TSource::MinistatTable));
        let text = v.outcome.verdict();
        assert_eq!(
            head(&text),
            [
                format!("Difference at {level:.1}% confidence").as_str(),
                &format!("\t5 +/- {error}")
            ],
            "{level}"
        );
        assert!(
            v.outcome
                .verdict()
                .ends_with("(Student's t, pooled s = 3.02765)\n")
        );
    }
}

#[test]
fn ministat_man_page_data() {
    // iguana against chameleon: `ministat -c 80` proves a difference, 95 does not.
    let iguana = [50.0, 200.0, 150.0, 400.0, 750.0, 400.0, 150.0];
    let chameleon = [150.0, 400.0, 720.0, 500.0, 930.0];
    let groups = [
        per_repetition("iguana", &iguana),
        per_repetition("chameleon", &chameleon),
    ];
    let v80 = only_verdict(&groups, &at(80.0, Test::StudentT, TSource::MinistatTable));
    assert_eq!(
        head(&v80.outcome.verdict()),
        ["Difference at 80.0% confidence", "\t240 +/- 212.215"]
    );
    assert!(
        v80.outcome
            .verdict()
            .ends_with("(Student's t, pooled s = 264.159)\n")
    );
    let v95 = only_verdict(&groups, &Options::default());
    assert_eq!(
        v95.outcome.verdict(),
        "No difference proven at 95.0% confidence\n"
    );
    assert_eq!(v95.outcome.difference(), 240.0);
}

#[test]
fn exact_quantiles_match_the_t_table_at_any_level() {
    // Two sets of 10: df = 18. Printed two-sided t table, df 18.
    let b: Vec<f64> = ONE_TO_TEN.iter().map(|v| v + 3.0).collect();
    let groups = [per_repetition("a", &ONE_TO_TEN), per_repetition("b", &b)];
    for (level, table_t) in [
        (80.0, 1.330),
        (90.0, 1.734),
        (95.0, 2.101),
        (99.0, 2.878),
        (99.5, 3.197),
    ] {
        let v = only_verdict(&groups, &at(level, Test::StudentT, TSource::Exact));
        let Some(c) = v.outcome.student_t() else {
            panic!("Student's t was asked for")
        };
        assert_eq!(c.df, 18.0);
        assert!((c.t - table_t).abs() < 0.0005, "{level}: t = {}", c.t);
        // The interval is difference ± t·s·√(1/10 + 1/10).
        let half = c.t * 3.027_650_354_097_491_7 * 0.2_f64.sqrt();
        let (lo, hi) = v.outcome.interval().unwrap_or_default();
        assert!((lo - (3.0 - half)).abs() < 1e-12 && (hi - (3.0 + half)).abs() < 1e-12);
        assert_eq!(v.outcome.confidence().percent(), level);
    }
    // The difference of 3 is proven up to about 96 %: ministat's levels agree (Debian's
    // ministat: proven at 80, 90, 95; not at 98, 99, 99.5), and so do levels it lacks.
    for (level, proven) in [
        (80.0, true),
        (90.0, true),
        (94.0, true),
        (95.0, true),
        (97.0, false),
        (98.0, false),
        (99.0, false),
        (99.5, false),
    ] {
        for source in [TSource::Exact, TSource::MinistatTable] {
            let v = only_verdict(&groups, &at(level, Test::StudentT, source));
            assert_eq!(v.outcome.significant(), proven, "{level} {source:?}");
        }
    }
}

#[test]
fn level_outside_ministat_table_takes_the_exact_quantile() {
    let b: Vec<f64> = ONE_TO_TEN.iter().map(|v| v + 3.0).collect();
    let groups = [per_repetition("a", &ONE_TO_TEN), per_repetition("b", &b)];
    let v = only_verdict(&groups, &at(97.5, Test::StudentT, TSource::MinistatTable));
    let c = v.outcome.student_t().copied();
    assert_eq!(c.map(|c| c.t_source), Some(TSource::Exact));
    assert!(c.is_some_and(|c| (c.t - crate::student::t_quantile(0.9875, 18.0)).abs() < 1e-12));
}

/// xorshift64* and Box–Muller: a reproducible normal noise source for the tests.
struct Noise(u64);

impl Noise {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// x_t = φ·x_{t−1} + ε_t around `level`.
    fn ar1(&mut self, phi: f64, n: usize, level: f64) -> Vec<f64> {
        let mut x = 0.0;
        (0..n)
            .map(|_| {
                x = phi * x + self.normal();
                level + x
            })
            .collect()
    }
}

#[test]
fn ar1_intervals_are_warned_about_white_noise_is_not() {
    let mut noise = Noise(0x9e37_79b9_7f4a_7c15);
    let correlated = noise.ar1(0.8, 200, 100.0);
    let independent = noise.ar1(0.0, 200, 100.0);
    let groups = [
        single_run("run 1", &correlated),
        single_run("run 2", &independent),
    ];
    let kind = SampleKind::for_groups(&groups);
    assert_eq!(kind, SampleKind::PerInterval);
    let analysis = analyse(&groups, kind, &Options::default());
    let r1 = analysis.sets[0].lag1.unwrap_or(0.0);
    assert!((r1 - 0.8).abs() < 0.1, "AR(1) with φ = 0.8: r1 = {r1}");
    let white = analysis.sets[1].lag1.unwrap_or(1.0);
    assert!(
        white.abs() < independence_band(200),
        "white noise: r1 = {white}"
    );
    let band = independence_band(200);
    assert_eq!(
        analysis.warnings,
        [Warning::Autocorrelated {
            set: "run 1".into(),
            r1,
            band
        }]
    );
    assert_eq!(analysis.verdicts[0].warnings, analysis.warnings);
    // The same values as one value per repetition are independent by design: no warning.
    let repeated = [
        per_repetition("a", &correlated),
        per_repetition("b", &independent),
    ];
    let analysis = analyse(&repeated, SampleKind::PerRepetition, &Options::default());
    assert!(analysis.warnings.is_empty(), "{:?}", analysis.warnings);
}

#[test]
fn rank_test_sees_through_outliers_in_skewed_data() {
    // Latencies: every value but one outlier is higher in `other`; the outliers inflate the
    // variance so much that Student's t proves nothing.
    let baseline = [0.95, 1.0, 1.02, 1.05, 1.07, 1.1, 1.12, 1.15, 1.2, 50.0];
    let other = [1.3, 1.32, 1.35, 1.38, 1.4, 1.42, 1.45, 1.48, 1.5, 60.0];
    let groups = [
        per_repetition("baseline", &baseline),
        per_repetition("other", &other),
    ];
    let t = only_verdict(&groups, &Options::default());
    assert!(!t.outcome.significant());
    let rank = only_verdict(&groups, &at(95.0, Test::MannWhitney, TSource::Exact));
    let Some(m) = rank.outcome.mann_whitney() else {
        panic!("the rank test was asked for")
    };
    // 9 small values × 9 small baseline values, and 60 above all 10: U = 81 + 10.
    assert_eq!(m.u, 91.0);
    // Exact two-sided p = 2·P(U ≥ 91) = 2·97/C(20, 10) (97 arrangements counted by recursion).
    assert!(
        (m.p_value - 2.0 * 97.0 / 184_756.0).abs() < 1e-15,
        "p = {}",
        m.p_value
    );
    assert!(rank.outcome.significant());
    assert_eq!(rank.outcome.test(), Test::MannWhitney);
    // The medians: 1.085 and 1.41.
    assert!((rank.outcome.difference() - 0.325).abs() < 1e-12);
    assert_eq!(rank.outcome.error(), None);
    assert_eq!(rank.outcome.interval(), None);
    assert!(
        rank.outcome
            .verdict()
            .starts_with("Difference at 95.0% confidence\n")
    );
    // p ≈ 0.00105: proven at 99.8 %, not at 99.9 %.
    for (level, proven) in [(99.8, true), (99.9, false)] {
        let v = only_verdict(&groups, &at(level, Test::MannWhitney, TSource::Exact));
        assert_eq!(v.outcome.significant(), proven, "{level}");
    }
}

#[test]
fn fewer_than_five_values_are_warned_about() {
    let groups = [
        per_repetition("baseline", &[10.0, 11.0, 12.0]),
        per_repetition("tuned", &[20.0, 21.0, 22.0, 23.0, 24.0]),
        per_repetition("other", &[30.0, 31.0]),
    ];
    let analysis = analyse(&groups, SampleKind::PerRepetition, &Options::default());
    let few = |sets: &[(&str, usize)]| Warning::TooFewValues {
        sets: sets
            .iter()
            .map(|&(label, n)| SetSize {
                label: label.into(),
                n,
            })
            .collect(),
        minimum: MIN_VALUES,
        kind: SampleKind::PerRepetition,
    };
    assert_eq!(analysis.warnings, [few(&[("baseline", 3), ("other", 2)])]);
    // Each verdict carries only the warnings about its own two sets.
    assert_eq!(analysis.verdicts[0].warnings, [few(&[("baseline", 3)])]);
    assert_eq!(
        analysis.verdicts[1].warnings,
        [few(&[("baseline", 3), ("other", 2)])]
    );
    assert!(analysis.verdicts.iter().all(|v| v.outcome.significant()));
}

#[test]
fn identical_samples_prove_nothing() {
    let values = [5.0, 6.0, 7.0, 8.0, 9.0];
    let groups = [per_repetition("a", &values), per_repetition("b", &values)];
    for test in [Test::StudentT, Test::MannWhitney] {
        let v = only_verdict(&groups, &at(95.0, test, TSource::MinistatTable));
        assert!(!v.outcome.significant(), "{test:?}");
        assert_eq!(v.outcome.difference(), 0.0);
        assert_eq!(v.outcome.percent(), 0.0);
    }
    // Constant values: zero spread, a zero-width interval, still no difference.
    let constant = [
        per_repetition("a", &[5.0; 6]),
        per_repetition("b", &[5.0; 6]),
    ];
    let analysis = analyse(&constant, SampleKind::PerRepetition, &Options::default());
    assert_eq!(analysis.sets[0].ci, Some((5.0, 5.0)));
    assert_eq!(analysis.sets[0].lag1, None);
    assert!(!analysis.any_difference());
    assert_eq!(
        analysis.verdicts[0].outcome.verdict(),
        "No difference proven at 95.0% confidence\n"
    );
}

#[test]
fn one_value_per_set_gives_no_verdict_and_no_panic() {
    let groups = [per_repetition("a", &[5.0]), per_repetition("b", &[6.0])];
    let analysis = analyse(&groups, SampleKind::PerRepetition, &Options::default());
    assert_eq!(analysis.sets[0].ci, None);
    assert_eq!(analysis.sets[0].summary.n, 1);
    let v = &analysis.verdicts[0];
    assert!(!v.outcome.significant());
    assert_eq!(v.outcome.difference(), 1.0);
    assert!(v.outcome.error().is_some_and(f64::is_nan));
    assert!(matches!(
        &analysis.warnings[..],
        [Warning::TooFewValues { sets, .. }] if sets.len() == 2
    ));
    // Nothing at all in a set: NaN statistics, still no panic.
    let empty = [per_repetition("a", &[]), per_repetition("b", &[1.0, 2.0])];
    let analysis = analyse(&empty, SampleKind::PerInterval, &Options::default());
    assert!(analysis.sets[0].summary.mean.is_nan());
    assert!(!analysis.any_difference());
}

#[test]
fn any_pair_and_different_tests() {
    let tagged = |label: &str, values: &[f64], test: &str| Group {
        label: label.into(),
        repetitions: values
            .iter()
            .map(|&value| Repetition {
                value,
                intervals: Vec::new(),
                test: Some(test.into()),
            })
            .collect(),
    };
    let groups = [
        tagged("a", &[1.0, 2.0, 3.0, 4.0, 5.0], "tcp send"),
        tagged("b", &[1.5, 2.5, 3.5, 4.5, 5.5], "tcp send"),
        tagged("c", &[11.0, 12.0, 13.0, 14.0, 15.0], "udp send"),
    ];
    let analysis = analyse(&groups, SampleKind::PerRepetition, &Options::default());
    let different = Warning::DifferentTests {
        tests: vec!["tcp send".into(), "udp send".into()],
    };
    assert_eq!(analysis.warnings, std::slice::from_ref(&different));
    assert!(analysis.verdicts[0].warnings.is_empty());
    assert_eq!(analysis.verdicts[1].warnings, [different]);
    // c against b, not the baseline.
    let cb = analysis.verdict(1, 2);
    assert!(cb.as_ref().is_some_and(|v| v.outcome.significant()));
    assert_eq!(cb.map(|v| v.outcome.difference()), Some(9.5));
    assert_eq!(analysis.verdict(0, 3), None);
}
