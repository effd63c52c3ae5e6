//! Benchmark: simulated requests per second on an M/M/c queue (c = 128 slots behind one shared
//! FIFO queue, utilization 0.9), one replication on one thread, through both implementations:
//! the general event engine (what every server model runs on) and the fast FIFO recursion that
//! `sim::simulate` picks for this shape.
//!
//! A plain `harness = false` main rather than criterion: the figure of merit is one long run's
//! rate, and this keeps the dev-dependency list unchanged. Run it with
//!
//! ```text
//! cargo bench --bench sim_mmc                           # 10^6 requests, best of 5, both
//! cargo bench --bench sim_mmc -- 100000000 1 general    # 10^8 once (peak RSS: /usr/bin/time -v)
//! ```
//!
//! Arguments: requests (10^6), repeats (5), and `general`, `fast` or `both` (both). It prints a
//! line per measurement and the best rate of each engine last, as `general_req_per_s R` and
//! `fast_req_per_s R`, which `benches/sim_vs_simpy.sh` reads.

use std::hint::black_box;
use std::time::Instant;

use tco_sim::sim::{
    self, Dispatch, Engine, FleetSpec, PoissonArrivals, RunSpec, ServerModel, ServiceDist,
};

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with("--"));
    let n: u64 = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let repeats: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(5);
    let engines: Vec<(Engine, &str)> = match args.next().as_deref() {
        Some("general") => vec![(Engine::General, "general")],
        Some("fast") => vec![(Engine::Auto, "fast")],
        _ => vec![(Engine::General, "general"), (Engine::Auto, "fast")],
    };
    let c = 128u32;
    let mean_s = 0.001;
    let rate = 0.9 * f64::from(c) / mean_s;
    let fleet = FleetSpec {
        units: 1,
        server: ServerModel::Slots {
            slots: c,
            service: ServiceDist::Exponential { mean_s },
        },
        dispatch: Dispatch::SharedQueue,
        queue_cap: None,
        timeout_s: None,
    };
    let run = RunSpec {
        warmup_s: 0.0,
        replications: 1,
        seed: 1,
        quantiles: vec![],
    };
    // One replication runs on one rayon worker; a 1-thread pool keeps it that way.
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(1).build() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("sim_mmc: cannot build a thread pool: {e}");
            std::process::exit(1);
        }
    };
    let mut best = vec![0.0f64; engines.len()];
    // Interleave the engines so that load from elsewhere on the machine hits both alike.
    for _ in 0..repeats.max(1) {
        for (i, (engine, name)) in engines.iter().enumerate() {
            let t0 = Instant::now();
            let report = pool.install(|| {
                sim::simulate_with(&fleet, &run, *engine, |rep| {
                    PoissonArrivals::new(1, rep, rate, n)
                })
            });
            let secs = t0.elapsed().as_secs_f64();
            match report {
                Ok(r) => {
                    black_box(&r);
                    let per_s = n as f64 / secs;
                    best[i] = best[i].max(per_s);
                    println!(
                        "tco-sim {name:<7}: {n} requests in {secs:.3} s = {per_s:.0} req/s (p99 {:.6} s, util {:.4})",
                        r.latency.p99.value_s, r.utilization.mean_utilization
                    );
                }
                Err(e) => {
                    eprintln!("sim_mmc: {e}");
                    std::process::exit(1);
                }
            }
        }
    }
    for ((_, name), b) in engines.iter().zip(best) {
        println!("{name}_req_per_s {b:.0}");
    }
}
