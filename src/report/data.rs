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
    units: u32,
    units_added: u32,
    planned_units: u32,
    analytic_units: u32,
    utilization: String,
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
    spare_units: u32,
    units_retired: u32,
    resale_usd: String,
    total_usd: String,
    discounted_usd: String,
    energy_kwh: String,
    carbon_kg: String,
}

/// Dollars and hours in the CSV: cents, no grouping.
fn f2(x: f64) -> String {
    fixed(x, 2)
}

/// `results.csv`: a header and one row per tier × option × year.
pub fn csv(results: &RunResults) -> String {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    for t in &results.tiers {
        for o in &t.options {
            for (y, c) in o.yearly.iter().zip(&t.capacity) {
                w.serialize(Row {
                    tier: &t.name,
                    profile: &t.profile,
                    option: o.option.label(),
                    year: y.year,
                    units: y.units,
                    units_added: y.units_added,
                    planned_units: c.units,
                    analytic_units: c.analytic_units,
                    utilization: fixed(c.fleet.utilization, 4),
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
                    spare_units: y.spare_units,
                    units_retired: y.units_retired,
                    resale_usd: f2(y.resale_usd),
                    total_usd: f2(y.total_usd),
                    discounted_usd: f2(y.discounted_usd),
                    energy_kwh: f2(y.energy_kwh),
                    carbon_kg: f2(y.carbon_kg),
                })
                .expect("CSV rows serialize");
            }
        }
    }
    String::from_utf8(w.into_inner().expect("CSV buffer flushes")).expect("CSV is UTF-8")
}
