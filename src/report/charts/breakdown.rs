//! The cost-breakdown charts: each year's cost split by component (capex, maintenance, energy,
//! space, staff, cloud fees, egress, cloud storage and support; licences, porting and network) as
//! stacked bars, with the resale of retired hardware as a credit below zero so that each bar nets
//! to the year's total printed above it; one chart per tier and one panel per option, on one
//! scale across tiers.

use plotters::prelude::*;

use super::draw::{self, DrawResult, Head, LegendEntry, Swatch};
use super::{Built, ChartError, Context, Drawn, Skipped, draw_error};
use crate::cost::YearCost;
use crate::format;

/// The cost components in stacking order (bottom first), with their colours.
/// A cost component: its label, its colour and how to read it off a year.
type Component = (&'static str, RGBColor, fn(&YearCost) -> f64);

fn components() -> [Component; 9] {
    [
        ("capex (purchase + install)", draw::OKABE_ITO[0], |y| {
            y.capex_usd
        }),
        ("maintenance", draw::OKABE_ITO[5], |y| y.maintenance_usd),
        ("energy", draw::OKABE_ITO[1], |y| y.energy_usd),
        ("space", draw::OKABE_ITO[7], |y| y.space_usd),
        ("staff", draw::OKABE_ITO[4], |y| y.staff_usd),
        (
            "cloud instance fees (hourly + upfront)",
            draw::OKABE_ITO[3],
            |y| y.cloud_usd + y.prepaid_usd,
        ),
        ("egress", draw::OKABE_ITO[2], |y| y.egress_usd),
        // The palette's last free colour is black, too heavy for a minor line: mid grey.
        (
            "licences, porting, network",
            RGBColor(0x99, 0x99, 0x99),
            |y| y.software_usd + y.engineering_usd + y.network_usd,
        ),
        ("cloud storage + support", draw::OKABE_ITO[6], |y| {
            y.storage_usd + y.support_usd
        }),
    ]
}

/// The resale credit: what retired units sold for, drawn below zero (a cash inflow).
const RESALE: &str = "resale credit";
const RESALE_COLOR: RGBColor = RGBColor(0x33, 0x33, 0x33);

/// A year's spending before the resale credit: the sum of the positive components.
pub(crate) fn gross_usd(y: &YearCost) -> f64 {
    components().iter().map(|c| c.2(y)).sum()
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
        return Ok(Err(Skipped::new(
            "cost-breakdown",
            "yearly cost by component",
            "no tier has a costed deployment option",
        )));
    }
    // The bars stand on their gross spending and hang down by their resale credit.
    let top = ctx
        .series
        .iter()
        .flat_map(|s| s.cost.yearly.iter().map(gross_usd))
        .fold(0.0, f64::max);
    let credit = ctx
        .series
        .iter()
        .flat_map(|s| s.cost.yearly.iter().map(|y| y.resale_usd))
        .fold(0.0, f64::max);
    let axis = draw::nice_axis(-credit * 1.1, top * 1.1, 5);
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
                    && p.yearly.iter().zip(&o.yearly).all(|(a, b)| {
                        (a.resale_usd - b.resale_usd).abs() < 1.0
                            && components().iter().all(|c| (c.2(a) - c.2(b)).abs() < 1.0)
                    })
            });
            match same {
                Some((_, label)) => label.push_str(&format!(" = {}", o.option)),
                None => options.push((o, o.option.label().to_string())),
            }
        }
        // Which component dominates each option's horizon spending. Shares are of the gross
        // spending (the components sum to it), not of the total net of resale: a share of the
        // net total would count the resold hardware's purchase and not its credit.
        let shares: Vec<(usize, f64)> = options
            .iter()
            .map(|(o, _)| {
                let total: f64 = o.yearly.iter().map(gross_usd).sum();
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
            let lo = shares.iter().map(|s| s.1).fold(f64::MAX, f64::min);
            let hi = shares.iter().map(|s| s.1).fold(0.0, f64::max);
            let what = comps[top].0;
            // "100 %" would hide the small components that are there.
            let pct = |share: f64| {
                let v = share * 100.0;
                if v > 99.5 && v < 100.0 {
                    "over 99 %".to_string()
                } else {
                    format::percent(share, 0)
                }
            };
            let share = if pct(lo) == pct(hi) {
                pct(lo)
            } else {
                format!("{}–{}", format::grouped(lo * 100.0, 0), pct(hi))
            };
            if options.len() == 1 {
                format!(
                    "{}: {share} of the {years}-year spending goes to {what}",
                    t.name
                )
            } else {
                format!(
                    "{}: {share} of every option's {years}-year spending goes to {what}",
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
        let resold = options
            .iter()
            .any(|(o, _)| o.yearly.iter().any(|y| y.resale_usd > 0.0));
        let mut legend: Vec<LegendEntry> = present
            .iter()
            .map(|&i| LegendEntry {
                label: comps[i].0.into(),
                color: comps[i].1,
                swatch: Swatch::Box,
            })
            .collect();
        if resold {
            legend.push(LegendEntry {
                label: format!("{RESALE} (below zero)"),
                color: RESALE_COLOR,
                swatch: Swatch::Box,
            });
        }
        let head = Head {
            title: title.clone(),
            subtitle: format!(
                "Cost per year by component, nominal USD; {}panels share one scale across all \
                 tiers. Totals{}: {}.",
                if resold {
                    "the resale of retired hardware is a credit below zero and each bar nets to \
                     the figure above it; "
                } else {
                    ""
                },
                if resold { " net of resale" } else { "" },
                options
                    .iter()
                    .map(|(o, label)| format!(
                        "{label} {}",
                        format::usd_or_millions(o.yearly.iter().map(|y| y.total_usd).sum())
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            legend,
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
                let yf = |v: &f64| format::usd_tick(*v, step, amax);
                let y_area = draw::widest(
                    axis.ticks.iter().map(|v| format::usd_tick(*v, step, amax)),
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
                            draw::fixed_axis(axis.min, axis.max * 1.08, axis.ticks.clone()),
                        )?;
                    let xf = |v: &f64| format!("{}", v.round() as i64);
                    draw::house_mesh(&mut chart.configure_mesh())
                        .disable_x_mesh()
                        .x_desc("Year")
                        .x_label_formatter(&xf)
                        .y_label_formatter(&yf)
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
                        if y.resale_usd > 0.0 {
                            chart.draw_series(std::iter::once(Rectangle::new(
                                [(x - 0.32, 0.0), (x + 0.32, (-y.resale_usd).max(axis.min))],
                                RESALE_COLOR.filled(),
                            )))?;
                        }
                        // The year's total above its bar, when there is room for it.
                        let label = format::usd_compact(y.total_usd);
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
                 installation), maintenance, energy, space, staff, cloud instance fees, egress, and \
                 licences, porting and network, cloud storage and support; the resale of retired \
                 hardware is drawn below zero as a credit, so each bar nets to the year's total \
                 printed above it, and the title's share is of the spending before that credit; \
                 one panel per option, one scale for every tier.",
                t.name
            ),
            svg,
        });
    }
    Ok(Ok(out))
}
