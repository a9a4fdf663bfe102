//! `linerate history`: the stored runs, newest last, as a table, JSON or CSV.

pub mod db;
mod table;

use std::process::ExitCode;

use linerate_store::RunFilter;

use crate::output;

pub use db::DbArgs;

/// Arguments of `linerate history`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only the N most recent runs
    #[arg(long, value_name = "N")]
    last: Option<usize>,
    /// Only runs of this mode (tcp, udp, rr, crr, pps, …)
    #[arg(long)]
    mode: Option<String>,
    /// Only runs against this peer: a host (any port) or host:port
    #[arg(long, value_name = "HOST[:PORT]")]
    peer: Option<String>,
    /// Only runs of this experiment
    #[arg(long, value_name = "ID")]
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
    let store = args.db.open()?;
    let filter = RunFilter {
        last: args.last,
        mode: args.mode,
        peer: args.peer,
        experiment: args.experiment,
    };
    let runs = store.list(&filter)?;
    if args.json {
        output::print_json(&table::json(store.path(), &runs))?;
    } else if args.csv {
        output::print_text(&table::csv(&runs))?;
    } else if runs.is_empty() {
        output::print_text(&format!(
            "No runs in {} match. Runs land here from `linerate client` and `linerate import`.\n",
            store.path().display()
        ))?;
    } else {
        output::print_text(&table::text(&runs))?;
    }
    Ok(ExitCode::SUCCESS)
}
