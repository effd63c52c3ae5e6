//! Writing a run's report files (`results.json`, `results.csv`, with the uncertainty analysis
//! `sensitivity.csv` and `uncertainty.csv`, the charts as SVG and PNG, the PDF) into the output folder: the file-writing half of `tco-sim run`, kept beside `app` so
//! that `app.rs` reads as the pipeline. Every file is written atomically.
//!
//! A run's files are a set, described by `manifest.json` in the same folder: it is written first
//! with `"status": "incomplete"` and rewritten with `"complete"` after the last file, so a set cut
//! short — by an error, SIGINT, SIGTERM or a crash — is recognisable by its manifest. A run also
//! removes the files its own earlier run listed and this one no longer produces (a tier removed
//! from the scenario leaves no stale latency chart behind); it never touches files it did not
//! write.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::cli::ReportFormat;
use crate::input::InputError;
use crate::report;
use crate::results::RunResults;

/// The manifest's file name in the output folder.
pub const MANIFEST: &str = "manifest.json";

/// `manifest.json`: what a run wrote into its output folder, and whether it finished.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub tool: String,
    pub tool_version: String,
    /// The scenario file as named on the command line.
    pub scenario: String,
    /// `complete` once every file is written; `incomplete` while writing, and forever after if
    /// the run stopped before its last file. Either way `files` lists the files finished.
    pub status: ManifestStatus,
    pub files: Vec<ManifestFile>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ManifestStatus {
    Incomplete,
    Complete,
}

/// One file of the set: its name in the folder and its size \[B\].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestFile {
    pub name: String,
    pub bytes: u64,
}

/// Check the output folder before any work, so a bad `--out` costs nothing: it is created if
/// missing and must be a folder this process can write into. Each fault is bad input (exit 2)
/// naming the path and the reason.
pub fn prepare_out_dir(out: &Path) -> Result<(), InputError> {
    let help = "choose another output folder with --out DIR";
    let fault =
        |why: String| InputError::new(format!("--out {}: {why}", out.display())).with_help(help);
    if out.exists() && !out.is_dir() {
        return Err(fault("is a file, not a folder".into()));
    }
    std::fs::create_dir_all(out)
        .map_err(|e| fault(format!("the folder cannot be created ({e})")))?;
    // Creating a folder can succeed where writing into it fails (a read-only mount, /proc):
    // write and remove a probe file to know.
    let probe = out.join(format!(".tco-sim-probe.{}", std::process::id()));
    std::fs::write(&probe, b"")
        .map_err(|e| fault(format!("files cannot be written there ({e})")))?;
    std::fs::remove_file(&probe)
        .map_err(|e| fault(format!("files cannot be removed there ({e})")))?;
    Ok(())
}

/// On SIGINT or SIGTERM: let the file being written finish, write no other, and exit with
/// 130 (the shell's code for an interrupted command). The manifest then still says
/// `incomplete`. Installing twice is harmless (the first handler stays).
pub fn exit_cleanly_on_interrupt() {
    let _ = ctrlc::set_handler(|| {
        let _held = crate::output::hold_writes();
        eprintln!(
            "tco-sim: interrupted; the files written so far are complete, and manifest.json marks the set incomplete"
        );
        std::process::exit(130);
    });
}

/// The file names the manifest already in `out` lists, if there is a readable one.
fn earlier_files(out: &Path) -> Vec<String> {
    std::fs::read_to_string(out.join(MANIFEST))
        .ok()
        .and_then(|t| serde_json::from_str::<Manifest>(&t).ok())
        .map(|m| m.files.into_iter().map(|f| f.name).collect())
        .unwrap_or_default()
}

/// Write the requested report files into `out`; returns their paths, the PDF last.
///
/// Charts are drawn once and serve all three picture formats: the SVG as written, the PNG
/// rendered from the same parsed tree, and the PDF's vector figures.
pub fn write_reports(
    results: &RunResults,
    out: &Path,
    formats: &BTreeSet<ReportFormat>,
    paper: report::pdf::Paper,
) -> Result<Vec<PathBuf>> {
    // Read the report date first, so a bad SOURCE_DATE_EPOCH stops the run before any file.
    let date = if formats.contains(&ReportFormat::Pdf) || formats.contains(&ReportFormat::Xlsx) {
        Some(report::pdf::ReportDate::from_env().context("reading SOURCE_DATE_EPOCH")?)
    } else {
        None
    };
    // serde_json writes inf and NaN as null: refuse to write a set that would hold one.
    crate::output::finite::check(results).map_err(|at| {
        anyhow::anyhow!(
            "internal error: a non-finite number reached the results ({at}); no file was written"
        )
    })?;
    let earlier = earlier_files(out);
    let mut manifest = Manifest {
        tool: results.tool.clone(),
        tool_version: results.tool_version.clone(),
        scenario: results.scenario.file.clone(),
        status: ManifestStatus::Incomplete,
        files: vec![],
    };
    write_manifest(out, &manifest)?;
    let mut written = Vec::new();
    let mut put = |name: &str, bytes: &[u8]| -> Result<()> {
        let p = out.join(name);
        crate::output::write_atomic(&p, bytes)
            .with_context(|| format!("writing {}", p.display()))?;
        manifest.files.push(ManifestFile {
            name: name.to_string(),
            bytes: bytes.len() as u64,
        });
        // The manifest lists each file as it is finished, so a set cut short says what it holds.
        write_manifest(out, &manifest)?;
        written.push(p);
        Ok(())
    };
    if formats.contains(&ReportFormat::Json) {
        put("results.json", report::data::json(results).as_bytes())?;
    }
    if formats.contains(&ReportFormat::Csv) {
        put("results.csv", report::data::csv(results).as_bytes())?;
        if let Some(text) = report::data::sensitivity_csv(results) {
            put("sensitivity.csv", text.as_bytes())?;
        }
        if let Some(text) = report::data::uncertainty_csv(results) {
            put("uncertainty.csv", text.as_bytes())?;
        }
        if let Some(cf) = &results.cash_flow {
            put(
                "cash-flow.csv",
                crate::results::cashflow::csv(cf).as_bytes(),
            )?;
        }
    }
    if let (true, Some(date)) = (formats.contains(&ReportFormat::Xlsx), &date) {
        let book = report::xlsx::render(results, date).context("making report.xlsx")?;
        put("report.xlsx", &book)?;
    }
    let pictures = [ReportFormat::Svg, ReportFormat::Png, ReportFormat::Pdf];
    if pictures.iter().any(|f| formats.contains(f)) {
        write_pictures(results, formats, date, paper, &mut put)?;
    }
    manifest.status = ManifestStatus::Complete;
    // Only names this tool wrote into this folder before, and plain names: a hand-edited
    // manifest cannot point the clean-up elsewhere.
    for stale in earlier {
        let plain = Path::new(&stale)
            .file_name()
            .is_some_and(|n| n == stale.as_str());
        if plain && stale != MANIFEST && !manifest.files.iter().any(|f| f.name == stale) {
            let p = out.join(&stale);
            if p.is_file() {
                std::fs::remove_file(&p)
                    .with_context(|| format!("removing the stale {}", p.display()))?;
            }
        }
    }
    write_manifest(out, &manifest)?;
    Ok(written)
}

fn write_manifest(out: &Path, m: &Manifest) -> Result<()> {
    let p = out.join(MANIFEST);
    let mut text = serde_json::to_string_pretty(m).context("serializing the manifest")?;
    text.push('\n');
    crate::output::write_atomic(&p, text.as_bytes())
        .with_context(|| format!("writing {}", p.display()))
}

/// The charts as SVG and PNG, and the PDF, each through `put`.
fn write_pictures(
    results: &RunResults,
    formats: &BTreeSet<ReportFormat>,
    date: Option<report::pdf::ReportDate>,
    paper: report::pdf::Paper,
    put: &mut impl FnMut(&str, &[u8]) -> Result<()>,
) -> Result<()> {
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
    if let (true, Some(date)) = (formats.contains(&ReportFormat::Pdf), date) {
        let pdf =
            report::pdf::render_on(results, &charts, &date, paper).context("making the PDF")?;
        put("report.pdf", &pdf)?;
    }
    Ok(())
}
