//! The `tco-sim simulate` latency table: one row per tier and fleet size simulated on one
//! year's design traffic, with the tail percentiles, their confidence interval, utilization,
//! queueing, the Little's-law check and whether the contract holds.
//!
//! Stage 8 (report): renders what [`crate::capacity::search::sweep_sizes`] measured; `app`
//! prints it.

use comfy_table::{CellAlignment, ContentArrangement, Table, presets};

use crate::capacity::search::SizeSweep;
use crate::format::ms;
use crate::scenario::Scenario;

/// The table and its heading, ending in a newline.
pub fn render(s: &Scenario, sweep: &SizeSweep) -> String {
    let pct = format!("p{}", s.slo.percentile);
    let closed = sweep.closed_loop.as_ref();
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled);
    let mut header = vec!["tier".to_string(), "units".into()];
    // A closed loop sets its own rate: the throughput it reached is the answer, not an input.
    if closed.is_some() {
        header.push("req/s".into());
    }
    header.extend([
        "load".to_string(),
        "p50".into(),
        "p90".into(),
        "p95".into(),
        "p99".into(),
        "p99.9".into(),
        format!("{pct} ± 95 % CI"),
        "busy".into(),
        "mean / max queue".into(),
        "Little |L−λW|/λW".into(),
        "dropped".into(),
        "meets SLO".into(),
    ]);
    t.set_header(header);
    for r in &sweep.runs {
        let l = &r.report.latency;
        let slo = l.extra.first().map(|(_, e)| *e);
        let c = &r.report.counts;
        let mut row = vec![r.tier.clone(), r.units.to_string()];
        if closed.is_some() {
            row.push(format!("{:.1}", r.report.throughput_per_s));
        }
        row.extend([
            r.report
                .offered_load
                .map_or("–".into(), |x| format!("{:.0} %", x * 100.0)),
            ms(l.p50.value_s),
            ms(l.p90.value_s),
            ms(l.p95.value_s),
            ms(l.p99.value_s),
            ms(l.p999.value_s),
            slo.map_or("–".into(), |e| match e.ci95_half_width_s {
                Some(h) => format!("{} ± {}", ms(e.value_s), ms(h)),
                None => ms(e.value_s),
            }),
            format!("{:.0} %", r.report.utilization.mean_utilization * 100.0),
            format!(
                "{:.1} / {}",
                r.report.queue.mean_waiting, r.report.queue.max_waiting
            ),
            format!("{:.1e}", r.report.little.relative_error),
            (c.rejected_queue_full + c.rejected_too_large + c.timed_out).to_string(),
            if r.report.unstable {
                "no (unstable)".into()
            } else if r.meets_slo {
                "yes".into()
            } else {
                "no".into()
            },
        ]);
        t.add_row(row);
    }
    for c in t.column_iter_mut().skip(1) {
        c.set_cell_alignment(CellAlignment::Right);
    }
    let load = match closed {
        Some(c) => format!(
            "closed loop: {} requests in flight, think time {}",
            c.clients,
            match c.think {
                crate::sim::ThinkTime::None => "none".to_string(),
                crate::sim::ThinkTime::Fixed { s } => format!("{} fixed", ms(s)),
                crate::sim::ThinkTime::Exponential { mean_s } =>
                    format!("{} mean, exponential", ms(mean_s)),
            }
        ),
        None => format!(
            "year {} design traffic: {:.1} req/s",
            sweep.year, sweep.design_rps
        ),
    };
    let mut out = format!(
        "{}
  {load} over {} s ({} s warm-up), {} replications · SLO: {}
{t}
",
        s.name,
        s.simulation.window_s,
        s.simulation.warmup_s,
        s.simulation.replications,
        s.slo.label()
    );
    for n in &sweep.skipped {
        out.push_str(&format!("note: {n}\n"));
    }
    out.push_str(&prefix_lines(sweep));
    out
}

/// One line per run with prefix caching: the share of prompt tokens its caches hit.
fn prefix_lines(sweep: &SizeSweep) -> String {
    let mut out = String::new();
    for r in &sweep.runs {
        if let Some(p) = &r.report.prefix_cache {
            out.push_str(&format!(
                "prefix cache: {} × {}: {:.1} % of {} prompt tokens hit\n",
                r.tier,
                r.units,
                p.hit_rate * 100.0,
                crate::format::grouped(p.prompt_tokens as f64, 0)
            ));
        }
    }
    out
}
