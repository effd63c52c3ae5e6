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
    out.push_str(&llm_table(sweep));
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

/// Generative runs: tokens per second, KV-cache utilization and preemptions, one row per run;
/// empty when no run is generative.
fn llm_table(sweep: &SizeSweep) -> String {
    let rows: Vec<_> = sweep
        .runs
        .iter()
        .filter_map(|r| r.report.llm.as_ref().map(|l| (r, l)))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled);
    t.set_header(vec![
        "tier",
        "units",
        "input tok/s",
        "output tok/s",
        "in flight/replica",
        "KV mean",
        "KV peak",
        "preemptions",
        "per request",
    ]);
    for (r, l) in rows {
        t.add_row(vec![
            r.tier.clone(),
            r.units.to_string(),
            format!("{:.0}", l.input_tokens_per_s),
            format!("{:.0}", l.output_tokens_per_s),
            format!("{:.1}", l.mean_running_per_replica),
            format!("{:.0} %", l.kv_utilization_mean * 100.0),
            format!("{:.0} %", l.kv_utilization_peak * 100.0),
            l.preemptions.to_string(),
            format!("{:.3}", l.preemptions_per_request),
        ]);
    }
    for c in t.column_iter_mut().skip(1) {
        c.set_cell_alignment(CellAlignment::Right);
    }
    format!("  tokens and KV cache (all replications)\n{t}\n")
}

/// Header of `simulate --requests-csv`.
pub const REQUESTS_CSV_HEADER: &str =
    "tier,units,replication,arrival_s,ttft_s,tpot_s,e2e_s,tokens_in,tokens_out";

/// One row per measured request served, in run order (tier, then size), replication order and
/// the order requests left: arrival (since the start of its replication), time to first token,
/// time per output token after the first (empty for one-token replies and classic models), and
/// end-to-end latency, in seconds to the nanosecond — computed as the simulator's statistics
/// compute them, so the file's percentiles are the report's.
pub fn requests_csv(sweep: &SizeSweep) -> String {
    let mut out = String::from(REQUESTS_CSV_HEADER);
    out.push('\n');
    let s = |ns: u64| format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000);
    for r in &sweep.runs {
        let tier = csv_field(&r.tier);
        for (rep, requests) in r.requests.iter().enumerate() {
            for c in requests {
                let q = &c.request;
                let ttft = c.first_token_ns.map(|f| f - q.arrival_ns);
                let out_tokens = q.output_tokens.max(1);
                let tpot = match c.first_token_ns {
                    Some(f) if out_tokens > 1 => Some((c.end_ns - f) / u64::from(out_tokens - 1)),
                    _ => None,
                };
                let tokens_out = if c.first_token_ns.is_some() {
                    out_tokens.to_string()
                } else {
                    String::new()
                };
                out.push_str(&format!(
                    "{tier},{},{rep},{},{},{},{},{},{tokens_out}\n",
                    r.units,
                    s(q.arrival_ns),
                    ttft.map_or(String::new(), s),
                    tpot.map_or(String::new(), s),
                    s(c.end_ns - q.arrival_ns),
                    q.input_tokens,
                ));
            }
        }
    }
    out
}

/// A CSV field, quoted (RFC 4180) when it holds a comma, quote or line break.
fn csv_field(v: &str) -> String {
    if v.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v.to_string()
    }
}
