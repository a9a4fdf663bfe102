//! `linerate stat`'s data sets: opening and reading the files (or standard input), with
//! ministat's error messages.
//!
//! As current FreeBSD does, every file is opened before any is read, so a missing file is
//! reported before invalid data in an earlier one.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead as _, BufReader, Read};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::Sample;
use crate::read::{Format, ReadError, read_values};

/// The fewest values a set may have.
pub const MIN_VALUES: usize = 3;

/// One data set as read.
#[derive(Debug)]
pub struct NamedSample {
    /// The file's name as given (`<stdin>` for standard input without files, `-` with).
    pub name: String,
    /// Its values.
    pub sample: Sample,
}

/// Why the data sets could not be read: ministat's messages (the OS's reason is the
/// [`io::Error`]'s).
#[derive(Debug, thiserror::Error)]
pub enum SetError {
    /// A file that cannot be opened.
    #[error("Cannot open {name}: {source}")]
    Open {
        /// The file.
        name: String,
        /// The OS's reason.
        source: io::Error,
    },
    /// A read that failed.
    #[error("Cannot read {name}: {source}")]
    Read {
        /// The file.
        name: String,
        /// The OS's reason.
        source: io::Error,
    },
    /// A file with a NUL byte: not text.
    #[error(
        "{name}: not a text file (a NUL byte at offset {at}); stat reads numbers, one per line"
    )]
    NotText {
        /// The file.
        name: String,
        /// Where the NUL byte is.
        at: usize,
    },
    /// A token that is not a number (the caller may shorten `token` when it shows it).
    #[error("Invalid data on line {line} in {name} (\"{token}\" is not a number)")]
    Invalid {
        /// The file.
        name: String,
        /// 1-based line number.
        line: u64,
        /// The token.
        token: String,
    },
    /// Fewer than [`MIN_VALUES`] values.
    #[error("Dataset {name} must contain at least {MIN_VALUES} data points")]
    TooFew {
        /// The file.
        name: String,
    },
    /// A reading thread died.
    #[error("reading a data set failed")]
    Thread,
}

enum Source {
    Stdin,
    File(File),
}

/// Opens every file, then reads each; no files means standard input named `<stdin>`, and `-`
/// names it too. Raising `stop` ends every read where it is: the sets hold what was read
/// before it.
///
/// # Errors
/// The first error in argument order, as a sequential reader would report it.
pub fn read_sets(
    files: &[OsString],
    format: &Format,
    stop: &AtomicBool,
) -> Result<Vec<NamedSample>, SetError> {
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
            Err(source) => return Err(SetError::Open { name, source }),
        }
    }
    // Files are parsed and sorted in parallel (ten million values take ~0.3 s each);
    // standard input is read on this thread, in order, since `-` may appear more than once.
    let results: Vec<Result<NamedSample, SetError>> = std::thread::scope(|scope| {
        let pending: Vec<_> = sources
            .into_iter()
            .map(|(name, source)| match source {
                Source::File(file) => {
                    let file = StopReader { inner: file, stop };
                    Pending::Thread(scope.spawn(move || load(file, name, format)))
                }
                Source::Stdin => Pending::Stdin(name),
            })
            .collect();
        pending
            .into_iter()
            .map(|pending| match pending {
                Pending::Thread(handle) => handle.join().unwrap_or(Err(SetError::Thread)),
                Pending::Stdin(name) => {
                    let stdin = StopReader {
                        inner: io::stdin().lock(),
                        stop,
                    };
                    load(stdin, name, format)
                }
            })
            .collect()
    });
    results.into_iter().collect()
}

enum Pending<'scope> {
    Thread(std::thread::ScopedJoinHandle<'scope, Result<NamedSample, SetError>>),
    Stdin(String),
}

/// A reader that ends (reads as end of input) once `stop` is raised: what was read before is
/// the partial result. A read already waiting for data returns when the data comes.
struct StopReader<'a, R> {
    inner: R,
    stop: &'a AtomicBool,
}

impl<R: Read> Read for StopReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.stop.load(Ordering::Relaxed) {
            return Ok(0);
        }
        self.inner.read(buf)
    }
}

/// Reads, checks and sorts one set.
fn load<R: Read>(reader: R, name: String, format: &Format) -> Result<NamedSample, SetError> {
    let values = read_set(reader, &name, format)?;
    if values.len() < MIN_VALUES {
        return Err(SetError::TooFew { name });
    }
    Ok(NamedSample {
        name,
        sample: Sample::new(values),
    })
}

fn read_set<R: Read>(reader: R, name: &str, format: &Format) -> Result<Vec<f64>, SetError> {
    let mut reader = BufReader::with_capacity(1 << 16, reader);
    // A binary file is refused as such, not reported as invalid data on its line 1.
    let head = reader.fill_buf().map_err(|source| SetError::Read {
        name: name.to_owned(),
        source,
    })?;
    if let Some(at) = binary_at(head) {
        return Err(SetError::NotText {
            name: name.to_owned(),
            at,
        });
    }
    read_values(reader, format).map_err(|err| match err {
        ReadError::InvalidData { line, token } => SetError::Invalid {
            name: name.to_owned(),
            line,
            token,
        },
        ReadError::Io(source) => SetError::Read {
            name: name.to_owned(),
            source,
        },
    })
}

/// Where the first NUL byte of `bytes` is, if any: a text file (sysctl.conf, a log, a column
/// of numbers) has none. UTF-16 text (a Windows .reg export) starts with its byte-order mark
/// and is text.
#[must_use]
pub fn binary_at(bytes: &[u8]) -> Option<usize> {
    if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
        return None;
    }
    bytes.iter().position(|&b| b == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_is_a_nul_byte_unless_utf16() {
        assert_eq!(binary_at(b"net.core.somaxconn = 4096\n"), None);
        assert_eq!(binary_at(b"\x7fELF\x02\x01\x01\0"), Some(7));
        assert_eq!(binary_at(&[0xff, 0xfe, b'W', 0]), None);
    }
}
