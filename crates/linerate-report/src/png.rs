//! SVG → PNG, through resvg, with the system's fonts (Debian: fonts-dejavu-core).

use std::sync::Arc;

use resvg::{tiny_skia, usvg};

use crate::ReportError;

/// Rasterises an SVG document at its own size (times `scale`).
pub fn svg_to_png(svg: &str, scale: f32) -> Result<Vec<u8>, ReportError> {
    let mut fonts = usvg::fontdb::Database::new();
    fonts.load_system_fonts();
    // plotters writes font-family="sans-serif"; point that generic name at a font we have.
    let family = ["DejaVu Sans", "Liberation Sans", "Noto Sans", "FreeSans"]
        .into_iter()
        .find(|want| {
            fonts
                .faces()
                .any(|f| f.families.iter().any(|(name, _)| name == want))
        })
        .map(str::to_owned)
        .or_else(|| {
            fonts
                .faces()
                .next()
                .and_then(|f| f.families.first().map(|(n, _)| n.clone()))
        });
    let Some(family) = family else {
        return Err(ReportError::NoFonts);
    };
    fonts.set_sans_serif_family(family);
    let options = usvg::Options {
        fontdb: Arc::new(fonts),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &options).map_err(|e| ReportError::Png(e.to_string()))?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(scale)
        .ok_or_else(|| ReportError::Png(format!("cannot scale the chart by {scale}")))?;
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| ReportError::Png("the chart has no area".into()))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| ReportError::Png(e.to_string()))
}
