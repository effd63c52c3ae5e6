//! The tornado chart (issue 12): for the recommended option against the runner-up, one row per
//! uncertain input, widest swing at the top, with two bars from the base margin (runner-up −
//! recommended, net present cost) to the margin with the input at its low end and at its high
//! end, every other input at base. A zero line marks where the choice flips.
//!
//! Every figure is read from `results.sensitivity`; nothing is re-costed here. Without a
//! runner-up the bars show the recommended option's own net present cost instead.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::draw::{self, DrawResult, Head, LegendEntry, Swatch};
use super::{Built, ChartError, Context, Drawn, Skipped, draw_error, option_name};
use crate::format;
use crate::results::RunResults;
use crate::uncertainty::{FlipPoint, OptionRef, Sensitivity, TornadoRow};

/// File stem of the chart.
pub const NAME: &str = "tornado";
/// Rows drawn (and shown in the PDF's table); the rest are in `sensitivity.csv`.
pub const SHOWN: usize = 12;

/// Colour of the bar with the input at its low end, and at its high end.
const LOW: RGBColor = draw::OKABE_ITO[0];
const HIGH: RGBColor = draw::OKABE_ITO[1];
/// The zero line: where the choice flips.
const FLIP: RGBColor = draw::OKABE_ITO[3];

/// An input's path split for a label: the tier (or `costs`, `traffic`, …) it belongs to and the
/// field inside it. `tier.On-prem 8x H100.price.purchase_usd` → ("On-prem 8x H100",
/// "price.purchase_usd"); tier names may hold dots, so they are matched against the run's tiers.
pub(crate) fn split_input<'a>(path: &'a str, results: &RunResults) -> (&'a str, &'a str) {
    if let Some(rest) = path.strip_prefix("tier.") {
        // The longest tier name that prefixes the rest (one name may prefix another).
        let hit = results
            .tiers
            .iter()
            .filter(|t| {
                rest.strip_prefix(t.name.as_str())
                    .is_some_and(|r| r.starts_with('.'))
            })
            .map(|t| t.name.len())
            .max();
        if let Some(n) = hit {
            return (&rest[..n], &rest[n + 1..]);
        }
    }
    match path.split_once('.') {
        Some((scope, field)) => (scope, field),
        None => ("", path),
    }
}

/// How a title or sentence names an input: "On-prem 8x H100 price.purchase_usd",
/// "costs.discount_rate".
pub(crate) fn input_name(path: &str, results: &RunResults) -> String {
    if path.starts_with("tier.") {
        let (tier, field) = split_input(path, results);
        format!("{tier} {field}")
    } else {
        path.to_string()
    }
}

/// What the bars measure: the margin (runner-up − recommended) or, without a runner-up, the
/// recommended option's net present cost.
pub(crate) struct Measure<'a> {
    pub sensitivity: &'a Sensitivity,
    /// The figure at the base inputs [USD].
    pub base: f64,
    pub with_runner_up: bool,
}

impl<'a> Measure<'a> {
    /// The tornado's measure for `results`, if the analysis ran.
    pub fn of(results: &'a RunResults) -> Option<Measure<'a>> {
        let s = results.sensitivity.as_ref()?;
        let npc = |o: &OptionRef| {
            results
                .tiers
                .iter()
                .find(|t| t.name == o.tier)
                .and_then(|t| t.options.iter().find(|x| x.option == o.option))
                .map(|x| x.net_present_cost_usd)
        };
        let best = npc(&s.best)?;
        match &s.runner_up {
            Some(ru) => {
                // The recommendation's own margin where it names the same runner-up.
                let margin = results
                    .recommendation
                    .as_ref()
                    .filter(|r| {
                        r.runner_up
                            .as_ref()
                            .is_some_and(|c| c.tier == ru.tier && c.option == ru.option)
                    })
                    .and_then(|r| r.margin_usd);
                let base = match margin {
                    Some(m) => m,
                    None => npc(ru)? - best,
                };
                Some(Measure {
                    sensitivity: s,
                    base,
                    with_runner_up: true,
                })
            }
            None => Some(Measure {
                sensitivity: s,
                base: best,
                with_runner_up: false,
            }),
        }
    }

    /// The figure with the row's input at its low and at its high end.
    pub fn ends(&self, row: &TornadoRow) -> (Option<f64>, Option<f64>) {
        if self.with_runner_up {
            (row.difference_low_usd, row.difference_high_usd)
        } else {
            (row.best_npv_low_usd, row.best_npv_high_usd)
        }
    }

    /// The rows drawn: the widest [`SHOWN`] that move the figure at all, with their flip points.
    pub fn shown(&self) -> Vec<(&'a TornadoRow, &'a FlipPoint)> {
        self.sensitivity
            .tornado
            .iter()
            .zip(&self.sensitivity.flip_points)
            .filter(|(r, _)| r.swing_usd > 0.0)
            .take(SHOWN)
            .collect()
    }

    /// "runner-up AWS p5.48xlarge · reserved-3y − recommended On-prem 8x H100 · on-prem".
    pub fn what(&self) -> String {
        let s = self.sensitivity;
        match &s.runner_up {
            Some(ru) if self.with_runner_up => format!(
                "runner-up {} − recommended {}",
                option_name(&ru.tier, ru.option),
                option_name(&s.best.tier, s.best.option)
            ),
            _ => format!("recommended {}", option_name(&s.best.tier, s.best.option)),
        }
    }
}

/// The finding: which input moves the margin most, and whether anything within its range flips
/// the choice (the widest-swing input that flips, with its value).
pub(crate) fn finding(results: &RunResults, m: &Measure<'_>) -> Option<String> {
    let shown = m.shown();
    let (top, top_flip) = shown.first()?;
    let name = input_name(&top.input, results);
    let pct = format::change_text;
    let flip_at = |f: &FlipPoint| {
        let value = format!(
            "{} {}",
            format::figures3(f.value.unwrap_or(f.base_value)),
            f.unit
        );
        match f.change_fraction {
            Some(c) => format!("{value} ({})", pct(c)),
            None => value,
        }
    };
    if !m.with_runner_up {
        return Some(format!(
            "{name} moves the recommended option's net present cost most"
        ));
    }
    let flips = |f: &FlipPoint| f.flips;
    Some(if flips(top_flip) {
        format!(
            "{name} moves the margin most, and flips the choice at {}",
            flip_at(top_flip)
        )
    } else if let Some(f) = m.sensitivity.flip_points.iter().find(|f| flips(f)) {
        format!(
            "{name} moves the margin most; {} flips the choice at {}",
            input_name(&f.input, results),
            flip_at(f)
        )
    } else {
        format!("{name} moves the margin most; nothing within its range flips the choice")
    })
}

/// One row's bar ends, as drawn.
struct Bar {
    value: Option<f64>,
    /// The input's value at that end.
    input: f64,
    color: RGBColor,
    /// Upper (low end) or lower (high end) half of the row, as a y offset in rows.
    y0: f64,
    y1: f64,
    /// Which way the bar goes when it has no length: −1 left, +1 right.
    default_dir: f64,
}

pub(super) fn tornado(ctx: &Context<'_>) -> Result<Built, ChartError> {
    let what = "the margin at each uncertain input's low and high end";
    let Some(m) = Measure::of(ctx.results) else {
        return Ok(Err(Skipped::new(
            NAME,
            what,
            "the uncertainty analysis did not run (no input with a range, --no-uncertainty, or \
             no recommendation)",
        )));
    };
    let rows = m.shown();
    let Some(title) = finding(ctx.results, &m) else {
        return Ok(Err(Skipped::new(
            NAME,
            what,
            &format!(
                "none of the {} uncertain inputs moves the ranking figure within its range",
                m.sensitivity.tornado.len()
            ),
        )));
    };
    let total = m.sensitivity.tornado.len();
    let hidden = total - rows.len();
    let n = rows.len();
    let base = m.base;
    let subtitle = format!(
        "{} (net present cost), each input at its low and high end, the others at base; base {}.",
        first_upper(&m.what()),
        format::usd(base)
    );
    let head = Head {
        title: title.clone(),
        subtitle,
        legend: vec![
            LegendEntry {
                label: "input at its low end".into(),
                color: LOW,
                swatch: Swatch::Box,
            },
            LegendEntry {
                label: "input at its high end".into(),
                color: HIGH,
                swatch: Swatch::Box,
            },
            LegendEntry {
                label: if m.with_runner_up {
                    "zero: the runner-up becomes cheaper (flips)".into()
                } else {
                    "zero".into()
                },
                color: FLIP,
                swatch: Swatch::Dashed,
            },
        ],
        footer: ctx.footer.clone(),
    };
    let bars: Vec<[Bar; 2]> = rows
        .iter()
        .map(|(r, _)| {
            let (lo, hi) = m.ends(r);
            [
                Bar {
                    value: lo,
                    input: r.low_value,
                    color: LOW,
                    y0: 0.56,
                    y1: 0.92,
                    default_dir: -1.0,
                },
                Bar {
                    value: hi,
                    input: r.high_value,
                    color: HIGH,
                    y0: 0.08,
                    y1: 0.44,
                    default_dir: 1.0,
                },
            ]
        })
        .collect();
    let labels: Vec<(String, String)> = rows
        .iter()
        .map(|(r, _)| {
            let (scope, field) = split_input(&r.input, ctx.results);
            // The unit first: it is what the bar-end values need, and survives an ellipsis.
            let scope = if scope.is_empty() {
                r.unit.clone()
            } else {
                format!("{} · {scope}", r.unit)
            };
            (field.to_string(), scope)
        })
        .collect();
    let x_desc = if m.with_runner_up {
        "Runner-up − recommended, net present cost (USD)"
    } else {
        "Net present cost of the recommended option (USD)"
    };
    // Room for a two-line title and subtitle, the zero and base labels, the axis, the legend and
    // the footer, then 44 units a row: the two value labels of a row stay 21 units apart.
    let height = (280 + n * 44).max(380) as u32;
    let render = || -> DrawResult<String> {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (draw::WIDTH, height)).into_drawing_area();
            let rect = draw::frame(&root, &head)?;
            let area = draw::plot_area(&root, rect);
            let label_w = (rect.w * 0.34).round();
            let labels: Vec<(String, String)> = labels
                .iter()
                .map(|(a, b)| {
                    (
                        crate::report::fonts::ellipsize(
                            a,
                            (label_w - 12.0) as f32,
                            draw::TICK_PX as f32,
                            false,
                        ),
                        crate::report::fonts::ellipsize(
                            b,
                            (label_w - 12.0) as f32,
                            draw::FOOTER_PX as f32,
                            false,
                        ),
                    )
                })
                .collect();
            // The value labels at the bar ends need room beyond the longest bars.
            let value_text = |v: f64| format::figures3(v);
            let widest = bars
                .iter()
                .flatten()
                .map(|b| draw::width(&value_text(b.input), draw::NOTE_PX, false))
                .fold(0.0, f64::max);
            let mut lo = base.min(0.0);
            let mut hi = base.max(0.0);
            for b in bars.iter().flatten() {
                if let Some(v) = b.value.filter(|v| v.is_finite()) {
                    lo = lo.min(v);
                    hi = hi.max(v);
                }
            }
            let plot_px = (rect.w - label_w - 24.0).max(100.0);
            let pad = ((widest + 12.0) / plot_px).min(0.3);
            let span = (hi - lo).max(1.0);
            let grow = span * pad / (1.0 - 2.0 * pad);
            let axis = draw::nice_axis(lo - grow, hi + grow, 5);
            let (step, top) = (axis.step, axis.max.abs().max(axis.min.abs()));
            let mut chart = ChartBuilder::on(&area)
                .margin_top(38)
                .margin_right(16)
                .x_label_area_size((draw::TICK_PX * 1.3 + draw::AXIS_PX * 1.5 + 14.0) as u32)
                .y_label_area_size(label_w as u32)
                .build_cartesian_2d(axis.clone(), draw::fixed_axis(0.0, n as f64, vec![]))?;
            let xf = |v: &f64| format::usd_tick(*v, step, top);
            draw::house_mesh(&mut chart.configure_mesh())
                .disable_y_mesh()
                .x_label_formatter(&xf)
                .x_desc(x_desc)
                .draw()?;
            let (px, py) = chart.plotting_area().get_pixel_range();
            let (left, right) = (px.start as f64, px.end as f64);
            let coord = chart.as_coord_spec().clone();
            let at = |x: f64, y: f64| {
                use plotters::coord::CoordTranslate;
                coord.translate(&(x, y))
            };
            let anchor = |h: HPos| Pos::new(h, VPos::Center);

            // Zero (where the choice flips) and the base margin, labelled above the plot on
            // two lines so the labels never meet.
            let (zx, _) = at(0.0, 0.0);
            let (bx, _) = at(base, 0.0);
            let (top_y, bottom_y) = (py.start, py.end);
            if axis.min < 0.0 && axis.max > 0.0 {
                let mut y = top_y - 20;
                while y < bottom_y {
                    root.draw(&PathElement::new(
                        vec![(zx, y), (zx, (y + 6).min(bottom_y))],
                        FLIP.stroke_width(2),
                    ))?;
                    y += 10;
                }
                let crossed = m.with_runner_up
                    && bars
                        .iter()
                        .flatten()
                        .any(|b| b.value.is_some_and(|v| (v < 0.0) != (base < 0.0)));
                let label = if crossed {
                    "flips here"
                } else if m.with_runner_up {
                    "flips at 0"
                } else {
                    "0"
                };
                text_near(
                    &root,
                    label,
                    zx as f64,
                    (top_y - 28) as f64,
                    left,
                    right,
                    FLIP,
                    true,
                )?;
            }
            root.draw(&PathElement::new(
                vec![(bx, top_y - 12), (bx, bottom_y)],
                draw::INK.stroke_width(1),
            ))?;
            text_near(
                &root,
                &format!("base {}", format::usd(base)),
                bx as f64,
                (top_y - 10) as f64,
                left,
                right,
                draw::INK,
                false,
            )?;

            for (i, ((row_bars, (name, scope)), _)) in
                bars.iter().zip(&labels).zip(&rows).enumerate()
            {
                let y0 = (n - 1 - i) as f64;
                // The row's label, two lines, right-aligned against the plot.
                let (_, cy) = at(0.0, y0 + 0.5);
                root.draw(&Text::new(
                    name.clone(),
                    ((left - 10.0) as i32, cy - 8),
                    draw::text(draw::TICK_PX, draw::INK).pos(anchor(HPos::Right)),
                ))?;
                root.draw(&Text::new(
                    scope.clone(),
                    ((left - 10.0) as i32, cy + 8),
                    draw::text(draw::FOOTER_PX, draw::GREY).pos(anchor(HPos::Right)),
                ))?;
                for b in row_bars {
                    let (_, ly) = at(0.0, y0 + (b.y0 + b.y1) / 2.0);
                    let label = value_text(b.input);
                    let w = draw::width(&label, draw::NOTE_PX, false);
                    let Some(v) = b.value.filter(|v| v.is_finite()) else {
                        // The tier (or the runner-up's) no longer meets the contract there.
                        let text = format!("{label}: no fleet meets the SLO");
                        let tw = draw::width(&text, draw::NOTE_PX, false);
                        let x = if b.default_dir > 0.0 {
                            (bx as f64 + 6.0).min(right - tw - 2.0)
                        } else {
                            (bx as f64 - 6.0 - tw).max(left + 2.0)
                        };
                        root.draw(&Text::new(
                            text,
                            (x as i32, ly),
                            draw::text(draw::NOTE_PX, draw::GREY).pos(anchor(HPos::Left)),
                        ))?;
                        continue;
                    };
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(base.min(v), y0 + b.y0), (base.max(v), y0 + b.y1)],
                        b.color.filled(),
                    )))?;
                    let (ex, _) = at(v, 0.0);
                    let ex = ex as f64;
                    let dir = if (v - base).abs() > 0.0 {
                        (v - base).signum()
                    } else {
                        b.default_dir
                    };
                    let bar_px = (ex - bx as f64).abs();
                    // Outside the bar's end; else inside it, in white; else beyond the base.
                    let outside = if dir > 0.0 { ex + 5.0 } else { ex - 5.0 - w };
                    let inside = if dir > 0.0 { ex - 5.0 - w } else { ex + 5.0 };
                    let beyond = if dir > 0.0 {
                        bx as f64 - 5.0 - w
                    } else {
                        bx as f64 + 5.0
                    };
                    let fits = |x: f64| x >= left + 1.0 && x + w <= right - 1.0;
                    let place = if fits(outside) {
                        Some((outside, draw::INK))
                    } else if bar_px >= w + 10.0 && fits(inside) {
                        Some((inside, WHITE))
                    } else if fits(beyond) {
                        Some((beyond, draw::INK))
                    } else {
                        None
                    };
                    if let Some((x, color)) = place {
                        if color != WHITE {
                            backing(&root, x, ly as f64, w)?;
                        }
                        root.draw(&Text::new(
                            label,
                            (x as i32, ly),
                            draw::text(draw::NOTE_PX, color).pos(anchor(HPos::Left)),
                        ))?;
                    }
                }
            }
            root.present()?;
        }
        Ok(svg)
    };
    let svg = render().map_err(draw_error(NAME))?;
    let not_shown = if hidden == 0 {
        format!("All {total} uncertain inputs are shown.")
    } else {
        format!(
            "{n} of {total} uncertain inputs are shown; the {hidden} not shown move it by \
             less (or not at all) and are listed in sensitivity.csv."
        )
    };
    let caption = format!(
        "Which inputs could change the answer? Each row takes one uncertain input to the low \
         and the high end of its range (the values at the bar ends, in the unit under its name) \
         with every other input at base, and shows {} in net present cost, the figure options \
         are ranked on{}. The widest swing is at the top. {not_shown}",
        if m.with_runner_up {
            "the margin of the runner-up over the recommended option"
        } else {
            "the recommended option's own cost"
        },
        if m.with_runner_up {
            "; a bar that crosses zero flips the choice"
        } else {
            ""
        }
    );
    Ok(Ok(vec![Drawn {
        name: NAME.into(),
        title,
        caption,
        svg,
    }]))
}

fn first_upper(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// A label centred on `x` (kept between `left` and `right`) with its middle at `y`.
#[allow(clippy::too_many_arguments)]
fn text_near(
    root: &draw::Area<'_>,
    label: &str,
    x: f64,
    y: f64,
    left: f64,
    right: f64,
    color: RGBColor,
    bold: bool,
) -> DrawResult<()> {
    let w = draw::width(label, draw::NOTE_PX, bold);
    let x0 = (x - w / 2.0).clamp(left + 1.0, (right - w - 1.0).max(left + 1.0));
    backing(root, x0, y, w)?;
    let style = if bold {
        draw::bold(draw::NOTE_PX, color)
    } else {
        draw::text(draw::NOTE_PX, color)
    };
    root.draw(&Text::new(
        label.to_string(),
        (x0 as i32, y as i32),
        style.pos(Pos::new(HPos::Left, VPos::Center)),
    ))?;
    Ok(())
}

/// A white box behind a label `w` wide starting at `x` with its middle at `y`, so grid and
/// reference lines do not run through the text.
fn backing(root: &draw::Area<'_>, x: f64, y: f64, w: f64) -> DrawResult<()> {
    let h = draw::NOTE_PX * 0.62;
    root.draw(&Rectangle::new(
        [
            ((x - 2.0) as i32, (y - h) as i32),
            ((x + w + 2.0) as i32, (y + h) as i32),
        ],
        WHITE.mix(0.9).filled(),
    ))?;
    Ok(())
}
