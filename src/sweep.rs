//! `tco-sim sweep`: many scenarios at once. A sweep file names a base scenario and axes of
//! overrides; the sweep expands them into a manifest of points, runs this process's shard of
//! them in parallel, and writes one Parquet file (plus, for a whole sweep, the same rows as CSV).
//! `tco-sim sweep merge` joins the shards of a cluster run into the file one process would have
//! written.
//!
//! It fits the scheduler a planner already has rather than bringing one: a Slurm job array or a
//! Kubernetes Indexed Job runs the same command in every task, and each task finds its slice in
//! the environment ([`shard`]). See `docs/sweep.md`.
//!
//! Determinism: the manifest's order is fixed by the file, each point's seed is in the manifest,
//! every point is planned on its own, and the table is sorted by point before it is written, so
//! thread count, sharding and resuming never change a row.

pub mod journal;
pub mod parquet;
pub mod pipeline;
pub mod shard;
pub mod spec;
pub mod table;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use rayon::prelude::*;

use crate::cli::{Format, GlobalArgs};
use crate::input::InputError;
pub use shard::Shard;
pub use spec::Manifest;
pub use table::Table;

/// `tco-sim sweep`: the command line.
#[derive(Debug, Clone, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SweepArgs {
    #[command(subcommand)]
    pub command: Option<SweepCommand>,
    /// The sweep file: a base scenario and the axes to sweep (see docs/sweep.md).
    pub file: Option<PathBuf>,
    /// Output folder: results.parquet and results.csv, or shard-I-of-N.parquet for a shard.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Run slice I of N (points I, I+N, I+2N, …). Default: from SLURM_ARRAY_TASK_ID/COUNT or
    /// JOB_COMPLETION_INDEX, else the whole sweep.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
    /// Number of shards when the index comes from JOB_COMPLETION_INDEX (a Kubernetes Indexed
    /// Job's `completions`).
    #[arg(long, value_name = "N")]
    pub shard_count: Option<u32>,
    /// Size fleets with the analytic utilization bound only (as `analytic = true` in the file).
    #[arg(long)]
    pub analytic: bool,
}

#[derive(Debug, Clone, clap::Subcommand)]
pub enum SweepCommand {
    /// Merge shard files into one Parquet file and its CSV; check every point is there once.
    Merge {
        /// Shard files, or folders whose *.parquet files are shards.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// The merged Parquet file; the CSV is written beside it with the extension .csv.
        #[arg(long)]
        out: PathBuf,
    },
}

/// Where a run writes and whether it draws a progress bar.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub out: PathBuf,
    pub shard: Shard,
    pub progress: bool,
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunSummary {
    pub points_total: usize,
    pub shard: String,
    pub points_in_shard: usize,
    /// Points planned by this run.
    pub points_run: usize,
    /// Points found finished in the journal and skipped.
    pub points_skipped: usize,
    pub rows: usize,
    pub elapsed_s: f64,
    pub written: Vec<PathBuf>,
}

/// The files a run writes into `out` for `shard`: (Parquet, CSV if a whole sweep, journal).
pub fn output_paths(out: &Path, shard: Shard) -> (PathBuf, Option<PathBuf>, PathBuf) {
    if shard == Shard::WHOLE {
        (
            out.join("results.parquet"),
            Some(out.join("results.csv")),
            out.join("results.journal"),
        )
    } else {
        let stem = format!("shard-{}-of-{}", shard.index, shard.count);
        (
            out.join(format!("{stem}.parquet")),
            None,
            out.join(format!("{stem}.journal")),
        )
    }
}

/// Run the command line's `sweep`.
pub fn run(args: &SweepArgs, global: &GlobalArgs) -> Result<()> {
    if let Some(SweepCommand::Merge { inputs, out }) = &args.command {
        let s = merge(inputs, out)?;
        match global.format {
            Format::Json => crate::output::print_json(&s)?,
            Format::Table if !global.quiet => {
                crate::output::print(&format!(
                    "merged {} files: {} points, {} rows\n",
                    s.files, s.points, s.rows
                ))?;
                for p in &s.written {
                    crate::output::print(&format!("wrote {}\n", p.display()))?;
                }
            }
            Format::Table => {}
        }
        return Ok(());
    }
    let Some(file) = &args.file else {
        return Err(InputError::new("no sweep file given")
            .with_help("run `tco-sim sweep <sweep.toml> --out DIR` (docs/sweep.md)")
            .into());
    };
    let Some(out) = &args.out else {
        return Err(InputError::new("no output folder given")
            .with_help("pass --out DIR; every shard of a cluster run may share it")
            .into());
    };
    let manifest = Manifest::load(file, global.seed, args.analytic)?;
    let shard = shard::resolve(args.shard, args.shard_count, &|k| std::env::var(k).ok())?;
    let interactive = !global.quiet && global.format == Format::Table;
    let s = execute(
        &manifest,
        &RunOptions {
            out: out.clone(),
            shard,
            progress: interactive,
        },
    )?;
    match global.format {
        Format::Json => crate::output::print_json(&s)?,
        Format::Table if interactive => {
            crate::output::print(&format!(
                "{}: {} points, shard {} holds {}: {} run, {} already done; {} rows in {:.1} s ({:.2} points/s)\n",
                manifest.file,
                s.points_total,
                s.shard,
                s.points_in_shard,
                s.points_run,
                s.points_skipped,
                s.rows,
                s.elapsed_s,
                if s.elapsed_s > 0.0 {
                    s.points_run as f64 / s.elapsed_s
                } else {
                    0.0
                }
            ))?;
            for p in &s.written {
                crate::output::print(&format!("wrote {}\n", p.display()))?;
            }
        }
        Format::Table => {}
    }
    Ok(())
}

/// Run `opts.shard` of `manifest` into `opts.out`, skipping points its journal already holds.
/// Points run in parallel on the current rayon pool.
pub fn execute(manifest: &Manifest, opts: &RunOptions) -> Result<RunSummary> {
    let start = Instant::now();
    let (parquet_path, csv_path, journal_path) = output_paths(&opts.out, opts.shard);
    let header = journal::Header {
        sweep_file: manifest.file.clone(),
        fingerprint: manifest.fingerprint_hex(),
        shard: opts.shard.to_string(),
    };
    let (journal, done) = journal::open(&journal_path, &header)?;
    let mine: Vec<&spec::Point> = manifest
        .points
        .iter()
        .filter(|p| opts.shard.holds(p.index))
        .collect();
    let todo: Vec<&spec::Point> = mine
        .iter()
        .copied()
        .filter(|p| !done.contains_key(&p.index))
        .collect();
    let stage = pipeline::Stage::Plan {
        analytic: manifest.analytic,
    };
    let bar = Progress::new(opts.progress, todo.len());
    let finished = AtomicUsize::new(0);
    todo.par_iter().try_for_each(|p| -> Result<()> {
        let src = manifest.point_source(p);
        let (_, rows) = pipeline::pipeline(&src, stage)
            .with_context(|| format!("planning point {} of {}", p.index, manifest.file))?;
        journal.append(p.index, &rows)?;
        bar.tick(finished.fetch_add(1, Ordering::Relaxed) + 1);
        Ok(())
    })?;
    bar.finish();
    let entries = journal.entries(&header)?;
    let points: Vec<(u32, Vec<pipeline::TierRow>)> = mine
        .iter()
        .map(|p| match entries.get(&p.index) {
            Some(rows) => Ok((p.index, rows.clone())),
            None => bail!(
                "point {} finished but is not in {}",
                p.index,
                journal_path.display()
            ),
        })
        .collect::<Result<_>>()?;
    let table = Table::build(manifest, &opts.shard.to_string(), &points);
    parquet::write(&table, &parquet_path)
        .with_context(|| format!("writing {}", parquet_path.display()))?;
    let mut written = vec![parquet_path];
    if let Some(csv) = csv_path {
        crate::output::write_atomic(&csv, table.csv().as_bytes())
            .with_context(|| format!("writing {}", csv.display()))?;
        written.push(csv);
    }
    Ok(RunSummary {
        points_total: manifest.points.len(),
        shard: opts.shard.to_string(),
        points_in_shard: mine.len(),
        points_run: todo.len(),
        points_skipped: mine.len() - todo.len(),
        rows: table.rows(),
        elapsed_s: start.elapsed().as_secs_f64(),
        written,
    })
}

/// What a merge did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MergeSummary {
    pub files: usize,
    pub points: u32,
    pub rows: usize,
    pub written: Vec<PathBuf>,
}

/// The Parquet files `inputs` name: files as given, folders by their `*.parquet`, sorted;
/// `out` itself is left out so a merge into a shard folder can be run twice.
fn shard_files(inputs: &[PathBuf], out: &Path) -> Result<Vec<PathBuf>> {
    let mut files = BTreeSet::new();
    for i in inputs {
        if i.is_dir() {
            let listing =
                std::fs::read_dir(i).with_context(|| format!("reading {}", i.display()))?;
            for e in listing {
                let p = e?.path();
                if p.extension().is_some_and(|x| x == "parquet") {
                    files.insert(p);
                }
            }
        } else if i.is_file() {
            files.insert(i.clone());
        } else {
            return Err(InputError::new("no such file or folder")
                .in_file(i.display().to_string())
                .into());
        }
    }
    let out_abs = std::path::absolute(out).ok();
    files.retain(|f| std::path::absolute(f).ok() != out_abs);
    if files.is_empty() {
        return Err(InputError::new("no Parquet files to merge")
            .with_help("name the folders the shards wrote (shard-I-of-N.parquet) or the files")
            .into());
    }
    Ok(files.into_iter().collect())
}

/// Merge shard files into `out` (and `out` with extension .csv). Every input must come from the
/// same sweep (same fingerprint and size) and every point must be in exactly one of them; the
/// result is the table a single process would have written, byte for byte.
pub fn merge(inputs: &[PathBuf], out: &Path) -> Result<MergeSummary> {
    let files = shard_files(inputs, out)?;
    let tables: Vec<Table> = files
        .iter()
        .map(|f| parquet::read(f).with_context(|| format!("reading {}", f.display())))
        .collect::<Result<_>>()?;
    let first = &tables[0];
    let mut owner: Vec<Option<usize>> = vec![None; first.provenance.points as usize];
    for (k, (t, f)) in tables.iter().zip(&files).enumerate() {
        let p = &t.provenance;
        if p.fingerprint != first.provenance.fingerprint || p.points != first.provenance.points {
            return Err(InputError::new(format!(
                "{} is from another sweep ({}, {} points, fingerprint {}) than {} ({}, {} points, fingerprint {})",
                f.display(),
                p.sweep_file,
                p.points,
                p.fingerprint,
                files[0].display(),
                first.provenance.sweep_file,
                first.provenance.points,
                first.provenance.fingerprint
            ))
            .with_help("merge the shards of one sweep, all run with the same sweep file, scenarios and tool version")
            .into());
        }
        if t.layout() != first.layout() {
            bail!(
                "{} has other columns than {}",
                f.display(),
                files[0].display()
            );
        }
        let mut seen = BTreeSet::new();
        for point in t.points() {
            if !seen.insert(point) {
                continue;
            }
            let slot = owner.get_mut(point as usize).ok_or_else(|| {
                InputError::new(format!(
                    "{} holds point {point}, but the sweep has {} points",
                    f.display(),
                    p.points
                ))
            })?;
            if let Some(other) = slot {
                return Err(InputError::new(format!(
                    "point {point} is in both {} and {}",
                    files[*other].display(),
                    f.display()
                ))
                .with_help("each shard must run once: merge one file per shard")
                .into());
            }
            *slot = Some(k);
        }
    }
    let missing: Vec<String> = owner
        .iter()
        .enumerate()
        .filter(|(_, o)| o.is_none())
        .map(|(i, _)| i.to_string())
        .collect();
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(10).map(String::as_str).collect();
        return Err(InputError::new(format!(
            "{} of {} points are missing: {}{}",
            missing.len(),
            owner.len(),
            shown.join(", "),
            if missing.len() > shown.len() {
                ", …"
            } else {
                ""
            }
        ))
        .with_help(
            "run the missing shards (or rerun the interrupted ones: they resume), then merge again",
        )
        .into());
    }
    // Rows in point order; a point's rows keep their order, as they all come from one file.
    let mut order: Vec<(u32, usize, usize)> = Vec::new();
    for (k, t) in tables.iter().enumerate() {
        order.extend(t.points().into_iter().enumerate().map(|(i, p)| (p, k, i)));
    }
    order.sort_unstable();
    let mut merged = first.empty_like(table::Provenance {
        shard: Shard::WHOLE.to_string(),
        ..first.provenance.clone()
    });
    for &(_, k, i) in &order {
        merged.push_row(&tables[k], i);
    }
    parquet::write(&merged, out).with_context(|| format!("writing {}", out.display()))?;
    let csv = out.with_extension("csv");
    crate::output::write_atomic(&csv, merged.csv().as_bytes())
        .with_context(|| format!("writing {}", csv.display()))?;
    Ok(MergeSummary {
        files: files.len(),
        points: first.provenance.points,
        rows: merged.rows(),
        written: vec![out.to_path_buf(), csv],
    })
}

/// An indicatif bar over points, hidden until the work has taken a second (quick sweeps print
/// nothing extra); indicatif draws only on a terminal.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    start: Instant,
    shown: AtomicBool,
}

impl Progress {
    fn new(enabled: bool, total: usize) -> Progress {
        let bar = enabled.then(|| {
            let b = indicatif::ProgressBar::with_draw_target(
                Some(total as u64),
                indicatif::ProgressDrawTarget::hidden(),
            );
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "sweep {bar:30} {pos}/{len} points {elapsed} (eta {eta})",
            ) {
                b.set_style(style);
            }
            b
        });
        Progress {
            bar,
            start: Instant::now(),
            shown: AtomicBool::new(false),
        }
    }

    fn tick(&self, done: usize) {
        let Some(b) = &self.bar else { return };
        b.set_position(done as u64);
        if self.start.elapsed().as_secs_f64() > 1.0 && !self.shown.swap(true, Ordering::Relaxed) {
            b.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
