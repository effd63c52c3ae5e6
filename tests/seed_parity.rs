//! Seed parity: `scenarios/seed-8xh100.toml` reproduces the five-year TCO table of seed 004,
//! section 4.3, to the dollar and its break-even hours to 0.1 h.

use std::path::Path;

use tco_sim::cost::ExactBreakEven;
use tco_sim::hardware::DeploymentOption;
use tco_sim::results::{Note, RunResults};
use tco_sim::scenario::Scenario;

fn run(file: &str) -> RunResults {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(file);
    let scenario = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    tco_sim::results::plan(&scenario, tco_sim::results::Method::Analytic, &|_, _| {}).unwrap()
}

fn total(r: &RunResults, option: DeploymentOption) -> f64 {
    r.tiers
        .iter()
        .flat_map(|t| &t.options)
        .find(|o| o.option == option)
        .unwrap()
        .total_usd
}

#[test]
fn five_year_totals_match_the_seed_to_the_dollar() {
    let r = run("seed-8xh100.toml");
    assert_eq!(total(&r, DeploymentOption::OnPrem).round(), 871_912.0);
    assert_eq!(total(&r, DeploymentOption::OnDemand).round(), 4_306_416.0);
    assert_eq!(total(&r, DeploymentOption::Reserved1y).round(), 3_391_303.0);
    assert_eq!(total(&r, DeploymentOption::Reserved3y).round(), 2_362_812.0);
}

#[test]
fn break_even_hours_match_the_seed_to_a_tenth() {
    let r = run("seed-8xh100.toml");
    // The seed's form from the lines each row carries (their seed basis: nominal cash inside
    // the horizon at 24 h/day), for every option as the seed computes it; the row keeps it only
    // against on-demand, where it is a break-even.
    let seed_form = |o: DeploymentOption| {
        let b = r.break_even.iter().find(|b| b.cloud_option == o).unwrap();
        let h = tco_sim::cost::simplified_break_even(b.on_prem_line, b.cloud_line).unwrap();
        assert_eq!(
            b.simplified_hours_per_day.is_some(),
            o == DeploymentOption::OnDemand,
            "{o}"
        );
        (h * 10.0).round() / 10.0
    };
    assert_eq!(seed_form(DeploymentOption::OnDemand), 4.9);
    assert_eq!(seed_form(DeploymentOption::Reserved1y), 6.2);
    assert_eq!(seed_form(DeploymentOption::Reserved3y), 8.9);
    // With everything on-prem paid around the clock (as the seed does) and the seed's cash
    // basis (no discounting, no resale: set in the scenario), the exact form against on-demand
    // agrees with the seed's; against a reservation, paid whether used or not, owning is
    // cheaper at any daily use.
    let od = r
        .break_even
        .iter()
        .find(|b| b.cloud_option == DeploymentOption::OnDemand)
        .unwrap();
    match od.exact {
        ExactBreakEven::At {
            hours_per_day,
            on_prem_cheaper_above: true,
        } => {
            assert!((hours_per_day - 4.859).abs() < 0.001, "{hours_per_day}");
            let simplified = od.simplified_hours_per_day.unwrap();
            assert!((simplified - hours_per_day).abs() < 1e-9, "{simplified}");
        }
        ref other => panic!("{other:?}"),
    }
    let r3 = r
        .break_even
        .iter()
        .find(|b| b.cloud_option == DeploymentOption::Reserved3y)
        .unwrap();
    assert_eq!(r3.exact, ExactBreakEven::OnPremAlwaysCheaper);
}

#[test]
fn the_three_year_reservation_past_the_horizon_is_reported() {
    // A 3-year lot bought in year 4 runs through year 6: one year at $53.94548/h is owed after
    // the horizon, outside the seed's (and our) five-year total.
    let r = run("seed-8xh100.toml");
    let o = r
        .tiers
        .iter()
        .flat_map(|t| &t.options)
        .find(|o| o.option == DeploymentOption::Reserved3y)
        .unwrap();
    assert!((o.committed_beyond_horizon_usd - 53.94548 * 8760.0).abs() < 0.01);
    assert!(r.notes.iter().any(|n| matches!(
        n,
        Note::CommittedBeyondHorizon {
            option: DeploymentOption::Reserved3y,
            ..
        }
    ) && n.to_string().contains("owed after the horizon")));
}

#[test]
fn current_prices_move_the_seed_table_and_say_by_how_much() {
    let r = run("h100-current-prices.toml");
    assert_eq!(r.references.len(), 4);
    let od = r
        .references
        .iter()
        .find(|x| x.option == DeploymentOption::OnDemand)
        .unwrap();
    // p5.48xlarge on-demand at $55.04/h in year 1, falling by the profile's derived trend of
    // −16.8 %/yr (the 2025 cut spread over the 3.15 years observed): 55.04 × 8,760 ×
    // Σ_{y=1..5} 0.832^(y−1) = 482,150.4 × 3.579328 = $1,725,775 of instance fees, plus storage
    // and egress.
    let fees: f64 = r.tiers[1]
        .options
        .iter()
        .find(|o| o.option == DeploymentOption::OnDemand)
        .unwrap()
        .yearly
        .iter()
        .map(|y| y.cloud_usd)
        .sum();
    let expected = 55.04 * 8760.0 * (0..5).map(|k| 0.832f64.powi(k)).sum::<f64>();
    assert!((fees - expected).abs() < 0.01, "{fees} vs {expected}");
    assert!(
        od.total_usd > fees && od.total_usd < fees + 10_000.0,
        "{}",
        od.total_usd
    );
    assert!(od.total_change.unwrap() < -0.55);
    // The cheaper cloud moves the on-demand break-even well past the seed's 4.9 h/day.
    assert!(od.break_even_simplified_hours_per_day.unwrap() > 8.0);
    // The full model costs more per on-prem server-year than capex + power alone.
    let op = r
        .references
        .iter()
        .find(|x| x.option == DeploymentOption::OnPrem)
        .unwrap();
    let on_prem = r.tiers[0].options[0].clone();
    assert!(
        on_prem
            .yearly
            .iter()
            .all(|y| y.maintenance_usd > 0.0 && y.space_usd > 0.0 && y.staff_usd > 0.0)
    );
    assert_eq!(
        on_prem.yearly[4].units_added, 1,
        "4-year life: refreshed in year 5"
    );
    assert!(op.total_usd > 0.0);
}
