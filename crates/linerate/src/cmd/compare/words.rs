//! The comparison engine's sample kinds and warnings in words (shared by `compare`, its JSON
//! and `report`).

use linerate_stats::comparison::{SampleKind, Warning};

/// Says which samples were compared.
pub fn describe(kind: SampleKind) -> &'static str {
    match kind {
        SampleKind::PerInterval => {
            "per-interval throughput of each run (the sum over streams for every reporting interval, warm-up excluded)"
        }
        SampleKind::PerRepetition => {
            "one value per repetition: each run's receiver-side throughput over the whole test"
        }
    }
}

/// What is compared for RFC 2544 runs.
pub fn describe_ndr() -> &'static str {
    "one value per repetition: each run's NDR (frames/s, the highest load forwarded without loss)"
}

/// One warning as a sentence.
pub fn warning(w: &Warning) -> String {
    match w {
        Warning::TooFewValues {
            sets,
            minimum,
            kind,
        } => {
            let few: Vec<String> = sets
                .iter()
                .map(|s| format!("{} ({})", s.label, s.n))
                .collect();
            format!(
                "too few values for a trustworthy verdict in {}: aim for {minimum} or more{}",
                few.join(", "),
                match kind {
                    SampleKind::PerInterval => " (run longer, or repeat the runs)",
                    SampleKind::PerRepetition => " repetitions",
                }
            )
        }
        Warning::Autocorrelated { set, r1, band } => format!(
            "{set}: consecutive intervals are autocorrelated (lag-1 r = {r1:.2}, beyond ±{band:.2}); they are not independent, so the confidence is overstated — repeat the run and compare one value per repetition"
        ),
        Warning::DifferentTests { tests } => format!(
            "the runs are different tests ({}): a difference may say more about the test than about the system",
            tests.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linerate_stats::comparison::SetSize;

    #[test]
    fn warnings_read_as_before() {
        let few = Warning::TooFewValues {
            sets: vec![
                SetSize {
                    label: "a".into(),
                    n: 2,
                },
                SetSize {
                    label: "b".into(),
                    n: 3,
                },
            ],
            minimum: 5,
            kind: SampleKind::PerInterval,
        };
        assert_eq!(
            warning(&few),
            "too few values for a trustworthy verdict in a (2), b (3): aim for 5 or more (run longer, or repeat the runs)"
        );
        let few = Warning::TooFewValues {
            sets: vec![SetSize {
                label: "baseline".into(),
                n: 3,
            }],
            minimum: 5,
            kind: SampleKind::PerRepetition,
        };
        assert_eq!(
            warning(&few),
            "too few values for a trustworthy verdict in baseline (3): aim for 5 or more repetitions"
        );
        let auto = Warning::Autocorrelated {
            set: "run 1".into(),
            r1: 0.876,
            band: 0.438,
        };
        assert_eq!(
            warning(&auto),
            "run 1: consecutive intervals are autocorrelated (lag-1 r = 0.88, beyond ±0.44); they are not independent, so the confidence is overstated — repeat the run and compare one value per repetition"
        );
        let tests = Warning::DifferentTests {
            tests: vec!["tcp send".into(), "udp send".into()],
        };
        assert_eq!(
            warning(&tests),
            "the runs are different tests (tcp send, udp send): a difference may say more about the test than about the system"
        );
    }
}
