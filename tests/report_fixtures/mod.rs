//! Results the report tests draw: shipped scenarios as planned, the same with hand-built
//! latency data (the simulator fills it in real runs), and degenerate runs (one year, zero
//! cost, a tier without options, no tiers at all).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use tco_sim::capacity::{CapacityYear, FleetYear, LatencyAtPlan, LoadPoint, StopReason};
use tco_sim::cost::OptionCost;
use tco_sim::hardware::{DeploymentOption, UnitKind};
use tco_sim::results::{Method, RunResults, ScenarioSummary, TierResult};
use tco_sim::scenario::Scenario;

pub fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// A shipped scenario, planned as `tco-sim` plans it.
pub fn shipped(name: &str) -> RunResults {
    let s = Scenario::load(&repo(&format!("scenarios/{name}.toml"))).expect("scenario loads");
    tco_sim::results::plan(&s, Method::Analytic, &|_, _| {}).expect("scenario plans")
}

/// A shipped scenario, planned as `shipped` plans it, with the uncertainty analysis attached
/// as `tco-sim run` attaches it (`samples` Monte Carlo samples; fewer than the default keeps
/// the tests quick).
pub fn shipped_uncertain(name: &str, samples: u32) -> RunResults {
    let s = Scenario::load(&repo(&format!("scenarios/{name}.toml"))).expect("scenario loads");
    let mut r = tco_sim::results::plan(&s, Method::Analytic, &|_, _| {}).expect("scenario plans");
    tco_sim::uncertainty::attach(&s, &mut r, Method::Analytic, samples);
    r
}

/// Every shipped scenario, by file stem.
pub const SHIPPED: [&str; 6] = [
    "azure-trace-llama8b",
    "embedding-api",
    "h100-current-prices",
    "llama70b-chat",
    "seed-8xh100",
    "starter",
];

/// The text of a shipped scenario, to vary in a test.
pub fn shipped_text(name: &str) -> String {
    std::fs::read_to_string(repo(&format!("scenarios/{name}.toml"))).expect("scenario file")
}

/// One option of one tier of a run.
pub fn option<'a>(r: &'a RunResults, tier: &str, o: DeploymentOption) -> &'a OptionCost {
    r.tiers
        .iter()
        .find(|t| t.name == tier)
        .and_then(|t| t.options.iter().find(|x| x.option == o))
        .unwrap_or_else(|| panic!("{tier} {o}"))
}

/// A scenario from TOML text.
pub fn from_toml(text: &str) -> RunResults {
    let src = tco_sim::input::SourceFile::from_text("test.toml", text);
    let s = Scenario::from_source(&src).expect("scenario is valid");
    tco_sim::results::plan(&s, Method::Analytic, &|_, _| {}).expect("scenario plans")
}

/// Two tiers, one on-prem and one cloud with autoscaling, growing traffic.
pub const MIXED: &str = r#"name = "report test: Altra on-prem vs Inferentia2"
horizon_years = 5

[workload]
preset = "resnet-50"
precision = "int8"

[traffic]
peak_rps = 2000
mean_rps = 1200
growth_per_year = 0.3

[slo]
percentile = 99
latency_ms = 200

[[tier]]
name = "Altra on-prem"
profile = "altra-max-m128-30-1u"

[[tier]]
name = "Inferentia2 cloud"
profile = "aws-inf2.xlarge"
"#;

/// Simulator-shaped latency: a hockey stick per tier against load at its last-year fleet, a
/// CDF at the planned fleet and each year's tail at plan, built from an M/M/1-like form so the
/// knee is where a reader expects it (base 20 ms, p99 crossing 200 ms at about 85 % busy).
pub fn with_latency(mut r: RunResults) -> RunResults {
    // Generative contracts: time to first token crossing its bound at about 82 % of capacity,
    // time per output token at about 91 %, the plan at 60 % and 70 % of the bounds.
    let (ttft_bound, tpot_bound) = (r.scenario.slo_ttft_s, r.scenario.slo_tpot_s);
    for t in &mut r.tiers {
        let units = t.capacity.last().map_or(1, |c| c.units).max(1) as f64;
        let capacity = units * t.unit_throughput_rps;
        let base = 0.020;
        let at = |u: f64, k: f64| base * (1.0 + k * u / (1.0 - u));
        t.latency_curve = (1..=19)
            .map(|i| {
                let u = i as f64 * 0.05;
                LoadPoint {
                    offered_rps: u * capacity,
                    utilization: u,
                    p50_s: at(u, 0.3),
                    p95_s: at(u, 1.0),
                    p99_s: at(u, 1.6),
                    ttft_s: ttft_bound.map(|b| 0.3 * b * (1.0 + 0.5 * u / (1.0 - u))),
                    tpot_s: tpot_bound.map(|b| 0.5 * b * (1.0 + 0.1 * u / (1.0 - u))),
                }
            })
            .collect();
        t.latency_cdf = (0..=40)
            .map(|i| {
                let q = 1.0 - 0.5f64.powf(i as f64 / 4.0);
                let q = if i == 40 { 1.0 } else { q };
                (base * (1.0 + 3.0 * (-((1.0 - q).max(1e-4)).ln()) / 4.6), q)
            })
            .collect();
        for c in &mut t.capacity {
            c.latency = Some(LatencyAtPlan {
                p50_s: 0.022,
                p95_s: 0.041,
                p99_s: 0.063,
                slo_percentile_s: 0.063,
                slo_ci95_s: Some(0.002),
                utilization: 0.6,
                ttft_s: ttft_bound.map(|b| 0.6 * b),
                tpot_s: tpot_bound.map(|b| 0.7 * b),
                ttft_ci95_s: ttft_bound.map(|b| 0.01 * b),
                tpot_ci95_s: tpot_bound.map(|b| 0.01 * b),
                little_relative_error: 1e-4,
                llm: None,
                prefix_hit_rate: None,
                cdf: vec![],
            });
        }
    }
    r.scenario.capacity_method = "simulated".into();
    let bounds = r.scenario.bounds();
    for t in &mut r.tiers {
        t.judge(&bounds);
    }
    r
}

fn summary(name: &str, years: u32) -> ScenarioSummary {
    ScenarioSummary {
        name: name.into(),
        description: None,
        file: "hand-built".into(),
        horizon_years: years,
        seed: 1,
        workload: "ResNet-50".into(),
        precision: "int8".into(),
        traffic: "peak 1 req/s".into(),
        slo: "p99 ≤ 200 ms".into(),
        slo_percentile: 99.0,
        slo_latency_s: Some(0.2),
        slo_ttft_s: None,
        slo_tpot_s: None,
        capacity_method: "analytic (utilization bound)".into(),
        costs: tco_sim::cost::inputs::default_costs(),
        max_utilization: 0.8,
    }
}

fn year(y: u32) -> CapacityYear {
    CapacityYear {
        year: y,
        peak_rps: 1.0,
        mean_rps: 0.5,
        units: 1,
        analytic_units: 1,
        stop: StopReason::Met,
        detail: None,
        latency: None,
        fleet: FleetYear {
            year: y,
            units: 1,
            utilization: 0.1,
            hourly_units: vec![],
            requests: 0.0,
        },
    }
}

fn zero_option(option: DeploymentOption, years: u32) -> OptionCost {
    let fleet: Vec<FleetYear> = (1..=years)
        .map(|year| FleetYear {
            year,
            units: 0,
            utilization: 0.0,
            hourly_units: vec![],
            requests: 0.0,
        })
        .collect();
    tco_sim::cost::empty(option, &fleet)
}

/// One year, one tier with a zero-cost option, one tier with no options at all.
pub fn degenerate() -> RunResults {
    RunResults {
        schema_version: tco_sim::results::SCHEMA_VERSION,
        tool: "tco-sim".into(),
        tool_version: "0.0.0".into(),
        scenario: summary("degenerate: one year, zero cost", 1),
        tiers: vec![
            TierResult {
                name: "Free tier".into(),
                profile: "none".into(),
                kind: UnitKind::Cpu,
                precision: "int8".into(),
                unit_throughput_rps: 0.0,
                replicas: None,
                capacity: vec![year(1)],
                options: vec![zero_option(DeploymentOption::OnPrem, 1)],
                infeasible: None,
                latency_curve: vec![],
                latency_cdf: vec![],
                design_day_units: vec![],
                price_region: None,
                utilization: vec![],
                slo_status_by_year: vec![],
                slo_status: tco_sim::results::decision::SloStatus::Met,
                suite_evidence: None,
            },
            TierResult {
                name: "No options".into(),
                profile: "none".into(),
                kind: UnitKind::Gpu,
                precision: "int8".into(),
                unit_throughput_rps: 10.0,
                replicas: None,
                capacity: vec![year(1)],
                options: vec![],
                infeasible: Some(
                    "a request alone takes 300 ms, above the p99 bound of 200 ms".into(),
                ),
                latency_curve: vec![],
                latency_cdf: vec![],
                design_day_units: vec![],
                price_region: None,
                utilization: vec![],
                slo_status_by_year: vec![],
                slo_status: tco_sim::results::decision::SloStatus::Met,
                suite_evidence: None,
            },
        ],
        design_day_rps: vec![],
        break_even: vec![],
        recommendation: None,
        references: vec![],
        inputs: vec![],
        notes: vec![],
        sensitivity: None,
        uncertainty: None,
        cash_flow: None,
    }
}

/// No tiers at all.
pub fn empty() -> RunResults {
    RunResults {
        tiers: vec![],
        scenario: summary("empty: no tiers", 3),
        ..degenerate()
    }
}

/// Where to keep rendered files for a look (`TCO_SIM_KEEP_REPORTS=/some/dir`), else a temp dir.
pub fn out_dir(tag: &str) -> (PathBuf, Option<tempfile::TempDir>) {
    match std::env::var_os("TCO_SIM_KEEP_REPORTS") {
        Some(d) => {
            let p = PathBuf::from(d).join(tag);
            std::fs::create_dir_all(&p).expect("keep dir");
            (p, None)
        }
        None => {
            let t = tempfile::tempdir().expect("temp dir");
            (t.path().to_path_buf(), Some(t))
        }
    }
}
