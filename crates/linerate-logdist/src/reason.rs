//! What one line yields: a response time, a line the filters leave out, or a line skipped for
//! a stated [`Reason`]. A leaf: every parsing module speaks these two types.

/// Why a line gave no response time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// An empty line.
    Empty,
    /// NUL or other control bytes: binary garbage.
    Binary,
    /// Longer than the line limit.
    TooLong,
    /// A line of another format (a JSON line in an access log, or the reverse).
    OtherFormat,
    /// The line ends before all its fields (missing bracket, quote, status or byte count).
    Truncated,
    /// The line is complete but has no response-time field.
    NoTime,
    /// The time field is not a number (`-` for an upstream that never answered).
    NonNumericTime,
    /// A time too large to count (above 2⁶⁴ ns, about 584 years) or with over 30 digits.
    TimeOutOfRange,
    /// A JSON line that does not parse.
    BadJson,
    /// A JSON line without the `--field` path.
    MissingField,
    /// A line the `--regex` does not match.
    NoMatch,
    /// A timestamp that cannot be read, when `--since/--until` need it.
    BadTimestamp,
    /// The last, partial line of a compressed stream that ended early.
    CutByStreamEnd,
}

impl Reason {
    /// A short description for the human report.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Empty => "empty line",
            Self::Binary => "binary garbage (control bytes)",
            Self::TooLong => "line longer than 1 MiB",
            Self::OtherFormat => "line of another format (mixed formats)",
            Self::Truncated => "truncated (fields missing)",
            Self::NoTime => "no response-time field",
            Self::NonNumericTime => "non-numeric time (e.g. \"-\" upstream)",
            Self::TimeOutOfRange => "time out of range (over 584 years)",
            Self::BadJson => "invalid JSON",
            Self::MissingField => "JSON without the --field",
            Self::NoMatch => "does not match --regex",
            Self::BadTimestamp => "unreadable timestamp (needed by --since/--until)",
            Self::CutByStreamEnd => "cut by the end of a broken gzip stream",
        }
    }
}

/// What one line yields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A response time in nanoseconds that passed the filters.
    Sample(u64),
    /// Parsed, but left out by a filter.
    Filtered,
    /// Not usable.
    Skipped(Reason),
}
