//! `linerate compare RUN RUN… [--experiment ID]`: ministat-style verdicts between stored
//! runs, on the right samples in the runs' metric (see `linerate_report::groups`), with the
//! difference and its confidence interval (Student's t with the exact quantile, as `lab run`),
//! and warnings when the samples are autocorrelated or too few.

use std::process::ExitCode;

use anyhow::Context as _;

use linerate_report::groups;
use linerate_report::profiles;
use linerate_report::verdicts;
use linerate_stats::comparison::SampleKind;

use super::history::DbArgs;
use crate::output;

/// Arguments of `linerate compare`.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("which").required(true).args(["runs", "experiment"]))]
#[command(
    after_help = "An experiment is compared on one value per repetition; one that did not \
complete (interrupted, killed, or still running) or has fewer than 2 repetitions of a variant is \
refused unless --allow-incomplete.\n\n\
Examples:\n  linerate compare 3 4\n  linerate compare 1,2,3 4,5,6 --confidence 99\n  \
linerate compare --experiment window-buffers\n  \
linerate compare --experiment window-buffers-3 --json --fail-on-difference"
)]
pub struct Args {
    /// Runs to compare, the first is the baseline. Single runs are compared on their
    /// per-interval throughput; ids joined by commas (`1,2,3 4,5,6`) form groups of repeated
    /// runs, compared on one value per repetition
    #[arg(value_name = "RUN", num_args = 2.., conflicts_with = "experiment")]
    runs: Vec<String>,
    /// Compare an experiment's variants (one value per repetition), baseline first: its name
    /// (the newest instance) or id (see `linerate experiments`)
    #[arg(long, value_name = "NAME")]
    experiment: Option<String>,
    /// Compare an experiment that did not complete, or has fewer than 2 repetitions of a
    /// variant (variants with one value get no verdict)
    #[arg(long, requires = "experiment")]
    allow_incomplete: bool,
    /// Confidence level, percent
    #[arg(
        long,
        short_alias = 'c',
        default_value_t = 95.0,
        value_name = "PERCENT"
    )]
    confidence: f64,
    /// Exit with status 1 when a difference is proven
    #[arg(long)]
    fail_on_difference: bool,
    /// Print JSON (schema linerate.compare/1)
    #[arg(long)]
    json: bool,
    /// Write a differential flame graph per variant against the baseline (red: share grew,
    /// blue: shrank) into DIR, from the profiles stored by `lab run --profile`
    #[arg(long, value_name = "DIR", requires = "experiment")]
    diff_flamegraphs: Option<std::path::PathBuf>,
    #[command(flatten)]
    db: DbArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let store = args.db.open_existing()?;
    let confidence = linerate_stats::Confidence::new(args.confidence)
        .map_err(|e| anyhow::anyhow!("--confidence: {e}"))?;
    let (groups, kind, mut notes) = match &args.experiment {
        Some(exp) => {
            let (groups, notes) =
                groups::experiment_groups(&store, exp)?.for_comparison(args.allow_incomplete)?;
            // One value per repetition, always: never per-interval samples for variants.
            (groups, Some(SampleKind::PerRepetition), notes)
        }
        None => (
            groups::load_groups(&store, &groups::parse_groups(&args.runs)?)?,
            None,
            Vec::new(),
        ),
    };
    notes.extend(groups::partial_notes(&groups));
    let Some(outcome) = verdicts::compare_groups(&groups, confidence, kind)? else {
        anyhow::bail!(
            "a comparison needs two groups or more; experiment {} has one variant to compare",
            args.experiment.as_deref().unwrap_or("?")
        );
    };
    let stored = if args.experiment.is_some() {
        profiles::load(&store, &groups)?
    } else {
        Vec::new()
    };
    let changes = profiles::changes(&stored, confidence);
    if let Some(dir) = &args.diff_flamegraphs {
        anyhow::ensure!(
            changes.is_some(),
            "--diff-flamegraphs: no run of this experiment was profiled (lab run --profile)"
        );
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for (variant, svg) in profiles::diff_flamegraphs(&stored)? {
            let path = dir.join(profiles::file_name(&variant));
            linerate_sys::atomic_write(&path, &svg)
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    let limits = limits(&groups);
    if args.json {
        let mut doc = verdicts::json::document(&outcome);
        doc["notes"] = serde_json::json!(notes);
        if !limits.is_empty() {
            doc["limits"] = serde_json::json!(
                limits
                    .iter()
                    .map(|(g, k, n, of)| serde_json::json!({
                        "group": g, "limit": k, "runs": n, "of": of
                    }))
                    .collect::<Vec<_>>()
            );
        }
        if let Some(c) = &changes {
            doc["profiles"] = serde_json::to_value(c)?;
        }
        output::print_json(&doc)?;
    } else {
        let mut text = format!(
            "Compared: {}; values below in {}; Student's t at {}% confidence.\n\n",
            outcome.samples(),
            outcome.scale.1,
            outcome.confidence().percent()
        );
        text.push_str(&outcome.ministat);
        text.push('\n');
        text.push_str(&outcome.differences());
        if !limits.is_empty() {
            text.push_str("\nLimit (what most runs of each were held by):\n");
            let width = limits.iter().map(|l| l.0.len()).max().unwrap_or(0);
            for (g, k, n, of) in &limits {
                text.push_str(&format!("  {g:<width$}  {} ({n}/{of})\n", k.describe()));
            }
        }
        if let Some(c) = &changes {
            text.push_str(&profiles::text(c, confidence));
            text.push('\n');
        }
        for w in outcome.warnings().iter().chain(&notes) {
            text.push_str(&format!("warning: {w}\n"));
        }
        output::print_text(&text)?;
    }
    if args.fail_on_difference && outcome.any_difference() {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Each group's dominant limit verdict (`linerate.limit` of its TCP runs): the group, the
/// limit, how many runs named it and how many had one. Empty when no run has a verdict.
fn limits(
    groups: &[linerate_report::groups::Group],
) -> Vec<(String, linerate_iperf3::limit::LimitKind, usize, usize)> {
    groups
        .iter()
        .filter_map(|g| {
            let kinds: Vec<_> = g
                .runs
                .iter()
                .filter_map(|(_, r)| {
                    serde_json::from_value::<linerate_iperf3::limit::TcpLimit>(
                        r.document["linerate"]["limit"].clone(),
                    )
                    .ok()
                })
                .map(|l| l.kind)
                .collect();
            let (kind, n) = linerate_explain::tcp::dominant(&kinds)?;
            Some((g.label.clone(), kind, n, kinds.len()))
        })
        .collect()
}
