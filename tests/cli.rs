//! The command line, end to end: each subcommand, determinism of the written files, and one
//! test per class of bad input (each must exit 2, name the file, line and column, and write
//! nothing).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

fn tco() -> Command {
    let mut c = assert_cmd::cargo::cargo_bin_cmd!("tco-sim");
    c.env("NO_COLOR", "1");
    c
}

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// A small valid scenario; tests break one thing at a time.
const GOOD: &str = r#"name = "cli test"
horizon_years = 3

[workload]
preset = "resnet-50"
precision = "int8"

[traffic]
peak_rps = 400
mean_rps = 150
growth_per_year = 0.3

[slo]
percentile = 99
latency_ms = 200

[[tier]]
profile = "altra-max-m128-30-1u"

[[tier]]
profile = "aws-inf2.xlarge"

[costs]
pue = 1.4
"#;

struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    fn new(scenario: &str) -> Case {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.toml"), scenario).unwrap();
        Case { dir }
    }
    fn path(&self) -> PathBuf {
        self.dir.path().join("s.toml")
    }
    fn out(&self) -> PathBuf {
        self.dir.path().join("out")
    }
    /// Run the scenario into `out/`.
    fn run(&self) -> assert_cmd::assert::Assert {
        tco()
            .arg(self.path())
            .arg("--out")
            .arg(self.out())
            .arg("--analytic")
            .assert()
    }
    /// Bad input: exit 2, the message names the place, and no output folder appears.
    fn fails_with(&self, line_col: &str, field: &str, words: &[&str]) {
        let mut a = self
            .run()
            .code(2)
            .stderr(predicate::str::contains(format!("s.toml:{line_col}: ")))
            .stderr(predicate::str::contains(field));
        for w in words {
            a = a.stderr(predicate::str::contains(*w));
        }
        assert!(!self.out().exists(), "nothing may be written on bad input");
    }
}

#[test]
fn runs_a_shipped_scenario_and_writes_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let run = tco()
        .arg(repo("scenarios/seed-8xh100.toml"))
        .arg("--out")
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("$871,912"))
        .stdout(predicate::str::contains("Recommendation:"))
        .stdout(predicate::str::contains("results.json"));
    let out = String::from_utf8_lossy(&run.get_output().stdout).into_owned();
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("results.json")).unwrap()).unwrap();
    assert_eq!(json["schema_version"], 3);
    assert_eq!(json["tiers"].as_array().unwrap().len(), 2);
    // Each generative tier's operating point and the accuracy suite's rows near it: in the
    // JSON, and the same sentence in the terminal and the PDF.
    let pdf = Command::new("pdftotext")
        .arg(dir.path().join("report.pdf"))
        .arg("-")
        .output()
        .expect("pdftotext (poppler-utils) runs");
    let pdf = String::from_utf8_lossy(&pdf.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for t in json["tiers"].as_array().unwrap() {
        let e = &t["suite_evidence"];
        let n = e["sequences_per_replica"]
            .as_f64()
            .expect("an operating point");
        let rows = e["rows"].as_array().expect("rows").len();
        assert!(n > 0.0 && rows > 0, "{e}");
        let said = format!(
            "{}: {n:.1} sequences in flight per replica at the last year's planned fleet; the accuracy suite's {rows} held-out throughput rows",
            t["name"].as_str().unwrap()
        );
        assert!(out.contains(&said), "{said}\n{out}");
        assert!(pdf.contains(&said), "{said}\n{pdf}");
    }
    let csv = std::fs::read_to_string(dir.path().join("results.csv")).unwrap();
    // header + 1 on-prem + 3 cloud options, 5 years each
    assert_eq!(csv.lines().count(), 1 + 4 * 5);
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .starts_with("tier,profile,option,year,units")
    );
}

#[test]
fn same_inputs_and_seed_give_byte_identical_files_at_any_thread_count() {
    let case = Case::new(GOOD);
    let mut outputs = Vec::new();
    for threads in ["1", "2", "4"] {
        let out = case.dir.path().join(format!("out-{threads}"));
        tco()
            .arg(case.path())
            .args([
                "--out",
                out.to_str().unwrap(),
                "--threads",
                threads,
                "--seed",
                "7",
                "-q",
            ])
            .assert()
            .success();
        outputs.push((
            std::fs::read(out.join("results.json")).unwrap(),
            std::fs::read(out.join("results.csv")).unwrap(),
            // The uncertainty analysis (tornado, flip points, Monte Carlo) too.
            std::fs::read(out.join("sensitivity.csv")).unwrap(),
            std::fs::read(out.join("uncertainty.csv")).unwrap(),
        ));
    }
    let json = String::from_utf8(outputs[0].0.clone()).unwrap();
    assert!(json.contains("\"flip_points\"") && json.contains("\"p_cheapest\""));
    assert!(outputs.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn json_on_stdout() {
    let case = Case::new(GOOD);
    let out = tco()
        .arg(case.path())
        .args(["--no-report", "--format", "json", "--analytic"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["scenario"]["name"], "cli test");
    assert!(!case.out().exists());
}

#[test]
fn toml_syntax_error() {
    Case::new(&GOOD.replace("[traffic]", "[traffic")).fails_with("8:9", "", &["unclosed table"]);
}

#[test]
fn wrong_type_names_the_field_path() {
    Case::new(&GOOD.replace("peak_rps = 400", "peak_rps = \"lots\"")).fails_with(
        "9:12",
        "traffic.peak_rps",
        &["expected a number"],
    );
}

#[test]
fn unknown_key_suggests_the_nearest() {
    Case::new(&GOOD.replace("pue = 1.4", "pue_ratio = 1.4")).fails_with(
        "24:1",
        "costs.pue_ratio",
        &["unknown key `pue_ratio`", "did you mean `pue`?"],
    );
}

#[test]
fn unknown_profile_lists_the_available_ones() {
    Case::new(&GOOD.replace("aws-inf2.xlarge", "aws-inf3.xlarge")).fails_with(
        "21:11",
        "tier[1].profile",
        &[
            "unknown hardware profile `aws-inf3.xlarge`",
            "did you mean `aws-inf2.xlarge`?",
            "hgx-h100-8x",
        ],
    );
}

#[test]
fn unknown_option_value_suggests_the_nearest() {
    Case::new(&GOOD.replace(
        "profile = \"aws-inf2.xlarge\"",
        "profile = \"aws-inf2.xlarge\"\noptions = [\"on-dmand\"]",
    ))
    .fails_with(
        "22:12",
        "tier[1].options[0]",
        &["unknown value `on-dmand`", "did you mean `on-demand`?"],
    );
}

#[test]
fn negative_number_is_out_of_range() {
    Case::new(&GOOD.replace("mean_rps = 150", "mean_rps = -150")).fails_with(
        "10:12",
        "traffic.mean_rps",
        &["-150", "valid:"],
    );
}

#[test]
fn zero_where_invalid() {
    Case::new(&GOOD.replace("latency_ms = 200", "latency_ms = 0")).fails_with(
        "15:14",
        "slo.latency_ms",
        &["= 0 is out of range", "valid: milliseconds > 0"],
    );
}

#[test]
fn nan_is_rejected() {
    Case::new(&GOOD.replace("pue = 1.4", "pue = nan")).fails_with(
        "24:7",
        "costs.pue",
        &["not a number", "valid: a PUE from 1.0 to 5.0"],
    );
}

#[test]
fn infinite_is_rejected() {
    Case::new(&GOOD.replace("pue = 1.4", "pue = 1.4\negress_usd_per_gb = inf")).fails_with(
        "25:21",
        "costs.egress_usd_per_gb",
        &["infinite", "valid: USD per GB"],
    );
}

#[test]
fn percentile_outside_0_100() {
    Case::new(&GOOD.replace("percentile = 99", "percentile = 100")).fails_with(
        "14:14",
        "slo.percentile",
        &["strictly between 0 and 100"],
    );
}

#[test]
fn missing_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    tco()
        .arg(dir.path().join("nope.toml"))
        .arg("--out")
        .arg(dir.path().join("out"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nope.toml: no such file"));
    assert!(!dir.path().join("out").exists());
}

#[test]
fn a_model_too_big_for_the_unit_names_memory_needed_and_available() {
    let s = GOOD
        .replace(
            "preset = \"resnet-50\"\nprecision = \"int8\"",
            "preset = \"llama-2-70b\"\nprecision = \"fp16\"",
        )
        .replace("[[tier]]\nprofile = \"altra-max-m128-30-1u\"\n\n", "");
    Case::new(&s).fails_with(
        "18:11",
        "tier[0].profile",
        &["does not fit", "GB", "usable"],
    );
}

#[test]
fn validate_checks_scenarios_and_profiles_and_writes_nothing() {
    tco()
        .arg("validate")
        .arg(repo("scenarios/seed-8xh100.toml"))
        .arg(repo("hardware-profiles/hgx-h100-8x.toml"))
        .assert()
        .success()
        .stdout(predicate::str::contains("ok: "))
        .stdout(predicate::str::contains("every one cited and dated"));
    let bad = Case::new(&GOOD.replace("pue = 1.4", "pue = 0.5"));
    tco()
        .arg("validate")
        .arg(bad.path())
        .arg(repo("scenarios/seed-8xh100.toml"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("costs.pue"))
        .stderr(predicate::str::contains("1 of 2 files are invalid"));
}

#[test]
fn profiles_lists_every_shipped_unit_and_shows_sources() {
    let mut a = tco().arg("profiles").assert().success();
    for name in tco_sim::hardware::embedded_names() {
        a = a.stdout(predicate::str::contains(name));
    }
    tco()
        .args(["profiles", "aws-p5.48xlarge"])
        .assert()
        .success()
        .stdout(predicate::str::contains("price.on_demand_usd_per_hour"))
        .stdout(predicate::str::contains("55.04"))
        .stdout(predicate::str::contains("2026"));
}

#[test]
fn init_writes_a_starter_that_runs_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("mine.toml");
    tco().arg("init").arg(&p).assert().success();
    tco()
        .arg(&p)
        .arg("--out")
        .arg(dir.path().join("out"))
        .assert()
        .success()
        .stdout(predicate::str::contains("Recommendation:"));
    tco()
        .arg("init")
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"));
}

#[test]
fn completions_and_usage() {
    tco()
        .args(["completions", "bash"])
        .assert()
        .success()
        .stdout(predicate::str::contains("tco-sim"));
    tco()
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no scenario file given"));
}

#[test]
fn every_shipped_scenario_validates() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 6, "{files:?}");
    tco().arg("validate").args(&files).assert().success();
}

#[test]
fn simulate_prints_the_latency_table_per_tier_and_fleet_size() {
    let case = Case::new(GOOD);
    tco()
        .args(["simulate"])
        .arg(case.path())
        .args(["--units", "1,2", "--replications", "2", "--year", "2"])
        .assert()
        .success()
        .stdout(predicate::str::contains("year 2 design traffic"))
        .stdout(predicate::str::contains("p99 ± 95 % CI"))
        .stdout(predicate::str::contains("aws-inf2.xlarge"))
        .stdout(predicate::str::contains("Little"));
    let out = tco()
        .args(["simulate", "--format", "json", "--units", "1"])
        .arg(case.path())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let rows: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 2, "one row per tier");
    assert!(
        rows[0]["report"]["little"]["relative_error"]
            .as_f64()
            .unwrap()
            < 0.01
    );
    tco()
        .args(["simulate", "--year", "9"])
        .arg(case.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("outside the horizon"));
}

#[test]
fn a_missing_profile_file_points_at_the_tier_that_names_it() {
    Case::new(&GOOD.replace(
        "profile = \"aws-inf2.xlarge\"",
        "profile = \"profiles/mine.toml\"",
    ))
    .fails_with(
        "21:11",
        "tier[1].profile",
        &["profile file", "mine.toml: no such file"],
    );
}

#[test]
fn a_tier_that_cannot_keep_up_within_max_units_is_not_costed() {
    let s = GOOD.replace(
        "peak_rps = 400\nmean_rps = 150",
        "peak_rps = 4000000\nmean_rps = 1500000",
    ) + "[simulation]\nmax_units = 2\nwindow_s = 30\nwarmup_s = 5\nreplications = 1\n";
    let case = Case::new(&s);
    let out = tco()
        .arg(case.path())
        .args(["--no-report", "--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let r: serde_json::Value = serde_json::from_slice(&out).unwrap();
    for t in r["tiers"].as_array().unwrap() {
        assert!(t["options"].as_array().unwrap().is_empty(), "{}", t["name"]);
        assert!(t["infeasible"].as_str().unwrap().contains("cannot keep up"));
    }
    assert!(r["recommendation"].is_null());
}

/// A reader that closes the pipe early (`tco-sim profiles | head -1`) ends the program quietly:
/// exit 0, nothing on standard error — where `println!` panicked with "failed printing to
/// stdout" and a backtrace.
#[test]
fn a_reader_that_closes_the_pipe_early_gets_no_panic_and_no_error() {
    use std::process::{Command as Std, Stdio};
    let mut child = Std::new(assert_cmd::cargo::cargo_bin!("tco-sim"))
        .args(["profiles", "aws-p5.48xlarge"])
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the read end before the program writes: its first write meets a broken pipe.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}: {stderr}", out.status);
    assert!(stderr.is_empty(), "standard error: {stderr}");
}

/// `accuracy --markdown` prints the README's summary block and nothing else; with `--fit` (whose
/// constants the block does not show) clap refuses the pair before any row runs.
#[test]
fn accuracy_markdown_refuses_fit_before_running() {
    tco()
        .args(["accuracy", "--markdown", "--fit"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--fit").and(predicate::str::contains("--markdown")));
}
