//! `linerate stat`: a drop-in for FreeBSD's ministat. Same flags, same output byte for byte,
//! same errors and exit codes (current FreeBSD where it differs from Debian's 2015 package),
//! plus `--json` and `--test mann-whitney`.

mod options;

use std::ffi::OsString;
use std::io::{BufWriter, Write};
use std::process::ExitCode;

use linerate_report::format;
use linerate_stats::ministat::{self, Dataset, Test};
use linerate_stats::sets::{SetError, read_sets};

use crate::output::print_json;

/// Arguments of `linerate stat` (ministat's flags, then linerate's own).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Confidence levels (-c): 80, 90, 95, 98, 99, 99.5. Exit status: 0 on success, \
2 on bad usage, unreadable files or invalid data.

Examples:
  linerate stat before.txt after.txt
  linerate stat -A -c 99 base.txt a.txt b.txt",
    after_long_help = "Each FILE holds one number per line (in column -C, split by -d); '#' starts \
a comment. Every set after the first is compared with the first by Student's t test with pooled \
variance (or the Mann-Whitney U test with --test mann-whitney). Without FILE the data is read \
from standard input; '-' also names standard input.\n\nWhere FreeBSD's current ministat and \
Debian's 2015 package differ, linerate follows FreeBSD: the median of an even count is the mean \
of the two middle values; the relative error accounts for the ratio of the means; -q exists; \
'-' is named '-' in the legend; a missing file exits 2 and is reported before any file is read; \
CRLF lines are accepted. Lines may be of any length.\n\nConfidence levels (-c): 80, 90, 95, \
98, 99, 99.5 (ministat's table; its 99.5 column holds the two-sided 99.8 % values, kept for \
compatibility). Exit status: 0 on success, 2 on bad usage, unreadable files or invalid data.

Examples:
  linerate stat before.txt after.txt
  linerate stat -A -c 99 base.txt a.txt b.txt
  linerate stat --test mann-whitney lat-a lat-b
  linerate stat --json before.txt after.txt"
)]
pub struct Args {
    /// Print statistics only: suppress the graph
    #[arg(short = 'A')]
    statistics_only: bool,

    /// Column number to extract (starts and defaults to 1)
    #[arg(short = 'C', value_name = "column", allow_hyphen_values = true)]
    column: Option<String>,

    /// Confidence level in percent: 80, 90, 95, 98, 99 or 99.5 [default: 95]
    #[arg(short = 'c', value_name = "confidence", allow_hyphen_values = true)]
    confidence: Option<String>,

    /// Delimiter characters between columns [default: space and tab]
    #[arg(short = 'd', value_name = "delimiter(s)", allow_hyphen_values = true)]
    delimiters: Option<OsString>,

    /// Print summary statistics only: no graph, no test
    #[arg(short = 'n')]
    summary_only: bool,

    /// Suppress the data-set names and the summary-statistics header
    #[arg(short = 'q')]
    quiet: bool,

    /// Print the avg/median/stddev bars on separate lines
    #[arg(short = 's')]
    separate_bars: bool,

    /// Width of the graph [default: 74, or the terminal's width − 2]
    #[arg(short = 'w', value_name = "width", allow_hyphen_values = true)]
    width: Option<String>,

    /// The test comparing each set with the first
    #[arg(long, value_enum, default_value_t = TestArg::StudentT)]
    test: TestArg,

    /// Print the results as JSON (schema linerate.stat/1) instead of ministat's text
    #[arg(long)]
    json: bool,

    /// Data files (at most 7); '-' or none reads standard input
    #[arg(value_name = "FILE")]
    files: Vec<OsString>,
}

/// `--test` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TestArg {
    /// Student's t test with pooled variance, as ministat
    StudentT,
    /// Mann-Whitney U rank test, for skewed data such as latencies
    MannWhitney,
}

impl From<TestArg> for Test {
    fn from(test: TestArg) -> Self {
        match test {
            TestArg::StudentT => Test::StudentT,
            TestArg::MannWhitney => Test::MannWhitney,
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let settings = options::Settings::from_args(&args)?;
    // A long read (a pipe) stopped by Ctrl-C still gives the statistics of what was read.
    let stop = crate::stop::Stop::install()?;
    let sets = read_sets(&args.files, &settings.format, stop.flag()).map_err(|e| match e {
        // A token is quoted only so far: a binary or endless line does not flood the terminal.
        SetError::Invalid { name, line, token } => anyhow::anyhow!(
            "Invalid data on line {line} in {name} (\"{}\" is not a number)",
            format::excerpt(&token, format::EXCERPT_CHARS)
        ),
        e => e.into(),
    });
    let stopped = stop.signal();
    let sets = match (sets, stopped) {
        (Ok(sets), _) => sets,
        (Err(e), Some(sig)) => {
            eprintln!(
                "linerate: {} ({} stopped the read before enough data came)",
                crate::output::render_error(&e),
                crate::stop::name(sig)
            );
            return Ok(crate::stop::exit_code(sig));
        }
        (Err(e), None) => return Err(e),
    };
    let datasets: Vec<Dataset<'_>> = sets
        .iter()
        .map(|set| Dataset {
            name: &set.name,
            sample: &set.sample,
        })
        .collect();
    if args.json {
        print_json(&ministat::json::report(&datasets, &settings.render))?;
    } else {
        // Streamed: the plot of millions of points has millions of rows.
        let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        ministat::write(&mut out, &datasets, &settings.render)?;
        out.flush()?;
    }
    if let Some(sig) = stopped {
        eprintln!(
            "linerate: {} stopped the read: the statistics cover the values read before it",
            crate::stop::name(sig)
        );
        return Ok(crate::stop::exit_code(sig));
    }
    Ok(ExitCode::SUCCESS)
}
