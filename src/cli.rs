//! The command line, as typed (clap derive only; `app` turns it into work). Glue, the last
//! stage: nothing below `app` sees a clap type.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Where to serve an ML model and what it will cost: simulate traffic through hardware tiers,
/// plan the fleet that meets a latency contract, and compare five-year costs on-prem and in the
/// cloud.
#[derive(Debug, Parser)]
#[command(
    name = "tco-sim",
    version,
    args_conflicts_with_subcommands = true,
    after_help = "Run a scenario:   tco-sim scenarios/resnet50-image-api.toml\nStart your own:   tco-sim init my-scenario.toml"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
    /// `tco-sim <scenario.toml>` is `tco-sim run <scenario.toml>` (the default command).
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Args, Clone)]
pub struct GlobalArgs {
    /// Seed of every random stream (overrides the scenario's `seed`).
    #[arg(long, global = true)]
    pub seed: Option<u64>,
    /// Worker threads for replications and tiers (default: all cores). Results do not depend on it.
    #[arg(long, global = true)]
    pub threads: Option<usize>,
    /// Print nothing but errors (and the JSON with --format json).
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// What to print on stdout.
    #[arg(long, global = true, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a scenario: plan every tier, cost every option, print the summary, write the reports.
    Run(RunArgs),
    /// Simulate each tier's design traffic over a range of fleet sizes and print the latency table.
    Simulate(SimulateArgs),
    /// Check scenarios and hardware profiles; write nothing. Exit 0 if all are valid, 2 if not.
    Validate {
        /// Scenario or profile files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// List the shipped and local hardware profiles, or show one with every source and date.
    Profiles {
        /// A profile to show in full.
        name: Option<String>,
        /// A folder of local profiles (default: ./hardware-profiles if it exists).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Measure this machine's CPU (GEMM, memory bandwidth) and write a hardware profile.
    Calibrate(CalibrateArgs),
    /// Predict the shipped table of published benchmark results (MLPerf, AWS Neuron) with the
    /// planner's own functions and print each error and the held-out summary.
    Accuracy {
        /// Also re-run the fit of the profile constants the "fit" rows set, and print them.
        #[arg(long)]
        fit: bool,
        /// Print only the held-out summary as the Markdown tables README.md embeds (between its
        /// `accuracy-summary` markers), instead of the table or JSON.
        #[arg(long, conflicts_with = "fit")]
        markdown: bool,
    },
    /// Run a sweep file's grid of scenarios (or one shard of it) into Parquet; `sweep merge`
    /// joins the shards.
    Sweep(crate::sweep::SweepArgs),
    /// Write a commented starter scenario that runs as written.
    Init {
        /// Where to write it.
        #[arg(default_value = "scenario.toml")]
        path: PathBuf,
        /// Replace the file if it exists.
        #[arg(long)]
        force: bool,
    },
    /// Print a shell completion script.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Args, Clone, Default)]
pub struct RunArgs {
    /// The scenario file.
    pub scenario: Option<PathBuf>,
    /// Output folder (default: reports/STEM/, STEM being the scenario file name without .toml).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Which files to write, comma-separated: pdf, svg, png, csv, json, xlsx (default: all).
    #[arg(long, value_delimiter = ',', value_enum)]
    pub report: Vec<ReportFormat>,
    /// Write no files; print the summary only.
    #[arg(long, conflicts_with = "report")]
    pub no_report: bool,
    /// Replications per simulated fleet (overrides simulation.replications).
    #[arg(long)]
    pub replications: Option<u32>,
    /// Size fleets with the analytic utilization bound only (no simulation).
    #[arg(long)]
    pub analytic: bool,
    /// Monte Carlo samples of the uncertainty analysis (Latin hypercube over every uncertain
    /// input).
    #[arg(long, default_value_t = crate::uncertainty::DEFAULT_SAMPLES, value_name = "N")]
    pub samples: u32,
    /// Skip the uncertainty analysis (tornado, flip points, Monte Carlo).
    #[arg(long)]
    pub no_uncertainty: bool,
    /// Paper size of report.pdf.
    #[arg(long, value_enum, default_value_t = PaperSize::A4)]
    pub paper: PaperSize,
}

/// Paper size of the PDF report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum PaperSize {
    /// ISO A4 (210 × 297 mm).
    #[default]
    A4,
    /// US Letter (8.5 × 11 in).
    Letter,
}

#[derive(Debug, Args, Clone)]
pub struct SimulateArgs {
    /// The scenario file.
    pub scenario: PathBuf,
    /// Year of the horizon whose design traffic is simulated.
    #[arg(long, default_value_t = 1)]
    pub year: u32,
    /// Fleet sizes to simulate, comma-separated (default: six sizes from the smallest fleet that
    /// can carry the design traffic at all).
    #[arg(long, value_delimiter = ',')]
    pub units: Vec<u32>,
    /// Replications per fleet size (overrides simulation.replications).
    #[arg(long)]
    pub replications: Option<u32>,
    /// Closed-loop load instead of the design traffic: keep C requests in flight (each client
    /// sends its next request when its last one completes, after --think-ms) for
    /// simulation.window_s seconds. Needs --units.
    #[arg(long, value_name = "C", requires = "units")]
    pub concurrency: Option<u32>,
    /// Closed loop: mean think time between a response and the client's next request, in ms
    /// (default 0).
    #[arg(long, value_name = "MS", requires = "concurrency")]
    pub think_ms: Option<f64>,
    /// Closed loop: how think times are drawn (default exponential; ignored without --think-ms).
    #[arg(long, value_enum, requires = "think_ms", default_value_t = ThinkKind::Exponential)]
    pub think: ThinkKind,
    /// Also write one CSV row per measured request served (tier, units, replication, arrival,
    /// TTFT, TPOT, end-to-end in s, tokens in and out) to FILE.
    #[arg(long, value_name = "FILE")]
    pub requests_csv: Option<PathBuf>,
}

/// How a closed-loop client's think time is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ThinkKind {
    /// Exponential with mean --think-ms.
    Exponential,
    /// Always --think-ms.
    Fixed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, ValueEnum)]
pub enum ReportFormat {
    Pdf,
    Svg,
    Png,
    Csv,
    Json,
    /// report.xlsx: assumptions, cash flows as live formulas, summary.
    Xlsx,
}

/// `tco-sim calibrate` options (`app` turns them into [`crate::calibrate::Options`]).
#[derive(Debug, Args, Clone, Default)]
pub struct CalibrateArgs {
    /// Where to write the profile (a temporary file, then renamed over it).
    #[arg(long, short, value_name = "PATH", default_value = "local.toml")]
    pub out: PathBuf,

    /// Keep this profile's prices, power, memory size and description (a shipped profile name
    /// or a path) and replace its performance numbers with the measured ones.
    #[arg(long, value_name = "PROFILE")]
    pub base: Option<String>,

    /// A short run (under 10 s): fewer shapes and trials.
    #[arg(long, conflicts_with = "duration")]
    pub quick: bool,

    /// Spend about this long on the timed trials (default 24; set-up comes on top).
    #[arg(long, value_name = "SECONDS")]
    pub duration: Option<f64>,

    /// Profile name (default: the file stem of --out).
    #[arg(long)]
    pub name: Option<String>,

    /// Theoretical memory bandwidth of this machine [GB/s], e.g. channels × MT/s × 8 B; the
    /// profile's memory efficiency becomes measured triad / this.
    #[arg(long, value_name = "GB/s")]
    pub memory_bandwidth_gbps: Option<f64>,

    /// On-prem purchase price of this machine in USD (needed without --base).
    #[arg(long, value_name = "USD")]
    pub purchase_usd: Option<f64>,

    /// Cloud on-demand price of this instance in USD per hour (needed without --base, or --purchase-usd).
    #[arg(long, value_name = "USD")]
    pub usd_per_hour: Option<f64>,

    /// Idle power of the whole machine in watts (without --base; default: an estimate).
    #[arg(long, value_name = "W")]
    pub idle_w: Option<f64>,

    /// Full-load power of the whole machine in watts (without --base; default: an estimate).
    #[arg(long, value_name = "W")]
    pub peak_w: Option<f64>,

    /// Test only: tiny shapes that run every kernel through the real path in a debug build.
    /// The figures are cache-resident and mean nothing.
    #[arg(long, hide = true)]
    pub smoke: bool,

    /// Fit --base's efficiencies and overhead to measured results instead of measuring this
    /// machine: an MLPerf mlperf_log_summary.txt, a vLLM benchmark_serving JSON, or a CSV
    /// (docs/calibrate.md). Repeat for more files; needs --base and --scenario.
    #[arg(long, value_name = "FILE", requires_all = ["base", "scenario"], conflicts_with_all = ["quick", "duration", "smoke"])]
    pub from: Vec<PathBuf>,

    /// With --from: the scenario whose workload (and tier on --base, if any) was measured.
    #[arg(long, value_name = "SCENARIO.toml", requires = "from")]
    pub scenario: Option<PathBuf>,

    /// With --from: fit an MLPerf run that LoadGen judged INVALID.
    #[arg(long, requires = "from")]
    pub allow_invalid: bool,
}
