//! A value read from the host, or the reason it could not be read. Nothing in a snapshot is
//! guessed: what the kernel did not tell us is `Unknown` with the reason it gave.

use std::fmt;

/// A value read from the host, or why it is unknown.
///
/// Serialised as `{"value": …}` or `{"unknown": "reason"}`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Probed<T> {
    /// The value as read.
    Value(T),
    /// Why it could not be read.
    Unknown(String),
}

impl<T> Probed<T> {
    /// An unknown value with a reason.
    pub fn unknown(reason: impl Into<String>) -> Self {
        Probed::Unknown(reason.into())
    }

    /// The value, if known.
    pub fn value(&self) -> Option<&T> {
        match self {
            Probed::Value(v) => Some(v),
            Probed::Unknown(_) => None,
        }
    }

    /// The value, if known, by value.
    pub fn into_value(self) -> Option<T> {
        match self {
            Probed::Value(v) => Some(v),
            Probed::Unknown(_) => None,
        }
    }

    /// The reason, if unknown.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Probed::Value(_) => None,
            Probed::Unknown(r) => Some(r),
        }
    }

    /// Maps a known value.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Probed<U> {
        match self {
            Probed::Value(v) => Probed::Value(f(v)),
            Probed::Unknown(r) => Probed::Unknown(r),
        }
    }

    /// Maps a known value through a fallible step; its error becomes the reason.
    pub fn and_then<U>(self, f: impl FnOnce(T) -> Probed<U>) -> Probed<U> {
        match self {
            Probed::Value(v) => f(v),
            Probed::Unknown(r) => Probed::Unknown(r),
        }
    }

    /// Borrows the value.
    pub fn as_ref(&self) -> Probed<&T> {
        match self {
            Probed::Value(v) => Probed::Value(v),
            Probed::Unknown(r) => Probed::Unknown(r.clone()),
        }
    }
}

impl<T> From<Result<T, String>> for Probed<T> {
    fn from(r: Result<T, String>) -> Self {
        match r {
            Ok(v) => Probed::Value(v),
            Err(e) => Probed::Unknown(e),
        }
    }
}

impl<T: fmt::Display> fmt::Display for Probed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Probed::Value(v) => v.fmt(f),
            Probed::Unknown(r) => write!(f, "unknown ({r})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_value_or_reason() {
        let v: Probed<u32> = Probed::Value(4);
        assert_eq!(serde_json::to_string(&v).unwrap(), r#"{"value":4}"#);
        let u: Probed<u32> = Probed::unknown("no such file");
        assert_eq!(
            serde_json::to_string(&u).unwrap(),
            r#"{"unknown":"no such file"}"#
        );
        let back: Probed<u32> = serde_json::from_str(r#"{"unknown":"x"}"#).unwrap();
        assert_eq!(back.reason(), Some("x"));
        assert_eq!(u.to_string(), "unknown (no such file)");
    }
}
