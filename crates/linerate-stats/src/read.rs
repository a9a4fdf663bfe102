//! ministat's input format: one value per line, taken from a chosen column.
//!
//! Rules (current FreeBSD ministat, with lines read whole whatever their length):
//! - a line ends at `\n`, or earlier at a NUL byte (C strings end there);
//! - trailing white space (space, `\t`, `\r`, `\v`, `\f`) is dropped, so CRLF files work;
//! - tokens are runs of bytes that are not delimiters (default space and tab);
//! - a token starting with `#` ends the line (a comment); lines without the column are skipped;
//! - the token must be a number in full, as C's `strtod` reads it: decimal with optional
//!   exponent (`1e3`), `inf`/`infinity`/`nan`/`nan(…)` in any case, or a hex float (`0x1p-3`);
//!   leading white space is allowed. Anything else is an error naming the line.
//!
//! The reader works on large buffers with no allocation per line, so 10 million values take
//! well under a second.
#![deny(missing_docs)]

use std::io::{self, Read};

/// Where the values are in each line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    /// 1-based column (`-C`).
    pub column: usize,
    /// Delimiter bytes (`-d`), any of which separates tokens.
    pub delimiters: Vec<u8>,
}

impl Default for Format {
    fn default() -> Self {
        Self {
            column: 1,
            delimiters: b" \t".to_vec(),
        }
    }
}

/// Why a data set could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// A token that is not a number, on a 1-based line.
    #[error("Invalid data on line {line}")]
    InvalidData {
        /// 1-based line number.
        line: u64,
        /// The offending token (lossily decoded).
        token: String,
    },
    /// The underlying reader failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Reads every value of `input` in the given `format`, in input order.
///
/// # Errors
/// [`ReadError::InvalidData`] at the first token that is not a number,
/// [`ReadError::Io`] when reading fails.
///
/// ```
/// use linerate_stats::read::{read_values, Format};
/// let text = b"# ms\n1.5\n2e1 x\n\n-3\r\n";
/// assert_eq!(read_values(&text[..], &Format::default()).unwrap(), vec![1.5, 20.0, -3.0]);
/// ```
pub fn read_values<R: Read>(mut input: R, format: &Format) -> Result<Vec<f64>, ReadError> {
    let mut parser = LineParser::new(format);
    let mut values = Vec::new();
    let mut buffer = vec![0_u8; 1 << 20];
    // Bytes [0, filled) hold data; [0, start) was consumed.
    let mut filled = 0;
    loop {
        let read = match input.read(&mut buffer[filled..]) {
            Ok(read) => read,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err.into()),
        };
        if read == 0 {
            if filled > 0 {
                parser.line(&buffer[..filled], &mut values)?;
            }
            return Ok(values);
        }
        // NUL bytes are rare: look for them once per chunk, not once per line.
        parser.check_nul = memchr::memchr(0, &buffer[..filled + read]).is_some();
        filled += read;
        let mut start = 0;
        while let Some(end) = memchr::memchr(b'\n', &buffer[start..filled]) {
            parser.line(&buffer[start..start + end], &mut values)?;
            start += end + 1;
        }
        buffer.copy_within(start..filled, 0);
        filled -= start;
        if filled == buffer.len() {
            // One line longer than the buffer: grow it (lines are read whole).
            buffer.resize(buffer.len() * 2, 0);
        }
    }
}

/// Parses one line at a time, counting lines.
struct LineParser {
    /// Whether the unparsed bytes may hold a NUL (which ends a line early, as in C).
    check_nul: bool,
    column: usize,
    is_delimiter: [bool; 256],
    line: u64,
}

impl LineParser {
    fn new(format: &Format) -> Self {
        let mut is_delimiter = [false; 256];
        for &byte in &format.delimiters {
            is_delimiter[usize::from(byte)] = true;
        }
        Self {
            check_nul: true,
            column: format.column,
            is_delimiter,
            line: 0,
        }
    }

    /// Handles one line (without its `\n`), pushing its value if it has one.
    fn line(&mut self, line: &[u8], values: &mut Vec<f64>) -> Result<(), ReadError> {
        self.line += 1;
        let line = match self.check_nul.then(|| memchr::memchr(0, line)).flatten() {
            Some(nul) => &line[..nul],
            None => line,
        };
        let mut end = line.len();
        while end > 0 && is_c_space(line[end - 1]) {
            end -= 1;
        }
        let Some(token) = self.token(&line[..end]) else {
            return Ok(());
        };
        match parse_c_double(token) {
            Some(value) => {
                values.push(value);
                Ok(())
            }
            None => Err(ReadError::InvalidData {
                line: self.line,
                token: String::from_utf8_lossy(token).into_owned(),
            }),
        }
    }

    /// The token in the wanted column, unless a comment or the line's end comes first.
    fn token<'a>(&self, line: &'a [u8]) -> Option<&'a [u8]> {
        let mut position = 0;
        let mut index = 0;
        loop {
            while position < line.len() && self.is_delimiter[usize::from(line[position])] {
                position += 1;
            }
            if position == line.len() {
                return None;
            }
            let start = position;
            while position < line.len() && !self.is_delimiter[usize::from(line[position])] {
                position += 1;
            }
            index += 1;
            let token = &line[start..position];
            if token[0] == b'#' {
                return None;
            }
            if index == self.column {
                return Some(token);
            }
        }
    }
}

/// C's `isspace` in the C locale.
fn is_c_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Exact powers of ten (10²² is the largest exactly representable one).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The common case, `[-+]digits[.digits]` with few digits, without the general parser: when
/// the digits form an integer m ≤ 2⁵³ and there are k ≤ 22 decimals, m / 10ᵏ is a single
/// correctly rounded IEEE division of two exact values (Clinger's fast path), so the result is
/// the same as `strtod`'s.
fn parse_simple_decimal(token: &[u8]) -> Option<f64> {
    let (negative, digits) = match token.first()? {
        b'-' => (true, &token[1..]),
        b'+' => (false, &token[1..]),
        _ => (false, token),
    };
    let mut mantissa: u64 = 0;
    let mut count = 0_usize;
    let mut decimals = 0_usize;
    let mut seen_point = false;
    for &byte in digits {
        match byte {
            b'0'..=b'9' => {
                mantissa = mantissa * 10 + u64::from(byte - b'0');
                count += 1;
                if seen_point {
                    decimals += 1;
                }
                if count > 15 {
                    return None;
                }
            }
            b'.' if !seen_point => seen_point = true,
            _ => return None,
        }
    }
    if count == 0 {
        return None;
    }
    let magnitude = mantissa as f64 / POW10[decimals];
    Some(if negative { -magnitude } else { magnitude })
}

/// Parses a whole token as C's `strtod` would, or `None` if `strtod` would stop early.
#[must_use]
pub fn parse_c_double(token: &[u8]) -> Option<f64> {
    if let Some(value) = parse_simple_decimal(token) {
        return Some(value);
    }
    let start = token.iter().position(|&b| !is_c_space(b))?;
    let token = &token[start..];
    // Rust's parser accepts exactly strtod's decimal, inf, infinity and nan forms; it is
    // correctly rounded, as glibc's strtod is.
    if let Ok(text) = std::str::from_utf8(token) {
        if let Ok(value) = text.parse::<f64>() {
            return Some(value);
        }
    }
    let (negative, body) = match token.first() {
        Some(b'-') => (true, &token[1..]),
        Some(b'+') => (false, &token[1..]),
        _ => (false, token),
    };
    let magnitude = parse_nan_payload(body).or_else(|| parse_hex_float(body))?;
    Some(if negative { -magnitude } else { magnitude })
}

/// `nan(chars)` with letters, digits and `_` between the parentheses.
fn parse_nan_payload(body: &[u8]) -> Option<f64> {
    if body.len() < 5 || !body[..4].eq_ignore_ascii_case(b"nan(") || body.last() != Some(&b')') {
        return None;
    }
    body[4..body.len() - 1]
        .iter()
        .all(|&b| b.is_ascii_alphanumeric() || b == b'_')
        .then_some(f64::NAN)
}

/// A C99 hex float without sign: `0x` digits [`.` digits] [`p` [sign] decimal exponent],
/// rounded to nearest, ties to even.
fn parse_hex_float(body: &[u8]) -> Option<f64> {
    let rest = body
        .strip_prefix(b"0x")
        .or_else(|| body.strip_prefix(b"0X"))?;
    let mut mantissa: u64 = 0;
    let mut exponent: i64 = 0;
    let mut sticky = false;
    let mut digits = 0;
    let mut position = 0;
    let mut seen_point = false;
    while position < rest.len() {
        let byte = rest[position];
        if byte == b'.' && !seen_point {
            seen_point = true;
            position += 1;
            continue;
        }
        let Some(digit) = char::from(byte).to_digit(16) else {
            break;
        };
        digits += 1;
        if mantissa >> 60 == 0 {
            mantissa = (mantissa << 4) | u64::from(digit);
            if seen_point {
                exponent -= 4;
            }
        } else {
            sticky |= digit != 0;
            if !seen_point {
                exponent += 4;
            }
        }
        position += 1;
    }
    if digits == 0 {
        return None;
    }
    if position < rest.len() {
        let exp_part = &rest[position..];
        if !matches!(exp_part.first(), Some(b'p' | b'P')) {
            return None;
        }
        let text = std::str::from_utf8(&exp_part[1..]).ok()?;
        let digits_only = text.strip_prefix(['+', '-']).unwrap_or(text);
        if digits_only.is_empty() || !digits_only.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        // Saturate absurd exponents; the value is 0 or infinity long before.
        let value: i64 = text.parse().unwrap_or(if text.starts_with('-') {
            -100_000
        } else {
            100_000
        });
        exponent = exponent.saturating_add(value.clamp(-100_000, 100_000));
    }
    Some(scale_binary(mantissa, sticky, exponent))
}

/// mantissa · 2^exponent (plus a sticky "something nonzero below") rounded to an f64.
fn scale_binary(mantissa: u64, sticky: bool, exponent: i64) -> f64 {
    if mantissa == 0 {
        return 0.0;
    }
    // Normalise to bit 63 set; value = m · 2^(e) with m in [2^63, 2^64).
    let shift = mantissa.leading_zeros();
    let m = mantissa << shift;
    let e = exponent - i64::from(shift);
    // The value is m/2^63 · 2^(e+63); its binary exponent is e + 63.
    let binary_exponent = e + 63;
    if binary_exponent > 1023 {
        return f64::INFINITY;
    }
    // Bits to keep: 53 for normal numbers, fewer for subnormals (exponent below −1022).
    let keep = if binary_exponent >= -1022 {
        53
    } else {
        53 - (-1022 - binary_exponent)
    };
    if keep <= 0 {
        // Below half the smallest subnormal, or exactly… round: only > half rounds up.
        let half_smallest = keep == 0 && (m > 1 << 63 || (m == 1 << 63 && sticky));
        return if half_smallest {
            f64::from_bits(1)
        } else {
            0.0
        };
    }
    let drop = 64 - u32::try_from(keep).unwrap_or(53);
    let kept = m >> drop;
    let remainder = m & ((1_u64 << drop) - 1);
    let half = 1_u64 << (drop - 1);
    let round_up = remainder > half || (remainder == half && (sticky || kept & 1 == 1));
    let kept = kept + u64::from(round_up);
    // kept · 2^(e + drop); kept < 2^54 so the conversion and powi are exact.
    let scale = e + i64::from(drop);
    let value = kept as f64;
    let mut result = value;
    let mut remaining = scale;
    // Multiply in steps that cannot overflow or underflow prematurely.
    while remaining > 0 {
        let step = remaining.min(1000);
        result *= 2_f64.powi(i32::try_from(step).unwrap_or(1000));
        remaining -= step;
    }
    while remaining < 0 {
        let step = remaining.max(-1000);
        result *= 2_f64.powi(i32::try_from(step).unwrap_or(-1000));
        remaining -= step;
    }
    result
}

/// C's `(int)strtol(text, &end, 10)` when all of `text` is used, else `None`.
///
/// Leading white space and a sign are allowed; an empty string is 0; out-of-range values
/// saturate to the `long` range and are then truncated to `int`, as ministat's assignment does.
/// (ministat reads `-C` and `-w` so).
#[must_use]
pub fn c_int(text: &str) -> Option<i32> {
    let bytes = text.as_bytes();
    if bytes.is_empty() {
        return Some(0);
    }
    let (value, used) = c_long_prefix(bytes);
    (used == bytes.len()).then_some(value as i32)
}

/// Parses the longest `strtol` prefix: returns the saturated value and the bytes consumed (0 if
/// no digits, as `strtol` then sets `end` to the start).
#[must_use]
pub fn c_long_prefix(bytes: &[u8]) -> (i64, usize) {
    let mut position = 0;
    while position < bytes.len()
        && matches!(bytes[position], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
    {
        position += 1;
    }
    let negative = match bytes.get(position) {
        Some(b'-') => {
            position += 1;
            true
        }
        Some(b'+') => {
            position += 1;
            false
        }
        _ => false,
    };
    let digits_start = position;
    let mut value: i64 = 0;
    while let Some(digit) = bytes.get(position).filter(|b| b.is_ascii_digit()) {
        let digit = i64::from(digit - b'0');
        value = if negative {
            value.saturating_mul(10).saturating_sub(digit)
        } else {
            value.saturating_mul(10).saturating_add(digit)
        };
        position += 1;
    }
    if position == digits_start {
        return (0, 0);
    }
    (value, position)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtol_rules() {
        assert_eq!(c_int("3"), Some(3));
        assert_eq!(c_int(" +7"), Some(7));
        assert_eq!(c_int("-2"), Some(-2));
        assert_eq!(c_int(""), Some(0));
        assert_eq!(c_int("3x"), None);
        assert_eq!(c_int("x"), None);
        assert_eq!(c_int(" "), None);
        assert_eq!(c_int("4294967297"), Some(1));
        assert_eq!(c_int("99999999999999999999"), Some(-1));
    }

    fn read(text: &str, format: &Format) -> Result<Vec<f64>, ReadError> {
        read_values(text.as_bytes(), format)
    }

    #[test]
    fn columns_comments_and_blank_lines() {
        let format = Format {
            column: 2,
            ..Format::default()
        };
        let got =
            read("a 1\n  b\t2  \n# c 3\nd #4\n\ne\n x 5 # tail\n", &format).unwrap_or_default();
        assert_eq!(got, vec![1.0, 2.0, 5.0]);
    }

    #[test]
    fn invalid_data_names_the_line() {
        let err = read("1\n2\n3x\n", &Format::default());
        match err {
            Err(ReadError::InvalidData { line, token }) => {
                assert_eq!((line, token.as_str()), (3, "3x"));
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn crlf_nul_and_no_final_newline() {
        let got = read("1\r\n2\u{0}junk\n3", &Format::default()).unwrap_or_default();
        assert_eq!(got, vec![1.0, 2.0, 3.0]);
    }

    #[test]
    fn custom_delimiters_allow_leading_space() {
        let format = Format {
            column: 2,
            delimiters: b",".to_vec(),
        };
        let got = read("a, 1.5\nb,2 \n", &format).unwrap_or_default();
        assert_eq!(got, vec![1.5, 2.0]);
        assert!(read("a,1 5\n", &format).is_err());
    }

    #[test]
    fn strtod_forms() {
        let cases: &[(&str, f64)] = &[
            ("1e3", 1000.0),
            ("-.5", -0.5),
            ("+5.", 5.0),
            ("0x10", 16.0),
            ("0x1.8p1", 3.0),
            ("-0X.8P-1", -0.25),
            ("0x1p-1074", f64::from_bits(1)),
            ("0x1p-1075", 0.0),
            ("0x1.8p-1075", f64::from_bits(1)),
            ("0x1p1024", f64::INFINITY),
            ("0x1fffffffffffff", 9_007_199_254_740_991.0),
            ("0x20000000000001", 9_007_199_254_740_992.0),
            ("0x20000000000003", 9_007_199_254_740_996.0),
            ("INF", f64::INFINITY),
            ("-Infinity", f64::NEG_INFINITY),
        ];
        for &(token, expected) in cases {
            assert_eq!(parse_c_double(token.as_bytes()), Some(expected), "{token}");
        }
        for token in ["nan", "NaN(0x1f)", "-nan"] {
            assert!(
                parse_c_double(token.as_bytes()).is_some_and(f64::is_nan),
                "{token}"
            );
        }
        for token in [
            "", "1e", "0x", "0xp1", "0x1p", "nan(", "nan(a b)", "1,5", "infinit", "--1", "1 ",
        ] {
            assert_eq!(parse_c_double(token.as_bytes()), None, "{token:?}");
        }
    }

    #[test]
    fn simple_decimal_fast_path_is_exact() {
        for text in [
            "0.1",
            "-0",
            "123.456",
            "999999999999999",
            "0.00000000000001",
            "5.",
            ".5",
        ] {
            let expected: f64 = text.parse().unwrap_or(f64::NAN);
            let got = parse_simple_decimal(text.as_bytes());
            assert_eq!(got.map(f64::to_bits), Some(expected.to_bits()), "{text}");
        }
        for text in ["1e3", "1234567890123456", "1.2.3", "", "-", ".", "0x1"] {
            assert_eq!(parse_simple_decimal(text.as_bytes()), None, "{text}");
        }
    }

    #[test]
    fn long_lines_are_read_whole() {
        let line = format!("{} 7\n", "x".repeat(3 << 20));
        let format = Format {
            column: 2,
            ..Format::default()
        };
        assert_eq!(read(&line, &format).unwrap_or_default(), vec![7.0]);
    }

    proptest::proptest! {
        /// Arbitrary bytes in any column with any delimiters: a result or an error naming a
        /// line inside the input, never a panic.
        #[test]
        fn arbitrary_bytes_never_panic(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
            column in 1usize..4,
            delimiters in proptest::collection::vec(proptest::prelude::any::<u8>(), 1..3),
        ) {
            let format = Format { column, delimiters };
            let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
            match read_values(&bytes[..], &format) {
                Ok(values) => proptest::prop_assert!(values.len() as u64 <= lines),
                Err(ReadError::InvalidData { line, .. }) => {
                    proptest::prop_assert!(line >= 1 && line <= lines);
                }
                Err(ReadError::Io(e)) => proptest::prop_assert!(false, "io error {e}"),
            }
        }

        /// Finite values written one per line read back exactly, in order.
        #[test]
        fn written_values_read_back(values in proptest::collection::vec(-1e300f64..1e300, 0..50)) {
            let text: String = values.iter().map(|v| format!("{v:?}\n")).collect();
            let got = read_values(text.as_bytes(), &Format::default());
            proptest::prop_assert_eq!(got.ok(), Some(values));
        }
    }
}
