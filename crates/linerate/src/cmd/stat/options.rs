//! ministat's option values, validated as ministat validates them (C's `strtol`, `strtod` and
//! `atoi` rules) and with its messages.

use std::io::IsTerminal;

use anyhow::bail;
use linerate_stats::Confidence;
use linerate_stats::ministat::{DEFAULT_WIDTH, Options};
use linerate_stats::read::{Format, c_int, c_long_prefix, parse_c_double};

use super::Args;

/// Widest plot accepted; ministat would try to allocate any width.
const MAX_WIDTH: i64 = 1_000_000;

/// Everything `run` needs, validated.
#[derive(Debug)]
pub struct Settings {
    pub format: Format,
    pub render: Options,
}

impl Settings {
    pub fn from_args(args: &Args) -> anyhow::Result<Self> {
        let mut format = Format::default();
        if let Some(text) = &args.column {
            let column = c_int(text).ok_or_else(|| usage("Invalid column number.", "-C", text))?;
            if column <= 0 {
                return Err(usage("Column number should be positive.", "-C", text));
            }
            format.column = usize::try_from(column)?;
        }
        if let Some(delimiters) = &args.delimiters {
            if delimiters.is_empty() {
                bail!("Can't use empty delimiter string (-d)\n{SYNOPSIS}");
            }
            format.delimiters = delimiters.as_encoded_bytes().to_vec();
        }
        let confidence = match &args.confidence {
            None => Confidence::P95,
            Some(text) => confidence(text)?,
        };
        let width = match &args.width {
            None => terminal_width(),
            Some(text) => {
                let width =
                    c_int(text).ok_or_else(|| usage("Invalid width, not a number.", "-w", text))?;
                if width < 0 {
                    return Err(usage("Unable to move beyond left margin.", "-w", text));
                }
                if i64::from(width) > MAX_WIDTH {
                    bail!("Invalid width, at most {MAX_WIDTH} columns (-w {text})");
                }
                usize::try_from(width)?
            }
        };
        if args.files.len() > linerate_stats::ministat::MAX_SETS {
            bail!(
                "Too many datasets. ({} files; at most {})\n{SYNOPSIS}",
                args.files.len(),
                linerate_stats::ministat::MAX_SETS
            );
        }
        Ok(Self {
            format,
            render: Options {
                width,
                plot: !args.statistics_only && !args.summary_only,
                separate_bars: args.separate_bars,
                compare: !args.summary_only,
                quiet: args.quiet,
                confidence,
                test: args.test.into(),
                t_source: linerate_stats::TSource::MinistatTable,
            },
        })
    }
}

/// ministat's synopsis, printed after a usage error as ministat prints its own.
const SYNOPSIS: &str = "Usage: linerate stat [-C column] [-c confidence] [-d delimiter(s)] \
[-Anqs] [-w width] [--test student-t|mann-whitney] [--json] [file [file ...]]";

fn usage(whine: &str, flag: &str, value: &str) -> anyhow::Error {
    anyhow::anyhow!("{whine} ({flag} {value:?})\n{SYNOPSIS}")
}

/// `-c`: a C float naming one of ministat's six levels.
fn confidence(text: &str) -> anyhow::Result<Confidence> {
    // strtod("") converts nothing yet leaves nothing unparsed: ministat reads it as 0.
    let value = if text.is_empty() {
        0.0
    } else {
        parse_c_double(text.as_bytes())
            .ok_or_else(|| usage("Not a floating point number", "-c", text))?
    };
    Confidence::ministat(value).map_err(|_| {
        anyhow::anyhow!(
            "No support for confidence level (-c {text:?}; use 80, 90, 95, 98, 99 or 99.5)\n{SYNOPSIS}"
        )
    })
}

/// The plot width ministat picks: 74, or on a terminal `$COLUMNS` (as `atoi` reads it) or the
/// window width − 2.
fn terminal_width() -> usize {
    if !std::io::stdout().is_terminal() {
        return DEFAULT_WIDTH;
    }
    if let Some(columns) = std::env::var_os("COLUMNS").filter(|c| !c.is_empty()) {
        let (value, _) = c_long_prefix(columns.as_encoded_bytes());
        // atoi; a negative width draws nothing in ministat, an empty frame here.
        return usize::try_from((value as i32).clamp(0, MAX_WIDTH as i32)).unwrap_or(0);
    }
    // ministat asks the terminal for its window and needs only a column count (a pty may
    // report 0 rows).
    match rustix::termios::tcgetwinsize(std::io::stdout()) {
        Ok(size) if size.ws_col > 0 => usize::from(size.ws_col).saturating_sub(2),
        _ => DEFAULT_WIDTH,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confidence_rules() {
        assert!(confidence("9.5e1").is_ok_and(|c| c == Confidence::P95));
        assert!(confidence("99.5").is_ok());
        let err = confidence("97").map(|_| ()).unwrap_err().to_string();
        assert!(err.starts_with("No support for confidence level"), "{err}");
        let err = confidence("x").map(|_| ()).unwrap_err().to_string();
        assert!(err.starts_with("Not a floating point number"), "{err}");
        let err = confidence("").map(|_| ()).unwrap_err().to_string();
        assert!(err.starts_with("No support for confidence level"), "{err}");
    }
}
