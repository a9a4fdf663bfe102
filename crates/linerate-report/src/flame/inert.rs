//! A flame graph made inert for the report: inferno's SVG without its XML prologue, doctype,
//! scripts and event handlers (the report runs no scripts), and as wide as its frame.

/// Removes every `open…close` span (both included) from `text`.
fn strip_spans(text: &str, open: &str, close: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(open) {
        out.push_str(&rest[..i]);
        match rest[i..].find(close) {
            Some(j) => rest = &rest[i + j + close.len()..],
            None => {
                rest = "";
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Removes event-handler attributes (` onload="…"`, ` onclick="…"`, …).
fn strip_handlers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(" on") {
        let after = &rest[i + 3..];
        let name_len = after.bytes().take_while(u8::is_ascii_lowercase).count();
        let is_handler = name_len > 0 && after[name_len..].starts_with("=\"");
        if !is_handler {
            out.push_str(&rest[..i + 3]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..i]);
        let value = &after[name_len + 2..];
        rest = value.find('"').map_or("", |end| &value[end + 1..]);
    }
    out.push_str(rest);
    out
}

/// The SVG without its XML prologue, doctype, scripts and event handlers, and as wide as
/// its frame (its `viewBox` keeps the proportions).
pub fn inert(svg: &str) -> String {
    let s = strip_spans(svg, "<?xml", "?>");
    let s = strip_spans(&s, "<!DOCTYPE", ">");
    let s = strip_spans(&s, "<script", "</script>");
    let s = strip_handlers(&s);
    match s.find("<svg ").map(|i| (i, &s[i..])) {
        Some((i, root)) if root.contains(" viewBox=\"") => {
            let end = i + root.find('>').unwrap_or(0);
            let head = s[i..end].replacen(" width=\"", " width=\"100%\" data-width=\"", 1);
            format!("{}{head}{}", &s[..i], &s[end..])
        }
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_and_handlers_go_and_the_rest_stays() {
        assert_eq!(strip_spans("a<x>b</x>c<x>d", "<x>", "</x>"), "ac");
        assert_eq!(
            strip_handlers("<g onclick=\"zoom(this)\" id=\"online\" on=\"x\">"),
            "<g id=\"online\" on=\"x\">"
        );
    }
}
