//! `linerate import FILE…`: iperf3 `--json` / `--json-stream` output becomes stored runs.
//!
//! Every file is read and checked first; if any is malformed nothing is stored and the error
//! names the file and the place in it. Each run is then stored in its own transaction.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use linerate_report::format;
use linerate_store::{RunRecord, import};

use super::history::DbArgs;
use crate::output;

/// Arguments of `linerate import`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  linerate import run1.json run2.json\n  \
    iperf3 -c 198.18.0.2 --json | linerate import -\n  \
    linerate import --experiment bufs --variant baseline a.json b.json\n  \
    linerate import --experiment bufs --variant 4M --sweep 4194304 --sweep-label \"rmem_max (bytes)\" c.json")]
pub struct Args {
    /// iperf3 output files (`iperf3 --json` or `--json-stream`; `-` reads standard input)
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
    /// Store the runs as repetitions of this experiment (so `compare --experiment` and
    /// `report --experiment` treat them as one)
    #[arg(long, value_name = "ID", requires = "variant")]
    experiment: Option<String>,
    /// The experiment variant these files measured
    #[arg(long, value_name = "NAME", requires = "experiment")]
    variant: Option<String>,
    /// The first repetition number [default: one more than the variant already has]
    #[arg(long, value_name = "N", requires = "experiment", value_parser = clap::value_parser!(u32).range(1..))]
    repetition: Option<u32>,
    /// For sweeps: the swept parameter's value for this variant (a number)
    #[arg(long, value_name = "VALUE", requires = "experiment")]
    sweep: Option<f64>,
    /// For sweeps: the swept parameter's name and unit, e.g. "rmem_max (bytes)"
    #[arg(long, value_name = "LABEL", requires = "sweep")]
    sweep_label: Option<String>,
    /// Print JSON (schema linerate.import/1)
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    db: DbArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut parsed: Vec<(String, RunRecord)> = Vec::new();
    for file in &args.files {
        let name = file.display().to_string();
        let runs = import::read(file)?;
        parsed.extend(runs.into_iter().map(|r| (name.clone(), r)));
    }
    if let Some(v) = args.sweep.filter(|v| !v.is_finite()) {
        anyhow::bail!("--sweep {v}: the swept value must be a finite number");
    }
    let mut store = args.db.open()?;
    if let (Some(experiment), Some(variant)) = (&args.experiment, &args.variant) {
        let at = import::Placement {
            experiment: experiment.clone(),
            variant: variant.clone(),
            first_repetition: args.repetition,
            sweep_value: args.sweep,
            sweep_label: args.sweep_label.clone(),
        };
        import::place(&store, parsed.iter_mut().map(|(_, r)| r), &at)?;
    }
    let mut stored = Vec::new();
    for (name, run) in &parsed {
        let id = store
            .insert_run(run)
            .with_context(|| format!("storing the run from {name}"))?;
        stored.push((name, id, run));
    }
    if args.json {
        let runs: Vec<serde_json::Value> = stored
            .iter()
            .map(|(name, id, run)| {
                serde_json::json!({
                    "file": name,
                    "id": id,
                    "mode": run.mode,
                    "direction": run.direction,
                    "started": format::rfc3339(run.started_at),
                    "received_bps": run.summary.received_bps,
                })
            })
            .collect();
        output::print_json(&serde_json::json!({
            "schema": "linerate.import/1",
            "database": store.path().display().to_string(),
            "runs": runs,
        }))?;
    } else {
        let mut text = String::new();
        for (name, id, run) in &stored {
            text.push_str(&format!(
                "{name}: stored as run {id} ({} {}, {}, {})\n",
                run.mode,
                run.direction.as_str(),
                format::utc(run.started_at),
                format::rate(run.summary.received_bps)
            ));
        }
        output::print_text(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}
