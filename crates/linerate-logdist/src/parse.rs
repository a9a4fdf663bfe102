//! Turning one log line into an outcome: a response time in nanoseconds, a line the filters
//! leave out, or a line skipped for a stated [`Reason`]. One [`LineParser`] per format; no
//! allocation per line for the access-log and regex formats.

use regex::bytes::{CaptureLocations, Regex};

use super::access::{self, Column};
use super::filter::Filters;
use super::json::JsonFields;

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

/// Parses a non-negative decimal (`0.012`, `5123`, `1.5e-3` is refused) in units of `unit_ns`
/// nanoseconds, rounding to the nearest nanosecond.
pub fn parse_decimal(token: &[u8], unit_ns: u64) -> Result<u64, Reason> {
    match parse_decimal_fast(token, unit_ns) {
        Some(ns) => Ok(ns),
        None => parse_decimal_general(token, unit_ns),
    }
}

/// Any decimal in any unit, in 128-bit arithmetic, rounding to the nearest nanosecond.
fn parse_decimal_general(token: &[u8], unit_ns: u64) -> Result<u64, Reason> {
    let mut mantissa: u128 = 0;
    let mut scale: u128 = 1;
    let mut seen_dot = false;
    let mut digits = 0;
    for &b in token {
        match b {
            b'0'..=b'9' => {
                digits += 1;
                if digits > 30 {
                    return Err(Reason::TimeOutOfRange);
                }
                mantissa = mantissa * 10 + u128::from(b - b'0');
                if seen_dot {
                    scale *= 10;
                }
            }
            b'.' if !seen_dot => seen_dot = true,
            _ => return Err(Reason::NonNumericTime),
        }
    }
    if digits == 0 {
        return Err(Reason::NonNumericTime);
    }
    // u64 arithmetic for the common case; 128-bit division is a library call
    if let (Ok(m), Ok(sc)) = (u64::try_from(mantissa), u64::try_from(scale)) {
        if let Some(product) = m.checked_mul(unit_ns).and_then(|p| p.checked_add(sc / 2)) {
            return Ok(product / sc);
        }
    }
    let ns = (mantissa * u128::from(unit_ns) + scale / 2) / scale;
    u64::try_from(ns).map_err(|_| Reason::TimeOutOfRange)
}

const POW10: [u64; 10] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
];

/// The common case without a division: at most 18 digits, a unit that is a power of ten
/// (s, ms, µs, ns) and no more decimals than the unit has below it (`0.012` s = 12 000 000 ns).
#[inline]
fn parse_decimal_fast(token: &[u8], unit_ns: u64) -> Option<u64> {
    if token.is_empty() || token.len() > 18 {
        return None;
    }
    let unit_exp = POW10.iter().position(|&p| p == unit_ns)?;
    let mut value = 0u64;
    let mut dot = None;
    for (i, &b) in token.iter().enumerate() {
        match b {
            b'0'..=b'9' => value = value * 10 + u64::from(b - b'0'),
            b'.' if dot.is_none() => dot = Some(i),
            _ => return None,
        }
    }
    let digits = token.len() - usize::from(dot.is_some());
    if digits == 0 {
        return None;
    }
    let decimals = dot.map_or(0, |i| token.len() - i - 1);
    value.checked_mul(*POW10.get(unit_exp.checked_sub(decimals)?)?)
}

/// Whether a line that failed to parse looks like binary data rather than text.
pub fn looks_binary(line: &[u8]) -> bool {
    let control = line
        .iter()
        .filter(|&&b| (b < 0x20 && b != b'\t') || b == 0x7f)
        .count();
    let high = line.iter().filter(|&&b| b >= 0x80).count();
    control > 0 || high * 4 > line.len()
}

/// The format-specific part of parsing.
pub enum LineParser {
    /// NCSA access-log shape with appended times.
    Access {
        /// Which appended field.
        column: Column,
        /// Nanoseconds per unit of the field.
        unit_ns: u64,
    },
    /// JSON lines.
    Json(JsonFields),
    /// A user regex with named groups.
    Regex(Box<RegexFields>),
}

/// A `--regex` and the positions of its named groups.
pub struct RegexFields {
    regex: Regex,
    locations: CaptureLocations,
    time: usize,
    status: Option<usize>,
    method: Option<usize>,
    path: Option<usize>,
    timestamp: Option<usize>,
    unit_ns: u64,
}

impl RegexFields {
    /// Compiles `pattern`, which must have a group named `time` (optionally `status`,
    /// `method`, `path` and `ts` too).
    pub fn new(pattern: &str, unit_ns: u64) -> Result<Self, String> {
        let regex = Regex::new(pattern).map_err(|e| format!("--regex {pattern:?}: {e}"))?;
        let group = |name: &str| regex.capture_names().position(|n| n == Some(name));
        let time = group("time").ok_or_else(|| {
            format!("--regex {pattern:?} has no group named `time`: write it as (?P<time>[0-9.]+)")
        })?;
        Ok(Self {
            locations: regex.capture_locations(),
            status: group("status"),
            method: group("method"),
            path: group("path"),
            timestamp: group("ts"),
            time,
            unit_ns,
            regex,
        })
    }
}

impl LineParser {
    /// Classifies one line (without its line ending).
    pub fn classify(&mut self, line: &[u8], filters: &Filters) -> Outcome {
        if line.is_empty() {
            return Outcome::Skipped(Reason::Empty);
        }
        let result = match self {
            Self::Access { column, unit_ns } => Self::access(line, *column, *unit_ns, filters),
            Self::Json(fields) => fields.classify(line, filters),
            Self::Regex(fields) => Self::regex(fields, line, filters),
        };
        match result {
            Ok(outcome) => outcome,
            Err(reason) if reason != Reason::BadTimestamp && looks_binary(line) => {
                Outcome::Skipped(Reason::Binary)
            }
            Err(reason) => Outcome::Skipped(reason),
        }
    }

    fn access(
        line: &[u8],
        column: Column,
        unit_ns: u64,
        filters: &Filters,
    ) -> Result<Outcome, Reason> {
        let a = access::split(line)?;
        let ns = match access::time_ns(a.times, column, unit_ns) {
            Ok(ns) => ns,
            // a line cut inside a quoted field leaves text after its last quote
            Err(reason) => return Err(access::split_strict(line).err().unwrap_or(reason)),
        };
        let keep = filters.keep(Some(a.status), a.method, a.path, || Some(a.timestamp))?;
        Ok(if keep {
            Outcome::Sample(ns)
        } else {
            Outcome::Filtered
        })
    }

    fn regex(f: &mut RegexFields, line: &[u8], filters: &Filters) -> Result<Outcome, Reason> {
        if f.regex.captures_read(&mut f.locations, line).is_none() {
            return Err(Reason::NoMatch);
        }
        let locations = &f.locations;
        let get = |i: Option<usize>| i.and_then(|i| locations.get(i)).map(|(s, e)| &line[s..e]);
        let time = get(Some(f.time)).ok_or(Reason::NoTime)?;
        let ns = parse_decimal(time, f.unit_ns)?;
        let status = match get(f.status) {
            Some(s) => Some(
                std::str::from_utf8(s)
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .ok_or(Reason::Truncated)?,
            ),
            None => None,
        };
        let timestamp = get(f.timestamp);
        let keep = filters.keep(
            status,
            get(f.method).unwrap_or(b""),
            get(f.path).unwrap_or(b""),
            || timestamp,
        )?;
        Ok(if keep {
            Outcome::Sample(ns)
        } else {
            Outcome::Filtered
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_in_any_unit() {
        let s = 1_000_000_000;
        assert_eq!(parse_decimal(b"0.012", s), Ok(12_000_000));
        assert_eq!(parse_decimal(b"12", s), Ok(12_000_000_000));
        assert_eq!(parse_decimal(b"1.", s), Ok(1_000_000_000));
        assert_eq!(parse_decimal(b".5", s), Ok(500_000_000));
        assert_eq!(parse_decimal(b"5123", 1_000), Ok(5_123_000));
        assert_eq!(parse_decimal(b"0.0000000004", s), Ok(0));
        assert_eq!(parse_decimal(b"0.0000000005", s), Ok(1));
        for bad in [&b"-"[..], b"", b".", b"1.2.3", b"-1", b"1e3", b"0x10"] {
            assert_eq!(
                parse_decimal(bad, s),
                Err(Reason::NonNumericTime),
                "{bad:?}"
            );
        }
        // Numbers, but more nanoseconds than a u64 holds: out of range, not clamped.
        for big in [
            &b"99999999999999999999"[..],
            b"18446744074",
            b"1234567890123456789012345678901",
        ] {
            assert_eq!(
                parse_decimal(big, s),
                Err(Reason::TimeOutOfRange),
                "{big:?}"
            );
        }
        assert_eq!(parse_decimal(b"18446744073.709551615", s), Ok(u64::MAX));
    }

    #[test]
    fn lines_cut_inside_a_quoted_field_are_truncated() {
        let line = b"203.0.113.9 - - [10/Oct/2026:13:55:36 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"Mozilla/5.0 (X11)\" 0.012 0.010";
        let mut p = LineParser::Access {
            column: Column::Request,
            unit_ns: 1_000_000_000,
        };
        let none = Filters::default();
        assert_eq!(p.classify(line, &none), Outcome::Sample(12_000_000));
        for cut in [20, 50, 70, 76, 85] {
            assert_eq!(
                p.classify(&line[..cut], &none),
                Outcome::Skipped(Reason::Truncated),
                "{cut}"
            );
        }
        assert_eq!(
            p.classify(&line[..line.len() - 12], &none),
            Outcome::Skipped(Reason::NoTime)
        );
    }

    #[test]
    fn binary_garbage_is_recognised() {
        assert!(looks_binary(b"\x00\x01abc"));
        assert!(looks_binary(&[0xff; 10]));
        assert!(!looks_binary("caf\u{e9} \"GET /\"".as_bytes()));
    }

    #[test]
    fn regex_groups_and_filters() {
        let mut p = LineParser::Regex(Box::new(
            RegexFields::new(
                r"^(?P<status>\d{3}) (?P<method>\S+) (?P<time>[0-9.]+)ms$",
                1_000_000,
            )
            .expect("compiles"),
        ));
        let none = Filters::default();
        assert_eq!(
            p.classify(b"200 GET 12.5ms", &none),
            Outcome::Sample(12_500_000)
        );
        assert_eq!(
            p.classify(b"200 GET -ms", &none),
            Outcome::Skipped(Reason::NoMatch)
        );
        assert_eq!(
            p.classify(b"\x00\x00", &none),
            Outcome::Skipped(Reason::Binary)
        );
        let only_post = Filters {
            methods: vec![b"POST".to_vec()],
            ..Filters::default()
        };
        assert_eq!(p.classify(b"200 GET 12.5ms", &only_post), Outcome::Filtered);
        assert!(RegexFields::new("(?P<t>x)", 1).is_err());
        assert!(RegexFields::new("(", 1).is_err());
    }
}

#[cfg(test)]
mod never_panics {
    use proptest::prelude::*;

    use super::*;
    use crate::cmd::logdist::filter::StatusMatch;

    const LINE: &str = "203.0.113.9 - - [10/Oct/2026:13:55:36 +0000] \"GET /a?b=\\\"c\\\" HTTP/1.1\" 200 5 \"-\" \"Mozilla/5.0 (X11)\" 0.012 0.010, 0.002 : -";

    fn parsers() -> Vec<LineParser> {
        vec![
            LineParser::Access {
                column: Column::Request,
                unit_ns: 1_000_000_000,
            },
            LineParser::Access {
                column: Column::Upstream,
                unit_ns: 1_000,
            },
            LineParser::Json(JsonFields::new("a.b", 1_000_000)),
            LineParser::Regex(Box::new(
                RegexFields::new(
                    r"\[(?P<ts>[^\]]*)\] (?P<method>\S*) (?P<path>\S*) (?P<status>\S*) (?P<time>\S*)",
                    1,
                )
                .expect("compiles"),
            )),
        ]
    }

    fn filters() -> Filters {
        Filters {
            statuses: vec![StatusMatch::Class(2)],
            methods: vec![b"GET".to_vec()],
            path: regex::bytes::Regex::new("a").ok(),
            since: Some(0),
            until: Some(i64::MAX),
        }
    }

    proptest! {
        #[test]
        fn arbitrary_bytes(line in proptest::collection::vec(any::<u8>(), 0..300)) {
            for mut p in parsers() {
                let _ = p.classify(&line, &filters());
                let _ = p.classify(&line, &Filters::default());
            }
        }

        #[test]
        fn fast_and_general_decimals_agree(int in 0u64..1_000_000, frac in 0u64..1_000_000_000, decimals in 0usize..10, unit in 0usize..10) {
            let unit_ns = POW10[unit];
            let text = if decimals == 0 {
                format!("{int}")
            } else {
                format!("{int}.{:0width$}", frac % POW10[decimals], width = decimals)
            };
            let general = parse_decimal_general(text.as_bytes(), unit_ns);
            if let Some(fast) = parse_decimal_fast(text.as_bytes(), unit_ns) {
                prop_assert_eq!(Ok(fast), general, "{}", text);
            }
            prop_assert_eq!(parse_decimal(text.as_bytes(), unit_ns), general);
        }

        #[test]
        fn mutated_access_lines(cut in 0..LINE.len(), at in 0..LINE.len(), byte in any::<u8>()) {
            let mut line = LINE.as_bytes().to_vec();
            line[at] = byte;
            line.truncate(cut.max(at));
            for mut p in parsers() {
                let _ = p.classify(&line, &filters());
            }
        }
    }
}
