//! JSON-lines logs (nginx `escape=json` formats, Caddy, Traefik, load balancers): the time is
//! at a dotted `--field` path (`request_time`, `timing.total`), a number or a numeric string.
//! Filters read the conventional keys: `status`; `request_method`/`method`;
//! `request_uri`/`uri`/`path`/`url` or the method and target inside `request`;
//! `time_iso8601`/`time_local`/`@timestamp`/`timestamp`/`time`/`msec`/`ts`.

use serde_json::Value;

use super::filter::Filters;
use super::parse::{Outcome, Reason, parse_decimal};

const METHOD_KEYS: [&str; 2] = ["request_method", "method"];
const PATH_KEYS: [&str; 4] = ["request_uri", "uri", "path", "url"];
const TIME_KEYS: [&str; 7] = [
    "time_iso8601",
    "time_local",
    "@timestamp",
    "timestamp",
    "time",
    "msec",
    "ts",
];

/// The JSON format's settings.
pub struct JsonFields {
    path: Vec<String>,
    unit_ns: u64,
}

impl JsonFields {
    /// `field` is a dotted path; numbers are in units of `unit_ns` nanoseconds.
    pub fn new(field: &str, unit_ns: u64) -> Self {
        Self {
            path: field.split('.').map(str::to_owned).collect(),
            unit_ns,
        }
    }

    /// Whether a line parses as JSON with the field (format detection).
    pub fn fits(&self, line: &[u8]) -> bool {
        serde_json::from_slice::<Value>(line)
            .ok()
            .is_some_and(|v| self.time(&v).is_ok())
    }

    fn time(&self, root: &Value) -> Result<u64, Reason> {
        let mut at = root;
        for key in &self.path {
            at = at.get(key).ok_or(Reason::MissingField)?;
        }
        match at {
            Value::Number(n) => {
                parse_decimal(n.to_string().as_bytes(), self.unit_ns).or_else(|_| {
                    // exponent notation: go through f64 (exact enough far below 2^53 ns)
                    n.as_f64()
                        .filter(|f| f.is_finite() && *f >= 0.0)
                        .map(|f| (f * self.unit_ns as f64).round() as u64)
                        .ok_or(Reason::NonNumericTime)
                })
            }
            Value::String(s) => parse_decimal(s.trim().as_bytes(), self.unit_ns),
            Value::Null => Err(Reason::NonNumericTime),
            _ => Err(Reason::NonNumericTime),
        }
    }

    /// Classifies one line.
    pub fn classify(&self, line: &[u8], filters: &Filters) -> Result<Outcome, Reason> {
        let root: Value = serde_json::from_slice(line).map_err(|_| {
            let looks_access = line.first() != Some(&b'{')
                && memchr::memchr(b'[', line).is_some()
                && memchr::memchr(b'"', line).is_some();
            if looks_access {
                Reason::OtherFormat
            } else {
                Reason::BadJson
            }
        })?;
        if !root.is_object() {
            return Err(Reason::BadJson);
        }
        let ns = self.time(&root)?;
        let text = |keys: &[&str]| {
            keys.iter()
                .find_map(|k| root.get(*k).and_then(Value::as_str))
                .map(str::as_bytes)
        };
        let request = root.get("request").and_then(Value::as_str).unwrap_or("");
        let mut request_parts = request.split(' ');
        let method = text(&METHOD_KEYS)
            .or_else(|| request_parts.next().map(str::as_bytes))
            .unwrap_or(b"");
        let path = text(&PATH_KEYS)
            .or_else(|| request_parts.next().map(str::as_bytes))
            .unwrap_or(b"");
        let status = match root.get("status") {
            Some(Value::Number(n)) => n.as_u64().and_then(|n| u16::try_from(n).ok()),
            Some(Value::String(s)) => s.trim().parse().ok(),
            _ => None,
        };
        let stamp_text;
        let timestamp = match TIME_KEYS.iter().find_map(|k| root.get(*k)) {
            Some(Value::String(s)) => Some(s.as_bytes()),
            Some(Value::Number(n)) => {
                stamp_text = n.to_string();
                Some(stamp_text.as_bytes())
            }
            _ => None,
        };
        let keep = filters.keep(status, method, path, || timestamp)?;
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
    fn field_paths_numbers_and_strings() {
        let none = Filters::default();
        let f = JsonFields::new("request_time", 1_000_000_000);
        assert_eq!(
            f.classify(br#"{"request_time":0.012,"status":200}"#, &none),
            Ok(Outcome::Sample(12_000_000))
        );
        assert_eq!(
            f.classify(br#"{"request_time":"0.250"}"#, &none),
            Ok(Outcome::Sample(250_000_000))
        );
        assert_eq!(
            f.classify(br#"{"request_time":"-"}"#, &none),
            Err(Reason::NonNumericTime)
        );
        assert_eq!(
            f.classify(br#"{"status":200}"#, &none),
            Err(Reason::MissingField)
        );
        assert_eq!(
            f.classify(br#"{"request_time":0.0"#, &none),
            Err(Reason::BadJson)
        );
        assert_eq!(
            f.classify(br#"1.2.3.4 - - [x] "GET / HTTP/1.1" 200 1"#, &none),
            Err(Reason::OtherFormat)
        );
        let nested = JsonFields::new("timing.total", 1_000);
        assert_eq!(
            nested.classify(br#"{"timing":{"total":1500}}"#, &none),
            Ok(Outcome::Sample(1_500_000))
        );
        let exp = JsonFields::new("t", 1_000_000_000);
        assert_eq!(
            exp.classify(br#"{"t":1e-3}"#, &none),
            Ok(Outcome::Sample(1_000_000))
        );
    }

    #[test]
    fn filters_see_status_method_path_and_time() {
        let f = JsonFields::new("rt", 1_000_000_000);
        let filters = Filters {
            statuses: vec![super::super::filter::StatusMatch::Class(2)],
            methods: vec![b"GET".to_vec()],
            since: Some(1_791_640_536_000),
            ..Filters::default()
        };
        let line = br#"{"rt":0.1,"status":"204","request":"GET /x HTTP/1.1","time_iso8601":"2026-10-10T13:55:36+00:00"}"#;
        assert_eq!(f.classify(line, &filters), Ok(Outcome::Sample(100_000_000)));
        let early = br#"{"rt":0.1,"status":204,"request_method":"GET","msec":1791640535.999}"#;
        assert_eq!(f.classify(early, &filters), Ok(Outcome::Filtered));
        let post = br#"{"rt":0.1,"status":204,"method":"POST","msec":1791640537}"#;
        assert_eq!(f.classify(post, &filters), Ok(Outcome::Filtered));
        let no_time = br#"{"rt":0.1,"status":204,"method":"GET"}"#;
        assert_eq!(f.classify(no_time, &filters), Err(Reason::BadTimestamp));
    }
}
