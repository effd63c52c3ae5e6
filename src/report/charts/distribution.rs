//! The cost-distribution chart (issue 12): for the options that contend, how their net present
//! cost spreads over the Monte Carlo samples (every uncertain input drawn at once): a bar from
//! P10 to P90, a thin line from P5 to P95, a tick at P50 and a diamond at the base inputs, with
//! the share of samples in which each is the cheapest in its label.
//!
//! Every figure is read from `results.uncertainty` (`npv_quantiles` holds P0, P5, …, P100).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::draw::{self, DrawResult, Head};
use super::{Built, ChartError, Context, Drawn, Skipped, draw_error, option_name};
use crate::format;
use crate::results::RunResults;
use crate::uncertainty::OptionSpread;

/// File stem of the chart.
pub const NAME: &str = "cost-distribution";
/// At most this many options are drawn.
pub const MAX_ROWS: usize = 8;

/// P5 and P95 in `npv_quantiles` (0, 5, …, 100 %).
const P5: usize = 1;
const P95: usize = 19;

/// Whether `o` is the recommended option of `results`.
fn is_recommended(results: &RunResults, o: &OptionSpread) -> bool {
    results
        .recommendation
        .as_ref()
        .is_some_and(|r| r.best.tier == o.tier && r.best.option == o.option)
}

/// The options that matter, cheapest median first: every option that is ever the cheapest, the
/// recommended one, the runner-up and each tier's cheapest by median; at most [`MAX_ROWS`],
/// keeping the most often cheapest.
pub(crate) fn contenders(results: &RunResults) -> Vec<&OptionSpread> {
    let Some(u) = results.uncertainty.as_ref() else {
        return vec![];
    };
    let runner_up = results
        .recommendation
        .as_ref()
        .and_then(|r| r.runner_up.as_ref());
    let mut picked: Vec<&OptionSpread> = u
        .options
        .iter()
        .filter(|o| {
            o.p_cheapest > 0.0
                || is_recommended(results, o)
                || runner_up.is_some_and(|c| c.tier == o.tier && c.option == o.option)
                || u.options
                    .iter()
                    .filter(|x| x.tier == o.tier)
                    .min_by(|a, b| a.npv_p50.total_cmp(&b.npv_p50))
                    .is_some_and(|x| std::ptr::eq(x, *o))
        })
        .filter(|o| o.npv_quantiles.iter().all(|q| q.is_finite()))
        .collect();
    // Keep the recommended one, then the most often cheapest, then the cheapest medians.
    picked.sort_by(|a, b| {
        is_recommended(results, b)
            .cmp(&is_recommended(results, a))
            .then(b.p_cheapest.total_cmp(&a.p_cheapest))
            .then(a.npv_p50.total_cmp(&b.npv_p50))
    });
    picked.truncate(MAX_ROWS);
    picked.sort_by(|a, b| a.npv_p50.total_cmp(&b.npv_p50));
    picked
}

/// A share of samples for a title: whole percent ("74 %"), but one decimal where whole percent
/// would round a share that is not 0 or 1 to "0 %" or "100 %" ("99.5 %").
pub use crate::format::share;

/// The finding: the option most often cheapest, and how often; the recommended one too when
/// it is another.
pub(crate) fn finding(results: &RunResults) -> Option<String> {
    let u = results.uncertainty.as_ref()?;
    let leader = most_often_cheapest(u.options.iter())?;
    let samples = format::count(u.samples);
    let p = |o: &OptionSpread| share(o.p_cheapest);
    let name = |o: &OptionSpread| option_name(&o.tier, o.option);
    let rec = u.options.iter().find(|o| is_recommended(results, o));
    Some(match rec {
        Some(r) if !std::ptr::eq(r, leader) && r.p_cheapest < leader.p_cheapest => format!(
            "{} is cheapest in {} of {samples} samples, the recommended {} in {}",
            name(leader),
            p(leader),
            name(r),
            p(r)
        ),
        Some(r) => {
            let second = most_often_cheapest(
                u.options
                    .iter()
                    .filter(|o| !std::ptr::eq(*o, r) && o.p_cheapest > 0.0),
            );
            match second {
                Some(s) => format!(
                    "{} is cheapest in {} of {samples} samples; {} in {}",
                    name(r),
                    p(r),
                    name(s),
                    p(s)
                ),
                None => format!("{} is cheapest in {} of {samples} samples", name(r), p(r)),
            }
        }
        None => format!(
            "{} is cheapest in {} of {samples} samples",
            name(leader),
            p(leader)
        ),
    })
}

/// The option with the highest share of samples as the cheapest; the first of equals.
fn most_often_cheapest<'a>(
    options: impl Iterator<Item = &'a OptionSpread>,
) -> Option<&'a OptionSpread> {
    options.fold(None, |best: Option<&OptionSpread>, o| match best {
        Some(b) if b.p_cheapest >= o.p_cheapest => Some(b),
        _ => Some(o),
    })
}

pub(super) fn distribution(ctx: &Context<'_>) -> Result<Built, ChartError> {
    let what = "the spread of each option's net present cost over the Monte Carlo samples";
    let Some(u) = ctx.results.uncertainty.as_ref() else {
        return Ok(Err(Skipped::new(
            NAME,
            what,
            "the uncertainty analysis did not run (no input with a range, --no-uncertainty, or \
             no recommendation)",
        )));
    };
    let rows = contenders(ctx.results);
    let (Some(title), false) = (finding(ctx.results), rows.is_empty()) else {
        return Ok(Err(Skipped::new(
            NAME,
            what,
            "no option was costed in the samples",
        )));
    };
    let one_tier = ctx.results.tiers.len() == 1;
    let n = rows.len();
    let left_out = u.options.len() - n;
    let slo = rows.iter().any(|o| o.p_slo_met.is_some());
    let subtitle = format!(
        "Net present cost over {} samples of {} uncertain inputs drawn at once ({}). Bar: P10–P90; \
         thin line: P5–P95; white tick: P50 (its value beside the bar); diamond: at base inputs.",
        format::count(u.samples),
        u.inputs.len(),
        u.method
    );
    let head = Head {
        title: title.clone(),
        subtitle,
        legend: vec![],
        footer: ctx.footer.clone(),
    };
    let height = (215 + n * 44).max(330) as u32;
    let render = || -> DrawResult<String> {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (draw::WIDTH, height)).into_drawing_area();
            let rect = draw::frame(&root, &head)?;
            let area = draw::plot_area(&root, rect);
            let label_w = (rect.w * 0.34).round();
            let fit = |s: &str, px: f64| {
                crate::report::fonts::ellipsize(s, (label_w - 12.0) as f32, px as f32, false)
            };
            let labels: Vec<(String, String)> = rows
                .iter()
                .map(|o| {
                    let name = if one_tier {
                        o.option.label().to_string()
                    } else {
                        option_name(&o.tier, o.option)
                    };
                    let mut sub = format!("cheapest in {}", format::percent(o.p_cheapest, 1));
                    if let Some(p) = o.p_slo_met {
                        sub.push_str(&format!(" · SLO met in {}", format::percent(p, 1)));
                    }
                    (fit(&name, draw::TICK_PX), fit(&sub, draw::FOOTER_PX))
                })
                .collect();
            let value = |o: &OptionSpread| format::usd(o.npv_p50);
            let widest = rows
                .iter()
                .map(|o| draw::width(&value(o), draw::NOTE_PX, false))
                .fold(0.0, f64::max);
            let lo = rows
                .iter()
                .map(|o| o.npv_quantiles[P5].min(o.npv_base))
                .fold(f64::INFINITY, f64::min);
            let hi = rows
                .iter()
                .map(|o| o.npv_quantiles[P95].max(o.npv_base))
                .fold(f64::NEG_INFINITY, f64::max);
            let plot_px = (rect.w - label_w - 24.0).max(100.0);
            let pad = ((widest + 14.0) / plot_px).min(0.4);
            let span = (hi - lo).max(1.0);
            let axis = draw::nice_axis(lo - span * 0.03, hi + span * pad / (1.0 - pad), 5);
            let (step, top) = (axis.step, axis.max);
            let mut chart = ChartBuilder::on(&area)
                .margin_top(6)
                .margin_right(16)
                .x_label_area_size((draw::TICK_PX * 1.3 + draw::AXIS_PX * 1.5 + 14.0) as u32)
                .y_label_area_size(label_w as u32)
                .build_cartesian_2d(axis.clone(), draw::fixed_axis(0.0, n as f64, vec![]))?;
            let xf = |v: &f64| format::usd_tick(*v, step, top);
            draw::house_mesh(&mut chart.configure_mesh())
                .disable_y_mesh()
                .x_label_formatter(&xf)
                .x_desc("Net present cost (USD)")
                .draw()?;
            let (px, _) = chart.plotting_area().get_pixel_range();
            let (left, right) = (px.start as f64, px.end as f64);
            let anchor = |h: HPos| Pos::new(h, VPos::Center);
            for (i, (o, (name, sub))) in rows.iter().zip(&labels).enumerate() {
                // The cheapest median at the top.
                let y0 = (n - 1 - i) as f64;
                let q = &o.npv_quantiles;
                let color = draw::option_color(o.option);
                let (_, cy) = chart.backend_coord(&(0.0, y0 + 0.5));
                root.draw(&Text::new(
                    name.clone(),
                    ((left - 10.0) as i32, cy - 8),
                    draw::text(draw::TICK_PX, draw::INK).pos(anchor(HPos::Right)),
                ))?;
                root.draw(&Text::new(
                    sub.clone(),
                    ((left - 10.0) as i32, cy + 8),
                    draw::text(draw::FOOTER_PX, draw::GREY).pos(anchor(HPos::Right)),
                ))?;
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(q[P5], y0 + 0.5), (q[P95], y0 + 0.5)],
                    color.stroke_width(2),
                )))?;
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(o.npv_p10, y0 + 0.25), (o.npv_p90, y0 + 0.75)],
                    color.filled(),
                )))?;
                let (mx, _) = chart.backend_coord(&(o.npv_p50, 0.0));
                root.draw(&PathElement::new(
                    vec![(mx, cy - 9), (mx, cy + 9)],
                    WHITE.stroke_width(3),
                ))?;
                let (dx, _) = chart.backend_coord(&(o.npv_base, 0.0));
                draw::draw_marker(&root, draw::Marker::Diamond, (dx, cy), draw::INK, 4)?;
                // The median's value beyond the P95 end, or before the P5 end.
                let label = value(o);
                let w = draw::width(&label, draw::NOTE_PX, false);
                let (ex, _) = chart.backend_coord(&(q[P95].max(o.npv_base), 0.0));
                let (sx, _) = chart.backend_coord(&(q[P5].min(o.npv_base), 0.0));
                let x = if ex as f64 + 8.0 + w <= right - 1.0 {
                    Some(ex as f64 + 8.0)
                } else if sx as f64 - 8.0 - w >= left + 1.0 {
                    Some(sx as f64 - 8.0 - w)
                } else {
                    None
                };
                if let Some(x) = x {
                    root.draw(&Text::new(
                        label,
                        (x as i32, cy),
                        draw::text(draw::NOTE_PX, draw::INK).pos(anchor(HPos::Left)),
                    ))?;
                }
            }
            root.present()?;
        }
        Ok(svg)
    };
    let svg = render().map_err(draw_error(NAME))?;
    let mut caption = format!(
        "How sure is the ranking? Every uncertain input is drawn at once, {} times ({}), and \
         each option's net present cost, the figure options are ranked on, is computed in every \
         sample; the bars show its spread, and each label the share of samples in which the \
         option is the cheapest that meets the contract",
        format::count(u.samples),
        u.method
    );
    if slo {
        caption.push_str(" and in which its tier's planned fleet still meets the latency contract");
    }
    caption.push('.');
    if left_out > 0 {
        let never = u
            .options
            .iter()
            .filter(|o| o.p_cheapest > 0.0)
            .all(|o| rows.iter().any(|r| std::ptr::eq(*r, o)));
        caption.push_str(&format!(
            " {left_out} other options{} are left out (uncertainty.csv has them all).",
            if never { ", never the cheapest," } else { "" }
        ));
    }
    if let Some(r) = &u.replan {
        caption.push_str(&format!(" Performance inputs: {r}."));
    }
    Ok(Ok(vec![Drawn {
        name: NAME.into(),
        title,
        caption,
        svg,
    }]))
}

#[cfg(test)]
mod tests {
    use super::share;

    #[test]
    fn shares_never_round_to_all_or_nothing() {
        assert_eq!(share(0.742), "74 %");
        assert_eq!(share(0.995), "99.5 %");
        assert_eq!(share(0.004), "0.4 %");
        assert_eq!(share(1.0), "100 %");
        assert_eq!(share(0.0), "0 %");
    }
}
