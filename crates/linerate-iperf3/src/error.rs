//! What is wrong with a document, and where.

use serde::de::DeserializeOwned;

/// A value the schema cannot use, with its place in the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// `end.sum_sent.bytes`, `intervals[2].streams[0]`, `line 3`, `document 2 of 3: start`, …
    pub place: String,
    /// What is wrong there.
    pub message: String,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.place, self.message)
    }
}

impl std::error::Error for Error {}

impl Error {
    /// An error at `place`.
    pub fn new(place: impl Into<String>, message: impl Into<String>) -> Self {
        Error {
            place: place.into(),
            message: message.into(),
        }
    }
}

/// Reads a `T` from a JSON value; an error names the path of the value that is wrong.
pub(crate) fn from_value<T: DeserializeOwned>(
    value: &serde_json::Value,
    root: &str,
) -> Result<T, Error> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let mut place = if path == "." { root.to_owned() } else { path };
        let message = e.into_inner().to_string();
        // serde says "missing field `x`" at the parent: name the field itself.
        let message = match message
            .strip_prefix("missing field `")
            .and_then(|m| m.strip_suffix('`'))
        {
            Some(field) => {
                place = if place == root {
                    field.to_owned()
                } else {
                    format!("{place}.{field}")
                };
                "missing".to_owned()
            }
            None if message.starts_with("invalid type:")
                && (message.contains("expected struct") || message.contains("expected a map")) =>
            {
                "is not an object".to_owned()
            }
            None if message.starts_with("invalid type:")
                && message.contains("expected a sequence") =>
            {
                "is not an array".to_owned()
            }
            None => message,
        };
        Error { place, message }
    })
}
