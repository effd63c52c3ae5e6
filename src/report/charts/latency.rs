//! The latency charts, from the simulator's data: tail latency against offered load per tier
//! (the "hockey stick") with the SLO bound, and the latency distribution at the planned fleet.
//! Runs without simulated latency skip both, with the reason.

use super::draw::{self, Axis, Head, LegendEntry, Marker, Swatch};
use super::line::{self, AxisSpec, Line, LineChart, Mark, Rule};
use super::{Built, ChartError, Context, Drawn, Skipped, draw_error};
use crate::capacity::LoadPoint;
use crate::format;
use crate::results::TierResult;

fn no_latency(ctx: &Context<'_>, name: &str, what: &str) -> Skipped {
    Skipped {
        name: name.into(),
        what: what.into(),
        reason: format!(
            "this run sized its fleets with the {} method, which gives no latency distribution; \
             simulated runs have one",
            ctx.results.scenario.capacity_method
        ),
    }
}

fn ms_axis(max_ms: f64, desc: &str) -> AxisSpec {
    let axis = draw::nice_axis(0.0, max_ms, 6);
    let step = axis.step;
    AxisSpec {
        axis,
        fmt: Box::new(move |v| format::number_tick(v, step)),
        desc: desc.into(),
    }
}

/// Reads one percentile off a load point.
type Percentile = fn(&LoadPoint) -> f64;

/// The vertical line at the year's peak load, when there is one.
fn peak_rule(peak: Option<f64>, years: u32) -> Option<Rule> {
    peak.map(|peak| Rule {
        vertical: true,
        at: peak,
        label: format!("year-{years} peak {}", format::rps(peak)),
        color: draw::GREY,
    })
}

/// The legend entry of the dashed SLO bound.
fn slo_legend() -> LegendEntry {
    LegendEntry {
        label: "SLO bound".into(),
        color: draw::INK,
        swatch: Swatch::Dashed,
    }
}

/// The offered-load axis of the latency charts: from 0 to the highest load simulated or the
/// year's peak, whichever is higher.
fn load_axis(curve: &[LoadPoint], peak: Option<f64>) -> AxisSpec {
    let x_max = curve
        .iter()
        .map(|l| l.offered_rps)
        .fold(peak.unwrap_or(0.0), f64::max);
    let axis = draw::nice_axis(0.0, x_max, 6);
    let step = axis.step;
    AxisSpec {
        axis,
        fmt: Box::new(move |v| format::number_tick(v, step)),
        desc: "Offered load (requests per second)".into(),
    }
}

/// The percentile series of a load point closest to the SLO's percentile.
fn series_for(p: f64) -> (f64, Percentile) {
    let options: [(f64, Percentile); 3] = [
        (50.0, |l| l.p50_s),
        (95.0, |l| l.p95_s),
        (99.0, |l| l.p99_s),
    ];
    options
        .into_iter()
        .min_by(|a, b| (a.0 - p).abs().total_cmp(&(b.0 - p).abs()))
        .unwrap_or((99.0, |l| l.p99_s))
}

/// The highest offered load [req/s] at which `value` stays within `bound`, interpolated between
/// simulated points; `Ok(None)` when it is within at every load, `Err(())` when at none.
pub(crate) fn max_load_within(
    curve: &[LoadPoint],
    value: Percentile,
    bound: f64,
) -> Result<Option<(f64, f64)>, ()> {
    let Some(first_bad) = curve.iter().position(|l| value(l) > bound) else {
        return Ok(None);
    };
    if first_bad == 0 {
        return Err(());
    }
    let (a, b) = (&curve[first_bad - 1], &curve[first_bad]);
    let (va, vb) = (value(a), value(b));
    let t = if vb > va {
        ((bound - va) / (vb - va)).clamp(0.0, 1.0)
    } else {
        0.0
    };
    Ok(Some((
        a.offered_rps + t * (b.offered_rps - a.offered_rps),
        a.utilization + t * (b.utilization - a.utilization),
    )))
}

/// p50/p95/p99 against offered load, one chart per tier with simulated data.
pub(super) fn curves(ctx: &Context<'_>) -> Result<Built, ChartError> {
    let what = "tail latency against offered load";
    let tiers: Vec<&TierResult> = ctx
        .results
        .tiers
        .iter()
        .filter(|t| !t.latency_curve.is_empty())
        .collect();
    if tiers.is_empty() {
        return Ok(Err(no_latency(ctx, "latency", what)));
    }
    let years = ctx.years();
    let mut out = vec![];
    let mut used: Vec<String> = vec![];
    for t in tiers {
        let mut name = format!("latency-{}", draw::slug(&t.name));
        while used.contains(&name) {
            name.push('x');
        }
        used.push(name.clone());
        let mut curve = t.latency_curve.clone();
        curve.retain(|l| l.offered_rps.is_finite());
        curve.sort_by(|a, b| a.offered_rps.total_cmp(&b.offered_rps));
        let units = t.capacity.last().map_or(0, |c| c.units);
        let peak = t.capacity.last().map(|c| c.peak_rps);
        // Under a contract on time to first token or per output token, the contracted metrics
        // against load come first, with their bounds.
        if let Some(d) = token_chart(ctx, t, &curve, &mut used)? {
            out.push(d);
        }
        let data_max = curve
            .iter()
            .map(|l| l.p99_s.max(l.p95_s).max(l.p50_s))
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max)
            * 1e3;
        // The knee of the hockey stick runs off to infinity; keep the SLO region readable.
        let (y_top, clipped) = match ctx.slo {
            Some((_, bound)) => {
                let cap = bound * 1e3 * 3.0;
                let top = data_max.min(cap).max(bound * 1e3 * 1.15);
                (top, data_max > top)
            }
            None => (data_max, false),
        };
        // The fleet's capacity and the SLO limit are the results' own figures, so this chart,
        // the capacity chart and the tables quote the same numbers.
        let cap = t.capacity.last().map_or(0.0, |c| t.capacity_rps(c));
        let util = |rps: f64| if cap > 0.0 { rps / cap } else { 0.0 };
        let title = match ctx.slo {
            Some((p, bound)) => {
                let (sp, value) = series_for(p);
                let label = format::percentile(sp);
                let bound_label = format::duration(bound);
                match (
                    max_load_within(&curve, value, bound),
                    t.slo_limit_rps(p, Some(bound)),
                ) {
                    (Ok(None), _) => format!(
                        "{}: {label} stays within {bound_label} at every load simulated, up to {}",
                        t.name,
                        format::rps(curve.last().map_or(0.0, |l| l.offered_rps))
                    ),
                    (Ok(Some(_)), Some(load)) => format!(
                        "{}: {label} stays within {bound_label} up to {} ({} utilization)",
                        t.name,
                        format::rps(load),
                        format::percent(util(load), 0)
                    ),
                    _ => format!(
                        "{}: {label} exceeds {bound_label} at every load simulated",
                        t.name
                    ),
                }
            }
            None => format!("{}: tail latency against offered load", t.name),
        };
        let (umin, umax) = curve.iter().fold((f64::INFINITY, 0.0f64), |(a, b), l| {
            (a.min(util(l.offered_rps)), b.max(util(l.offered_rps)))
        });
        let mut subtitle = format!(
            "Simulated under steady Poisson load at year {years}'s planned fleet of {} unit{} \
             ({} of its {} capacity).",
            format::count(units),
            if units == 1 { "" } else { "s" },
            format::percent_range(umin, umax, 0),
            format::rps(cap)
        );
        if clipped {
            subtitle.push_str(&format!(
                " Above {} the curves leave the chart.",
                format::duration(y_top / 1e3)
            ));
        }
        // Seconds, not thousands of milliseconds, once the axis passes two seconds.
        let (k, axis_desc) = if y_top >= 2000.0 {
            (1e-3, "Latency (s)")
        } else {
            (1.0, "Latency (ms)")
        };
        let colors = [draw::OKABE_ITO[5], draw::OKABE_ITO[1], draw::OKABE_ITO[3]];
        let pct: [(&str, Percentile, Marker); 3] = [
            ("p50", |l| l.p50_s, Marker::Circle),
            ("p95", |l| l.p95_s, Marker::Square),
            ("p99", |l| l.p99_s, Marker::Triangle),
        ];
        let lines: Vec<Line> = pct
            .iter()
            .zip(colors)
            .map(|((_, f, m), c)| Line {
                marker: Some(*m),
                ..Line::new(
                    c,
                    curve
                        .iter()
                        .map(|l| (l.offered_rps, f(l) * 1e3 * k))
                        .collect(),
                )
            })
            .collect();
        let mut legend: Vec<LegendEntry> = pct
            .iter()
            .zip(colors)
            .map(|((n, _, m), c)| LegendEntry {
                label: (*n).into(),
                color: c,
                swatch: Swatch::Line(*m),
            })
            .collect();
        let mut rules = vec![];
        if let Some((p, bound)) = ctx.slo {
            rules.push(Rule {
                vertical: false,
                at: bound * 1e3 * k,
                label: format!(
                    "SLO: {} ≤ {}",
                    format::percentile(p),
                    format::duration(bound)
                ),
                color: draw::INK,
            });
            legend.push(slo_legend());
        }
        rules.extend(peak_rule(peak, years));
        // The planned fleet as the fleet table measured it: the design run at the year's peak
        // (its time-varying busiest window, not the steady load the curve is swept at), so the
        // number at the peak is the table's.
        let mut marks = vec![];
        let plan = t.capacity.last().and_then(|c| c.latency.as_ref());
        if let (Some(peak), Some(l)) = (peak, plan) {
            let pct = format::percentile(ctx.results.scenario.slo_percentile);
            marks.push(Mark {
                at: (peak, l.slo_percentile_s * 1e3 * k),
                label: format!("plan: {pct} {}", format::duration(l.slo_percentile_s)),
                color: draw::INK,
                secondary: false,
                filled: true,
            });
        }
        // A contract on time to first token and per output token is not a bound on these
        // end-to-end curves: say what it is and what the plan measured.
        let r = &ctx.results.scenario;
        if let Some(l) = plan {
            let pct = format::percentile(r.slo_percentile);
            let mut parts = vec![];
            if let (Some(b), Some(v)) = (r.slo_ttft_s, l.ttft_s) {
                parts.push(format!(
                    "TTFT {pct} ≤ {} (plan {})",
                    format::duration(b),
                    format::duration(v)
                ));
            }
            if let (Some(b), Some(v)) = (r.slo_tpot_s, l.tpot_s) {
                parts.push(format!(
                    "TPOT {pct} ≤ {} (plan {})",
                    format::duration(b),
                    format::duration(v)
                ));
            }
            if !parts.is_empty() {
                subtitle.push_str(&format!(" Contract: {}.", parts.join(", ")));
            }
        }
        let chart = LineChart {
            head: Head {
                title: title.clone(),
                subtitle,
                legend,
                footer: ctx.footer.clone(),
            },
            x: load_axis(&curve, peak),
            y: ms_axis(y_top * k, axis_desc),
            y2: None,
            lines,
            rules,
            marks,
            height: draw::HEIGHT,
        };
        let svg = line::render(&chart).map_err(draw_error(&name))?;
        out.push(Drawn {
            name,
            title,
            caption: format!(
                "How much load can {}'s planned fleet take before the tail breaks the contract? \
                 p50, p95 and p99 latency against offered load at the year-{years} fleet of \
                 {} unit{}, from the simulator under steady Poisson load; {}the grey line is \
                 the year's peak traffic and the dot the planned fleet as the fleet table \
                 measured it at that peak (over the busiest window of the design day).",
                t.name,
                format::count(units),
                if units == 1 { "" } else { "s" },
                if ctx.slo.is_some() {
                    "the dashed line is the SLO bound on end-to-end latency; "
                } else {
                    "the contract bounds time to first token and per output token, not the \
                     end-to-end latency drawn, so no bound is drawn here (the chart before this \
                     one draws the contracted metrics against their bounds); "
                }
            ),
            svg,
        });
    }
    Ok(Ok(out))
}

/// One contracted token metric of a load curve.
struct TokenMetric {
    name: &'static str,
    bound_s: f64,
    value: fn(&LoadPoint) -> Option<f64>,
    at_plan: Option<f64>,
    color: plotters::style::RGBColor,
    marker: Marker,
}

/// Seconds or milliseconds for an axis whose top is `top_s`: (factor from s, unit).
fn time_unit(top_s: f64) -> (f64, &'static str) {
    if top_s >= 2.0 {
        (1.0, "s")
    } else {
        (1e3, "ms")
    }
}

/// Time to first token and time per output token at the contract's percentile against offered
/// load, for a tier whose contract bounds them: TTFT on the left axis, TPOT on the right, both
/// scaled so their bounds sit on one SLO line. `None` when the contract bounds neither or the
/// curve did not measure them.
fn token_chart(
    ctx: &Context<'_>,
    t: &TierResult,
    curve: &[LoadPoint],
    used: &mut Vec<String>,
) -> Result<Option<Drawn>, ChartError> {
    let sc = &ctx.results.scenario;
    let plan = t.capacity.last().and_then(|c| c.latency.as_ref());
    let mut metrics: Vec<TokenMetric> = vec![];
    if let Some(b) = sc.slo_ttft_s {
        metrics.push(TokenMetric {
            name: "TTFT",
            bound_s: b,
            value: |l| l.ttft_s,
            at_plan: plan.and_then(|l| l.ttft_s),
            color: draw::OKABE_ITO[5],
            marker: Marker::Circle,
        });
    }
    if let Some(b) = sc.slo_tpot_s {
        metrics.push(TokenMetric {
            name: "TPOT",
            bound_s: b,
            value: |l| l.tpot_s,
            at_plan: plan.and_then(|l| l.tpot_s),
            color: draw::OKABE_ITO[1],
            marker: Marker::Triangle,
        });
    }
    metrics.retain(|m| curve.iter().any(|l| (m.value)(l).is_some()));
    if metrics.is_empty() {
        return Ok(None);
    }
    let mut name = format!("latency-tokens-{}", draw::slug(&t.name));
    while used.contains(&name) {
        name.push('x');
    }
    used.push(name.clone());
    let years = ctx.years();
    let pct = format::percentile(sc.slo_percentile);
    let units = t.capacity.last().map_or(0, |c| c.units);
    let peak = t.capacity.last().map(|c| c.peak_rps);
    let cap = t.capacity.last().map_or(0.0, |c| t.capacity_rps(c));
    let util = |rps: f64| if cap > 0.0 { rps / cap } else { 0.0 };
    // Both axes run to the same multiple of their bound, so one line is the bound of both:
    // the highest value over its bound (the plan's too), at least 1.2 and at most 3, in
    // half-bound steps.
    let ratio = metrics
        .iter()
        .flat_map(|m| {
            curve
                .iter()
                .filter_map(m.value)
                .chain(m.at_plan)
                .map(move |v| v / m.bound_s)
        })
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let top = (ratio.clamp(1.2, 3.0) * 2.0).ceil() / 2.0;
    let clipped = ratio > top;
    let axis_for = |m: &TokenMetric| -> (AxisSpec, f64) {
        let (k, unit) = time_unit(m.bound_s * top);
        let step = m.bound_s * 0.5 * k;
        let n = (top * 2.0).round() as i32;
        let axis = Axis {
            min: 0.0,
            max: m.bound_s * top * k,
            step,
            ticks: (0..=n).map(|i| f64::from(i) * step).collect(),
        };
        let side = if metrics.len() == 2 && m.name == "TPOT" {
            ", right axis"
        } else if metrics.len() == 2 {
            ", left axis"
        } else {
            ""
        };
        (
            AxisSpec {
                axis,
                fmt: Box::new(move |v| format::number_tick(v, step)),
                desc: format!("{} {pct} ({unit}{side})", m.name),
            },
            k,
        )
    };
    let (y, k1) = axis_for(&metrics[0]);
    let second = metrics.get(1).map(&axis_for);
    let mut lines = vec![];
    let mut legend = vec![];
    let mut marks = vec![];
    for (i, m) in metrics.iter().enumerate() {
        let k = if i == 0 {
            k1
        } else {
            second.as_ref().map_or(1.0, |s| s.1)
        };
        lines.push(Line {
            marker: Some(m.marker),
            secondary: i == 1,
            ..Line::new(
                m.color,
                curve
                    .iter()
                    .filter_map(|l| (m.value)(l).map(|v| (l.offered_rps, v * k)))
                    .collect(),
            )
        });
        legend.push(LegendEntry {
            label: format!(
                "{} {pct}{}",
                m.name,
                match (metrics.len(), i) {
                    (1, _) => "",
                    (_, 0) => " (left axis)",
                    _ => " (right axis)",
                }
            ),
            color: m.color,
            swatch: Swatch::Line(m.marker),
        });
        if let (Some(peak), Some(v)) = (peak, m.at_plan) {
            marks.push(Mark {
                at: (peak, v * k),
                label: format!("plan: {} {}", m.name, format::duration(v)),
                color: draw::INK,
                secondary: i == 1,
                filled: true,
            });
        }
    }
    let bounds_text: Vec<String> = metrics
        .iter()
        .map(|m| format!("{} {pct} ≤ {}", m.name, format::duration(m.bound_s)))
        .collect();
    let mut rules = vec![Rule {
        vertical: false,
        at: metrics[0].bound_s * k1,
        label: format!("SLO: {}", bounds_text.join(", ")),
        color: draw::INK,
    }];
    legend.push(slo_legend());
    rules.extend(peak_rule(peak, years));
    // The finding: the load up to which every contracted metric holds, and which breaks first.
    let limits: Vec<(&TokenMetric, Option<f64>, bool)> = metrics
        .iter()
        .map(|m| {
            let broken = curve
                .iter()
                .any(|l| (m.value)(l).is_some_and(|v| v > m.bound_s));
            (m, t.limit_rps(m.value, m.bound_s), broken)
        })
        .collect();
    let names = metrics
        .iter()
        .map(|m| format!("{} {pct}", m.name))
        .collect::<Vec<_>>()
        .join(" and ");
    let title = if let Some((m, _, _)) = limits.iter().find(|(_, l, _)| l.is_none()) {
        format!(
            "{}: {} {pct} exceeds {} at every load simulated",
            t.name,
            m.name,
            format::duration(m.bound_s)
        )
    } else if let Some((m, Some(load), _)) = limits
        .iter()
        .filter(|(_, _, broken)| *broken)
        .min_by(|a, b| a.1.unwrap_or(0.0).total_cmp(&b.1.unwrap_or(0.0)))
    {
        format!(
            "{}: the contract holds up to {} ({} utilization), where {} {pct} reaches {}",
            t.name,
            format::rps(*load),
            format::percent(util(*load), 0),
            m.name,
            format::duration(m.bound_s)
        )
    } else {
        format!(
            "{}: {names} stay within {} at every load simulated, up to {}",
            t.name,
            metrics
                .iter()
                .map(|m| format::duration(m.bound_s))
                .collect::<Vec<_>>()
                .join(" and "),
            format::rps(curve.last().map_or(0.0, |l| l.offered_rps))
        )
    };
    let (umin, umax) = curve.iter().fold((f64::INFINITY, 0.0f64), |(a, b), l| {
        (a.min(util(l.offered_rps)), b.max(util(l.offered_rps)))
    });
    let mut subtitle = format!(
        "The contracted {names}, simulated under steady Poisson load at year {years}'s planned \
         fleet of {} unit{} ({} of its {} capacity).",
        format::count(units),
        if units == 1 { "" } else { "s" },
        format::percent_range(umin, umax, 0),
        format::rps(cap)
    );
    if metrics.len() == 2 {
        subtitle.push_str(" Each axis runs to the same multiple of its bound, so the one dashed line is both bounds.");
    }
    if clipped {
        subtitle.push_str(&format!(
            " Above {top}× the bound the curves leave the chart."
        ));
    }
    let chart = LineChart {
        head: Head {
            title: title.clone(),
            subtitle,
            legend,
            footer: ctx.footer.clone(),
        },
        x: load_axis(curve, peak),
        y,
        y2: second.map(|s| s.0),
        lines,
        rules,
        marks,
        height: draw::HEIGHT,
    };
    let svg = line::render(&chart).map_err(draw_error(&name))?;
    Ok(Some(Drawn {
        name,
        title,
        caption: format!(
            "How much load can {}'s planned fleet take before it breaks the contract on {names}? \
             The contracted metrics against offered load at the year-{years} fleet of {} unit{}, \
             from the simulator under steady Poisson load; the dashed line is the SLO bound \
             ({}), the grey line the year's peak traffic and the dots the planned fleet as the \
             fleet table measured it at that peak (over the busiest window of the design day).",
            t.name,
            format::count(units),
            if units == 1 { "" } else { "s" },
            bounds_text.join(", ")
        ),
        svg,
    }))
}

/// The latency at quantile `q` of a CDF given as (latency [s], quantile) points.
pub(crate) fn latency_at(cdf: &[(f64, f64)], q: f64) -> Option<f64> {
    let mut pts: Vec<(f64, f64)> = cdf
        .iter()
        .copied()
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .collect();
    pts.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.total_cmp(&b.0)));
    let i = pts.iter().position(|p| p.1 >= q)?;
    if i == 0 {
        return Some(pts[0].0);
    }
    let (a, b) = (pts[i - 1], pts[i]);
    let t = if b.1 > a.1 {
        (q - a.1) / (b.1 - a.1)
    } else {
        1.0
    };
    Some(a.0 + t * (b.0 - a.0))
}

/// Share of requests answered within each latency, per tier, at the planned fleet.
pub(super) fn cdf(ctx: &Context<'_>) -> Result<Built, ChartError> {
    const NAME: &str = "latency-cdf";
    let what = "latency distribution at the planned fleet";
    let tiers: Vec<&TierResult> = ctx
        .results
        .tiers
        .iter()
        .filter(|t| !t.latency_cdf.is_empty())
        .collect();
    if tiers.is_empty() {
        return Ok(Err(no_latency(ctx, NAME, what)));
    }
    let years = ctx.years();
    let (p, bound) = ctx.slo.unwrap_or((99.0, f64::NAN));
    let q = p / 100.0;
    // Tiers whose distributions are the same line are drawn once, labelled "A = B".
    let groups = super::equal_groups(tiers.iter().copied(), |a, b| {
        super::same_points(&a.latency_cdf, &b.latency_cdf)
    });
    let names = |g: &[&TierResult]| {
        super::merged_label(&g.iter().map(|t| t.name.as_str()).collect::<Vec<_>>())
    };
    let at_p: Vec<(String, Option<f64>)> = groups
        .iter()
        .map(|g| (names(g), latency_at(&g[0].latency_cdf, q)))
        .collect();
    let plabel = format::percentile(p);
    let title = match at_p.as_slice() {
        [(n, Some(v))] if tiers.len() == 1 => format!(
            "At the planned fleet, {n} answers {} % of requests within {}",
            format::grouped(p, if p.fract() == 0.0 { 0 } else { 1 }),
            format::duration(*v)
        ),
        many => format!(
            "{plabel} at the planned fleet: {}{}",
            many.iter()
                .map(|(n, v)| format!("{n} {}", v.map_or("–".into(), format::duration)))
                .collect::<Vec<_>>()
                .join(", "),
            if bound.is_finite() {
                format!(" (SLO {})", format::duration(bound))
            } else {
                String::new()
            }
        ),
    };
    // Show the body and the SLO region; a long tail past the 99.9th percentile is cut off.
    let x_hi = tiers
        .iter()
        .filter_map(|t| latency_at(&t.latency_cdf, 0.999))
        .fold(0.0, f64::max)
        * 1e3;
    let x_max = if bound.is_finite() {
        x_hi.max(bound * 1e3 * 1.1)
    } else {
        x_hi
    };
    let (k, x_desc) = if x_max >= 2000.0 {
        (1e-3, "Latency (s)")
    } else {
        (1.0, "Latency (ms)")
    };
    let xa = draw::nice_axis(0.0, x_max * k, 6);
    let xstep = xa.step;
    // Distributions that differ but run within a few per cent of an earlier one (the same chip
    // in two fleets) would hide under it: those are drawn wider, underneath, so each shows as a
    // rim around the line on top.
    let close = |a: &[(f64, f64)], b: &[(f64, f64)]| {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(p, q)| p.1 == q.1 && (p.0 - q.0).abs() <= 0.03 * p.0.abs().max(q.0.abs()))
    };
    let lines: Vec<Line> = groups
        .iter()
        .enumerate()
        .map(|(gi, g)| {
            let t = g[0];
            let under = groups[..gi]
                .iter()
                .filter(|e| close(&e[0].latency_cdf, &t.latency_cdf))
                .count() as u32;
            let (color, marker) = ctx.tier_color(&t.name);
            let mut pts: Vec<(f64, f64)> = t
                .latency_cdf
                .iter()
                .map(|&(s, q)| (s * 1e3 * k, q * 100.0))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
            // Clip at the right edge: swap axes, clip "above", swap back.
            let swapped: Vec<(f64, f64)> = pts.iter().map(|&(a, b)| (b, a)).collect();
            let kept: Vec<(f64, f64)> = draw::clip_above(&swapped, xa.max)
                .into_iter()
                .next()
                .unwrap_or_default()
                .into_iter()
                .map(|(a, b)| (b, a))
                .collect();
            Line {
                marker: Some(marker),
                width: (3 + 4 * under).min(11),
                ..Line::new(color, kept)
            }
        })
        .collect();
    let mut legend: Vec<LegendEntry> = groups
        .iter()
        .map(|g| {
            let (color, marker) = ctx.tier_color(&g[0].name);
            LegendEntry {
                label: names(g),
                color,
                swatch: Swatch::Line(marker),
            }
        })
        .collect();
    let mut rules = vec![Rule {
        vertical: false,
        at: p,
        label: plabel.clone(),
        color: draw::GREY,
    }];
    if bound.is_finite() {
        rules.push(Rule {
            vertical: true,
            at: bound * 1e3 * k,
            label: format!("SLO bound {}", format::duration(bound)),
            color: draw::INK,
        });
        legend.push(LegendEntry {
            label: format!("SLO: {plabel} ≤ {}", format::duration(bound)),
            color: draw::INK,
            swatch: Swatch::Dashed,
        });
    }
    let chart = LineChart {
        head: Head {
            title: title.clone(),
            subtitle: format!(
                "Share of requests answered within each latency at year {years}'s planned fleet, \
                 simulated at the busiest hour's traffic."
            ),
            legend,
            footer: ctx.footer.clone(),
        },
        x: AxisSpec {
            axis: xa,
            fmt: Box::new(move |v| format::number_tick(v, xstep)),
            desc: x_desc.into(),
        },
        y: AxisSpec {
            axis: Axis {
                min: 0.0,
                max: 100.0,
                step: 20.0,
                ticks: (0..=5).map(|i| i as f64 * 20.0).collect(),
            },
            fmt: Box::new(|v| format!("{} %", v.round() as i64)),
            desc: "Requests answered within (%)".into(),
        },
        y2: None,
        lines,
        rules,
        marks: vec![],
        height: draw::HEIGHT,
    };
    let svg = line::render(&chart).map_err(draw_error(NAME))?;
    Ok(Ok(vec![Drawn {
        name: NAME.into(),
        title,
        caption: format!(
            "What latency do requests see at the planned fleet? The share of requests answered \
             within each latency at year {years}'s planned fleet, from the simulator; the dashed \
             lines mark the SLO's percentile and bound."
        ),
        svg,
    }]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lp(rps: f64, p99_ms: f64) -> LoadPoint {
        LoadPoint {
            offered_rps: rps,
            utilization: rps / 1000.0,
            p50_s: p99_ms / 3e3,
            p95_s: p99_ms / 1.5e3,
            p99_s: p99_ms / 1e3,
            ttft_s: None,
            tpot_s: None,
        }
    }

    #[test]
    fn finds_the_knee_against_the_bound() {
        let curve = [lp(100.0, 50.0), lp(500.0, 100.0), lp(900.0, 300.0)];
        let (load, u) = max_load_within(&curve, |l| l.p99_s, 0.2).unwrap().unwrap();
        assert!((load - 700.0).abs() < 1e-9, "{load}");
        assert!((u - 0.7).abs() < 1e-9);
        assert_eq!(max_load_within(&curve, |l| l.p99_s, 1.0), Ok(None));
        assert_eq!(max_load_within(&curve, |l| l.p99_s, 0.01), Err(()));
    }

    #[test]
    fn reads_quantiles_off_the_cdf() {
        let cdf = [(0.01, 0.0), (0.02, 0.5), (0.04, 1.0)];
        assert!((latency_at(&cdf, 0.75).unwrap() - 0.03).abs() < 1e-12);
        assert_eq!(latency_at(&cdf, 0.0), Some(0.01));
        assert_eq!(latency_at(&[], 0.5), None);
    }
}
