//! Writing a run's report files (`results.json`, `results.csv`, the charts as SVG and PNG, the
//! PDF) into the output folder: the file-writing half of `tco-sim run`, kept beside `app` so
//! that `app.rs` reads as the pipeline. Every file is written atomically.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::cli::ReportFormat;
use crate::report;
use crate::results::RunResults;

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
        crate::output::write_atomic(&p, bytes)
            .with_context(|| format!("writing {}", p.display()))?;
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
