//! One function per subcommand, each reading as the pipeline it runs. This is the only module
//! (with `report`) that prints or writes files.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use comfy_table::{ContentArrangement, Table, presets};

use crate::cli::{Cli, Command, Format, GlobalArgs, ReportFormat, RunArgs, SimulateArgs};
use crate::hardware::{DeploymentOption, Precision, Profile, ProfileSearch};
use crate::input::{InputError, SourceFile};
use crate::report;
use crate::results::{self, RunResults};
use crate::scenario::{self, Scenario};

/// The starter scenario `tco-sim init` writes (a shipped scenario, so it is tested like one).
pub const STARTER_SCENARIO: &str = include_str!("../scenarios/starter.toml");

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
        Some(Command::Calibrate(args)) => crate::calibrate::run(&args),
        Some(Command::Sweep(args)) => crate::sweep::run(&args, &global),
        Some(Command::Completions { shell }) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "tco-sim", &mut std::io::stdout());
            Ok(())
        }
    }
}

/// Load a scenario and apply command-line overrides.
fn load_scenario(path: &Path, global: &GlobalArgs) -> Result<Scenario> {
    let mut s = Scenario::load(path)?;
    if let Some(seed) = global.seed {
        s.seed = seed;
    }
    Ok(s)
}

/// Plan and cost a scenario with the analytic utilization bound only (no simulation).
pub fn plan(scenario: &Scenario) -> Result<RunResults> {
    let tiers = results::analytic_tiers(scenario)?;
    Ok(results::assemble(
        scenario,
        tiers,
        "analytic (utilization bound)",
    ))
}

/// Plan and cost a scenario, sizing every fleet by simulation: the answer a planner takes to
/// the meeting. `progress` draws a bar on stderr for runs longer than a second.
pub fn plan_simulated(scenario: &Scenario, progress: bool) -> Result<RunResults> {
    let bar = Progress::new(progress);
    let tiers = crate::capacity::search::plan_all(
        scenario,
        scenario.simulation.replications,
        &|done, total| bar.tick(done, total),
    )?;
    bar.finish();
    let method = format!(
        "simulated ({} replications of a {} s design window per fleet size, {})",
        scenario.simulation.replications,
        scenario.simulation.window_s,
        match scenario.simulation.dispatch {
            scenario::DispatchPolicy::SharedQueue => "one shared queue",
            scenario::DispatchPolicy::JoinShortestQueue => "join-shortest-queue balancing",
            scenario::DispatchPolicy::RoundRobin => "round-robin balancing",
            scenario::DispatchPolicy::PowerOfTwo => "power-of-two-choices balancing",
        }
    );
    Ok(results::assemble(scenario, tiers, &method))
}

/// An indicatif bar that stays hidden until the work has taken a second, so quick runs print
/// nothing extra; indicatif draws it only on a terminal.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    start: std::time::Instant,
    shown: std::sync::atomic::AtomicBool,
}

impl Progress {
    fn new(enabled: bool) -> Progress {
        let bar = enabled.then(|| {
            let b = indicatif::ProgressBar::with_draw_target(
                None,
                indicatif::ProgressDrawTarget::hidden(),
            );
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "planning {bar:30} {pos}/{len} tier-years {elapsed}",
            ) {
                b.set_style(style);
            }
            b
        });
        Progress {
            bar,
            start: std::time::Instant::now(),
            shown: std::sync::atomic::AtomicBool::new(false),
        }
    }

    fn tick(&self, done: usize, total: usize) {
        let Some(b) = &self.bar else { return };
        b.set_length(total as u64);
        b.set_position(done as u64);
        if self.start.elapsed().as_secs_f64() > 1.0
            && !self.shown.swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            b.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

fn run_scenario(args: &RunArgs, global: &GlobalArgs) -> Result<()> {
    let Some(path) = &args.scenario else {
        return Err(InputError::new("no scenario file given")
            .with_help(
                "run `tco-sim <scenario.toml>`, or `tco-sim init` to write a starter scenario",
            )
            .into());
    };
    let mut scenario = load_scenario(path, global)?;
    if let Some(r) = args.replications {
        scenario.simulation.replications = r.max(1);
    }
    let results = if args.analytic {
        plan(&scenario)?
    } else {
        plan_simulated(&scenario, !global.quiet && global.format == Format::Table)?
    };
    let written = if args.no_report {
        vec![]
    } else {
        let out = args
            .out
            .clone()
            .unwrap_or_else(|| scenario::default_out_dir(path));
        let formats: BTreeSet<ReportFormat> = if args.report.is_empty() {
            [
                ReportFormat::Pdf,
                ReportFormat::Svg,
                ReportFormat::Png,
                ReportFormat::Csv,
                ReportFormat::Json,
            ]
            .into_iter()
            .collect()
        } else {
            args.report.iter().copied().collect()
        };
        write_reports(&results, &out, &formats)?
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

/// Write the requested report files into `out`; returns their paths, the PDF last.
///
/// Charts are drawn once and serve all three picture formats: the SVG as written, the PNG
/// rendered from the same parsed tree, and the PDF's vector figures.
pub fn write_reports(
    results: &RunResults,
    out: &Path,
    formats: &BTreeSet<ReportFormat>,
) -> Result<Vec<PathBuf>> {
    // Read the report date first, so a bad SOURCE_DATE_EPOCH stops the run before any file.
    let date = if formats.contains(&ReportFormat::Pdf) {
        Some(report::pdf::ReportDate::from_env().context("reading SOURCE_DATE_EPOCH")?)
    } else {
        None
    };
    let mut written = Vec::new();
    let mut put = |name: &str, bytes: &[u8]| -> Result<()> {
        let p = out.join(name);
        report::write_atomic(&p, bytes).with_context(|| format!("writing {}", p.display()))?;
        written.push(p);
        Ok(())
    };
    if formats.contains(&ReportFormat::Json) {
        put("results.json", report::data::json(results).as_bytes())?;
    }
    if formats.contains(&ReportFormat::Csv) {
        put("results.csv", report::data::csv(results).as_bytes())?;
    }
    let pictures = [ReportFormat::Svg, ReportFormat::Png, ReportFormat::Pdf];
    if !pictures.iter().any(|f| formats.contains(f)) {
        return Ok(written);
    }
    let charts = report::charts::render_all(results).context("drawing the charts")?;
    if formats.contains(&ReportFormat::Svg) {
        for c in &charts.charts {
            put(&format!("{}.svg", c.name), c.svg.as_bytes())?;
        }
    }
    if formats.contains(&ReportFormat::Png) {
        let pngs = charts.pngs().context("rendering the charts as PNG")?;
        for (c, png) in charts.charts.iter().zip(&pngs) {
            put(&format!("{}.png", c.name), png)?;
        }
    }
    if let Some(date) = date {
        let pdf = report::pdf::render(results, &charts, &date).context("making the PDF")?;
        put("report.pdf", &pdf)?;
    }
    Ok(written)
}

/// One row of `tco-sim simulate`: a tier at a fleet size on one year's design traffic.
#[derive(serde::Serialize)]
struct SimulateRow {
    tier: String,
    units: u32,
    year: u32,
    design_rps: f64,
    meets_slo: bool,
    report: crate::sim::SimReport,
}

fn simulate(args: &SimulateArgs, global: &GlobalArgs) -> Result<()> {
    use crate::capacity::{search, units_for};
    let mut scenario = load_scenario(&args.scenario, global)?;
    if let Some(r) = args.replications {
        scenario.simulation.replications = r.max(1);
    }
    if args.year == 0 || args.year > scenario.horizon_years {
        return Err(
            InputError::new(format!("--year {} is outside the horizon", args.year))
                .with_help(format!("valid: 1 to {}", scenario.horizon_years))
                .into(),
        );
    }
    let s = &scenario;
    let design = s
        .traffic
        .design_window(args.year, s.simulation.window_s)
        .mean_rps;
    // Every (tier, size) to simulate, decided before any work so the bar knows its length.
    let mut jobs: Vec<(usize, u32)> = Vec::new();
    let mut contexts = Vec::new();
    let mut skipped = Vec::new();
    for (i, tier) in s.tiers.iter().enumerate() {
        let plan = crate::perf::plan(&tier.profile, &s.workload, tier.precision, &tier.batching)?;
        if let Some(why) = crate::capacity::infeasibility(s, &plan) {
            skipped.push(format!(
                "{}: no fleet size meets {}: {why}",
                tier.name,
                s.slo.label()
            ));
            continue;
        }
        let ctx = search::TierContext {
            scenario: s,
            tier,
            tier_index: i,
            server: search::server_model(&plan),
            unit_throughput_rps: plan.unit_throughput_rps(&s.workload),
            plan,
            replications: s.simulation.replications,
            dispatch: search::dispatch(s.simulation.dispatch),
        };
        let sizes: Vec<u32> = if args.units.is_empty() {
            let first = units_for(design, ctx.unit_throughput_rps, 1.0).max(1);
            (first..first + 6).collect()
        } else {
            args.units.iter().copied().filter(|&u| u > 0).collect()
        };
        jobs.extend(sizes.iter().map(|&u| (contexts.len(), u)));
        contexts.push(ctx);
    }
    let bar = Progress::new(!global.quiet && global.format == Format::Table);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let rows: Vec<SimulateRow> = {
        use rayon::prelude::*;
        jobs.par_iter()
            .map(|&(c, units)| {
                let ctx = &contexts[c];
                let e = search::evaluate(ctx, args.year, units)?;
                bar.tick(
                    done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
                    jobs.len(),
                );
                Ok(SimulateRow {
                    tier: ctx.tier.name.clone(),
                    units,
                    year: args.year,
                    design_rps: design,
                    meets_slo: e.meets(&s.slo),
                    report: e.report,
                })
            })
            .collect::<Result<_, crate::sim::SimError>>()?
    };
    bar.finish();
    match global.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&rows)?),
        Format::Table if !global.quiet => {
            print!("{}", simulate_table(s, args.year, design, &rows));
            for n in &skipped {
                println!("note: {n}");
            }
        }
        Format::Table => {}
    }
    Ok(())
}

fn simulate_table(s: &Scenario, year: u32, design: f64, rows: &[SimulateRow]) -> String {
    use crate::report::table::ms;
    let pct = format!("p{}", s.slo.percentile);
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled);
    t.set_header(vec![
        "tier".to_string(),
        "units".into(),
        "load".into(),
        "p50".into(),
        "p90".into(),
        "p95".into(),
        "p99".into(),
        "p99.9".into(),
        format!("{pct} ± 95 % CI"),
        "busy".into(),
        "mean / max queue".into(),
        "Little |L−λW|/λW".into(),
        "dropped".into(),
        "meets SLO".into(),
    ]);
    for r in rows {
        let l = &r.report.latency;
        let slo = l.extra.first().map(|(_, e)| *e);
        let c = &r.report.counts;
        t.add_row(vec![
            r.tier.clone(),
            r.units.to_string(),
            r.report
                .offered_load
                .map_or("–".into(), |x| format!("{:.0} %", x * 100.0)),
            ms(l.p50.value_s),
            ms(l.p90.value_s),
            ms(l.p95.value_s),
            ms(l.p99.value_s),
            ms(l.p999.value_s),
            slo.map_or("–".into(), |e| match e.ci95_half_width_s {
                Some(h) => format!("{} ± {}", ms(e.value_s), ms(h)),
                None => ms(e.value_s),
            }),
            format!("{:.0} %", r.report.utilization.mean_utilization * 100.0),
            format!(
                "{:.1} / {}",
                r.report.queue.mean_waiting, r.report.queue.max_waiting
            ),
            format!("{:.1e}", r.report.little.relative_error),
            (c.rejected_queue_full + c.rejected_too_large + c.timed_out).to_string(),
            if r.report.unstable {
                "no (unstable)".into()
            } else if r.meets_slo {
                "yes".into()
            } else {
                "no".into()
            },
        ]);
    }
    for c in t.column_iter_mut().skip(1) {
        c.set_cell_alignment(comfy_table::CellAlignment::Right);
    }
    format!(
        "{}
  year {year} design traffic: {design:.1} req/s over {} s ({} s warm-up), {} replications · SLO: {}
{t}
",
        s.name,
        s.simulation.window_s,
        s.simulation.warmup_s,
        s.simulation.replications,
        s.slo.label()
    )
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
                Scenario::from_source(&src).map(|s| {
                    format!(
                        "scenario `{}`: {} tiers, {} years",
                        s.name,
                        s.tiers.len(),
                        s.horizon_years
                    )
                })
            }
        });
        match outcome {
            Ok(what) if !global.quiet => println!("ok: {}: {what}", f.display()),
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
            Format::Json => println!("{}", serde_json::to_string_pretty(&p)?),
            Format::Table => print!("{}", profile_detail(&p)),
        }
        return Ok(());
    }
    let mut loaded = Vec::new();
    for n in search.available() {
        loaded.push(search.load(&n, Path::new("."))?);
    }
    match global.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&loaded)?),
        Format::Table => print!("{}", profile_list(&loaded)),
    }
    Ok(())
}

fn money(c: Option<&crate::cite::Cited>, per_hour: bool) -> String {
    match c {
        Some(c) if per_hour => format!("${:.4}/h", c.value),
        Some(c) => results::usd(c.value),
        None => "–".into(),
    }
}

fn profile_list(list: &[Profile]) -> String {
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled);
    t.set_header(vec![
        "name",
        "kind",
        "chips",
        "slots",
        "fp16 TF/unit",
        "int8 TOPS/unit",
        "mem GB/unit",
        "BW GB/s/unit",
        "purchase",
        "on-demand",
        "reserved 1y",
        "reserved 3y",
        "from",
    ]);
    for p in list {
        let peak = |pr: Precision| {
            p.unit_peak(pr)
                .map_or("–".into(), |v| format!("{:.1}", v / 1e12))
        };
        let from = if p.origin.starts_with("embedded:") {
            "shipped"
        } else {
            "local"
        };
        t.add_row(vec![
            p.name.clone(),
            p.kind.label().into(),
            format!("{} x {}", p.chip_count(), p.chip_model),
            p.slots().to_string(),
            peak(Precision::Fp16),
            peak(Precision::Int8),
            format!("{:.0}", p.unit_memory_bytes() / 1e9),
            format!(
                "{:.0}",
                p.memory_bandwidth_per_chip.value * p.chips.value / 1e9
            ),
            money(p.price(DeploymentOption::OnPrem), false),
            money(p.price(DeploymentOption::OnDemand), true),
            money(p.price(DeploymentOption::Reserved1y), true),
            money(p.price(DeploymentOption::Reserved3y), true),
            from.into(),
        ]);
    }
    format!("{t}\n`tco-sim profiles <name>` shows every number with its source and date.\n")
}

fn profile_detail(p: &Profile) -> String {
    let mut out = format!(
        "{} — {}\n  kind: {} · {} x {} · {} execution slots · loaded from {}\n",
        p.name,
        p.description,
        p.kind.label(),
        p.chip_count(),
        p.chip_model,
        p.slots(),
        p.origin
    );
    if let Some(region) = &p.prices.region {
        out.push_str(&format!("  prices for region {region}\n"));
    }
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled);
    t.set_header(vec!["field", "value", "basis", "source", "date", "note"]);
    for (field, c) in p.cited_numbers() {
        t.add_row(vec![
            field,
            format!("{}", c.value),
            c.basis.label().to_string(),
            c.source.title.clone(),
            c.source.date.clone(),
            c.note.clone().unwrap_or_default(),
        ]);
    }
    out.push_str(&format!("{t}\n"));
    let b = &p.batching;
    out.push_str(&format!(
        "  batching (serving configuration): max batch {}, window {} ms{}\n",
        b.max_batch,
        b.window_s * 1e3,
        if b.compiled_batch_sizes.is_empty() {
            String::new()
        } else {
            format!(", compiled shapes {:?}", b.compiled_batch_sizes)
        }
    ));
    if let Some(c) = &p.calibration {
        out.push_str(&format!(
            "  calibrated on {} ({}) with {}\n",
            c.host, c.date, c.method
        ));
    }
    out
}

fn init(path: &Path, force: bool, global: &GlobalArgs) -> Result<()> {
    if path.exists() && !force {
        return Err(
            InputError::new(format!("{} already exists", path.display()))
                .with_help("choose another path, or pass --force to replace it")
                .into(),
        );
    }
    report::write_atomic(path, STARTER_SCENARIO.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    if !global.quiet {
        println!(
            "wrote {}; run it with: tco-sim {}",
            path.display(),
            path.display()
        );
    }
    Ok(())
}
