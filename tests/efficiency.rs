//! Energy, carbon and the extra cost lines end to end: the tier keys `software_usd_per_unit_year`
//! and `porting_usd` (located errors for bad values, their effect on the costs), the efficiency
//! figures of every option in the results, and the new CSV columns.

use std::path::Path;

use tco_sim::hardware::{DeploymentOption, UnitKind};
use tco_sim::input::InputError;
use tco_sim::results::{Method, RunResults};
use tco_sim::scenario::Scenario;

fn starter() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/starter.toml");
    std::fs::read_to_string(p).unwrap()
}

fn load(text: &str) -> Result<Scenario, InputError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(&path, text).unwrap();
    Scenario::load(&path)
}

/// The starter with `extra` added to its NVIDIA L4 tier.
fn l4_with(extra: &str) -> String {
    let from = "options = [\"on-demand\", \"reserved-3y\"]\n";
    let s = starter();
    assert!(s.contains(from));
    s.replacen(from, &format!("{from}{extra}"), 1)
}

fn run(s: &Scenario) -> RunResults {
    tco_sim::results::plan(s, Method::Analytic, &|_, _| {}).unwrap()
}

#[test]
fn bad_tier_licence_and_porting_values_are_refused_where_they_are() {
    for (extra, field, valid) in [
        (
            "software_usd_per_unit_year = -1\n",
            "tier[2].software_usd_per_unit_year",
            "USD per unit-year from 0 to 1,000,000",
        ),
        (
            "software_usd_per_unit_year = 1e308\n",
            "tier[2].software_usd_per_unit_year",
            "USD per unit-year from 0 to 1,000,000",
        ),
        (
            "porting_usd = nan\n",
            "tier[2].porting_usd",
            "USD from 0 to 1e10",
        ),
        (
            "porting_usd = 1e11\n",
            "tier[2].porting_usd",
            "USD from 0 to 1e10",
        ),
    ] {
        let text = l4_with(extra);
        let e = load(&text).expect_err(extra);
        assert_eq!(e.field.as_deref(), Some(field), "{e}");
        let line = text.lines().position(|l| l == extra.trim_end()).unwrap() + 1;
        assert_eq!(e.position.map(|p| p.0), Some(line), "{e}");
        assert!(e.help.as_deref().unwrap_or("").contains(valid), "{e}");
    }
}

#[test]
fn porting_and_licences_of_a_tier_reach_its_costs_and_inputs() {
    let base = load(&starter()).unwrap();
    let text = l4_with(
        "software_usd_per_unit_year = 1200\nsoftware_source = \"vendor quote\"\nporting_usd = 80000\n",
    );
    let s = load(&text).unwrap();
    let (a, b) = (run(&base), run(&s));
    let l4 = |r: &RunResults| {
        r.tiers
            .iter()
            .find(|t| t.name == "NVIDIA L4")
            .unwrap()
            .clone()
    };
    let (before, after) = (l4(&a), l4(&b));
    for (o0, o1) in before.options.iter().zip(&after.options) {
        assert_eq!(o1.yearly[0].engineering_usd, 80_000.0);
        assert!(o1.yearly[1..].iter().all(|y| y.engineering_usd == 0.0));
        // Instance-hours ÷ 8,760 units pay the licence all year.
        for y in &o1.yearly {
            let unit_years = match o1.option {
                DeploymentOption::OnDemand => y.instance_hours / 8760.0,
                _ => {
                    let f = &after.capacity[y.year as usize - 1];
                    y.units.min(f.units) as f64 + y.instance_hours / 8760.0
                }
            };
            assert!((y.software_usd - 1200.0 * unit_years).abs() < 1e-6);
        }
        let software: f64 = o1.yearly.iter().map(|y| y.software_usd).sum();
        assert!(software > 0.0);
        let added = o1.total_usd - o0.total_usd;
        assert!((added - software - 80_000.0).abs() < 1e-3, "{added}");
    }
    // Both settings are inputs of record, with their citation.
    let rec = s
        .input_records()
        .into_iter()
        .find(|r| r.scope == "NVIDIA L4" && r.field == "software_usd_per_unit_year")
        .expect("the licence is recorded");
    assert_eq!(rec.value, 1200.0);
    assert!(
        s.input_records()
            .iter()
            .any(|r| r.scope == "NVIDIA L4" && r.field == "porting_usd")
    );
}

#[test]
fn every_option_reports_energy_carbon_and_efficiency() {
    let s = load(&starter()).unwrap();
    let r = run(&s);
    let grid = s.costs.grid_kg_co2e_per_kwh.value;
    for t in &r.tiers {
        for o in &t.options {
            assert!(o.energy_kwh > 0.0, "{} {}", t.name, o.option);
            assert!((o.carbon_kg - o.energy_kwh * grid).abs() <= 1e-6 * o.carbon_kg);
            let j = o.energy_per_request_j.unwrap();
            let kwh_m = o.kwh_per_million_requests.unwrap();
            // Both come from the same energy and requests: 1 kWh per million = 3.6 J each.
            assert!((j - kwh_m * 3.6).abs() <= 1e-9 * j, "{j} {kwh_m}");
            assert!(o.rps_per_watt.unwrap() > 0.0);
        }
        // IT power at the peak is the tier's hardware: the same for every option.
        let w: Vec<f64> = t.options.iter().filter_map(|o| o.rps_per_watt).collect();
        assert!(w.windows(2).all(|p| p[0] == p[1]), "{w:?}");
    }
    // The starter's CPU tier needs no GPU licences by default.
    let cpu = r.tiers.iter().find(|t| t.kind == UnitKind::Cpu).unwrap();
    assert!(cpu.options[0].yearly.iter().all(|y| y.software_usd == 0.0));
}

#[test]
fn csv_and_json_carry_the_new_columns() {
    let r = run(&load(&starter()).unwrap());
    let csv = tco_sim::report::data::csv(&r);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for col in [
        "software_usd",
        "engineering_usd",
        "network_usd",
        "energy_kwh",
        "carbon_kg",
    ] {
        assert!(header.contains(&col), "{header:?}");
    }
    let i = header.iter().position(|c| *c == "energy_kwh").unwrap();
    let first = csv.lines().nth(1).unwrap().split(',').collect::<Vec<_>>()[i]
        .parse::<f64>()
        .unwrap();
    assert!((first - r.tiers[0].options[0].yearly[0].energy_kwh).abs() < 0.01);
    let json = tco_sim::report::data::json(&r);
    for key in [
        "\"energy_per_request_j\"",
        "\"kwh_per_million_requests\"",
        "\"rps_per_watt\"",
        "\"carbon_kg\"",
    ] {
        assert!(json.contains(key), "{key}");
    }
    // The terminal summary shows the efficiency table.
    let text = tco_sim::report::table::render(&r);
    assert!(text.contains("Energy and carbon over 5 years"), "{text}");
}

/// A tier no fleet of which meets the contract stays in results.csv: one "not costed" row per
/// year with the reason, never dropped (a 70B model on a 64-core Graviton4 cannot meet 60 s).
#[test]
fn an_infeasible_tier_is_in_the_csv_with_its_reason() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/llama70b-chat.toml");
    let text = std::fs::read_to_string(p).unwrap().replace(
        "profile = \"altra-max-m128-30-1u\"",
        "profile = \"aws-c8g.16xlarge\"",
    );
    let r = run(&load(&text).unwrap());
    let t = r
        .tiers
        .iter()
        .find(|t| t.profile == "aws-c8g.16xlarge")
        .unwrap();
    assert!(t.options.is_empty() && t.infeasible.is_some());
    let csv = tco_sim::report::data::csv(&r);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    assert_eq!(header.last(), Some(&"infeasible"));
    let rows: Vec<&str> = csv
        .lines()
        .filter(|l| l.contains("aws-c8g.16xlarge"))
        .collect();
    assert_eq!(rows.len(), t.capacity.len(), "{csv}");
    for l in rows {
        assert!(l.contains(",not costed,") && l.contains("takes"), "{l}");
    }
}
