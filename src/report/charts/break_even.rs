//! The break-even chart: each option's five-year cost as a straight line in hours of use per
//! day, the cheapest stretch of each named in the title and the exact break-even points ringed.

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

/// Five-year cost against daily use for on-prem and each cloud option, from the cost lines.
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
                option_name(tier, option),
                draw::option_color(option),
                draw::Marker::nth(seen.len()),
                false,
            ),
        };
        lines.push(CostLineSeries {
            name: option_name(tier, option),
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
    // Hours of the day, as the h/day labels print them.
    let h = |x: f64| format::grouped(x, 1);
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
                    label: format::hours_per_day(hours_per_day),
                    color: draw::INK,
                    secondary: false,
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

#[cfg(test)]
mod tests {
    use super::*;

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
