//! The cumulative-cost chart: each tier and option's discounted cost by the end of each year,
//! ending at its net present cost (the ranking figure: a step at the horizon credits the resale of
//! owned hardware and adds reservations owed after it), with the points where an on-prem line
//! crosses a cloud line (the break-even time) ringed. First of
//! the money charts [`super::render_all`] draws.

use super::draw::{self, Head, LegendEntry};
use super::line::{self, AxisSpec, Line, LineChart, Mark, money_axis};
use super::{Built, ChartError, Context, Drawn, Series, Skipped, draw_error, option_name};
use crate::cost::OptionCost;
use crate::format;
use crate::hardware::DeploymentOption;

fn legend(s: &Series<'_>, label: String) -> LegendEntry {
    LegendEntry {
        label,
        color: s.color,
        swatch: s.swatch(),
    }
}

/// (end of year, discounted cost so far), starting at (0, 0), and, when the option owns hardware
/// or owes reservations past the horizon, a last point at the horizon with its net present cost:
/// the line ends on the figure the options are ranked on.
fn cumulative_points(cost: &OptionCost) -> Vec<(f64, f64)> {
    let mut acc = 0.0;
    let mut pts = vec![(0.0, 0.0)];
    for y in &cost.yearly {
        acc += y.discounted_usd;
        pts.push((y.year as f64, acc));
    }
    let horizon = cost.yearly.len() as f64;
    if (cost.net_present_cost_usd - acc).abs() >= 0.5 {
        pts.push((horizon, cost.net_present_cost_usd));
    }
    pts
}

/// Where two piecewise-linear curves sampled at the same x cross (strict sign changes only:
/// curves that merely touch do not cross).
pub(crate) fn crossings(a: &[(f64, f64)], b: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = vec![];
    for i in 1..a.len().min(b.len()) {
        if a[i - 1].0 == a[i].0 {
            // The step at the horizon to the net present cost is not a point in time.
            continue;
        }
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

/// Five-year cumulative cost per tier × option, with on-prem/cloud crossovers marked.
pub(super) fn cumulative(ctx: &Context<'_>) -> Result<Built, ChartError> {
    const NAME: &str = "cumulative-cost";
    // The recommended option, the runner-up and the cheapest of each deployment kind, equal
    // options merged into one line (see `shown_series`).
    let curves: Vec<(&Series<'_>, Vec<(f64, f64)>)> = ctx
        .shown
        .iter()
        .map(|s| (s, cumulative_points(s.cost)))
        .collect();
    let labels: Vec<String> = curves.iter().map(|(s, _)| s.label.clone()).collect();
    if curves.is_empty() {
        return Ok(Err(Skipped::new(
            NAME,
            "cumulative cost over the horizon",
            "no tier has a costed deployment option",
        )));
    }
    let years = curves
        .iter()
        .map(|(s, _)| s.cost.yearly.len())
        .max()
        .unwrap_or(1);
    // At the horizon a line stands at its last point: the net present cost.
    let at = |pts: &[(f64, f64)], y: usize| {
        if y >= years {
            pts.last().map_or(f64::INFINITY, |p| p.1)
        } else {
            pts.get(y).map_or(f64::INFINITY, |p| p.1)
        }
    };
    // Ranked as the recommendation ranks: tiers that meet the contract first, then by net
    // present cost, so the title names the option page 1 recommends.
    let mut order: Vec<usize> = (0..curves.len()).collect();
    order.sort_by(|&a, &b| {
        (!curves[a].0.tier.meets_slo())
            .cmp(&!curves[b].0.tier.meets_slo())
            .then(at(&curves[a].1, years).total_cmp(&at(&curves[b].1, years)))
    });
    let lead = order[0];
    let lead_name = option_name(&curves[lead].0.tier.name, curves[lead].0.cost.option);
    // Lowest at every year-end from y on, and at the net present cost.
    let year_end = |pts: &[(f64, f64)], y: usize| pts.get(y).map_or(f64::INFINITY, |p| p.1);
    let lowest_from = (1..=years).find(|&y| {
        curves.iter().all(|(_, p)| {
            at(&curves[lead].1, years) <= at(p, years) + 0.5
                && (y..=years).all(|yy| year_end(&curves[lead].1, yy) <= year_end(p, yy) + 0.5)
        })
    });
    let title = if curves.len() == 1 {
        format!(
            "{lead_name}: net present cost {} over {years} years",
            format::usd_or_millions(at(&curves[lead].1, years))
        )
    } else {
        match lowest_from {
            Some(1) => format!("{lead_name} has the lowest discounted cost in every year"),
            Some(y) => format!("{lead_name} has the lowest discounted cost from year {y} on"),
            None => format!("{lead_name} has the lowest net present cost over {years} years"),
        }
    };

    // Crossovers of each on-prem line with each cloud line it is compared with.
    let mut marks = Vec::new();
    // Only lines that are drawn can cross on the chart; each pair of lines once.
    let line_of = |tier: &str, option: DeploymentOption| {
        let s = ctx.shown_for(tier, option)?;
        curves.iter().position(|(c, _)| std::ptr::eq(*c, s))
    };
    let mut pairs: Vec<(usize, usize)> = vec![];
    for be in &ctx.results.break_even {
        if let (Some(a), Some(b)) = (
            line_of(&be.on_prem_tier, DeploymentOption::OnPrem),
            line_of(&be.cloud_tier, be.cloud_option),
        ) && a != b
            && !pairs.contains(&(a, b))
        {
            pairs.push((a, b));
        }
    }
    for (a, b) in pairs {
        {
            for (x, y) in crossings(&curves[a].1, &curves[b].1) {
                marks.push(Mark {
                    at: (x, y),
                    label: format!("year {}", format::grouped(x, 1)),
                    color: draw::INK,
                    secondary: false,
                    filled: false,
                });
            }
        }
    }

    let mut subtitle = format!(
        "Discounted cost by the end of each year, USD; at year {years} the net present cost: {} {}",
        lead_name,
        format::usd_or_millions(at(&curves[lead].1, years))
    );
    if let Some(&next) = order.get(1) {
        let s = curves[next].0;
        subtitle.push_str(&format!(
            "; next {} {}",
            option_name(&s.tier.name, s.cost.option),
            format::usd_or_millions(at(&curves[next].1, years))
        ));
    }
    subtitle.push('.');
    if !ctx.left_out.is_empty() {
        subtitle.push_str(&format!(
            " {} dearer option{} not drawn.",
            ctx.left_out.len(),
            if ctx.left_out.len() == 1 { "" } else { "s" }
        ));
    }
    if !marks.is_empty() && ctx.left_out.is_empty() {
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
        y: money_axis(max, "Cumulative discounted cost (USD)"),
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
             Each tier and option's cost by the end of each year, discounted at {rate} (egress \
             included). The step at year {years} is where the line meets its net present cost, \
             the figure options are ranked on: down by the resale value of owned hardware, up by \
             reservation payments owed after the horizon. {rings}{left_out}",
            rate = format::percent(ctx.results.scenario.costs.discount_rate.value, 0),
            left_out = ctx.left_out_sentence()
        ),
        svg,
    }]))
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
}
