//! A small page-layout engine for the report, because krilla draws glyphs and paths but does
//! not wrap lines, build tables or break pages.
//!
//! Content is laid out top to bottom into pages of drawing operations ([`Op`]), in points with
//! the origin at the top left of an A4 page. Text is measured with the same font the PDF embeds
//! ([`fonts::text_width`]), so a line that fits here fits on paper. Tables repeat their header
//! on every page they run onto; a row never splits across pages. Page numbers ("page 3 of 9")
//! and the contents are filled in once the page count is known.

use crate::report::fonts;

/// A4 portrait \[pt\]: the page the layout is made for. On other paper the same column is
/// centred across the width and the page breaks follow the paper's height.
pub const PAGE_W: f32 = 595.28;
pub const PAGE_H: f32 = 841.89;

/// The paper the PDF is printed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Paper {
    /// ISO A4, 210 × 297 mm.
    #[default]
    A4,
    /// US Letter, 8.5 × 11 in.
    Letter,
}

impl Paper {
    /// Width and height \[pt\].
    pub fn size(self) -> (f32, f32) {
        match self {
            Paper::A4 => (PAGE_W, PAGE_H),
            Paper::Letter => (612.0, 792.0),
        }
    }

    /// How far the A4 column moves right to sit centred on this paper \[pt\].
    pub fn offset_x(self) -> f32 {
        (self.size().0 - PAGE_W) / 2.0
    }
}
pub const MARGIN_X: f32 = 54.0;
pub const MARGIN_TOP: f32 = 54.0;
/// Room kept below the content for the footer \[pt\].
pub const MARGIN_BOTTOM: f32 = 62.0;
pub const CONTENT_W: f32 = PAGE_W - 2.0 * MARGIN_X;

/// Body text size \[pt\].
pub const BODY: f32 = 9.5;
/// Table text size \[pt\].
pub const SMALL: f32 = 8.0;
/// The smallest size a table is set in before its columns are split \[pt\].
pub const MIN_TABLE_SIZE: f32 = 6.5;
/// Rounding room when a cell measured to fit its column is wrapped to it again \[pt\].
const SLACK: f32 = 0.01;
/// The share of a page that must be free for a major section to start on it.
pub const SECTION_MIN_ROOM: f32 = 0.25;
/// The smallest a chart is set to fill the room left on a page, as a share of its size.
pub const FIGURE_MIN_SCALE: f32 = 0.6;
/// Line height as a multiple of the size.
const LEADING: f32 = 1.3;

/// An sRGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

pub const INK: Rgb = Rgb(0x22, 0x22, 0x22);
pub const GREY: Rgb = Rgb(0x5f, 0x5f, 0x5f);
pub const RULE: Rgb = Rgb(0xb0, 0xb0, 0xb0);
pub const HEADER_FILL: Rgb = Rgb(0xe6, 0xe9, 0xee);
pub const ZEBRA: Rgb = Rgb(0xf6, 0xf6, 0xf6);
/// Rows of estimated inputs: a warm tint that survives grey-scale printing as a light grey.
pub const ESTIMATE_FILL: Rgb = Rgb(0xfc, 0xe8, 0xc3);
/// The recommended row.
pub const CHOSEN_FILL: Rgb = Rgb(0xd9, 0xec, 0xe3);
pub const NOTE_FILL: Rgb = Rgb(0xe8, 0xf1, 0xf8);

/// One drawing operation; `y` of text is its baseline.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Text {
        x: f32,
        y: f32,
        size: f32,
        bold: bool,
        color: Rgb,
        text: String,
    },
    Rect {
        x: f32,
        y: f32,
        w: f32,
        h: f32,
        fill: Rgb,
    },
    Line {
        x1: f32,
        y1: f32,
        x2: f32,
        y2: f32,
        width: f32,
        color: Rgb,
    },
    /// Chart `index` of the chart set, scaled into the box.
    Chart {
        index: usize,
        x: f32,
        y: f32,
        w: f32,
        h: f32,
    },
}

/// One page: what to draw on it, and for each operation where it sits in the document's
/// structure (`marks[i]` belongs to `ops[i]`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Page {
    pub ops: Vec<Op>,
    pub marks: Vec<Mark>,
}

/// Where a drawing operation sits in the tagged PDF's structure tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Decoration or repetition a reader skips: rules, fills, a table header repeated on a
    /// new page, the footer.
    Artifact,
    /// Content of leaf `n` of a [`Block`].
    Leaf(usize),
}

/// A unit of the document's logical structure, in reading order: what the tagged PDF's
/// structure tree is built from. `leaves` are the content it holds (a leaf is every operation
/// marked [`Mark::Leaf`] with its number, on any page).
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub kind: BlockKind,
    pub leaves: Vec<usize>,
}

/// What a [`Block`] is.
#[derive(Debug, Clone, PartialEq)]
pub enum BlockKind {
    /// A heading, level 1 = a section; `leaves[0]` its text.
    Heading { level: u8, title: String },
    /// A paragraph (or a key/value line); `leaves[0]` its text.
    Paragraph,
    /// A bulleted item: `leaves[0]` the bullet, `leaves[1]` the text.
    ListItem,
    /// A chart, with its title as the alternative text; `leaves[0]` the drawing.
    Figure { alt: String },
    /// A figure's caption; `leaves[0]` its text.
    Caption,
    /// A table: per row, whether it is the header, and its cells' leaves.
    Table { rows: Vec<(bool, Vec<usize>)> },
}

/// A heading, for the contents and the PDF outline.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub title: String,
    pub level: u8,
    pub page: usize,
    pub y: f32,
}

/// Horizontal alignment in a table column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A table column. Right-aligned columns hold numbers and never wrap their cells (their
/// headers may wrap); left-aligned ones wrap at spaces.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub header: String,
    pub align: Align,
}

impl Column {
    fn nowrap(&self) -> bool {
        self.align == Align::Right
    }
}

impl Column {
    pub fn left(header: impl Into<String>) -> Column {
        Column {
            header: header.into(),
            align: Align::Left,
        }
    }
    pub fn right(header: impl Into<String>) -> Column {
        Column {
            header: header.into(),
            align: Align::Right,
        }
    }
}

/// A table row.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Row {
    pub cells: Vec<String>,
    /// Background; zebra striping when `None`.
    pub fill: Option<Rgb>,
    pub bold: bool,
    /// Columns set in bold whatever the row.
    pub bold_cols: Vec<usize>,
}

impl Row {
    pub fn new(cells: Vec<String>) -> Row {
        Row {
            cells,
            ..Row::default()
        }
    }
}

/// A table to lay out.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    pub size: f32,
}

const PAD_X: f32 = 4.0;
const PAD_Y: f32 = 2.5;

/// The layout in progress.
#[derive(Debug, Clone)]
pub struct Layout {
    pub pages: Vec<Page>,
    /// Top of the free space on the last page \[pt\].
    pub y: f32,
    pub sections: Vec<Section>,
    /// Height of the paper \[pt\].
    pub page_h: f32,
    /// The logical structure, in reading order.
    pub blocks: Vec<Block>,
    /// Leaves made so far.
    leaves: usize,
    /// The mark operations pushed now get; `None`: each line of text becomes a paragraph.
    mark: Option<Mark>,
    /// Each chart's figure number, in the order the report places them.
    pub figure_numbers: Vec<usize>,
}

impl Default for Layout {
    fn default() -> Self {
        Layout::new()
    }
}

/// Baseline offset of a line of text of `size` in a line box of `size × LEADING`.
fn baseline(size: f32) -> f32 {
    let line = size * LEADING;
    // Centre the font's full height (ascent + descent ≈ 1.16 em for DejaVu) in the box.
    (line - size * 1.164) / 2.0 + size * fonts::ascent(false)
}

impl Layout {
    pub fn new() -> Layout {
        Layout::on(Paper::A4)
    }

    /// A layout for `paper`.
    pub fn on(paper: Paper) -> Layout {
        Layout {
            pages: vec![Page::default()],
            y: MARGIN_TOP,
            sections: vec![],
            page_h: paper.size().1,
            blocks: vec![],
            leaves: 0,
            mark: None,
            figure_numbers: vec![],
        }
    }

    /// A new block of `kind` with `n` leaves; returns its index.
    pub fn block(&mut self, kind: BlockKind, n: usize) -> usize {
        let leaves = (self.leaves..self.leaves + n).collect();
        self.leaves += n;
        self.blocks.push(Block { kind, leaves });
        self.blocks.len() - 1
    }

    /// Leaf `k` of block `b` as a mark.
    pub fn leaf(&self, b: usize, k: usize) -> Mark {
        self.blocks
            .get(b)
            .and_then(|x| x.leaves.get(k))
            .map_or(Mark::Artifact, |&n| Mark::Leaf(n))
    }

    /// Run `f` with every operation it pushes marked `mark`.
    pub fn marked<R>(&mut self, mark: Mark, f: impl FnOnce(&mut Layout) -> R) -> R {
        let before = self.mark.replace(mark);
        let r = f(self);
        self.mark = before;
        r
    }

    /// Run `f` as one paragraph of the structure: everything it draws is one block.
    pub fn as_paragraph<R>(&mut self, f: impl FnOnce(&mut Layout) -> R) -> R {
        let b = self.block(BlockKind::Paragraph, 1);
        let m = self.leaf(b, 0);
        self.marked(m, f)
    }

    /// Add `op` to page `page` (an earlier page: the contents) with `mark`, or insert it at
    /// `index` when given (a box drawn under what is already there).
    pub fn push_on(&mut self, page: usize, index: Option<usize>, op: Op, mark: Mark) {
        if let Some(p) = self.pages.get_mut(page) {
            match index {
                Some(i) if i <= p.ops.len() => {
                    p.ops.insert(i, op);
                    p.marks.insert(i, mark);
                }
                _ => {
                    p.ops.push(op);
                    p.marks.push(mark);
                }
            }
        }
    }

    /// Index of the page being filled.
    pub fn page(&self) -> usize {
        self.pages.len() - 1
    }

    /// Add `op` to the page being filled, with the current mark: rules and fills are artifacts;
    /// text or a chart outside any block becomes a paragraph of its own.
    pub fn push(&mut self, op: Op) {
        let mark = match (&op, self.mark) {
            (Op::Rect { .. } | Op::Line { .. }, _) => Mark::Artifact,
            (_, Some(m)) => m,
            (_, None) => {
                let b = self.block(BlockKind::Paragraph, 1);
                self.leaf(b, 0)
            }
        };
        if let Some(p) = self.pages.last_mut() {
            p.ops.push(op);
            p.marks.push(mark);
        }
    }

    pub fn new_page(&mut self) {
        self.pages.push(Page::default());
        self.y = MARGIN_TOP;
    }

    /// Free height left on this page \[pt\].
    pub fn room(&self) -> f32 {
        self.page_h - MARGIN_BOTTOM - self.y
    }

    /// Start a new page unless `h` fits on this one (or this one is still empty).
    pub fn ensure(&mut self, h: f32) {
        if h > self.room() && self.y > MARGIN_TOP + 0.5 {
            self.new_page();
        }
    }

    /// Where a major section starts: on this page when at least a quarter of it is still free
    /// (so the end of a section does not leave a near-empty page behind; the heading's own
    /// keep-with-next moves it on when what follows does not fit), else on a new one.
    pub fn section_break(&mut self) {
        let page = self.page_h - MARGIN_TOP - MARGIN_BOTTOM;
        if self.y <= MARGIN_TOP + 0.5 {
            return;
        }
        if self.room() < SECTION_MIN_ROOM * page {
            self.new_page();
        } else {
            self.gap(14.0);
        }
    }

    pub fn gap(&mut self, h: f32) {
        self.y += h;
    }

    /// One line of text at `x`, its box starting at the cursor; the cursor moves below it.
    pub fn line(&mut self, x: f32, size: f32, bold: bool, color: Rgb, text: &str) {
        self.push(Op::Text {
            x,
            y: self.y + baseline(size),
            size,
            bold,
            color,
            text: text.to_string(),
        });
        self.y += size * LEADING;
    }

    /// A wrapped paragraph from `x` to the right margin; breaks pages between lines, never
    /// leaving one line of it alone at the foot or the head of a page.
    pub fn paragraph(&mut self, text: &str, size: f32, bold: bool, color: Rgb, indent: f32) {
        let width = CONTENT_W - indent;
        let lines = fonts::wrap(text, width, size, bold);
        let breaks = self.line_breaks(lines.len(), size * LEADING);
        self.as_paragraph(|this| {
            for (i, l) in lines.iter().enumerate() {
                if breaks.contains(&i) {
                    this.new_page();
                }
                this.line(MARGIN_X + indent, size, bold, color, l);
            }
        });
    }

    /// Before which of `n` lines of height `h` a new page starts, so that no page holds a lone
    /// first line (an orphan) or a lone last line (a widow) of a paragraph of three or more.
    fn line_breaks(&self, n: usize, h: f32) -> Vec<usize> {
        let mut breaks = vec![];
        let mut room = self.room();
        let mut at_top = self.y <= MARGIN_TOP + 0.5;
        let page = self.page_h - MARGIN_TOP - MARGIN_BOTTOM;
        let mut i = 0;
        while i < n {
            let fit = ((room + 0.01) / h).floor() as usize;
            let left = n - i;
            if fit >= left {
                break;
            }
            let mut take = fit;
            if left >= 2 && take < 2 && !at_top {
                take = 0;
            } else if left - take == 1 && take >= 2 && left >= 3 {
                take -= 1;
            }
            if take == 0 && at_top {
                take = 1;
            }
            i += take;
            breaks.push(i);
            room = page;
            at_top = true;
        }
        breaks
    }

    /// A bulleted paragraph, kept whole when it is short.
    pub fn bullet(&mut self, text: &str, size: f32) {
        let indent = 12.0;
        let lines = fonts::wrap(text, CONTENT_W - indent, size, false);
        let breaks = self.line_breaks(lines.len(), size * LEADING);
        let b = self.block(BlockKind::ListItem, 2);
        let (label, body) = (self.leaf(b, 0), self.leaf(b, 1));
        for (i, l) in lines.iter().enumerate() {
            if breaks.contains(&i) {
                self.new_page();
            }
            if i == 0 {
                self.mark = Some(label);
                self.push(Op::Text {
                    x: MARGIN_X + 2.0,
                    y: self.y + baseline(size),
                    size,
                    bold: false,
                    color: INK,
                    text: "•".into(),
                });
                self.mark = None;
            }
            self.marked(body, |this| {
                this.line(MARGIN_X + indent, size, false, INK, l)
            });
        }
        self.gap(size * 0.3);
    }

    /// Height a bulleted paragraph takes.
    pub fn bullet_height(text: &str, size: f32) -> f32 {
        fonts::wrap(text, CONTENT_W - 12.0, size, false).len() as f32 * size * LEADING + size * 0.3
    }

    /// A heading; kept on a page with at least `keep` points of what follows.
    pub fn heading(&mut self, text: &str, level: u8, keep: f32) {
        let size = match level {
            1 => 15.0,
            _ => 11.5,
        };
        let before = if level == 1 { 6.0 } else { 8.0 };
        self.ensure(before + size * LEADING + keep);
        if self.y > MARGIN_TOP + 0.5 {
            self.gap(before);
        }
        self.sections.push(Section {
            title: text.to_string(),
            level,
            page: self.page(),
            y: self.y,
        });
        let lines = fonts::wrap(text, CONTENT_W, size, true);
        let b = self.block(
            BlockKind::Heading {
                level,
                title: text.to_string(),
            },
            1,
        );
        let m = self.leaf(b, 0);
        self.marked(m, |this| {
            for l in &lines {
                this.line(MARGIN_X, size, true, INK, l);
            }
        });
        if level == 1 {
            self.push(Op::Line {
                x1: MARGIN_X,
                y1: self.y + 1.0,
                x2: MARGIN_X + CONTENT_W,
                y2: self.y + 1.0,
                width: 0.8,
                color: RULE,
            });
            self.gap(6.0);
        } else {
            self.gap(2.0);
        }
    }

    /// A chart scaled to the content width, with its caption; kept together on one page.
    /// The least height [`Layout::figure`] sets a chart of this aspect and caption in: shrunk to
    /// the page if tall, then to `FIGURE_MIN_SCALE` — what a heading keeps with it.
    pub fn figure_min_height(&self, aspect: f32, caption: &str) -> f32 {
        let cap = fonts::wrap(caption, CONTENT_W, SMALL + 0.5, false);
        let cap_h = cap.len() as f32 * (SMALL + 0.5) * LEADING + 6.0;
        let max_h = self.page_h - MARGIN_TOP - MARGIN_BOTTOM - cap_h;
        FIGURE_MIN_SCALE * (CONTENT_W * aspect).min(max_h) + cap_h + 4.0
    }

    pub fn figure(&mut self, index: usize, aspect: f32, caption: &str, alt: &str) {
        let w = CONTENT_W;
        let mut h = w * aspect;
        let cap = fonts::wrap(caption, CONTENT_W, SMALL + 0.5, false);
        let cap_h = cap.len() as f32 * (SMALL + 0.5) * LEADING + 6.0;
        let max_h = self.page_h - MARGIN_TOP - MARGIN_BOTTOM - cap_h;
        let mut w = w;
        if h > max_h {
            // A tall chart is shrunk to fit the page, keeping its proportions.
            w *= max_h / h;
            h = max_h;
        }
        // Rather than leave the rest of a page empty, a chart that nearly fits is set a little
        // smaller (down to FIGURE_MIN_SCALE of its size) to fit the room left.
        let room = self.room() - cap_h - 0.5;
        if h > room && room >= FIGURE_MIN_SCALE * h && self.y > MARGIN_TOP + 0.5 {
            w *= room / h;
            h = room;
        }
        self.ensure(h + cap_h);
        let fig = self.block(
            BlockKind::Figure {
                alt: alt.to_string(),
            },
            1,
        );
        let m = self.leaf(fig, 0);
        let chart = Op::Chart {
            index,
            x: MARGIN_X + (CONTENT_W - w) / 2.0,
            y: self.y,
            w,
            h,
        };
        self.marked(m, |this| this.push(chart));
        self.y += h + 4.0;
        let c = self.block(BlockKind::Caption, 1);
        let m = self.leaf(c, 0);
        self.marked(m, |this| {
            for l in cap {
                this.line(MARGIN_X, SMALL + 0.5, false, GREY, &l);
            }
        });
        self.gap(10.0);
    }

    /// A table across the content width. Every column gets at least its widest number and its
    /// longest header word, so numbers are never cut and headers wrap only at spaces. When the
    /// columns cannot all have that at the table's size, the table is set smaller (down to
    /// [`MIN_TABLE_SIZE`]); when even that does not fit, its columns are split into groups that
    /// do, each repeating the first (key) column.
    pub fn table(&mut self, t: &Table) {
        let mut size = t.size;
        loop {
            let at = Table { size, ..t.clone() };
            if let Some(widths) = fit_columns(&at, CONTENT_W) {
                self.table_with(&at, &widths);
                return;
            }
            if size - 0.5 < MIN_TABLE_SIZE - 1e-3 {
                break;
            }
            size -= 0.5;
        }
        let small = Table {
            size: MIN_TABLE_SIZE,
            ..t.clone()
        };
        for group in column_groups(&small, CONTENT_W) {
            let part = Table {
                columns: group.iter().map(|&i| small.columns[i].clone()).collect(),
                rows: small
                    .rows
                    .iter()
                    .map(|r| Row {
                        cells: group
                            .iter()
                            .map(|&i| r.cells.get(i).cloned().unwrap_or_default())
                            .collect(),
                        fill: r.fill,
                        bold: r.bold,
                        bold_cols: group
                            .iter()
                            .enumerate()
                            .filter(|(_, i)| r.bold_cols.contains(i))
                            .map(|(k, _)| k)
                            .collect(),
                    })
                    .collect(),
                size: MIN_TABLE_SIZE,
            };
            // A group that still does not fit is a single column wider than the page: its
            // cells wrap at the page width (right-aligned cells are never that wide in practice).
            let widths = fit_columns(&part, CONTENT_W).unwrap_or_else(|| {
                let m = minimum_widths(&part);
                let sum: f32 = m.iter().sum();
                m.iter().map(|w| w * CONTENT_W / sum).collect()
            });
            self.table_with(&part, &widths);
        }
    }

    fn table_with(&mut self, t: &Table, widths: &[f32]) {
        let widths = widths.to_vec();
        let line_h = t.size * LEADING;
        let cell_lines = |cells: &[String], bold: &dyn Fn(usize) -> bool| {
            cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let w = widths.get(i).copied().unwrap_or(40.0) - 2.0 * PAD_X;
                    fonts::wrap(c, w + SLACK, t.size, bold(i))
                })
                .collect::<Vec<Vec<String>>>()
        };
        let headers: Vec<String> = t.columns.iter().map(|c| c.header.clone()).collect();
        let head_lines = cell_lines(&headers, &|_| true);
        let head_h = rows_height(&head_lines, line_h);
        let max_row_h = self.page_h - MARGIN_TOP - MARGIN_BOTTOM - head_h;
        let table = self.block(BlockKind::Table { rows: vec![] }, 0);
        // The header is tagged where it first appears; repeated on a later page, it is an
        // artifact (a reader hears it once).
        let mut header_tagged = false;
        let mut draw_header = |l: &mut Layout| {
            let cells = (!header_tagged).then(|| l.table_row(table, true, head_lines.len()));
            header_tagged = true;
            l.row(
                &head_lines,
                &widths,
                t,
                line_h,
                Some(HEADER_FILL),
                &|_| true,
                cells.as_deref(),
            );
            l.push(Op::Line {
                x1: MARGIN_X,
                y1: l.y,
                x2: MARGIN_X + CONTENT_W,
                y2: l.y,
                width: 0.6,
                color: RULE,
            });
        };
        let heights: Vec<f32> = t
            .rows
            .iter()
            .map(|r| {
                let bold = |i: usize| r.bold || r.bold_cols.contains(&i);
                rows_height(&cell_lines(&r.cells, &bold), line_h).min(max_row_h)
            })
            .collect();
        // The header with at least two rows (or the whole table when it is that short).
        let lead: f32 = heights.iter().take(2).sum();
        self.ensure(head_h + lead);
        draw_header(self);
        for (k, r) in t.rows.iter().enumerate() {
            let bold = |i: usize| r.bold || r.bold_cols.contains(&i);
            let mut lines = cell_lines(&r.cells, &bold);
            // A row taller than a page (never seen in practice) is cut, with an ellipsis.
            let max_lines = ((max_row_h - 2.0 * PAD_Y) / line_h).floor().max(1.0) as usize;
            for cell in &mut lines {
                if cell.len() > max_lines {
                    cell.truncate(max_lines);
                    if let Some(last) = cell.last_mut() {
                        last.push('…');
                    }
                }
            }
            let h = rows_height(&lines, line_h);
            // No row left alone: when the last row would run onto a new page, the one before
            // it goes too.
            let last_alone = k + 2 == t.rows.len()
                && k > 0
                && h <= self.room()
                && h + heights[k + 1] > self.room();
            if h > self.room() || last_alone {
                self.new_page();
                draw_header(self);
            }
            let fill = r.fill.or(if k % 2 == 1 { Some(ZEBRA) } else { None });
            let cells = self.table_row(table, false, lines.len());
            self.row(&lines, &widths, t, line_h, fill, &bold, Some(&cells));
        }
        self.push(Op::Line {
            x1: MARGIN_X,
            y1: self.y,
            x2: MARGIN_X + CONTENT_W,
            y2: self.y,
            width: 0.6,
            color: RULE,
        });
        self.gap(8.0);
    }

    /// A new row of `n` cells in table block `table`: the cells' marks.
    fn table_row(&mut self, table: usize, header: bool, n: usize) -> Vec<Mark> {
        let ids: Vec<usize> = (self.leaves..self.leaves + n).collect();
        self.leaves += n;
        if let Some(b) = self.blocks.get_mut(table) {
            b.leaves.extend(&ids);
            if let BlockKind::Table { rows } = &mut b.kind {
                rows.push((header, ids.clone()));
            }
        }
        ids.into_iter().map(Mark::Leaf).collect()
    }

    /// One table row; `cells` marks each cell's text (an artifact when `None`).
    #[allow(clippy::too_many_arguments)]
    fn row(
        &mut self,
        lines: &[Vec<String>],
        widths: &[f32],
        t: &Table,
        line_h: f32,
        fill: Option<Rgb>,
        bold: &dyn Fn(usize) -> bool,
        cells: Option<&[Mark]>,
    ) {
        let h = rows_height(lines, line_h);
        if let Some(fill) = fill {
            self.push(Op::Rect {
                x: MARGIN_X,
                y: self.y,
                w: CONTENT_W,
                h,
                fill,
            });
        }
        let mut x = MARGIN_X;
        for (i, cell) in lines.iter().enumerate() {
            let w = widths.get(i).copied().unwrap_or(0.0);
            let align = t.columns.get(i).map_or(Align::Left, |c| c.align);
            for (j, l) in cell.iter().enumerate() {
                let tw = fonts::text_width(l, t.size, bold(i));
                let tx = match align {
                    Align::Left => x + PAD_X,
                    Align::Right => x + w - PAD_X - tw,
                };
                let mark = cells
                    .and_then(|c| c.get(i).copied())
                    .unwrap_or(Mark::Artifact);
                let op = Op::Text {
                    x: tx,
                    y: self.y + PAD_Y + j as f32 * line_h + baseline(t.size),
                    size: t.size,
                    bold: bold(i),
                    color: INK,
                    text: l.clone(),
                };
                self.marked(mark, |this| this.push(op));
            }
            x += w;
        }
        self.y += h;
    }
}

fn rows_height(cells: &[Vec<String>], line_h: f32) -> f32 {
    let n = cells.iter().map(|c| c.len()).max().unwrap_or(1).max(1);
    n as f32 * line_h + 2.0 * PAD_Y
}

/// What each column needs at the least: its longest header word, and the widest cell of a
/// right-aligned (number) column or the longest word of a left-aligned one \[pt\].
pub fn minimum_widths(t: &Table) -> Vec<f32> {
    measure(t).1
}

/// Natural (unwrapped) and minimum width of each column \[pt\].
fn measure(t: &Table) -> (Vec<f32>, Vec<f32>) {
    let n = t.columns.len();
    let mut natural = vec![0.0f32; n];
    let mut minimum = vec![0.0f32; n];
    let mut measure = |i: usize, text: &str, bold: bool, whole: bool| {
        let lines: Vec<&str> = text.split('\n').collect();
        let w = lines
            .iter()
            .map(|l| fonts::text_width(l, t.size, bold))
            .fold(0.0, f32::max)
            + 2.0 * PAD_X;
        natural[i] = natural[i].max(w);
        let word = if whole {
            w
        } else {
            text.split_whitespace()
                .map(|w| fonts::text_width(w, t.size, bold))
                .fold(0.0, f32::max)
                + 2.0 * PAD_X
        };
        minimum[i] = minimum[i].max(word);
    };
    for (i, c) in t.columns.iter().enumerate() {
        // Headers may wrap at spaces, so only their longest word counts towards the minimum;
        // they count towards the natural width as two lines' worth.
        let words: Vec<&str> = c.header.split_whitespace().collect();
        let half = words.len().div_ceil(2);
        let (a, b) = (words[..half].join(" "), words[half..].join(" "));
        measure(i, &a, true, false);
        measure(i, &b, true, false);
    }
    for r in &t.rows {
        for (i, c) in r.cells.iter().enumerate().take(n) {
            measure(
                i,
                c,
                r.bold || r.bold_cols.contains(&i),
                t.columns[i].nowrap(),
            );
        }
    }
    (natural, minimum)
}

/// Column widths that fill `total`: each column gets its natural (unwrapped) width when all
/// fit; otherwise the columns with the most text give way first, never below their minimum
/// ([`minimum_widths`]), so numbers stay whole and headers wrap only at spaces. `None` when
/// the minimums alone are wider than `total`.
pub fn fit_columns(t: &Table, total: f32) -> Option<Vec<f32>> {
    let n = t.columns.len();
    if n == 0 {
        return Some(vec![]);
    }
    let (natural, minimum) = measure(t);
    let sum: f32 = natural.iter().sum();
    if sum <= total {
        return Some(natural.iter().map(|w| w * total / sum).collect());
    }
    let msum: f32 = minimum.iter().sum();
    if msum > total {
        return None;
    }
    let excess = sum - total;
    let give: Vec<f32> = natural
        .iter()
        .zip(&minimum)
        .map(|(n, m)| (n - m).max(0.0))
        .collect();
    let give_sum: f32 = give.iter().sum();
    Some(
        natural
            .iter()
            .zip(&give)
            .map(|(n, g)| n - excess * g / give_sum.max(f32::MIN_POSITIVE))
            .collect(),
    )
}

/// The columns of a table too wide for `total` in groups that each fit beside the first (key)
/// column, which every group repeats: `[[0, 1, 2], [0, 3, 4]]`.
pub fn column_groups(t: &Table, total: f32) -> Vec<Vec<usize>> {
    let min = minimum_widths(t);
    let mut groups: Vec<Vec<usize>> = vec![];
    let mut current = vec![0];
    let mut used = min.first().copied().unwrap_or(0.0);
    for (i, w) in min.iter().enumerate().skip(1) {
        if used + w > total && current.len() > 1 {
            groups.push(std::mem::replace(&mut current, vec![0]));
            used = min[0];
        }
        current.push(i);
        used += w;
    }
    groups.push(current);
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: usize, text: &str) -> Table {
        Table {
            columns: vec![
                Column::left("input"),
                Column::right("value"),
                Column::left("source"),
            ],
            rows: (0..rows)
                .map(|i| Row::new(vec![format!("field {i}"), "1,234".into(), text.into()]))
                .collect(),
            size: SMALL,
        }
    }

    fn texts(l: &Layout, page: usize) -> Vec<String> {
        l.pages[page]
            .ops
            .iter()
            .filter_map(|o| match o {
                Op::Text { text, .. } => Some(text.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn columns_fill_the_width_and_keep_short_columns_whole() {
        let long = "a source with a very long title that must wrap inside its column, \
                    again and again, because it is longer than the page is wide";
        let t = table(3, long);
        let w = fit_columns(&t, CONTENT_W).unwrap();
        assert!((w.iter().sum::<f32>() - CONTENT_W).abs() < 0.01);
        assert!(w[1] >= fonts::text_width("1,234", SMALL, false) + 2.0 * PAD_X);
        assert!(w[2] > w[0]);
        let short = table(2, "short");
        let w = fit_columns(&short, CONTENT_W).unwrap();
        assert!((w.iter().sum::<f32>() - CONTENT_W).abs() < 0.01);
    }

    #[test]
    fn long_tables_run_onto_new_pages_with_their_header() {
        let mut l = Layout::new();
        l.table(&table(200, "a source"));
        assert!(l.pages.len() >= 3, "{} pages", l.pages.len());
        for p in 0..l.pages.len() {
            let t = texts(&l, p);
            assert_eq!(t.iter().filter(|s| *s == "input").count(), 1, "page {p}");
        }
        // Every row is there once.
        let all: Vec<String> = (0..l.pages.len()).flat_map(|p| texts(&l, p)).collect();
        for i in 0..200 {
            assert_eq!(
                all.iter().filter(|s| **s == format!("field {i}")).count(),
                1
            );
        }
        // Nothing is drawn into the footer zone.
        for p in &l.pages {
            for o in &p.ops {
                if let Op::Text { y, .. } = o {
                    assert!(*y < PAGE_H - MARGIN_BOTTOM + 1.0);
                }
            }
        }
    }

    #[test]
    fn text_stays_inside_the_margins() {
        let mut l = Layout::new();
        let long = "word ".repeat(400);
        l.paragraph(&long, BODY, false, INK, 0.0);
        l.table(&table(5, &long));
        for p in &l.pages {
            for o in &p.ops {
                if let Op::Text {
                    x,
                    size,
                    text,
                    bold,
                    ..
                } = o
                {
                    let right = x + fonts::text_width(text, *size, *bold);
                    assert!(*x >= MARGIN_X - 0.01 && right <= MARGIN_X + CONTENT_W + 0.01);
                }
            }
        }
    }

    #[test]
    fn headings_are_kept_with_what_follows() {
        let mut l = Layout::new();
        l.gap(PAGE_H - MARGIN_TOP - MARGIN_BOTTOM - 30.0);
        l.heading("Assumptions", 1, 60.0);
        assert_eq!(l.sections[0].page, 1);
    }

    fn all_texts(l: &Layout) -> Vec<String> {
        (0..l.pages.len()).flat_map(|p| texts(l, p)).collect()
    }

    /// A summary-shaped table: two labels and nine money columns, wider than the page.
    fn wide() -> Table {
        let mut columns = vec![Column::left("Tier"), Column::left("Option")];
        columns.extend((0..9).map(|i| Column::right(format!("Money column {i}"))));
        let rows = (0..4)
            .map(|k| {
                let mut cells = vec![format!("p5.48xlarge tier {k}"), "reserved-3y".into()];
                cells.extend((0..9).map(|i| format!("${},048,5{i}{k}", 10 + i)));
                Row::new(cells)
            })
            .collect();
        Table {
            columns,
            rows,
            size: SMALL,
        }
    }

    #[test]
    fn numbers_are_never_cut_and_headers_break_only_at_spaces() {
        let t = wide();
        let mut l = Layout::new();
        l.table(&t);
        let all = all_texts(&l);
        for r in &t.rows {
            for c in &r.cells[2..] {
                assert!(all.contains(c), "{c} is not drawn whole: {all:?}");
            }
        }
        assert!(all.iter().all(|s| !s.contains('…')), "{all:?}");
        // Header lines are whole words of the header.
        for s in &all {
            if s.starts_with("Money") || s.starts_with("column") {
                assert!(
                    ["Money", "column", "Money column"]
                        .iter()
                        .any(|w| s == w || s.starts_with(&format!("{w} "))),
                    "{s}"
                );
            }
        }
        // Too wide for one band at the smallest size? Then the key column repeats.
        let groups = column_groups(
            &Table {
                size: MIN_TABLE_SIZE,
                ..t.clone()
            },
            CONTENT_W,
        );
        if groups.len() > 1 {
            assert!(groups.iter().all(|g| g[0] == 0));
            let names = all.iter().filter(|s| s.as_str() == "Tier").count();
            assert_eq!(names, groups.len());
        }
        for p in &l.pages {
            for o in &p.ops {
                if let Op::Text {
                    x,
                    size,
                    text,
                    bold,
                    ..
                } = o
                {
                    let right = x + fonts::text_width(text, *size, *bold);
                    assert!(right <= MARGIN_X + CONTENT_W + 0.05, "{text} overflows");
                }
            }
        }
    }

    #[test]
    fn paragraphs_leave_no_lone_line_at_a_page_break() {
        let text = "word ".repeat(60);
        let n = fonts::wrap(&text, CONTENT_W, BODY, false).len();
        assert!(n >= 4, "{n} lines");
        let h = BODY * LEADING;
        let page = PAGE_H - MARGIN_TOP - MARGIN_BOTTOM;
        // Room for exactly one line, then for all but one.
        for room_lines in [1.0, (n - 1) as f32] {
            let mut l = Layout::new();
            l.gap(page - room_lines * h - 0.5);
            l.paragraph(&text, BODY, false, INK, 0.0);
            let per_page: Vec<usize> = (0..l.pages.len())
                .map(|p| texts(&l, p).len())
                .filter(|&k| k > 0)
                .collect();
            assert!(
                per_page.iter().all(|&k| k >= 2),
                "{room_lines}: {per_page:?}"
            );
            assert_eq!(per_page.iter().sum::<usize>(), n);
        }
    }

    #[test]
    fn letter_paper_breaks_pages_at_its_own_height() {
        let mut a4 = Layout::on(Paper::A4);
        let mut letter = Layout::on(Paper::Letter);
        a4.table(&table(300, "a source"));
        letter.table(&table(300, "a source"));
        assert!(letter.pages.len() > a4.pages.len());
        for p in &letter.pages {
            for o in &p.ops {
                if let Op::Text { y, .. } = o {
                    assert!(*y < 792.0 - MARGIN_BOTTOM + 1.0);
                }
            }
        }
        assert!((Paper::Letter.offset_x() - 8.36).abs() < 0.01);
    }
}
