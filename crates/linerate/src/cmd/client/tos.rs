//! Parsing `--tos` and `--dscp`.

/// A TOS byte: decimal, `0x` hex or `0o` octal.
pub fn parse_tos(s: &str) -> Result<u8, String> {
    let t = s.trim();
    let parsed = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u8::from_str_radix(h, 16)
    } else if let Some(o) = t.strip_prefix("0o") {
        u8::from_str_radix(o, 8)
    } else {
        t.parse::<u8>()
    };
    parsed.map_err(|_| format!("{s:?} is not a TOS byte (0-255, 0x00-0xff)"))
}

/// A DSCP code point: 0-63 or a standard name.
pub fn parse_dscp(s: &str) -> Result<u8, String> {
    let t = s.trim().to_ascii_uppercase();
    let named = match t.as_str() {
        "EF" => Some(46),
        "VA" | "VOICE-ADMIT" => Some(44),
        "LE" => Some(1),
        "DF" | "BE" => Some(0),
        _ => None,
    };
    if let Some(v) = named {
        return Ok(v);
    }
    if let Some(n) = t.strip_prefix("CS") {
        if let Ok(c) = n.parse::<u8>()
            && c <= 7
        {
            return Ok(c << 3);
        }
    } else if let Some(n) = t.strip_prefix("AF") {
        let b = n.as_bytes();
        if b.len() == 2 && (b'1'..=b'4').contains(&b[0]) && (b'1'..=b'3').contains(&b[1]) {
            return Ok(((b[0] - b'0') << 3) | ((b[1] - b'0') << 1));
        }
    } else if let Ok(v) = parse_tos(&t)
        && v <= 63
    {
        return Ok(v);
    }
    Err(format!(
        "{s:?} is not a DSCP value (0-63, EF, AF11-AF43, CS0-CS7, LE)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers() {
        assert_eq!(parse_dscp("EF"), Ok(46));
        assert_eq!(parse_dscp("af41"), Ok(34));
        assert_eq!(parse_dscp("CS1"), Ok(8));
        assert_eq!(parse_dscp("10"), Ok(10));
        assert!(parse_dscp("64").is_err());
        assert!(parse_dscp("AF51").is_err());
        assert_eq!(parse_tos("0xb8"), Ok(0xb8));
        assert!(parse_tos("256").is_err());
    }
}
