//! Uncertainty benchmark (issue 12): in one run, on one shipped scenario, a single simulated
//! plan against the tornado (with the flip-point search), 1,000 Monte Carlo samples over the
//! cost inputs only, and 200 samples over every uncertain input (performance inputs re-planned
//! from the base plan). Prints each time and its ratio to the plan; the targets are
//! tornado ≤ 3×, 1,000 cost samples ≤ 0.2×, 200 samples with performance inputs ≤ 20×.
//!
//! `cargo bench --bench uncertainty` (scenarios/embedding-api.toml), or
//! `cargo bench --bench uncertainty -- FILE`. Wall-clock times on whatever machine runs it.

use std::path::PathBuf;
use std::time::Instant;

use tco_sim::results::{self, Method};
use tco_sim::scenario::Scenario;
use tco_sim::uncertainty::Model;

fn timed<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let t = Instant::now();
    let r = f();
    (t.elapsed().as_secs_f64(), r)
}

fn main() {
    let file = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/embedding-api.toml")
        });
    let scenario = Scenario::load(&file).unwrap_or_else(|e| panic!("{e}"));
    let method = Method::Simulated {
        replications: scenario.simulation.replications,
    };
    println!(
        "{} ({} tiers, {} years), threads: {}",
        file.display(),
        scenario.tiers.len(),
        scenario.horizon_years,
        rayon::current_num_threads()
    );
    let (t_plan, base) = timed(|| results::plan(&scenario, method, &|_, _| {}).expect("plans"));
    let inputs = scenario.uncertain_inputs();
    let cost_only: Vec<_> = inputs
        .iter()
        .filter(|u| !u.path.target.is_performance())
        .cloned()
        .collect();
    let model = Model::new(&scenario, &base, method);
    let (t_tornado, s) = timed(|| model.sensitivity(&inputs));
    let (t_cost, _) = timed(|| model.monte_carlo(&cost_only, 1_000, scenario.seed));
    let (t_perf, _) = timed(|| model.monte_carlo(&inputs, 200, scenario.seed));
    let rows = s.map_or(0, |s| s.tornado.len());
    println!(
        "{} uncertain inputs ({} cost-only)",
        inputs.len(),
        cost_only.len()
    );
    println!("single simulated plan            {t_plan:8.3} s");
    let line = |what: &str, t: f64, target: f64| {
        println!(
            "{what:32} {t:8.3} s  {:6.3}x the plan (target <= {target}x) {}",
            t / t_plan,
            if t / t_plan <= target { "ok" } else { "MISSED" }
        )
    };
    line(
        &format!("tornado + flip points ({rows} rows)"),
        t_tornado,
        3.0,
    );
    line("1,000 cost-only samples", t_cost, 0.2);
    line("200 samples, performance too", t_perf, 20.0);
}
