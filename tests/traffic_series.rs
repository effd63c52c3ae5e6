//! Measured rate series: ServeGen-style client files summed over a folder, the CSV form, exact
//! hourly rates, the busiest design window, and arrivals that follow the windows (optionally with
//! each window's fitted inter-arrival CV). Fixtures are written here: CI has only the repository.

use std::path::{Path, PathBuf};

use tco_sim::input::{InputError, SourceFile};
use tco_sim::traffic::file::{TrafficFile, validate};
use tco_sim::traffic::series::SeriesFormat;
use tco_sim::traffic::{RateSeries, Request, TrafficSpec, TrafficStats};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A ServeGen file: one row per 600 s window, `start,rate,cv,pattern,shape,scale`.
fn servegen(rates: &[f64], cvs: &[f64]) -> String {
    rates
        .iter()
        .zip(cvs)
        .enumerate()
        .map(|(i, (r, cv))| {
            if *r == 0.0 {
                format!("{},0,0,,0,0\n", i * 600)
            } else {
                format!("{},{r},{cv},Gamma,0.5,0.1\n", i * 600)
            }
        })
        .collect()
}

/// 12 windows (2 hours) for three clients; their sum is 10, 20, …, 120 req/s.
fn client_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let total: Vec<f64> = (1..=12).map(|i| 10.0 * i as f64).collect();
    let a: Vec<f64> = total.iter().map(|t| t * 0.5).collect();
    let b: Vec<f64> = total.iter().map(|t| t * 0.3).collect();
    let c: Vec<f64> = total.iter().map(|t| t * 0.2).collect();
    let ones = [1.0; 12];
    write(dir.path(), "chunk-0-trace.csv", &servegen(&a, &ones));
    write(dir.path(), "chunk-1-trace.csv", &servegen(&b, &ones));
    write(dir.path(), "chunk-2-trace.csv", &servegen(&c, &ones));
    write(
        dir.path(),
        "README.md",
        "not a series: only *.csv files are read\n",
    );
    dir
}

#[derive(serde::Deserialize)]
struct Scenario {
    traffic: TrafficFile,
}

fn scenario(text: &str, base: &Path) -> Result<TrafficSpec, InputError> {
    let src = SourceFile::from_text("s.toml", text);
    let s: Scenario = src.parse()?;
    validate(&src, &s.traffic, base)
}

#[test]
fn a_folder_is_summed_window_by_window() {
    let dir = client_folder();
    let s = RateSeries::read(dir.path(), SeriesFormat::ServeGen, false).unwrap();
    assert_eq!(s.len(), 12);
    assert_eq!(s.period_s(), 7200.0);
    assert!((s.peak_rps() - 120.0).abs() < 1e-9);
    assert!((s.mean_rps() - 65.0).abs() < 1e-9);
    // Λ over the first window = 10 req/s × 600 s.
    assert!((s.integrated(600.0) - 6000.0).abs() < 1e-6);
}

#[test]
fn hourly_rates_are_exact_and_repeat_the_series() {
    let dir = client_folder();
    let name = dir
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let spec = scenario(
        &format!("[traffic]\ngrowth_per_year = 0.5\n[traffic.rate_series]\npath = \"{name}\"\nformat = \"servegen\"\n"),
        dir.path().parent().unwrap(),
    )
    .unwrap();
    let h1 = spec.hourly_rates(1);
    assert_eq!(h1.len(), 8760);
    // Hour 0 holds windows 10..60 req/s (mean 35), hour 1 windows 70..120 (mean 95); then again.
    assert!(
        (h1[0] - 35.0).abs() < 1e-9 && (h1[1] - 95.0).abs() < 1e-9 && (h1[2] - 35.0).abs() < 1e-9,
        "{:?}",
        &h1[..3]
    );
    let h2 = spec.hourly_rates(2);
    assert!(
        (h2[1] - 1.5 * 95.0).abs() < 1e-9,
        "growth multiplies the rates"
    );
    assert!((spec.peak_rps(2) - 180.0).abs() < 1e-9);
    let total: f64 = h2.iter().sum::<f64>() * 3600.0;
    assert!((total - spec.requests_per_year(2)).abs() < 1e-6 * total);
    assert!((spec.mean_rps(1) - 65.0).abs() < 1e-9);
    assert!(
        spec.description().contains("(3 files)"),
        "{}",
        spec.description()
    );
    assert!(
        spec.notes().iter().any(|n| n.contains("3 files summed")),
        "{:?}",
        spec.notes()
    );
}

/// The design window is the busiest stretch, and its arrivals follow each window's rate:
/// every 10-minute count is Poisson with mean rate × 600 s, so |z| < 5.
#[test]
fn design_arrivals_follow_the_busiest_windows() {
    let dir = client_folder();
    let name = dir
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let spec = scenario(
        &format!("[traffic.rate_series]\npath = \"{name}\"\nformat = \"servegen\"\n"),
        dir.path().parent().unwrap(),
    )
    .unwrap();
    let w = spec.design_window(1, 3600.0);
    assert_eq!(w.start_s, 3600.0);
    assert!((w.mean_rps - 95.0).abs() < 1e-9);
    let mut counts = [0u64; 6];
    let arrivals: Vec<Request> = spec.design_arrivals(1, 3600.0, 4, 0).collect();
    for r in &arrivals {
        counts[(r.arrival_ns / 600_000_000_000) as usize] += 1;
    }
    for (i, &n) in counts.iter().enumerate() {
        let expected = (70.0 + 10.0 * i as f64) * 600.0;
        let z = (n as f64 - expected) / expected.sqrt();
        assert!(z.abs() < 5.0, "window {i}: {n} vs {expected}");
    }
    // A folder's arrivals are Poisson unless iat_cv is set: within one window (constant rate)
    // the 1 s counts have IDC ≈ 1 (± 0.06 for 600 bins). Across windows the changing rate
    // alone raises it to 1 + var(rate)/mean(rate) ≈ 4.
    let first = arrivals
        .iter()
        .copied()
        .filter(|r| r.arrival_ns < 600_000_000_000);
    let s = TrafficStats::from_requests(first).unwrap();
    assert!(s.idc_1s.unwrap() < 1.3, "{:?}", s.idc_1s);
}

/// A single client's file can carry each window's fitted CV into the arrivals. Two windows of
/// 50 req/s, CV 1 then CV 3: 30,000 arrivals each. Seed spread of the CV estimate at CV 3
/// (measured 0.014 at 200,000 arrivals) scales to about 0.036 here; tolerance 5 sd.
#[test]
fn per_window_cv_shapes_each_window() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "chunk-61-trace.csv",
        &servegen(&[50.0, 50.0], &[1.0, 3.0]),
    );
    let spec = scenario(
        "[traffic.rate_series]\npath = \"chunk-61-trace.csv\"\nformat = \"servegen\"\nwindow_cv = true\n",
        dir.path(),
    )
    .unwrap();
    let v: Vec<Request> = spec.design_arrivals(1, 1200.0, 8, 0).collect();
    let split = v.partition_point(|r| r.arrival_ns < 600_000_000_000);
    let first = TrafficStats::from_requests(v[..split].iter().copied()).unwrap();
    let second = TrafficStats::from_requests(v[split..].iter().copied()).unwrap();
    assert!((first.iat_cv - 1.0).abs() < 5.0 * 0.005, "{}", first.iat_cv);
    assert!(
        (second.iat_cv - 3.0).abs() < 5.0 * 0.036,
        "{}",
        second.iat_cv
    );
    assert!((second.mean_rps - 50.0).abs() < 5.0 * 3.0 * (50.0f64 / 600.0).sqrt());
}

#[test]
fn the_csv_form_has_a_header() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "rates.csv", "time_s,rate_rps\n0,5\n3600,15\n");
    let spec = scenario(
        "[traffic]\niat_cv = 2\n[traffic.rate_series]\npath = \"rates.csv\"\nformat = \"csv\"\n",
        dir.path(),
    )
    .unwrap();
    assert_eq!(spec.hourly_rates(1)[..3], [5.0, 15.0, 5.0]);
    assert!(
        spec.description().contains("inter-arrival CV 2"),
        "{}",
        spec.description()
    );
}

#[test]
fn window_cv_needs_a_single_file_and_no_iat_cv() {
    let dir = client_folder();
    let name = dir
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let e = scenario(
        &format!(
            "[traffic.rate_series]\npath = \"{name}\"\nformat = \"servegen\"\nwindow_cv = true\n"
        ),
        dir.path().parent().unwrap(),
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("traffic.rate_series.window_cv"));
    assert_eq!(e.position.map(|p| p.0), Some(4));
    let e = scenario(
        "[traffic]\niat_cv = 2\n[traffic.rate_series]\npath = \"chunk-0-trace.csv\"\nformat = \"servegen\"\nwindow_cv = true\n",
        dir.path(),
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("traffic.iat_cv"));
}
