//! Planning benchmark (issue 4): plan each shipped scenario end to end — simulated fleet sizing
//! for every tier and year, the latency curve, costs, break-even, recommendation — and show
//! where the time goes, tier by tier, split into the fleet-size search and the latency curve.
//!
//! `cargo bench --bench plan` (all of `scenarios/`), or `cargo bench --bench plan -- FILE...`.
//! Wall-clock times on whatever machine runs it; the best of three runs is reported.

use std::path::{Path, PathBuf};
use std::time::Instant;

use tco_sim::capacity::search;
use tco_sim::results::{self, Method};
use tco_sim::scenario::Scenario;

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..runs {
        let t = Instant::now();
        let r = f();
        best = best.min(t.elapsed().as_secs_f64());
        out = Some(r);
    }
    (best, out.expect("at least one run"))
}

fn main() {
    let args: Vec<PathBuf> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .map(PathBuf::from)
        .collect();
    let files = if args.is_empty() {
        let mut v: Vec<PathBuf> =
            std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios"))
                .expect("scenarios/")
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect();
        v.sort();
        v
    } else {
        args
    };
    println!("threads: {}", rayon::current_num_threads());
    for f in files {
        let scenario = match Scenario::load(&f) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("skip {}: {e}", f.display());
                continue;
            }
        };
        let method = Method::Simulated {
            replications: scenario.simulation.replications,
        };
        let (total, _) = best_of(3, || {
            results::plan(&scenario, method, &|_, _| {}).expect("plans")
        });
        println!(
            "\n{}: {:.2} s for {} tiers x {} years (best of 3)",
            f.file_name().unwrap().to_string_lossy(),
            total,
            scenario.tiers.len(),
            scenario.horizon_years
        );
        for tier in &scenario.tiers {
            let mut one = scenario.clone();
            one.tiers = vec![tier.clone()];
            let (t_tier, plan) = best_of(3, || {
                search::plan_all(&one, one.simulation.replications, &|_, _| {}).expect("plans")
            });
            // The latency curve at the last year's fleet, timed on its own.
            let ctx = search::TierContext::new(&one, 0, one.simulation.replications);
            let last = plan[0].years.last().map_or(1, |c| c.units);
            let feasible = plan[0]
                .years
                .iter()
                .all(|c| c.stop != tco_sim::capacity::StopReason::Infeasible);
            let (t_curve, _) = if feasible {
                best_of(3, || search::latency_curve(&ctx, last))
            } else {
                (0.0, vec![])
            };
            let units: Vec<String> = if feasible {
                plan[0].years.iter().map(|c| c.units.to_string()).collect()
            } else {
                vec!["infeasible".into()]
            };
            println!(
                "  {:<42} {:>6.2} s  (search {:>5.2} s, latency curve {:>5.2} s)  units {}",
                tier.name,
                t_tier,
                (t_tier - t_curve).max(0.0),
                t_curve,
                units.join(" ")
            );
        }
    }
}
