//! Small, pure formatting helpers shared by the terminal renderings and the HTML report.

use std::borrow::Cow;

use linerate_units::human::{self, Digits, Family};
use linerate_units::{BitRate, ByteSize};

/// Text that came from a file or a peer, made safe for a terminal: control characters (an
/// escape sequence in a mangled or hostile input) are shown escaped, never sent. Line breaks
/// and tabs are kept.
pub fn printable(text: &str) -> Cow<'_, str> {
    let control_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(control_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if control_char(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// How many characters a quoted input line may take in a message (escapes included).
pub const EXCERPT_CHARS: usize = 48;

/// `text` for a message that quotes input: [`printable`], and cut once the shown form reaches
/// `max` characters, with how much was left out, so a binary or endless line does not flood
/// the terminal.
pub fn excerpt(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in text.char_indices() {
        let shown = printable(c.encode_utf8(&mut [0; 4])).into_owned();
        if out.chars().count() + shown.chars().count() > max {
            out.push_str(&format!("… ({} more bytes)", text.len() - i));
            return out;
        }
        out.push_str(&shown);
    }
    out
}

/// `text` as HTML character data or an attribute value: `&`, `<`, `>`, `"` and `'` escaped.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `text` with its first letter upper case: `Throughput` from `throughput`.
pub fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// `2026-11-21 23:31:23 UTC` from Unix seconds.
pub fn utc(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// `2026-11-21T23:31:23Z` from Unix seconds.
pub fn rfc3339(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 → (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's civil-from-days algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    // d is 1..=31 and m 1..=12 by construction.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (y, m as u32, d as u32)
}

/// A rate for the stored-run tables: two decimals, so columns line up (`941.52 Mbit/s`,
/// `9.40 Gbit/s`).
pub fn rate(bps: f64) -> String {
    BitRate::from_bps_f64(bps)
        .human()
        .digits(Digits::Decimals(2))
        .to_string()
}

/// A size for the stored-run tables: SI prefixes with two decimals (`143.12 MB`), whole
/// bytes below 1 kB (`999 B`).
pub fn size(bytes: u64) -> String {
    ByteSize::from_bytes(bytes)
        .human()
        .family(Family::Si)
        .digits(Digits::Decimals(2))
        .whole_when_unscaled()
        .to_string()
}

/// A duration given in microseconds, at most three significant digits: `850 µs`, `12.9 ms`,
/// `1.25 s`.
pub fn micros(us: f64) -> String {
    human::seconds(us / 1e6)
        .digits(Digits::MaxSignificant(3))
        .to_string()
}

/// The scale that suits a set of rates: (divisor, unit label).
pub use linerate_units::human::bit_rate_axis as rate_scale;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_but_lines_and_tabs_kept() {
        assert!(matches!(printable("plain\tline\n"), Cow::Borrowed(_)));
        assert_eq!(printable("a\x1b[2Jb\x07\n"), "a\\u{1b}[2Jb\\u{7}\n");
    }

    #[test]
    fn html_special_characters_are_escaped() {
        assert_eq!(
            escape_html("a<b>&\"c\" 'd'"),
            "a&lt;b&gt;&amp;&quot;c&quot; &#39;d&#39;"
        );
    }

    #[test]
    fn utc_over_known_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_795_303_883), "2026-11-21 23:31:23 UTC");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59Z");
        assert_eq!(utc(4_107_542_400), "2100-03-01 00:00:00 UTC");
    }

    #[test]
    fn rates_and_sizes_over_a_grid() {
        assert_eq!(rate(400_194_767.6), "400.19 Mbit/s");
        assert_eq!(rate(9.4e9), "9.40 Gbit/s");
        assert_eq!(size(999), "999 B");
        assert_eq!(size(150_077_440), "150.08 MB");
        assert_eq!(size(2_500_000_000), "2.50 GB");
        assert_eq!(rate_scale(9.4e9), (1e9, "Gbit/s"));
        assert_eq!(rate_scale(12.0), (1.0, "bit/s"));
        assert_eq!(micros(850.0), "850 µs");
        assert_eq!(micros(12_914.0), "12.9 ms");
        assert_eq!(micros(1_250_000.0), "1.25 s");
        assert_eq!(micros(1_200.0), "1.2 ms");
        assert_eq!(size(0), "0 B");
        assert_eq!(size(1_000), "1.00 kB");
        assert_eq!(size(999_995), "1.00 MB");
        assert_eq!(rate(999_996.0), "1.00 Mbit/s");
        assert_eq!(rate(-5.0), "0.00 bit/s");
    }
}
