//! What can go wrong, as typed errors that name the file, line, flag or value at fault. A bad
//! line is never an error (it is counted by [`Reason`]); only a data set that yields no time
//! at all, an unreadable input, or a format that cannot work is.

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::reason::Reason;

/// A format, field or regex choice that cannot work.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    /// `auto` reached a place that needs a resolved format.
    #[error("auto is resolved by detection")]
    Unresolved,
    /// An nginx time field other than the two nginx appends.
    #[error(
        "--field {field:?}: an nginx log has request_time (the first appended field) or \
         upstream_response_time (the second); use --regex for others"
    )]
    NginxField {
        /// The field asked for.
        field: String,
    },
    /// `--format regex` without a pattern.
    #[error("--input-format regex needs --regex PATTERN")]
    RegexMissing,
    /// A pattern that does not compile.
    #[error("--regex {pattern:?}")]
    BadRegex {
        /// The pattern.
        pattern: String,
        /// Why it does not compile.
        #[source]
        source: regex::Error,
    },
    /// A pattern without the group that holds the time.
    #[error("--regex {pattern:?} has no group named `time`: write it as (?P<time>[0-9.]+)")]
    NoTimeGroup {
        /// The pattern.
        pattern: String,
    },
}

/// A gzip stream that ended early or was corrupt, when it left no usable line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenStream {
    /// The input's name.
    pub name: String,
    /// Lines read before the break.
    pub lines: u64,
    /// The decompressor's error.
    pub error: String,
}

impl fmt::Display for BrokenStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: the gzip stream broke after {} lines: {}",
            self.name, self.lines, self.error
        )
    }
}

/// `a; b; c`.
fn joined(streams: &[BrokenStream]) -> String {
    let parts: Vec<String> = streams.iter().map(ToString::to_string).collect();
    parts.join("; ")
}

/// Errors of reading a data set.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No input at all.
    #[error("no input given")]
    NoInput,
    /// `-` more than once.
    #[error("stdin (-) can be read only once")]
    StdinTwice,
    /// A file that cannot be opened.
    #[error("cannot open {}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A read that failed (a plain file or stdin; a gzip stream's error ends its input instead).
    #[error("cannot read {name}")]
    Read {
        /// The input's name.
        name: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The format, field or regex cannot work.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// `--format auto` found appended whole numbers that may be seconds or microseconds.
    #[error(
        "{name}: cannot detect the log format: the appended times are whole numbers up to \
         {largest}: Apache %T (seconds) or %D (microseconds)? Say --input-format apache-s or \
         --input-format apache-us"
    )]
    WholeNumbers {
        /// The input's name.
        name: String,
        /// The largest time seen.
        largest: u64,
    },
    /// `--format auto` found a format that the field choice does not fit.
    #[error("{name}: cannot detect the log format")]
    DetectedLayout {
        /// The input's name.
        name: String,
        /// Why the detected format does not work.
        #[source]
        source: LayoutError,
    },
    /// `--format auto` found no format that reads the first lines.
    #[error(
        "{name}: cannot detect the log format from the first lines (first line: {}); \
         name it with --input-format nginx|apache-us|apache-s|json or give --regex",
        excerpt(first_line)
    )]
    UnknownFormat {
        /// The input's name.
        name: String,
        /// Its first non-empty line (up to 200 bytes).
        first_line: String,
    },
    /// The input is not text (a NUL byte among its first lines, after decompression).
    #[error(
        "{name}: not a text file (a NUL byte at offset {at}); logdist reads access logs, \
         plain or gzip-compressed"
    )]
    NotText {
        /// The input's name.
        name: String,
        /// Where the first NUL byte is.
        at: usize,
    },
    /// `--format auto` found no line to look at.
    #[error("{name}: no log lines to detect the format from")]
    NothingToDetect {
        /// The input's name.
        name: String,
    },
    /// A gzip stream broke before its first line.
    #[error("{name}: the gzip stream breaks before the first line: {error}")]
    BrokenBeforeFirstLine {
        /// The input's name.
        name: String,
        /// The decompressor's error.
        error: String,
    },
    /// A parsing thread ended before the input did.
    #[error("a parsing thread stopped early")]
    WorkerStopped,
    /// A parsing thread panicked.
    #[error("a parsing thread failed")]
    WorkerFailed,
    /// Broken gzip streams were all the data set had.
    #[error("{}", joined(.0))]
    BrokenStreams(Vec<BrokenStream>),
    /// The inputs are empty.
    #[error("{names}: no lines to read")]
    NoLines {
        /// The inputs' names, comma-separated.
        names: String,
    },
    /// Every parsed line was left out by the filters.
    #[error("{names}: no line passed the filters ({filtered} parsed, all filtered out)")]
    AllFiltered {
        /// The inputs' names, comma-separated.
        names: String,
        /// Lines parsed and filtered out.
        filtered: u64,
    },
    /// No line gives a time: the first bad line, as evidence.
    #[error(
        "{name}: no line gives a response time ({skipped} lines skipped); the first bad line, \
         {name}:{line}, is {}: {}",
        reason.describe(),
        excerpt(text)
    )]
    NoTimes {
        /// The input that holds the first bad line.
        name: String,
        /// Lines skipped in all.
        skipped: u64,
        /// Its line number.
        line: u64,
        /// Why it gave no time.
        reason: Reason,
        /// Up to 200 bytes of it.
        text: String,
    },
    /// No line gives a time, and none was skipped either.
    #[error("{names}: no line gives a response time")]
    NoTimesAtAll {
        /// The inputs' names, comma-separated.
        names: String,
    },
}

/// How many characters a quoted input line may take in a message (escapes included).
const EXCERPT_CHARS: usize = 48;

/// A quoted input line for a message: escaped like a Rust string, cut once the escaped form
/// reaches [`EXCERPT_CHARS`] characters, with how much was left out, so a binary or endless
/// line does not flood the terminal.
fn excerpt(text: &str) -> String {
    let mut out = String::new();
    for (i, c) in text.char_indices() {
        let shown: String = c.escape_debug().collect();
        if out.chars().count() + shown.chars().count() > EXCERPT_CHARS {
            return format!("\"{out}\"… ({} more bytes)", text.len() - i);
        }
        out.push_str(&shown);
    }
    format!("\"{out}\"")
}

#[cfg(test)]
mod excerpt_tests {
    #[test]
    fn long_lines_are_cut() {
        assert_eq!(super::excerpt("hello"), "\"hello\"");
        let long = "x".repeat(300);
        let cut = super::excerpt(&long);
        assert!(cut.ends_with("… (252 more bytes)"), "{cut}");
        assert!(cut.chars().count() < 75, "{cut}");
    }
}
