//! `tco-sim sweep` through the library and the CLI: expansion order and seeds, located errors
//! for bad paths and values, the same rows at any thread count, shards that merge into the
//! single-process table byte for byte, resuming after an interruption, and the merge's checks.
//! Most sweeps here are analytic (milliseconds a point); one is simulated, kept small.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use tco_sim::input::SourceFile;
use tco_sim::scenario::Scenario;
use tco_sim::sweep::table::Data;
use tco_sim::sweep::{self, Manifest, RunOptions, Shard, Table};

fn starter() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/starter.toml")
}

/// A sweep file in `dir` over the starter scenario, with `body` after the `scenario` line.
fn sweep_file(dir: &Path, body: &str) -> PathBuf {
    let p = dir.join("sweep.toml");
    let text = format!("scenario = {:?}\n{body}", starter().display().to_string());
    std::fs::write(&p, text).unwrap();
    p
}

const GRID: &str = r#"analytic = true
[grid]
"traffic.peak_rps" = [400, 800, 1600]
"costs.electricity_usd_per_kwh" = [0.06, 0.12]
[zip]
"tier.NVIDIA L4.max_batch" = [8, 16]
"slo.latency_ms" = [150, 250]
"#;

fn run(manifest: &Manifest, out: &Path, shard: Shard) -> sweep::RunSummary {
    sweep::execute(
        manifest,
        &RunOptions {
            out: out.to_path_buf(),
            shard,
            progress: false,
        },
    )
    .unwrap()
}

fn column<'a>(t: &'a Table, name: &str) -> &'a Data {
    &t.columns
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .data
}

#[test]
fn grid_crosses_in_file_order_and_zip_walks_together() {
    let dir = tempfile::tempdir().unwrap();
    let m = Manifest::load(&sweep_file(dir.path(), GRID), None, false).unwrap();
    assert_eq!(m.points.len(), 3 * 2 * 2);
    let names: Vec<&str> = m.axes.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "traffic.peak_rps",
            "costs.electricity_usd_per_kwh",
            "tier.NVIDIA L4.max_batch",
            "slo.latency_ms"
        ]
    );
    // The first grid axis varies slowest, the zip group fastest, its axes in step.
    let choices: Vec<Vec<usize>> = m.points.iter().map(|p| p.choice.clone()).collect();
    assert_eq!(choices[0], [0, 0, 0, 0]);
    assert_eq!(choices[1], [0, 0, 1, 1]);
    assert_eq!(choices[2], [0, 1, 0, 0]);
    assert_eq!(choices[11], [2, 1, 1, 1]);
    assert!(m.analytic);
    assert_eq!(m.max_horizon_years, 5);
    // The starter's seed, on every point; --seed replaces it.
    assert!(m.points.iter().all(|p| p.seed == 1));
    let reseeded = Manifest::load(&dir.path().join("sweep.toml"), Some(7), false).unwrap();
    assert!(reseeded.points.iter().all(|p| p.seed == 7));
    assert_ne!(reseeded.fingerprint, m.fingerprint);
}

#[test]
fn an_override_reaches_the_validated_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let m = Manifest::load(&sweep_file(dir.path(), GRID), None, false).unwrap();
    let s = Scenario::from_source(&m.point_source(&m.points[11])).unwrap();
    assert_eq!(s.costs.electricity_usd_per_kwh.value, 0.12);
    assert_eq!(s.slo.latency_s, Some(0.25));
    let l4 = s.tiers.iter().find(|t| t.name == "NVIDIA L4").unwrap();
    assert_eq!(l4.batching.max_batch, 16);
    let base = Scenario::load(&starter()).unwrap();
    assert_eq!(s.tiers[0].batching, base.tiers[0].batching);
}

#[test]
fn seed_is_an_axis_like_any_key() {
    let dir = tempfile::tempdir().unwrap();
    let m = Manifest::load(
        &sweep_file(dir.path(), "[grid]\nseed = [3, 5]\n"),
        None,
        false,
    )
    .unwrap();
    let seeds: Vec<u64> = m.points.iter().map(|p| p.seed).collect();
    assert_eq!(seeds, [3, 5]);
}

#[test]
fn shipped_scenarios_survive_the_round_trip_through_a_toml_table() {
    // Every point is the base document re-serialized; with no override it must validate to
    // the scenario the file gives. Only the line numbers in the citations of values set in the
    // file move (`starter.toml:17`), as the serializer lays the tables out in its own order;
    // a sweep's rows carry no citations.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        let src = SourceFile::read(&path).unwrap();
        let doc: toml::Table = src.parse().unwrap();
        let again = SourceFile {
            text: toml::to_string(&doc).unwrap(),
            ..src.clone()
        };
        let shown = |s: &SourceFile| {
            without_line_numbers(&format!("{:?}", Scenario::from_source(s).unwrap()))
        };
        assert_eq!(shown(&again), shown(&src), "{}", path.display());
    }
}

/// `x.toml:17` → `x.toml:_`.
fn without_line_numbers(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(".toml:") {
        out.push_str(&rest[..i + 6]);
        rest = rest[i + 6..].trim_start_matches(|c: char| c.is_ascii_digit());
        out.push('_');
    }
    out.push_str(rest);
    out
}

fn error_of(body: &str) -> tco_sim::input::InputError {
    let dir = tempfile::tempdir().unwrap();
    Manifest::load(&sweep_file(dir.path(), body), None, false).unwrap_err()
}

#[test]
fn a_misspelt_key_is_located_at_the_sweep_key_with_a_suggestion() {
    let e = error_of("[grid]\n\"traffic.peak_rsp\" = [400, 800]\n");
    assert!(e.file.as_deref().unwrap().ends_with("sweep.toml"));
    assert_eq!(e.position, Some((3, 1)));
    assert_eq!(e.field.as_deref(), Some("traffic.peak_rsp"));
    assert_eq!(e.message, "unknown key `peak_rsp`");
    assert!(
        e.help
            .as_deref()
            .unwrap()
            .contains("did you mean `peak_rps`?"),
        "{e}"
    );
}

#[test]
fn a_misspelt_tier_name_suggests_the_nearest_tier() {
    let e = error_of("[grid]\n\"tier.NVIDA L4.max_batch\" = [8]\n");
    assert_eq!(e.position, Some((3, 1)));
    assert_eq!(e.message, "no tier named `NVIDA L4`");
    assert!(
        e.help
            .as_deref()
            .unwrap()
            .starts_with("did you mean `NVIDIA L4`?"),
        "{e}"
    );
}

#[test]
fn a_bad_value_is_located_at_that_value() {
    let e = error_of("[grid]\n\"costs.pue\" = [1.2, 1.4,\n  -1.0]\n");
    assert_eq!(e.position, Some((4, 3)));
    assert_eq!(e.field.as_deref(), Some("costs.pue"));
    assert!(e.message.contains("-1 is out of range"), "{e}");
    let shown = e.to_string();
    assert!(
        shown.starts_with("sweep.toml:4:3: costs.pue:")
            || shown.contains("sweep.toml:4:3: costs.pue:")
    );
    assert!(shown.contains("4 |   -1.0]"), "{shown}");
}

#[test]
fn a_wrong_type_is_located_at_that_value() {
    let e = error_of("[grid]\n\"traffic.peak_rps\" = [400, \"lots\"]\n");
    assert_eq!(e.position, Some((3, 28)));
    assert_eq!(e.field.as_deref(), Some("traffic.peak_rps"));
}

#[test]
fn structural_mistakes_in_the_sweep_file_are_refused() {
    let e = error_of("[zip]\n\"traffic.peak_rps\" = [400, 800]\n\"costs.pue\" = [1.2]\n");
    assert_eq!(e.position, Some((4, 1)));
    assert!(e.message.contains("has 1 values"), "{e}");
    let e = error_of("[grid]\n\"costs.pue\" = []\n");
    assert_eq!(e.message, "has no values");
    let e = error_of("[grid]\n\"traffic.peak_rps.x\" = [1]\n");
    assert!(e.message.contains("not a table"), "{e}");
    let e = error_of("[grid]\n\"tier[7].max_batch\" = [1]\n");
    assert!(e.message.contains("past the end"), "{e}");
    let e = error_of("[grid]\n\"point\" = [1]\n");
    assert!(e.message.contains("output column"), "{e}");
    let e = error_of("[grdi]\n\"costs.pue\" = [1.2]\n");
    assert!(
        e.help.as_deref().unwrap().contains("did you mean `grid`?"),
        "{e}"
    );
}

#[test]
fn shards_merge_into_the_single_process_table_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let m = Manifest::load(&sweep_file(dir.path(), GRID), None, false).unwrap();
    let whole = dir.path().join("whole");
    let s = run(&m, &whole, Shard::WHOLE);
    assert_eq!((s.points_run, s.points_skipped), (12, 0));
    // 12 points × (Altra on-prem + OCI on-demand + L4 on-demand and reserved-3y).
    assert_eq!(s.rows, 48);
    let shards = dir.path().join("shards");
    let mut held = 0;
    for index in 0..5 {
        held += run(&m, &shards, Shard { index, count: 5 }).points_in_shard;
    }
    assert_eq!(held, 12);
    let merged = dir.path().join("merged.parquet");
    let ms = sweep::merge(&[shards], &merged).unwrap();
    assert_eq!((ms.files, ms.points, ms.rows), (5, 12, 48));
    let bytes = |p: PathBuf| std::fs::read(p).unwrap();
    assert_eq!(
        bytes(dir.path().join("merged.csv")),
        bytes(whole.join("results.csv"))
    );
    assert_eq!(bytes(merged.clone()), bytes(whole.join("results.parquet")));
    let table = sweep::parquet::read(&merged).unwrap();
    assert_eq!(table.rows(), 48);
    assert_eq!(
        table.csv(),
        std::fs::read_to_string(whole.join("results.csv")).unwrap()
    );
    // The axis values are typed columns: integers stay integers, prices are numbers.
    assert!(matches!(column(&table, "traffic.peak_rps"), Data::I64(v) if v[47] == Some(1600)));
    assert!(
        matches!(column(&table, "costs.electricity_usd_per_kwh"), Data::F64(v) if v[0] == Some(0.06))
    );
    assert!(matches!(column(&table, "point_seed"), Data::U64(_)));
    // One recommendation per point.
    let Data::Bool(rec) = column(&table, "recommended") else {
        panic!()
    };
    assert_eq!(rec.iter().filter(|r| **r == Some(true)).count(), 12);
}

#[test]
fn more_traffic_never_needs_fewer_units() {
    let dir = tempfile::tempdir().unwrap();
    let m = Manifest::load(&sweep_file(dir.path(), GRID), None, false).unwrap();
    run(&m, dir.path(), Shard::WHOLE);
    let t = sweep::parquet::read(&dir.path().join("results.parquet")).unwrap();
    let (Data::I64(rps), Data::Str(tier), Data::I64(units)) = (
        column(&t, "traffic.peak_rps"),
        column(&t, "tier"),
        column(&t, "units_year_5"),
    ) else {
        panic!()
    };
    let altra = |peak| {
        (0..t.rows())
            .filter(|&i| rps[i] == Some(peak) && tier[i].as_deref() == Some("Altra Q80 on-prem"))
            .map(|i| units[i].unwrap())
            .max()
            .unwrap()
    };
    assert!(altra(400) < altra(1600), "{} {}", altra(400), altra(1600));
}

#[test]
fn the_same_sweep_gives_the_same_rows_at_one_and_two_threads_simulated() {
    // Simulated, small: one replication of a short window, two points.
    let body = "[grid]\n\"simulation.replications\" = [1]\n\"simulation.window_s\" = [120]\n\"simulation.warmup_s\" = [20]\n\"traffic.peak_rps\" = [400, 800]\n";
    let dir = tempfile::tempdir().unwrap();
    let m = Manifest::load(&sweep_file(dir.path(), body), None, false).unwrap();
    assert!(!m.analytic);
    let csv_at = |threads: usize| {
        let out = dir.path().join(format!("t{threads}"));
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| run(&m, &out, Shard::WHOLE));
        std::fs::read_to_string(out.join("results.csv")).unwrap()
    };
    let one = csv_at(1);
    assert_eq!(one, csv_at(2));
    // Simulated rows carry the SLO percentile's latency, analytic ones do not.
    let t = sweep::parquet::read(&dir.path().join("t1/results.parquet")).unwrap();
    let Data::F64(lat) = column(&t, "slo_latency_s") else {
        panic!()
    };
    assert!(
        lat.iter().flatten().all(|&s| s > 0.0 && s <= 0.2),
        "{lat:?}"
    );
    assert!(lat.iter().any(Option::is_some));
}

#[test]
fn an_interrupted_sweep_resumes_and_gives_the_same_rows() {
    let dir = tempfile::tempdir().unwrap();
    let m = Manifest::load(&sweep_file(dir.path(), GRID), None, false).unwrap();
    let out = dir.path().join("out");
    run(&m, &out, Shard::WHOLE);
    let full = std::fs::read(out.join("results.csv")).unwrap();
    // Keep the header and three finished points, then half a line: a task killed mid-write.
    let journal = out.join("results.journal");
    let text = std::fs::read_to_string(&journal).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let torn = &lines[4][..lines[4].len() / 2];
    std::fs::write(&journal, format!("{}\n{torn}", lines[..4].join("\n"))).unwrap();
    std::fs::remove_file(out.join("results.parquet")).unwrap();
    std::fs::remove_file(out.join("results.csv")).unwrap();
    let s = run(&m, &out, Shard::WHOLE);
    assert_eq!((s.points_skipped, s.points_run), (3, 9));
    assert_eq!(std::fs::read(out.join("results.csv")).unwrap(), full);
    // Run again: nothing left to do, same files.
    let s = run(&m, &out, Shard::WHOLE);
    assert_eq!((s.points_skipped, s.points_run), (12, 0));
    assert_eq!(std::fs::read(out.join("results.csv")).unwrap(), full);
}

#[test]
fn a_journal_of_another_sweep_is_not_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let m = Manifest::load(&sweep_file(dir.path(), GRID), None, false).unwrap();
    run(&m, &out, Shard::WHOLE);
    let other = Manifest::load(&dir.path().join("sweep.toml"), Some(9), false).unwrap();
    let e = sweep::execute(
        &other,
        &RunOptions {
            out,
            shard: Shard::WHOLE,
            progress: false,
        },
    )
    .unwrap_err();
    assert!(
        format!("{e:#}").contains("journal of another sweep"),
        "{e:#}"
    );
}

#[test]
fn merge_refuses_missing_duplicate_and_foreign_shards() {
    let dir = tempfile::tempdir().unwrap();
    let m = Manifest::load(&sweep_file(dir.path(), GRID), None, false).unwrap();
    let shards = dir.path().join("shards");
    run(&m, &shards, Shard { index: 0, count: 3 });
    run(&m, &shards, Shard { index: 2, count: 3 });
    let out = dir.path().join("m.parquet");
    let e = sweep::merge(std::slice::from_ref(&shards), &out).unwrap_err();
    assert!(
        format!("{e:#}").contains("4 of 12 points are missing: 1, 4, 7, 10"),
        "{e:#}"
    );
    assert!(!out.exists());
    let s0 = shards.join("shard-0-of-3.parquet");
    let copy = dir.path().join("again.parquet");
    std::fs::copy(&s0, &copy).unwrap();
    let e = sweep::merge(&[s0.clone(), copy], &out).unwrap_err();
    assert!(format!("{e:#}").contains("point 0 is in both"), "{e:#}");
    let other = Manifest::load(&dir.path().join("sweep.toml"), Some(9), false).unwrap();
    let foreign = dir.path().join("foreign");
    run(&other, &foreign, Shard { index: 1, count: 3 });
    let e = sweep::merge(&[shards, foreign], &out).unwrap_err();
    assert!(format!("{e:#}").contains("from another sweep"), "{e:#}");
}

fn tco() -> Command {
    Command::cargo_bin("tco-sim").unwrap()
}

#[test]
fn cli_runs_slurm_array_tasks_and_merges_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = sweep_file(dir.path(), GRID);
    let shards = dir.path().join("shards");
    // What `sbatch --array=1-3` gives each task.
    for id in 1..=3 {
        tco()
            .args([
                "sweep",
                file.to_str().unwrap(),
                "--out",
                shards.to_str().unwrap(),
                "-q",
            ])
            .env("SLURM_ARRAY_TASK_ID", id.to_string())
            .env("SLURM_ARRAY_TASK_COUNT", "3")
            .env("SLURM_ARRAY_TASK_MIN", "1")
            .env_remove("JOB_COMPLETION_INDEX")
            .assert()
            .success();
    }
    for i in 0..3 {
        assert!(shards.join(format!("shard-{i}-of-3.parquet")).is_file());
    }
    let merged = dir.path().join("all.parquet");
    tco()
        .args([
            "sweep",
            "merge",
            shards.to_str().unwrap(),
            "--out",
            merged.to_str().unwrap(),
        ])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "merged 3 files: 12 points, 48 rows",
        ));
    let whole = dir.path().join("whole");
    tco()
        .args([
            "sweep",
            file.to_str().unwrap(),
            "--out",
            whole.to_str().unwrap(),
        ])
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env_remove("JOB_COMPLETION_INDEX")
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "12 points, shard 0/1 holds 12: 12 run",
        ));
    assert_eq!(
        std::fs::read(dir.path().join("all.csv")).unwrap(),
        std::fs::read(whole.join("results.csv")).unwrap()
    );
}

#[test]
fn cli_takes_a_kubernetes_index_with_its_count() {
    let dir = tempfile::tempdir().unwrap();
    let file = sweep_file(dir.path(), GRID);
    let out = dir.path().join("k8s");
    tco()
        .args([
            "sweep",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--shard-count",
            "4",
            "-q",
        ])
        .env("JOB_COMPLETION_INDEX", "3")
        .assert()
        .success();
    assert!(out.join("shard-3-of-4.parquet").is_file());
    tco()
        .args([
            "sweep",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .env("JOB_COMPLETION_INDEX", "3")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--shard-count"));
}

#[test]
fn cli_bad_sweep_file_exits_2_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let file = sweep_file(dir.path(), "[grid]\n\"traffic.peak_rsp\" = [400]\n");
    let out = dir.path().join("out");
    tco()
        .args([
            "sweep",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "sweep.toml:3:1: traffic.peak_rsp: unknown key `peak_rsp`",
        ))
        .stderr(predicates::str::contains("did you mean `peak_rps`?"));
    assert!(!out.exists());
}

#[test]
fn a_list_of_scenarios_is_the_outermost_axis() {
    let dir = tempfile::tempdir().unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let p = dir.path().join("two.toml");
    let list = format!(
        "scenarios = [{:?}, {:?}]\nanalytic = true\n[grid]\n\"costs.pue\" = [1.2, 1.5]\n",
        shipped.join("starter.toml").display().to_string(),
        shipped.join("embedding-api.toml").display().to_string()
    );
    std::fs::write(&p, &list).unwrap();
    let m = Manifest::load(&p, None, false).unwrap();
    let which: Vec<(usize, usize)> = m.points.iter().map(|p| (p.scenario, p.choice[0])).collect();
    assert_eq!(which, [(0, 0), (0, 1), (1, 0), (1, 1)]);
    run(&m, dir.path(), Shard::WHOLE);
    let t = sweep::parquet::read(&dir.path().join("results.parquet")).unwrap();
    let Data::Str(s) = column(&t, "scenario") else {
        panic!()
    };
    assert!(
        s.first()
            .unwrap()
            .as_deref()
            .unwrap()
            .ends_with("starter.toml")
    );
    assert!(
        s.last()
            .unwrap()
            .as_deref()
            .unwrap()
            .ends_with("embedding-api.toml")
    );
    // A tier name must exist in every listed scenario; the error says which one lacks it.
    std::fs::write(&p, list.replace("costs.pue", "tier.NVIDIA L4.max_batch")).unwrap();
    let e = Manifest::load(&p, None, false).unwrap_err();
    assert!(
        e.message.contains("in ") && e.message.contains("embedding-api.toml"),
        "{e}"
    );
    assert!(
        e.help
            .as_deref()
            .unwrap()
            .contains("did you mean `NVIDIA L4 g6.xlarge`?"),
        "{e}"
    );
}
