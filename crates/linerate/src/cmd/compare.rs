//! `linerate compare RUN RUN… [--experiment ID]`: ministat-style verdicts between stored
//! runs, on the right samples (see [`analysis`]), with the difference and its confidence
//! interval, and warnings when the samples are autocorrelated or too few.

pub mod analysis;
pub mod verdicts;
pub mod words;

use std::process::ExitCode;

use super::history::DbArgs;
use crate::output;

/// Arguments of `linerate compare`.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("which").required(true).args(["runs", "experiment"]))]
pub struct Args {
    /// Runs to compare, the first is the baseline. Single runs are compared on their
    /// per-interval throughput; ids joined by commas (`1,2,3 4,5,6`) form groups of repeated
    /// runs, compared on one value per repetition
    #[arg(value_name = "RUN", num_args = 2.., conflicts_with = "experiment")]
    runs: Vec<String>,
    /// Compare an experiment's variants (one value per repetition), baseline first
    #[arg(long, value_name = "ID")]
    experiment: Option<String>,
    /// Confidence level, percent
    #[arg(short, long, default_value_t = 95.0, value_name = "PERCENT")]
    confidence: f64,
    /// Exit with status 1 when a difference is proven
    #[arg(long)]
    fail_on_difference: bool,
    /// Print JSON (schema linerate.compare/1)
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    db: DbArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let store = args.db.open_existing()?;
    let groups = match &args.experiment {
        Some(exp) => analysis::experiment_groups(&store, exp)?,
        None => analysis::load_groups(&store, &analysis::parse_groups(&args.runs)?)?,
    };
    let Some(outcome) = verdicts::compare_groups(&groups, args.confidence)? else {
        anyhow::bail!(
            "a comparison needs two groups or more; experiment {} has one variant",
            args.experiment.as_deref().unwrap_or("?")
        );
    };
    if args.json {
        output::print_json(&outcome.json())?;
    } else {
        let mut text = format!(
            "Compared: {}; values below in {}; Student's t at {}% confidence.\n\n",
            words::describe(outcome.kind()),
            outcome.scale.1,
            outcome.confidence().percent()
        );
        text.push_str(&outcome.ministat);
        text.push('\n');
        text.push_str(&outcome.differences());
        for w in outcome.warnings() {
            text.push_str(&format!("warning: {w}\n"));
        }
        output::print_text(&text)?;
    }
    if args.fail_on_difference && outcome.any_difference() {
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
