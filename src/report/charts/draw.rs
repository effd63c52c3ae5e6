//! The parts every chart shares: canvas size, palette, "nice" axis ticks, the frame (title,
//! subtitle, legend, footer) and a label placer that keeps annotations from overlapping each
//! other. Numbers are printed by [`crate::format`], as everywhere else in the report.
//!
//! Sizes are SVG user units (pixels at 1×). A chart is 800 wide and is printed about 480 pt
//! wide in the PDF, so 13-unit text prints at about 8 pt: the smallest size used. At 800 × 460
//! two charts and their captions fit on an A4 page.

use std::error::Error;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{FontDesc, FontFamily, FontStyle};

use crate::report::fonts;

/// What a drawing step returns; plotters' own errors are boxed and turned into a message.
pub type DrawResult<T> = Result<T, Box<dyn Error + Send + Sync>>;

/// The drawing area of one chart.
pub type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Canvas width [SVG units].
pub const WIDTH: u32 = 800;
/// Canvas height of most charts [SVG units].
pub const HEIGHT: u32 = 460;
/// Outer margin [SVG units].
pub const MARGIN: f64 = 18.0;

/// Text sizes (em, SVG units).
pub const TITLE_PX: f64 = 19.0;
pub const SUBTITLE_PX: f64 = 13.5;
pub const AXIS_PX: f64 = 14.0;
pub const TICK_PX: f64 = 13.0;
pub const LEGEND_PX: f64 = 13.0;
pub const NOTE_PX: f64 = 13.0;
pub const FOOTER_PX: f64 = 11.0;

pub const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);
pub const GREY: RGBColor = RGBColor(0x5f, 0x5f, 0x5f);
pub const GRID: RGBColor = RGBColor(0xe3, 0xe3, 0xe3);
pub const AXIS: RGBColor = RGBColor(0x88, 0x88, 0x88);

/// Okabe & Ito (2008), "Color Universal Design": distinguishable with every common form of
/// colour-vision deficiency. Ordered so the first colours are the most distinct on white;
/// yellow comes last because thin yellow lines are hard to see on paper.
pub const OKABE_ITO: [RGBColor; 8] = [
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
    RGBColor(0x00, 0x00, 0x00), // black
    RGBColor(0xF0, 0xE4, 0x42), // yellow
];

/// The colour of series `i`; past eight the markers keep series apart.
pub fn color(i: usize) -> RGBColor {
    OKABE_ITO[i % OKABE_ITO.len()]
}

/// Each deployment option keeps one colour in every cost chart (there are seven, so colours
/// never repeat); tiers are told apart by marker shape and dashing.
pub fn option_color(o: crate::hardware::DeploymentOption) -> RGBColor {
    use crate::hardware::DeploymentOption as D;
    match o {
        D::OnPrem => OKABE_ITO[0],
        D::OnDemand => OKABE_ITO[1],
        D::Reserved1y => OKABE_ITO[2],
        D::Reserved3y => OKABE_ITO[3],
        D::Hybrid1y => OKABE_ITO[4],
        D::Hybrid3y => OKABE_ITO[5],
        D::Spot => OKABE_ITO[6],
    }
}

/// Marker shapes, so series stay apart in grey-scale print and past eight colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
    Cross,
}

impl Marker {
    pub fn nth(i: usize) -> Marker {
        [
            Marker::Circle,
            Marker::Square,
            Marker::Triangle,
            Marker::Diamond,
            Marker::Cross,
        ][i % 5]
    }
}

/// Plotters sizes text by the font's full height and writes `size / 1.24` into the SVG as the
/// em size; this gives the em size asked for.
fn plotters_size(px: f64) -> f64 {
    px * 1.24
}

/// A regular text style of em size `px`.
pub fn text(px: f64, c: RGBColor) -> TextStyle<'static> {
    FontDesc::new(FontFamily::SansSerif, plotters_size(px), FontStyle::Normal).color(&c)
}

/// A bold text style of em size `px`.
pub fn bold(px: f64, c: RGBColor) -> TextStyle<'static> {
    FontDesc::new(FontFamily::SansSerif, plotters_size(px), FontStyle::Bold).color(&c)
}

/// Width of `s` at em size `px` [SVG units].
pub fn width(s: &str, px: f64, is_bold: bool) -> f64 {
    fonts::text_width(s, px as f32, is_bold) as f64
}

// ---------------------------------------------------------------------------------------------
// Axes

/// A linear axis with round tick values.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub min: f64,
    pub max: f64,
    pub step: f64,
    pub ticks: Vec<f64>,
}

/// plotters reads an [`Axis`] as a coordinate range whose grid lines and labels fall exactly on
/// its ticks (its own key-point decorator cannot take custom label formats).
impl plotters::coord::ranged1d::Ranged for Axis {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        if self.max <= self.min {
            return (limit.0 + limit.1) / 2;
        }
        let t = (value - self.min) / (self.max - self.min);
        limit.0 + (t * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<H: plotters::coord::ranged1d::KeyPointHint>(&self, hint: H) -> Vec<f64> {
        // Bold points only: no minor grid.
        if hint.weight().allow_light_points() {
            vec![]
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.min..self.max
    }
}

/// An axis of evenly spaced `ticks` over `min..max`.
pub fn fixed_axis(min: f64, max: f64, ticks: Vec<f64>) -> Axis {
    let step = if ticks.len() > 1 {
        ticks[1] - ticks[0]
    } else {
        (max - min).max(1.0)
    };
    Axis {
        min,
        max,
        step,
        ticks,
    }
}

/// An axis covering `lo..=hi` with about `target` ticks at 1, 2, 2.5 or 5 × 10^k. Degenerate
/// input (empty, equal or non-finite bounds) still gives a usable axis.
pub fn nice_axis(lo: f64, hi: f64, target: usize) -> Axis {
    let (mut lo, mut hi) = (
        if lo.is_finite() { lo } else { 0.0 },
        if hi.is_finite() { hi } else { 1.0 },
    );
    if hi < lo {
        std::mem::swap(&mut lo, &mut hi);
    }
    if hi - lo < 1e-12 {
        hi = if lo == 0.0 { 1.0 } else { lo + lo.abs() * 0.1 };
    }
    let raw = (hi - lo) / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag);
    let min = (lo / step + 1e-9).floor() * step;
    let max = (hi / step - 1e-9).ceil() * step;
    let n = ((max - min) / step).round() as usize;
    let ticks = (0..=n).map(|i| min + i as f64 * step).collect();
    Axis {
        min,
        max,
        step,
        ticks,
    }
}

/// Tick label width needed by an axis [SVG units].
pub fn widest(labels: impl IntoIterator<Item = String>, px: f64) -> f64 {
    labels
        .into_iter()
        .map(|l| width(&l, px, false))
        .fold(0.0, f64::max)
}

// ---------------------------------------------------------------------------------------------
// The frame

/// How a legend entry is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Swatch {
    /// A solid line with a marker.
    Line(Marker),
    /// A dashed line with a marker.
    DashedLine(Marker),
    /// A dashed line alone (a reference rule).
    Dashed,
    /// A filled box (bars, areas).
    Box,
}

/// One legend entry.
#[derive(Debug, Clone, PartialEq)]
pub struct LegendEntry {
    pub label: String,
    pub color: RGBColor,
    pub swatch: Swatch,
}

/// What surrounds the plot.
#[derive(Debug, Clone, Default)]
pub struct Head {
    /// The finding, in bold.
    pub title: String,
    /// What is plotted, and the numbers behind the title.
    pub subtitle: String,
    pub legend: Vec<LegendEntry>,
    /// Provenance, bottom left.
    pub footer: String,
}

/// Where the frame left room for the plot (absolute SVG units).
#[derive(Debug, Clone, Copy)]
pub struct PlotRect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

const LINE: f64 = 1.25;
const SWATCH_W: f64 = 26.0;
const ENTRY_GAP: f64 = 20.0;

fn legend_rows(entries: &[LegendEntry], avail: f64) -> Vec<Vec<(LegendEntry, f64)>> {
    let mut rows: Vec<Vec<(LegendEntry, f64)>> = vec![];
    let mut used = 0.0;
    for e in entries {
        let label = fonts::ellipsize(
            &e.label,
            (avail - SWATCH_W - 6.0) as f32,
            LEGEND_PX as f32,
            false,
        );
        let w = SWATCH_W + 6.0 + width(&label, LEGEND_PX, false);
        let entry = LegendEntry { label, ..e.clone() };
        match rows.last_mut() {
            Some(row) if used + ENTRY_GAP + w <= avail => {
                used += ENTRY_GAP + w;
                row.push((entry, w));
            }
            _ => {
                used = w;
                rows.push(vec![(entry, w)]);
            }
        }
    }
    rows
}

/// Draw a marker of `shape` centred on (x, y) [absolute units].
pub fn draw_marker(
    area: &Area<'_>,
    shape: Marker,
    (x, y): (i32, i32),
    c: RGBColor,
    r: i32,
) -> DrawResult<()> {
    let style = c.filled();
    match shape {
        Marker::Circle => area.draw(&Circle::new((x, y), r, style))?,
        Marker::Square => area.draw(&Rectangle::new([(x - r, y - r), (x + r, y + r)], style))?,
        Marker::Triangle => area.draw(&Polygon::new(
            vec![(x, y - r - 1), (x + r + 1, y + r), (x - r - 1, y + r)],
            style,
        ))?,
        Marker::Diamond => area.draw(&Polygon::new(
            vec![
                (x, y - r - 1),
                (x + r + 1, y),
                (x, y + r + 1),
                (x - r - 1, y),
            ],
            style,
        ))?,
        Marker::Cross => {
            let s = c.stroke_width(2);
            area.draw(&PathElement::new(vec![(x - r, y - r), (x + r, y + r)], s))?;
            area.draw(&PathElement::new(vec![(x - r, y + r), (x + r, y - r)], s))?;
        }
    }
    Ok(())
}

/// Fill the canvas, draw title, subtitle, legend and footer, and return the room left for
/// the plot. Long titles wrap to two lines and then shrink; nothing is clipped.
pub fn frame(root: &Area<'_>, head: &Head) -> DrawResult<PlotRect> {
    root.fill(&WHITE)?;
    let (w, h) = root.dim_in_pixel();
    let (w, h) = (w as f64, h as f64);
    let avail = w - 2.0 * MARGIN;
    let mut y = MARGIN;

    // Title: up to two lines; if still too long, a smaller size on as many lines as it takes.
    // The title is the chart's finding: it is never cut.
    let mut title_px = TITLE_PX;
    let mut lines = fonts::wrap(&head.title, avail as f32, title_px as f32, true);
    if lines.len() > 2 {
        title_px = TITLE_PX - 2.0;
        lines = fonts::wrap(&head.title, avail as f32, title_px as f32, true);
    }
    for l in &lines {
        root.draw(&Text::new(
            l.clone(),
            (MARGIN as i32, y as i32),
            bold(title_px, INK),
        ))?;
        y += title_px * LINE;
    }
    if !head.subtitle.is_empty() {
        y += 2.0;
        let mut sub = fonts::wrap(&head.subtitle, avail as f32, SUBTITLE_PX as f32, false);
        if sub.len() > 3 {
            let rest = sub[2..].join(" ");
            sub = vec![
                sub[0].clone(),
                sub[1].clone(),
                fonts::ellipsize(&rest, avail as f32, SUBTITLE_PX as f32, false),
            ];
        }
        for l in &sub {
            root.draw(&Text::new(
                l.clone(),
                (MARGIN as i32, y as i32),
                text(SUBTITLE_PX, GREY),
            ))?;
            y += SUBTITLE_PX * LINE;
        }
    }
    let top = y + 8.0;

    // Footer, then the legend above it.
    let mut bottom = h - MARGIN + 4.0;
    if !head.footer.is_empty() {
        let f = fonts::ellipsize(&head.footer, avail as f32, FOOTER_PX as f32, false);
        bottom -= FOOTER_PX;
        root.draw(&Text::new(
            f,
            (MARGIN as i32, bottom as i32),
            text(FOOTER_PX, AXIS),
        ))?;
        bottom -= 8.0;
    }
    let rows = legend_rows(&head.legend, avail);
    let row_h = LEGEND_PX * 1.6;
    let legend_top = bottom - rows.len() as f64 * row_h;
    for (i, row) in rows.iter().enumerate() {
        let ry = legend_top + i as f64 * row_h;
        let mid = (ry + LEGEND_PX * 0.6) as i32;
        let mut x = MARGIN;
        for (e, ew) in row {
            let (x0, x1) = (x as i32, (x + SWATCH_W) as i32);
            match e.swatch {
                Swatch::Line(m) => {
                    root.draw(&PathElement::new(
                        vec![(x0, mid), (x1, mid)],
                        e.color.stroke_width(3),
                    ))?;
                    draw_marker(root, m, ((x0 + x1) / 2, mid), e.color, 4)?;
                }
                Swatch::DashedLine(m) => {
                    for k in 0..3 {
                        let a = x0 + k * 9;
                        root.draw(&PathElement::new(
                            vec![(a, mid), (a + 6, mid)],
                            e.color.stroke_width(3),
                        ))?;
                    }
                    draw_marker(root, m, ((x0 + x1) / 2, mid), e.color, 4)?;
                }
                Swatch::Dashed => {
                    for k in 0..3 {
                        let a = x0 + k * 10;
                        root.draw(&PathElement::new(
                            vec![(a, mid), (a + 6, mid)],
                            e.color.stroke_width(2),
                        ))?;
                    }
                }
                Swatch::Box => root.draw(&Rectangle::new(
                    [(x0 + 6, mid - 7), (x0 + 20, mid + 7)],
                    e.color.filled(),
                ))?,
            }
            root.draw(&Text::new(
                e.label.clone(),
                ((x + SWATCH_W + 6.0) as i32, ry as i32),
                text(LEGEND_PX, INK),
            ))?;
            x += ew + ENTRY_GAP;
        }
    }
    let plot_bottom = if rows.is_empty() {
        bottom
    } else {
        legend_top - 10.0
    };
    Ok(PlotRect {
        x: MARGIN - 4.0,
        y: top,
        w: w - 2.0 * MARGIN + 8.0,
        h: (plot_bottom - top).max(60.0),
    })
}

/// The house look of a chart's axes and grid: tick labels and axis titles in ink, light grey
/// grid lines at the ticks only, grey axis lines. Every chart starts its mesh here.
pub fn house_mesh<'m, 'a, 'b, X, Y, DB>(
    mesh: &'m mut plotters::chart::MeshStyle<'a, 'b, X, Y, DB>,
) -> &'m mut plotters::chart::MeshStyle<'a, 'b, X, Y, DB>
where
    X: plotters::coord::ranged1d::Ranged<ValueType: std::fmt::Debug>,
    Y: plotters::coord::ranged1d::Ranged<ValueType: std::fmt::Debug>,
    DB: DrawingBackend,
{
    mesh.label_style(text(TICK_PX, INK))
        .axis_desc_style(text(AXIS_PX, INK))
        .bold_line_style(GRID.stroke_width(1))
        .light_line_style(TRANSPARENT)
        .axis_style(AXIS.stroke_width(1))
}

/// The plot's drawing area inside the root.
pub fn plot_area<'a>(root: &Area<'a>, r: PlotRect) -> Area<'a> {
    root.clone().shrink(
        (r.x.round() as i32, r.y.round() as i32),
        (r.w.round() as u32, r.h.round() as u32),
    )
}

// ---------------------------------------------------------------------------------------------
// Annotations

/// A rectangle in absolute SVG units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Boxed {
    pub x0: f64,
    pub y0: f64,
    pub x1: f64,
    pub y1: f64,
}

impl Boxed {
    pub fn overlaps(&self, o: &Boxed) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }
    fn inside(&self, o: &Boxed) -> bool {
        self.x0 >= o.x0 && self.x1 <= o.x1 && self.y0 >= o.y0 && self.y1 <= o.y1
    }
}

/// Places text labels next to points without overlapping each other or reserved boxes, and
/// inside the plot. A label that finds no free place is dropped (the numbers are in the
/// report's tables), never drawn over another.
pub struct Placer {
    bounds: Boxed,
    taken: Vec<Boxed>,
}

impl Placer {
    pub fn new(bounds: Boxed) -> Placer {
        Placer {
            bounds,
            taken: vec![],
        }
    }

    /// Keep labels off this box (a marker, the legend, a line label).
    pub fn reserve(&mut self, b: Boxed) {
        self.taken.push(b);
    }

    /// Take the `w` × `h` box at top-left `(x, y)` when it is inside and free.
    pub fn claim(&mut self, (x, y): (f64, f64), w: f64, h: f64) -> bool {
        let b = Boxed {
            x0: x - 2.0,
            y0: y - 1.0,
            x1: x + w + 2.0,
            y1: y + h + 1.0,
        };
        let free = b.inside(&self.bounds) && !self.taken.iter().any(|t| t.overlaps(&b));
        if free {
            self.taken.push(b);
        }
        free
    }

    /// Find a place for a `w` × `h` label near `(px, py)`; returns its top-left corner.
    pub fn place(&mut self, (px, py): (f64, f64), w: f64, h: f64) -> Option<(f64, f64)> {
        let gap = 7.0;
        let mut candidates = vec![
            (px + gap, py - gap - h),
            (px + gap, py + gap),
            (px - gap - w, py - gap - h),
            (px - gap - w, py + gap),
            (px - w / 2.0, py - 2.0 * gap - h),
            (px - w / 2.0, py + 2.0 * gap),
        ];
        for k in 1..8 {
            let dy = k as f64 * (h + 3.0);
            candidates.push((px + gap, py - gap - h - dy));
            candidates.push((px + gap, py + gap + dy));
            candidates.push((px - gap - w, py - gap - h - dy));
            candidates.push((px - gap - w, py + gap + dy));
        }
        for (x, y) in candidates {
            let b = Boxed {
                x0: x - 2.0,
                y0: y - 1.0,
                x1: x + w + 2.0,
                y1: y + h + 1.0,
            };
            if b.inside(&self.bounds) && !self.taken.iter().any(|t| t.overlaps(&b)) {
                self.taken.push(b);
                return Some((x, y));
            }
        }
        None
    }
}

/// Draw a label with a white backing at `(x, y)` (top-left) and, when it sits away from its
/// point, a thin leader line to the point.
pub fn draw_label(
    root: &Area<'_>,
    label: &str,
    (x, y): (f64, f64),
    point: (f64, f64),
    style: TextStyle<'_>,
    px: f64,
    is_bold: bool,
) -> DrawResult<()> {
    let w = width(label, px, is_bold);
    let h = px * 1.2;
    let (cx, cy) = (x + w / 2.0, y + h / 2.0);
    let far = (cx - point.0).abs() > w / 2.0 + 12.0 || (cy - point.1).abs() > h / 2.0 + 12.0;
    if far {
        // Leader from the point to the nearest edge of the label.
        let ex = point.0.clamp(x, x + w);
        let ey = point.1.clamp(y, y + h);
        root.draw(&PathElement::new(
            vec![(point.0 as i32, point.1 as i32), (ex as i32, ey as i32)],
            GREY.stroke_width(1),
        ))?;
    }
    root.draw(&Rectangle::new(
        [
            ((x - 2.0) as i32, (y - 1.0) as i32),
            ((x + w + 2.0) as i32, (y + h + 1.0) as i32),
        ],
        WHITE.mix(0.9).filled(),
    ))?;
    root.draw(&Text::new(
        label.to_string(),
        (x as i32, (y + 0.1 * px) as i32),
        style,
    ))?;
    Ok(())
}

/// Clip the polyline `points` to `y ≤ y_max` (data units), splitting it where it leaves the
/// range; plotters does not clip lines to the plot.
pub fn clip_above(points: &[(f64, f64)], y_max: f64) -> Vec<Vec<(f64, f64)>> {
    let mut parts: Vec<Vec<(f64, f64)>> = vec![];
    let mut cur: Vec<(f64, f64)> = vec![];
    for (i, &(x, y)) in points.iter().enumerate() {
        let inside = y <= y_max;
        if i > 0 {
            let (px, py) = points[i - 1];
            let was_inside = py <= y_max;
            if inside != was_inside && (y - py).abs() > 0.0 {
                let t = (y_max - py) / (y - py);
                let cross = (px + t * (x - px), y_max);
                cur.push(cross);
                if was_inside {
                    parts.push(std::mem::take(&mut cur));
                }
            }
        }
        if inside {
            cur.push((x, y));
        }
    }
    if cur.len() > 1 {
        parts.push(cur);
    }
    parts.retain(|p| p.len() > 1);
    parts
}

/// Make a file-name-safe slug: "AWS p5.48xlarge (2023)" → "aws-p5-48xlarge-2023".
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_matches('-').to_string();
    if out.is_empty() { "tier".into() } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_axes_cover_the_data_with_round_ticks() {
        let a = nice_axis(0.0, 1_027_943.0, 5);
        assert_eq!(a.step, 250_000.0);
        assert_eq!(a.max, 1_250_000.0);
        assert_eq!(a.ticks.first(), Some(&0.0));
        let flat = nice_axis(0.0, 0.0, 5);
        assert!(flat.max > 0.0 && flat.ticks.len() >= 2);
        let nan = nice_axis(f64::NAN, f64::INFINITY, 5);
        assert!(nan.max > nan.min);
        let a = nice_axis(0.0, 24.0, 6);
        assert_eq!(a.step, 5.0);
    }

    #[test]
    fn placer_never_overlaps_and_stays_inside() {
        let bounds = Boxed {
            x0: 0.0,
            y0: 0.0,
            x1: 300.0,
            y1: 200.0,
        };
        let mut p = Placer::new(bounds);
        let mut placed = vec![];
        for _ in 0..12 {
            if let Some((x, y)) = p.place((150.0, 100.0), 60.0, 14.0) {
                placed.push(Boxed {
                    x0: x,
                    y0: y,
                    x1: x + 60.0,
                    y1: y + 14.0,
                });
            }
        }
        assert!(placed.len() >= 8);
        for (i, a) in placed.iter().enumerate() {
            assert!(a.x0 >= 0.0 && a.x1 <= 300.0 && a.y0 >= 0.0 && a.y1 <= 200.0);
            for b in &placed[i + 1..] {
                assert!(!a.overlaps(b), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn clipping_splits_lines_at_the_top() {
        let parts = clip_above(&[(0.0, 0.0), (1.0, 2.0), (2.0, 0.0)], 1.0);
        assert_eq!(
            parts,
            vec![vec![(0.0, 0.0), (0.5, 1.0)], vec![(1.5, 1.0), (2.0, 0.0)]]
        );
        assert!(clip_above(&[(0.0, 5.0), (1.0, 6.0)], 1.0).is_empty());
        assert!(clip_above(&[], 1.0).is_empty());
    }

    #[test]
    fn slugs_are_file_safe() {
        assert_eq!(
            slug("AWS p5.48xlarge (2023 prices)"),
            "aws-p5-48xlarge-2023-prices"
        );
        assert_eq!(slug("…"), "tier");
    }
}
