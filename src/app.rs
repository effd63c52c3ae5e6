//! The glue of the binary, the last stage: one function per subcommand, each reading as the
//! pipeline it runs — load and check the input, call the library stages, print the answer and
//! write the files. This is the only module (with `report`) that prints or writes files; the
//! tables themselves are rendered in `report`.

mod progress;
mod reports;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::calibrate;
use crate::capacity::search;
use crate::cli::{
    CalibrateArgs, Cli, Command, Format, GlobalArgs, ReportFormat, RunArgs, SimulateArgs,
};
use crate::hardware::{Profile, ProfileSearch};
use crate::input::{InputError, SourceFile};
use crate::report;
use crate::results::{self, Method};
use crate::scenario::{self, Scenario};
use progress::{Progress, Work};
pub use reports::write_reports;

/// The starter scenario `tco-sim init` writes (a shipped scenario, so it is tested like one).
pub const STARTER_SCENARIO: &str = include_str!("../scenarios/starter.toml");

/// The most Monte Carlo samples `--samples` takes: a million cost samples run in minutes; more
/// only refine a percentile that the input ranges themselves do not pin down that finely.
const MAX_SAMPLES: u32 = 1_000_000;

/// Run the command line.
pub fn run(cli: Cli) -> Result<()> {
    if let Some(n) = cli.global.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build_global()
            .context("setting up the worker threads")?;
    }
    let global = cli.global;
    match cli.command {
        None => run_scenario(&cli.run, &global),
        Some(Command::Run(args)) => run_scenario(&args, &global),
        Some(Command::Simulate(args)) => simulate(&args, &global),
        Some(Command::Validate { files }) => validate(&files, &global),
        Some(Command::Profiles { name, dir }) => profiles(name.as_deref(), dir, &global),
        Some(Command::Init { path, force }) => init(&path, force, &global),
        Some(Command::Calibrate(args)) => calibrate(&args),
        Some(Command::Accuracy { fit, markdown }) => accuracy(fit, markdown, &global),
        Some(Command::Sweep(args)) => crate::sweep::run(&args, &global),
        Some(Command::Completions { shell }) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "tco-sim", &mut std::io::stdout());
            Ok(())
        }
    }
}

/// `tco-sim accuracy [--fit | --markdown]`: the shipped table of published results against the
/// planner.
fn accuracy(fit: bool, markdown: bool, global: &GlobalArgs) -> Result<()> {
    let table = crate::accuracy::load(crate::accuracy::TABLE)?;
    let report = crate::accuracy::run(&table, fit)?;
    if markdown {
        crate::output::print(&crate::accuracy::summary_markdown(&report))?;
        return Ok(());
    }
    match global.format {
        Format::Json => crate::output::print_json(&report)?,
        Format::Table if !global.quiet => crate::output::print(&crate::accuracy::render(&report))?,
        Format::Table => {}
    }
    Ok(())
}

/// Load a scenario, apply the command-line overrides of its seed and replications, and check
/// everything a run builds from it before any work (every tier's server model as the simulator
/// will see it), so `validate` and `run` reject the same inputs.
fn load_scenario(path: &Path, global: &GlobalArgs, replications: Option<u32>) -> Result<Scenario> {
    if let Some(r) = replications.filter(|r| !(1..=search::MAX_REPLICATIONS).contains(r)) {
        return Err(InputError::new(format!("--replications {r} is not valid"))
            .with_help(format!(
                "valid: 1 to {} replications per fleet size (as simulation.replications)",
                search::MAX_REPLICATIONS
            ))
            .into());
    }
    let mut s = Scenario::load(path)?;
    if let Some(seed) = global.seed {
        s.seed = seed;
    }
    if let Some(r) = replications {
        s.simulation.replications = r;
    }
    check_models(&s)?;
    Ok(s)
}

/// Every tier's server model and the run settings, checked by the simulator's own rules, with a
/// failure located at the scenario and the tier's key.
fn check_models(s: &Scenario) -> Result<(), InputError> {
    let Err((tier, e)) = search::check_tiers(s) else {
        return Ok(());
    };
    let i = s.tiers.iter().position(|t| t.name == tier).unwrap_or(0);
    // The simulator names its own fields; say which scenario key sets each one.
    let (key, help) = match &e {
        crate::sim::SimError::BadNumber { field, .. } if field == "server.window_s" => (
            format!("tier[{i}].window_ms"),
            format!(
                "valid: a batching window from 0 to {} ms",
                crate::format::grouped(crate::sim::MAX_DURATION_S * 1e3, 0)
            ),
        ),
        crate::sim::SimError::BadNumber { field, .. } if field == "run.warmup_s" => (
            "simulation.warmup_s".to_string(),
            format!(
                "valid: seconds from 0 to {}",
                crate::format::grouped(crate::sim::MAX_DURATION_S, 0)
            ),
        ),
        _ => (
            format!("tier[{i}]"),
            "choose a profile, precision or batching setting the simulator can model".to_string(),
        ),
    };
    let mut err = InputError::new(format!("tier `{tier}`: {e}"))
        .in_file(s.file.clone())
        .with_help(help);
    err.field = Some(key);
    Err(err)
}

/// Whether a long command draws its progress bar: not when quiet, nor under JSON output.
fn shows_progress(global: &GlobalArgs) -> bool {
    !global.quiet && global.format == Format::Table
}

fn run_scenario(args: &RunArgs, global: &GlobalArgs) -> Result<()> {
    let Some(path) = &args.scenario else {
        return Err(InputError::new("no scenario file given")
            .with_help(
                "run `tco-sim <scenario.toml>`, or `tco-sim init` to write a starter scenario",
            )
            .into());
    };
    if !(1..=MAX_SAMPLES).contains(&args.samples) {
        return Err(
            InputError::new(format!("--samples {} is not valid", args.samples))
                .with_help(format!(
                    "valid: 1 to {} Monte Carlo samples (or --no-uncertainty to skip the analysis)",
                    crate::format::count(MAX_SAMPLES)
                ))
                .into(),
        );
    }
    let scenario = load_scenario(path, global, args.replications)?;
    // Output-folder faults are found before the work, not after it.
    let out = (!args.no_report).then(|| {
        args.out
            .clone()
            .unwrap_or_else(|| scenario::default_out_dir(path))
    });
    if let Some(out) = &out {
        reports::prepare_out_dir(out)?;
        reports::exit_cleanly_on_interrupt();
    }
    let method = if args.analytic {
        Method::Analytic
    } else {
        Method::Simulated {
            replications: scenario.simulation.replications,
        }
    };
    let bar = Progress::new(shows_progress(global), Work::Planning);
    let mut results = results::plan(&scenario, method, &|done, total| bar.tick(done, total))?;
    bar.finish();
    results::attach_evidence(&mut results)?;
    if !args.no_uncertainty {
        crate::uncertainty::attach(&scenario, &mut results, method, args.samples);
    }
    let written = if let Some(out) = &out {
        let formats: BTreeSet<ReportFormat> = if args.report.is_empty() {
            [
                ReportFormat::Pdf,
                ReportFormat::Svg,
                ReportFormat::Png,
                ReportFormat::Csv,
                ReportFormat::Json,
                ReportFormat::Xlsx,
            ]
            .into_iter()
            .collect()
        } else {
            args.report.iter().copied().collect()
        };
        let paper = match args.paper {
            crate::cli::PaperSize::A4 => crate::report::pdf::Paper::A4,
            crate::cli::PaperSize::Letter => crate::report::pdf::Paper::Letter,
        };
        write_reports(&results, out, &formats, paper)?
    } else {
        vec![]
    };
    let mut stdout = std::io::stdout().lock();
    match global.format {
        Format::Json => stdout.write_all(report::data::json(&results).as_bytes())?,
        Format::Table if !global.quiet => {
            stdout.write_all(report::table::render(&results).as_bytes())?;
            for p in &written {
                writeln!(stdout, "wrote {}", p.display())?;
            }
        }
        Format::Table => {}
    }
    Ok(())
}

fn simulate(args: &SimulateArgs, global: &GlobalArgs) -> Result<()> {
    if args.units.contains(&0) {
        return Err(InputError::new("--units 0: a fleet has at least one unit")
            .with_help("valid: fleet sizes of 1 or more, comma-separated, e.g. --units 2,4,8")
            .into());
    }
    let scenario = load_scenario(&args.scenario, global, args.replications)?;
    if args.year == 0 || args.year > scenario.horizon_years {
        return Err(
            InputError::new(format!("--year {} is outside the horizon", args.year))
                .with_help(format!("valid: 1 to {}", scenario.horizon_years))
                .into(),
        );
    }
    let bar = Progress::new(shows_progress(global), Work::Planning);
    let tick = |done, total| bar.tick(done, total);
    let record = args.requests_csv.is_some();
    let sweep = match args.concurrency {
        Some(c) => {
            search::sweep_closed_with(&scenario, &args.units, c, think_time(args)?, &tick, record)?
        }
        None => search::sweep_sizes_with(&scenario, args.year, &args.units, &tick, record)?,
    };
    bar.finish();
    if let Some(path) = &args.requests_csv {
        crate::output::write_atomic(path, report::simulate::requests_csv(&sweep).as_bytes())
            .map_err(|e| {
                InputError::new(format!("--requests-csv {}: {e}", path.display()))
                    .with_help("give a path in a directory that exists and can be written")
            })?;
        if !global.quiet && global.format == Format::Table {
            eprintln!("wrote {}", path.display());
        }
    }
    match global.format {
        Format::Json => crate::output::print_json(&sweep.runs)?,
        Format::Table if !global.quiet => {
            crate::output::print(&report::simulate::render(&scenario, &sweep))?
        }
        Format::Table => {}
    }
    Ok(())
}

/// The closed-loop think time of `simulate --think-ms`, checked.
fn think_time(args: &SimulateArgs) -> Result<crate::sim::ThinkTime> {
    if args.concurrency == Some(0) {
        return Err(
            InputError::new("--concurrency 0: a closed loop needs a request in flight")
                .with_help("valid: 1 or more requests in flight, e.g. --concurrency 64")
                .into(),
        );
    }
    let Some(ms) = args.think_ms else {
        return Ok(crate::sim::ThinkTime::None);
    };
    if !(ms.is_finite() && (0.0..=crate::sim::MAX_DURATION_S * 1e3).contains(&ms)) {
        return Err(InputError::new(format!("--think-ms {ms} is not valid"))
            .with_help("valid: milliseconds from 0 to 1e9")
            .into());
    }
    let s = ms * 1e-3;
    Ok(match args.think {
        _ if ms == 0.0 => crate::sim::ThinkTime::None,
        crate::cli::ThinkKind::Exponential => crate::sim::ThinkTime::Exponential { mean_s: s },
        crate::cli::ThinkKind::Fixed => crate::sim::ThinkTime::Fixed { s },
    })
}

/// Is this TOML file a hardware profile (rather than a scenario)?
fn is_profile(text: &str) -> bool {
    text.lines()
        .any(|l| l.trim_start().starts_with("chip_model"))
}

fn validate(files: &[PathBuf], global: &GlobalArgs) -> Result<()> {
    let mut bad = 0;
    for f in files {
        let outcome = SourceFile::read(f).and_then(|src| {
            if is_profile(&src.text) {
                Profile::from_source(&src, None).map(|p| {
                    format!(
                        "profile `{}`: {} numbers, every one cited and dated",
                        p.name,
                        p.cited_numbers().len()
                    )
                })
            } else {
                let s = Scenario::from_source(&src)?;
                check_models(&s)?;
                Ok(format!(
                    "scenario `{}`: {} tiers, {} years",
                    s.name,
                    s.tiers.len(),
                    s.horizon_years
                ))
            }
        });
        match outcome {
            Ok(what) if !global.quiet => {
                crate::output::print(&format!("ok: {}: {what}\n", f.display()))?
            }
            Ok(_) => {}
            Err(e) => {
                bad += 1;
                eprintln!("tco-sim: error: {e}");
            }
        }
    }
    if bad > 0 {
        return Err(InputError::new(format!("{bad} of {} files are invalid", files.len())).into());
    }
    Ok(())
}

fn profiles(name: Option<&str>, dir: Option<PathBuf>, global: &GlobalArgs) -> Result<()> {
    let dir = dir.or_else(|| {
        let d = PathBuf::from("hardware-profiles");
        d.is_dir().then_some(d)
    });
    let search = ProfileSearch {
        dirs: dir.into_iter().collect(),
    };
    if let Some(n) = name {
        let p = search.load(n, Path::new("."))?;
        match global.format {
            Format::Json => crate::output::print_json(&p)?,
            Format::Table => crate::output::print(&report::profiles::detail(&p))?,
        }
        return Ok(());
    }
    let mut loaded = Vec::new();
    for n in search.available() {
        loaded.push(search.load(&n, Path::new("."))?);
    }
    match global.format {
        Format::Json => crate::output::print_json(&loaded)?,
        Format::Table => crate::output::print(&report::profiles::list(&loaded))?,
    }
    Ok(())
}

/// `tco-sim calibrate`: measure this machine, write the profile atomically, print the summary.
pub fn calibrate(args: &CalibrateArgs) -> Result<()> {
    let name = args.name.clone().unwrap_or_else(|| {
        args.out
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "local".into())
    });
    if !args.from.is_empty() {
        return calibrate_from(args, name);
    }
    let effort = match (args.smoke, args.quick, args.duration) {
        (true, _, _) => calibrate::Effort::Smoke,
        (false, true, _) => calibrate::Effort::Quick,
        (false, false, Some(s)) => calibrate::Effort::Timed(s),
        (false, false, None) => calibrate::Effort::default(),
    };
    let options = calibrate::Options {
        name,
        base: args.base.clone(),
        effort,
        memory_bandwidth_gbps: args.memory_bandwidth_gbps,
        purchase_usd: args.purchase_usd,
        usd_per_hour: args.usd_per_hour,
        idle_w: args.idle_w,
        peak_w: args.peak_w,
    };
    let bar = Progress::new(true, Work::Calibrating);
    let done = calibrate::run(&options, &|step| bar.calibration(step));
    bar.finish();
    let done = done?;
    crate::output::write_atomic(&args.out, done.profile_toml.as_bytes())
        .with_context(|| format!("writing {}", args.out.display()))?;
    crate::output::print(&calibrate::summary(
        &done.calibration,
        &done.derived,
        &args.out,
    ))?;
    Ok(())
}

/// `tco-sim calibrate --from`: fit the base profile to measurements, write it, print the table.
fn calibrate_from(args: &CalibrateArgs, name: String) -> Result<()> {
    let opts = calibrate::fit::FromOptions {
        from: args.from.clone(),
        base: args.base.clone().unwrap_or_default(),
        scenario: args.scenario.clone().unwrap_or_default(),
        name,
        allow_invalid: args.allow_invalid,
    };
    let done = calibrate::fit::run(&opts)?;
    crate::output::write_atomic(&args.out, done.profile_toml.as_bytes())
        .with_context(|| format!("writing {}", args.out.display()))?;
    crate::output::print(&calibrate::fit::summary(&done, &args.out))?;
    Ok(())
}

fn init(path: &Path, force: bool, global: &GlobalArgs) -> Result<()> {
    if path.exists() && !force {
        return Err(
            InputError::new(format!("{} already exists", path.display()))
                .with_help("choose another path, or pass --force to replace it")
                .into(),
        );
    }
    crate::output::write_atomic(path, STARTER_SCENARIO.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    if !global.quiet {
        crate::output::print(&format!(
            "wrote {}; run it with: tco-sim {}\n",
            path.display(),
            path.display()
        ))?;
    }
    Ok(())
}
