//! The service-time model and the SLO-driven capacity plan (issue 4): contention on CPUs, the
//! plan's monotonicity, that a plan still meets its SLO with fresh random numbers, and that a
//! hybrid commitment is never dearer than the cheaper pure option.

use std::path::Path;

use proptest::prelude::*;
use tco_sim::capacity::FleetYear;
use tco_sim::capacity::StopReason;
use tco_sim::capacity::search::{self, TierContext};
use tco_sim::cite::{Basis, Cited, Source};
use tco_sim::cost::option_cost;
use tco_sim::hardware::{DeploymentOption, Precision, Profile, ProfileSearch};
use tco_sim::input::SourceFile;
use tco_sim::perf::{self, ServicePlan};
use tco_sim::scenario::Scenario;

fn profile(name: &str) -> Profile {
    ProfileSearch::default().load(name, Path::new(".")).unwrap()
}

/// A scenario built from text, so one number can be varied at a time.
fn scenario(peak: f64, latency_ms: f64, tier: &str) -> Scenario {
    let text = format!(
        r#"name = "capacity test"
horizon_years = 2
seed = 11
[workload]
preset = "bert-base"
precision = "int8"
[traffic]
pattern = "constant"
peak_rps = {peak}
growth_per_year = 0.5
[slo]
percentile = 99
latency_ms = {latency_ms}
max_utilization = 1.0
[[tier]]
profile = "{tier}"
[simulation]
window_s = 120
warmup_s = 10
replications = 2
"#
    );
    Scenario::from_source(&SourceFile::from_text("capacity-test.toml", text)).unwrap()
}

fn context(s: &Scenario) -> TierContext<'_> {
    TierContext::new(s, 0, s.simulation.replications)
}

fn planned_units(s: &Scenario) -> Vec<u32> {
    let tiers = search::plan_all(s, s.simulation.replications, &|_, _| {}).unwrap();
    tiers[0].years.iter().map(|c| c.units).collect()
}

#[test]
fn cpu_service_time_rises_with_busy_cores() {
    let p = profile("altra-max-m128-30-1u");
    // A bandwidth-heavy model (a large embedding table: 200 MB of int8 weights, 1 GFLOP): alone
    // a core computes for 10.4 ms and reads the weights in 1.2 ms; with all 128 cores sharing
    // 204.8 GB/s each read takes 156 ms. BERT-base, by contrast, stays compute-bound.
    let text = r#"name = "contention"
[workload]
name = "wide embedding model"
precision = "int8"
flops_per_item = 1e9
parameters = 200e6
activation_elements_per_item = 1e5
[traffic]
peak_rps = 10
[slo]
percentile = 99
latency_ms = 1000
[[tier]]
profile = "altra-max-m128-30-1u"
"#;
    let s = Scenario::from_source(&SourceFile::from_text("c.toml", text)).unwrap();
    let ServicePlan::Classic(plan) =
        perf::plan(&p, &s.workload, Precision::Int8, &p.batching).unwrap()
    else {
        panic!("a classic model")
    };
    let t = &plan.time_at_busy_s;
    assert_eq!(t.len(), 128);
    assert!(
        t.windows(2).all(|w| w[1] >= w[0]),
        "never faster with more busy cores"
    );
    // compute 1e9 / (192e9 x 0.5) = 10.4 ms; memory with 128 sharers (200e6 + 1e5) / (1.6e9 x 0.8).
    assert!((t[0] - (0.0002 + 1e9 / 96e9)).abs() < 1e-9, "{}", t[0]);
    assert!(
        (t[127] - (0.0002 + 200.1e6 / (204.8e9 / 128.0 * 0.8))).abs() < 1e-9,
        "{}",
        t[127]
    );
    // Past the knee, adding busy cores adds no throughput: the chip is bandwidth-bound.
    let rate = |k: usize| k as f64 / t[k - 1];
    assert!((rate(128) - rate(64)).abs() / rate(64) < 0.01);
    // BERT-base, at 22.6 GFLOP per request, never reaches the bandwidth roof on this chip.
    let bert = scenario(100.0, 500.0, "altra-max-m128-30-1u");
    let ServicePlan::Classic(b) =
        perf::plan(&p, &bert.workload, Precision::Int8, &p.batching).unwrap()
    else {
        panic!()
    };
    assert_eq!(b.time_at_busy_s[0], b.time_at_busy_s[127]);
}

#[test]
fn more_traffic_never_needs_fewer_units() {
    let mut last: Option<Vec<u32>> = None;
    for peak in [200.0, 400.0, 800.0] {
        let units = planned_units(&scenario(peak, 100.0, "aws-inf2.xlarge"));
        if let Some(prev) = &last {
            assert!(
                units.iter().zip(prev).all(|(a, b)| a >= b),
                "{prev:?} -> {units:?} at {peak} req/s"
            );
        }
        last = Some(units);
    }
}

#[test]
fn a_looser_slo_never_needs_more_units() {
    let tight = planned_units(&scenario(3000.0, 25.0, "aws-c7i.8xlarge"));
    let loose = planned_units(&scenario(3000.0, 200.0, "aws-c7i.8xlarge"));
    assert!(
        loose.iter().zip(&tight).all(|(l, t)| l <= t),
        "tight {tight:?}, loose {loose:?}"
    );
}

#[test]
fn the_plan_meets_the_slo_when_resimulated_with_fresh_seeds() {
    let s = scenario(1500.0, 60.0, "aws-c7i.8xlarge");
    let plan = search::plan_all(&s, s.simulation.replications, &|_, _| {}).unwrap();
    for c in &plan[0].years {
        assert_eq!(c.stop, StopReason::Met);
        for seed in [101, 202, 303] {
            let mut fresh = s.clone();
            fresh.seed = seed;
            let ctx = context(&fresh);
            let e = search::evaluate(&ctx, c.year, c.units).unwrap();
            // Within the sampling noise the plan was chosen under: the CI of the chosen run.
            let slack = c.latency.as_ref().and_then(|l| l.slo_ci95_s).unwrap_or(0.0) * 3.0 + 1e-3;
            assert!(
                e.slo_s <= s.slo.latency_s.unwrap() + slack,
                "year {} with {} units: p99 {} s under seed {seed}",
                c.year,
                c.units,
                e.slo_s
            );
        }
    }
}

#[test]
fn the_search_stops_with_a_reason() {
    // A lone BERT-base request on one Altra core takes ~0.5 s: a 50 ms contract is infeasible.
    let s = scenario(100.0, 50.0, "altra-q80-30-1u");
    let plan = search::plan_all(&s, 2, &|_, _| {}).unwrap();
    assert!(
        plan[0]
            .years
            .iter()
            .all(|c| c.stop == StopReason::Infeasible && c.detail.is_some())
    );
    // A cap below what the traffic needs stops at the cap.
    let mut capped = scenario(4000.0, 100.0, "aws-c7i.8xlarge");
    capped.simulation.max_units = 1;
    let plan = search::plan_all(&capped, 2, &|_, _| {}).unwrap();
    assert!(
        plan[0]
            .years
            .iter()
            .any(|c| matches!(c.stop, StopReason::CapacityCap | StopReason::Unstable))
    );
}

fn cited(v: f64) -> Cited {
    Cited {
        value: v,
        basis: Basis::Cited,
        source: Source {
            key: "t".into(),
            title: "test".into(),
            url: None,
            date: "2026".into(),
        },
        note: None,
        log_sd: None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Hybrid (reserved base + on-demand burst, base chosen to minimise cost) is never dearer
    /// than the cheaper of pure reserved and pure on-demand, for any traffic shape and prices.
    #[test]
    fn hybrid_is_never_dearer_than_the_cheaper_pure_option(
        peak in 1u32..12,
        shape in proptest::collection::vec(0.0f64..1.0, 24),
        growth in 0u32..3,
        od in 0.5f64..10.0,
        discount in 0.2f64..1.1,
        term3 in proptest::bool::ANY,
    ) {
        let mut p = profile("aws-inf2.xlarge");
        p.prices.on_demand_usd_per_hour = Some(cited(od));
        p.prices.reserved_1y_usd_per_hour = Some(cited(od * discount));
        p.prices.reserved_3y_usd_per_hour = Some(cited(od * discount * 0.8));
        let inputs = tco_sim::cost::inputs::default_costs();
        let fleet: Vec<FleetYear> = (1..=5u32)
            .map(|year| {
                let top = peak + growth * (year - 1);
                let hourly: Vec<u32> = (0..8760)
                    .map(|h| ((shape[h % 24] * top as f64).ceil() as u32).max(1))
                    .collect();
                FleetYear { year, units: *hourly.iter().max().unwrap(), utilization: 0.5, hourly_units: hourly, requests: 1e8 }
            })
            .collect();
        let (reserved, hybrid) = if term3 {
            (DeploymentOption::Reserved3y, DeploymentOption::Hybrid3y)
        } else {
            (DeploymentOption::Reserved1y, DeploymentOption::Hybrid1y)
        };
        let cost = |o| option_cost(o, &p, &fleet, &inputs, None);
        let h = cost(hybrid);
        let cheaper = cost(reserved).total_usd.min(cost(DeploymentOption::OnDemand).total_usd);
        prop_assert!(h.total_usd <= cheaper + 1e-6, "hybrid {} > {}", h.total_usd, cheaper);
    }

    /// Cost never falls when a price rises.
    #[test]
    fn cost_never_falls_when_a_price_rises(
        units in 1u32..20,
        bump in 1.0f64..2.0,
        option in proptest::sample::select(vec![DeploymentOption::OnPrem, DeploymentOption::OnDemand, DeploymentOption::Reserved1y, DeploymentOption::Reserved3y]),
    ) {
        let base = profile(if option == DeploymentOption::OnPrem { "hgx-h100-8x" } else { "aws-p5.48xlarge" });
        let mut dearer = base.clone();
        let price = match option {
            DeploymentOption::OnPrem => &mut dearer.prices.purchase_usd,
            DeploymentOption::OnDemand => &mut dearer.prices.on_demand_usd_per_hour,
            DeploymentOption::Reserved1y => &mut dearer.prices.reserved_1y_usd_per_hour,
            _ => &mut dearer.prices.reserved_3y_usd_per_hour,
        };
        let v = price.as_ref().unwrap().value;
        *price = Some(cited(v * bump));
        let fleet: Vec<FleetYear> = (1..=5u32)
            .map(|year| FleetYear { year, units, utilization: 0.6, hourly_units: vec![], requests: 1e9 })
            .collect();
        let inputs = tco_sim::cost::inputs::default_costs();
        let a = option_cost(option, &base, &fleet, &inputs, None).total_usd;
        let b = option_cost(option, &dearer, &fleet, &inputs, None).total_usd;
        prop_assert!(b >= a, "{a} -> {b}");
    }
}

#[test]
fn a_chat_contract_on_ttft_and_tpot_is_planned_and_met() {
    let text = r#"name = "chat"
horizon_years = 1
seed = 5
[workload]
preset = "llama-3-8b"
precision = "fp8"
prompt_tokens = 800
output_tokens = 150
[traffic]
pattern = "constant"
peak_rps = 3
[slo]
percentile = 95
ttft_ms = 2000
tpot_ms = 80
[[tier]]
profile = "aws-g6.xlarge"
[simulation]
window_s = 300
warmup_s = 30
replications = 2
"#;
    let s = Scenario::from_source(&SourceFile::from_text("chat.toml", text)).unwrap();
    assert_eq!(s.slo.label(), "p95 TTFT ≤ 2 s, TPOT ≤ 80 ms");
    let plan = search::plan_all(&s, 2, &|_, _| {}).unwrap();
    let c = &plan[0].years[0];
    assert_eq!(c.stop, StopReason::Met);
    let l = c.latency.as_ref().unwrap();
    assert!(
        l.ttft_s.unwrap() <= 2.0 && l.tpot_s.unwrap() <= 0.080,
        "{l:?}"
    );
    // One unit fewer does not meet it (the search found the smallest fleet).
    if c.units > 1 {
        let e = search::evaluate(&context(&s), 1, c.units - 1).unwrap();
        assert!(e.ttft_s.unwrap() > 2.0 || e.tpot_s.unwrap() > 0.080 || e.report.unstable);
    }
}

#[test]
fn token_bounds_on_a_classic_model_and_a_contract_without_bounds_are_rejected() {
    let base = |slo: &str| {
        format!(
            "name = \"x\"\n[workload]\npreset = \"resnet-50\"\nprecision = \"int8\"\n[traffic]\npeak_rps = 10\n[slo]\npercentile = 99\n{slo}\n[[tier]]\nprofile = \"aws-g6.xlarge\"\n"
        )
    };
    let e =
        Scenario::from_source(&SourceFile::from_text("a.toml", base("ttft_ms = 500"))).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("slo.ttft_ms"));
    assert!(e.message.contains("generative"));
    let e = Scenario::from_source(&SourceFile::from_text("b.toml", base(""))).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("slo"));
    assert!(e.help.clone().unwrap().contains("latency_ms"));
}

/// The counter-example proptest found: one unit all year, 3-year reservations cheaper than
/// on-demand. The hybrid must not prefer on-demand because of the lot that runs past the horizon.
#[test]
fn hybrid_equals_the_reservation_when_reserving_everything_is_cheapest() {
    let mut p = profile("aws-inf2.xlarge");
    p.prices.on_demand_usd_per_hour = Some(cited(0.5));
    p.prices.reserved_3y_usd_per_hour = Some(cited(0.4196));
    let inputs = tco_sim::cost::inputs::default_costs();
    let fleet: Vec<FleetYear> = (1..=5u32)
        .map(|year| FleetYear {
            year,
            units: 1,
            utilization: 0.5,
            hourly_units: vec![1; 8760],
            requests: 1e8,
        })
        .collect();
    let h = option_cost(DeploymentOption::Hybrid3y, &p, &fleet, &inputs, None);
    let r = option_cost(DeploymentOption::Reserved3y, &p, &fleet, &inputs, None);
    assert!(
        (h.total_usd - r.total_usd).abs() < 1e-6,
        "hybrid {} reserved {}",
        h.total_usd,
        r.total_usd
    );
    assert_eq!(h.reserved_base, vec![1; 5]);
}

/// The fleet is planned on each year's design window, and cloud fleets follow the year hour by
/// hour: no hour may be busier than the design window, or it would need units the plan never
/// validated. Checked on the shipped Azure trace, whose busiest stretch is not at its start.
#[test]
fn no_hour_of_the_year_is_busier_than_the_design_window() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/azure-trace-llama8b.toml");
    let s = Scenario::load(&path).unwrap();
    for year in 1..=s.horizon_years {
        let design = s.traffic.design_window(year, s.simulation.window_s);
        let busiest_hour = s.traffic.hourly_rates(year).into_iter().fold(0.0, f64::max);
        assert!(
            busiest_hour <= design.mean_rps * (1.0 + 1e-9),
            "year {year}: hour {busiest_hour} > design {}",
            design.mean_rps
        );
        assert!(
            design.start_s > 0.0,
            "the trace's first half hour is not its busiest"
        );
    }
}
