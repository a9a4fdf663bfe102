//! Flame graphs (inferno's SVG) embedded in the report. Each is placed in a sandboxed
//! `<iframe srcdoc>` so its styles and element ids stay its own; its script (zoom and the
//! search box, which work when the SVG file is opened alone) is removed, as the report runs no
//! scripts: the frames' names remain text, found by the browser's find-in-page, and each
//! frame's full name and sample count show on hover from its `<title>`.

/// A flame graph for the report.
#[derive(Debug, Clone, Default)]
pub struct FlameGraph {
    /// Heading above it.
    pub title: String,
    /// The SVG document, as inferno drew it.
    pub svg: String,
}

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

/// The height the SVG asks for (its root element's `height`), for the frame around it.
fn height(svg: &str) -> Option<u32> {
    let root = &svg[svg.find("<svg")?..];
    let root = &root[..root.find('>')?];
    let h = &root[root.find(" height=\"")? + 9..];
    h[..h.find('"')?].parse().ok()
}

/// The HTML of one embedded flame graph; `esc` escapes attribute text.
pub fn embed(g: &FlameGraph, esc: fn(&str) -> String) -> String {
    let svg = inert(&g.svg);
    let h = height(&svg).unwrap_or(400).clamp(100, 4000) + 16;
    format!(
        "<h3>{}</h3>\n<iframe class=\"flame\" sandbox title=\"{}\" style=\"height:{h}px\" srcdoc=\"{}\"></iframe>\n",
        esc(&g.title),
        esc(&g.title),
        esc(&svg)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const SVG: &str = "<?xml version=\"1.0\" standalone=\"no\"?><!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"x.dtd\"><svg version=\"1.1\" width=\"1200\" height=\"262\" onload=\"init(evt)\" viewBox=\"0 0 1200 262\" xmlns=\"http://www.w3.org/2000/svg\"><script type=\"text/ecmascript\"><![CDATA[ var a = '<svg>'; ]]></script><g id=\"frames\"><g onclick=\"zoom(this)\"><title>main (10 samples)</title><text>main</text></g></g><text id=\"online\">x</text></svg>";

    #[test]
    fn scripts_handlers_and_prologue_are_removed_and_the_rest_kept() {
        let s = inert(SVG);
        assert!(s.starts_with("<svg version=\"1.1\""), "{s}");
        assert!(
            !s.contains("script") && !s.contains("onload") && !s.contains("onclick"),
            "{s}"
        );
        assert!(!s.contains("<?xml") && !s.contains("DOCTYPE"), "{s}");
        assert!(
            s.contains("<title>main (10 samples)</title><text>main</text>"),
            "{s}"
        );
        // `id="online"` is an attribute value, not a handler.
        assert!(s.contains("<text id=\"online\">x</text>"), "{s}");
        assert_eq!(height(&s), Some(262));
        assert!(s.contains(" width=\"100%\" data-width=\"1200\""), "{s}");
    }

    #[test]
    fn embedded_in_a_sandboxed_frame() {
        let html = embed(
            &FlameGraph {
                title: "a <b>".into(),
                svg: SVG.into(),
            },
            |t| {
                t.replace('&', "&amp;")
                    .replace('"', "&quot;")
                    .replace('<', "&lt;")
            },
        );
        assert!(html.contains("<iframe class=\"flame\" sandbox"), "{html}");
        assert!(html.contains("style=\"height:278px\""), "{html}");
        assert!(
            html.contains("srcdoc=\"&lt;svg version=&quot;1.1&quot;"),
            "{html}"
        );
        assert!(!html.contains("<script"), "{html}");
    }
}
