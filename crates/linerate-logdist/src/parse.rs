//! Turning one log line into an [`Outcome`]: a response time in nanoseconds, a line the
//! filters leave out, or a line skipped for a stated [`Reason`]. One [`LineParser`] per
//! format; no allocation per line for the access-log and regex formats.

use regex::bytes::{CaptureLocations, Regex};

use crate::access::{self, Column};
use crate::decimal::parse_decimal;
use crate::error::LayoutError;
use crate::filter::Filters;
use crate::json::JsonFields;
use crate::reason::{Outcome, Reason};

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
    pub fn new(pattern: &str, unit_ns: u64) -> Result<Self, LayoutError> {
        let regex = Regex::new(pattern).map_err(|source| LayoutError::BadRegex {
            pattern: pattern.to_owned(),
            source,
        })?;
        let group = |name: &str| regex.capture_names().position(|n| n == Some(name));
        let time = group("time").ok_or_else(|| LayoutError::NoTimeGroup {
            pattern: pattern.to_owned(),
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
    use crate::filter::StatusMatch;

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
