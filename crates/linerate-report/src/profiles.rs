//! The profiles stored with an experiment's runs (`lab run --profile`), compared per variant
//! against the baseline (by `linerate-profile`): the functions and subsystems whose share of
//! the CPU samples changed, with a confidence from the repetitions, rendered as text, and
//! differential flame graphs (shared by `compare` and `report`; [`section`] is the report's).

use linerate_profile::shares::ShareChange;
use linerate_profile::{Breakdown, Folded, FoldedError, ProfileError};
use linerate_stats::Confidence;
use linerate_store::{RunId, Store, StoreError};

pub use linerate_profile::variants::{GroupProfiles, VariantChanges, changes};

use crate::groups::Group;
use crate::{FlameGraph, Profiles, ReportError};

/// Why stored profiles could not be read or drawn.
#[derive(Debug, thiserror::Error)]
pub enum ProfilesError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A run's folded stacks do not parse.
    #[error("run {run}'s stored profile: {source}")]
    Folded {
        /// The run.
        run: RunId,
        /// What is wrong.
        source: FoldedError,
    },
    /// A run's stored breakdown does not read.
    #[error("run {run}'s stored profile: {source}")]
    Breakdown {
        /// The run.
        run: RunId,
        /// What is wrong.
        source: ProfileError,
    },
    /// A variant's differential flame graph could not be drawn.
    #[error("the differential flame graph of {variant}: {source}")]
    Flame {
        /// The variant.
        variant: String,
        /// What is wrong.
        source: ReportError,
    },
}

/// How many changed functions a variant lists in text.
pub const SHOWN: usize = 8;

/// Names longer than this are shortened in text (the JSON keeps them whole).
const NAME_WIDTH: usize = 48;

/// The stored profiles of each group (empty lists where runs were not profiled).
///
/// # Errors
/// The store's, or a stored profile that does not read.
pub fn load(store: &Store, groups: &[Group]) -> Result<Vec<GroupProfiles>, ProfilesError> {
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
                    .map_err(|source| ProfilesError::Folded { run: *id, source })?;
                let breakdown = Breakdown::from_stored(&p.breakdown)
                    .map_err(|source| ProfilesError::Breakdown { run: *id, source })?;
                out.folded.push(folded);
                out.breakdowns.push(breakdown);
                out.event.get_or_insert(p.event);
            }
            Ok(out)
        })
        .collect()
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
        out.push_str(&render(&c.functions, SHOWN));
        let subs: Vec<ShareChange> = c
            .subsystems
            .iter()
            .filter(|s| s.significant)
            .cloned()
            .collect();
        if !subs.is_empty() {
            out.push_str("    subsystems:\n");
            out.push_str(&render(&subs, SHOWN));
        }
    }
    out
}

/// The text lines of one variant's changes: `name  base% → variant%  ±  word`.
fn render(changes: &[ShareChange], limit: usize) -> String {
    let shown: Vec<&ShareChange> = changes.iter().take(limit).collect();
    let names: Vec<String> = shown.iter().map(|c| shorten(&c.name, NAME_WIDTH)).collect();
    let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    for (c, name) in shown.into_iter().zip(names) {
        out.push_str(&format!(
            "    {name:<width$}  {:>6.2}% -> {:>6.2}%  {:+.2} +/- {:.2} points  {}\n",
            c.baseline_percent,
            c.variant_percent,
            c.difference_points,
            c.error_points,
            c.word()
        ));
    }
    out
}

/// `name` cut to `max` characters, keeping its start and end around an ellipsis.
fn shorten(name: &str, max: usize) -> String {
    let n = name.chars().count();
    if n <= max {
        return name.to_owned();
    }
    let head = (max - 1) / 2;
    let tail = max - 1 - head;
    let start: String = name.chars().take(head).collect();
    let end: String = name.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}

/// The differential flame graph of each variant against the baseline (all runs of a side
/// merged, the baseline scaled to the variant's sample count): `(variant, svg)`.
///
/// # Errors
/// A graph that cannot be drawn.
pub fn diff_flamegraphs(
    profiles: &[GroupProfiles],
) -> Result<Vec<(String, Vec<u8>)>, ProfilesError> {
    let Some((base, rest)) = profiles.split_first() else {
        return Ok(Vec::new());
    };
    let before = base.merged();
    rest.iter()
        .filter(|v| !v.folded.is_empty() && before.samples() > 0)
        .map(|v| {
            let title = format!("{} against {}", v.label, base.label);
            let svg = crate::flame::draw_diff(&before.text(), &v.merged().text(), &title).map_err(
                |source| ProfilesError::Flame {
                    variant: v.label.clone(),
                    source,
                },
            )?;
            Ok((v.label.clone(), svg))
        })
        .collect()
}

/// The report's section on the profiles stored with an experiment's runs (`lab run
/// --profile`): the share changes per variant and the differential flame graphs; `None` when
/// no run was profiled.
///
/// # Errors
/// As [`load`] and [`diff_flamegraphs`].
pub fn section(
    store: &Store,
    groups: &[Group],
    confidence: Confidence,
) -> Result<Option<Profiles>, ProfilesError> {
    let stored = load(store, groups)?;
    let Some(changes) = changes(&stored, confidence) else {
        return Ok(None);
    };
    let graphs = diff_flamegraphs(&stored)?
        .into_iter()
        .map(|(variant, svg)| FlameGraph {
            title: format!("{variant} against {}", stored[0].label),
            svg: String::from_utf8_lossy(&svg).into_owned(),
        })
        .collect();
    Ok(Some(Profiles {
        text: text(&changes, confidence),
        graphs,
    }))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn change(name: &str, significant: bool, difference_points: f64) -> ShareChange {
        ShareChange {
            name: name.to_owned(),
            baseline_percent: 1.33,
            variant_percent: 1.33 + difference_points,
            difference_points,
            error_points: 1.5,
            significant,
        }
    }

    #[test]
    fn a_change_is_one_line_with_its_word() {
        let text = render(
            &[
                change("nft_do_chain", true, 29.0),
                change("ip_forward", true, -29.0),
                change("veth_poll", false, 0.5),
            ],
            2,
        );
        assert_eq!(
            text,
            "    nft_do_chain    1.33% ->  30.33%  +29.00 +/- 1.50 points  grew\n    \
             ip_forward      1.33% -> -27.67%  -29.00 +/- 1.50 points  shrank\n"
        );
    }

    #[test]
    fn long_names_keep_their_start_and_end() {
        let long =
            "<core::ops::range::Range<usize>_as_core::slice::index::SliceIndex<[T]>>::index_mut";
        let short = shorten(long, NAME_WIDTH);
        assert_eq!(short.chars().count(), NAME_WIDTH);
        assert!(
            short.starts_with("<core::ops") && short.ends_with("::index_mut"),
            "{short}"
        );
        assert_eq!(shorten("nft_do_chain", NAME_WIDTH), "nft_do_chain");
    }
}
