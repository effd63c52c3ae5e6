//! The one typeface of every chart and report: DejaVu Sans, vendored in `assets/fonts/` and
//! embedded in the binary, so output never depends on the fonts a machine has installed.
//!
//! Three consumers, one font:
//! - plotters measures chart text with it (its `ab_glyph` backend), so label boxes fit;
//! - usvg lays chart text out with it (PNG through resvg, PDF through krilla-svg);
//! - the PDF layout measures its own text with [`text_width`] to wrap lines and size tables,
//!   because krilla draws text but does not measure or break it.
//!
//! Licence: Bitstream Vera / Arev terms, DejaVu changes in the public domain
//! (`assets/fonts/LICENSE-DejaVu`).

use std::sync::{Arc, OnceLock};

use ab_glyph::{Font as _, FontRef};
use usvg::fontdb;

/// DejaVu Sans 2.37, regular.
pub const SANS: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
/// DejaVu Sans 2.37, bold.
pub const SANS_BOLD: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans-Bold.ttf");
/// The family name inside both files.
pub const FAMILY: &str = "DejaVu Sans";
/// What chart SVGs ask for: the vendored face first, then whatever sans-serif a viewer has.
/// DejaVu is wide, so text laid out for it never overflows in a narrower fallback.
pub const SVG_FONT_FAMILY: &str = "DejaVu Sans, Verdana, sans-serif";

/// Register the vendored font with plotters under the family name plotters writes into SVG
/// (`sans-serif`). Without it plotters cannot measure text, and legend and label boxes come
/// out wrong. Idempotent and thread-safe.
pub fn register_for_plotters() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        use plotters::style::{FontStyle, register_font};
        // The vendored bytes are a valid TrueType font: failing here is a build defect.
        register_font("sans-serif", FontStyle::Normal, SANS)
            .unwrap_or_else(|_| panic!("the vendored DejaVu Sans does not parse"));
        register_font("sans-serif", FontStyle::Bold, SANS_BOLD)
            .unwrap_or_else(|_| panic!("the vendored DejaVu Sans Bold does not parse"));
    });
}

/// A font database holding only the vendored faces, with every generic family mapped to them.
///
/// usvg maps the generic `sans-serif` to "Arial" by default; a database that holds only DejaVu
/// would then find no face, and chart text would silently vanish from the PNG and the PDF.
/// System fonts are never loaded, so the output is the same on every machine.
pub fn fontdb() -> Arc<fontdb::Database> {
    static DB: OnceLock<Arc<fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = fontdb::Database::new();
        db.load_font_data(SANS.to_vec());
        db.load_font_data(SANS_BOLD.to_vec());
        db.set_sans_serif_family(FAMILY);
        db.set_serif_family(FAMILY);
        db.set_monospace_family(FAMILY);
        db.set_cursive_family(FAMILY);
        db.set_fantasy_family(FAMILY);
        Arc::new(db)
    })
    .clone()
}

fn faces() -> &'static (FontRef<'static>, FontRef<'static>) {
    static FACES: OnceLock<(FontRef<'static>, FontRef<'static>)> = OnceLock::new();
    FACES.get_or_init(|| {
        let parse = |bytes: &'static [u8], what: &str| {
            FontRef::try_from_slice(bytes)
                .unwrap_or_else(|_| panic!("the vendored {what} does not parse"))
        };
        (
            parse(SANS, "DejaVu Sans"),
            parse(SANS_BOLD, "DejaVu Sans Bold"),
        )
    })
}

/// Width of `text` set in DejaVu Sans at `size` (em size, in the caller's unit: points in the
/// PDF, user units in an SVG), including pair kerning.
pub fn text_width(text: &str, size: f32, bold: bool) -> f32 {
    let (regular, heavy) = faces();
    let font = if bold { heavy } else { regular };
    let upem = font.units_per_em().unwrap_or(2048.0);
    let mut width = 0.0;
    let mut prev = None;
    for c in text.chars() {
        let id = font.glyph_id(c);
        width += font.h_advance_unscaled(id);
        if let Some(p) = prev {
            width += font.kern_unscaled(p, id);
        }
        prev = Some(id);
    }
    width / upem * size
}

/// Break `text` into lines no wider than `width` at `size`, at spaces where possible; a word
/// wider than a line is cut between characters. Explicit newlines are kept. Never returns an
/// empty list, so a caller always has a line to draw.
pub fn wrap(text: &str, width: f32, size: f32, bold: bool) -> Vec<String> {
    let mut lines = Vec::new();
    for paragraph in text.split('\n') {
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            let candidate = if line.is_empty() {
                word.to_string()
            } else {
                format!("{line} {word}")
            };
            if text_width(&candidate, size, bold) <= width {
                line = candidate;
                continue;
            }
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            // The word alone: cut it if it does not fit a line by itself.
            for c in word.chars() {
                line.push(c);
                if text_width(&line, size, bold) > width && line.chars().count() > 1 {
                    line.pop();
                    lines.push(std::mem::take(&mut line));
                    line.push(c);
                }
            }
        }
        lines.push(line);
    }
    lines
}

/// `text` cut to fit `width` at `size`, ending in "…" when cut.
pub fn ellipsize(text: &str, width: f32, size: f32, bold: bool) -> String {
    if text_width(text, size, bold) <= width {
        return text.to_string();
    }
    let mut out: String = text.to_string();
    while !out.is_empty() {
        out.pop();
        let candidate = format!("{}…", out.trim_end());
        if text_width(&candidate, size, bold) <= width {
            return candidate;
        }
    }
    "…".into()
}

/// Distance from the baseline to the top of the tallest glyphs, as a fraction of the em size.
pub fn ascent(bold: bool) -> f32 {
    let (regular, heavy) = faces();
    let font = if bold { heavy } else { regular };
    font.ascent_unscaled() / font.units_per_em().unwrap_or(2048.0)
}

/// Whether the vendored font has a glyph for `c` (anything else prints as a box).
pub fn has_glyph(c: char) -> bool {
    faces().0.glyph_id(c).0 != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_text_proportionally() {
        let w = text_width("Five-year cost", 10.0, false);
        assert!(w > 50.0 && w < 90.0, "{w}");
        assert!((text_width("Five-year cost", 20.0, false) - 2.0 * w).abs() < 1e-3);
        assert!(text_width("Five-year cost", 10.0, true) > w);
        assert_eq!(text_width("", 10.0, false), 0.0);
    }

    #[test]
    fn wraps_at_spaces_and_cuts_long_words() {
        let lines = wrap(
            "the quick brown fox jumps over the lazy dog",
            60.0,
            10.0,
            false,
        );
        assert!(lines.len() > 2, "{lines:?}");
        assert!(lines.iter().all(|l| text_width(l, 10.0, false) <= 60.0));
        assert_eq!(
            lines.join(" "),
            "the quick brown fox jumps over the lazy dog"
        );
        let cut = wrap(
            "https://example.com/a/very/long/path/without/spaces",
            50.0,
            10.0,
            false,
        );
        assert!(cut.len() > 2 && cut.iter().all(|l| text_width(l, 10.0, false) <= 50.0));
        assert_eq!(
            cut.concat(),
            "https://example.com/a/very/long/path/without/spaces"
        );
        assert_eq!(wrap("", 50.0, 10.0, false), vec![String::new()]);
        assert_eq!(wrap("a\nb", 50.0, 10.0, false), vec!["a", "b"]);
        assert_eq!(ellipsize("short", 100.0, 10.0, false), "short");
        let e = ellipsize("a rather long label for a small box", 60.0, 10.0, false);
        assert!(
            e.ends_with('…') && text_width(&e, 10.0, false) <= 60.0,
            "{e}"
        );
    }

    #[test]
    fn the_database_resolves_generic_sans_serif_to_the_vendored_face() {
        let db = fontdb();
        assert_eq!(db.len(), 2);
        let id = db
            .query(&fontdb::Query {
                families: &[fontdb::Family::SansSerif],
                ..fontdb::Query::default()
            })
            .expect("sans-serif resolves");
        assert_eq!(db.face(id).unwrap().families[0].0, FAMILY);
    }

    #[test]
    fn covers_the_symbols_the_reports_use() {
        for c in "≤≥×–—…§€$¢%µ·→≈".chars() {
            assert!(has_glyph(c), "{c}");
        }
    }
}
