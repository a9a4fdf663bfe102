//! `linerate show RUN`: one stored run, as the client printed it, or as iperf3-schema JSON.

mod text;

use std::process::ExitCode;

use linerate_report::format;
use linerate_store::RunId;

use super::history::DbArgs;
use crate::output;

/// Arguments of `linerate show`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  linerate show 12\n  linerate show 12 --json")]
pub struct Args {
    /// The run's id (as `linerate history` lists it)
    #[arg(value_name = "RUN")]
    run: RunId,
    /// Print the run as iperf3-schema JSON (start/intervals/end, plus a `linerate` object
    /// with schema linerate.run/1 and the stored context)
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    db: DbArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let store = args.db.open_existing()?;
    let run = store.run(args.run)?;
    if args.json {
        output::print_json(&run.document_with_context(args.run))?;
    } else {
        output::print_text(&format::printable(&text::render(args.run, &run)))?;
    }
    Ok(ExitCode::SUCCESS)
}
