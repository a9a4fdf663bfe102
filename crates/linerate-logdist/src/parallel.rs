//! Parsing on several threads. This thread reads and cuts the inputs into chunks of whole
//! lines; workers classify them into their own partial data sets; the partials are merged and
//! the per-chunk line counts turn chunk-relative line numbers into real ones. Memory stays
//! bounded: a few chunks in flight, recycled.

use std::sync::mpsc::{Receiver, SyncSender, channel, sync_channel};
use std::sync::{Arc, Mutex};

use crate::dataset::{BadLine, DataSet, FIRST_LINES, InputInfo, Plan};
use crate::error::Error;
use crate::format::Layout;
use crate::input::{Chunk, LineReader, MAX_LINE, ReadEnd, Source};
use crate::parse::LineParser;
use crate::progress::Progress;
use crate::reason::{Outcome, Reason};

/// One chunk of work.
struct Work {
    seq: u64,
    input: usize,
    long_line: bool,
    data: Vec<u8>,
}

/// What a worker learnt about one chunk, for the line numbers.
struct ChunkReport {
    seq: u64,
    input: usize,
    lines: u64,
    /// Up to [`FIRST_LINES`] chunk-relative line numbers per reason.
    skips: Vec<(Reason, u64)>,
    first_bad: Option<BadLine>,
}

/// Classifies every line of a chunk into `set`.
fn work_on(
    chunk: &Work,
    parser: &mut LineParser,
    plan: &Plan<'_>,
    set: &mut DataSet,
) -> ChunkReport {
    let mut report = ChunkReport {
        seq: chunk.seq,
        input: chunk.input,
        lines: 0,
        skips: Vec::new(),
        first_bad: None,
    };
    let note = |report: &mut ChunkReport, line: u64, reason: Reason, bytes: &[u8]| {
        if report.skips.iter().filter(|(r, _)| *r == reason).count() < FIRST_LINES {
            report.skips.push((reason, line));
        }
        if report.first_bad.is_none() {
            report.first_bad = Some(BadLine::new(chunk.input, line, reason, bytes));
        }
    };
    if chunk.long_line {
        report.lines = 1;
        set.count(chunk.input, 1, Outcome::Skipped(Reason::TooLong));
        note(&mut report, 1, Reason::TooLong, &chunk.data);
        return report;
    }
    let data = chunk.data.as_slice();
    let mut at = 0;
    while at < data.len() {
        let end = memchr::memchr(b'\n', &data[at..]).map_or(data.len(), |n| at + n);
        let raw = &data[at..end];
        at = end + 1;
        report.lines += 1;
        let (bytes, crlf) = match raw.last() {
            Some(b'\r') => (&raw[..raw.len() - 1], true),
            _ => (raw, false),
        };
        set.crlf_lines += u64::from(crlf);
        let outcome = if bytes.len() > MAX_LINE {
            Outcome::Skipped(Reason::TooLong)
        } else {
            parser.classify(bytes, plan.filters)
        };
        // line numbers are fixed up when merging; count with a placeholder
        set.count(chunk.input, 0, outcome);
        if let Outcome::Skipped(reason) = outcome {
            let line = report.lines;
            note(&mut report, line, reason, bytes);
        }
    }
    report
}

/// A worker: takes chunks until the channel closes.
fn worker(
    queue: &Mutex<Receiver<Work>>,
    free: &std::sync::mpsc::Sender<Vec<u8>>,
    mut parser: LineParser,
    plan: &Plan<'_>,
) -> (DataSet, Vec<ChunkReport>) {
    let mut set = DataSet::new(plan);
    let mut reports = Vec::new();
    loop {
        let next = match queue.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => break, // another worker panicked; the join reports it
        };
        let Ok(chunk) = next else { break };
        reports.push(work_on(&chunk, &mut parser, plan, &mut set));
        let _ = free.send(chunk.data);
    }
    (set, reports)
}

/// Reads every input, handing chunks to the workers; returns how each input ended.
fn feed(
    sources: &[Source],
    first: LineReader<'_>,
    progress: &dyn Progress,
    queue: &SyncSender<Work>,
    free: &Receiver<Vec<u8>>,
) -> Result<Vec<(ReadEnd, bool)>, Error> {
    let mut ends = Vec::new();
    let mut first = Some(first);
    let mut seq = 0;
    for (input, source) in sources.iter().enumerate() {
        let mut reader = match first.take() {
            Some(reader) => reader,
            None => LineReader::open(source, progress)?,
        };
        loop {
            let mut data = free.try_recv().unwrap_or_default();
            let chunk = reader
                .next_chunk(&mut data)
                .map_err(|source_error| Error::Read {
                    name: source.name(),
                    source: source_error,
                })?;
            let long_line = match chunk {
                Chunk::Lines => false,
                Chunk::LongLine => true,
                Chunk::End { stream_error, cut } => {
                    let end = ReadEnd {
                        lines: 0, // filled in from the chunk reports
                        gzip: reader.is_gzip(),
                        stream_error,
                    };
                    ends.push((end, cut));
                    break;
                }
            };
            let work = Work {
                seq,
                input,
                long_line,
                data,
            };
            seq += 1;
            if queue.send(work).is_err() {
                return Err(Error::WorkerStopped);
            }
        }
    }
    Ok(ends)
}

/// Reads the inputs with `plan.threads` parsing threads.
pub fn analyze(
    sources: &[Source],
    first: LineReader<'_>,
    layout: &Layout,
    plan: &Plan<'_>,
) -> Result<DataSet, Error> {
    let parsers = (0..plan.threads)
        .map(|_| layout.parser(plan.choice))
        .collect::<Result<Vec<_>, _>>()?;
    let (queue_tx, queue_rx) = sync_channel::<Work>(plan.threads * 2);
    let queue_rx = Arc::new(Mutex::new(queue_rx));
    let (free_tx, free_rx) = channel::<Vec<u8>>();
    let (fed, results) = std::thread::scope(|scope| {
        let handles: Vec<_> = parsers
            .into_iter()
            .map(|parser| {
                let queue = Arc::clone(&queue_rx);
                let free = free_tx.clone();
                scope.spawn(move || worker(&queue, &free, parser, plan))
            })
            .collect();
        let fed = feed(sources, first, plan.progress, &queue_tx, &free_rx);
        drop(queue_tx); // lets the workers finish
        let results: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
        (fed, results)
    });
    let ends = fed?;

    let mut set = DataSet::new(plan);
    let mut reports = Vec::new();
    for result in results {
        let (part, mut part_reports) = result.map_err(|_| Error::WorkerFailed)?;
        set.distribution.merge(&part.distribution);
        set.bins.merge(&part.bins);
        set.under_threshold += part.under_threshold;
        set.filtered += part.filtered;
        set.lines += part.lines;
        set.crlf_lines += part.crlf_lines;
        for (reason, skips) in part.skipped {
            set.skipped.entry(reason).or_default().count += skips.count;
        }
        reports.append(&mut part_reports);
    }
    reports.sort_unstable_by_key(|r| r.seq);
    let mut lines_before = vec![0u64; sources.len()];
    for report in reports {
        let offset = lines_before[report.input];
        for (reason, line) in report.skips {
            let first = &mut set.skipped.entry(reason).or_default().first;
            if first.len() < FIRST_LINES {
                first.push((report.input, offset + line));
            }
        }
        if set.first_bad.is_none() {
            set.first_bad = report.first_bad.map(|mut bad| {
                bad.line += offset;
                bad
            });
        }
        lines_before[report.input] += report.lines;
    }
    for (input, ((mut end, cut), source)) in ends.into_iter().zip(sources).enumerate() {
        end.lines = lines_before[input];
        if cut {
            set.count(
                input,
                end.lines + 1,
                Outcome::Skipped(Reason::CutByStreamEnd),
            );
        }
        set.inputs.push(InputInfo {
            name: source.name(),
            layout: layout.clone(),
            end,
        });
    }
    Ok(set)
}
