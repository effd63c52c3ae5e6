//! The terminal summary: tier × option with units per year, five-year total, NPV, cost per
//! million requests; energy and carbon; the break-even table; the recommendation and the notes.

use comfy_table::{CellAlignment, ContentArrangement, Table, presets};

use crate::capacity::StopReason;
use crate::cost::ExactBreakEven;
use crate::format::{self, MISSING, usd, usd_cents};
use crate::results::RunResults;

fn table() -> Table {
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .force_no_tty();
    t
}

fn right_align(t: &mut Table, from: usize) {
    for c in t.column_iter_mut().skip(from) {
        c.set_cell_alignment(CellAlignment::Right);
    }
}

/// "4.9 h/day (on-prem cheaper above)" and friends.
pub fn exact_label(e: &ExactBreakEven) -> String {
    match e {
        ExactBreakEven::At {
            hours_per_day,
            on_prem_cheaper_above,
        } => format!(
            "{} (on-prem cheaper {})",
            format::hours_per_day(*hours_per_day),
            if *on_prem_cheaper_above {
                "above"
            } else {
                "below"
            }
        ),
        ExactBreakEven::OnPremAlwaysCheaper => "on-prem cheaper at any use".into(),
        ExactBreakEven::CloudAlwaysCheaper => "cloud cheaper at any use".into(),
    }
}

/// Seed 004's simplified form as shown: "4.9 h/day", "> 24 h/day (never)" above a day, "–"
/// where it is not a break-even (against a reservation or a hybrid).
pub fn seed_form_label(h: Option<f64>) -> String {
    match h {
        Some(h) if h > crate::units::DAY_HOURS => "> 24 h/day (never)".into(),
        Some(h) => format::hours_per_day(h),
        None => MISSING.into(),
    }
}

/// A unit count over the horizon: "4" or "4–16".
pub fn unit_range(r: crate::results::UnitRange) -> String {
    if r.min == r.max {
        format::grouped(r.min as f64, 0)
    } else {
        format!(
            "{}–{}",
            format::grouped(r.min as f64, 0),
            format::grouped(r.max as f64, 0)
        )
    }
}

/// "1 on-prem server", "2–3 on-prem servers".
pub fn on_prem_units_label(b: &crate::results::BreakEven) -> String {
    let r = b.on_prem_units;
    let noun = if r.max == 1 { "server" } else { "servers" };
    format!("{} on-prem {noun}", unit_range(r))
}

/// The fleets a cross-hardware row compares: "1 on-prem server vs 4–16 instances".
pub fn units_compared(b: &crate::results::BreakEven) -> String {
    let noun = if b.cloud_units.max == 1 {
        "instance"
    } else {
        "instances"
    };
    format!(
        "{} vs {} {noun}",
        on_prem_units_label(b),
        unit_range(b.cloud_units)
    )
}

/// The headers of the break-even table, beside [`break_even_cells`].
pub const BREAK_EVEN_HEADERS: [&str; 6] = [
    "on-prem",
    "against",
    "break-even (exact)",
    "in use (on-prem; cloud)",
    "as they run",
    "seed form",
];

/// One row of the break-even table: on-prem tier; cloud tier · option (and, across hardware,
/// the fleets compared, after a line break); the exact break-even; each side's actual
/// operating point; which is cheaper there, by how much (the ranking's verdict); seed 004's
/// form where it means something. The terminal and the PDF both show these cells.
pub fn break_even_cells(b: &crate::results::BreakEven) -> Vec<String> {
    let mut against = format!("{} · {}", b.cloud_tier, b.cloud_option);
    if b.cross_hardware {
        against.push_str(&format!("\ncross-hardware: {}", units_compared(b)));
    }
    let saving = b.on_prem_saving_usd;
    vec![
        b.on_prem_tier.clone(),
        against,
        exact_label(&b.exact),
        format!(
            "{}; {}",
            format::hours_per_day(b.on_prem_line.actual_hours_per_day),
            format::hours_per_day(b.cloud_line.actual_hours_per_day)
        ),
        format!(
            "{} cheaper by {}",
            if b.on_prem_cheaper_at_actual_use() {
                "on-prem"
            } else {
                "cloud"
            },
            usd(saving.abs())
        ),
        seed_form_label(b.simplified_hours_per_day),
    ]
}

/// The headers of the energy-and-carbon table, beside [`efficiency_cells`].
pub const EFFICIENCY_HEADERS: [&str; 7] = [
    "tier",
    "option",
    "energy (MWh)",
    "J / request",
    "kWh / M req",
    "req/s per W (peak)",
    "t CO2e",
];

/// One row of the energy-and-carbon table: tier, option, facility energy over the horizon,
/// energy per request and per million requests, requests per second per watt of IT power at
/// the last year's peak, and carbon. The terminal and the PDF both show these cells.
pub fn efficiency_cells(tier: &str, o: &crate::cost::OptionCost) -> Vec<String> {
    let or_missing = |x: Option<f64>| x.map_or(MISSING.into(), format::figures3);
    vec![
        tier.to_string(),
        o.option.label().into(),
        format::figures3(o.energy_kwh / 1e3),
        or_missing(o.energy_per_request_j),
        or_missing(o.kwh_per_million_requests),
        or_missing(o.rps_per_watt),
        format::figures3(o.carbon_kg / 1e3),
    ]
}

/// One published figure beside this run's, as table cells: label, tier · option, published
/// total, this run's total, change, published break-even, this run's (seed form; exact).
pub fn reference_cells(x: &crate::results::ReferenceComparison) -> Vec<String> {
    vec![
        x.label.clone(),
        format!("{} · {}", x.tier, x.option),
        x.reference_total_usd.map_or(MISSING.into(), usd),
        usd(x.total_usd),
        x.total_change
            .map_or(MISSING.into(), |f| format::percent_change(f, 1)),
        x.reference_break_even_hours_per_day
            .map_or(MISSING.into(), format::hours_per_day),
        match (&x.break_even_simplified_hours_per_day, &x.break_even_exact) {
            (Some(h), Some(e)) => format!("{}; {}", seed_form_label(Some(*h)), exact_label(e)),
            (None, Some(e)) => exact_label(e),
            _ => MISSING.into(),
        },
    ]
}

/// The whole summary as text.
pub fn render(r: &RunResults) -> String {
    let s = &r.scenario;
    let mut out = format!(
        "{}\n  workload: {} ({}) · traffic: {} · SLO: {} · horizon: {} years\n  fleet sizing: {}\n",
        s.name, s.workload, s.precision, s.traffic, s.slo, s.horizon_years, s.capacity_method
    );
    for t in &r.tiers {
        if let Some(l) = &t.replicas {
            out.push_str(&format!("  {}: {}\n", t.name, l.label()));
        }
    }
    for t in &r.tiers {
        if let Some(e) = &t.suite_evidence {
            out.push_str(&format!("  {}: {}\n", t.name, e.summary()));
        }
    }
    out.push_str(&capacity_table(r));
    out.push_str(&cost_table(r));
    out.push_str(&efficiency_table(r));
    if !r.break_even.is_empty() {
        let mut b = table();
        b.set_header(BREAK_EVEN_HEADERS.to_vec());
        for be in &r.break_even {
            b.add_row(break_even_cells(be));
        }
        right_align(&mut b, 2);
        out.push_str(
            "\nBreak-even daily use, on-prem against each cloud option (net present cost against \
             hours per day of full use of each planned fleet; \"as they run\" compares each at its \
             actual use, as the ranking does; seed form only against on-demand):\n",
        );
        out.push_str(&b.to_string());
        out.push('\n');
    }
    if !r.references.is_empty() {
        let mut c = table();
        c.set_header(vec![
            "reference",
            "tier / option",
            "published",
            "this run",
            "change",
            "published break-even",
            "this run (seed form; exact)",
        ]);
        for x in &r.references {
            c.add_row(reference_cells(x));
        }
        right_align(&mut c, 2);
        out.push_str("\nAgainst published figures:\n");
        out.push_str(&c.to_string());
        out.push('\n');
    }
    out.push_str(&uncertainty_tables(r));
    if let Some(rec) = &r.recommendation {
        out.push_str(&format!("\nRecommendation: {}\n", rec.sentence));
        if let Some(c) = crate::results::decision::commitment(r) {
            out.push_str(&format!(
                "Commitment: {} up front in year 1; {}; {} owed after year {}\n",
                usd(c.upfront_usd),
                c.term,
                usd(c.owed_after_horizon_usd),
                s.horizon_years
            ));
        }
        if let Some(h) = crate::results::decision::how_sure(r) {
            out.push_str(&format!("How sure: {h}\n"));
        }
        for risk in crate::results::decision::top_risks(r) {
            out.push_str(&format!("risk: {risk}\n"));
        }
    } else {
        out.push_str("\nRecommendation: no option meets the SLO in every year.\n");
    }
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

/// The tornado rows shown in the terminal (all of them are in `results.json`).
const TORNADO_ROWS: usize = 10;

/// "How sure is this?": the widest tornado rows with their flip points, and each option's
/// spread over the Monte Carlo samples. Empty when the analysis did not run.
fn uncertainty_tables(r: &RunResults) -> String {
    let mut out = String::new();
    if let Some(s) = &r.sensitivity {
        let mut t = table();
        t.set_header(vec![
            "input",
            "range",
            "difference at low",
            "difference at high",
            "swing",
            "flip point",
        ]);
        let money = |x: Option<f64>| x.map_or(MISSING.to_string(), usd);
        for (row, flip) in s.tornado.iter().zip(&s.flip_points).take(TORNADO_ROWS) {
            t.add_row(vec![
                row.input.clone(),
                format::quantity_range(row.low_value, row.high_value, &row.unit),
                money(row.difference_low_usd),
                money(row.difference_high_usd),
                usd(row.swing_usd),
                flip.verdict.clone(),
            ]);
        }
        right_align(&mut t, 2);
        let difference = match &s.runner_up {
            Some(ru) => format!(
                "runner-up {} {} − recommended {} {}",
                ru.tier, ru.option, s.best.tier, s.best.option
            ),
            None => format!("recommended {} {}", s.best.tier, s.best.option),
        };
        out.push_str(&format!(
            "\nHow sure is this? Net present cost difference ({difference}; positive: the recommendation stays cheaper), one input at a time, widest {} of {} inputs:\n",
            s.tornado.len().min(TORNADO_ROWS),
            s.tornado.len(),
        ));
        out.push_str(&t.to_string());
        out.push('\n');
    }
    if let Some(u) = &r.uncertainty {
        let mut t = table();
        let slo = u.options.iter().any(|o| o.p_slo_met.is_some());
        let mut header = vec![
            "tier",
            "option",
            "NPC P10",
            "NPC P50",
            "NPC P90",
            "P(cheapest)",
        ];
        if slo {
            header.push("P(planned fleet meets SLO)");
        }
        t.set_header(header);
        for o in &u.options {
            let mut row = vec![
                o.tier.clone(),
                o.option.label().to_string(),
                usd(o.npv_p10),
                usd(o.npv_p50),
                usd(o.npv_p90),
                format::percent(o.p_cheapest, 1),
            ];
            if slo {
                row.push(
                    o.p_slo_met
                        .map_or(MISSING.to_string(), |p| format::percent(p, 1)),
                );
            }
            t.add_row(row);
        }
        right_align(&mut t, 2);
        out.push_str(&format!(
            "\nMonte Carlo over {} uncertain inputs ({} samples, {}{}):\n",
            u.inputs.len(),
            format::count(u.samples),
            u.method,
            u.replan
                .as_ref()
                .map_or(String::new(), |r| format!("; performance inputs: {r}"))
        ));
        out.push_str(&t.to_string());
        out.push('\n');
    }
    out
}

/// Units per tier and year with the latency of the planned fleet and why the search stopped.
fn capacity_table(r: &RunResults) -> String {
    let simulated = r
        .tiers
        .iter()
        .any(|t| t.capacity.iter().any(|c| c.latency.is_some()));
    let tokens = r
        .tiers
        .iter()
        .flat_map(|t| &t.capacity)
        .any(|c| c.latency.as_ref().is_some_and(|l| l.ttft_s.is_some()));
    let pct = format::percentile(r.scenario.slo_percentile);
    let mut t = table();
    let mut header = vec!["tier", "year", "units", "lower bound"];
    let bound =
        |b: Option<f64>| b.map_or(String::new(), |b| format!(" (≤ {})", format::duration(b)));
    let latency_headers = [
        "p50".to_string(),
        "p95".into(),
        "p99".into(),
        format!("{pct} (±95 % CI){}", bound(r.scenario.slo_latency_s)),
        format!("TTFT {pct} (±95 % CI){}", bound(r.scenario.slo_ttft_s)),
        format!("TPOT {pct} (±95 % CI){}", bound(r.scenario.slo_tpot_s)),
    ];
    if simulated {
        header.extend(latency_headers[..4].iter().map(String::as_str));
        if tokens {
            header.extend(latency_headers[4..].iter().map(String::as_str));
        }
        header.push("utilization");
    }
    header.push("search");
    t.set_header(header);
    for tier in &r.tiers {
        for c in &tier.capacity {
            let mut row = vec![
                tier.name.clone(),
                c.year.to_string(),
                if tier.infeasible.is_some() {
                    MISSING.into()
                } else {
                    format::count(c.units)
                },
                format::count(c.analytic_units),
            ];
            if simulated {
                match &c.latency {
                    Some(l) => {
                        let ms = format::ms;
                        let ms_ci = |v: f64, h: Option<f64>| match h {
                            Some(h) if h > 0.0 => format!("{} ± {}", ms(v), ms(h)),
                            _ => format!("{} (no CI)", ms(v)),
                        };
                        row.extend([ms(l.p50_s), ms(l.p95_s), ms(l.p99_s)]);
                        row.push(ms_ci(l.slo_percentile_s, l.slo_ci95_s));
                        if tokens {
                            row.push(l.ttft_s.map_or(MISSING.into(), |v| ms_ci(v, l.ttft_ci95_s)));
                            row.push(l.tpot_s.map_or(MISSING.into(), |v| ms_ci(v, l.tpot_ci95_s)));
                        }
                        row.push(format::percent(tier.utilization(c), 0));
                    }
                    None => {
                        let n = 5 + if tokens { 2 } else { 0 };
                        row.extend(std::iter::repeat_n(MISSING.to_string(), n));
                    }
                }
            }
            let status = crate::results::decision::year_status(c, &r.scenario.bounds());
            row.push(if status == crate::results::decision::SloStatus::Marginal {
                "met (marginal)".into()
            } else {
                stop_label(c.stop).into()
            });
            t.add_row(row);
        }
    }
    right_align(&mut t, 1);
    format!(
        "\nFleet per year{}:\n{t}\n",
        if simulated {
            ", with the latency of the planned fleet on the design traffic"
        } else {
            ""
        }
    )
}

fn stop_label(s: StopReason) -> &'static str {
    match s {
        StopReason::Met => "met",
        StopReason::Fixed => "fixed fleet",
        StopReason::UnderProvisioned => "fixed fleet too small",
        StopReason::Infeasible => "infeasible",
        StopReason::CapacityCap => "hit max_units",
        StopReason::Unstable => "unstable",
    }
}

/// Five-year cost of every tier × option, with the ranking figure (net present cost) and the
/// two adjustments that lead to it from the NPV of the cash: the resale value of owned hardware
/// and the reservation payments owed after the horizon.
fn cost_table(r: &RunResults) -> String {
    let years = r.scenario.horizon_years;
    let options = || r.tiers.iter().flat_map(|t| &t.options);
    let resale = options().any(|o| o.resale_value_usd > 0.0);
    let owed = options().any(|o| o.committed_beyond_horizon_usd > 0.0);
    let mut t = table();
    let mut header = vec![
        "tier".to_string(),
        "option".into(),
        format!("{years}-yr cash"),
        "NPV of cash".into(),
    ];
    if resale {
        header.push(format!("resale y{years}"));
    }
    if owed {
        header.push(format!("owed after y{years}"));
    }
    let tokens = options().any(|o| o.cost_per_million_tokens_usd.is_some());
    header.extend(["net present cost".into(), "$ / M req".into()]);
    if tokens {
        header.push("$ / M tokens".into());
    }
    header.push("meets SLO".into());
    let width = header.len();
    t.set_header(header);
    let best = r.recommendation.as_ref().map(|x| &x.best);
    let or_missing = |x: f64| if x > 0.0 { usd(x) } else { MISSING.into() };
    for tier in &r.tiers {
        if let Some(why) = &tier.infeasible {
            let mut row = vec![tier.name.clone(), MISSING.into(), "not costed".into()];
            row.resize(width - 1, MISSING.into());
            row.push(format!("no: {}", short(why)));
            t.add_row(row);
            continue;
        }
        for o in &tier.options {
            let chosen = best.is_some_and(|b| b.tier == tier.name && b.option == o.option);
            let mut row = vec![
                tier.name.clone(),
                format!("{}{}", o.option.label(), if chosen { " ◀" } else { "" }),
                usd(o.total_usd),
                usd(o.npv_usd),
            ];
            if resale {
                row.push(or_missing(o.resale_value_usd));
            }
            if owed {
                row.push(or_missing(o.committed_beyond_horizon_usd));
            }
            row.extend([
                usd(o.net_present_cost_usd),
                o.cost_per_million_usd.map_or(MISSING.into(), usd_cents),
            ]);
            if tokens {
                row.push(
                    o.cost_per_million_tokens_usd
                        .map_or(MISSING.into(), usd_cents),
                );
            }
            row.push(
                crate::results::decision::tier_status(tier, &r.scenario.bounds())
                    .label()
                    .into(),
            );
            t.add_row(row);
        }
    }
    right_align(&mut t, 2);
    format!(
        "\nCost over {years} years (◀ recommended; ranked on net present cost: the NPV of the cash, \
         less the resale of owned hardware at the end of year {years}, plus reservations owed after \
         it; $ / M req is that figure over the requests served, both discounted):\n{t}\n"
    )
}

/// Energy and carbon of every costed tier × option over the horizon.
fn efficiency_table(r: &RunResults) -> String {
    let rows: Vec<Vec<String>> = r
        .tiers
        .iter()
        .flat_map(|t| t.options.iter().map(|o| efficiency_cells(&t.name, o)))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut t = table();
    t.set_header(EFFICIENCY_HEADERS.to_vec());
    for row in rows {
        t.add_row(row);
    }
    right_align(&mut t, 2);
    let c = &r.scenario.costs;
    format!(
        "\nEnergy and carbon over {} years (facility energy: on-prem PUE {}, cloud PUE {}; grid {} kg CO2e/kWh):\n{t}\n",
        r.scenario.horizon_years,
        format::trim(c.pue.value),
        format::trim(c.cloud_pue.value),
        format::trim(c.grid_kg_co2e_per_kwh.value),
    )
}

/// The first clause of a reason, for a table cell.
fn short(s: &str) -> String {
    s.split(',').next().unwrap_or(s).to_string()
}
