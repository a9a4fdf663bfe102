//! Which parsed lines count: `--status`, `--method`, `--path-regex`, `--since/--until`.
//! A line the filters leave out is counted as filtered, not as skipped.

use regex::bytes::Regex;

use crate::clock;
use crate::reason::Reason;

/// One `--status` item: a code (`200`) or a class (`2xx`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusMatch {
    /// Exactly this code.
    Code(u16),
    /// `Nxx`: every code from `N00` to `N99`.
    Class(u16),
}

impl StatusMatch {
    fn matches(self, status: u16) -> bool {
        match self {
            Self::Code(c) => status == c,
            Self::Class(c) => status / 100 == c,
        }
    }
}

/// Compiles a `--path-regex` (over the raw bytes of the path, as logs may hold any bytes).
pub fn path_regex(pattern: &str) -> Result<Regex, regex::Error> {
    Regex::new(pattern)
}

/// Parses `200`, `2xx` or a comma-separated list of them.
pub fn parse_statuses(s: &str) -> Result<Vec<StatusMatch>, String> {
    s.split(',')
        .map(|item| {
            let item = item.trim();
            let bytes = item.as_bytes();
            match bytes {
                [d @ b'1'..=b'5', b'x' | b'X', b'x' | b'X'] => {
                    Ok(StatusMatch::Class(u16::from(d - b'0')))
                }
                [b'1'..=b'9', b'0'..=b'9', b'0'..=b'9'] => item
                    .parse()
                    .map(StatusMatch::Code)
                    .map_err(|e| e.to_string()),
                _ => Err(format!(
                    "--status {s:?}: {item:?} is not a status code (200) or class (2xx)"
                )),
            }
        })
        .collect()
}

/// The filters of one run. The default keeps everything.
#[derive(Debug, Default)]
pub struct Filters {
    /// Any of these statuses (empty: all).
    pub statuses: Vec<StatusMatch>,
    /// Any of these methods, case-sensitive as HTTP is (empty: all).
    pub methods: Vec<Vec<u8>>,
    /// The request path must match.
    pub path: Option<Regex>,
    /// Unix ms, inclusive.
    pub since: Option<i64>,
    /// Unix ms, exclusive.
    pub until: Option<i64>,
}

impl Filters {
    /// Whether any filter is set.
    pub fn is_active(&self) -> bool {
        !self.statuses.is_empty()
            || !self.methods.is_empty()
            || self.path.is_some()
            || self.needs_time()
    }

    /// Whether any filter needs the line's timestamp.
    pub fn needs_time(&self) -> bool {
        self.since.is_some() || self.until.is_some()
    }

    /// Whether a line with these fields counts. The timestamp is read only when a time
    /// filter needs it; an unreadable one is a [`Reason::BadTimestamp`].
    pub fn keep<'a>(
        &self,
        status: Option<u16>,
        method: &[u8],
        path: &[u8],
        timestamp: impl FnOnce() -> Option<&'a [u8]>,
    ) -> Result<bool, Reason> {
        if !self.statuses.is_empty() {
            let Some(status) = status else {
                return Ok(false);
            };
            if !self.statuses.iter().any(|m| m.matches(status)) {
                return Ok(false);
            }
        }
        if !self.methods.is_empty() && !self.methods.iter().any(|m| m == method) {
            return Ok(false);
        }
        if let Some(re) = &self.path {
            if !re.is_match(path) {
                return Ok(false);
            }
        }
        if self.needs_time() {
            let at = timestamp()
                .and_then(clock::parse_log_time)
                .ok_or(Reason::BadTimestamp)?;
            if self.since.is_some_and(|s| at < s) || self.until.is_some_and(|u| at >= u) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_codes_and_classes() {
        let m = parse_statuses("200, 3xx").expect("parses");
        assert_eq!(m, vec![StatusMatch::Code(200), StatusMatch::Class(3)]);
        let f = Filters {
            statuses: m,
            ..Filters::default()
        };
        for (status, want) in [
            (200, true),
            (201, false),
            (301, true),
            (399, true),
            (404, false),
        ] {
            assert_eq!(
                f.keep(Some(status), b"", b"", || None),
                Ok(want),
                "{status}"
            );
        }
        assert_eq!(f.keep(None, b"", b"", || None), Ok(false));
        for bad in ["", "20", "2000", "6xx", "abc", "200,"] {
            assert!(parse_statuses(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn time_window_is_half_open() {
        let f = Filters {
            since: Some(1_000_000),
            until: Some(2_000_000),
            ..Filters::default()
        };
        assert_eq!(f.keep(None, b"", b"", || Some(&b"1000"[..])), Ok(true));
        assert_eq!(f.keep(None, b"", b"", || Some(&b"999.999"[..])), Ok(false));
        assert_eq!(f.keep(None, b"", b"", || Some(&b"2000"[..])), Ok(false));
        assert_eq!(
            f.keep(None, b"", b"", || Some(&b"soon"[..])),
            Err(Reason::BadTimestamp)
        );
    }

    #[test]
    fn method_and_path() {
        let f = Filters {
            methods: vec![b"GET".to_vec()],
            path: Regex::new(r"\.css$").ok(),
            ..Filters::default()
        };
        assert_eq!(f.keep(None, b"GET", b"/a.css", || None), Ok(true));
        assert_eq!(f.keep(None, b"GET", b"/a.js", || None), Ok(false));
        assert_eq!(f.keep(None, b"POST", b"/a.css", || None), Ok(false));
    }
}
