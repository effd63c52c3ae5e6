//! The capacity charts: each year's traffic against each tier's planned capacity, and the
//! autoscaled cloud fleet over the busiest day against that day's request rate.

use super::draw::{self, Axis, Head, LegendEntry, Marker, Swatch};
use super::line::{self, AxisSpec, Line, LineChart, Mark};
use super::{Built, ChartError, Context, Drawn, Skipped, draw_error};
use crate::format;
use crate::hardware::DeploymentOption;
use crate::results::TierResult;

/// An axis for counts (instances, units): whole-number ticks only.
fn count_axis(max: f64) -> Axis {
    let a = draw::nice_axis(0.0, max.max(1.0), 5);
    if a.step >= 1.0 {
        return a;
    }
    let top = max.max(1.0).ceil();
    Axis {
        min: 0.0,
        max: top,
        step: 1.0,
        ticks: (0..=top as i64).map(|v| v as f64).collect(),
    }
}

fn rps_axis(max: f64, desc: &str) -> AxisSpec {
    let axis = draw::nice_axis(0.0, max, 6);
    let step = axis.step;
    AxisSpec {
        axis,
        fmt: Box::new(move |v| format::number_tick(v, step)),
        desc: desc.into(),
    }
}

/// A log axis over `lo..=hi` (both > 0) with a tick at each power of ten, labelled as the
/// number itself ("1", "10", "1,000"). Values are plotted as their base-10 logarithm.
pub(crate) fn log_axis(lo: f64, hi: f64, desc: &str) -> AxisSpec {
    let (a, b) = (
        lo.log10().floor(),
        hi.log10().ceil().max(lo.log10().floor() + 1.0),
    );
    let ticks: Vec<f64> = (a as i32..=b as i32).map(f64::from).collect();
    AxisSpec {
        axis: Axis {
            min: a,
            max: b,
            step: 1.0,
            ticks,
        },
        fmt: Box::new(|v| format::rate(10f64.powf(v))),
        desc: desc.into(),
    }
}

/// Put lines and marks on a log axis: each value becomes its base-10 logarithm; values at or
/// below zero cannot be drawn there and are left out of the line.
fn to_log(lines: &mut [Line], marks: &mut [Mark]) {
    let l = |v: f64| if v > 0.0 { v.log10() } else { f64::NAN };
    for line in lines {
        for p in &mut line.points {
            p.1 = l(p.1);
        }
        if let Some(at) = &mut line.marker_at {
            for p in at {
                p.1 = l(p.1);
            }
        }
    }
    for m in marks {
        m.at.1 = l(m.at.1);
    }
}

/// The planning headroom from the inputs ("slo.max_utilization"), when recorded.
fn max_utilization(ctx: &Context<'_>) -> Option<f64> {
    ctx.results
        .inputs
        .iter()
        .find(|i| i.scope == "slo" && i.field == "max_utilization")
        .map(|i| i.value)
}

/// Traffic per year against each tier's planned capacity at full load.
pub(super) fn years(ctx: &Context<'_>) -> Result<Built, ChartError> {
    const NAME: &str = "capacity";
    let tiers: Vec<&TierResult> = ctx
        .results
        .tiers
        .iter()
        .filter(|t| !t.capacity.is_empty() && t.infeasible.is_none())
        .collect();
    // A tier no fleet size serves within the contract has no fleet to draw.
    let infeasible: Vec<&str> = ctx
        .results
        .tiers
        .iter()
        .filter(|t| t.infeasible.is_some())
        .map(|t| t.name.as_str())
        .collect();
    let Some(first) = tiers.first() else {
        return Ok(Err(Skipped {
            name: NAME.into(),
            what: "traffic against provisioned capacity".into(),
            reason: "no tier has a capacity plan".into(),
        }));
    };
    let peak: Vec<(f64, f64)> = first
        .capacity
        .iter()
        .map(|c| (c.year as f64, c.peak_rps))
        .collect();
    let mean: Vec<(f64, f64)> = first
        .capacity
        .iter()
        .map(|c| (c.year as f64, c.mean_rps))
        .collect();
    let years = tiers
        .iter()
        .flat_map(|t| t.capacity.iter().map(|c| c.year))
        .max()
        .unwrap_or(1);
    // Capacity holds for a whole year and changes at the year boundary: a step line.
    let capacity = |t: &TierResult| -> Vec<(f64, f64)> {
        t.capacity
            .iter()
            .flat_map(|c| {
                let v = c.units as f64 * t.unit_throughput_rps;
                [(c.year as f64 - 0.5, v), (c.year as f64 + 0.5, v)]
            })
            .collect()
    };
    // The first tier-year whose capacity at full load is below that year's peak.
    let short = tiers.iter().find_map(|t| {
        t.capacity
            .iter()
            .find(|c| (c.units as f64) * t.unit_throughput_rps < c.peak_rps)
            .map(|c| (t.name.clone(), c.year))
    });
    let headroom = tiers
        .iter()
        .flat_map(|t| {
            t.capacity
                .iter()
                .filter(|c| c.peak_rps > 0.0)
                .map(|c| c.units as f64 * t.unit_throughput_rps / c.peak_rps)
        })
        .fold(f64::INFINITY, f64::min);
    let title = match &short {
        Some((tier, 1)) => format!("{tier}'s fleet cannot carry the peak traffic"),
        Some((tier, y)) => format!("{tier}'s fleet falls short of the peak from year {y}"),
        None if headroom.is_finite() => format!(
            "Every planned fleet carries its year's peak, with at least {} headroom",
            format::times(headroom)
        ),
        None => "Every planned fleet carries its year's peak".to_string(),
    };
    let (p1, pn) = (
        peak.first().map_or(0.0, |p| p.1),
        peak.last().map_or(0.0, |p| p.1),
    );
    let mut subtitle = if (pn - p1).abs() > 1e-9 {
        format!(
            "Design peak traffic grows from {} to {} over {years} years.",
            format::rps(p1),
            format::rps(pn)
        )
    } else {
        format!("Design peak traffic stays at {}.", format::rps(p1))
    };
    subtitle.push_str(" Capacity = units planned × one unit's roofline throughput at full load");
    match max_utilization(ctx) {
        Some(u) => subtitle.push_str(&format!(
            "; fleets are planned to at most {} utilization.",
            format::percent(u, 0)
        )),
        None => subtitle.push('.'),
    }
    if !infeasible.is_empty() {
        subtitle.push_str(&format!(
            " Not drawn, no fleet meets the contract: {}.",
            infeasible.join(", ")
        ));
    }

    let mut lines = vec![
        Line {
            marker: Some(Marker::Circle),
            ..Line::new(draw::INK, peak.clone())
        },
        Line {
            dashed: true,
            width: 2,
            ..Line::new(draw::GREY, mean)
        },
    ];
    let mut legend = vec![
        LegendEntry {
            label: "design peak traffic".into(),
            color: draw::INK,
            swatch: Swatch::Line(Marker::Circle),
        },
        LegendEntry {
            label: "mean traffic".into(),
            color: draw::GREY,
            swatch: Swatch::Dashed,
        },
    ];
    let mut marks = vec![];
    // Tiers that plan the same capacity every year draw one line, labelled "A = B".
    let groups = super::equal_groups(tiers.iter().copied(), |a, b| {
        super::same_points(&capacity(a), &capacity(b))
    });
    let n = groups.len();
    for (gi, g) in groups.iter().enumerate() {
        let t = g[0];
        let (color, marker) = ctx.tier_color(&t.name);
        let pts = capacity(t);
        let units: Vec<String> = t.capacity.iter().map(|c| format::count(c.units)).collect();
        let names: Vec<&str> = g.iter().map(|t| t.name.as_str()).collect();
        legend.push(LegendEntry {
            label: format!(
                "{} roofline capacity (units: {})",
                super::merged_label(&names),
                units.join(" ")
            ),
            color,
            swatch: Swatch::Line(marker),
        });
        if n <= 3 {
            // Label the unit count where it changes, so the eye finds the steps.
            let mut last = None;
            for c in &t.capacity {
                if last != Some(c.units) {
                    marks.push(Mark {
                        at: (c.year as f64, c.units as f64 * t.unit_throughput_rps),
                        label: format!(
                            "{} unit{}",
                            format::count(c.units),
                            if c.units == 1 { "" } else { "s" }
                        ),
                        color: draw::INK,
                        secondary: false,
                        filled: false,
                    });
                }
                last = Some(c.units);
            }
        }
        // What the last year's fleet carries within the SLO, from the simulated curve: the
        // figure the latency chart's title quotes, below the roofline where queueing bites.
        // Each tier of a merged line has its own curve, so its own dot.
        for t in g {
            if let (Some(last), Some(limit)) = (
                t.capacity.last(),
                t.contract_limit_rps(
                    ctx.results.scenario.slo_percentile,
                    &ctx.results.scenario.bounds(),
                ),
            ) {
                marks.push(Mark {
                    at: (last.year as f64, limit),
                    label: format!("SLO limit {}", format::rps(limit)),
                    color,
                    secondary: false,
                    filled: true,
                });
            }
        }
        // Lines that differ but run close: later ones are drawn wider and underneath, so
        // every line still shows as a rim around the ones on top.
        lines.push(Line {
            marker: Some(marker),
            width: (3 + 2 * (n - 1 - gi)).min(9) as u32,
            marker_at: Some(
                t.capacity
                    .iter()
                    .map(|c| (c.year as f64, c.units as f64 * t.unit_throughput_rps))
                    .collect(),
            ),
            ..Line::new(color, pts)
        });
    }
    let max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    // Peak traffic and capacity decide the scale; the mean line may sit below it.
    let min = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 1)
        .flat_map(|(_, l)| l.points.iter().map(|p| p.1))
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    // Where capacity and traffic are more than ten times apart, a linear axis flattens the
    // traffic line against zero: a log axis keeps both readable.
    let log = min.is_finite() && max > 10.0 * min;
    let y = if log {
        to_log(&mut lines, &mut marks);
        log_axis(min, max * 1.05, "Requests/s (log scale)")
    } else {
        rps_axis(max * 1.05, "Requests per second")
    };
    let chart = LineChart {
        head: Head {
            title: title.clone(),
            subtitle,
            legend,
            footer: ctx.footer.clone(),
        },
        x: AxisSpec {
            axis: Axis {
                min: 0.5,
                max: years as f64 + 0.5,
                step: 1.0,
                ticks: (1..=years).map(|y| y as f64).collect(),
            },
            fmt: Box::new(|v| format!("{}", v.round() as i64)),
            desc: "Year".into(),
        },
        y,
        y2: None,
        lines,
        rules: vec![],
        marks,
        height: draw::HEIGHT,
    };
    let svg = line::render(&chart).map_err(draw_error(NAME))?;
    Ok(Ok(vec![Drawn {
        name: NAME.into(),
        title,
        caption: format!(
            "Does each year's fleet carry that year's traffic? Design-hour (peak) and mean \
             request rate per year against each tier's planned roofline capacity: units planned \
             × the throughput of one unit at full load. Utilization is the peak over that \
             capacity. Tiers planning the same capacity every year share one line (\"A = B\"). \
             Rings mark the years in which a fleet changes size; a filled dot in the last year \
             marks the load the fleet carries within the SLO, read off the simulated \
             latency-against-load curve (where queueing makes it lower than the roofline).{}",
            if log {
                " The request-rate axis is logarithmic: capacity and traffic are more than ten \
                 times apart."
            } else {
                ""
            }
        ),
        svg,
    }]))
}

/// Hour-by-hour step points: value v_h held from h to h + 1.
fn steps(values: impl Iterator<Item = f64>) -> Vec<(f64, f64)> {
    let mut pts = vec![];
    for (h, v) in values.enumerate() {
        pts.push((h as f64, v));
        pts.push((h as f64 + 1.0, v));
    }
    pts
}

/// Instances of each autoscaled cloud fleet over the busiest day against that day's rate.
pub(super) fn design_day(ctx: &Context<'_>) -> Result<Built, ChartError> {
    const NAME: &str = "design-day";
    let what = "cloud instances over the busiest day against its request rate";
    let r = ctx.results;
    if r.design_day_rps.is_empty() {
        return Ok(Err(Skipped {
            name: NAME.into(),
            what: what.into(),
            reason: "the traffic gives no hourly curve for the peak day".into(),
        }));
    }
    let autoscaled = |t: &TierResult| {
        t.options.iter().any(|o| {
            matches!(
                o.option,
                DeploymentOption::OnDemand
                    | DeploymentOption::Spot
                    | DeploymentOption::Hybrid1y
                    | DeploymentOption::Hybrid3y
            )
        })
    };
    let tiers: Vec<&TierResult> = r
        .tiers
        .iter()
        .filter(|t| !t.design_day_units.is_empty() && autoscaled(t))
        .collect();
    if tiers.is_empty() {
        return Ok(Err(Skipped {
            name: NAME.into(),
            what: what.into(),
            reason: "no tier runs an autoscaled cloud fleet (the fleets are fixed in size, or \
                     on-prem only)"
                .into(),
        }));
    }
    let years = ctx.years();
    // A request rate cannot fall below zero; a traffic curve that dips below it is drawn at
    // zero, and the subtitle says so.
    let negative = r.design_day_rps.iter().any(|&v| v < 0.0);
    let rates: Vec<f64> = r.design_day_rps.iter().map(|&v| v.max(0.0)).collect();
    let rmin = rates.iter().copied().fold(f64::INFINITY, f64::min);
    let rmax = rates.iter().copied().fold(0.0, f64::max);
    let umin = tiers
        .iter()
        .flat_map(|t| t.design_day_units.iter().copied())
        .min()
        .unwrap_or(0);
    let umax = tiers
        .iter()
        .flat_map(|t| t.design_day_units.iter().copied())
        .max()
        .unwrap_or(0);
    let plural = |n: u32| if n == 1 { "" } else { "s" };
    let title = match (tiers.len(), umin == umax) {
        (1, true) => format!(
            "On the busiest day, {} runs {umax} instance{} all day",
            tiers[0].name,
            plural(umax)
        ),
        (1, false) => format!(
            "On the busiest day, {} runs between {umin} and {umax} instances",
            tiers[0].name
        ),
        (_, true) => format!(
            "On the busiest day, each autoscaled fleet runs {umax} instance{} all day",
            plural(umax)
        ),
        (_, false) => {
            format!("On the busiest day, the autoscaled fleets run {umin} to {umax} instances")
        }
    };
    let mut subtitle = format!(
        "Year {years}'s busiest day, hourly means {} to {} (grey, left axis), against the \
         instances an autoscaled fleet runs each hour (right axis).",
        format::rps(rmin),
        format::rps(rmax)
    );
    // The design peak is the busiest stretch within an hour (a trace's busiest window, a
    // burst): above the busiest hour's mean. Both are named, so the two charts do not seem to
    // disagree.
    if let Some(peak) = tiers[0].capacity.last().map(|c| c.peak_rps)
        && peak > rmax * 1.005
    {
        subtitle.push_str(&format!(
            " The design peak the fleets are planned for is {} (the busiest window within an \
             hour).",
            format::rps(peak)
        ));
    }
    if negative {
        subtitle.push_str(" The traffic curve dips below zero at night; drawn at zero.");
    }
    let units_axis = count_axis(umax as f64 * 1.15);
    let mut lines = vec![Line {
        width: 2,
        fill: true,
        ..Line::new(draw::GREY, steps(rates.iter().copied()))
    }];
    let mut legend = vec![LegendEntry {
        label: "request rate (left axis)".into(),
        color: draw::GREY,
        swatch: Swatch::Box,
    }];
    // Fleets that run the same instances every hour draw one line, labelled "A = B".
    let groups = super::equal_groups(tiers.iter().copied(), |a, b| {
        a.design_day_units == b.design_day_units
    });
    for g in &groups {
        let t = g[0];
        let names: Vec<&str> = g.iter().map(|t| t.name.as_str()).collect();
        let (color, marker) = ctx.tier_color(&t.name);
        lines.push(Line {
            secondary: true,
            marker: Some(marker),
            marker_at: Some(
                t.design_day_units
                    .iter()
                    .enumerate()
                    .step_by(3)
                    .map(|(h, &u)| (h as f64 + 0.5, u as f64))
                    .collect(),
            ),
            ..Line::new(color, steps(t.design_day_units.iter().map(|&u| u as f64)))
        });
        legend.push(LegendEntry {
            label: format!("{} instances (right axis)", super::merged_label(&names)),
            color,
            swatch: Swatch::Line(marker),
        });
    }
    let ustep = units_axis.step;
    let chart = LineChart {
        head: Head {
            title: title.clone(),
            subtitle,
            legend,
            footer: ctx.footer.clone(),
        },
        x: AxisSpec {
            axis: Axis {
                min: 0.0,
                max: 24.0,
                step: 3.0,
                ticks: (0..=8).map(|i| i as f64 * 3.0).collect(),
            },
            fmt: Box::new(|v| format!("{:02}:00", v.round() as i64)),
            desc: format!("Hour of the busiest day of year {years}"),
        },
        y: rps_axis(rmax * 1.1, "Requests per second"),
        y2: Some(AxisSpec {
            axis: units_axis,
            fmt: Box::new(move |v| format::number_tick(v, ustep)),
            desc: "Instances running".into(),
        }),
        lines,
        rules: vec![],
        marks: vec![],
        height: draw::HEIGHT,
    };
    let svg = line::render(&chart).map_err(draw_error(NAME))?;
    Ok(Ok(vec![Drawn {
        name: NAME.into(),
        title,
        caption: format!(
            "How closely does an autoscaled cloud fleet follow the traffic? The request rate in \
             each hour of year {years}'s busiest day and the instances an on-demand (or hybrid \
             burst) fleet runs in that hour; on-demand is billed for these instance-hours."
        ),
        svg,
    }]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_axes_tick_whole_numbers() {
        let a = count_axis(2.3);
        assert!(a.ticks.iter().all(|t| t.fract() == 0.0), "{a:?}");
        assert!(a.max >= 2.3);
        assert!(count_axis(0.0).max >= 1.0);
    }

    #[test]
    fn steps_hold_each_hour() {
        assert_eq!(
            steps([1.0, 2.0].into_iter()),
            vec![(0.0, 1.0), (1.0, 1.0), (1.0, 2.0), (2.0, 2.0)]
        );
    }
}
