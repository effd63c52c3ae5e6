//! The cash flows of the recommended option and the runner-up (results.json `cash_flow`):
//! their discounted sum is each option's ranking figure to the cent, in every shipped scenario
//! and after tax; the incremental NPV is the recommendation's margin; payback and IRR are
//! present only where owning meets renting, and never NaN.

mod report_fixtures;

use report_fixtures::{SHIPPED, option, shipped, shipped_text};
use tco_sim::results::RunResults;
use tco_sim::results::cashflow::{CashFlow, OptionCashFlow};

fn check_sums(r: &RunResults, f: &OptionCashFlow, name: &str) {
    let o = option(r, &f.tier, f.option);
    let sum: f64 = f.rows.iter().map(|x| x.discounted_usd).sum();
    assert!(
        (sum - o.net_present_cost_usd).abs() < 0.005,
        "{name} {} {}: Σ discounted {sum} vs NPC {}",
        f.tier,
        f.option,
        o.net_present_cost_usd
    );
    assert!((f.net_present_cost_usd - o.net_present_cost_usd).abs() < 0.005);
    // Before tax the nominal flows are the option's cash: in-horizon total, owed after it,
    // less the resale at the end.
    if r.scenario.costs.tax_rate.value == 0.0 {
        let cash = o.total_usd + o.committed_beyond_horizon_usd - o.resale_value_usd;
        assert!(
            (f.nominal_usd - cash).abs() < 0.005,
            "{name}: {} vs {cash}",
            f.nominal_usd
        );
    }
    let last = f.rows.last().unwrap();
    assert!((last.cumulative_discounted_usd - sum).abs() < 0.005);
}

fn check(r: &RunResults, name: &str) -> CashFlow {
    let cf = r
        .cash_flow
        .clone()
        .unwrap_or_else(|| panic!("{name}: no cash_flow"));
    let rec = r.recommendation.as_ref().unwrap();
    assert_eq!(cf.recommended.tier, rec.best.tier);
    assert_eq!(cf.recommended.option, rec.best.option);
    check_sums(r, &cf.recommended, name);
    if let Some(u) = &cf.runner_up {
        check_sums(r, u, name);
        let want = rec.margin_usd.unwrap();
        let got = cf.incremental_npv_usd.unwrap();
        assert!((got - want).abs() < 0.005, "{name}: {got} vs {want}");
    }
    for x in [cf.irr, cf.payback_years, cf.discounted_payback_years]
        .into_iter()
        .flatten()
    {
        assert!(x.is_finite(), "{name}");
    }
    if let Some(irr) = cf.irr {
        // The incremental flows are worth nothing at the IRR.
        let npv: f64 = cf
            .incremental
            .iter()
            .map(|p| p.saving_usd * (1.0 + irr).powf(-p.t_years))
            .sum();
        let scale: f64 = cf.incremental.iter().map(|p| p.saving_usd.abs()).sum();
        assert!(
            npv.abs() < 1e-6 * scale.max(1.0),
            "{name}: NPV at IRR {npv}"
        );
    } else {
        assert!(!cf.irr_note.is_empty());
    }
    cf
}

#[test]
fn every_shipped_scenario_sums_to_its_net_present_cost() {
    for name in SHIPPED {
        check(&shipped(name), name);
    }
}

#[test]
fn after_tax_the_flows_sum_to_the_after_tax_figure() {
    let text = shipped_text("h100-current-prices");
    let text = if text.contains("[costs]") {
        text.replacen(
            "[costs]",
            "[costs]\ntax_rate = 0.25\ntax_depreciation = 1",
            1,
        )
    } else {
        format!("{text}\n[costs]\ntax_rate = 0.25\ntax_depreciation = 1\n")
    };
    let src = tco_sim::input::SourceFile::from_text(
        report_fixtures::repo("scenarios/h100-current-prices.toml")
            .to_str()
            .unwrap(),
        &text,
    );
    let s = tco_sim::scenario::Scenario::from_source(&src).expect("valid");
    let r = tco_sim::results::plan(&s, tco_sim::results::Method::Analytic, &|_, _| {}).unwrap();
    let cf = check(&r, "h100 after tax");
    assert!(cf.recommended.rows.iter().any(|x| x.tax_running_usd != 0.0));
}

#[test]
fn owning_against_renting_has_a_payback_and_an_irr() {
    // h100-current-prices: on-prem against a 3-year reservation; owning pays back within the
    // horizon and its IRR lies between 0 and 100 % a year.
    let r = shipped("h100-current-prices");
    let cf = check(&r, "h100");
    assert!(cf.own.as_deref().unwrap().contains("on-prem"));
    let p = cf.payback_years.expect("a payback");
    assert!(p > 0.0 && p < r.scenario.horizon_years as f64, "{p}");
    assert!(cf.discounted_payback_years.unwrap() >= p);
    let irr = cf.irr.expect("an IRR");
    assert!(irr > 0.0 && irr < 1.0, "{irr}");
    // The IRR is above the discount rate exactly when owning is the cheaper at that rate.
    assert_eq!(
        irr > r.scenario.costs.discount_rate.value,
        cf.incremental_npv_usd.unwrap() > 0.0
    );
}
