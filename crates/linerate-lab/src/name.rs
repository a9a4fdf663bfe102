//! Lab names and the names derived from them: every namespace and interface of lab `NAME`
//! starts with `lr-NAME-`, and interface names must fit the kernel's 15 bytes.

use std::fmt;
use std::str::FromStr;

use crate::LabError;

/// Longest lab name: `lr-` + name + `-` + a 3-byte suffix must fit in 15 bytes.
pub const MAX_NAME_LEN: usize = 8;

/// A validated lab name: 1 to 8 characters, lower-case ASCII letters and digits, starting with
/// a letter.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "String", into = "String")]
pub struct LabName(String);

impl LabName {
    /// The name as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `lr-NAME-suffix`: a namespace or interface name of this lab.
    pub fn derived(&self, suffix: &str) -> String {
        format!("lr-{}-{suffix}", self.0)
    }

    /// One byte that tells labs apart in hardware addresses.
    pub fn tag_byte(&self) -> u8 {
        self.0.bytes().fold(0x5au8, |h, b| h.rotate_left(3) ^ b)
    }
}

impl FromStr for LabName {
    type Err = LabError;

    fn from_str(s: &str) -> Result<Self, LabError> {
        let bad = |reason: &str| LabError::BadName {
            name: s.to_owned(),
            reason: reason.to_owned(),
        };
        if s.is_empty() {
            return Err(bad("it is empty"));
        }
        if s.len() > MAX_NAME_LEN {
            return Err(bad(&format!(
                "it is {} characters long; at most {MAX_NAME_LEN} fit, because interface names \
                 `lr-NAME-xxx` must stay within the kernel's 15 bytes",
                s.len()
            )));
        }
        if !s
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        {
            return Err(bad("use only lower-case letters a-z and digits 0-9"));
        }
        if !s.as_bytes()[0].is_ascii_lowercase() {
            return Err(bad("it must start with a letter"));
        }
        Ok(LabName(s.to_owned()))
    }
}

impl TryFrom<String> for LabName {
    type Error = LabError;
    fn try_from(s: String) -> Result<Self, LabError> {
        s.parse()
    }
}

impl From<LabName> for String {
    fn from(n: LabName) -> String {
        n.0
    }
}

impl fmt::Display for LabName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_short_names_and_derives_prefixed_names() -> Result<(), LabError> {
        let n: LabName = "t123456a".parse()?;
        assert_eq!(n.derived("l0a"), "lr-t123456a-l0a");
        assert!(n.derived("l0a").len() <= 15);
        Ok(())
    }

    #[test]
    fn rejects_bad_names_with_the_reason() {
        for (bad, why) in [
            ("", "empty"),
            ("abcdefghi", "at most 8"),
            ("Lab", "lower-case"),
            ("a-b", "lower-case"),
            ("1ab", "start with a letter"),
        ] {
            let err = bad
                .parse::<LabName>()
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(err.contains(why), "{bad:?}: {err}");
        }
    }
}
