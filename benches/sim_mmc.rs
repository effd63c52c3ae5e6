//! Benchmark: simulated requests per second of the engine on an M/M/c queue (c = 128 slots behind
//! one shared FIFO queue, utilization 0.9), one replication on one thread.
//!
//! A plain `harness = false` main rather than criterion: the figure of merit is one long run's
//! rate, and this keeps the dev-dependency list unchanged. Run it with
//!
//! ```text
//! cargo bench --bench sim_mmc                 # 10^6 requests, best of 5
//! cargo bench --bench sim_mmc -- 100000000 1  # 10^8 requests once (for peak RSS: /usr/bin/time -v)
//! ```
//!
//! It prints one line `tco-sim engine: N requests in T s = R req/s` per measurement and the best
//! rate last as `rate_req_per_s R`, which `benches/sim_vs_simpy.sh` reads.

use std::hint::black_box;
use std::time::Instant;

use tco_sim::sim::{self, Dispatch, FleetSpec, PoissonArrivals, RunSpec, ServerModel, ServiceDist};

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with("--"));
    let n: u64 = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let repeats: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(5);
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
    };
    // One replication runs on one rayon worker; pin the pool to one thread so nothing else runs.
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(1).build() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("sim_mmc: cannot build a thread pool: {e}");
            std::process::exit(1);
        }
    };
    let mut best = 0.0f64;
    for _ in 0..repeats.max(1) {
        let t0 = Instant::now();
        let report = pool
            .install(|| sim::simulate(&fleet, &run, |rep| PoissonArrivals::new(1, rep, rate, n)));
        let secs = t0.elapsed().as_secs_f64();
        match report {
            Ok(r) => {
                black_box(&r);
                let per_s = n as f64 / secs;
                best = best.max(per_s);
                println!(
                    "tco-sim engine: {n} requests in {secs:.3} s = {per_s:.0} req/s (p99 {:.6} s, util {:.4}, Little err {:.2e})",
                    r.latency.p99.value_s, r.utilization.mean_utilization, r.little.relative_error
                );
            }
            Err(e) => {
                eprintln!("sim_mmc: {e}");
                std::process::exit(1);
            }
        }
    }
    println!("rate_req_per_s {best:.0}");
}
