//! `linerate logdist`: response-time distributions from web-server access logs, the way
//! calomel's Perl script drew them ("71 % of objects under 100 ms before, 95 % after"), with
//! percentiles, reasons for every skipped line, and an honest before/after comparison.
//!
//! The arguments and the glue: the engine (formats, parsing, filters, reading, histograms,
//! the comparison) is `linerate-logdist`; this module turns flags into its [`Plan`], shows its
//! progress ([`progress`]), prints its results ([`render`] or JSON) and writes the charts
//! ([`plot`], drawn by `linerate-report`).

mod plot;
mod progress;
mod render;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use linerate_logdist::{
    Comparison, DataSet, FieldChoice, Format, Plan, Report, Source, Summary, clock, settings,
};
use linerate_units::Duration;

use crate::output;

/// Arguments of `linerate logdist` (boxed: the options are many, and the `Command` enum
/// holds every subcommand's arguments inline).
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    #[command(flatten)]
    options: Box<Options>,
}

/// The options of `linerate logdist`.
#[derive(Debug, clap::Args)]
pub struct Options {
    /// Log files read as one log (`-` for stdin; `.gz` or any gzip data is decompressed)
    #[arg(value_name = "FILE", required_unless_present = "compare")]
    pub files: Vec<PathBuf>,

    /// Compare two logs: both distributions, each percentile's shift and a KS test
    #[arg(long, num_args = 2, value_names = ["BEFORE", "AFTER"], conflicts_with = "files")]
    pub compare: Option<Vec<PathBuf>>,

    /// Log format (the grammar of the input)
    #[arg(
        long,
        value_enum,
        default_value = "auto",
        value_name = "FORMAT",
        alias = "format"
    )]
    pub input_format: FormatArg,

    /// The time field: nginx request_time (default) or upstream_response_time; for JSON a
    /// dotted path (default request_time)
    #[arg(long)]
    pub field: Option<String>,

    /// Unit of a bare number in JSON or --regex times: s, ms, us or ns (default s)
    #[arg(long, value_parser = settings::parse_unit)]
    pub unit: Option<u64>,

    /// A regex with a named group `time` (optional groups: status, method, path, ts)
    #[arg(long)]
    pub regex: Option<String>,

    /// Keep only these statuses: 200, 2xx, or a list like 200,304
    #[arg(long, value_name = "LIST")]
    pub status: Option<String>,

    /// Keep only these methods (comma-separated, case-sensitive)
    #[arg(long, value_delimiter = ',')]
    pub method: Vec<String>,

    /// Keep only requests whose path matches this regex
    #[arg(long)]
    pub path_regex: Option<String>,

    /// Keep requests at or after this time (2026-10-10T13:55:36Z, 2026-10-10 13:55:36 (UTC),
    /// 10/Oct/2026:13:55:36 +0000, @UNIX)
    #[arg(long, value_parser = clock::parse_bound)]
    pub since: Option<i64>,

    /// Keep requests before this time (same forms as --since)
    #[arg(long, value_parser = clock::parse_bound)]
    pub until: Option<i64>,

    /// Only the last N lines (of all inputs together), as calomel's script reads its log
    /// (keeps N small records, 32 bytes each, and reads on one thread)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub last: Option<u64>,

    /// Histogram bin width
    #[arg(long, default_value = "100ms", value_name = "DURATION", value_parser = Duration::parse_with_unit, allow_hyphen_values = true)]
    pub bin: Duration,

    /// Upper edge of the last bin; slower requests go to one overflow bin
    #[arg(long, default_value = "6s", value_name = "DURATION", value_parser = Duration::parse_with_unit, allow_hyphen_values = true)]
    pub max: Duration,

    /// Report the share of requests under this time (default: the bin width)
    #[arg(long, value_name = "DURATION", value_parser = Duration::parse_with_unit, allow_hyphen_values = true)]
    pub threshold: Option<Duration>,

    /// Exact percentiles (memory grows with the number of distinct times)
    #[arg(long)]
    pub exact: bool,

    /// Parsing threads, at most 64 (default: the CPUs available, at most 8; --last reads on
    /// one)
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// Confidence level of the comparison, in percent
    #[arg(long, default_value_t = 95.0, value_name = "PERCENT")]
    pub confidence: f64,

    /// Results and errors only: no progress on the terminal
    #[arg(short, long)]
    pub quiet: bool,

    /// With --compare: exit 1 when the test finds a difference
    #[arg(long, requires = "compare")]
    pub fail_on_difference: bool,

    /// Print JSON (schema linerate.logdist/1 or linerate.logdist.compare/1)
    #[arg(long)]
    pub json: bool,

    /// Write the histogram and CDF as SVG
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,

    /// Write the histogram and CDF as PNG
    #[arg(long, value_name = "FILE")]
    pub png: Option<PathBuf>,
}

const AFTER_HELP: &str = "\
Formats: nginx combined/common with $request_time [$upstream_response_time] appended \
(seconds), Apache with %D (microseconds, apache-us) or %T (seconds, apache-s), JSON lines \
(--field a.b.c), or any line with --regex '(?P<time>[0-9.]+)'. --input-format auto detects \
nginx, apache-us and json from the first lines.

Percentiles use the nearest rank. Without --exact they come from a log-linear histogram \
with bounded memory and are within ±0.049 % (1/2048) of the exact value; mean, min and max \
are always exact. Lines without a usable time are counted by reason, never fatal unless no \
line gives a time.

--compare BEFORE AFTER tests the two distributions with the two-sample Kolmogorov-Smirnov \
test (asymptotic Kolmogorov distribution with Stephens' small-sample correction): it compares \
whole distributions, so a shorter tail or a larger share under the threshold counts even when \
the median does not move. \"No difference proven\" means p >= 1 - confidence.

Examples:
  linerate logdist /var/log/nginx/access.log --status 200 --last 10000
  linerate logdist access.log.1.gz --json
  linerate logdist --compare before.log after.log --svg dist.svg
  linerate logdist app.log --input-format json --field timing.total --unit ms --bin 50ms";

/// `--input-format`: the engine's [`Format`], with the help text of each value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// Detect from the first lines (nginx, apache-us or json).
    Auto,
    /// nginx `combined` (or `common`) + `$request_time [$upstream_response_time]`, seconds.
    Nginx,
    /// Apache `combined`/`common` + `%D`, microseconds.
    ApacheUs,
    /// Apache `combined`/`common` + `%T`, whole seconds.
    ApacheS,
    /// JSON lines; the time at `--field` (default `request_time`), in `--unit`.
    Json,
    /// A `--regex` with a named group `time` (in `--unit`).
    Regex,
}

impl From<FormatArg> for Format {
    fn from(arg: FormatArg) -> Self {
        match arg {
            FormatArg::Auto => Self::Auto,
            FormatArg::Nginx => Self::Nginx,
            FormatArg::ApacheUs => Self::ApacheUs,
            FormatArg::ApacheS => Self::ApacheS,
            FormatArg::Json => Self::Json,
            FormatArg::Regex => Self::Regex,
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Ctrl-C ends the reading: the distribution of the lines read so far is the result.
    let stop = crate::stop::Stop::install()?;
    let outcome = analyse(*args.options, &stop);
    match (outcome, stop.signal()) {
        (Ok(code), None) => Ok(code),
        (Ok(_), Some(sig)) => {
            eprintln!(
                "linerate: {} stopped the reading: the results cover the lines read before it",
                crate::stop::name(sig)
            );
            Ok(crate::stop::exit_code(sig))
        }
        (Err(e), Some(sig)) => {
            eprintln!(
                "linerate: {e:#} ({} stopped the reading)",
                crate::stop::name(sig)
            );
            Ok(crate::stop::exit_code(sig))
        }
        (Err(e), None) => Err(e),
    }
}

fn analyse(args: Options, stop: &crate::stop::Stop) -> anyhow::Result<ExitCode> {
    let histogram = settings::Histogram::new(args.bin, args.max, args.threshold)?;
    let significance = settings::significance(args.confidence)?;
    let format = Format::from(args.input_format);
    settings::check_regex(format, args.regex.is_some())?;
    let filters = settings::filters(
        args.status.as_deref(),
        &args.method,
        args.path_regex.as_deref(),
        args.since,
        args.until,
    )?;
    let choice = FieldChoice {
        field: args.field.clone(),
        unit_ns: args.unit,
        regex: args.regex.clone(),
    };
    let progress = if args.quiet {
        progress::Bars::hidden()
    } else {
        progress::Bars::on_terminal()
    }
    .stopping_on(stop);
    let plan = Plan {
        format,
        choice: &choice,
        filters: &filters,
        exact: args.exact,
        last: args.last,
        bin_ns: histogram.bin_ns,
        bins: histogram.bins,
        threshold_ns: histogram.threshold_ns,
        threads: settings::threads(args.threads)?,
        progress: &progress,
    };

    match &args.compare {
        Some(pair) => {
            let [before, after] = pair.as_slice() else {
                bail!("--compare takes two files: BEFORE AFTER");
            };
            if before.as_os_str() == "-" && after.as_os_str() == "-" {
                bail!("--compare - -: stdin can be only one of BEFORE and AFTER");
            }
            let before = read_set(std::slice::from_ref(before), &plan)?;
            let after = read_set(std::slice::from_ref(after), &plan)?;
            let comparison = Comparison::new(&before, &after, significance);
            plot::write_requested(
                args.svg.as_deref(),
                args.png.as_deref(),
                &[("BEFORE", &comparison.before), ("AFTER", &comparison.after)],
            )?;
            if args.json {
                output::print_json(&comparison)?;
            } else {
                output::print_text(&render::comparison(&comparison))?;
            }
            let differs = comparison.test.as_ref().is_some_and(|t| t.differs);
            if args.fail_on_difference && differs {
                return Ok(ExitCode::from(1));
            }
        }
        None => {
            let set = read_set(&args.files, &plan)?;
            let summary = Summary::new(&set);
            plot::write_requested(args.svg.as_deref(), args.png.as_deref(), &[("", &summary)])?;
            if args.json {
                output::print_json(&Report {
                    schema: "linerate.logdist/1",
                    summary,
                })?;
            } else {
                output::print_text(&render::summary(&summary))?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads one data set; fails only when no line gives a time.
fn read_set(files: &[PathBuf], plan: &Plan<'_>) -> anyhow::Result<DataSet> {
    let sources: Vec<Source> = files.iter().map(|f| Source::from_arg(f)).collect();
    Ok(linerate_logdist::read(&sources, plan)?)
}
