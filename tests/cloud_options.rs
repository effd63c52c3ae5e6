//! The cloud side of a scenario: spot is costed only when a tier asks for it and recommended
//! only when the tier says its service rides out interruptions; the tier keys that control
//! this and the price trend are checked at their line.

use tco_sim::hardware::DeploymentOption;
use tco_sim::input::SourceFile;
use tco_sim::results::{Method, Note, RunResults};
use tco_sim::scenario::Scenario;

fn scenario(tier_extra: &str) -> String {
    format!(
        r#"name = "spot test"
horizon_years = 3

[workload]
preset = "llama-3-8b"
precision = "fp16"
prompt_tokens = 1000
output_tokens = 200

[traffic]
peak_rps = 20
mean_rps = 10

[slo]
percentile = 99
latency_ms = 20000

[[tier]]
name = "p5"
profile = "aws-p5.48xlarge"
units = 1
{tier_extra}
"#
    )
}

fn run(text: &str) -> RunResults {
    let s = Scenario::from_source(&SourceFile::from_text("spot.toml", text))
        .unwrap_or_else(|e| panic!("{e}"));
    tco_sim::results::plan(&s, Method::Analytic, &|_, _| {}).unwrap()
}

fn error(text: &str) -> String {
    Scenario::from_source(&SourceFile::from_text("spot.toml", text))
        .unwrap_err()
        .to_string()
}

#[test]
fn spot_is_costed_but_not_recommended_unless_the_tier_says_so() {
    let r = run(&scenario(r#"options = ["on-demand", "spot"]"#));
    let options: Vec<_> = r.tiers[0].options.iter().map(|o| o.option).collect();
    assert_eq!(
        options,
        vec![DeploymentOption::OnDemand, DeploymentOption::Spot]
    );
    let spot = &r.tiers[0].options[1];
    let od = &r.tiers[0].options[0];
    // Spot at $28.11/h × 1.1 is far cheaper than on-demand at $55.04/h …
    assert!(spot.net_present_cost_usd < 0.7 * od.net_present_cost_usd);
    // … but on-demand is the recommendation, and a note says why spot is not.
    let rec = r.recommendation.as_ref().unwrap();
    assert_eq!(rec.best.option, DeploymentOption::OnDemand);
    assert!(rec.runner_up.is_none(), "{:?}", rec.runner_up);
    assert!(r.notes.iter().any(|n| matches!(
        n,
        Note::SpotNotRecommended { tier, .. } if tier == "p5"
    )
        && n.to_string().contains("not taken as meeting the contract")));

    let r = run(&scenario(
        "options = [\"on-demand\", \"spot\"]\nspot_meets_slo = true",
    ));
    let rec = r.recommendation.as_ref().unwrap();
    assert_eq!(rec.best.option, DeploymentOption::Spot);
    assert!(
        !r.notes
            .iter()
            .any(|n| matches!(n, Note::SpotNotRecommended { .. }))
    );
}

#[test]
fn spot_is_not_compared_by_default() {
    let r = run(&scenario(""));
    assert!(
        r.tiers[0]
            .options
            .iter()
            .all(|o| o.option != DeploymentOption::Spot)
    );
}

#[test]
fn spot_meets_slo_without_spot_is_refused_at_its_line() {
    let e = error(&scenario("spot_meets_slo = true"));
    assert!(e.contains("spot.toml:22"), "{e}");
    assert!(e.contains("tier[0].spot_meets_slo"), "{e}");
    assert!(e.contains("add \"spot\" to the tier's options"), "{e}");
}

#[test]
fn a_tier_can_override_the_price_trend() {
    // No trend: every year of on-demand pays 55.04 × 8,760 = $482,150.40.
    let r = run(&scenario(
        "options = [\"on-demand\"]\nprice_change_per_year = 0\nprice_change_source = \"flat prices\"",
    ));
    let fees: Vec<f64> = r.tiers[0].options[0]
        .yearly
        .iter()
        .map(|y| y.cloud_usd)
        .collect();
    assert!(
        fees.iter().all(|f| (f - 482_150.4).abs() < 1e-6),
        "{fees:?}"
    );
    assert!(
        r.inputs
            .iter()
            .any(|i| i.scope == "p5" && i.field == "price_change_per_year")
    );
    let e = error(&scenario("price_change_per_year = -0.9"));
    assert!(
        e.contains("spot.toml:22") && e.contains("tier[0].price_change_per_year"),
        "{e}"
    );
    assert!(e.contains("-0.5 to 0.5"), "{e}");
}

#[test]
fn egress_uses_the_providers_schedule_unless_the_scenario_sets_a_flat_price() {
    // 10 req/s mean × 2,000 B: ~631 GB a year, ~53 GB a month — inside AWS's 100 GB allowance.
    let r = run(&scenario(r#"options = ["on-demand"]"#));
    assert!(
        r.tiers[0].options[0]
            .yearly
            .iter()
            .all(|y| y.egress_usd == 0.0)
    );
    let flat = format!(
        "{}\n[costs]\negress_usd_per_gb = 0.09\n",
        scenario(r#"options = ["on-demand"]"#)
    );
    let r = run(&flat);
    let y = &r.tiers[0].options[0].yearly[0];
    let expected = y.requests * 2_000.0 / 1e9 * 0.09;
    assert!(expected > 0.0 && (y.egress_usd - expected).abs() < 1e-6);
}

#[test]
fn an_unknown_egress_schedule_is_refused_with_a_suggestion() {
    let text = tco_sim::hardware::embedded_text("aws-p5.48xlarge")
        .unwrap()
        .replace("egress = \"aws-internet\"", "egress = \"aws-internett\"");
    let src = SourceFile::from_text("p5.toml", &text);
    let e = tco_sim::hardware::Profile::from_source(&src, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("price.egress") && e.contains("no egress schedule is named `aws-internett`"),
        "{e}"
    );
    assert!(e.contains("did you mean `aws-internet`?"), "{e}");
}
