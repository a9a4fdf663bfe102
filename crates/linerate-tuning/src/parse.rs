//! Reading settings files into entries: sysctl.conf and sysctl.d drop-ins, FreeBSD loader.conf,
//! `sysctl -a` dumps (Linux `key = value`, BSD `key: value`) and Windows `.reg` exports.
//! Malformed lines become `syntax` findings with file:line; parsing never fails as a whole.

use std::str::FromStr;

use crate::catalogue::catalogue;
use crate::finding::{Finding, Fix, Location, Severity};
use crate::inventory::inventory;
use crate::os::Os;

/// The grammar of a settings file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// `key = value` / `key=value` lines with `#` or `;` comments (sysctl.conf, sysctl.d).
    Sysctl,
    /// FreeBSD `/boot/loader.conf`: `key="value"`.
    Loader,
    /// A `sysctl -a` dump: Linux `key = value` or BSD `key: value`; the whole live state.
    Dump,
    /// A Windows Registry Editor export (`"Name"=dword:…`).
    Reg,
    /// A tuned profile (`tuned.conf`): the `key=value` lines of its `[sysctl]` section.
    Tuned,
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "sysctl" | "sysctl.conf" | "sysctl.d" => Ok(Format::Sysctl),
            "loader" | "loader.conf" => Ok(Format::Loader),
            "dump" | "sysctl-a" => Ok(Format::Dump),
            "reg" => Ok(Format::Reg),
            "tuned" | "tuned.conf" => Ok(Format::Tuned),
            _ => Err(format!(
                "unknown format `{s}` (expected sysctl, loader, dump, reg or tuned)"
            )),
        }
    }
}

/// One `key = value` assignment found in a file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    /// The key in dotted form (see [`normalize_key`]).
    pub key: String,
    /// The value, trimmed, without inline comment and without a surrounding pair of quotes.
    pub value: String,
    /// The value was written in a pair of quotes (loader.conf's normal form; FreeBSD sysctl(8)
    /// strips them too, Linux sysctl(8) and systemd-sysctl do not).
    pub quoted: bool,
    /// Where it was.
    pub location: Location,
    /// Linux `-key`: sysctl ignores errors on this line.
    pub ignore_errors: bool,
    /// A `#` comment that followed the value on the same line.
    pub inline_comment: Option<String>,
    /// The grammar of the file it came from.
    pub format: Format,
}

/// A parsed file.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The file's grammar (given or detected).
    pub format: Format,
    /// Assignments in file order.
    pub entries: Vec<Entry>,
    /// Lines that could not be read.
    pub syntax: Vec<Finding>,
}

/// Decodes a settings file: UTF-8 (invalid bytes replaced), or UTF-16LE with a byte-order mark,
/// which is how regedit exports `.reg` files.
pub fn decode(bytes: &[u8]) -> String {
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        let units: Vec<u16> = rest
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        return String::from_utf16_lossy(&units);
    }
    let text = String::from_utf8_lossy(bytes);
    text.strip_prefix('\u{feff}').unwrap_or(&text).to_string()
}

/// Guesses a file's grammar from its name and content. loader.conf is recognised by name
/// (`loader.conf`, `loader.conf.local`, anything in `loader.conf.d/`) and by content: a module
/// load (`if_em_load="YES"`) or mostly `key="value"` assignments, loader.conf's own quoting.
pub fn detect_format(name: &str, text: &str) -> Format {
    let lower = name.to_ascii_lowercase().replace('\\', "/");
    let base = lower.rsplit('/').next().unwrap_or(&lower);
    if lower.ends_with(".reg") || text.trim_start().starts_with("Windows Registry Editor") {
        return Format::Reg;
    }
    if base.starts_with("loader.conf") || lower.contains("loader.conf.d/") {
        return Format::Loader;
    }
    if lower.ends_with("tuned.conf") || text.lines().any(|l| l.trim() == "[sysctl]") {
        return Format::Tuned;
    }
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let comments = lines
        .iter()
        .filter(|l| l.starts_with('#') || l.starts_with(';'))
        .count();
    let bsd_dump = lines
        .iter()
        .filter(|l| is_bsd_dump_line(l) && !l.contains('='))
        .count();
    if bsd_dump * 2 > lines.len() {
        return Format::Dump;
    }
    if looks_like_loader(&lines) {
        return Format::Loader;
    }
    // A Linux `sysctl -a` dump is sysctl.conf grammar without comments and with many keys.
    if comments == 0 && lines.len() >= 50 {
        return Format::Dump;
    }
    Format::Sysctl
}

/// loader.conf content: a `*_load="YES"` line, or at least two assignments of which most are
/// written `key="value"` without spaces, as loader.conf(5) shows them.
fn looks_like_loader(lines: &[&str]) -> bool {
    let assignments: Vec<(&str, &str)> = lines
        .iter()
        .filter(|l| !l.starts_with('#') && !l.starts_with(';'))
        .filter_map(|l| l.split_once('='))
        .collect();
    let module_load = assignments.iter().any(|(k, v)| {
        k.trim().ends_with("_load") && v.trim().trim_matches('"').eq_ignore_ascii_case("yes")
    });
    let quoted = assignments
        .iter()
        .filter(|(k, v)| !k.ends_with(' ') && v.starts_with('"'))
        .count();
    module_load || (assignments.len() >= 2 && quoted * 2 > assignments.len())
}

fn is_bsd_dump_line(line: &str) -> bool {
    match line.split_once(": ") {
        Some((key, _)) => is_key(key),
        None => line.ends_with(':') && is_key(&line[..line.len() - 1]),
    }
}

fn is_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/*%?[]!@:".contains(c))
}

/// Parses `text` (read from `source`) as `format`.
pub fn parse(source: &str, text: &str, format: Format) -> Parsed {
    let mut parsed = Parsed {
        format,
        entries: Vec::new(),
        syntax: Vec::new(),
    };
    let mut reg_section_ok = true;
    let mut tuned_section = String::new();
    for (i, raw) in text.lines().enumerate() {
        let location = Location {
            source: source.to_string(),
            line: Some(i + 1),
        };
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let result = match format {
            Format::Sysctl => parse_sysctl_line(line, format),
            Format::Dump => parse_dump_line(line),
            Format::Loader => parse_loader_line(line),
            Format::Reg => parse_reg_line(line, &mut reg_section_ok),
            Format::Tuned => match line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                Some(section) => {
                    tuned_section = section.trim().to_string();
                    LineResult::Skip
                }
                None if tuned_section == "sysctl" => parse_sysctl_line(line, format),
                None => LineResult::Skip,
            },
        };
        match result {
            LineResult::Entry(mut e) => {
                e.location = location;
                parsed.entries.push(e);
            }
            LineResult::Skip => {}
            LineResult::Error(why) => parsed.syntax.push(Finding {
                rule: "syntax".into(),
                severity: Severity::Error,
                location: Some(location),
                key: String::new(),
                value: Some(line.to_string()),
                why,
                fix: Fix::Remove,
                source: syntax_source(format).into(),
            }),
        }
    }
    parsed
}

fn syntax_source(format: Format) -> &'static str {
    match format {
        Format::Sysctl => "sysctl.conf(5), sysctl.d(5)",
        Format::Loader => "FreeBSD loader.conf(5)",
        Format::Dump => "sysctl(8)",
        Format::Reg => "Windows Registry Editor file format",
        Format::Tuned => "tuned.conf(5)",
    }
}

enum LineResult {
    Entry(Entry),
    Skip,
    Error(String),
}

/// A key in dotted form, the way sysctl.d(5) reads it: when the first separator is `/`, the
/// key is a path (`net/ipv4/conf/eth0.100/rp_filter`), whose `/` are separators and whose dots
/// belong to names; a dotted key keeps its `/`, which stand for dots inside a name
/// (`net.ipv4.conf.eth0/100.rp_filter`). Both give `net.ipv4.conf.eth0/100.rp_filter`.
pub fn normalize_key(key: &str) -> String {
    match key.find(['.', '/']) {
        Some(i) if key[i..].starts_with('/') => key
            .split('/')
            .map(|c| c.replace('.', "/"))
            .collect::<Vec<_>>()
            .join("."),
        _ => key.to_string(),
    }
}

/// A value without one surrounding pair of matching quotes, and whether it had them.
fn unquote(value: &str) -> (&str, bool) {
    for q in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(q).and_then(|v| v.strip_suffix(q)) {
            return (inner, true);
        }
    }
    (value, false)
}

fn entry(key: &str, value: &str, format: Format) -> Entry {
    let (value, quoted) = unquote(value);
    Entry {
        key: normalize_key(key),
        value: crate::value::normalize(value),
        quoted,
        location: Location {
            source: String::new(),
            line: None,
        },
        ignore_errors: false,
        inline_comment: None,
        format,
    }
}

fn split_key(line: &str, sep: char) -> Result<(&str, &str), String> {
    let Some((key, value)) = line.split_once(sep) else {
        return Err(format!("no `{sep}`: expected `key {sep} value`"));
    };
    let key = key.trim();
    if key.is_empty() {
        return Err(format!("nothing before `{sep}`: the key is missing"));
    }
    if !is_key(key) {
        return Err(format!("`{key}` is not a valid key name"));
    }
    Ok((key, value.trim()))
}

fn parse_sysctl_line(line: &str, format: Format) -> LineResult {
    let (ignore, body) = match line.strip_prefix('-') {
        Some(rest) => (true, rest.trim_start()),
        None => (false, line),
    };
    // sysctl.d(5): `-key` without a value excludes the key from an earlier glob assignment.
    if ignore && !body.contains('=') && is_key(body) {
        return LineResult::Skip;
    }
    let (key, value) = match split_key(body, '=') {
        Ok(kv) => kv,
        Err(e) => return LineResult::Error(e),
    };
    // `#` after whitespace starts an inline comment for the BSD rc scripts; Linux sysctl(8) and
    // systemd-sysctl keep it as part of the value (lint decides by OS).
    let (value, comment) = match value.find(" #").or_else(|| value.find("\t#")) {
        Some(i) => (value[..i].trim(), Some(value[i..].trim().to_string())),
        None if value.starts_with('#') => ("", Some(value.to_string())),
        None => (value, None),
    };
    if value.is_empty() {
        return LineResult::Error(format!("`{key}` has no value"));
    }
    let mut e = entry(key, value, format);
    e.ignore_errors = ignore;
    e.inline_comment = comment;
    LineResult::Entry(e)
}

fn parse_dump_line(line: &str) -> LineResult {
    // Linux dumps use ` = `; BSD dumps use `: `. Lines that are neither are continuation lines
    // of multi-line values (hostcache lists, mask_symbolic) and are skipped.
    if let Some((key, value)) = line.split_once(" = ").or_else(|| line.split_once(": ")) {
        let key = key.trim();
        if is_key(key) {
            return LineResult::Entry(entry(key, value.trim(), Format::Dump));
        }
    }
    if let Some(key) = line.strip_suffix(" =").or_else(|| line.strip_suffix(':')) {
        if is_key(key.trim()) {
            return LineResult::Skip; // empty value (ip_local_reserved_ports)
        }
    }
    LineResult::Skip
}

fn parse_loader_line(line: &str) -> LineResult {
    let (key, rest) = match split_key(line, '=') {
        Ok(kv) => kv,
        Err(e) => return LineResult::Error(e),
    };
    let (value, trailing) = if let Some(quoted) = rest.strip_prefix('"') {
        match quoted.find('"') {
            Some(end) => (&quoted[..end], quoted[end + 1..].trim()),
            None => return LineResult::Error(format!("`{key}`: the quote is never closed")),
        }
    } else {
        match rest.find('#') {
            Some(i) => (rest[..i].trim(), rest[i..].trim()),
            None => (rest, ""),
        }
    };
    if !trailing.is_empty() && !trailing.starts_with('#') {
        return LineResult::Error(format!("`{key}`: unexpected `{trailing}` after the value"));
    }
    let mut e = entry(key, value, Format::Loader);
    e.quoted |= rest.starts_with('"');
    if value.trim().is_empty() {
        return LineResult::Error(format!("`{key}` has an empty value"));
    }
    e.inline_comment = (!trailing.is_empty()).then(|| trailing.to_string());
    LineResult::Entry(e)
}

fn parse_reg_line(line: &str, section_ok: &mut bool) -> LineResult {
    if line.starts_with("Windows Registry Editor") || line.starts_with("REGEDIT") {
        return LineResult::Skip;
    }
    if let Some(section) = line.strip_prefix('[') {
        let lower = section.to_ascii_lowercase();
        *section_ok = lower.contains("services\\tcpip") || lower.contains("services\\tcpip6");
        return LineResult::Skip;
    }
    if !*section_ok {
        return LineResult::Skip;
    }
    let Some(rest) = line.strip_prefix('"') else {
        return LineResult::Error("expected `\"Name\"=value`".into());
    };
    let Some((name, value)) = rest.split_once("\"=") else {
        return LineResult::Error("expected `\"Name\"=value`".into());
    };
    let value = value.trim();
    let decoded = if let Some(hex) = value.strip_prefix("dword:") {
        match u32::from_str_radix(hex.trim(), 16) {
            Ok(v) => v.to_string(),
            Err(_) => return LineResult::Error(format!("`{name}`: `{hex}` is not a hex dword")),
        }
    } else if let Some(s) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        s.to_string()
    } else {
        return LineResult::Error(format!("`{name}`: unsupported registry value `{value}`"));
    };
    LineResult::Entry(entry(name, &decoded, Format::Reg))
}

/// Guesses the OS of a set of entries: a `.reg` file is Windows, loader.conf is FreeBSD; otherwise
/// the OS whose catalogue and inventory know most of the keys wins (ties go to FreeBSD over
/// OpenBSD).
pub fn detect_os(entries: &[Entry], format: Format) -> Option<Os> {
    match format {
        Format::Reg => return Some(Os::Windows),
        Format::Loader => return Some(Os::Freebsd),
        Format::Tuned => return Some(Os::Linux),
        _ => {}
    }
    let linux_prefix = [
        "net.ipv4.",
        "net.ipv6.",
        "net.core.",
        "net.netfilter.",
        "vm.",
        "fs.",
        "kernel.",
    ];
    let mut scores = [0usize; 4];
    for e in entries {
        if linux_prefix.iter().any(|p| e.key.starts_with(p)) {
            scores[0] += 2;
        }
        for (i, os) in Os::ALL.iter().enumerate() {
            if catalogue(*os).is_ok_and(|c| c.get(&e.key).is_some())
                || inventory(*os).is_ok_and(|inv| inv.is_some_and(|inv| inv.find(&e.key).is_some()))
            {
                scores[i] += 1;
            }
        }
    }
    let (best, score) = scores
        .iter()
        .enumerate()
        .max_by_key(|(i, s)| (**s, usize::MAX - i))?;
    (*score > 0).then_some(Os::ALL[best])
}

#[cfg(test)]
mod tests;
