//! Flame graphs: drawn from folded stacks by the inferno crate (one profile's, and the
//! differential one of two), and embedded in the report.
//!
//! The input is the folded format (`root;…;leaf COUNT` per line) that `linerate-profile`
//! writes. In the differential graph the second profile's stacks are drawn, red where their
//! share grew against the first, blue where it shrank; the first is scaled to the second's
//! sample count so runs of different lengths compare.
//!
//! In the report each graph is placed in a sandboxed `<iframe srcdoc>` so its styles and
//! element ids stay its own; its script (zoom and the search box, which work when the SVG file
//! is opened alone) is removed, as the report runs no scripts: the frames' names remain text,
//! found by the browser's find-in-page, and each frame's full name and sample count show on
//! hover from its `<title>`.

mod inert;

pub use inert::inert;

use crate::ReportError;

/// A flame graph for the report.
#[derive(Debug, Clone, Default)]
pub struct FlameGraph {
    /// Heading above it.
    pub title: String,
    /// The SVG document, as inferno drew it.
    pub svg: String,
}

/// Whether folded stacks hold a sample: a line whose count is above zero.
fn has_samples(folded: &str) -> bool {
    folded.lines().any(|line| {
        line.rsplit_once(' ')
            .and_then(|(_, n)| n.trim().parse::<u64>().ok())
            .is_some_and(|n| n > 0)
    })
}

/// A flame graph SVG (self-contained, searchable) of `folded` (the folded format).
pub fn draw(folded: &str, title: &str) -> Result<Vec<u8>, ReportError> {
    if !has_samples(folded) {
        return Err(ReportError::NoData(
            "no samples: no flame graph to draw".to_owned(),
        ));
    }
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title.to_owned();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opts, folded.lines(), &mut svg)
        .map_err(|e| ReportError::Chart(format!("the flame graph: {e}")))?;
    Ok(svg)
}

/// A differential flame graph of `after` against `before` (both in the folded format): red
/// frames grew, blue shrank.
pub fn draw_diff(before: &str, after: &str, title: &str) -> Result<Vec<u8>, ReportError> {
    if !has_samples(before) || !has_samples(after) {
        return Err(ReportError::NoData(
            "no samples on one side: no differential flame graph to draw".to_owned(),
        ));
    }
    let mut diff = Vec::new();
    let opts = inferno::differential::Options {
        normalize: true,
        strip_hex: false,
    };
    inferno::differential::from_readers(opts, before.as_bytes(), after.as_bytes(), &mut diff)
        .map_err(|e| ReportError::Chart(format!("folding the differential profile: {e}")))?;
    let text = String::from_utf8_lossy(&diff);
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title.to_owned();
    opts.subtitle = Some("red: share grew, blue: share shrank (against the baseline)".to_owned());
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opts, text.lines(), &mut svg)
        .map_err(|e| ReportError::Chart(format!("the differential flame graph: {e}")))?;
    Ok(svg)
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

    #[test]
    fn one_profile_is_drawn_with_its_frames() {
        let svg = String::from_utf8(draw("prog;main;leaf 3\nprog;main 1\n", "t").expect("drawn"))
            .expect("utf8");
        assert!(
            svg.starts_with("<?xml") && svg.trim_end().ends_with("</svg>"),
            "{svg}"
        );
        assert!(
            svg.contains("<title>leaf (3 samples, 75.00%)</title>"),
            "{svg}"
        );
        for empty in ["", "\n", "prog;main 0\n"] {
            assert_eq!(
                draw(empty, "t").expect_err("nothing to draw").to_string(),
                "no samples: no flame graph to draw"
            );
        }
    }

    #[test]
    fn differential_graph_colours_growth_and_shrinkage() {
        let before = "main;a 90\nmain;b 10\n";
        let after = "main;a 10\nmain;b 90\n";
        let svg = String::from_utf8(draw_diff(before, after, "t").expect("drawn")).expect("utf8");
        assert!(svg.contains("<svg") && svg.contains("main"), "{svg}");
        // inferno colours a grown frame red (rgb(255,…)) and a shrunk one blue (…,255)).
        assert!(svg.contains("rgb(255,"), "no red frame");
        assert!(svg.contains(",255)"), "no blue frame");
        assert!(draw_diff("", after, "t").is_err());
    }
}
