//! `linerate experiments`: the stored experiments (name, instance, status, runs per variant,
//! date), and `--remove ID` to drop one with its runs (an interrupted experiment, say).

use std::process::ExitCode;

use linerate_report::format;
use linerate_store::Experiment;

use super::history::DbArgs;
use crate::output;

/// Arguments of `linerate experiments`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "A name stands for its newest instance wherever an experiment is \
asked for (compare, report, history --experiment); NAME-N is instance N. An experiment is \
running from its first run, complete after its last; interrupted when a signal stopped it, and \
left running when its runner was killed. compare refuses the last two.

Examples:
  linerate experiments
  linerate experiments window-buffers --json
  linerate experiments --remove window-buffers-3"
)]
pub struct Args {
    /// Only the experiments of this name
    #[arg(value_name = "NAME")]
    name: Option<String>,
    /// Remove this experiment and its runs (its id or NAME-N, as listed)
    #[arg(long, value_name = "ID", conflicts_with = "name")]
    remove: Option<String>,
    /// Print JSON (schema linerate.experiments/1)
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    db: DbArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(id) = &args.remove {
        return remove(&args, id);
    }
    // Listing never creates the database: a missing one has no experiments.
    let all = match args.db.open_if_exists()? {
        Some(store) => store.experiments()?,
        None => Vec::new(),
    };
    let shown: Vec<&Experiment> = match &args.name {
        Some(name) => {
            let mine: Vec<&Experiment> = all.iter().filter(|e| &e.name == name).collect();
            if mine.is_empty() {
                let close = linerate_store::experiment::close_names(
                    name,
                    all.iter().map(|e| e.name.as_str()),
                );
                let hint = if close.is_empty() {
                    String::new()
                } else {
                    format!("; close names: {}", close.join(", "))
                };
                anyhow::bail!(
                    "no experiment named `{name}` in {}{hint}",
                    args.db.path()?.display()
                );
            }
            mine
        }
        None => all.iter().collect(),
    };
    if args.json {
        output::print_json(&serde_json::json!({
            "schema": "linerate.experiments/1",
            "database": args.db.path()?,
            "experiments": shown,
        }))?;
    } else if shown.is_empty() {
        output::print_text(&format!(
            "no experiments in {} (`linerate lab run` stores them; `linerate import --experiment` too)\n",
            args.db.path()?.display()
        ))?;
    } else {
        output::print_text(&table(&shown))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn remove(args: &Args, id: &str) -> anyhow::Result<ExitCode> {
    let mut store = args.db.open_existing()?;
    let found = store.resolve_experiment(id)?;
    // A bare name would pick the newest instance: removing asks for the exact one.
    if found.id != id && format!("{}-{}", found.name, found.instance) != id {
        anyhow::bail!(
            "--remove {id}: give the experiment's id, e.g. {} (the newest of that name); \
             `linerate experiments {}` lists them",
            found.id,
            found.name
        );
    }
    let runs = store.remove_experiment(&found.id)?;
    if args.json {
        output::print_json(&serde_json::json!({
            "schema": "linerate.experiments/1",
            "removed": found.id,
            "runs": runs,
        }))?;
    } else {
        output::print_text(&format!(
            "removed experiment {} ({}) and its {runs} run(s)\n",
            found.id, found.status
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The status as a person reads it: a `running` experiment whose process is gone was killed.
fn status(e: &Experiment) -> String {
    if e.runner_gone() == Some(true) {
        return "running (killed)".to_owned();
    }
    e.status.to_string()
}

fn table(rows: &[&Experiment]) -> String {
    let header = [
        "ID",
        "Name",
        "Status",
        "Runs",
        "Variants (runs)",
        "Started (UTC)",
    ];
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|e| {
            let runs = match e.planned_runs() {
                Some(p) => format!("{}/{p}", e.runs()),
                None => e.runs().to_string(),
            };
            let variants: Vec<String> = e
                .variants
                .iter()
                .map(|v| format!("{} {}", v.variant, v.runs))
                .collect();
            [
                e.id.clone(),
                e.name.clone(),
                status(e),
                runs,
                variants.join(", "),
                format::utc(e.created_at)
                    .trim_end_matches(" UTC")
                    .to_owned(),
            ]
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |row: &[String]| {
        let mut l = String::new();
        for (i, (c, w)) in row.iter().zip(&widths).enumerate() {
            if i > 0 {
                l.push_str("  ");
            }
            // Runs right-aligned, words left-aligned.
            if i == 3 {
                l.push_str(&format!("{c:>w$}"));
            } else {
                l.push_str(&format!("{c:<w$}"));
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(&header.map(String::from));
    for row in &cells {
        line(row);
    }
    out
}
