//! The profiles of an experiment's variants, each against the baseline (the first group):
//! the functions whose self share and the subsystems whose inclusive share changed, with a
//! confidence from the repetitions (what `compare` and `report` show).

use linerate_stats::Confidence;

use crate::breakdown::Breakdown;
use crate::fold::Folded;
use crate::shares::{self, ShareChange};

/// One group's (variant's) profiles: one entry per profiled run.
#[derive(Debug, Default)]
pub struct GroupProfiles {
    /// The group's label (the variant's name).
    pub label: String,
    /// Each profiled run's folded stacks.
    pub folded: Vec<Folded>,
    /// Each profiled run's attribution.
    pub breakdowns: Vec<Breakdown>,
    /// The sampled event (`cpu-clock`, `cycles`).
    pub event: Option<String>,
}

impl GroupProfiles {
    /// All runs' stacks together.
    pub fn merged(&self) -> Folded {
        let mut m = Folded::default();
        for f in &self.folded {
            m.merge(f);
        }
        m
    }
}

/// A variant's profile against the baseline's.
#[derive(Debug, serde::Serialize)]
pub struct VariantChanges {
    /// The variant.
    pub variant: String,
    /// The baseline it is compared with.
    pub baseline: String,
    /// Profiled runs of the baseline.
    pub baseline_profiles: usize,
    /// Profiled runs of the variant.
    pub variant_profiles: usize,
    /// Functions whose self share changed (or not), proven changes first.
    pub functions: Vec<ShareChange>,
    /// Subsystems whose inclusive share changed (or not), proven changes first.
    pub subsystems: Vec<ShareChange>,
}

/// Each variant against the first group (the baseline); `None` when no run was profiled.
pub fn changes(profiles: &[GroupProfiles], confidence: Confidence) -> Option<Vec<VariantChanges>> {
    let (base, rest) = profiles.split_first()?;
    if profiles.iter().all(|p| p.folded.is_empty()) {
        return None;
    }
    let subsystems = |p: &GroupProfiles| -> Vec<_> {
        p.breakdowns
            .iter()
            .map(Breakdown::subsystem_shares)
            .collect()
    };
    Some(
        rest.iter()
            .map(|v| VariantChanges {
                variant: v.label.clone(),
                baseline: base.label.clone(),
                baseline_profiles: base.folded.len(),
                variant_profiles: v.folded.len(),
                functions: shares::compare_functions(&base.folded, &v.folded, confidence),
                subsystems: shares::compare_shares(
                    &subsystems(base),
                    &subsystems(v),
                    confidence,
                    0.0,
                ),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::breakdown::Share;

    fn run(nft: u64, fwd: u64) -> (Folded, Breakdown) {
        let folded = Folded::parse(&format!("dut;nft_do_chain {nft}\ndut;ip_forward {fwd}\n"))
            .expect("valid");
        let total = (nft + fwd) as f64;
        let share = |name: &str, n: u64| Share {
            name: name.to_owned(),
            samples: n,
            percent: n as f64 * 100.0 / total,
        };
        let breakdown = Breakdown {
            by_cpu: vec![share("cpu0", nft + fwd)],
            by_context: vec![share("softirq via veth_poll", nft + fwd)],
            by_subsystem: vec![share("nftables", nft), share("IP forwarding", nft + fwd)],
        };
        (folded, breakdown)
    }

    fn group(label: &str, runs: &[(u64, u64)]) -> GroupProfiles {
        let (folded, breakdowns) = runs.iter().map(|&(a, b)| run(a, b)).unzip();
        GroupProfiles {
            label: label.to_owned(),
            folded,
            breakdowns,
            event: Some("cpu-clock".to_owned()),
        }
    }

    #[test]
    fn each_variant_against_the_baseline_by_function_and_subsystem() {
        let groups = [
            group("none", &[(1, 99), (2, 98), (1, 99)]),
            group("1000-rules", &[(30, 70), (32, 68), (29, 71)]),
        ];
        let c = changes(&groups, Confidence::P95).expect("profiled");
        assert_eq!(c.len(), 1);
        assert_eq!(
            (c[0].variant.as_str(), c[0].baseline.as_str()),
            ("1000-rules", "none")
        );
        assert_eq!((c[0].baseline_profiles, c[0].variant_profiles), (3, 3));
        let words: Vec<(&str, &str)> = c[0]
            .functions
            .iter()
            .map(|f| (f.name.as_str(), f.word()))
            .collect();
        assert_eq!(words, [("ip_forward", "shrank"), ("nft_do_chain", "grew")]);
        let nft = c[0]
            .subsystems
            .iter()
            .find(|s| s.name == "nftables")
            .expect("nftables compared");
        assert_eq!(nft.word(), "grew");
        assert_eq!(groups[1].merged().samples(), 300);
    }

    #[test]
    fn nothing_profiled_is_none() {
        let groups = [group("a", &[]), group("b", &[])];
        assert!(changes(&groups, Confidence::P95).is_none());
        assert!(changes(&[], Confidence::P95).is_none());
    }
}
