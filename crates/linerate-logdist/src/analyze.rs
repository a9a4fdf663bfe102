//! Reading one data set (one or more inputs read as one log): the format resolved (or
//! detected from the first input's start), then every line classified, on worker threads or,
//! for `--last N`, on this thread with a ring of the last N outcomes; and the verdict on a
//! data set that gave no time at all.

use std::collections::VecDeque;

use crate::dataset::{BadLine, DataSet, InputInfo, Plan};
use crate::error::{BrokenStream, Error};
use crate::format::{self, Format, Layout, Undetected};
use crate::input::{LineReader, Source};
use crate::reason::{Outcome, Reason};

/// Reads one data set and fails when no line gives a time, naming why: no lines, all
/// filtered out, broken gzip streams, or the first bad line with its reason.
pub fn read(sources: &[Source], plan: &Plan<'_>) -> Result<DataSet, Error> {
    if sources.iter().filter(|s| **s == Source::Stdin).count() > 1 {
        return Err(Error::StdinTwice);
    }
    let set = analyze(sources, plan)?;
    if set.distribution.count() > 0 {
        return Ok(set);
    }
    let names: Vec<String> = sources.iter().map(Source::name).collect();
    let names = names.join(", ");
    let broken: Vec<BrokenStream> = set
        .inputs
        .iter()
        .filter_map(|i| {
            Some(BrokenStream {
                name: i.name.clone(),
                lines: i.end.lines,
                error: i.end.stream_error.clone()?,
            })
        })
        .collect();
    if !broken.is_empty() && set.lines <= broken.len() as u64 {
        return Err(Error::BrokenStreams(broken));
    }
    if set.lines == 0 {
        return Err(Error::NoLines { names });
    }
    if set.filtered > 0 && set.skipped_total() < set.lines {
        return Err(Error::AllFiltered {
            names,
            filtered: set.filtered,
        });
    }
    match set.first_bad {
        // Not a log at all: say so rather than quoting binary as a bad line.
        Some(bad) if bad.text.contains('\0') => Err(Error::NotText {
            name: set.inputs.get(bad.input).map_or(names, |i| i.name.clone()),
            at: bad.text.find('\0').unwrap_or(0),
        }),
        Some(bad) => Err(Error::NoTimes {
            name: set.inputs.get(bad.input).map_or(names, |i| i.name.clone()),
            skipped: set.skipped.values().map(|s| s.count).sum(),
            line: bad.line,
            reason: bad.reason,
            text: bad.text,
        }),
        None => Err(Error::NoTimesAtAll { names }),
    }
}

/// Reads every input of a data set: on worker threads when there are several cores and no
/// `--last`, else on this thread. A data set without a single time is returned as it is.
pub fn analyze(sources: &[Source], plan: &Plan<'_>) -> Result<DataSet, Error> {
    let Some(first_source) = sources.first() else {
        return Err(Error::NoInput);
    };
    let mut first = LineReader::open(first_source, plan.progress)?;
    let layout = resolve_layout(&mut first, &first_source.name(), plan)?;
    if plan.last.is_none() && plan.threads > 1 {
        crate::parallel::analyze(sources, first, &layout, plan)
    } else {
        sequential(sources, first, &layout, plan)
    }
}

/// The layout: the explicit format, or the one detected from the first input's start.
fn resolve_layout(
    reader: &mut LineReader<'_>,
    name: &str,
    plan: &Plan<'_>,
) -> Result<Layout, Error> {
    let read_error = |source| Error::Read {
        name: name.to_owned(),
        source,
    };
    let layout = match plan.format {
        Format::Auto if plan.choice.regex.is_some() => {
            Layout::explicit(Format::Regex, plan.choice)?
        }
        Format::Auto => {
            reader.peek().map_err(read_error)?;
            let broken = reader.stream_error().map(str::to_owned);
            let head = reader.peek().map_err(read_error)?;
            let complete = head.len() < (1 << 18);
            let name = name.to_owned();
            format::detect(head, complete, plan.choice).map_err(|why| match why {
                Undetected::WholeNumbers(largest) => Error::WholeNumbers { name, largest },
                Undetected::Layout(source) => Error::DetectedLayout { name, source },
                Undetected::NoFit => {
                    if let Some(at) = head.iter().position(|&b| b == 0) {
                        return Error::NotText { name, at };
                    }
                    let first_line = head
                        .split(|&b| b == b'\n')
                        .find(|l| !l.trim_ascii().is_empty())
                        .map(|l| String::from_utf8_lossy(&l[..l.len().min(200)]).into_owned())
                        .unwrap_or_default();
                    match (first_line.is_empty(), broken) {
                        (true, Some(error)) => Error::BrokenBeforeFirstLine { name, error },
                        (true, None) => Error::NothingToDetect { name },
                        (false, _) => Error::UnknownFormat { name, first_line },
                    }
                }
            })?
        }
        explicit => Layout::explicit(explicit, plan.choice)?,
    };
    Ok(layout)
}

/// Reads the inputs in order on this thread (needed for `--last`).
fn sequential(
    sources: &[Source],
    first: LineReader<'_>,
    layout: &Layout,
    plan: &Plan<'_>,
) -> Result<DataSet, Error> {
    let mut set = DataSet::new(plan);
    let mut ring: VecDeque<(usize, u64, Outcome)> = VecDeque::new();
    let mut line_parser = layout.parser(plan.choice)?;
    let mut first = Some(first);
    for (index, source) in sources.iter().enumerate() {
        let name = source.name();
        let reader = match first.take() {
            Some(reader) => reader,
            None => LineReader::open(source, plan.progress)?,
        };
        let mut crlf = 0u64;
        let mut first_bad: Option<BadLine> = None;
        let filters = plan.filters;
        let mut sink = |number: u64, outcome: Outcome, bytes: &[u8]| {
            if let (Outcome::Skipped(reason), None) = (outcome, &first_bad) {
                first_bad = Some(BadLine::new(index, number, reason, bytes));
            }
            match plan.last {
                Some(n) => {
                    if ring.len() as u64 >= n {
                        ring.pop_front();
                    }
                    if n > 0 {
                        ring.push_back((index, number, outcome));
                    }
                }
                None => set.count(index, number, outcome),
            }
        };
        let (end, cut) = reader
            .for_each_line(|line| {
                crlf += u64::from(line.crlf);
                let outcome = if line.too_long {
                    Outcome::Skipped(Reason::TooLong)
                } else {
                    line_parser.classify(line.bytes, filters)
                };
                sink(line.number, outcome, line.bytes);
            })
            .map_err(|source| Error::Read {
                name: name.clone(),
                source,
            })?;
        if let Some(number) = cut {
            sink(number, Outcome::Skipped(Reason::CutByStreamEnd), b"");
        }
        set.crlf_lines += crlf;
        if set.first_bad.is_none() {
            set.first_bad = first_bad;
        }
        set.inputs.push(InputInfo {
            name,
            layout: layout.clone(),
            end,
        });
    }
    for (index, number, outcome) in ring {
        set.count(index, number, outcome);
    }
    Ok(set)
}
