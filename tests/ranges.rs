//! Issue 15, items 3 and 6: every number a user can write has a physically meaningful range, and
//! what used to be accepted silently is an error (located, exit 2) or a note. One test per case,
//! each on `scenarios/starter.toml` (or a trace, series or profile beside it) with one change,
//! asserting the error's field, line and message — the outcome a user sees.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use tco_sim::hardware::Profile;
use tco_sim::input::{InputError, SourceFile};
use tco_sim::scenario::Scenario;

fn starter() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/starter.toml");
    std::fs::read_to_string(p).unwrap()
}

/// The starter scenario with `from` replaced by `to` (which must occur), written into a fresh
/// folder with any extra `files`, then loaded as the CLI loads it.
struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    fn new(text: &str, files: &[(&str, &str)]) -> Case {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.toml"), text).unwrap();
        for (name, body) in files {
            std::fs::write(dir.path().join(name), body).unwrap();
        }
        Case { dir }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("s.toml")
    }

    fn load(&self) -> Result<Scenario, InputError> {
        Scenario::load(&self.path())
    }
}

fn edited(from: &str, to: &str) -> String {
    let s = starter();
    assert!(s.contains(from), "starter.toml has no `{from}`");
    s.replacen(from, to, 1)
}

/// Load the starter with one edit; it must fail. Returns the error.
fn refused(from: &str, to: &str) -> InputError {
    let case = Case::new(&edited(from, to), &[]);
    match case.load() {
        Ok(_) => panic!("`{to}` was accepted"),
        Err(e) => e,
    }
}

/// The 1-based line of `needle` in the edited starter.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line holds `{needle}`"))
        + 1
}

/// Assert a located range error: field, line, the message and the help's range.
fn assert_range(e: &InputError, field: &str, line: usize, message: &str, valid: &str) {
    assert_eq!(e.field.as_deref(), Some(field), "{e}");
    assert_eq!(e.position.map(|p| p.0), Some(line), "{e}");
    assert!(e.message.contains(message), "{e}");
    let help = e.help.clone().unwrap_or_default();
    assert!(help.contains(valid), "{e}");
}

const TIER_L4: &str = "options = [\"on-demand\", \"reserved-3y\"]\n";

// --- ranges: cost assumptions at 1e308 ------------------------------------------------------

#[test]
fn cost_assumptions_at_1e308_are_refused_with_their_range() {
    for (key, valid) in [
        ("egress_usd_per_gb", "USD per GB from 0 to 5"),
        (
            "colocation_usd_per_kw_month",
            "USD per kW-month from 0 to 5,000",
        ),
        ("egress_bytes_per_request", "bytes from 0 to 1e9"),
        (
            "admin_cost_usd_per_year",
            "USD per year from 0 to 5,000,000",
        ),
    ] {
        let to = format!("pue = 1.56\n{key} = 1e308");
        let text = edited("pue = 1.56", &to);
        let e = refused("pue = 1.56", &to);
        let line = line_of(&text, key);
        assert_range(
            &e,
            &format!("costs.{key}"),
            line,
            "= 1e308 is out of range",
            valid,
        );
    }
}

#[test]
fn units_per_admin_too_small_to_be_a_staff_is_refused() {
    let e = refused("pue = 1.56", "pue = 1.56\nunits_per_admin = 1e-300");
    assert_range(
        &e,
        "costs.units_per_admin",
        41,
        "out of range",
        "from 0.1 to 100,000",
    );
}

#[test]
fn toml_nan_and_inf_literals_are_refused_everywhere() {
    let e = refused("pue = 1.56", "pue = nan");
    assert_eq!(e.field.as_deref(), Some("costs.pue"));
    assert!(e.message.contains("not a number (nan)"), "{e}");
    let e = refused("peak_rps = 400 ", "peak_rps = inf ");
    assert_eq!(e.field.as_deref(), Some("traffic.peak_rps"));
    assert!(e.message.contains("infinite"), "{e}");
    let e = refused("max_utilization = 0.7", "max_utilization = -nan");
    assert_eq!(e.field.as_deref(), Some("slo.max_utilization"));
}

// --- ranges: tiers, workload, SLO ------------------------------------------------------------

#[test]
fn energy_per_unit_hour_at_1e308_is_refused_with_its_range() {
    let e = refused(
        "profile = \"altra-q80-30-1u\"\n",
        "profile = \"altra-q80-30-1u\"\nenergy_usd_per_unit_hour = 1e308\n",
    );
    assert_range(
        &e,
        "tier[0].energy_usd_per_unit_hour",
        28,
        "= 1e308 is out of range",
        "USD per unit-hour from 0 to 1,000",
    );
}

#[test]
fn activation_elements_at_1e308_are_refused_with_their_range() {
    let e = refused(
        "preset = \"resnet-50\"",
        "name = \"big\"\nflops_per_item = 8e9\nparameters = 2.5e7\nactivation_elements_per_item = 1e308",
    );
    assert_range(
        &e,
        "workload.activation_elements_per_item",
        13,
        "= 1e308 is out of range",
        "up to 1e12 elements per item",
    );
}

#[test]
fn max_utilization_of_1e_300_and_1e_6_is_refused() {
    for v in ["1e-300", "1e-6"] {
        let e = refused("max_utilization = 0.7", &format!("max_utilization = {v}"));
        assert_range(
            &e,
            "slo.max_utilization",
            23,
            "is out of range",
            "a fraction from 0.01 to 1",
        );
    }
    // The bound itself is a valid plan.
    let case = Case::new(
        &edited("max_utilization = 0.7", "max_utilization = 0.01"),
        &[],
    );
    assert_eq!(case.load().unwrap().slo.max_utilization.value, 0.01);
}

#[test]
fn a_window_the_simulator_cannot_run_is_refused_by_validate() {
    let e = refused(TIER_L4, &format!("{TIER_L4}window_ms = 2e9\n"));
    assert_range(
        &e,
        "tier[2].window_ms",
        37,
        "= 2000000000 is out of range",
        "milliseconds from 0 to 10,000",
    );
    let e = refused(TIER_L4, &format!("{TIER_L4}max_batch = 5000\n"));
    assert_range(
        &e,
        "tier[2].max_batch",
        37,
        "= 5000 is out of range",
        "from 1 to 4096",
    );
}

// --- ranges: traffic -------------------------------------------------------------------------

#[test]
fn peak_rps_of_1e7_is_refused_with_its_range() {
    // 1e7 req/s is the bound itself, but growing 30 % a year takes it past the bound by year
    // 2: refused at the growth, which is what compounds.
    let text = edited("peak_rps = 400 ", "peak_rps = 1e7 ").replacen(
        "mean_rps = 150",
        "mean_rps = 3750000",
        1,
    );
    let e = Case::new(&text, &[]).load().unwrap_err();
    assert_range(
        &e,
        "traffic.growth_per_year",
        18,
        "the traffic peaks at 28561000 req/s in year 5",
        "at most 10000000 req/s in every year",
    );
    let e = refused("peak_rps = 400 ", "peak_rps = 2e7 ");
    assert_range(
        &e,
        "traffic.peak_rps",
        15,
        "= 20000000 is out of range",
        "from 0.000001 to 10,000,000 [req/s]",
    );
}

#[test]
fn growth_of_3_over_20_years_is_refused_at_the_growth() {
    let text = edited("horizon_years = 5 ", "horizon_years = 20 ").replacen(
        "growth_per_year = 0.3",
        "growth_per_year = 3",
        1,
    );
    let case = Case::new(&text, &[]);
    let e = case.load().unwrap_err();
    assert_range(
        &e,
        "traffic.growth_per_year",
        18,
        "the traffic peaks at 109951162777600 req/s in year 20",
        "at most 10000000 req/s in every year",
    );
}

#[test]
fn bursts_that_push_the_peak_past_the_bound_are_refused_at_the_multiplier() {
    let growth = "growth_per_year = 0.3      # 30 % more traffic every year\n";
    let text = edited(
        growth,
        &format!("{growth}[traffic.bursts]\nmultiplier = 1000\nduration_s = 60\nper_day = 1\n"),
    )
    .replacen("peak_rps = 400 ", "peak_rps = 4000 ", 1)
    .replacen("mean_rps = 150", "mean_rps = 1500", 1);
    let e = Case::new(&text, &[]).load().unwrap_err();
    assert_eq!(e.field.as_deref(), Some("traffic.growth_per_year"), "{e}");
    assert!(e.message.contains("in year 5"), "{e}");
    // Without growth, the multiplier is what compounds.
    let text = edited("peak_rps = 400 ", "peak_rps = 20000 ")
        .replacen("mean_rps = 150", "mean_rps = 7500", 1)
        .replacen("growth_per_year = 0.3", "", 1)
        .replacen(
            "peak_hour = 14\n",
            "peak_hour = 14\n[traffic.bursts]\nmultiplier = 1000\nduration_s = 60\nper_day = 1\n",
            1,
        );
    let e = Case::new(&text, &[]).load().unwrap_err();
    assert_eq!(e.field.as_deref(), Some("traffic.bursts.multiplier"), "{e}");
    assert!(e.message.contains("20000000 req/s in year 1"), "{e}");
}

const SERIES_TABLE: &str = "[traffic]\n[traffic.rate_series]\npath = \"r.csv\"\nformat = \"csv\"\n";

/// The starter with its `[traffic]` table replaced by `table`.
fn with_traffic(table: &str) -> String {
    let s = starter();
    let (from, to) = (s.find("[traffic]").unwrap(), s.find("[slo]").unwrap());
    format!("{}{table}\n{}", &s[..from], &s[to..])
}

fn with_series(rows: &str) -> Result<Scenario, InputError> {
    let text = with_traffic(SERIES_TABLE);
    Case::new(&text, &[("r.csv", &format!("time_s,rate_rps\n{rows}"))]).load()
}

#[test]
fn a_rate_series_window_at_1e7_req_per_s_is_refused_at_its_line() {
    let e = with_series("0,100\n600,2e7\n1200,100\n").unwrap_err();
    assert!(e.file.as_deref().unwrap().ends_with("r.csv"), "{e}");
    assert_eq!(e.position.map(|p| p.0), Some(3), "{e}");
    assert!(
        e.message.contains("rate 20000000 req/s is out of range"),
        "{e}"
    );
    assert!(e.help.as_deref().unwrap().contains("0 to 10,000,000 req/s"));
}

#[test]
fn a_servegen_rate_of_1e308_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("chunk-0-trace.csv");
    std::fs::write(&p, "0,5,1,Gamma,1,1\n600,1e308,1,Gamma,1,1\n").unwrap();
    let e = tco_sim::traffic::RateSeries::read(
        &p,
        tco_sim::traffic::series::SeriesFormat::ServeGen,
        false,
    )
    .unwrap_err();
    assert_eq!(e.position.map(|p| p.0), Some(2), "{e}");
    assert_eq!(e.field.as_deref(), Some("rate_rps"));
    assert!(e.message.contains("is out of range"), "{e}");
}

// --- silent acceptances -----------------------------------------------------------------------

#[test]
fn energy_on_a_tier_with_only_cloud_options_is_refused() {
    let e = refused(
        TIER_L4,
        &format!("{TIER_L4}energy_usd_per_unit_hour = 0.87\n"),
    );
    assert_eq!(e.field.as_deref(), Some("tier[2].energy_usd_per_unit_hour"));
    assert_eq!(e.position.map(|p| p.0), Some(37));
    assert!(
        e.message
            .contains("tier `NVIDIA L4` compares only cloud options (on-demand, reserved-3y)"),
        "{e}"
    );
    assert!(e.help.as_deref().unwrap().contains("add \"on-prem\""));
    // The OCI tier has no on-prem price at all: refused the same way.
    let e = refused(
        "profile = \"oci-a1-flex-16c\"\n",
        "profile = \"oci-a1-flex-16c\"\nenergy_usd_per_unit_hour = 0.2\n",
    );
    assert_eq!(e.field.as_deref(), Some("tier[1].energy_usd_per_unit_hour"));
    // On-prem, it is the documented override.
    let case = Case::new(
        &edited(
            "profile = \"altra-q80-30-1u\"\n",
            "profile = \"altra-q80-30-1u\"\nenergy_usd_per_unit_hour = 0.87\n",
        ),
        &[],
    );
    let s = case.load().unwrap();
    assert_eq!(s.tiers[0].energy_override.as_ref().unwrap().value, 0.87);
}

#[test]
fn an_empty_tier_name_is_refused() {
    for blank in ["\"\"", "\"   \""] {
        let e = refused("name = \"Altra Q80 on-prem\"", &format!("name = {blank}"));
        assert_eq!(e.field.as_deref(), Some("tier[0].name"), "{e}");
        assert_eq!(e.position, Some((26, 8)), "{e}");
        assert_eq!(e.message, "the tier name is empty");
        assert!(e.help.as_deref().unwrap().contains("altra-q80-30-1u"));
    }
}

#[test]
fn a_zero_in_weekly_is_refused_at_its_day() {
    let e = refused(
        "peak_hour = 14\n",
        "peak_hour = 14\nweekly = [1, 1, 1, 1, 1, 0, 0.5]\n",
    );
    assert_range(
        &e,
        "traffic.weekly[5]",
        18,
        "= 0 is out of range",
        "a day multiplier > 0",
    );
}

const TRACE_TABLE: &str = "[traffic]\n[traffic.trace]\npath = \"t.csv\"\nformat = \"azure\"\n";

fn llama_with_trace(rows: &str) -> Result<Scenario, InputError> {
    let text = format!(
        "name = \"t\"\n[workload]\npreset = \"llama-3-8b\"\nprecision = \"fp16\"\n{TRACE_TABLE}[slo]\npercentile = 99\nttft_ms = 2000\n[[tier]]\nprofile = \"aws-g6.xlarge\"\n"
    );
    Case::new(
        &text,
        &[(
            "t.csv",
            &format!("TIMESTAMP,ContextTokens,GeneratedTokens\n{rows}"),
        )],
    )
    .load()
}

#[test]
fn a_trace_row_with_no_tokens_is_refused_naming_its_line() {
    let e = llama_with_trace(
        "2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:47.0000000,0,0\n2023-11-16 18:15:48.0000000,10,5\n",
    )
    .unwrap_err();
    assert!(e.file.as_deref().unwrap().ends_with("t.csv"), "{e}");
    assert_eq!(e.position.map(|p| p.0), Some(3), "{e}");
    assert_eq!(e.field.as_deref(), Some("ContextTokens"));
    assert_eq!(e.message, "a request with 0 input and 0 output tokens");
    // One side may be 0: a request that only reads (an embedding) or only writes.
    llama_with_trace("2023-11-16 18:15:46.6805900,374,0\n2023-11-16 18:15:47.0000000,0,5\n")
        .unwrap();
}

#[test]
fn trace_token_counts_past_the_longest_context_are_refused() {
    let e = llama_with_trace("2023-11-16 18:15:46.6805900,4000000000,44\n").unwrap_err();
    assert_eq!(e.position.map(|p| p.0), Some(2), "{e}");
    assert!(
        e.message.contains("4000000000 tokens is out of range"),
        "{e}"
    );
}

#[test]
fn a_mooncake_line_with_no_tokens_is_refused_naming_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.jsonl");
    std::fs::write(
        &p,
        "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 2}\n{\"timestamp\": 3000, \"input_length\": 0, \"output_length\": 0}\n",
    )
    .unwrap();
    let e = tco_sim::traffic::Trace::read(&p, tco_sim::traffic::TraceFormat::Mooncake).unwrap_err();
    assert_eq!(e.position.map(|p| p.0), Some(2), "{e}");
    assert_eq!(e.field.as_deref(), Some("input_length"));
    assert_eq!(e.message, "a request with 0 input and 0 output tokens");
}

#[test]
fn a_negative_time_in_a_rate_series_is_refused_at_its_line() {
    let e = with_series("-600,100\n0,100\n600,100\n").unwrap_err();
    assert!(e.file.as_deref().unwrap().ends_with("r.csv"), "{e}");
    assert_eq!(e.position, Some((2, 1)), "{e}");
    assert_eq!(e.field.as_deref(), Some("time_s"));
    assert_eq!(e.message, "window start -600 s is negative");
}

#[test]
fn a_gap_in_a_rate_series_is_a_traffic_note() {
    let s = with_series("0,100\n600,100\n1200,100\n4800,100\n5400,100\n").unwrap();
    let notes = s.traffic.notes();
    let gap = notes
        .iter()
        .find(|n| n.contains("gaps"))
        .unwrap_or_else(|| panic!("no gap note in {notes:?}"));
    assert!(
        gap.starts_with("1 window(s) of the series are longer than its usual 600 s (the first, at 1200 s, lasts 3600 s)"),
        "{gap}"
    );
    // A regular series says nothing of gaps.
    let s = with_series("0,100\n600,100\n1200,100\n").unwrap();
    assert!(!s.traffic.notes().iter().any(|n| n.contains("gaps")));
}

// --- profiles ---------------------------------------------------------------------------------

fn altra_with(from: &str, to: &str) -> Result<Profile, InputError> {
    let text = tco_sim::hardware::embedded_text("altra-q80-30-1u").unwrap();
    assert!(text.contains(from), "{from}");
    Profile::from_source(
        &SourceFile::from_text("p.toml", text.replacen(from, to, 1)),
        None,
    )
}

#[test]
fn profile_numbers_at_1e308_are_refused_with_their_range() {
    let e = altra_with(
        "purchase_usd = { value = 9500,",
        "purchase_usd = { value = 1e308,",
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("price.purchase_usd"), "{e}");
    // The line of the price in the shipped profile, the column of the value.
    let text = tco_sim::hardware::embedded_text("altra-q80-30-1u").unwrap();
    let line = text
        .lines()
        .position(|l| l.starts_with("purchase_usd = { value = 9500,"))
        .unwrap()
        + 1;
    assert_eq!(e.position, Some((line, 26)), "{e}");
    assert_eq!(e.message, "= 1e308 is out of range");
    assert_eq!(e.help.as_deref(), Some("valid: USD from 0 to 100,000,000"));
    let e = altra_with("compute = { value = 0.5,", "compute = { value = 1e-300,").unwrap_err();
    assert_eq!(e.field.as_deref(), Some("efficiency.compute"), "{e}");
    assert_eq!(e.help.as_deref(), Some("valid: a fraction from 0.001 to 1"));
}

#[test]
fn a_profile_window_the_simulator_cannot_run_is_refused() {
    let text = tco_sim::hardware::embedded_text("aws-g6.xlarge").unwrap();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("window_ms"))
        .expect("the L4 profile batches");
    let src = SourceFile::from_text("p.toml", text.replacen(line, "window_ms = 2e9", 1));
    let e = Profile::from_source(&src, None).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("batching.window_ms"));
    assert!(e.message.contains("out of range"), "{e}");
    assert_eq!(
        e.help.as_deref(),
        Some("valid: milliseconds from 0 to 10,000")
    );
}

// --- the command line: exit 2 before any work ---------------------------------------------------

fn tco() -> Command {
    let mut c = assert_cmd::cargo::cargo_bin_cmd!("tco-sim");
    c.env("NO_COLOR", "1");
    c
}

#[test]
fn validate_and_run_both_exit_2_with_the_location() {
    let case = Case::new(
        &edited(TIER_L4, &format!("{TIER_L4}window_ms = 2e9\n")),
        &[],
    );
    for cmd in [vec!["validate", "s.toml"], vec!["s.toml", "--out", "out"]] {
        tco()
            .current_dir(case.dir.path())
            .args(&cmd)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("s.toml:37:13: tier[2].window_ms"));
        assert!(!case.dir.path().join("out").exists());
    }
}

#[test]
fn calibrate_without_a_price_exits_2_naming_the_flags() {
    let dir = tempfile::tempdir().unwrap();
    tco()
        .current_dir(dir.path())
        .args(["calibrate", "--smoke", "--out", "x.toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("a profile needs a price"))
        .stderr(predicate::str::contains("--base PROFILE"))
        .stderr(predicate::str::contains("--purchase-usd"))
        .stderr(predicate::str::contains("--usd-per-hour"));
    assert!(!dir.path().join("x.toml").exists());
    // A price the profile would refuse is the user's fault too, found before measuring.
    tco()
        .current_dir(dir.path())
        .args([
            "calibrate",
            "--smoke",
            "--out",
            "x.toml",
            "--purchase-usd",
            "1e308",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--purchase-usd 1e308 is out of range",
        ));
}
