//! The one error type for every quantity.

/// Why a quantity could not be parsed. Every variant carries the text that was given, and the
/// message says what would have been accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Nothing was given.
    #[error("empty value: expected {expected}")]
    Empty {
        /// What the caller expected, e.g. "a bit rate such as 10G or 940Mbit/s".
        expected: &'static str,
    },
    /// The number part is not a number.
    #[error("'{input}' does not start with a number: expected {expected}")]
    NotANumber {
        /// The text given.
        input: String,
        /// What would have been accepted.
        expected: &'static str,
    },
    /// A negative value where only non-negative ones make sense.
    #[error("'{input}' is negative: {what} cannot be negative")]
    Negative {
        /// The text given.
        input: String,
        /// The quantity, e.g. "a bit rate".
        what: &'static str,
    },
    /// The unit is not one this quantity accepts.
    #[error("'{input}': unknown unit '{unit}' for {what}; {hint}")]
    UnknownUnit {
        /// The text given.
        input: String,
        /// The unit part of it.
        unit: String,
        /// The quantity, e.g. "a bit rate".
        what: &'static str,
        /// What to write instead.
        hint: String,
    },
    /// The text could mean two different things; the hint says how to write each.
    #[error("'{input}' is ambiguous for {what}: {hint}")]
    Ambiguous {
        /// The text given.
        input: String,
        /// The quantity, e.g. "a bit rate".
        what: &'static str,
        /// The forms that would be accepted, e.g. "write 10G for 10 Gbit/s or 10GB/s for bytes per second".
        hint: String,
    },
    /// The value does not fit the type (too large, or not a whole number of bytes).
    #[error("'{input}' is out of range for {what}: {reason}")]
    OutOfRange {
        /// The text given.
        input: String,
        /// The quantity.
        what: &'static str,
        /// Why.
        reason: &'static str,
    },
    /// A bare number where the unit must be written (`--rtt 80`: seconds or milliseconds?).
    #[error("'{input}' needs a unit: {hint}")]
    NeedsUnit {
        /// The text given.
        input: String,
        /// The likely forms, e.g. "80ms? (or 80s, 80us)".
        hint: String,
    },
}
