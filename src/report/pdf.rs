//! `report.pdf`: the run as a document a finance reviewer can act on — title page with the
//! recommendation, executive summary, every assumption with its source, the charts as vector
//! figures with captions, and the method and its caveats — with page numbers, a contents list
//! and bookmarks.
//!
//! The pages are laid out by [`layout`] (krilla has no line breaking, tables or pagination),
//! filled by [`content`], and drawn here with krilla. Charts are the same parsed SVG trees the
//! PNGs come from, drawn as vectors by krilla-svg with their text kept as text. The vendored
//! DejaVu Sans is embedded (subset), so the file looks the same everywhere and needs no fonts
//! on the machine that makes it.
//!
//! Reproducible: with `SOURCE_DATE_EPOCH` set, the creation date and the title page's date come
//! from it and the same inputs give byte-identical files.

pub mod cashflow;
pub mod content;
pub mod layout;
pub mod uncertainty;

use std::collections::HashMap;
use std::num::NonZeroU16;

use krilla::Document;
use krilla::color::rgb;
use krilla::geom::{PathBuilder, Point, Rect, Size, Transform};
use krilla::metadata::{DateTime, Metadata};
use krilla::num::NormalizedF32;
use krilla::outline::{Outline, OutlineNode};
use krilla::page::PageSettings;
use krilla::paint::{Fill, FillRule, Stroke};
use krilla::surface::Surface;
use krilla::tagging::{
    Artifact, ArtifactType, ContentTag, Identifier, ListNumbering, SpanTag, TableHeaderScope, Tag,
    TagGroup, TagTree,
};
use krilla::text::{Font, TextDirection};
use krilla_svg::{SurfaceExt, SvgSettings};

pub use self::layout::Paper;
use self::layout::{Block, BlockKind, Layout, Mark, Op, Rgb};
use crate::report::charts::ChartSet;
use crate::report::fonts;
use crate::results::RunResults;
use crate::units::{CivilDate, DAY_SECONDS, HOUR_SECONDS, MINUTE_SECONDS};

/// Why the PDF could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PdfError {
    #[error(
        "SOURCE_DATE_EPOCH = {value:?} is not a number of seconds since 1970-01-01 (valid: a whole number ≥ 0)"
    )]
    SourceDateEpoch { value: String },
    #[error("writing the PDF: {0}")]
    Krilla(String),
    #[error("the vendored font cannot be loaded into the PDF")]
    Font,
}

/// The date the report carries: from `SOURCE_DATE_EPOCH` when set (reproducible builds),
/// otherwise the current UTC time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportDate {
    pub year: u16,
    pub month: u8,
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
}

impl ReportDate {
    /// `SOURCE_DATE_EPOCH` if set, else now.
    pub fn from_env() -> Result<ReportDate, PdfError> {
        match std::env::var("SOURCE_DATE_EPOCH") {
            Ok(v) => v
                .trim()
                .parse::<u64>()
                .map(ReportDate::from_unix)
                .map_err(|_| PdfError::SourceDateEpoch { value: v }),
            Err(_) => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                Ok(ReportDate::from_unix(now))
            }
        }
    }

    /// The UTC calendar date and time of `secs` seconds after 1970-01-01T00:00:00Z.
    pub fn from_unix(secs: u64) -> ReportDate {
        let date = CivilDate::from_unix(secs);
        let rem = secs % DAY_SECONDS;
        ReportDate {
            year: date.year.clamp(0, 9999) as u16,
            month: date.month as u8,
            day: date.day as u8,
            hour: (rem / HOUR_SECONDS) as u8,
            minute: (rem % HOUR_SECONDS / MINUTE_SECONDS) as u8,
            second: (rem % MINUTE_SECONDS) as u8,
        }
    }

    /// "2026-11-29".
    pub fn iso(&self) -> String {
        CivilDate {
            year: self.year.into(),
            month: self.month.into(),
            day: self.day.into(),
        }
        .to_string()
    }

    fn to_pdf(self) -> DateTime {
        DateTime::new(self.year)
            .month(self.month)
            .day(self.day)
            .hour(self.hour)
            .minute(self.minute)
            .second(self.second)
            .utc_offset_hour(0)
            .utc_offset_minute(0)
    }
}

/// The whole report as PDF bytes, on A4.
pub fn render(
    results: &RunResults,
    charts: &ChartSet,
    date: &ReportDate,
) -> Result<Vec<u8>, PdfError> {
    render_on(results, charts, date, Paper::A4)
}

/// The whole report as PDF bytes, on `paper`.
pub fn render_on(
    results: &RunResults,
    charts: &ChartSet,
    date: &ReportDate,
    paper: Paper,
) -> Result<Vec<u8>, PdfError> {
    let layout = content::lay_out_on(results, charts, date, paper);
    draw(results, charts, date, &layout, paper)
}

fn rgb_of(c: Rgb) -> rgb::Color {
    rgb::Color::new(c.0, c.1, c.2)
}

fn fill(c: Rgb) -> Fill {
    Fill {
        paint: rgb_of(c).into(),
        opacity: NormalizedF32::ONE,
        rule: FillRule::NonZero,
    }
}

struct Faces {
    regular: Font,
    bold: Font,
}

fn draw_op(s: &mut Surface<'_>, op: &Op, faces: &Faces, charts: &ChartSet) {
    match op {
        Op::Text {
            x,
            y,
            size,
            bold,
            color,
            text,
        } => {
            s.set_stroke(None);
            s.set_fill(Some(fill(*color)));
            let font = if *bold { &faces.bold } else { &faces.regular };
            s.draw_text(
                Point::from_xy(*x, *y),
                font.clone(),
                *size,
                text,
                false,
                TextDirection::Auto,
            );
        }
        Op::Rect {
            x,
            y,
            w,
            h,
            fill: f,
        } => {
            let mut pb = PathBuilder::new();
            if let Some(r) = Rect::from_xywh(*x, *y, *w, *h) {
                pb.push_rect(r);
            }
            if let Some(path) = pb.finish() {
                s.set_stroke(None);
                s.set_fill(Some(fill(*f)));
                s.draw_path(&path);
            }
        }
        Op::Line {
            x1,
            y1,
            x2,
            y2,
            width,
            color,
        } => {
            let mut pb = PathBuilder::new();
            pb.move_to(*x1, *y1);
            pb.line_to(*x2, *y2);
            if let Some(path) = pb.finish() {
                s.set_fill(None);
                s.set_stroke(Some(Stroke {
                    paint: rgb_of(*color).into(),
                    width: *width,
                    ..Stroke::default()
                }));
                s.draw_path(&path);
                s.set_stroke(None);
            }
        }
        Op::Chart { index, x, y, w, h } => {
            if let (Some(c), Some(size)) = (charts.charts.get(*index), Size::from_wh(*w, *h)) {
                s.push_transform(&Transform::from_translate(*x, *y));
                s.draw_svg(&c.tree, size, SvgSettings::default());
                s.pop();
            }
        }
    }
}

fn draw(
    results: &RunResults,
    charts: &ChartSet,
    date: &ReportDate,
    layout: &Layout,
    paper: Paper,
) -> Result<Vec<u8>, PdfError> {
    let faces = Faces {
        regular: Font::new(fonts::SANS.into(), 0).ok_or(PdfError::Font)?,
        bold: Font::new(fonts::SANS_BOLD.into(), 0).ok_or(PdfError::Font)?,
    };
    let mut doc = Document::new();
    let n = layout.pages.len();
    let (w, h) = paper.size();
    let settings =
        PageSettings::from_wh(w, h).ok_or_else(|| PdfError::Krilla("invalid page size".into()))?;
    // The marked-content pieces of each leaf of the structure, over all pages.
    let mut pieces: HashMap<usize, Vec<Identifier>> = HashMap::new();
    for (i, page) in layout.pages.iter().enumerate() {
        let mut p = doc.start_page_with(settings.clone());
        let mut s = p.surface();
        // The A4 column, centred on wider paper.
        s.push_transform(&Transform::from_translate(paper.offset_x(), 0.0));
        for (k, op) in page.ops.iter().enumerate() {
            let tag = match (page.marks.get(k), op) {
                (Some(Mark::Leaf(_)), Op::Chart { .. }) => ContentTag::Other,
                (Some(Mark::Leaf(_)), _) => ContentTag::Span(SpanTag::empty()),
                _ => ContentTag::Artifact(Artifact::new(ArtifactType::Layout, None)),
            };
            let id = s.start_tagged(tag);
            draw_op(&mut s, op, &faces, charts);
            s.end_tagged();
            if let Some(Mark::Leaf(n)) = page.marks.get(k) {
                pieces.entry(*n).or_default().push(id);
            }
        }
        for op in content::footer(results, i, n, h) {
            s.start_tagged(ContentTag::Artifact(Artifact::new(
                ArtifactType::PaginationOther,
                None,
            )));
            draw_op(&mut s, &op, &faces, charts);
            s.end_tagged();
        }
        s.pop();
        s.finish();
        p.finish();
    }
    doc.set_tag_tree(tag_tree(&layout.blocks, &mut pieces));
    let mut outline = Outline::new();
    let mut parent: Option<OutlineNode> = None;
    for sec in &layout.sections {
        let node = OutlineNode::new(
            sec.title.clone(),
            krilla::destination::XyzDestination::new(sec.page, Point::from_xy(0.0, sec.y)),
        );
        if sec.level <= 1 {
            if let Some(p) = parent.take() {
                outline.push_child(p);
            }
            parent = Some(node);
        } else if let Some(p) = parent.as_mut() {
            p.push_child(node);
        } else {
            outline.push_child(node);
        }
    }
    if let Some(p) = parent {
        outline.push_child(p);
    }
    doc.set_outline(outline);
    doc.set_metadata(
        Metadata::new()
            .title(format!("tco-sim report: {}", results.scenario.name))
            .description(
                results
                    .recommendation
                    .as_ref()
                    .map_or("No option meets the SLO in every year.".into(), |r| {
                        r.sentence.clone()
                    }),
            )
            .authors(vec![format!("tco-sim {}", results.tool_version)])
            .creator(format!("tco-sim {}", results.tool_version))
            .producer(format!("tco-sim {} (krilla)", results.tool_version))
            .language("en".into())
            .creation_date(date.to_pdf()),
    );
    doc.finish().map_err(|e| PdfError::Krilla(format!("{e:?}")))
}

/// The structure tree of the tagged PDF: the layout's blocks in reading order — headings,
/// paragraphs, lists, tables (header and body rows), figures with their titles as alternative
/// text and their captions.
fn tag_tree(blocks: &[Block], pieces: &mut HashMap<usize, Vec<Identifier>>) -> TagTree {
    fn fill(
        pieces: &mut HashMap<usize, Vec<Identifier>>,
        leaf: Option<&usize>,
        mut g: TagGroup,
    ) -> TagGroup {
        for id in leaf.and_then(|n| pieces.remove(n)).unwrap_or_default() {
            g.push(id);
        }
        g
    }
    let mut take = |leaf: Option<&usize>, g: TagGroup| fill(pieces, leaf, g);
    let mut tree = TagTree::new();
    let mut list: Option<TagGroup> = None;
    for b in blocks {
        if !matches!(b.kind, BlockKind::ListItem)
            && let Some(l) = list.take()
        {
            tree.push(l);
        }
        let leaf = |k: usize| b.leaves.get(k);
        let node = match &b.kind {
            BlockKind::Heading { level, title } => take(
                leaf(0),
                TagGroup::new(Tag::Hn(
                    NonZeroU16::new(u16::from(*level).max(1)).unwrap_or(NonZeroU16::MIN),
                    Some(title.clone()),
                )),
            ),
            BlockKind::Paragraph => take(leaf(0), TagGroup::new(Tag::P)),
            BlockKind::Caption => take(leaf(0), TagGroup::new(Tag::Caption)),
            BlockKind::Figure { alt } => {
                take(leaf(0), TagGroup::new(Tag::Figure(Some(alt.clone()))))
            }
            BlockKind::ListItem => {
                let mut li = TagGroup::new(Tag::LI);
                li.push(take(leaf(0), TagGroup::new(Tag::Lbl)));
                li.push(take(leaf(1), TagGroup::new(Tag::LBody)));
                list.get_or_insert_with(|| TagGroup::new(Tag::L(ListNumbering::Disc)))
                    .push(li);
                continue;
            }
            BlockKind::Table { rows } => {
                let mut table = TagGroup::new(Tag::Table);
                let mut head = TagGroup::new(Tag::THead);
                let mut body = TagGroup::new(Tag::TBody);
                for (header, cells) in rows {
                    let mut tr = TagGroup::new(Tag::TR);
                    for c in cells {
                        let cell = if *header {
                            TagGroup::new(Tag::TH(TableHeaderScope::Column))
                        } else {
                            TagGroup::new(Tag::TD)
                        };
                        tr.push(take(Some(c), cell));
                    }
                    if *header {
                        head.push(tr);
                    } else {
                        body.push(tr);
                    }
                }
                table.push(head);
                table.push(body);
                table
            }
        };
        tree.push(node);
    }
    if let Some(l) = list {
        tree.push(l);
    }
    // Every marked piece has exactly one parent (krilla refuses a file otherwise): a leaf no
    // block claimed (none is made that way) goes in a paragraph of its own at the end.
    let mut rest: Vec<usize> = pieces.keys().copied().collect();
    rest.sort_unstable();
    for n in rest {
        tree.push(fill(pieces, Some(&n), TagGroup::new(Tag::P)));
    }
    tree
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_seconds_become_calendar_dates() {
        assert_eq!(ReportDate::from_unix(0).iso(), "1970-01-01");
        // 2026-11-29T12:34:56Z
        let d = ReportDate::from_unix(1_795_955_696);
        assert_eq!(d.iso(), "2026-11-29");
        assert_eq!((d.hour, d.minute, d.second), (12, 34, 56));
        assert_eq!(ReportDate::from_unix(951_782_400).iso(), "2000-02-29");
        assert_eq!(ReportDate::from_unix(946_684_799).iso(), "1999-12-31");
    }
}
