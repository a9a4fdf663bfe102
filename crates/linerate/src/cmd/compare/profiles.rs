//! The profiles stored with an experiment's runs (`lab run --profile`), compared per variant
//! against the baseline: the functions and subsystems whose share of the CPU samples changed,
//! with a confidence from the repetitions, and differential flame graphs (shared by `compare`
//! and `report`).

use anyhow::Context as _;
use linerate_stats::Confidence;
use linerate_store::Store;

use crate::cmd::profile::flame;
use crate::cmd::profile::fold::Folded;
use crate::cmd::profile::shares::{self, ShareChange};
use linerate_report::groups::Group;

/// How many changed functions a variant lists in text.
pub const SHOWN: usize = 8;

/// One group's stored profiles.
#[derive(Debug, Default)]
pub struct GroupProfiles {
    pub label: String,
    /// Each profiled run's folded stacks.
    pub folded: Vec<Folded>,
    /// Each profiled run's attribution (JSON, as stored).
    pub breakdowns: Vec<serde_json::Value>,
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
    pub variant: String,
    pub baseline: String,
    pub baseline_profiles: usize,
    pub variant_profiles: usize,
    pub functions: Vec<ShareChange>,
    pub subsystems: Vec<ShareChange>,
}

/// The stored profiles of each group (empty lists where runs were not profiled).
pub fn load(store: &Store, groups: &[Group]) -> anyhow::Result<Vec<GroupProfiles>> {
    groups
        .iter()
        .map(|g| {
            let mut out = GroupProfiles {
                label: g.label.clone(),
                ..GroupProfiles::default()
            };
            for (id, _) in &g.runs {
                let Some(p) = store.profile(*id)? else {
                    continue;
                };
                let folded = Folded::parse(&p.folded)
                    .map_err(|e| anyhow::anyhow!("run {id}'s stored profile: {e}"))?;
                out.folded.push(folded);
                out.breakdowns.push(p.breakdown);
                out.event.get_or_insert(p.event);
            }
            Ok(out)
        })
        .collect()
}

/// Each variant against the first group (the baseline); `None` when no run was profiled.
pub fn changes(profiles: &[GroupProfiles], confidence: Confidence) -> Option<Vec<VariantChanges>> {
    let (base, rest) = profiles.split_first()?;
    if profiles.iter().all(|p| p.folded.is_empty()) {
        return None;
    }
    let subsystems = |p: &GroupProfiles| -> Vec<_> {
        p.breakdowns.iter().map(shares::subsystem_shares).collect()
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

/// The text section: per variant, the functions and subsystems whose share changed.
pub fn text(changes: &[VariantChanges], confidence: Confidence) -> String {
    let mut out = format!(
        "\nWhere the CPU time went (the profiles stored with the runs): each function's self \
         share of the samples,\nand each subsystem's inclusive share; Student's t at {}% \
         confidence over the repetitions.\n",
        confidence.percent()
    );
    for c in changes {
        out.push_str(&format!(
            "\n  {} against {} ({} and {} profiles):\n",
            c.variant, c.baseline, c.variant_profiles, c.baseline_profiles
        ));
        if c.baseline_profiles < 2 || c.variant_profiles < 2 {
            out.push_str("    not compared: each side needs 2 profiled runs or more\n");
            continue;
        }
        out.push_str(&shares::render(&c.functions, SHOWN));
        let subs: Vec<ShareChange> = c
            .subsystems
            .iter()
            .filter(|s| s.significant)
            .cloned()
            .collect();
        if !subs.is_empty() {
            out.push_str("    subsystems:\n");
            out.push_str(&shares::render(&subs, SHOWN));
        }
    }
    out
}

/// The differential flame graph of each variant against the baseline (all runs of a side
/// merged, the baseline scaled to the variant's sample count): `(variant, svg)`.
pub fn diff_flamegraphs(profiles: &[GroupProfiles]) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let Some((base, rest)) = profiles.split_first() else {
        return Ok(Vec::new());
    };
    let before = base.merged();
    rest.iter()
        .filter(|v| !v.folded.is_empty() && before.samples() > 0)
        .map(|v| {
            let title = format!("{} against {}", v.label, base.label);
            let svg = flame::draw_diff(&before, &v.merged(), &title)
                .with_context(|| format!("the differential flame graph of {}", v.label))?;
            Ok((v.label.clone(), svg))
        })
        .collect()
}

/// A file name for a variant's graph: its label with anything but `[A-Za-z0-9._-]` replaced.
pub fn file_name(label: &str) -> String {
    let clean: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{clean}.diff.svg")
}
