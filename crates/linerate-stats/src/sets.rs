//! Opening and reading the data sets, with ministat's error messages.
//!
//! As current FreeBSD does, every file is opened before any is read, so a missing file is
//! reported before invalid data in an earlier one.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead as _, BufReader, Read};

use anyhow::bail;
use linerate_report::format;
use linerate_stats::Sample;
use linerate_stats::read::{Format, ReadError, read_values};

use crate::stop::{Stop, StopReader};

/// The fewest values a set may have.
const MIN_VALUES: usize = 3;

/// One data set as read.
pub struct NamedSample {
    pub name: String,
    pub sample: Sample,
}

enum Source {
    Stdin,
    File(File),
}

/// Opens every file, then reads each; no files means standard input named `<stdin>`. A stop
/// signal ends every read where it is: the sets hold what was read before it.
pub fn read_sets(
    files: &[OsString],
    format: &Format,
    stop: &Stop,
) -> anyhow::Result<Vec<NamedSample>> {
    let mut sources = Vec::with_capacity(files.len().max(1));
    if files.is_empty() {
        sources.push(("<stdin>".to_owned(), Source::Stdin));
    }
    for path in files {
        let name = path.to_string_lossy().into_owned();
        if path == "-" {
            sources.push((name, Source::Stdin));
            continue;
        }
        match File::open(path) {
            Ok(file) => sources.push((name, Source::File(file))),
            Err(err) => bail!("Cannot open {name}: {}", os_message(&err)),
        }
    }
    // Files are parsed and sorted in parallel (ten million values take ~0.3 s each);
    // standard input is read on this thread, in order, since `-` may appear more than once.
    let results: Vec<anyhow::Result<NamedSample>> = std::thread::scope(|scope| {
        let pending: Vec<_> = sources
            .into_iter()
            .map(|(name, source)| match source {
                Source::File(file) => {
                    let file = StopReader::new(file, stop);
                    Pending::Thread(scope.spawn(move || load(file, name, format)))
                }
                Source::Stdin => Pending::Stdin(name),
            })
            .collect();
        pending
            .into_iter()
            .map(|pending| match pending {
                Pending::Thread(handle) => handle
                    .join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("reading a data set failed"))),
                Pending::Stdin(name) => {
                    load(StopReader::new(io::stdin().lock(), stop), name, format)
                }
            })
            .collect()
    });
    // The first error in argument order, as a sequential reader would report it.
    results.into_iter().collect()
}

enum Pending<'scope> {
    Thread(std::thread::ScopedJoinHandle<'scope, anyhow::Result<NamedSample>>),
    Stdin(String),
}

/// Reads, checks and sorts one set.
fn load<R: Read>(reader: R, name: String, format: &Format) -> anyhow::Result<NamedSample> {
    let values = read_set(reader, &name, format)?;
    if values.len() < MIN_VALUES {
        bail!("Dataset {name} must contain at least {MIN_VALUES} data points");
    }
    Ok(NamedSample {
        name,
        sample: Sample::new(values),
    })
}

fn read_set<R: Read>(reader: R, name: &str, format: &Format) -> anyhow::Result<Vec<f64>> {
    let mut reader = BufReader::with_capacity(1 << 16, reader);
    // A binary file is refused as such, not reported as invalid data on its line 1.
    let head = reader
        .fill_buf()
        .map_err(|err| anyhow::anyhow!("Cannot read {name}: {}", os_message(&err)))?;
    if let Some(at) = crate::output::binary_at(head) {
        bail!(
            "{name}: not a text file (a NUL byte at offset {at}); stat reads numbers, one per line"
        );
    }
    read_values(reader, format).map_err(|err| match err {
        ReadError::InvalidData { line, token } => anyhow::anyhow!(
            "Invalid data on line {line} in {name} (\"{}\" is not a number)",
            format::excerpt(&token, format::EXCERPT_CHARS)
        ),
        ReadError::Io(err) => anyhow::anyhow!("Cannot read {name}: {}", os_message(&err)),
    })
}

/// The OS's message without Rust's " (os error N)" suffix, as C's `err()` prints it.
fn os_message(err: &io::Error) -> String {
    let text = err.to_string();
    match err.raw_os_error() {
        Some(code) => text
            .strip_suffix(&format!(" (os error {code})"))
            .unwrap_or(&text)
            .to_owned(),
        None => text,
    }
}
