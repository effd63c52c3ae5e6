//! The money charts: cumulative cost with its crossovers, cost against daily use (break-even),
//! cost per million requests, and the yearly cost breakdown by component.

use plotters::prelude::*;

use super::draw::{self, DrawResult, Head, LegendEntry, Swatch};
use super::line::{self, AxisSpec, Line, LineChart, Mark};
use super::{Built, ChartError, Context, Drawn, Series, Skipped, draw_error};
use crate::cost::{CostLine, ExactBreakEven, YearCost};
use crate::hardware::DeploymentOption;
use crate::results::usd_cents;

fn skip(name: &str, what: &str, reason: &str) -> Skipped {
    Skipped {
        name: name.into(),
        what: what.into(),
        reason: reason.into(),
    }
}

/// "AWS p5.48xlarge · reserved-3y": the name a title uses.
fn full(tier: &str, option: DeploymentOption) -> String {
    format!("{tier} · {option}")
}

fn legend(s: &Series<'_>, label: String) -> LegendEntry {
    LegendEntry {
        label,
        color: s.color,
        swatch: s.swatch(),
    }
}

/// A series, its points and its (possibly merged) legend label.
type Merged<'a, 'b> = (&'b Series<'a>, Vec<(f64, f64)>, String);

/// Merge series whose values agree to the dollar (a hybrid that settles on its reservation
/// costs the same as the reservation): one line, labelled "reserved-3y = hybrid-3y".
fn merge_equal<'a, 'b>(curves: Vec<(&'b Series<'a>, Vec<(f64, f64)>)>) -> Vec<Merged<'a, 'b>> {
    let mut out: Vec<Merged<'a, 'b>> = vec![];
    for (s, pts) in curves {
        let same = out.iter_mut().find(|(o, p, _)| {
            o.tier.name == s.tier.name
                && p.len() == pts.len()
                && p.iter().zip(&pts).all(|(a, b)| (a.1 - b.1).abs() < 1.0)
        });
        match same {
            Some((_, _, label)) => label.push_str(&format!(" = {}", s.cost.option)),
            None => out.push((s, pts, s.label.clone())),
        }
    }
    out
}

/// (end of year, cash spent so far), starting at (0, 0).
fn cumulative_points(yearly: &[YearCost]) -> Vec<(f64, f64)> {
    let mut acc = 0.0;
    let mut pts = vec![(0.0, 0.0)];
    for y in yearly {
        acc += y.total_usd;
        pts.push((y.year as f64, acc));
    }
    pts
}

/// Where two piecewise-linear curves sampled at the same x cross (strict sign changes only:
/// curves that merely touch do not cross).
pub(crate) fn crossings(a: &[(f64, f64)], b: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = vec![];
    for i in 1..a.len().min(b.len()) {
        let d0 = a[i - 1].1 - b[i - 1].1;
        let d1 = a[i].1 - b[i].1;
        if d0 * d1 < 0.0 {
            let t = d0 / (d0 - d1);
            out.push((
                a[i - 1].0 + t * (a[i].0 - a[i - 1].0),
                a[i - 1].1 + t * (a[i].1 - a[i - 1].1),
            ));
        }
    }
    out
}

fn money_axis(max: f64, desc: &str) -> AxisSpec {
    let axis = draw::nice_axis(0.0, max, 6);
    let (step, top) = (axis.step, axis.max);
    AxisSpec {
        axis,
        fmt: Box::new(move |v| draw::money_tick(v, step, top)),
        desc: desc.into(),
    }
}

/// Five-year cumulative cost per tier × option, with on-prem/cloud crossovers marked.
pub(super) fn cumulative(ctx: &Context<'_>) -> Result<Built, ChartError> {
    const NAME: &str = "cumulative-cost";
    let raw: Vec<(&Series<'_>, Vec<(f64, f64)>)> = ctx
        .series
        .iter()
        .filter(|s| !s.cost.yearly.is_empty())
        .map(|s| (s, cumulative_points(&s.cost.yearly)))
        .collect();
    let curves: Vec<(&Series<'_>, Vec<(f64, f64)>)> = merge_equal(raw.clone())
        .into_iter()
        .map(|(s, p, _)| (s, p))
        .collect();
    let labels: Vec<String> = merge_equal(raw.clone())
        .into_iter()
        .map(|(_, _, l)| l)
        .collect();
    if curves.is_empty() {
        return Ok(Err(skip(
            NAME,
            "cumulative cost over the horizon",
            "no tier has a costed deployment option",
        )));
    }
    let years = curves.iter().map(|(_, p)| p.len() - 1).max().unwrap_or(1);
    let at = |pts: &[(f64, f64)], y: usize| pts.get(y).map_or(f64::INFINITY, |p| p.1);
    let mut order: Vec<usize> = (0..curves.len()).collect();
    order.sort_by(|&a, &b| at(&curves[a].1, years).total_cmp(&at(&curves[b].1, years)));
    let lead = order[0];
    let lead_name = full(&curves[lead].0.tier.name, curves[lead].0.cost.option);
    let lowest_from = (1..=years).find(|&y| {
        (y..=years).all(|yy| {
            curves
                .iter()
                .all(|(_, p)| at(&curves[lead].1, yy) <= at(p, yy) + 0.5)
        })
    });
    let title = if curves.len() == 1 {
        format!(
            "{lead_name}: {} over {years} years",
            draw::money(at(&curves[lead].1, years))
        )
    } else {
        match lowest_from {
            Some(1) => format!("{lead_name} has the lowest cumulative cost in every year"),
            Some(y) => format!("{lead_name} has the lowest cumulative cost from year {y} on"),
            None => format!("{lead_name} has the lowest cumulative cost after {years} years"),
        }
    };

    // Crossovers of each on-prem line with each cloud line it is compared with.
    let mut marks = Vec::new();
    let mut pairs: Vec<(&str, &str, DeploymentOption)> = vec![];
    for be in &ctx.results.break_even {
        let key = (
            be.on_prem_tier.as_str(),
            be.cloud_tier.as_str(),
            be.cloud_option,
        );
        if !pairs.contains(&key) {
            pairs.push(key);
        }
    }
    for (op, ct, co) in pairs {
        let a = raw
            .iter()
            .find(|(s, _)| s.tier.name == op && s.cost.option == DeploymentOption::OnPrem);
        let b = raw
            .iter()
            .find(|(s, _)| s.tier.name == ct && s.cost.option == co);
        if let (Some((_, a)), Some((_, b))) = (a, b) {
            for (x, y) in crossings(a, b) {
                marks.push(Mark {
                    at: (x, y),
                    label: format!("year {x:.1}"),
                    color: draw::INK,
                    secondary: false,
                });
            }
        }
    }

    let mut subtitle = format!(
        "Cash spent by the end of each year, nominal USD, egress included. After {years} years: {} {}",
        lead_name,
        draw::money(at(&curves[lead].1, years))
    );
    if let Some(&next) = order.get(1) {
        let s = curves[next].0;
        subtitle.push_str(&format!(
            "; next {} {}",
            full(&s.tier.name, s.cost.option),
            draw::money(at(&curves[next].1, years))
        ));
    }
    subtitle.push('.');
    if !marks.is_empty() {
        subtitle.push_str(" Rings: on-prem and cloud cross.");
    }

    let max = curves
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.1))
        .fold(0.0, f64::max);
    let x_axis = draw::Axis {
        min: 0.0,
        max: years as f64,
        step: 1.0,
        ticks: (0..=years).map(|y| y as f64).collect(),
    };
    let chart = LineChart {
        head: Head {
            title: title.clone(),
            subtitle,
            legend: curves
                .iter()
                .zip(&labels)
                .map(|((s, _), l)| legend(s, l.clone()))
                .collect(),
            footer: ctx.footer.clone(),
        },
        x: AxisSpec {
            axis: x_axis,
            fmt: Box::new(|v| format!("{}", v.round() as i64)),
            desc: "End of year".into(),
        },
        y: money_axis(max, "Cumulative cost (USD)"),
        y2: None,
        lines: curves
            .iter()
            .map(|(s, p)| Line {
                marker: Some(s.marker),
                dashed: s.dashed,
                ..Line::new(s.color, p.clone())
            })
            .collect(),
        rules: vec![],
        marks,
        height: draw::HEIGHT,
    };
    let rings = if chart.marks.is_empty() {
        "No on-prem line crosses a cloud line within the horizon."
    } else {
        "Rings mark where an on-prem line crosses a cloud line, interpolated linearly between \
         year-ends: the break-even time."
    };
    let svg = line::render(&chart).map_err(draw_error(NAME))?;
    Ok(Ok(vec![Drawn {
        name: NAME.into(),
        title,
        caption: format!(
            "Which option is cheapest over the {years}-year horizon, and when does buying pay off? \
             Cash spent on each tier and option by the end of each year (nominal USD, egress \
             included, residual value not subtracted). {rings}"
        ),
        svg,
    }]))
}

/// A line of the break-even chart.
struct CostLineSeries {
    /// "tier · option", for titles.
    name: String,
    label: String,
    color: RGBColor,
    marker: draw::Marker,
    dashed: bool,
    line: CostLine,
}

/// The cheapest line on each stretch of 0–24 h/day: (line index, from, to).
pub(crate) fn lower_envelope(lines: &[CostLine]) -> Vec<(usize, f64, f64)> {
    if lines.is_empty() {
        return vec![];
    }
    let mut cuts = vec![0.0, 24.0];
    for (i, a) in lines.iter().enumerate() {
        for b in &lines[i + 1..] {
            let slope = a.per_hour_day_usd - b.per_hour_day_usd;
            if slope.abs() > 1e-12 {
                let h = (b.fixed_usd - a.fixed_usd) / slope;
                if h > 0.0 && h < 24.0 {
                    cuts.push(h);
                }
            }
        }
    }
    cuts.sort_by(f64::total_cmp);
    cuts.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    let mut out: Vec<(usize, f64, f64)> = vec![];
    for w in cuts.windows(2) {
        let mid = (w[0] + w[1]) / 2.0;
        let best = (0..lines.len())
            .min_by(|&i, &j| lines[i].at(mid).total_cmp(&lines[j].at(mid)))
            .unwrap_or(0);
        match out.last_mut() {
            Some(last) if last.0 == best => last.2 = w[1],
            _ => out.push((best, w[0], w[1])),
        }
    }
    out
}

/// Five-year cost against daily use for on-prem and each cloud option, from the cost lines.
pub(super) fn break_even(ctx: &Context<'_>) -> Result<Built, ChartError> {
    const NAME: &str = "break-even";
    let r = ctx.results;
    if r.break_even.is_empty() {
        return Ok(Err(skip(
            NAME,
            "cost against daily use (break-even)",
            "it needs an on-prem option and a cloud option to compare",
        )));
    }
    let mut lines: Vec<CostLineSeries> = vec![];
    let mut seen: Vec<(String, DeploymentOption)> = vec![];
    let mut add = |tier: &str, option: DeploymentOption, line: CostLine| {
        if seen.iter().any(|(t, o)| t == tier && *o == option) {
            return;
        }
        seen.push((tier.to_string(), option));
        // A line equal to one of the same tier already drawn joins its label instead.
        if let Some(same) = lines.iter_mut().find(|l| {
            l.name.starts_with(&format!("{tier} · "))
                && (l.line.fixed_usd - line.fixed_usd).abs() < 1.0
                && (l.line.per_hour_day_usd - line.per_hour_day_usd).abs() < 1e-3
        }) {
            same.label.push_str(&format!(" = {option}"));
            return;
        }
        let (label, color, marker, dashed) = match ctx.find(tier, option) {
            Some(s) => (s.label.clone(), s.color, s.marker, s.dashed),
            None => (
                full(tier, option),
                draw::option_color(option),
                draw::Marker::nth(seen.len()),
                false,
            ),
        };
        lines.push(CostLineSeries {
            name: full(tier, option),
            label,
            color,
            marker,
            dashed,
            line,
        });
    };
    for be in &r.break_even {
        add(&be.on_prem_tier, DeploymentOption::OnPrem, be.on_prem_line);
    }
    for be in &r.break_even {
        add(&be.cloud_tier, be.cloud_option, be.cloud_line);
    }
    let envelope = lower_envelope(&lines.iter().map(|l| l.line).collect::<Vec<_>>());
    let name_of = |i: usize| lines[i].name.clone();
    let h = |x: f64| format!("{x:.1}");
    let title = match envelope.as_slice() {
        [] => "Five-year cost against daily use".to_string(),
        [(a, _, _)] => format!("{} is cheapest at any daily use", name_of(*a)),
        [(a, _, cut), (b, _, _)] => format!(
            "{} is cheapest below {} h/day, {} above",
            name_of(*a),
            h(*cut),
            name_of(*b)
        ),
        more => format!(
            "The cheapest option changes at {} h/day",
            more[1..]
                .iter()
                .map(|s| h(s.1))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut subtitle = String::from(
        "Five-year cost = fixed costs + daily hours of use × cost per hour-of-day; hardware and \
         running costs, egress excluded.",
    );
    if envelope.len() > 2 {
        let parts: Vec<String> = envelope
            .iter()
            .map(|(i, a, b)| format!("{} {}–{} h", name_of(*i), h(*a), h(*b)))
            .collect();
        subtitle = format!("Cheapest: {}.", parts.join("; "));
    }
    let mut marks = vec![];
    for be in &r.break_even {
        if let ExactBreakEven::At { hours_per_day, .. } = be.exact {
            let y = be.on_prem_line.at(hours_per_day);
            if !marks
                .iter()
                .any(|m: &Mark| (m.at.0 - hours_per_day).abs() < 1e-9 && (m.at.1 - y).abs() < 1.0)
            {
                marks.push(Mark {
                    at: (hours_per_day, y),
                    label: format!("{} h/day", h(hours_per_day)),
                    color: draw::INK,
                    secondary: false,
                });
            }
        }
    }
    let max = lines
        .iter()
        .map(|l| l.line.at(0.0).max(l.line.at(24.0)))
        .fold(0.0, f64::max);
    let chart = LineChart {
        head: Head {
            title: title.clone(),
            subtitle,
            legend: lines
                .iter()
                .map(|l| LegendEntry {
                    label: l.label.clone(),
                    color: l.color,
                    swatch: if l.dashed {
                        Swatch::DashedLine(l.marker)
                    } else {
                        Swatch::Line(l.marker)
                    },
                })
                .collect(),
            footer: ctx.footer.clone(),
        },
        x: AxisSpec {
            axis: draw::Axis {
                min: 0.0,
                max: 24.0,
                step: 4.0,
                ticks: (0..=6).map(|i| i as f64 * 4.0).collect(),
            },
            fmt: Box::new(|v| format!("{}", v.round() as i64)),
            desc: "Daily use (hours per day)".into(),
        },
        y: money_axis(max, "Five-year cost (USD)"),
        y2: None,
        lines: lines
            .iter()
            .map(|l| Line {
                marker: Some(l.marker),
                dashed: l.dashed,
                ..Line::new(
                    l.color,
                    (0..=6)
                        .map(|i| {
                            let x = i as f64 * 4.0;
                            (x, l.line.at(x))
                        })
                        .collect(),
                )
            })
            .collect(),
        rules: vec![],
        marks,
        height: draw::HEIGHT,
    };
    let svg = line::render(&chart).map_err(draw_error(NAME))?;
    Ok(Ok(vec![Drawn {
        name: NAME.into(),
        title,
        caption: "At what daily use does owning beat renting? Each option's five-year cost as a \
                  straight line in hours of use per day: on-prem pays its hardware, space, staff \
                  and idle power around the clock and only the dynamic power per busy hour; \
                  on-demand pays per hour used; a reservation pays its commitment whether used or \
                  not. Egress is excluded on both sides, as in seed 004. Rings mark the exact \
                  break-even points of the break-even table."
            .into(),
        svg,
    }]))
}

/// Cost per million requests by tier and option, as horizontal bars, cheapest first.
pub(super) fn per_million(ctx: &Context<'_>) -> Result<Built, ChartError> {
    const NAME: &str = "cost-per-million";
    let mut rows: Vec<(&Series<'_>, f64)> = ctx
        .series
        .iter()
        .filter_map(|s| s.cost.cost_per_million_usd.map(|v| (s, v)))
        .filter(|(_, v)| v.is_finite())
        .collect();
    if rows.is_empty() {
        return Ok(Err(skip(
            NAME,
            "cost per million requests",
            "no option serves any requests",
        )));
    }
    rows.sort_by(|a, b| a.1.total_cmp(&b.1));
    let missing: Vec<String> = ctx
        .series
        .iter()
        .filter(|s| s.cost.cost_per_million_usd.is_none())
        .map(|s| s.label.clone())
        .collect();
    let (best, best_v) = (rows[0].0, rows[0].1);
    let best_name = full(&best.tier.name, best.cost.option);
    let title = if rows.len() == 1 {
        format!("{best_name}: {} per million requests", usd_cents(best_v))
    } else {
        format!(
            "{best_name} serves a million requests for the least: {}",
            usd_cents(best_v)
        )
    };
    let years = ctx.years();
    let mut subtitle =
        format!("Five-year total cost ÷ requests served over {years} years, USD per million.");
    if let Some((worst, wv)) = rows.last().filter(|_| rows.len() > 1)
        && best_v > 0.0
    {
        subtitle.push_str(&format!(
            " Dearest: {} at {:.1}× the cheapest.",
            full(&worst.tier.name, worst.cost.option),
            wv / best_v
        ));
    }
    if !missing.is_empty() {
        subtitle.push_str(&format!(" No requests served: {}.", missing.join(", ")));
    }
    let head = Head {
        title: title.clone(),
        subtitle,
        legend: vec![],
        footer: ctx.footer.clone(),
    };
    let n = rows.len();
    let height = (190 + n * 36 + 60).max(330) as u32;
    let render = || -> DrawResult<String> {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (draw::WIDTH, height)).into_drawing_area();
            let rect = draw::frame(&root, &head)?;
            let area = draw::plot_area(&root, rect);
            let max_label = rect.w * 0.42;
            let labels: Vec<String> = rows
                .iter()
                .map(|(s, _)| {
                    crate::report::fonts::ellipsize(
                        &s.label,
                        max_label as f32,
                        draw::TICK_PX as f32,
                        false,
                    )
                })
                .collect();
            let y_area = draw::widest(labels.clone(), draw::TICK_PX) + 14.0;
            let vmax = rows.iter().map(|r| r.1).fold(0.0, f64::max);
            // Room to the right of the longest bar for its value label.
            let axis = draw::nice_axis(0.0, vmax * 1.22, 5);
            let (step, top) = (axis.step, axis.max);
            let centres: Vec<f64> = (0..n).map(|i| i as f64 + 0.5).collect();
            let mut chart = ChartBuilder::on(&area)
                .margin_top(4)
                .margin_right(16)
                .x_label_area_size((draw::TICK_PX * 1.3 + draw::AXIS_PX * 1.5 + 14.0) as u32)
                .y_label_area_size(y_area as u32)
                .build_cartesian_2d(axis.clone(), draw::fixed_axis(0.0, n as f64, centres))?;
            let yf = |v: &f64| {
                // Row 0 (the cheapest) is drawn at the top.
                let i = n as f64 - 0.5 - v;
                labels
                    .get(i.round().max(0.0) as usize)
                    .cloned()
                    .unwrap_or_default()
            };
            let xf = |v: &f64| draw::money_tick(*v, step, top);
            chart
                .configure_mesh()
                .disable_y_mesh()
                .y_label_formatter(&yf)
                .x_label_formatter(&xf)
                .x_desc("USD per million requests")
                .label_style(draw::text(draw::TICK_PX, draw::INK))
                .axis_desc_style(draw::text(draw::AXIS_PX, draw::INK))
                .bold_line_style(draw::GRID.stroke_width(1))
                .light_line_style(TRANSPARENT)
                .axis_style(draw::AXIS.stroke_width(1))
                .draw()?;
            let (px, _) = chart.plotting_area().get_pixel_range();
            for (i, (s, v)) in rows.iter().enumerate() {
                let y0 = (n - 1 - i) as f64;
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(0.0, y0 + 0.2), (*v, y0 + 0.8)],
                    s.color.filled(),
                )))?;
                let label = usd_cents(*v);
                let lw = draw::width(&label, draw::NOTE_PX, true);
                let (bx, by) = chart.backend_coord(&(*v, y0 + 0.5));
                let (lx, color) = if bx as f64 + 6.0 + lw <= px.end as f64 {
                    (bx as f64 + 6.0, draw::INK)
                } else {
                    (bx as f64 - 6.0 - lw, WHITE)
                };
                root.draw(&Text::new(
                    label,
                    (lx as i32, by),
                    draw::bold(draw::NOTE_PX, color).pos(plotters::style::text_anchor::Pos::new(
                        plotters::style::text_anchor::HPos::Left,
                        plotters::style::text_anchor::VPos::Center,
                    )),
                ))?;
            }
            root.present()?;
        }
        Ok(svg)
    };
    let svg = render().map_err(draw_error(NAME))?;
    Ok(Ok(vec![Drawn {
        name: NAME.into(),
        title,
        caption: format!(
            "What does serving a million requests cost on each option? The {years}-year total \
             cost divided by the requests served in those years; the cheapest option is at the top."
        ),
        svg,
    }]))
}

/// The cost components in stacking order (bottom first), with their colours.
/// A cost component: its label, its colour and how to read it off a year.
type Component = (&'static str, RGBColor, fn(&YearCost) -> f64);

fn components() -> [Component; 7] {
    [
        ("capex (purchase + install)", draw::OKABE_ITO[0], |y| {
            y.capex_usd
        }),
        ("maintenance", draw::OKABE_ITO[5], |y| y.maintenance_usd),
        ("energy", draw::OKABE_ITO[1], |y| y.energy_usd),
        ("space", draw::OKABE_ITO[7], |y| y.space_usd),
        ("staff", draw::OKABE_ITO[4], |y| y.staff_usd),
        ("cloud instance fees", draw::OKABE_ITO[3], |y| y.cloud_usd),
        ("egress", draw::OKABE_ITO[2], |y| y.egress_usd),
    ]
}

/// Yearly cost by component, stacked: one chart per tier, one panel per option, one scale for
/// all so tiers compare.
pub(super) fn breakdown(ctx: &Context<'_>) -> Result<Built, ChartError> {
    let tiers: Vec<_> = ctx
        .results
        .tiers
        .iter()
        .filter(|t| t.options.iter().any(|o| !o.yearly.is_empty()))
        .collect();
    if tiers.is_empty() {
        return Ok(Err(skip(
            "cost-breakdown",
            "yearly cost by component",
            "no tier has a costed deployment option",
        )));
    }
    let top = ctx
        .series
        .iter()
        .flat_map(|s| s.cost.yearly.iter().map(|y| y.total_usd))
        .fold(0.0, f64::max);
    let axis = draw::nice_axis(0.0, top * 1.1, 5);
    let mut used_names: Vec<String> = vec![];
    let mut out = vec![];
    for t in tiers {
        let mut name = format!("cost-breakdown-{}", draw::slug(&t.name));
        while used_names.contains(&name) {
            name.push('x');
        }
        used_names.push(name.clone());
        // Options that cost the same in every component and year share a panel
        // ("reserved-3y = hybrid-3y").
        let mut options: Vec<(&crate::cost::OptionCost, String)> = vec![];
        for o in t.options.iter().filter(|o| !o.yearly.is_empty()) {
            let same = options.iter_mut().find(|(p, _)| {
                p.yearly.len() == o.yearly.len()
                    && p.yearly
                        .iter()
                        .zip(&o.yearly)
                        .all(|(a, b)| components().iter().all(|c| (c.2(a) - c.2(b)).abs() < 1.0))
            });
            match same {
                Some((_, label)) => label.push_str(&format!(" = {}", o.option)),
                None => options.push((o, o.option.label().to_string())),
            }
        }
        // Which component dominates each option's horizon cost.
        let shares: Vec<(usize, f64)> = options
            .iter()
            .map(|(o, _)| {
                let total: f64 = o.yearly.iter().map(|y| y.total_usd).sum();
                let (i, v) = components()
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (i, o.yearly.iter().map(c.2).sum::<f64>()))
                    .fold((0, f64::MIN), |a, b| if b.1 > a.1 { b } else { a });
                (i, if total > 0.0 { v / total } else { 0.0 })
            })
            .collect();
        let comps = components();
        let years = ctx.years();
        let all_zero = options
            .iter()
            .all(|(o, _)| o.yearly.iter().all(|y| y.total_usd == 0.0));
        let title = if all_zero {
            format!("{}: no cost recorded in any year", t.name)
        } else if let Some(top) = shares
            .first()
            .map(|s| s.0)
            .filter(|&top| shares.iter().all(|s| s.0 == top))
        {
            let lo = shares.iter().map(|s| s.1).fold(f64::MAX, f64::min) * 100.0;
            let hi = shares.iter().map(|s| s.1).fold(0.0, f64::max) * 100.0;
            let what = comps[top].0;
            // "100 %" would hide the small components that are there.
            let pct = |v: f64| {
                if v > 99.5 && v < 100.0 {
                    "over 99 %".to_string()
                } else {
                    format!("{v:.0} %")
                }
            };
            let share = if pct(lo) == pct(hi) {
                pct(lo)
            } else {
                format!("{:.0}–{}", lo, pct(hi))
            };
            if options.len() == 1 {
                format!(
                    "{}: {share} of the {years}-year cost goes to {what}",
                    t.name
                )
            } else {
                format!(
                    "{}: {share} of every option's {years}-year cost goes to {what}",
                    t.name
                )
            }
        } else {
            format!("{}: where the money goes, year by year", t.name)
        };
        let present: Vec<usize> = (0..comps.len())
            .filter(|&i| {
                options
                    .iter()
                    .any(|(o, _)| o.yearly.iter().any(|y| comps[i].2(y) > 0.0))
            })
            .collect();
        let head = Head {
            title: title.clone(),
            subtitle: format!(
                "Cost per year by component, nominal USD; panels share one scale across all tiers. \
                 Totals: {}.",
                options
                    .iter()
                    .map(|(o, label)| format!(
                        "{label} {}",
                        draw::money(o.yearly.iter().map(|y| y.total_usd).sum())
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            legend: present
                .iter()
                .map(|&i| LegendEntry {
                    label: comps[i].0.into(),
                    color: comps[i].1,
                    swatch: Swatch::Box,
                })
                .collect(),
            footer: ctx.footer.clone(),
        };
        let n = options.len();
        let cols = match n {
            0..=3 => n.max(1),
            4 => 2,
            _ => 3,
        };
        let rows = n.div_ceil(cols).max(1);
        let height = (230 + rows * 230) as u32;
        let render = || -> DrawResult<String> {
            let mut svg = String::new();
            {
                let root =
                    SVGBackend::with_string(&mut svg, (draw::WIDTH, height)).into_drawing_area();
                let rect = draw::frame(&root, &head)?;
                let area = draw::plot_area(&root, rect);
                let panels = area.split_evenly((rows, cols));
                let (step, amax) = (axis.step, axis.max);
                let yf = |v: &f64| draw::money_tick(*v, step, amax);
                let y_area = draw::widest(
                    axis.ticks.iter().map(|v| draw::money_tick(*v, step, amax)),
                    draw::TICK_PX,
                ) + 12.0;
                for ((o, label), panel) in options.iter().zip(panels.iter()) {
                    let mut chart = ChartBuilder::on(panel)
                        .caption(label.as_str(), draw::bold(draw::AXIS_PX, draw::INK))
                        .margin(6)
                        .margin_right(10)
                        .x_label_area_size(
                            (draw::TICK_PX * 1.3 + draw::AXIS_PX * 1.5 + 10.0) as u32,
                        )
                        .y_label_area_size(y_area as u32)
                        .build_cartesian_2d(
                            draw::fixed_axis(
                                0.5,
                                years as f64 + 0.5,
                                (1..=years).map(|y| y as f64).collect(),
                            ),
                            // Headroom above the top tick keeps its label clear of the
                            // panel's caption.
                            draw::fixed_axis(0.0, axis.max * 1.08, axis.ticks.clone()),
                        )?;
                    let xf = |v: &f64| format!("{}", v.round() as i64);
                    chart
                        .configure_mesh()
                        .disable_x_mesh()
                        .x_desc("Year")
                        .x_label_formatter(&xf)
                        .y_label_formatter(&yf)
                        .label_style(draw::text(draw::TICK_PX, draw::INK))
                        .axis_desc_style(draw::text(draw::AXIS_PX, draw::INK))
                        .bold_line_style(draw::GRID.stroke_width(1))
                        .light_line_style(TRANSPARENT)
                        .axis_style(draw::AXIS.stroke_width(1))
                        .draw()?;
                    let (px, _) = chart.plotting_area().get_pixel_range();
                    let slot = (px.end - px.start) as f64 / years.max(1) as f64;
                    for y in &o.yearly {
                        let x = y.year as f64;
                        let mut base = 0.0;
                        for &i in &present {
                            let v = comps[i].2(y);
                            if v <= 0.0 {
                                continue;
                            }
                            chart.draw_series(std::iter::once(Rectangle::new(
                                [(x - 0.32, base), (x + 0.32, (base + v).min(axis.max))],
                                comps[i].1.filled(),
                            )))?;
                            base += v;
                        }
                        // The year's total above its bar, when there is room for it.
                        let label = draw::money_short(y.total_usd);
                        if draw::width(&label, draw::FOOTER_PX, false) + 2.0 <= slot
                            && y.total_usd > 0.0
                        {
                            let (bx, by) = chart.backend_coord(&(x, base.min(axis.max)));
                            root.draw(&Text::new(
                                label,
                                (bx, by - 3),
                                draw::text(draw::FOOTER_PX, draw::GREY).pos(
                                    plotters::style::text_anchor::Pos::new(
                                        plotters::style::text_anchor::HPos::Center,
                                        plotters::style::text_anchor::VPos::Bottom,
                                    ),
                                ),
                            ))?;
                        }
                    }
                }
                root.present()?;
            }
            Ok(svg)
        };
        let svg = render().map_err(draw_error(&name))?;
        out.push(Drawn {
            name,
            title,
            caption: format!(
                "Where does {}'s money go? Each year's cost split into capex (purchase and \
                 installation), maintenance, energy, space, staff, cloud instance fees and egress; \
                 one panel per option, one scale for every tier.",
                t.name
            ),
            svg,
        });
    }
    Ok(Ok(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crossings_are_interpolated_between_samples() {
        let a = [(0.0, 0.0), (1.0, 10.0), (2.0, 12.0)];
        let b = [(0.0, 0.0), (1.0, 6.0), (2.0, 14.0)];
        let c = crossings(&a, &b);
        assert_eq!(c.len(), 1);
        // a − b goes from +4 at x = 1 to −2 at x = 2: zero two thirds of the way.
        assert!((c[0].0 - 5.0 / 3.0).abs() < 1e-9 && (c[0].1 - 34.0 / 3.0).abs() < 1e-9);
        // Common start at (0, 0) is not a crossing; touching is not either.
        assert!(crossings(&a, &a).is_empty());
        assert!(crossings(&[], &b).is_empty());
    }

    #[test]
    fn the_envelope_names_the_cheapest_line_on_each_stretch() {
        let op = CostLine {
            fixed_usd: 100.0,
            per_hour_day_usd: 1.0,
        };
        let od = CostLine {
            fixed_usd: 0.0,
            per_hour_day_usd: 11.0,
        };
        let env = lower_envelope(&[op, od]);
        assert_eq!(env.len(), 2);
        assert_eq!(env[0].0, 1);
        assert_eq!(env[1].0, 0);
        assert!((env[0].2 - 10.0).abs() < 1e-9);
        assert_eq!(lower_envelope(&[op]), vec![(0, 0.0, 24.0)]);
        assert!(lower_envelope(&[]).is_empty());
    }
}
