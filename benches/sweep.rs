//! Sweep throughput (issue 14): points per second of a 48-point grid of `scenarios/starter.toml`
//! at 1 and 2 worker threads, in one run, every fleet simulated; and a check that both thread
//! counts wrote the same rows. A plain timing loop, no bench framework.
//!
//!     cargo bench --bench sweep                 # simulated, several minutes on two cores
//!     SWEEP_BENCH_ANALYTIC=1 cargo bench --bench sweep

use std::path::Path;
use std::time::Instant;

use tco_sim::sweep::{self, Manifest, RunOptions, Shard};

/// The same 48 points as `ci/slurm-sweep.sh`: 4 traffic levels × 3 electricity prices × 4
/// growth rates.
const GRID: &str = r#"[grid]
"traffic.peak_rps" = [300, 400, 600, 800]
"costs.electricity_usd_per_kwh" = [0.06, 0.12, 0.18]
"traffic.growth_per_year" = [0.1, 0.2, 0.3, 0.4]
"#;

fn main() -> anyhow::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = tempfile::tempdir()?;
    let file = work.path().join("bench-sweep.toml");
    let scenario = root.join("scenarios/starter.toml");
    std::fs::write(
        &file,
        format!("scenario = {:?}\n{GRID}", scenario.display().to_string()),
    )?;
    let analytic = std::env::var_os("SWEEP_BENCH_ANALYTIC").is_some();
    let manifest = Manifest::load(&file, None, analytic)?;
    let method = if analytic { "analytic" } else { "simulated" };
    println!(
        "sweep: {} points of scenarios/starter.toml, {method}, {} CPUs",
        manifest.points.len(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let mut csvs = Vec::new();
    for threads in [1, 2] {
        let out = work.path().join(format!("threads-{threads}"));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()?;
        let start = Instant::now();
        let summary = pool.install(|| {
            sweep::execute(
                &manifest,
                &RunOptions {
                    out: out.clone(),
                    shard: Shard::WHOLE,
                    progress: false,
                },
            )
        })?;
        let s = start.elapsed().as_secs_f64();
        println!(
            "  {threads} thread{}: {:>7.1} s, {:>6.3} points/s ({} rows)",
            if threads == 1 { " " } else { "s" },
            s,
            summary.points_run as f64 / s,
            summary.rows
        );
        csvs.push(std::fs::read(out.join("results.csv"))?);
    }
    anyhow::ensure!(csvs[0] == csvs[1], "1 and 2 threads wrote different rows");
    println!("  same rows at 1 and 2 threads: yes");
    Ok(())
}
