//! `linerate history`: the stored runs, newest last, as a table, JSON or CSV.

pub mod db;
mod table;

use std::path::Path;
use std::process::ExitCode;

use linerate_report::format;
use linerate_store::{RunFilter, RunListing};

use crate::output;

pub use db::DbArgs;

/// Arguments of `linerate history`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  linerate history --last 10\n  \
    linerate history --mode tcp --peer 198.18.0.2 --csv\n  \
    linerate history --experiment window-buffers --json")]
pub struct Args {
    /// Only the N most recent runs
    #[arg(long, value_name = "N",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    last: Option<usize>,
    /// Only runs of this mode (tcp, udp, rr, crr, pps, …)
    #[arg(long)]
    mode: Option<String>,
    /// Only runs against this peer: a host (any port) or host:port
    #[arg(long, value_name = "HOST[:PORT]")]
    peer: Option<String>,
    /// Only runs of this experiment: its name (the newest instance) or id (see `linerate
    /// experiments`)
    #[arg(long, value_name = "NAME")]
    experiment: Option<String>,
    /// Print JSON (schema linerate.history/1)
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print CSV (one header line, then one line per run)
    #[arg(long)]
    csv: bool,
    #[command(flatten)]
    db: DbArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Listing never creates the database: a missing one has no runs.
    let Some(store) = args.db.open_if_exists()? else {
        let path = args.db.path()?;
        return render(&args, &path, &[]);
    };
    // A name is its newest instance, as everywhere an experiment is asked for.
    let experiment = match &args.experiment {
        Some(e) => Some(store.resolve_experiment(e)?.id),
        None => None,
    };
    let filter = RunFilter {
        last: args.last,
        mode: args.mode.clone(),
        peer: args.peer.clone(),
        experiment,
        since: None,
    };
    let runs = store.list(&filter)?;
    render(&args, store.path(), &runs)
}

fn render(args: &Args, db: &Path, runs: &[RunListing]) -> anyhow::Result<ExitCode> {
    if args.json {
        output::print_json(&table::json(db, runs))?;
    } else if args.csv {
        output::print_text(&table::csv(runs))?;
    } else if runs.is_empty() {
        output::print_text(&format!(
            "No runs in {} match. Runs land here from `linerate client` and `linerate import`.\n",
            db.display()
        ))?;
    } else {
        output::print_text(&format::printable(&table::text(runs)))?;
    }
    Ok(ExitCode::SUCCESS)
}
