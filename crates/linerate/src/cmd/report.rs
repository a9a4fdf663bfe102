//! `linerate report (RUN…|--experiment ID|--last N) -o report.html`: one self-contained HTML
//! file with the summary, comparison, charts and host facts; charts also as SVG/PNG files.

mod write;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use linerate_report::select::Selection;
use linerate_store::RunId;

use super::history::DbArgs;
use crate::output;

/// Arguments of `linerate report`.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("which").required(true).multiple(true).args(["runs", "experiment", "last", "since", "peer"]))]
#[command(
    after_help = "Examples:\n  linerate report --experiment window-buffers -o report.html\n  \
    linerate report 1,2,3 4,5,6 -o runs.html --svg charts/\n  \
    linerate report --last 5 -o last.html --png charts/\n  \
    linerate report --since 24h --peer 198.18.0.2 -o path.html"
)]
pub struct Args {
    /// Runs to report on (ids from `linerate history`); several ids joined by commas form
    /// one group of repetitions, e.g. `1,2,3 4,5,6`
    #[arg(value_name = "RUN")]
    runs: Vec<String>,
    /// Report on an experiment (its name: the newest instance; or its id): its variants
    /// compared, and its sweep curve if it has one
    #[arg(long, value_name = "NAME", conflicts_with_all = ["runs", "last"])]
    experiment: Option<String>,
    /// Report on the N most recent runs
    #[arg(long, value_name = "N", conflicts_with = "runs",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    last: Option<usize>,
    /// Report on the runs started within DURATION before now (e.g. 24h), with a chart of
    /// their throughput over time (a path's history, with --peer)
    #[arg(long, value_name = "DURATION", conflicts_with_all = ["runs", "experiment"],
          value_parser = linerate_units::Duration::parse_with_unit, allow_hyphen_values = true)]
    since: Option<linerate_units::Duration>,
    /// Only runs against this peer (a host, any port, or host:port), with --last or --since
    #[arg(long, value_name = "HOST", conflicts_with_all = ["runs", "experiment"])]
    peer: Option<String>,
    /// The HTML file to write
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Also write every chart as an SVG file into DIR
    #[arg(long, value_name = "DIR")]
    svg: Option<PathBuf>,
    /// Also write every chart as a PNG file into DIR
    #[arg(long, value_name = "DIR")]
    png: Option<PathBuf>,
    /// The report's title
    #[arg(long)]
    title: Option<String>,
    /// Confidence level for comparisons, percent
    #[arg(
        long,
        short_alias = 'c',
        default_value_t = 95.0,
        value_name = "PERCENT"
    )]
    confidence: f64,
    /// Print what was written as JSON (schema linerate.report/1)
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    db: DbArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (runs, written) = write(&args)?;
    if args.json {
        output::print_json(&serde_json::json!({
            "schema": "linerate.report/1",
            "runs": runs,
            "files": written,
        }))?;
    } else {
        let mut text = String::new();
        for w in &written {
            text.push_str(&format!(
                "wrote {} ({} bytes)\n",
                w["path"].as_str().unwrap_or_default(),
                w["bytes"]
            ));
        }
        output::print_text(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the HTML report of an experiment's stored runs to `output` (`lab run --html`), as
/// `linerate report --experiment ID -o FILE` does.
#[cfg(target_os = "linux")]
pub fn experiment_html(
    db: DbArgs,
    experiment: &str,
    output: &std::path::Path,
) -> anyhow::Result<()> {
    let args = Args {
        runs: Vec::new(),
        experiment: Some(experiment.to_owned()),
        last: None,
        since: None,
        peer: None,
        output: Some(output.to_owned()),
        svg: None,
        png: None,
        title: None,
        confidence: 95.0,
        json: false,
        db,
    };
    write(&args).map(|_| ())
}

/// Builds the report `args` ask for and writes its files: the runs it covers, and one JSON
/// object per file written.
fn write(args: &Args) -> anyhow::Result<(Vec<RunId>, Vec<serde_json::Value>)> {
    if args.output.is_none() && args.svg.is_none() && args.png.is_none() {
        anyhow::bail!("say where to write: -o report.html, --svg DIR or --png DIR");
    }
    let store = args.db.open_existing()?;
    let confidence = linerate_stats::Confidence::new(args.confidence)
        .map_err(|e| anyhow::anyhow!("--confidence: {e}"))?;
    let selection = if let Some(exp) = &args.experiment {
        Selection::Experiment(exp)
    } else if args.last.is_some() || args.since.is_some() || args.peer.is_some() {
        Selection::Listing {
            last: args.last,
            since: args
                .since
                .map(|d| now() - i64::try_from(d.as_std().as_secs()).unwrap_or(i64::MAX / 2)),
            peer: args.peer.as_deref(),
        }
    } else {
        Selection::Runs(&args.runs)
    };
    let selected = linerate_report::select::report_input(
        &store,
        selection,
        confidence,
        args.title.clone(),
        now(),
    )?;
    for w in &selected.warnings {
        crate::output::warn(w);
    }
    let input = selected.input;
    let report = linerate_report::build(&input)?;
    let mut written = Vec::new();
    if let Some(path) = &args.output {
        write::atomically(path, report.html.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        written.push(serde_json::json!({"kind": "html", "path": path, "bytes": report.html.len()}));
    }
    if let Some(dir) = &args.svg {
        for chart in &report.charts {
            let path = dir.join(format!("{}.svg", chart.name));
            write::atomically(&path, chart.svg.as_bytes())
                .with_context(|| format!("cannot write {}", path.display()))?;
            written
                .push(serde_json::json!({"kind": "svg", "path": path, "bytes": chart.svg.len()}));
        }
    }
    if let Some(dir) = &args.png {
        for chart in &report.charts {
            let png = linerate_report::png::svg_to_png(&chart.svg, 1.0)?;
            let path = dir.join(format!("{}.png", chart.name));
            write::atomically(&path, &png)
                .with_context(|| format!("cannot write {}", path.display()))?;
            written.push(serde_json::json!({"kind": "png", "path": path, "bytes": png.len()}));
        }
    }
    Ok((input.runs.iter().map(|(id, _)| *id).collect(), written))
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}
