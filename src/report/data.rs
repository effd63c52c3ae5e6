//! `results.json` and `results.csv`: the machine-readable outputs.
//!
//! Both are deterministic: the same inputs and seed give byte-identical files (floats in the
//! JSON are printed in shortest round-trip form; the CSV uses fixed decimals).

use serde::Serialize;

use crate::format::fixed;
use crate::results::RunResults;

/// `results.json`, pretty-printed, ending in a newline.
pub fn json(results: &RunResults) -> String {
    let mut s = serde_json::to_string_pretty(results).expect("results serialize to JSON");
    s.push('\n');
    s
}

/// One row of `results.csv`: one tier × option × year.
#[derive(Debug, Serialize)]
struct Row<'a> {
    tier: &'a str,
    profile: &'a str,
    option: &'a str,
    year: u32,
    units: Option<u32>,
    units_added: Option<u32>,
    planned_units: Option<u32>,
    analytic_units: u32,
    /// [`crate::results::TierResult::utilization`], in percent.
    utilization_pct: String,
    /// The mean fraction of the year the units spend serving (the dynamic-power duty cycle the
    /// energy cost uses): not the utilization.
    duty_cycle: String,
    p99_s: String,
    instance_hours: String,
    requests: String,
    capex_usd: String,
    maintenance_usd: String,
    energy_usd: String,
    space_usd: String,
    staff_usd: String,
    cloud_usd: String,
    prepaid_usd: String,
    storage_usd: String,
    egress_usd: String,
    software_usd: String,
    engineering_usd: String,
    network_usd: String,
    support_usd: String,
    spare_units: Option<u32>,
    units_retired: Option<u32>,
    resale_usd: String,
    total_usd: String,
    discounted_usd: String,
    energy_kwh: String,
    carbon_kg: String,
    /// Why no fleet of the tier meets the contract (its rows then carry option "not costed" and
    /// no units or money); empty on costed rows.
    infeasible: &'a str,
}

/// Dollars and hours in the CSV: cents, no grouping.
fn f2(x: f64) -> String {
    fixed(x, 2)
}

/// `results.csv`: a header and one row per tier × option × year; a tier no fleet of which meets
/// the contract gets one row per year with option "not costed" and the reason in `infeasible`,
/// so it is never silently missing from the file.
pub fn csv(results: &RunResults) -> String {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    for t in &results.tiers {
        if t.options.is_empty() {
            let reason = t
                .infeasible
                .as_deref()
                .unwrap_or("no deployment option priced");
            for c in &t.capacity {
                w.serialize(Row {
                    tier: &t.name,
                    profile: &t.profile,
                    option: "not costed",
                    year: c.year,
                    units: None,
                    units_added: None,
                    planned_units: None,
                    analytic_units: c.analytic_units,
                    utilization_pct: String::new(),
                    duty_cycle: String::new(),
                    p99_s: String::new(),
                    instance_hours: String::new(),
                    requests: String::new(),
                    capex_usd: String::new(),
                    maintenance_usd: String::new(),
                    energy_usd: String::new(),
                    space_usd: String::new(),
                    staff_usd: String::new(),
                    cloud_usd: String::new(),
                    prepaid_usd: String::new(),
                    storage_usd: String::new(),
                    egress_usd: String::new(),
                    software_usd: String::new(),
                    engineering_usd: String::new(),
                    network_usd: String::new(),
                    support_usd: String::new(),
                    spare_units: None,
                    units_retired: None,
                    resale_usd: String::new(),
                    total_usd: String::new(),
                    discounted_usd: String::new(),
                    energy_kwh: String::new(),
                    carbon_kg: String::new(),
                    infeasible: reason,
                })
                .expect("CSV rows serialize");
            }
            continue;
        }
        for o in &t.options {
            for (y, c) in o.yearly.iter().zip(&t.capacity) {
                w.serialize(Row {
                    tier: &t.name,
                    profile: &t.profile,
                    option: o.option.label(),
                    year: y.year,
                    units: Some(y.units),
                    units_added: Some(y.units_added),
                    planned_units: Some(c.units),
                    analytic_units: c.analytic_units,
                    utilization_pct: f2(t.utilization(c) * 100.0),
                    duty_cycle: fixed(c.fleet.utilization, 4),
                    p99_s: c
                        .latency
                        .as_ref()
                        .map_or(String::new(), |l| fixed(l.p99_s, 6)),
                    instance_hours: f2(y.instance_hours),
                    requests: fixed(y.requests, 0),
                    capex_usd: f2(y.capex_usd),
                    maintenance_usd: f2(y.maintenance_usd),
                    energy_usd: f2(y.energy_usd),
                    space_usd: f2(y.space_usd),
                    staff_usd: f2(y.staff_usd),
                    cloud_usd: f2(y.cloud_usd),
                    prepaid_usd: f2(y.prepaid_usd),
                    storage_usd: f2(y.storage_usd),
                    egress_usd: f2(y.egress_usd),
                    software_usd: f2(y.software_usd),
                    engineering_usd: f2(y.engineering_usd),
                    network_usd: f2(y.network_usd),
                    support_usd: f2(y.support_usd),
                    spare_units: Some(y.spare_units),
                    units_retired: Some(y.units_retired),
                    resale_usd: f2(y.resale_usd),
                    total_usd: f2(y.total_usd),
                    discounted_usd: f2(y.discounted_usd),
                    energy_kwh: f2(y.energy_kwh),
                    carbon_kg: f2(y.carbon_kg),
                    infeasible: "",
                })
                .expect("CSV rows serialize");
            }
        }
    }
    String::from_utf8(w.into_inner().expect("CSV buffer flushes")).expect("CSV is UTF-8")
}

/// One row of `sensitivity.csv`: one uncertain input, its tornado bar and its flip point.
#[derive(Debug, Serialize)]
struct SensitivityRow<'a> {
    input: &'a str,
    unit: &'a str,
    performance: bool,
    range: String,
    range_source: &'a str,
    base_value: String,
    low_value: String,
    high_value: String,
    best_npv_low_usd: String,
    best_npv_high_usd: String,
    runner_up_npv_low_usd: String,
    runner_up_npv_high_usd: String,
    difference_low_usd: String,
    difference_high_usd: String,
    swing_usd: String,
    flips: bool,
    flip_value: String,
    flip_change: String,
    flips_to_tier: &'a str,
    flips_to_option: &'a str,
}

/// A value of an input in the CSV: shortest round-trip form, so a flip value fed back is exact.
fn value(x: f64) -> String {
    format!("{x}")
}

fn money(x: Option<f64>) -> String {
    x.map_or(String::new(), f2)
}

/// `sensitivity.csv`: one row per uncertain input, widest swing first; `None` when the
/// analysis did not run.
pub fn sensitivity_csv(results: &RunResults) -> Option<String> {
    let s = results.sensitivity.as_ref()?;
    let mut w = ::csv::Writer::from_writer(Vec::new());
    for (t, f) in s.tornado.iter().zip(&s.flip_points) {
        w.serialize(SensitivityRow {
            input: &t.input,
            unit: &t.unit,
            performance: t.performance,
            range: t.dist.label(),
            range_source: &t.range_source,
            base_value: value(t.base_value),
            low_value: value(t.low_value),
            high_value: value(t.high_value),
            best_npv_low_usd: money(t.best_npv_low_usd),
            best_npv_high_usd: money(t.best_npv_high_usd),
            runner_up_npv_low_usd: money(t.runner_up_npv_low_usd),
            runner_up_npv_high_usd: money(t.runner_up_npv_high_usd),
            difference_low_usd: money(t.difference_low_usd),
            difference_high_usd: money(t.difference_high_usd),
            swing_usd: f2(t.swing_usd),
            flips: f.flips,
            flip_value: f.value.map_or(String::new(), value),
            flip_change: f.change_fraction.map_or(String::new(), |c| fixed(c, 6)),
            flips_to_tier: f.to.as_ref().map_or("", |o| o.tier.as_str()),
            flips_to_option: f.to.as_ref().map_or("", |o| o.option.label()),
        })
        .expect("rows serialize");
    }
    Some(String::from_utf8(w.into_inner().expect("in-memory writer")).expect("CSV is UTF-8"))
}

/// One row of `uncertainty.csv`: one tier × option over the Monte Carlo samples.
#[derive(Debug, Serialize)]
struct SpreadRow<'a> {
    tier: &'a str,
    option: &'a str,
    samples: u32,
    npv_base_usd: String,
    npv_p10_usd: String,
    npv_p50_usd: String,
    npv_p90_usd: String,
    p_cheapest: String,
    p_slo_met: String,
}

/// `uncertainty.csv`: one row per tier × option of the Monte Carlo; `None` when the analysis
/// did not run.
pub fn uncertainty_csv(results: &RunResults) -> Option<String> {
    let u = results.uncertainty.as_ref()?;
    let mut w = ::csv::Writer::from_writer(Vec::new());
    for o in &u.options {
        w.serialize(SpreadRow {
            tier: &o.tier,
            option: o.option.label(),
            samples: u.samples,
            npv_base_usd: f2(o.npv_base),
            npv_p10_usd: f2(o.npv_p10),
            npv_p50_usd: f2(o.npv_p50),
            npv_p90_usd: f2(o.npv_p90),
            p_cheapest: fixed(o.p_cheapest, 4),
            p_slo_met: o.p_slo_met.map_or(String::new(), |p| fixed(p, 4)),
        })
        .expect("rows serialize");
    }
    Some(String::from_utf8(w.into_inner().expect("in-memory writer")).expect("CSV is UTF-8"))
}
