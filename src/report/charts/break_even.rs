//! The break-even chart: each option's net present cost as a straight line in hours per day of
//! full use of its planned fleet, each option dotted where it actually runs, the exact
//! break-even points ringed; the title names the option cheapest as the fleets actually run —
//! the recommendation's finding.

use plotters::prelude::*;

use super::draw::{self, Head, LegendEntry, Swatch};
use super::line::{self, AxisSpec, Line, LineChart, Mark, money_axis};
use super::{Built, ChartError, Context, Drawn, Skipped, draw_error, option_name};
use crate::cost::{CostLine, ExactBreakEven};
use crate::format;
use crate::hardware::DeploymentOption;
use crate::units::DAY_HOURS;

/// A line of the break-even chart.
struct CostLineSeries {
    /// "tier · option", for titles.
    name: String,
    /// The tier of the line (of its first option, when it stands for several).
    tier: String,
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
    let mut cuts = vec![0.0, DAY_HOURS];
    for (i, a) in lines.iter().enumerate() {
        for b in &lines[i + 1..] {
            let slope = a.per_hour_day_usd - b.per_hour_day_usd;
            if slope.abs() > 1e-12 {
                let h = (b.fixed_usd - a.fixed_usd) / slope;
                if h > 0.0 && h < DAY_HOURS {
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

/// Net present cost against daily use for on-prem and each cloud option, from the cost lines.
pub(super) fn break_even(ctx: &Context<'_>) -> Result<Built, ChartError> {
    const NAME: &str = "break-even";
    let r = ctx.results;
    if r.break_even.is_empty() {
        return Ok(Err(Skipped::new(
            NAME,
            "cost against daily use (break-even)",
            "it needs an on-prem option and a cloud option to compare",
        )));
    }
    // The lines the cumulative-cost chart draws, in the same colours and markers: the
    // recommended option, the runner-up and the cheapest of each kind; equal options are one
    // line ("reserved-3y = hybrid-3y").
    let mut lines: Vec<CostLineSeries> = vec![];
    let mut drawn: Vec<*const super::Series<'_>> = vec![];
    let mut add = |tier: &str, option: DeploymentOption, line: CostLine| {
        let Some(s) = ctx.shown_for(tier, option) else {
            return;
        };
        if drawn.contains(&(s as *const _)) {
            return;
        }
        drawn.push(s as *const _);
        lines.push(CostLineSeries {
            name: option_name(&s.tier.name, s.cost.option),
            tier: s.tier.name.clone(),
            label: s.label.clone(),
            color: s.color,
            marker: s.marker,
            dashed: s.dashed,
            line,
        });
    };
    for be in &r.break_even {
        add(&be.on_prem_tier, DeploymentOption::OnPrem, be.on_prem_line);
    }
    for be in &r.break_even {
        add(&be.cloud_tier, be.cloud_option, be.cloud_line);
    }
    // Cloud tiers on other hardware than the on-prem tier they are compared with.
    let cross: Vec<&crate::results::BreakEven> = {
        let mut v: Vec<&crate::results::BreakEven> = vec![];
        for be in r.break_even.iter().filter(|b| b.cross_hardware) {
            if !v
                .iter()
                .any(|b| b.on_prem_tier == be.on_prem_tier && b.cloud_tier == be.cloud_tier)
            {
                v.push(be);
            }
        }
        v
    };
    for l in &mut lines {
        if cross.iter().any(|b| l.tier == b.cloud_tier) {
            l.label.push_str(" *");
        }
    }
    let envelope = lower_envelope(&lines.iter().map(|l| l.line).collect::<Vec<_>>());
    let name_of = |i: usize| lines[i].name.clone();
    // Hours of the day, as the h/day labels print them.
    let h = |x: f64| format::grouped(x, 1);
    // The finding is the ranking's: the recommended option when it is drawn (it meets the
    // contract), else the line lowest at its own operating point.
    let lowest = (0..lines.len()).min_by(|&a, &b| {
        lines[a]
            .line
            .at_actual_use()
            .total_cmp(&lines[b].line.at_actual_use())
    });
    let best = r
        .recommendation
        .as_ref()
        .and_then(|rec| {
            // A line that stands for several equal options is named for the first.
            let s = ctx.shown_for(&rec.best.tier, rec.best.option)?;
            let name = option_name(&s.tier.name, s.cost.option);
            lines.iter().position(|l| l.name == name)
        })
        .or(lowest);
    let title = match best {
        Some(b) if lines.len() > 1 => format!("{} is cheapest as the fleets run", name_of(b)),
        _ => "Net present cost against daily use".to_string(),
    };
    let at_equal_use = match envelope.as_slice() {
        [] => String::new(),
        [(a, _, _)] => format!("At equal use {} is cheapest all day.", name_of(*a)),
        [(a, _, cut), (b, _, _)] => format!(
            "At equal use {} is cheapest below {} h/day, {} above.",
            name_of(*a),
            h(*cut),
            name_of(*b)
        ),
        more => format!(
            "At equal use the cheapest changes at {} h/day.",
            more[1..]
                .iter()
                .map(|s| h(s.1))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut subtitle = String::from("Dots: each option as it runs; rings: break-even.");
    // "* Other hardware: 1 on-prem server vs 4–16 NVIDIA L4 g6.xlarge, 3–10 Inferentia2
    // instances." — one clause per on-prem tier.
    let mut clauses: Vec<String> = vec![];
    let mut done: Vec<&str> = vec![];
    for b in &cross {
        if done.contains(&b.on_prem_tier.as_str()) {
            continue;
        }
        done.push(&b.on_prem_tier);
        let clouds: Vec<String> = cross
            .iter()
            .filter(|c| c.on_prem_tier == b.on_prem_tier)
            .map(|c| {
                format!(
                    "{} {}",
                    crate::report::table::unit_range(c.cloud_units),
                    c.cloud_tier
                )
            })
            .collect();
        let one = clouds.len() == 1
            && cross
                .iter()
                .all(|c| c.on_prem_tier != b.on_prem_tier || c.cloud_units.max == 1);
        clauses.push(format!(
            "{} vs {} {}",
            crate::report::table::on_prem_units_label(b),
            clouds.join(", "),
            if one { "instance" } else { "instances" }
        ));
    }
    if !clauses.is_empty() {
        subtitle.push_str(&format!(" * Other hardware: {}.", clauses.join("; ")));
    }
    if !at_equal_use.is_empty() {
        subtitle.push(' ');
        subtitle.push_str(&at_equal_use);
    }
    if !ctx.left_out.is_empty() {
        subtitle.push_str(&format!(
            " {} dearer option{} not drawn.",
            ctx.left_out.len(),
            if ctx.left_out.len() == 1 { "" } else { "s" }
        ));
    }
    let mut marks: Vec<Mark> = vec![];
    // Each option at its operating point, labelled with its ranking figure; the finding's
    // first, so its label is placed first.
    let order = best
        .into_iter()
        .chain((0..lines.len()).filter(|&i| Some(i) != best));
    // Only on-prem's and the finding's dots are labelled: the cloud options of a tier share
    // one operating point, and their labels would pile up.
    for (i, l) in order.map(|i| (i, &lines[i])) {
        let x = l.line.actual_hours_per_day;
        let labelled = Some(i) == best
            || l.name
                .ends_with(&format!(" · {}", DeploymentOption::OnPrem));
        marks.push(Mark {
            at: (x, l.line.at(x)),
            label: if labelled {
                format::usd_compact(l.line.at(x))
            } else {
                String::new()
            },
            color: l.color,
            secondary: false,
            filled: true,
        });
    }
    for be in &r.break_even {
        // A ring where two drawn lines meet; pairs with a line left out have none.
        let both = ctx
            .shown_for(&be.on_prem_tier, DeploymentOption::OnPrem)
            .is_some()
            && ctx.shown_for(&be.cloud_tier, be.cloud_option).is_some();
        if let ExactBreakEven::At { hours_per_day, .. } = be.exact
            && both
        {
            let y = be.on_prem_line.at(hours_per_day);
            if !marks
                .iter()
                .any(|m: &Mark| (m.at.0 - hours_per_day).abs() < 1e-9 && (m.at.1 - y).abs() < 1.0)
            {
                marks.push(Mark {
                    at: (hours_per_day, y),
                    label: format::hours_per_day(hours_per_day),
                    color: draw::INK,
                    secondary: false,
                    filled: false,
                });
            }
        }
    }
    let max = lines
        .iter()
        .map(|l| l.line.at(0.0).max(l.line.at(DAY_HOURS)))
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
                max: DAY_HOURS,
                step: 4.0,
                ticks: (0..=6).map(|i| i as f64 * 4.0).collect(),
            },
            fmt: Box::new(|v| format!("{}", v.round() as i64)),
            desc: "Daily use (hours per day)".into(),
        },
        y: money_axis(max, "Net present cost (USD)"),
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
        caption: "At what daily use does owning beat renting? Each option's net present cost \
                  (the ranking figure) as a straight line in hours per day of full use of its \
                  planned fleet: on-prem pays everything but the dynamic power whatever the use; \
                  on-demand pays per hour used; a reservation pays its commitment whether used or \
                  not; a hybrid pays its base and bursts per hour. Egress, licences and other \
                  costs that do not scale with hours are fixed at the actual traffic. Dots mark \
                  each option where it actually runs (on-prem: 24 h × its mean utilization; cloud: \
                  the autoscaled instance-hours over the planned fleet's), at its net present \
                  cost; rings mark the exact break-even points of the break-even table between \
                  the lines drawn."
            .to_string()
            + &ctx.left_out_sentence(),
        svg,
    }]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_names_the_cheapest_line_on_each_stretch() {
        let line = |fixed: f64, slope: f64| CostLine {
            fixed_usd: fixed,
            per_hour_day_usd: slope,
            actual_hours_per_day: 0.0,
            seed_basis_full_use_usd: 0.0,
        };
        let op = line(100.0, 1.0);
        let od = line(0.0, 11.0);
        let env = lower_envelope(&[op, od]);
        assert_eq!(env.len(), 2);
        assert_eq!(env[0].0, 1);
        assert_eq!(env[1].0, 0);
        assert!((env[0].2 - 10.0).abs() < 1e-9);
        assert_eq!(lower_envelope(&[op]), vec![(0, 0.0, 24.0)]);
        assert!(lower_envelope(&[]).is_empty());
    }
}
