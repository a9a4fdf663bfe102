//! JSON-lines logs (nginx `escape=json` formats, Caddy, Traefik, load balancers): the time is
//! at a dotted `--field` path (`request_time`, `timing.total`), a number or a numeric string.
//! Filters read the conventional keys: `status`; `request_method`/`method`;
//! `request_uri`/`uri`/`path`/`url` or the method and target inside `request`;
//! `time_iso8601`/`time_local`/`@timestamp`/`timestamp`/`time`/`msec`/`ts`.
//!
//! Lines are walked with serde without building a document: the wanted values are borrowed
//! from the line (a string with escapes is the one case that allocates), everything else is
//! skipped.

use std::borrow::Cow;
use std::fmt;
use std::io::Write;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

use crate::decimal::parse_decimal;
use crate::filter::Filters;
use crate::reason::{Outcome, Reason};

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

/// A scalar as found: borrowed text, or a number.
#[derive(Debug, Clone, PartialEq)]
enum Scalar<'de> {
    Text(Cow<'de, str>),
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    /// null, a bool, an array or an object
    Other,
}

impl<'de> de::Deserialize<'de> for Scalar<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Scalar<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Scalar::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Scalar::Text(Cow::Owned(v.to_owned())))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Scalar::Unsigned(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Scalar::Signed(v))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                Ok(Scalar::Float(v))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Scalar::Other)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Scalar::Other)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
        }
        d.deserialize_any(V)
    }
}

/// A key, borrowed unless it has escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Scalar::deserialize(d)? {
            Scalar::Text(t) => Ok(Key(t)),
            _ => Err(de::Error::custom("a key must be a string")),
        }
    }
}

/// What one line holds of interest. `None` for the time means the path is missing.
#[derive(Debug, Default)]
struct Found<'de> {
    time: Option<Scalar<'de>>,
    status: Option<Scalar<'de>>,
    method: Option<(usize, Cow<'de, str>)>,
    path: Option<(usize, Cow<'de, str>)>,
    request: Option<Cow<'de, str>>,
    stamp: Option<(usize, Scalar<'de>)>,
}

/// Keeps the value of the highest-ranked key seen (lowest index in its key list).
fn keep_ranked<T>(slot: &mut Option<(usize, T)>, rank: usize, value: T) {
    if slot.as_ref().is_none_or(|(r, _)| rank < *r) {
        *slot = Some((rank, value));
    }
}

/// Walks an object along the rest of the `--field` path.
struct PathSeed<'p>(&'p [String]);

impl<'de> DeserializeSeed<'de> for PathSeed<'_> {
    type Value = Option<Scalar<'de>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        struct V<'p>(&'p [String]);
        impl<'de> Visitor<'de> for V<'_> {
            type Value = Option<Scalar<'de>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut found = None;
                while let Some(Key(key)) = a.next_key::<Key<'de>>()? {
                    match self.0.split_first() {
                        Some((first, rest)) if *first == key => {
                            found = if rest.is_empty() {
                                Some(a.next_value::<Scalar<'de>>()?)
                            } else {
                                a.next_value_seed(PathSeed(rest))?
                            };
                        }
                        _ => {
                            a.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(found)
            }
            // anything that is not an object has no keys
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(None)
            }
        }
        d.deserialize_any(V(self.0))
    }
}

/// Walks the top-level object, picking the time and (when filtering) the filter keys.
struct LineSeed<'p> {
    path: &'p [String],
    filters: bool,
}

impl<'de> DeserializeSeed<'de> for LineSeed<'_> {
    type Value = Found<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for LineSeed<'_> {
    type Value = Found<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        let mut found = Found::default();
        while let Some(Key(key)) = a.next_key::<Key<'de>>()? {
            let key = key.as_ref();
            if let Some((first, rest)) = self.path.split_first() {
                if first == key {
                    found.time = if rest.is_empty() {
                        Some(a.next_value::<Scalar<'de>>()?)
                    } else {
                        a.next_value_seed(PathSeed(rest))?
                    };
                    continue;
                }
            }
            if !self.filters {
                a.next_value::<IgnoredAny>()?;
                continue;
            }
            let text = |s: Scalar<'de>| match s {
                Scalar::Text(t) => Some(t),
                _ => None,
            };
            if key == "status" {
                found.status = Some(a.next_value()?);
            } else if key == "request" {
                found.request = text(a.next_value()?);
            } else if let Some(rank) = METHOD_KEYS.iter().position(|k| *k == key) {
                if let Some(t) = text(a.next_value()?) {
                    keep_ranked(&mut found.method, rank, t);
                }
            } else if let Some(rank) = PATH_KEYS.iter().position(|k| *k == key) {
                if let Some(t) = text(a.next_value()?) {
                    keep_ranked(&mut found.path, rank, t);
                }
            } else if let Some(rank) = TIME_KEYS.iter().position(|k| *k == key) {
                keep_ranked(&mut found.stamp, rank, a.next_value()?);
            } else {
                a.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
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
        matches!(
            self.classify(line, &Filters::default()),
            Ok(Outcome::Sample(_))
        )
    }

    fn time(&self, value: Option<Scalar<'_>>) -> Result<u64, Reason> {
        let float = |f: f64| {
            if !f.is_finite() || f < 0.0 {
                return Err(Reason::NonNumericTime);
            }
            let ns = (f * self.unit_ns as f64).round();
            // `as u64` would saturate: 1e20 s must not become 584 years.
            if ns >= u64::MAX as f64 {
                return Err(Reason::TimeOutOfRange);
            }
            Ok(ns as u64)
        };
        match value.ok_or(Reason::MissingField)? {
            Scalar::Text(s) => parse_decimal(s.trim().as_bytes(), self.unit_ns),
            Scalar::Unsigned(n) => n.checked_mul(self.unit_ns).ok_or(Reason::TimeOutOfRange),
            Scalar::Signed(_) | Scalar::Other => Err(Reason::NonNumericTime),
            Scalar::Float(f) => float(f),
        }
    }

    /// Classifies one line.
    pub fn classify(&self, line: &[u8], filters: &Filters) -> Result<Outcome, Reason> {
        let mut de = serde_json::Deserializer::from_slice(line);
        let seed = LineSeed {
            path: &self.path,
            filters: filters.is_active(),
        };
        let found = seed
            .deserialize(&mut de)
            .and_then(|found| de.end().map(|()| found))
            .map_err(|_| {
                let looks_access = line.first() != Some(&b'{')
                    && memchr::memchr(b'[', line).is_some()
                    && memchr::memchr(b'"', line).is_some();
                if looks_access {
                    Reason::OtherFormat
                } else {
                    Reason::BadJson
                }
            })?;
        let ns = self.time(found.time)?;
        if !filters.is_active() {
            return Ok(Outcome::Sample(ns));
        }
        let mut request_parts = found.request.as_deref().unwrap_or("").split(' ');
        let request_method = request_parts.next();
        let request_path = request_parts.next();
        let method = found
            .method
            .as_ref()
            .map(|(_, m)| m.as_ref())
            .or(request_method)
            .unwrap_or("");
        let path = found
            .path
            .as_ref()
            .map(|(_, p)| p.as_ref())
            .or(request_path)
            .unwrap_or("");
        let status = match found.status {
            Some(Scalar::Unsigned(n)) => u16::try_from(n).ok(),
            Some(Scalar::Text(s)) => s.trim().parse().ok(),
            _ => None,
        };
        let mut number = [0u8; 32];
        let timestamp: Option<&[u8]> = match &found.stamp {
            Some((_, Scalar::Text(s))) => Some(s.as_bytes()),
            Some((_, Scalar::Unsigned(n))) => {
                let mut cursor = std::io::Cursor::new(&mut number[..]);
                let _ = write!(cursor, "{n}");
                let len = cursor.position() as usize;
                Some(&number[..len])
            }
            Some((_, Scalar::Float(f))) => {
                let mut cursor = std::io::Cursor::new(&mut number[..]);
                let _ = write!(cursor, "{f:.3}");
                let len = cursor.position() as usize;
                Some(&number[..len])
            }
            _ => None,
        };
        let keep = filters.keep(status, method.as_bytes(), path.as_bytes(), || timestamp)?;
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
        // Too large to count: refused, not clamped to 584 years.
        for big in [
            &br#"{"request_time":99999999999999999999}"#[..],
            br#"{"request_time":1e20}"#,
            br#"{"request_time":18446744074}"#,
        ] {
            assert_eq!(f.classify(big, &none), Err(Reason::TimeOutOfRange));
        }
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
            statuses: vec![crate::filter::StatusMatch::Class(2)],
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
