//! Bad traffic input, one test per class: each is refused with an error that names the file,
//! the line (and column) and what would be valid — never a panic or a hang.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use tco_sim::input::{InputError, SourceFile};
use tco_sim::traffic::file::{TrafficFile, validate};
use tco_sim::traffic::series::SeriesFormat;
use tco_sim::traffic::{RateSeries, Trace, TraceFormat};

const HEADER: &str = "TIMESTAMP,ContextTokens,GeneratedTokens\r\n";

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn azure(text: &str) -> (tempfile::TempDir, Result<Trace, InputError>) {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "t.csv", text);
    let r = Trace::read(&p, TraceFormat::Azure);
    (dir, r)
}

fn servegen(text: &str) -> (tempfile::TempDir, Result<RateSeries, InputError>) {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "chunk-0-trace.csv", text);
    let r = RateSeries::read(&p, SeriesFormat::ServeGen, false);
    (dir, r)
}

fn at(e: &InputError) -> (String, Option<(usize, usize)>) {
    let file = e.file.clone().unwrap_or_default();
    let name = Path::new(&file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    (name, e.position)
}

#[test]
fn malformed_timestamp_names_file_line_and_column() {
    let (_d, r) = azure(&format!(
        "{HEADER}2023-11-16 18:15:46.6805900,374,44\r\n2023-11-16 18:61:50.9951690,396,109\r\n2023-11-16 18:15:51.2224670,879,55"
    ));
    let e = r.unwrap_err();
    assert_eq!(at(&e), ("t.csv".into(), Some((3, 1))));
    assert_eq!(e.field.as_deref(), Some("TIMESTAMP"));
    assert!(
        e.message.contains("not a valid date and time"),
        "{}",
        e.message
    );
    assert!(
        e.to_string()
            .contains("3 | 2023-11-16 18:61:50.9951690,396,109"),
        "{e}"
    );
}

#[test]
fn malformed_token_count_points_at_its_field() {
    let (_d, r) = azure(&format!(
        "{HEADER}2023-11-16 18:15:46.68,374,44\r\n2023-11-16 18:15:47.00,3.5,44\r\n"
    ));
    let e = r.unwrap_err();
    assert_eq!(at(&e), ("t.csv".into(), Some((3, 24))));
    assert_eq!(e.field.as_deref(), Some("ContextTokens"));
    assert!(
        e.message.contains("`3.5` is not a token count"),
        "{}",
        e.message
    );
}

#[test]
fn a_row_with_missing_fields_names_its_line() {
    let (_d, r) = azure(&format!(
        "{HEADER}2023-11-16 18:15:46.68,374,44\r\n2023-11-16 18:15:47.00,374\r\n"
    ));
    let e = r.unwrap_err();
    assert_eq!(e.position.map(|p| p.0), Some(3));
    assert!(e.message.contains("this row has 2 fields"), "{}", e.message);
}

#[test]
fn unsorted_timestamps_name_both_lines() {
    let (_d, r) = azure(&format!(
        "{HEADER}2023-11-16 18:15:46.68,374,44\r\n2023-11-16 18:15:47.00,1,1\r\n2023-11-16 18:15:46.90,1,1\r\n"
    ));
    let e = r.unwrap_err();
    assert_eq!(e.position.map(|p| p.0), Some(4));
    assert!(
        e.message.contains("earlier than the timestamp on line 3"),
        "{}",
        e.message
    );
    assert!(e.help.as_deref().unwrap().contains("sorted"));
}

#[test]
fn empty_traces_are_refused() {
    for text in [
        "",
        "\r\n",
        HEADER,
        "TIMESTAMP,ContextTokens,GeneratedTokens",
    ] {
        let (_d, r) = azure(text);
        let e = r.unwrap_err();
        assert_eq!(at(&e).0, "t.csv");
        assert!(
            e.message.contains("no requests") || e.message.contains("empty"),
            "{text:?}: {}",
            e.message
        );
    }
    // One request time (or several at one instant) cannot be replayed.
    let (_d, r) = azure(&format!(
        "{HEADER}2023-11-16 18:15:46.68,374,44\r\n2023-11-16 18:15:46.68,1,1"
    ));
    assert!(r.unwrap_err().message.contains("same time"));
}

#[test]
fn a_missing_column_lists_the_columns_found() {
    let (_d, r) = azure("time,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,374,44\n");
    let e = r.unwrap_err();
    assert_eq!(e.position, Some((1, 1)));
    assert_eq!(e.message, "the header has no `TIMESTAMP` column");
    assert!(
        e.help
            .as_deref()
            .unwrap()
            .contains("columns found: time, ContextTokens, GeneratedTokens")
    );
}

#[test]
fn malformed_mooncake_line_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "m.jsonl",
        "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1, \"hash_ids\": [0]}\n{\"timestamp\": 3000, \"input_length\": -5, \"output_length\": 1}\n",
    );
    let e = Trace::read(&p, TraceFormat::Mooncake).unwrap_err();
    assert_eq!(at(&e).0, "m.jsonl");
    assert_eq!(e.position.map(|p| p.0), Some(2));
    assert!(
        e.message.starts_with("malformed JSON line"),
        "{}",
        e.message
    );
    let p = write(
        dir.path(),
        "m.jsonl",
        "{\"timestamp\": 3000, \"input_length\": 5, \"output_length\": 1}\n\n{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1}\n",
    );
    let e = Trace::read(&p, TraceFormat::Mooncake).unwrap_err();
    assert_eq!(e.position.map(|p| p.0), Some(3));
    assert!(
        e.message.contains("earlier than the timestamp on line 1"),
        "{}",
        e.message
    );
}

#[test]
fn negative_and_non_finite_rates_name_their_line() {
    for (bad, what) in [
        ("-3.5", "negative"),
        ("nan", "not a finite number"),
        ("inf", "not a finite number"),
        ("", "empty"),
    ] {
        let (_d, r) = servegen(&format!(
            "0,10.5,1.2,Gamma,0.7,0.1\n600,{bad},1.0,Gamma,1,1\n1200,3,1,Gamma,1,1\n"
        ));
        let e = r.unwrap_err();
        assert_eq!(at(&e), ("chunk-0-trace.csv".into(), Some((2, 5))), "{bad}");
        assert_eq!(e.field.as_deref(), Some("rate_rps"));
        assert!(e.message.contains(what), "{bad}: {}", e.message);
    }
}

#[test]
fn a_series_without_traffic_is_refused() {
    let (_d, r) = servegen("0,0,0,,0,0\n600,0,0,,0,0\n");
    assert!(
        r.unwrap_err()
            .message
            .contains("every rate in the series is 0")
    );
    let (_d, r) = servegen("");
    assert!(r.unwrap_err().message.contains("no rows"));
    let (_d, r) = servegen("0,5,1,Gamma,1,1\n");
    assert!(r.unwrap_err().message.contains("at least two"));
}

#[test]
fn unsorted_windows_name_their_line() {
    let (_d, r) = servegen("0,1,1,Gamma,1,1\n1200,1,1,Gamma,1,1\n600,1,1,Gamma,1,1\n");
    let e = r.unwrap_err();
    assert_eq!(e.position, Some((3, 1)));
    assert!(
        e.message.contains("not after the start on line 2"),
        "{}",
        e.message
    );
}

#[test]
fn folder_files_must_share_their_windows() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "chunk-0-trace.csv",
        "0,1,1,Gamma,1,1\n600,1,1,Gamma,1,1\n",
    );
    write(
        dir.path(),
        "chunk-1-trace.csv",
        "0,1,1,Gamma,1,1\n900,1,1,Gamma,1,1\n",
    );
    let e = RateSeries::read(dir.path(), SeriesFormat::ServeGen, false).unwrap_err();
    assert_eq!(at(&e).0, "chunk-1-trace.csv");
    assert!(
        e.message.contains("window 2 starts at 900 s"),
        "{}",
        e.message
    );
    let empty = tempfile::tempdir().unwrap();
    let e = RateSeries::read(empty.path(), SeriesFormat::ServeGen, false).unwrap_err();
    assert!(e.message.contains("no .csv files"));
}

#[derive(serde::Deserialize)]
struct Scenario {
    traffic: TrafficFile,
}

fn scenario(text: &str, base: &Path) -> Result<tco_sim::traffic::TrafficSpec, InputError> {
    let src = SourceFile::from_text("s.toml", text);
    let s: Scenario = src.parse()?;
    validate(&src, &s.traffic, base)
}

#[test]
fn a_missing_trace_file_points_at_the_path_in_the_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let e = scenario(
        "[traffic.trace]\npath = \"nope.csv\"\nformat = \"azure\"\n",
        dir.path(),
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("traffic.trace.path"));
    assert_eq!(e.position, Some((2, 8)));
    assert!(e.message.starts_with("no such file or folder"));
    assert!(
        e.help
            .as_deref()
            .unwrap()
            .contains("relative to the scenario")
    );
}

#[test]
fn a_bad_trace_line_is_reported_in_the_trace_file() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "t.csv",
        &format!("{HEADER}2023-11-16 18:15:46.68,374,44\r\nyesterday,1,1\r\n"),
    );
    let e = scenario(
        "[traffic.trace]\npath = \"t.csv\"\nformat = \"azure\"\n",
        dir.path(),
    )
    .unwrap_err();
    assert_eq!(at(&e), ("t.csv".into(), Some((3, 1))));
}

#[test]
fn non_positive_or_non_finite_synthetic_rates_are_refused() {
    for (bad, col) in [("0", 12), ("-5", 12), ("nan", 12), ("inf", 12)] {
        let e = scenario(&format!("[traffic]\npeak_rps = {bad}\n"), Path::new(".")).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("traffic.peak_rps"), "{bad}");
        assert_eq!(e.position, Some((2, col)), "{bad}");
        assert!(e.help.as_deref().unwrap().starts_with("valid:"), "{bad}");
    }
}

#[test]
fn csv_only_fields_on_an_azure_trace_are_refused() {
    let e = scenario(
        &format!(
            "[traffic.trace]\npath = \"{}\"\nformat = \"azure\"\ntimestamp_unit = \"ms\"\n",
            "Cargo.toml"
        ),
        Path::new(env!("CARGO_MANIFEST_DIR")),
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("traffic.trace.timestamp_unit"));
    assert_eq!(e.position.map(|p| p.0), Some(4));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Whatever the bytes, the readers answer Ok or Err, never panic (and, being single passes,
    /// never hang).
    #[test]
    fn readers_never_panic(lines in proptest::collection::vec("[0-9a-zA-Z:., \\-\"{}\\[\\]_\r]{0,40}", 0..12)) {
        let text = lines.join("\n");
        let src = SourceFile::from_text("fuzz", format!("{HEADER}{text}"));
        let _ = Trace::parse(&src, TraceFormat::Azure);
        let src = SourceFile::from_text("fuzz", text.clone());
        let _ = Trace::parse(&src, TraceFormat::Mooncake);
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "s.csv", &text);
        let _ = RateSeries::read(&p, SeriesFormat::ServeGen, true);
        let _ = RateSeries::read(&p, SeriesFormat::Csv, false);
    }

    /// Valid numbers anywhere in the synthetic table give a spec or an error, never a panic, and
    /// a spec's yearly figures are finite and consistent.
    #[test]
    fn synthetic_tables_never_panic(peak in -10.0f64..1e5, mean in -10.0f64..1e5, trough in -10.0f64..1e5,
                                    hour in -2.0f64..26.0, g in -2.0f64..50.0, cv in -1.0f64..30.0) {
        let text = format!(
            "[traffic]\npattern = \"diurnal\"\npeak_rps = {peak}\nmean_rps = {mean}\ntrough_rps = {trough}\npeak_hour = {}\ngrowth_per_year = {g}\niat_cv = {cv}\n",
            hour.round()
        );
        if let Ok(spec) = scenario(&text, Path::new(".")) {
            for year in 1..=5 {
                let total = spec.requests_per_year(year);
                prop_assert!(total.is_finite() && total > 0.0);
                prop_assert!(spec.peak_rps(year) >= spec.mean_rps(year));
                let w = spec.design_window(year, 3600.0);
                prop_assert!(w.mean_rps <= spec.peak_rps(year) * (1.0 + 1e-9));
            }
        }
    }
}
