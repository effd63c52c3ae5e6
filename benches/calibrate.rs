//! `cargo bench --bench calibrate -- [calibrate options]`: runs `tco-sim calibrate` from an
//! optimised build while the CLI does not yet have the subcommand wired in, so that
//! `benches/calibrate_vs_openblas.sh` can compare it with OpenBLAS and a C STREAM.
//!
//! `--kernel sgemm|triad` instead measures that one kernel (sgemm at n×n×n, triad over arrays
//! of `--elems` f32) on `--threads` pinned threads and prints one line,
//! `median=<G/s> on_cpu_rate=<G/s or nan> on_cpu=<fraction> spread=<fraction>`, so the
//! script can alternate it with the library it is compared against.

use std::time::Duration;

use clap::Parser;
use tco_sim::calibrate::measure::{Budget, Measured};
use tco_sim::calibrate::suite;

#[derive(Parser)]
#[command(name = "calibrate", about = "tco-sim calibrate (bench entry point)")]
struct Cli {
    #[command(flatten)]
    args: tco_sim::cli::CalibrateArgs,
    /// Measure one kernel only: sgemm or triad.
    #[arg(long)]
    kernel: Option<String>,
    /// sgemm size n (n×n times n×n).
    #[arg(long, default_value_t = 2048)]
    n: usize,
    /// triad elements per array (all threads together).
    #[arg(long, default_value_t = 1 << 28)]
    elems: usize,
    /// Threads for --kernel (default: every CPU we may use).
    #[arg(long)]
    threads: Option<usize>,
    /// Seconds of trials for --kernel.
    #[arg(long, default_value_t = 4.0)]
    seconds: f64,
    /// Ignored: cargo bench passes it to every bench target.
    #[arg(long, hide = true)]
    bench: bool,
}

fn one_kernel(cli: &Cli, kernel: &str) -> Result<String, String> {
    let ids = core_affinity::get_core_ids().unwrap_or_default();
    let all = ids.len().max(1);
    let threads = cli.threads.unwrap_or(all).clamp(1, all);
    let cpus: Vec<_> = (0..threads).map(|t| ids.get(t).copied()).collect();
    let budget = Budget {
        time: Duration::from_secs_f64(cli.seconds),
        min_trials: 5,
        max_trials: 200,
    };
    let (m, extra): (Measured, String) = match kernel {
        "sgemm" => (
            suite::measure_sgemm(cli.n, cli.n, cli.n, &cpus, budget)?,
            String::new(),
        ),
        "triad" => {
            let (m, nt) = suite::measure_triad(cli.elems, &cpus, budget)?;
            (m, format!(" nt={nt}"))
        }
        other => return Err(format!("unknown --kernel {other}; valid: sgemm, triad")),
    };
    Ok(format!(
        "median={:.2} on_cpu_rate={:.2} on_cpu={:.2} spread={:.2}{extra}",
        m.stats.median / 1e9,
        m.on_cpu_rate.map_or(f64::NAN, |r| r / 1e9),
        m.on_cpu.unwrap_or(f64::NAN),
        m.stats.spread
    ))
}

fn main() {
    let cli = Cli::parse();
    let result = match &cli.kernel {
        Some(k) => one_kernel(&cli, k)
            .map(|line| println!("{line}"))
            .map_err(anyhow::Error::msg),
        None => tco_sim::app::calibrate(&cli.args),
    };
    if let Err(e) = result {
        eprintln!("calibrate: error: {e:#}");
        std::process::exit(2);
    }
}
