//! `cargo bench --bench calibrate -- [calibrate options]`: runs `tco-sim calibrate` from an
//! optimised build while the CLI does not yet have the subcommand wired in, so that
//! `benches/calibrate_vs_openblas.sh` can compare it with OpenBLAS and a C STREAM.

use clap::Parser;

#[derive(Parser)]
#[command(name = "calibrate", about = "tco-sim calibrate (bench entry point)")]
struct Cli {
    #[command(flatten)]
    args: tco_sim::calibrate::CalibrateArgs,
    /// Ignored: cargo bench passes it to every bench target.
    #[arg(long, hide = true)]
    bench: bool,
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = tco_sim::calibrate::run(&cli.args) {
        eprintln!("calibrate: error: {e:#}");
        std::process::exit(2);
    }
}
