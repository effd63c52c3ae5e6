//! One cost basis everywhere: the recommendation, cost per million, the cumulative chart's title
//! and the ranking column all come from the net present cost, and the reproducers stay
//! fixed: (a) `h100-current-prices` no longer recommends one option while cost per million
//! favours another, (c) the same fleet has the same cost per million simulated or analytic,
//! (e) the depreciation life moves book value only.

mod report_fixtures;

use report_fixtures::{SHIPPED, from_toml, option, shipped, shipped_text as text};
use tco_sim::cost::{OptionCost, mid_year_factor};
use tco_sim::hardware::DeploymentOption;
use tco_sim::results::RunResults;

/// Every costed option of a tier that meets the contract, with its tier name.
fn eligible(r: &RunResults) -> Vec<(&str, &OptionCost)> {
    r.tiers
        .iter()
        .filter(|t| t.meets_slo())
        .flat_map(|t| t.options.iter().map(move |o| (t.name.as_str(), o)))
        .collect()
}

#[test]
fn recommendation_cost_per_million_and_chart_title_agree_in_every_shipped_scenario() {
    for name in SHIPPED {
        let r = shipped(name);
        let Some(rec) = &r.recommendation else {
            continue;
        };
        let options = eligible(&r);
        let best = options
            .iter()
            .min_by(|a, b| {
                a.1.net_present_cost_usd
                    .total_cmp(&b.1.net_present_cost_usd)
            })
            .unwrap();
        assert_eq!(
            (best.0, best.1.option),
            (rec.best.tier.as_str(), rec.best.option),
            "{name}"
        );
        assert_eq!(rec.best.net_present_cost_usd, best.1.net_present_cost_usd);
        // Among options serving the same requests, cost per million orders them as the ranking
        // figure does: the recommended one is never dearer per million.
        let cpm = best.1.cost_per_million_usd.unwrap();
        for (tier, o) in &options {
            if (o.requests - best.1.requests).abs() <= 1e-9 * o.requests {
                assert!(
                    o.cost_per_million_usd.unwrap() >= cpm - 1e-9,
                    "{name}: {tier} {} is cheaper per million than the recommendation",
                    o.option
                );
            }
        }
        // Every money chart's title names the recommended option.
        let set = tco_sim::report::charts::render_all(&r).unwrap();
        for name_of_chart in ["cumulative-cost", "cost-per-million", "break-even"] {
            let Some(chart) = set.charts.iter().find(|c| c.name == name_of_chart) else {
                assert_ne!(name_of_chart, "cumulative-cost", "{name}");
                continue;
            };
            assert!(
                chart
                    .title
                    .starts_with(&format!("{} · {}", rec.best.tier, rec.best.option)),
                "{name}: chart {name_of_chart} says {:?}, page 1 recommends {} {}",
                chart.title,
                rec.best.tier,
                rec.best.option
            );
        }
    }
}

#[test]
fn h100_current_prices_ranks_and_prices_on_one_basis() {
    let r = shipped("h100-current-prices");
    let rec = r.recommendation.as_ref().unwrap();
    let op = option(&r, "On-prem 8x H100", DeploymentOption::OnPrem);
    let r3 = option(&r, "AWS p5.48xlarge", DeploymentOption::Reserved3y);
    // The reservation's year owed after the horizon is in its ranking figure, discounted at the
    // middle of year 6; the on-prem server bought in year 5 is credited at its market value.
    assert!(r3.committed_beyond_horizon_usd > 100_000.0);
    let expected_r3 = r3.npv_usd
        + r3.committed_beyond_horizon_usd
            * mid_year_factor(r.scenario.costs.discount_rate.value, 6);
    assert!((r3.net_present_cost_usd - expected_r3).abs() < 0.01);
    assert!(op.resale_value_usd > 0.0);
    assert!(op.net_present_cost_usd < op.npv_usd);
    // The recommendation and the cheapest cost per million are the same option.
    assert_eq!(rec.best.option, DeploymentOption::OnPrem);
    assert!(op.cost_per_million_usd.unwrap() < r3.cost_per_million_usd.unwrap());
}

#[test]
fn cost_per_million_is_the_ranking_figure_over_discounted_requests() {
    let r = shipped("embedding-api");
    for t in &r.tiers {
        for o in &t.options {
            let pv: f64 = o
                .yearly
                .iter()
                .map(|y| y.requests * mid_year_factor(r.scenario.costs.discount_rate.value, y.year))
                .sum();
            let cpm = o.cost_per_million_usd.unwrap();
            assert!(
                (cpm - o.net_present_cost_usd / pv * 1e6).abs() < 1e-9 * cpm,
                "{} {}",
                t.name,
                o.option
            );
        }
    }
}

#[test]
fn the_same_fixed_fleet_costs_the_same_per_million_simulated_or_analytic() {
    // Reproducer (c): one server each, 30× the traffic it can carry. Both plans now count the
    // requests the fleet serves (its roofline capacity hour by hour), not those offered.
    let toml = text("h100-current-prices")
        .replace("peak_rps = 20\n", "peak_rps = 600\n")
        .replace("mean_rps = 10\n", "mean_rps = 300\n");
    let src = tco_sim::input::SourceFile::from_text("h100-fixed.toml", &toml);
    let s = tco_sim::scenario::Scenario::from_source(&src).unwrap();
    let analytic =
        tco_sim::results::plan(&s, tco_sim::results::Method::Analytic, &|_, _| {}).unwrap();
    let simulated = tco_sim::results::plan(
        &s,
        tco_sim::results::Method::Simulated { replications: 1 },
        &|_, _| {},
    )
    .unwrap();
    for (a, b) in analytic.tiers.iter().zip(&simulated.tiers) {
        for (x, y) in a.options.iter().zip(&b.options) {
            assert_eq!(x.requests, y.requests, "{} {}", a.name, x.option);
            let (cx, cy) = (
                x.cost_per_million_usd.unwrap(),
                y.cost_per_million_usd.unwrap(),
            );
            // The cloud bills the same instance-hours either way; on-prem energy follows the
            // measured utilization, within a few percent of the bound's.
            assert!(
                (cx - cy).abs() / cx < 0.03,
                "{} {}: {cx} vs {cy}",
                a.name,
                x.option
            );
            if x.option.is_cloud() {
                assert_eq!(cx, cy);
            }
        }
    }
    // Served, not offered: in its busiest hours the one server is at its roofline capacity.
    let offered = s.traffic.requests_per_year(1);
    let served = analytic.tiers[0].options[0].yearly[0].requests;
    assert!(served < 0.999 * offered, "{served} of {offered}");
}

#[test]
fn the_depreciation_life_moves_book_value_not_the_ranking() {
    // Reproducer (e): cash never depends on how hardware is written off, and neither does the
    // ranking figure now that owned hardware is valued at market.
    let base = text("embedding-api");
    let with = |years: u32| {
        let t = if base.contains("depreciation_years") {
            base.replace(
                "depreciation_years = 5",
                &format!("depreciation_years = {years}"),
            )
        } else {
            base.replacen(
                "[costs]",
                &format!("[costs]\ndepreciation_years = {years}"),
                1,
            )
        };
        from_toml(&t)
    };
    let (five, six) = (with(5), with(6));
    let mut book_moved = false;
    for (a, b) in five.tiers.iter().zip(&six.tiers) {
        for (x, y) in a.options.iter().zip(&b.options) {
            assert_eq!(x.total_usd, y.total_usd);
            assert_eq!(x.net_present_cost_usd, y.net_present_cost_usd);
            book_moved |= x.book_value_usd != y.book_value_usd;
        }
    }
    assert!(book_moved, "book value follows the depreciation life");
}
