//! The cost-per-million chart: the horizon's total cost divided by the requests served, as
//! horizontal bars, cheapest at the top.

use plotters::prelude::*;

use super::draw::{self, DrawResult, Head};
use super::{Built, ChartError, Context, Drawn, Series, Skipped, draw_error, option_name};
use crate::format;

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
        return Ok(Err(Skipped::new(
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
    let best_name = option_name(&best.tier.name, best.cost.option);
    let title = if rows.len() == 1 {
        format!(
            "{best_name}: {} per million requests",
            format::usd_cents(best_v)
        )
    } else {
        format!(
            "{best_name} serves a million requests for the least: {}",
            format::usd_cents(best_v)
        )
    };
    let years = ctx.years();
    let mut subtitle = format!(
        "Net present cost ÷ requests served over {years} years (both discounted), USD per million."
    );
    if let Some((worst, wv)) = rows.last().filter(|_| rows.len() > 1)
        && best_v > 0.0
    {
        subtitle.push_str(&format!(
            " Dearest: {} at {} the cheapest.",
            option_name(&worst.tier.name, worst.cost.option),
            format::times(wv / best_v)
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
            let xf = |v: &f64| format::usd_tick(*v, step, top);
            draw::house_mesh(&mut chart.configure_mesh())
                .disable_y_mesh()
                .y_label_formatter(&yf)
                .x_label_formatter(&xf)
                .x_desc("USD per million requests")
                .draw()?;
            let (px, _) = chart.plotting_area().get_pixel_range();
            for (i, (s, v)) in rows.iter().enumerate() {
                let y0 = (n - 1 - i) as f64;
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(0.0, y0 + 0.2), (*v, y0 + 0.8)],
                    s.color.filled(),
                )))?;
                let label = format::usd_cents(*v);
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
            "What does serving a million requests cost on each option? The net present cost \
             (the figure options are ranked on) divided by the requests served in the {years} \
             years, each year's discounted like its costs, so the order is the ranking's; the \
             cheapest option is at the top."
        ),
        svg,
    }]))
}
