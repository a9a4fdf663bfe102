//! Flame graphs drawn by the inferno crate: one profile's, and the differential one of two
//! (the second's stacks, red where their share grew against the first, blue where it shrank;
//! the first is scaled to the second's sample count so runs of different lengths compare).

use anyhow::Context as _;

use super::fold::Folded;

/// A flame graph SVG (self-contained, searchable) of `folded`.
pub fn draw(folded: &Folded, title: &str) -> anyhow::Result<Vec<u8>> {
    anyhow::ensure!(folded.samples() > 0, "no samples: no flame graph to draw");
    let lines = folded.lines();
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title.to_owned();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), &mut svg)
        .context("drawing the flame graph")?;
    Ok(svg)
}

/// A differential flame graph of `after` against `before`: red frames grew, blue shrank.
pub fn draw_diff(before: &Folded, after: &Folded, title: &str) -> anyhow::Result<Vec<u8>> {
    anyhow::ensure!(
        before.samples() > 0 && after.samples() > 0,
        "no samples on one side: no differential flame graph to draw"
    );
    let mut diff = Vec::new();
    let opts = inferno::differential::Options {
        normalize: true,
        strip_hex: false,
    };
    inferno::differential::from_readers(
        opts,
        before.text().as_bytes(),
        after.text().as_bytes(),
        &mut diff,
    )
    .context("folding the differential profile")?;
    let text = String::from_utf8_lossy(&diff);
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title.to_owned();
    opts.subtitle = Some("red: share grew, blue: share shrank (against the baseline)".to_owned());
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opts, text.lines(), &mut svg)
        .context("drawing the differential flame graph")?;
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differential_graph_colours_growth_and_shrinkage() {
        let before = Folded::parse("main;a 90\nmain;b 10\n").expect("valid");
        let after = Folded::parse("main;a 10\nmain;b 90\n").expect("valid");
        let svg = String::from_utf8(draw_diff(&before, &after, "t").expect("drawn")).expect("utf8");
        assert!(svg.contains("<svg") && svg.contains("main"), "{svg}");
        // inferno colours a grown frame red (rgb(255,…)) and a shrunk one blue (…,255)).
        assert!(svg.contains("rgb(255,"), "no red frame");
        assert!(svg.contains(",255)"), "no blue frame");
        assert!(draw_diff(&Folded::default(), &after, "t").is_err());
    }
}
