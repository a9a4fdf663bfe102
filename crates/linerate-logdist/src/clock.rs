//! Wall-clock timestamps as Unix milliseconds: log formats (nginx/Apache `$time_local`
//! `10/Oct/2026:13:55:36 +0200`, ISO 8601 `2026-10-10T13:55:36.5+02:00` as nginx
//! `$time_iso8601` writes it, Unix seconds `1791640536.123` as `$msec` writes it) and the
//! `--since/--until` arguments (the same, plus `2026-10-10 13:55:36` and `2026-10-10`, read as
//! UTC).

/// Days from 1970-01-01 to a proleptic Gregorian date (the civil-from-days inverse).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn digits(s: &[u8]) -> Option<u32> {
    if s.is_empty() || s.len() > 9 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(s.iter().fold(0, |acc, &b| acc * 10 + u32::from(b - b'0')))
}

fn month_from_name(name: &[u8]) -> Option<u32> {
    const MONTHS: [&[u8; 3]; 12] = [
        b"jan", b"feb", b"mar", b"apr", b"may", b"jun", b"jul", b"aug", b"sep", b"oct", b"nov",
        b"dec",
    ];
    let lower = [
        name.first()?.to_ascii_lowercase(),
        name.get(1)?.to_ascii_lowercase(),
        name.get(2)?.to_ascii_lowercase(),
    ];
    (name.len() == 3)
        .then(|| MONTHS.iter().position(|m| **m == lower))
        .flatten()
        .map(|i| i as u32 + 1)
}

fn from_parts(year: u32, month: u32, day: u32, h: u32, m: u32, s: u32, ms: u32) -> Option<i64> {
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(i64::from(year), month, day);
    Some(((days * 86_400 + i64::from(h * 3600 + m * 60 + s)) * 1000) + i64::from(ms))
}

/// `+0200`, `+02:00`, `-07`, `Z` → offset in seconds east of UTC.
fn offset(s: &[u8]) -> Option<i64> {
    match s {
        [] | [b'Z'] | [b'z'] => Some(0),
        [sign @ (b'+' | b'-'), rest @ ..] => {
            let clean: Vec<u8> = rest.iter().copied().filter(|&b| b != b':').collect();
            let (h, m) = match clean.len() {
                2 => (digits(&clean)?, 0),
                4 => (digits(&clean[..2])?, digits(&clean[2..])?),
                _ => return None,
            };
            let secs = i64::from(h * 3600 + m * 60);
            Some(if *sign == b'-' { -secs } else { secs })
        }
        _ => None,
    }
}

/// `13:55:36` or `13:55:36.123` → (h, m, s, ms).
fn clock_time(s: &[u8]) -> Option<(u32, u32, u32, u32)> {
    if s.len() < 8 || s[2] != b':' || s[5] != b':' {
        return None;
    }
    let ms = match s.get(8) {
        None => 0,
        Some(b'.' | b',') => {
            let frac = &s[9..];
            let mut ms = 0;
            for i in 0..3 {
                ms = ms * 10 + frac.get(i).map_or(Some(0), |&b| digits(&[b]))?;
            }
            digits(frac)?; // the rest must be digits too
            ms
        }
        _ => return None,
    };
    Some((digits(&s[..2])?, digits(&s[3..5])?, digits(&s[6..8])?, ms))
}

/// `10/Oct/2026:13:55:36 +0200`.
fn time_local(s: &[u8]) -> Option<i64> {
    if s.len() < 20 || s[2] != b'/' || s[6] != b'/' || s[11] != b':' {
        return None;
    }
    let day = digits(&s[..2])?;
    let month = month_from_name(&s[3..6])?;
    let year = digits(&s[7..11])?;
    let (h, m, sec, ms) = clock_time(&s[12..20])?;
    let zone = s[20..].strip_prefix(b" ").unwrap_or(&s[20..]);
    Some(from_parts(year, month, day, h, m, sec, ms)? - offset(zone)? * 1000)
}

/// `2026-10-10T13:55:36.5+02:00`, `2026-10-10 13:55:36`, `2026-10-10`.
fn iso8601(s: &[u8]) -> Option<i64> {
    if s.len() < 10 || s[4] != b'-' || s[7] != b'-' {
        return None;
    }
    let (year, month, day) = (digits(&s[..4])?, digits(&s[5..7])?, digits(&s[8..10])?);
    if s.len() == 10 {
        return from_parts(year, month, day, 0, 0, 0, 0);
    }
    if !matches!(s[10], b'T' | b't' | b' ') {
        return None;
    }
    let rest = &s[11..];
    let zone_at = rest
        .iter()
        .position(|&b| matches!(b, b'Z' | b'z' | b'+' | b'-'))
        .unwrap_or(rest.len());
    let (h, m, sec, ms) = clock_time(&rest[..zone_at])?;
    Some(from_parts(year, month, day, h, m, sec, ms)? - offset(&rest[zone_at..])? * 1000)
}

/// Unix seconds with an optional fraction (`$msec`).
fn unix(s: &[u8]) -> Option<i64> {
    let (int, frac) = match memchr::memchr(b'.', s) {
        Some(dot) => (&s[..dot], &s[dot + 1..]),
        None => (s, &[][..]),
    };
    if int.is_empty() || int.len() > 12 || !int.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if !frac.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let secs = int
        .iter()
        .fold(0i64, |acc, &b| acc * 10 + i64::from(b - b'0'));
    let ms = (0..3).fold(0i64, |acc, i| {
        acc * 10 + frac.get(i).map_or(0, |&b| i64::from(b - b'0'))
    });
    Some(secs * 1000 + ms)
}

/// A timestamp as written in a log, as Unix milliseconds.
pub fn parse_log_time(s: &[u8]) -> Option<i64> {
    let s = s.trim_ascii();
    match s.get(2) {
        Some(b'/') => time_local(s),
        _ if s.get(4) == Some(&b'-') => iso8601(s),
        _ => unix(s),
    }
}

/// A `--since/--until` argument: any log timestamp form, or `@<unix seconds>`.
pub fn parse_bound(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let parsed = match t.strip_prefix('@') {
        Some(secs) => unix(secs.as_bytes()),
        None if t.get(2..3) == Some("/") || t.get(4..5) == Some("-") => {
            parse_log_time(t.as_bytes())
        }
        None => None,
    };
    parsed.ok_or_else(|| {
        format!(
            "cannot read the time {s:?}: use 2026-10-10T13:55:36Z (or with +02:00), \
             2026-10-10 13:55:36 (UTC), 2026-10-10, 10/Oct/2026:13:55:36 +0000 or @1791640536"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // 2026-10-10T13:55:36Z = 1791640536 (date -u -d 2026-10-10T13:55:36Z +%s)
    const T: i64 = 1_791_640_536_000;

    #[test]
    fn all_forms_agree() {
        assert_eq!(parse_log_time(b"10/Oct/2026:13:55:36 +0000"), Some(T));
        assert_eq!(parse_log_time(b"10/oct/2026:15:55:36 +0200"), Some(T));
        assert_eq!(parse_log_time(b"10/Oct/2026:06:55:36 -0700"), Some(T));
        assert_eq!(parse_log_time(b"2026-10-10T13:55:36+00:00"), Some(T));
        assert_eq!(parse_log_time(b"2026-10-10T15:55:36+02:00"), Some(T));
        assert_eq!(parse_log_time(b"2026-10-10T13:55:36.250Z"), Some(T + 250));
        assert_eq!(parse_log_time(b"1791640536.123"), Some(T + 123));
        assert_eq!(parse_bound("2026-10-10 13:55:36"), Ok(T));
        assert_eq!(parse_bound("@1791640536"), Ok(T));
        assert_eq!(
            parse_bound("2026-10-10"),
            Ok(T - (13 * 3600 + 55 * 60 + 36) * 1000)
        );
        assert_eq!(parse_log_time(b"01/Jan/1970:00:00:00 +0000"), Some(0));
        assert_eq!(
            parse_log_time(b"29/Feb/2024:00:00:00 +0000"),
            Some(1_709_164_800_000)
        );
    }

    #[test]
    fn garbage_is_refused() {
        assert!(parse_bound("yesterday").is_err());
        assert!(parse_bound("2026-13-10").is_err());
        assert_eq!(parse_log_time(b"10/Foo/2026:13:55:36 +0000"), None);
        assert_eq!(parse_log_time(b"10/Oct/2026:13:55"), None);
        assert_eq!(parse_log_time(b""), None);
        assert_eq!(parse_log_time(b"2026-10-10T25:00:00Z"), None);
    }
}

#[cfg(test)]
mod never_panics {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn any_bytes_or_text(bytes in proptest::collection::vec(any::<u8>(), 0..40), text in ".{0,40}") {
            let _ = super::parse_log_time(&bytes);
            let _ = super::parse_bound(&text);
        }

        #[test]
        fn mutated_timestamps(at in 0..26usize, byte in any::<u8>(), cut in 0..27usize) {
            for base in ["10/Oct/2026:13:55:36 +0000", "2026-10-10T13:55:36.25+02:00"] {
                let mut s = base.as_bytes().to_vec();
                if at < s.len() {
                    s[at] = byte;
                }
                s.truncate(cut.max(at));
                let _ = super::parse_log_time(&s);
            }
        }
    }
}
