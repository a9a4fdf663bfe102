//! Log formats, their defaults, and `--format auto` detection from the first lines.

use crate::access::{self, Column};
use crate::error::LayoutError;
use crate::json::JsonFields;
use crate::parse::{LineParser, RegexFields};

/// A log format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Detect from the first lines (nginx, apache-us or json).
    Auto,
    /// nginx `combined` (or `common`) + `$request_time [$upstream_response_time]`, seconds.
    Nginx,
    /// Apache `combined`/`common` + `%D`, microseconds.
    ApacheUs,
    /// Apache `combined`/`common` + `%T`, whole seconds.
    ApacheS,
    /// JSON lines; the time at `--field` (default `request_time`), in `--unit`.
    Json,
    /// A `--regex` with a named group `time` (in `--unit`).
    Regex,
}

impl Format {
    /// The name shown in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Nginx => "nginx",
            Self::ApacheUs => "apache-us",
            Self::ApacheS => "apache-s",
            Self::Json => "json",
            Self::Regex => "regex",
        }
    }
}

/// What the parser was built from: format, field and unit, as reported.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Layout {
    /// The format (never `auto`).
    pub format: Format,
    /// The field read: `request_time`, `upstream_response_time`, `%D`, a JSON path, a group.
    pub field: String,
    /// Nanoseconds per unit of the field.
    pub unit_ns: u64,
    /// Whether `--format auto` chose it.
    pub detected: bool,
}

/// How the user asked for the time field.
#[derive(Debug, Clone)]
pub struct FieldChoice {
    /// `--field`.
    pub field: Option<String>,
    /// `--unit` in nanoseconds.
    pub unit_ns: Option<u64>,
    /// `--regex`.
    pub regex: Option<String>,
}

impl Layout {
    /// The layout for an explicit format.
    pub fn explicit(format: Format, choice: &FieldChoice) -> Result<Self, LayoutError> {
        let (field, unit_ns) = match format {
            Format::Auto => return Err(LayoutError::Unresolved),
            Format::Nginx => {
                let field = choice.field.as_deref().unwrap_or("request_time");
                if !matches!(field, "request_time" | "upstream_response_time") {
                    return Err(LayoutError::NginxField {
                        field: field.to_owned(),
                    });
                }
                (field.to_owned(), 1_000_000_000)
            }
            Format::ApacheUs => ("%D".to_owned(), 1_000),
            Format::ApacheS => ("%T".to_owned(), 1_000_000_000),
            Format::Json => (
                choice
                    .field
                    .clone()
                    .unwrap_or_else(|| "request_time".to_owned()),
                choice.unit_ns.unwrap_or(1_000_000_000),
            ),
            Format::Regex => ("time".to_owned(), choice.unit_ns.unwrap_or(1_000_000_000)),
        };
        Ok(Self {
            format,
            field,
            unit_ns,
            detected: false,
        })
    }

    /// Builds the line parser.
    pub(crate) fn parser(&self, choice: &FieldChoice) -> Result<LineParser, LayoutError> {
        Ok(match self.format {
            Format::Nginx | Format::ApacheUs | Format::ApacheS => LineParser::Access {
                column: if self.field == "upstream_response_time" {
                    Column::Upstream
                } else {
                    Column::Request
                },
                unit_ns: self.unit_ns,
            },
            Format::Json => LineParser::Json(JsonFields::new(&self.field, self.unit_ns)),
            Format::Regex => {
                let pattern = choice.regex.as_deref().ok_or(LayoutError::RegexMissing)?;
                LineParser::Regex(Box::new(RegexFields::new(pattern, self.unit_ns)?))
            }
            Format::Auto => return Err(LayoutError::Unresolved),
        })
    }
}

/// Why `--format auto` chose nothing.
#[derive(Debug)]
pub(crate) enum Undetected {
    /// No format reads a quarter of the first lines.
    NoFit,
    /// Appended whole numbers, none above this: seconds or microseconds?
    WholeNumbers(u64),
    /// The format found does not fit the field choice.
    Layout(LayoutError),
}

/// Detects the format from the start of a file: the format that reads most of the first 100
/// non-empty lines wins if it reads at least a quarter of them (a log with some broken or
/// foreign lines is still detected; the rest are counted as skipped). Decimal times mean
/// nginx (seconds), integers Apache `%D` (microseconds). Integers all at or below 60 could as
/// well be `%T` (seconds): that is refused as ambiguous rather than guessed.
pub(crate) fn detect(
    head: &[u8],
    complete: bool,
    choice: &FieldChoice,
) -> Result<Layout, Undetected> {
    let mut lines: Vec<&[u8]> = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .collect();
    if !complete {
        lines.pop(); // may be cut
    }
    let lines: Vec<&[u8]> = lines
        .into_iter()
        .filter(|l| !l.is_empty())
        .take(100)
        .collect();
    if lines.is_empty() {
        return Err(Undetected::NoFit);
    }
    let json = JsonFields::new(choice.field.as_deref().unwrap_or("request_time"), 1);
    let json_hits = lines.iter().filter(|l| json.fits(l)).count();
    let (mut decimal, mut integer, mut largest) = (0, 0, 0);
    for line in &lines {
        if let Ok(a) = access::split(line) {
            let first = a.times.split(|&b| b == b' ').next().unwrap_or(b"");
            if let Ok(value) = access::time_ns(a.times, Column::Request, 1) {
                if first.contains(&b'.') {
                    decimal += 1;
                } else {
                    integer += 1;
                    largest = largest.max(value);
                }
            }
        }
    }
    let best = json_hits.max(decimal + integer);
    if best * 4 < lines.len() || best == 0 {
        return Err(Undetected::NoFit);
    }
    let format = if json_hits >= decimal + integer {
        Format::Json
    } else if decimal >= integer {
        Format::Nginx
    } else if largest <= 60 {
        return Err(Undetected::WholeNumbers(largest));
    } else {
        Format::ApacheUs
    };
    let mut layout = Layout::explicit(format, choice).map_err(Undetected::Layout)?;
    layout.detected = true;
    Ok(layout)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice() -> FieldChoice {
        FieldChoice {
            field: None,
            unit_ns: None,
            regex: None,
        }
    }

    #[test]
    fn detects_the_common_formats() {
        let nginx = b"1.2.3.4 - - [10/Oct/2026:13:55:36 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"ua\" 0.012 -\n";
        let apache = b"1.2.3.4 - - [10/Oct/2026:13:55:36 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"ua\" 12345\n";
        let json = b"{\"request_time\":0.1}\n{\"request_time\":\"0.2\"}\n";
        let detect = |d: &[u8]| detect(d, true, &choice()).map(|l| l.format).ok();
        assert_eq!(detect(nginx), Some(Format::Nginx));
        assert_eq!(detect(apache), Some(Format::ApacheUs));
        assert_eq!(detect(json), Some(Format::Json));
        assert_eq!(detect(b"hello\nworld\n"), None);
        assert_eq!(detect(b""), None);
        // a cut last line is not judged
        assert!(matches!(
            super::detect(&nginx[..nginx.len() - 3], false, &choice()),
            Err(Undetected::NoFit)
        ));
        // whole seconds or microseconds? refused, not guessed
        let seconds =
            b"1.2.3.4 - - [10/Oct/2026:13:55:36 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"ua\" 2\n";
        let err = super::detect(seconds, true, &choice()).map(|l| l.format);
        assert!(matches!(err, Err(Undetected::WholeNumbers(2))), "{err:?}");
    }

    #[test]
    fn nginx_fields_are_checked() {
        let mut c = choice();
        c.field = Some("bytes".to_owned());
        assert!(Layout::explicit(Format::Nginx, &c).is_err());
        c.field = Some("upstream_response_time".to_owned());
        assert!(Layout::explicit(Format::Nginx, &c).is_ok());
        assert!(
            Layout::explicit(Format::Regex, &choice())
                .and_then(|l| l.parser(&choice()))
                .is_err()
        );
    }
}
