//! Byte-level parsing of access-log lines in the NCSA shape that nginx `combined` and Apache
//! `common`/`combined` share, with response-time fields appended:
//!
//! ```text
//! 203.0.113.9 - - [10/Oct/2026:13:55:36 +0000] "GET /a.css HTTP/1.1" 200 2326 "-" "curl/8" 0.012 0.010
//! ^host           ^[timestamp]                 ^"request"            ^status ^bytes ^"quoted"… ^times
//! ```
//!
//! Any number of quoted fields may follow the byte count (none for `common`); the fields after
//! the last one are the appended times: nginx's `$request_time` then `$upstream_response_time`
//! (which may be `-`, or a list like `0.010, 0.002 : 0.001` when several upstreams answered:
//! linerate adds them up), or Apache's `%D` (microseconds) or `%T` (seconds).

use memchr::memchr;

use crate::decimal::parse_decimal;
use crate::reason::Reason;

/// Which appended field is the response time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    /// The first appended field (`$request_time`, `%D`, `%T`).
    Request,
    /// The rest (`$upstream_response_time`), summed over upstreams.
    Upstream,
}

/// The parts of an access-log line that filters need, borrowed from the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessLine<'a> {
    /// The bracketed timestamp without brackets.
    pub timestamp: &'a [u8],
    /// The request line's method.
    pub method: &'a [u8],
    /// The request line's target.
    pub path: &'a [u8],
    /// The status code.
    pub status: u16,
    /// Everything after the last quoted field, trimmed.
    pub times: &'a [u8],
}

/// Finds the closing quote of a quoted field that starts at `from` (just past the opening
/// quote), skipping backslash-escaped quotes (Apache writes `\"`; nginx writes `\x22`).
fn closing_quote(line: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    loop {
        let q = at + memchr(b'"', line.get(at..)?)?;
        let mut backslashes = 0;
        while q > from + backslashes && line[q - 1 - backslashes] == b'\\' {
            backslashes += 1;
        }
        if backslashes % 2 == 0 {
            return Some(q);
        }
        at = q + 1;
    }
}

fn skip_spaces(line: &[u8], mut at: usize) -> usize {
    while line.get(at) == Some(&b' ') {
        at += 1;
    }
    at
}

fn token_end(line: &[u8], at: usize) -> usize {
    find(&line[at..], b' ').map_or(line.len(), |n| at + n)
}

/// The first `byte` in `hay`: a plain loop, faster than `memchr` for the short distances
/// between access-log fields (a SIMD search pays its set-up on every call).
#[inline]
fn find(hay: &[u8], byte: u8) -> Option<usize> {
    hay.iter().position(|&b| b == byte)
}

/// Timestamp, request, status: the left part every access-log line has.
struct Head<'a> {
    timestamp: &'a [u8],
    method: &'a [u8],
    path: &'a [u8],
    status: u16,
    /// Just past the status.
    rest: usize,
}

impl<'a> Head<'a> {
    /// The split line, with `times` trimmed of trailing blanks.
    fn with_times(&self, mut times: &'a [u8]) -> AccessLine<'a> {
        while let Some((b' ' | b'\t', rest)) = times.split_last() {
            times = rest;
        }
        AccessLine {
            timestamp: self.timestamp,
            method: self.method,
            path: self.path,
            status: self.status,
            times,
        }
    }
}

fn head(line: &[u8]) -> Result<Head<'_>, Reason> {
    if line.first() == Some(&b'{') {
        return Err(Reason::OtherFormat);
    }
    let open = find(line, b'[').ok_or(Reason::Truncated)?;
    let close = open + find(&line[open..], b']').ok_or(Reason::Truncated)?;
    let timestamp = &line[open + 1..close];
    let at = skip_spaces(line, close + 1);
    if line.get(at) != Some(&b'"') {
        return Err(Reason::Truncated);
    }
    let request_start = at + 1;
    let request_end = closing_quote(line, request_start).ok_or(Reason::Truncated)?;
    let request = &line[request_start..request_end];
    let method_end = find(request, b' ').unwrap_or(request.len());
    let method = &request[..method_end];
    let rest = request.get(method_end + 1..).unwrap_or(&[]);
    let path = &rest[..find(rest, b' ').unwrap_or(rest.len())];
    let at = skip_spaces(line, request_end + 1);
    let status_end = token_end(line, at);
    let status = parse_status(&line[at..status_end]).ok_or(Reason::Truncated)?;
    Ok(Head {
        timestamp,
        method,
        path,
        status,
        rest: status_end,
    })
}

/// Splits a line into its parts. The fast path takes the times after the line's last quote
/// without checking the quoted fields in between; when the times then fail to parse,
/// [`split_strict`] says whether the line was really truncated.
pub fn split(line: &[u8]) -> Result<AccessLine<'_>, Reason> {
    let h = head(line)?;
    let last_quote = memchr::memrchr(b'"', &line[h.rest..]).map(|q| h.rest + q);
    let Some(last_quote) = last_quote else {
        return split_strict(line); // `common` shape: no quoted field after the status
    };
    // a byte count must sit between the status and the first quoted field
    let bytes_at = skip_spaces(line, h.rest);
    if bytes_at == h.rest || bytes_at >= last_quote || line[bytes_at] == b'"' {
        return Err(Reason::Truncated);
    }
    let mut times = &line[last_quote + 1..];
    while let Some((b' ' | b'\t', rest)) = times.split_first() {
        times = rest;
    }
    Ok(h.with_times(times))
}

/// Splits a line checking every field.
pub fn split_strict(line: &[u8]) -> Result<AccessLine<'_>, Reason> {
    let h = head(line)?;
    let mut at = skip_spaces(line, h.rest);
    let bytes_end = token_end(line, at);
    if bytes_end == at {
        return Err(Reason::Truncated);
    }
    at = skip_spaces(line, bytes_end);
    while line.get(at) == Some(&b'"') {
        let end = closing_quote(line, at + 1).ok_or(Reason::Truncated)?;
        at = skip_spaces(line, end + 1);
    }
    Ok(h.with_times(&line[at..]))
}

fn parse_status(token: &[u8]) -> Option<u16> {
    match token {
        [a, b, c] if a.is_ascii_digit() && b.is_ascii_digit() && c.is_ascii_digit() => {
            Some(u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0'))
        }
        _ => None,
    }
}

/// The response time in nanoseconds from the appended fields; `unit_ns` is the unit of a bare
/// number (1e9 for seconds, 1e3 for microseconds).
pub fn time_ns(times: &[u8], column: Column, unit_ns: u64) -> Result<u64, Reason> {
    if times.is_empty() {
        return Err(Reason::NoTime);
    }
    let first_end = find(times, b' ').unwrap_or(times.len());
    match column {
        Column::Request => parse_decimal(&times[..first_end], unit_ns),
        Column::Upstream => {
            let rest = times.get(first_end + 1..).unwrap_or(&[]);
            if rest.is_empty() {
                return Err(Reason::NoTime);
            }
            let mut total = 0u64;
            let mut any = false;
            for part in rest.split(|&b| b == b' ' || b == b',' || b == b':') {
                if part.is_empty() || part == b"-" {
                    continue;
                }
                total = total
                    .checked_add(parse_decimal(part, unit_ns)?)
                    .ok_or(Reason::TimeOutOfRange)?;
                any = true;
            }
            if any {
                Ok(total)
            } else {
                Err(Reason::NonNumericTime)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NGINX: &[u8] = b"203.0.113.9 - - [10/Oct/2026:13:55:36 +0000] \"GET /a.css?x=1 HTTP/1.1\" 200 2326 \"https://example.com/\" \"Mozilla/5.0 (X11)\" 0.012 0.010";

    #[test]
    fn splits_an_nginx_combined_line_with_times() {
        let a = split(NGINX).expect("parses");
        assert_eq!(split_strict(NGINX), Ok(a));
        assert_eq!(a.timestamp, b"10/Oct/2026:13:55:36 +0000");
        assert_eq!(a.method, b"GET");
        assert_eq!(a.path, b"/a.css?x=1");
        assert_eq!(a.status, 200);
        assert_eq!(a.times, b"0.012 0.010");
        assert_eq!(
            time_ns(a.times, Column::Request, 1_000_000_000),
            Ok(12_000_000)
        );
        assert_eq!(
            time_ns(a.times, Column::Upstream, 1_000_000_000),
            Ok(10_000_000)
        );
    }

    #[test]
    fn upstream_lists_add_up_and_dash_is_non_numeric() {
        let s = 1_000_000_000;
        assert_eq!(
            time_ns(b"0.5 0.010, 0.002 : 0.001", Column::Upstream, s),
            Ok(13_000_000)
        );
        assert_eq!(
            time_ns(b"0.5 -", Column::Upstream, s),
            Err(Reason::NonNumericTime)
        );
        assert_eq!(time_ns(b"0.5", Column::Upstream, s), Err(Reason::NoTime));
        assert_eq!(
            time_ns(b"0.5 18446744073, 1", Column::Upstream, s),
            Err(Reason::TimeOutOfRange)
        );
        assert_eq!(
            time_ns(b"-", Column::Request, s),
            Err(Reason::NonNumericTime)
        );
    }

    #[test]
    fn apache_common_with_microseconds_and_escaped_quotes() {
        let line =
            br#"::1 - frank [10/Oct/2026:13:55:36 -0700] "GET /say \"hi\" HTTP/1.0" 404 - 5123"#;
        let a = split(line).expect("parses");
        assert_eq!(a.status, 404);
        assert_eq!(a.path, b"/say");
        assert_eq!(time_ns(a.times, Column::Request, 1_000), Ok(5_123_000));
    }

    #[test]
    fn reasons_for_broken_lines() {
        assert_eq!(split(b"{\"a\":1}"), Err(Reason::OtherFormat));
        assert_eq!(split(&NGINX[..30]), Err(Reason::Truncated));
        assert_eq!(split(&NGINX[..60]), Err(Reason::Truncated));
        assert_eq!(split_strict(&NGINX[..85]), Err(Reason::Truncated));
        assert_eq!(split_strict(&NGINX[..120]), Err(Reason::Truncated));
        let no_time = split(&NGINX[..NGINX.len() - 12]).expect("parses");
        assert_eq!(
            time_ns(no_time.times, Column::Request, 1),
            Err(Reason::NoTime)
        );
        assert_eq!(split(b"garbage"), Err(Reason::Truncated));
        assert_eq!(split(b""), Err(Reason::Truncated));
    }
}
