//! The whole `--json` document.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::de;
use crate::{End, Error, Interval, Linerate, Start};

/// One iperf3 `--json` document: `start`, `intervals`, `end`, the server's output when the
/// client asked for it, and linerate's `linerate` object. Every part may be missing (iperf3
/// writes an `error` and empty parts for a test that failed); [`Document::from_value`] says
/// where a value that is present has the wrong type.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// Set-up facts.
    #[serde(default)]
    pub start: Start,
    /// Per-interval reports.
    #[serde(default)]
    pub intervals: Vec<Interval>,
    /// Totals.
    #[serde(default)]
    pub end: End,
    /// The server's human output (`--get-server-output` against a server without `-J`).
    #[serde(
        default,
        deserialize_with = "de::lenient_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub server_output_text: Option<String>,
    /// The server's own document (`--get-server-output` against a server with `-J`); one that
    /// does not read as a document is left out rather than spoiling the client's.
    #[serde(
        default,
        deserialize_with = "de::lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub server_output_json: Option<Box<Document>>,
    /// Why the test failed, when it did.
    #[serde(
        default,
        deserialize_with = "de::text",
        skip_serializing_if = "Option::is_none"
    )]
    pub error: Option<String>,
    /// The schema of a linerate document (`linerate.traffic/1`).
    #[serde(
        default,
        deserialize_with = "de::lenient_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub schema: Option<String>,
    /// What linerate adds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linerate: Option<Linerate>,
    /// Keys this schema does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Document {
    /// Reads a document; an error names the place of the value that is wrong
    /// (`end.sum_sent.bytes: expected a non-negative integer, found the string "ten"`).
    pub fn from_value(value: &Value) -> Result<Document, Error> {
        if !value.is_object() {
            return Err(Error::new("document", "is not a JSON object"));
        }
        crate::error::from_value(value, "document")
    }

    /// Reads a document from JSON text.
    pub fn from_slice(bytes: &[u8]) -> Result<Document, Error> {
        let value: Value = serde_json::from_slice(bytes).map_err(|e| {
            Error::new(
                format!("line {} column {}", e.line(), e.column()),
                format!("not JSON: {e}")
                    .replace(&format!(" at line {} column {}", e.line(), e.column()), ""),
            )
        })?;
        Document::from_value(&value)
    }
}
