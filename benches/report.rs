//! Report generation time: charts (SVG), their PNGs and the PDF, plus the JSON and CSV, for the
//! largest shipped scenario (most tier × option × year cells), written to a temporary folder as
//! `tco-sim <scenario>` writes them. The budget is 2 seconds in a release build.
//!
//! Run: `cargo bench --bench report` (add `-- <scenario.toml>` to time another scenario).
//! A plain timing loop: report generation is one call, long enough that a statistics framework
//! would add build time and nothing else. It prints the minimum and the median of 7 runs after
//! one warm-up, and exits 1 if the median is over budget.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tco_sim::cli::ReportFormat;
use tco_sim::results::RunResults;
use tco_sim::scenario::Scenario;

const BUDGET: Duration = Duration::from_secs(2);
const RUNS: usize = 7;

fn plan(path: &Path) -> RunResults {
    let s = Scenario::load(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    tco_sim::results::plan(&s, tco_sim::results::Method::Analytic, &|_, _| {})
        .unwrap_or_else(|e| panic!("{}: {e:#}", path.display()))
}

fn cells(r: &RunResults) -> usize {
    r.tiers
        .iter()
        .map(|t| t.options.len() * t.capacity.len())
        .sum()
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let given: Vec<PathBuf> = std::env::args()
        .skip(1)
        .filter(|a| a.ends_with(".toml"))
        .map(PathBuf::from)
        .collect();
    let candidates: Vec<PathBuf> = if given.is_empty() {
        let mut v: Vec<PathBuf> = std::fs::read_dir(root.join("scenarios"))
            .expect("scenarios/ exists")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        v.sort();
        v
    } else {
        given
    };
    let (path, results) = candidates
        .iter()
        .map(|p| (p.clone(), plan(p)))
        .max_by_key(|(_, r)| (cells(r), r.inputs.len()))
        .expect("at least one scenario");
    let formats: BTreeSet<ReportFormat> = [
        ReportFormat::Pdf,
        ReportFormat::Svg,
        ReportFormat::Png,
        ReportFormat::Csv,
        ReportFormat::Json,
    ]
    .into_iter()
    .collect();
    let dir = tempfile::tempdir().expect("temp dir");
    let mut times = Vec::with_capacity(RUNS);
    let mut files = 0;
    for i in 0..=RUNS {
        let t = Instant::now();
        let written = tco_sim::app::write_reports(
            &results,
            dir.path(),
            &formats,
            tco_sim::report::pdf::Paper::A4,
        )
        .unwrap_or_else(|e| panic!("writing the reports: {e:#}"));
        let dt = t.elapsed();
        files = written.len();
        if i > 0 {
            times.push(dt);
        }
    }
    times.sort();
    let (min, median) = (times[0], times[RUNS / 2]);
    println!(
        "report generation, {} ({} tier-option-year cells, {} inputs, {files} files): \
         min {:.3} s, median {:.3} s over {RUNS} runs (budget {:.1} s)",
        path.strip_prefix(root).unwrap_or(&path).display(),
        cells(&results),
        results.inputs.len(),
        min.as_secs_f64(),
        median.as_secs_f64(),
        BUDGET.as_secs_f64()
    );
    if median > BUDGET {
        eprintln!("over budget");
        std::process::exit(1);
    }
}
