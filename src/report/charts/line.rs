//! The line chart most charts are: numeric x and y axes with round ticks, lines with markers,
//! reference rules (an SLO bound, a planned peak), annotated points placed so that no two
//! labels overlap, and an optional right-hand axis for a second unit.
//!
//! Series are drawn in the primary coordinates; a series on the right axis is rescaled into
//! them, and the right axis is drawn by hand. That keeps one coordinate system, so markers,
//! labels and lines always agree.

use plotters::prelude::*;
use plotters::style::FontTransform;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::draw::{self, Area, Axis, Boxed, DrawResult, Head, Marker, Placer};
use crate::format;

/// Formats a tick value.
pub type Fmt = Box<dyn Fn(f64) -> String>;

/// One axis: range, ticks, tick format and description (with its unit).
pub struct AxisSpec {
    pub axis: Axis,
    pub fmt: Fmt,
    pub desc: String,
}

/// A dollar axis from 0 to about `max` with six round ticks, labelled in one unit ("$250k").
pub fn money_axis(max: f64, desc: &str) -> AxisSpec {
    let axis = draw::nice_axis(0.0, max, 6);
    let (step, top) = (axis.step, axis.max);
    AxisSpec {
        axis,
        fmt: Box::new(move |v| format::usd_tick(v, step, top)),
        desc: desc.into(),
    }
}

/// One line.
pub struct Line {
    pub color: RGBColor,
    /// Markers at the points (on every k-th point of a dense line).
    pub marker: Option<Marker>,
    pub dashed: bool,
    pub width: u32,
    pub points: Vec<(f64, f64)>,
    /// Plotted against the right-hand axis.
    pub secondary: bool,
    /// Fill the area under the line with a tint of its colour.
    pub fill: bool,
    /// Where the markers go when not at every point (a step line marks the step centres).
    pub marker_at: Option<Vec<(f64, f64)>>,
}

impl Line {
    pub fn new(color: RGBColor, points: Vec<(f64, f64)>) -> Line {
        Line {
            color,
            marker: None,
            dashed: false,
            width: 3,
            points,
            secondary: false,
            fill: false,
            marker_at: None,
        }
    }
}

/// A horizontal or vertical reference line with a label.
pub struct Rule {
    pub vertical: bool,
    pub at: f64,
    pub label: String,
    pub color: RGBColor,
}

/// An annotated point: a ring and a label placed nearby (none when `label` is empty).
pub struct Mark {
    pub at: (f64, f64),
    pub label: String,
    pub color: RGBColor,
    /// Plotted against the right-hand axis.
    pub secondary: bool,
    /// A dot filled with `color` inside the ring (an operating point), not a bare ring.
    pub filled: bool,
}

/// A whole line chart.
pub struct LineChart {
    pub head: Head,
    pub x: AxisSpec,
    pub y: AxisSpec,
    pub y2: Option<AxisSpec>,
    pub lines: Vec<Line>,
    pub rules: Vec<Rule>,
    pub marks: Vec<Mark>,
    pub height: u32,
}

/// Lines with more points than this get markers spaced at least [`MARKER_GAP`] apart.
const MARKERS_UP_TO: usize = 24;
/// Least distance between two markers of a dense line [SVG units].
const MARKER_GAP: i32 = 36;

fn dashed_path(
    root: &Area<'_>,
    pts: &[(i32, i32)],
    style: ShapeStyle,
    on: f64,
    off: f64,
) -> DrawResult<()> {
    // Dashes are the intervals [k·period, k·period + on] of the distance along the whole
    // polyline, so the pattern runs on across corners.
    let period = on + off;
    let mut start = 0.0;
    for w in pts.windows(2) {
        let (a, b) = (w[0], w[1]);
        let (dx, dy) = ((b.0 - a.0) as f64, (b.1 - a.1) as f64);
        let len = (dx * dx + dy * dy).sqrt();
        let end = start + len;
        let p = |d: f64| {
            let t = if len > 0.0 { (d - start) / len } else { 0.0 };
            (
                (a.0 as f64 + dx * t).round() as i32,
                (a.1 as f64 + dy * t).round() as i32,
            )
        };
        let mut k = (start / period).floor();
        while k * period < end {
            let (s0, s1) = ((k * period).max(start), (k * period + on).min(end));
            if s1 > s0 {
                root.draw(&PathElement::new(vec![p(s0), p(s1)], style))?;
            }
            k += 1.0;
        }
        start = end;
    }
    Ok(())
}

/// Draw `c` as an SVG document.
pub fn render(c: &LineChart) -> DrawResult<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (draw::WIDTH, c.height)).into_drawing_area();
        let rect = draw::frame(&root, &c.head)?;
        let area = draw::plot_area(&root, rect);
        let y_labels: Vec<String> = c.y.axis.ticks.iter().map(|v| (c.y.fmt)(*v)).collect();
        let y_area = draw::widest(y_labels, draw::TICK_PX) + draw::AXIS_PX * 1.5 + 16.0;
        let y2_area = c.y2.as_ref().map(|s| {
            let l: Vec<String> = s.axis.ticks.iter().map(|v| (s.fmt)(*v)).collect();
            draw::widest(l, draw::TICK_PX) + draw::AXIS_PX * 1.5 + 16.0
        });
        let x_area = draw::TICK_PX * 1.3 + draw::AXIS_PX * 1.5 + 14.0;
        let (x, y) = (&c.x.axis, &c.y.axis);
        let mut chart = ChartBuilder::on(&area)
            .margin_top(8)
            // The right-hand axis is drawn by hand in the margin: a plotters right label area
            // would repeat the left axis's labels there.
            .margin_right(y2_area.map_or(16.0, |w| w + 4.0) as u32)
            .x_label_area_size(x_area as u32)
            .y_label_area_size(y_area as u32)
            .build_cartesian_2d(x.clone(), y.clone())?;
        let xf = |v: &f64| (c.x.fmt)(*v);
        let yf = |v: &f64| (c.y.fmt)(*v);
        draw::house_mesh(&mut chart.configure_mesh())
            .x_desc(c.x.desc.as_str())
            .y_desc(c.y.desc.as_str())
            .x_label_formatter(&xf)
            .y_label_formatter(&yf)
            .draw()?;

        let (px, py) = chart.plotting_area().get_pixel_range();
        let bounds = Boxed {
            x0: px.start as f64,
            y0: py.start as f64,
            x1: px.end as f64,
            y1: py.end as f64,
        };
        // Right-hand values are rescaled into the left axis's range.
        let to_primary = |v: f64| match &c.y2 {
            Some(s) if s.axis.max > s.axis.min => {
                y.min + (v - s.axis.min) / (s.axis.max - s.axis.min) * (y.max - y.min)
            }
            _ => v,
        };
        let pixel = |p: (f64, f64), secondary: bool| -> (i32, i32) {
            let v = if secondary { to_primary(p.1) } else { p.1 };
            chart.backend_coord(&(p.0, v))
        };

        if let Some(s) = &c.y2 {
            draw_right_axis(&root, s, &pixel, bounds)?;
        }

        // Rules first, so lines sit on top of them. Every vertical rule's strip is kept free
        // before any label is placed, so no label sits across a rule (the year-5 peak through
        // the SLO label).
        let mut placer = Placer::new(bounds);
        let inside = |r: &Rule| {
            if r.vertical {
                r.at >= x.min && r.at <= x.max
            } else {
                r.at >= y.min && r.at <= y.max
            }
        };
        let ends = |r: &Rule| {
            if r.vertical {
                (pixel((r.at, y.min), false), pixel((r.at, y.max), false))
            } else {
                (pixel((x.min, r.at), false), pixel((x.max, r.at), false))
            }
        };
        for r in c.rules.iter().filter(|r| inside(r)) {
            let (a, b) = ends(r);
            dashed_path(&root, &[a, b], r.color.stroke_width(2), 8.0, 5.0)?;
            if r.vertical {
                placer.reserve(Boxed {
                    x0: a.0 as f64 - 2.0,
                    y0: b.1 as f64,
                    x1: a.0 as f64 + 2.0,
                    y1: a.1 as f64,
                });
            } else {
                placer.reserve(Boxed {
                    x0: a.0 as f64,
                    y0: a.1 as f64 - 1.0,
                    x1: b.0 as f64,
                    y1: a.1 as f64 + 1.0,
                });
            }
        }
        // Where the lines run, sampled every few units, so a rule's label can keep off them.
        let mut on_lines: Vec<Boxed> = vec![];
        for l in &c.lines {
            let pts: Vec<(f64, f64)> = l
                .points
                .iter()
                .filter(|p| p.0.is_finite() && p.1.is_finite())
                .map(|&(a, b)| (a, if l.secondary { to_primary(b) } else { b }))
                .collect();
            for part in draw::clip_above(&pts, y.max) {
                for w in part.windows(2) {
                    let (p0, p1) = (pixel(w[0], false), pixel(w[1], false));
                    let (dx, dy) = ((p1.0 - p0.0) as f64, (p1.1 - p0.1) as f64);
                    let n = ((dx * dx + dy * dy).sqrt() / 3.0).ceil().max(1.0) as usize;
                    for i in 0..=n {
                        let t = i as f64 / n as f64;
                        let (qx, qy) = (p0.0 as f64 + t * dx, p0.1 as f64 + t * dy);
                        on_lines.push(Boxed {
                            x0: qx - 2.0,
                            y0: qy - 2.0,
                            x1: qx + 2.0,
                            y1: qy + 2.0,
                        });
                    }
                }
            }
        }
        let clear_of_lines = |(x0, y0): (f64, f64), w: f64, h: f64| {
            let b = Boxed {
                x0: x0 - 2.0,
                y0: y0 - 1.0,
                x1: x0 + w + 2.0,
                y1: y0 + h + 1.0,
            };
            !on_lines.iter().any(|t| t.overlaps(&b))
        };
        // Horizontal rules first (the SLO), then vertical ones; labels are drawn after the
        // lines, on top.
        let mut rule_labels: Vec<(&Rule, (f64, f64))> = vec![];
        let mut order: Vec<&Rule> = c
            .rules
            .iter()
            .filter(|r| inside(r) && !r.vertical)
            .collect();
        order.extend(c.rules.iter().filter(|r| inside(r) && r.vertical));
        for r in order {
            let (a, b) = ends(r);
            let w = draw::width(&r.label, draw::NOTE_PX, false);
            let h = draw::NOTE_PX * 1.2;
            // A horizontal rule is labelled above the line, at its left end where rising curves
            // (latency against load, cumulative cost) are still low, else at its right end, else
            // below; a vertical one at its top, right of the line, else left of it.
            let tries: Vec<(f64, f64)> = if r.vertical {
                vec![
                    (b.0 as f64 + 5.0, b.1 as f64 + 4.0),
                    (b.0 as f64 - 5.0 - w - 4.0, b.1 as f64 + 4.0),
                ]
            } else {
                vec![
                    (a.0 as f64 + 8.0, a.1 as f64 - h - 4.0),
                    (b.0 as f64 - 8.0 - w, a.1 as f64 - h - 4.0),
                    (a.0 as f64 + 8.0, a.1 as f64 + 4.0),
                    (b.0 as f64 - 8.0 - w, a.1 as f64 + 4.0),
                ]
            };
            let spot = tries
                .into_iter()
                .find(|&p| clear_of_lines(p, w, h) && placer.claim(p, w, h))
                .or_else(|| placer.place((b.0 as f64, b.1 as f64), w, h));
            if let Some(spot) = spot {
                rule_labels.push((r, spot));
            }
        }

        // Lines, clipped to the top of the plot; the first line is drawn last, on top, so the
        // main series is not hidden under a later one that runs close to it.
        for l in c.lines.iter().rev() {
            let pts: Vec<(f64, f64)> = l
                .points
                .iter()
                .filter(|p| p.0.is_finite() && p.1.is_finite())
                .map(|&(a, b)| (a, if l.secondary { to_primary(b) } else { b }))
                .collect();
            if l.fill && pts.len() > 1 {
                let mut poly: Vec<(i32, i32)> = pts
                    .iter()
                    .map(|&(a, b)| chart.backend_coord(&(a, b.min(y.max))))
                    .collect();
                if let (Some(first), Some(last)) = (pts.first(), pts.last()) {
                    poly.push(chart.backend_coord(&(last.0, y.min.max(0.0))));
                    poly.push(chart.backend_coord(&(first.0, y.min.max(0.0))));
                }
                root.draw(&Polygon::new(poly, l.color.mix(0.18).filled()))?;
            }
            for part in draw::clip_above(&pts, y.max) {
                let px_pts: Vec<(i32, i32)> = part.iter().map(|p| chart.backend_coord(p)).collect();
                let style = l.color.stroke_width(l.width);
                if l.dashed {
                    dashed_path(&root, &px_pts, style, 9.0, 6.0)?;
                } else {
                    root.draw(&PathElement::new(px_pts, style))?;
                }
            }
            if let Some(m) = l.marker {
                let at: Vec<(f64, f64)> = match &l.marker_at {
                    Some(v) => v
                        .iter()
                        .map(|&(a, b)| (a, if l.secondary { to_primary(b) } else { b }))
                        .collect(),
                    None => pts.clone(),
                };
                // Markers tell series apart; on a dense line they are spaced out along it so
                // they do not pile up where the points crowd.
                let mut last: Option<(i32, i32)> = None;
                {
                    for p in at.iter().filter(|p| p.1 <= y.max) {
                        let (mx, my) = chart.backend_coord(p);
                        if at.len() > MARKERS_UP_TO
                            && last.is_some_and(|(lx, ly)| {
                                ((lx - mx).pow(2) + (ly - my).pow(2)) < MARKER_GAP * MARKER_GAP
                            })
                        {
                            continue;
                        }
                        last = Some((mx, my));
                        draw::draw_marker(&root, m, (mx, my), l.color, 4)?;
                        placer.reserve(Boxed {
                            x0: mx as f64 - 5.0,
                            y0: my as f64 - 5.0,
                            x1: mx as f64 + 5.0,
                            y1: my as f64 + 5.0,
                        });
                    }
                }
            }
        }

        for (r, spot) in rule_labels {
            draw::draw_label(
                &root,
                &r.label,
                spot,
                spot,
                draw::text(draw::NOTE_PX, r.color),
                draw::NOTE_PX,
                false,
            )?;
        }

        // Annotated points: a ring on the point, the label where it fits.
        for m in &c.marks {
            if m.at.1 > y.max && !m.secondary {
                continue;
            }
            let (mx, my) = pixel(m.at, m.secondary);
            if m.filled {
                root.draw(&Circle::new((mx, my), 6, m.color.filled()))?;
            }
            root.draw(&Circle::new((mx, my), 7, BLACK.stroke_width(2)))?;
            placer.reserve(Boxed {
                x0: mx as f64 - 8.0,
                y0: my as f64 - 8.0,
                x1: mx as f64 + 8.0,
                y1: my as f64 + 8.0,
            });
        }
        // Marks within a few units of each other share one label ("year 1.1 / 1.2"); a mark
        // with an empty label is a ring alone.
        let mut labels: Vec<((i32, i32), Vec<String>, RGBColor)> = vec![];
        for m in &c.marks {
            if (m.at.1 > y.max && !m.secondary) || m.label.is_empty() {
                continue;
            }
            let p = pixel(m.at, m.secondary);
            match labels
                .iter_mut()
                .find(|(q, _, _)| (q.0 - p.0).abs() <= 12 && (q.1 - p.1).abs() <= 12)
            {
                Some((_, texts, _)) => {
                    if !texts.contains(&m.label) {
                        texts.push(m.label.clone());
                    }
                }
                None => labels.push((p, vec![m.label.clone()], m.color)),
            }
        }
        for ((mx, my), texts, color) in labels {
            let label = texts.join(" / ");
            let w = draw::width(&label, draw::NOTE_PX, true);
            let h = draw::NOTE_PX * 1.2;
            if let Some(spot) = placer.place((mx as f64, my as f64), w, h) {
                draw::draw_label(
                    &root,
                    &label,
                    spot,
                    (mx as f64, my as f64),
                    draw::bold(draw::NOTE_PX, color),
                    draw::NOTE_PX,
                    true,
                )?;
            }
        }
        root.present()?;
    }
    Ok(svg)
}

/// Ticks, labels and description of the right-hand axis.
fn draw_right_axis(
    root: &Area<'_>,
    s: &AxisSpec,
    pixel: &dyn Fn((f64, f64), bool) -> (i32, i32),
    bounds: Boxed,
) -> DrawResult<()> {
    let x = bounds.x1 as i32;
    root.draw(&PathElement::new(
        vec![(x, bounds.y0 as i32), (x, bounds.y1 as i32)],
        draw::AXIS.stroke_width(1),
    ))?;
    let mut widest: f64 = 0.0;
    for &t in &s.axis.ticks {
        let (_, ty) = pixel((0.0, t), true);
        root.draw(&PathElement::new(
            vec![(x, ty), (x + 5, ty)],
            draw::AXIS.stroke_width(1),
        ))?;
        let label = (s.fmt)(t);
        widest = widest.max(draw::width(&label, draw::TICK_PX, false));
        root.draw(&Text::new(
            label,
            (x + 8, ty),
            draw::text(draw::TICK_PX, draw::INK).pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
    // Read bottom to top like the left axis; rotated by 270°, a top-anchored text lies to the
    // right of its anchor, clear of the tick labels.
    let mid = ((bounds.y0 + bounds.y1) / 2.0) as i32;
    let dx = x + widest as i32 + 14;
    root.draw(&Text::new(
        s.desc.clone(),
        (dx, mid),
        draw::text(draw::AXIS_PX, draw::INK)
            .transform(FontTransform::Rotate270)
            .pos(Pos::new(HPos::Center, VPos::Top)),
    ))?;
    Ok(())
}
