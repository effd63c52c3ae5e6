//! `tco-sim calibrate` end to end through `app::calibrate` (which builds `calibrate::Options`,
//! runs `calibrate::run`, writes the profile and prints the summary): every kernel runs through
//! the real path (tiny shapes, `smoke`), the written profile loads and validates with the same
//! loader a scenario uses, and bad input fails before anything is measured.

use std::path::Path;

use tco_sim::app;
use tco_sim::calibrate;
use tco_sim::cite::Basis;
use tco_sim::cli::CalibrateArgs;
use tco_sim::hardware::file::ProfileFile;
use tco_sim::hardware::{Precision, Profile, ProfileSearch, UnitKind};
use tco_sim::input::{InputError, SourceFile};

fn smoke(out: &Path) -> CalibrateArgs {
    CalibrateArgs {
        out: out.to_path_buf(),
        smoke: true,
        ..CalibrateArgs::default()
    }
}

#[test]
fn calibrating_on_an_altra_base_keeps_prices_and_power_and_measures_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("local.toml");
    let args = CalibrateArgs {
        base: Some("altra-q80-30-1u".into()),
        ..smoke(&out)
    };
    app::calibrate(&args).unwrap();

    // A scenario names the file by path; the loader validates every number and source.
    let p = ProfileSearch::default()
        .load("local.toml", dir.path())
        .unwrap();
    assert_eq!(p.name, "local");
    assert_eq!(p.kind, UnitKind::Cpu);
    let base = ProfileSearch::default()
        .load("altra-q80-30-1u", Path::new("."))
        .unwrap();
    assert_eq!(p.prices, base.prices);
    assert_eq!(p.idle_power_w, base.idle_power_w);
    assert_eq!(p.peak_power_w, base.peak_power_w);
    assert_eq!(p.description, base.description);

    for c in [&p.efficiency_compute, &p.chips] {
        assert_eq!(c.basis, Basis::Measured, "{c}");
        assert!(c.source.key.starts_with("calibrate-"), "{c}");
        assert!(tco_sim::cite::is_date(&c.source.date));
    }
    let e_c = p.efficiency_compute.value;
    assert!(e_c > 0.0 && e_c <= 1.0);
    assert!(p.efficiency_memory.value > 0.0 && p.efficiency_memory.value <= 1.0);
    // Measured throughput = peak × efficiency for fp32 and int8 (the roofline's P·e_c).
    assert!(p.unit_peak(Precision::Fp32).unwrap() > 0.0);
    assert!(p.unit_peak(Precision::Int8).unwrap() > 0.0);
    assert!(
        p.unit_peak(Precision::Fp16).is_none(),
        "fp16 is not measured, so not stated"
    );
    let cal = p.calibration.as_ref().unwrap();
    assert!(cal.method.contains("altra-q80-30-1u"), "{}", cal.method);
    assert!(
        cal.measured.keys().any(|k| k.starts_with("triad")),
        "{:?}",
        cal.measured
    );
    let cores = std::thread::available_parallelism().unwrap().get() as f64;
    assert_eq!(p.slots() as f64, cores);

    // No temporary file is left beside the profile.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
}

#[test]
fn without_a_base_the_profile_carries_the_given_price_and_measured_bandwidth() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("laptop.toml");
    let args = CalibrateArgs {
        usd_per_hour: Some(0.096),
        ..smoke(&out)
    };
    app::calibrate(&args).unwrap();
    let src = SourceFile::read(&out).unwrap();
    let p = Profile::from_source(&src, Some("laptop")).unwrap();
    assert_eq!(
        p.prices.on_demand_usd_per_hour.as_ref().unwrap().value,
        0.096
    );
    assert_eq!(
        p.prices.on_demand_usd_per_hour.as_ref().unwrap().basis,
        Basis::UserInput
    );
    // No theoretical bandwidth known: the triad is the bandwidth, at efficiency 1.
    assert_eq!(p.efficiency_memory.value, 1.0);
    assert_eq!(p.memory_bandwidth_per_chip.basis, Basis::Measured);
    // The raw file round-trips through the format's own types.
    let raw: ProfileFile = src.parse().unwrap();
    assert_eq!(raw.name.get_ref(), "laptop");
}

#[test]
fn a_missing_base_profile_is_the_loaders_input_error_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.toml");
    let args = CalibrateArgs {
        base: Some("altra-q80-30-1x".into()),
        ..smoke(&out)
    };
    let e = app::calibrate(&args).unwrap_err();
    let input = e.downcast_ref::<InputError>().expect("an InputError");
    assert_eq!(input.message, "unknown hardware profile `altra-q80-30-1x`");
    assert!(
        input
            .help
            .as_deref()
            .unwrap()
            .starts_with("did you mean `altra-q80-30-1u`?")
    );
    assert!(!out.exists());

    let args = CalibrateArgs {
        base: Some(dir.path().join("nope.toml").display().to_string()),
        ..smoke(&out)
    };
    let e = app::calibrate(&args).unwrap_err();
    assert_eq!(
        e.downcast_ref::<InputError>().unwrap().message,
        "no such file"
    );
}

#[test]
fn no_price_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.toml");
    let e = app::calibrate(&smoke(&out)).unwrap_err();
    assert!(e.to_string().contains("a profile needs a price"), "{e}");
    assert!(!out.exists());
}

#[derive(clap::Parser)]
struct Cli {
    #[command(flatten)]
    args: CalibrateArgs,
}

#[test]
fn the_flags_parse_as_the_cli_will_see_them() {
    use clap::Parser;
    let c = Cli::try_parse_from(["calibrate"]).unwrap();
    assert_eq!(c.args.out, Path::new("local.toml"));
    assert!(!c.args.quick && !c.args.smoke && c.args.base.is_none());
    let c = Cli::try_parse_from([
        "calibrate",
        "--quick",
        "--base",
        "altra-q80-30-1u",
        "--out",
        "hardware-profiles/local.toml",
        "--memory-bandwidth-gbps",
        "204.8",
    ])
    .unwrap();
    assert!(c.args.quick);
    assert_eq!(c.args.memory_bandwidth_gbps, Some(204.8));
    let c =
        Cli::try_parse_from(["calibrate", "--duration", "120", "--usd-per-hour", "0.5"]).unwrap();
    assert_eq!(c.args.duration, Some(120.0));
    assert!(Cli::try_parse_from(["calibrate", "--quick", "--duration", "5"]).is_err());
}

#[test]
fn the_quick_plan_is_small_and_the_default_plan_covers_the_inference_shapes() {
    use tco_sim::calibrate::suite::Plan;
    let llc = Some(480u64 << 20);
    let mem = Some(24u64 << 30);
    let quick = Plan::new(true, calibrate::QUICK_SECONDS, llc, mem);
    let full = Plan::new(false, calibrate::DEFAULT_SECONDS, llc, mem);
    assert!(quick.square.iter().all(|&n| n <= 2048));
    assert!(quick.time < full.time);
    assert_eq!(quick.stream_elems * 4, 480 << 20);
    assert_eq!(
        full.stream_elems * 4,
        4 * (480 << 20),
        "STREAM: 4 x the last-level cache"
    );
    assert_eq!(full.square, [1024, 2048, 4096]);
    let batches: Vec<usize> = full.skinny.iter().map(|s| s.0).collect();
    assert_eq!(batches, [1, 16, 64]);
    assert!(full.skinny.iter().all(|&(_, k, n)| k == 8192 && n == 8192));
}

/// The real `--quick` run, every kernel at its real size (about 5 s: the test profile compiles
/// tco-sim optimised), and then a scenario that names the written profile by path runs on it.
#[test]
fn quick_calibration_of_this_machine_validates_and_a_scenario_runs_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("here.toml");
    let args = CalibrateArgs {
        out: out.clone(),
        quick: true,
        usd_per_hour: Some(0.1),
        ..CalibrateArgs::default()
    };
    app::calibrate(&args).unwrap();
    let p = Profile::from_source(&SourceFile::read(&out).unwrap(), Some("here")).unwrap();
    assert!(p.efficiency_compute.value > 0.0);
    let scenario = dir.path().join("s.toml");
    std::fs::write(
        &scenario,
        r#"name = "on this machine"
horizon_years = 2
[workload]
preset = "resnet-50"
precision = "fp32"
[traffic]
pattern = "constant"
peak_rps = 20
[slo]
percentile = 99
latency_ms = 2000
[[tier]]
name = "this machine"
profile = "here.toml"
[simulation]
window_s = 60
warmup_s = 5
replications = 2
"#,
    )
    .unwrap();
    let s = tco_sim::scenario::Scenario::load(&scenario).unwrap();
    assert_eq!(s.tiers[0].profile.name, "here");
    let method = tco_sim::results::Method::Simulated { replications: 2 };
    let r = tco_sim::results::plan(&s, method, &|_, _| {}).unwrap();
    assert!(r.tiers[0].meets_slo(), "{:?}", r.notes);
    assert!(r.tiers[0].options[0].total_usd > 0.0);
}
