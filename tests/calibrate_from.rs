//! `tco-sim calibrate --from`: fits from each format reproduce their figures, bad input gets a
//! located error, and the issue's measurement — one Offline and one Server MLPerf summary of the
//! same system — is reproduced within 5 % (issue 10, item 3). Data: tests/data/calibrate/README.md.

use std::path::{Path, PathBuf};

use tco_sim::calibrate::fit::{self, FromOptions, MAX_RMS};
use tco_sim::calibrate::runs;
use tco_sim::hardware::Profile;
use tco_sim::input::SourceFile;

const DATA: &str = "tests/data/calibrate";
const H100: &str =
    "tests/data/calibrate/mlperf-v4.0/closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/resnet50";

fn offline() -> PathBuf {
    Path::new(H100).join("Offline/performance/run_1/mlperf_log_summary.txt")
}
fn server() -> PathBuf {
    Path::new(H100).join("Server/performance/run_1/mlperf_log_summary.txt")
}

fn opts(from: Vec<PathBuf>, base: &str, scenario: &str) -> FromOptions {
    FromOptions {
        from,
        base: base.into(),
        scenario: Path::new(DATA).join(scenario),
        name: "fitted".into(),
        allow_invalid: false,
    }
}

fn h100(from: Vec<PathBuf>) -> FromOptions {
    opts(from, "hgx-h100-8x", "resnet50-h100.toml")
}

/// The written profile loads as any profile does, its fitted numbers measured and cited.
fn check_profile(done: &fit::Fitted) -> Profile {
    let src = SourceFile::from_text("fitted.toml", done.profile_toml.clone());
    let p = Profile::from_source(&src, Some("fitted")).expect("the fitted profile validates");
    for fp in done.params.iter().filter(|p| p.fitted) {
        let n = tco_sim::hardware::numbers::PROFILE_NUMBERS
            .iter()
            .find(|n| n.key == fp.key)
            .unwrap();
        let c = n.get(&p).unwrap();
        assert_eq!(c.basis, tco_sim::cite::Basis::Measured, "{}", fp.key);
        assert!(c.source.key.starts_with("calibrate-from-"), "{c:?}");
        assert!(c.note.as_deref().unwrap().contains("RMS relative error"));
        assert!((c.value / fp.after - 1.0).abs() < 1e-9);
        // The spread: the residual in ln terms over the degrees of freedom, or none for an
        // exactly determined fit (and the note says which).
        let n = done.points.len();
        let k = done.params.iter().filter(|p| p.fitted).count();
        if n > k {
            let ss: f64 = done
                .points
                .iter()
                .map(|x| (x.after / x.measured).ln().powi(2))
                .sum();
            let want = (ss / (n - k) as f64).sqrt().max(fit::MIN_LOG_SD);
            let sd = c.log_sd.expect("an over-determined fit writes its spread");
            assert!((sd / want - 1.0).abs() < 1e-3, "{sd} vs {want}");
            assert!(c.note.as_deref().unwrap().contains("log_sd"));
        } else {
            assert_eq!(c.log_sd, None, "{n} points, {k} parameters");
            assert!(c.note.as_deref().unwrap().contains("no degree of freedom"));
        }
    }
    p
}

#[test]
fn offline_and_server_summaries_are_both_reproduced_within_5_percent() {
    let done = fit::run(&h100(vec![offline(), server()])).unwrap();
    print!("{}", fit::summary(&done, Path::new("fitted.toml")));
    assert_eq!(done.points.len(), 2);
    assert_eq!(done.points[0].measured, 703_770.0);
    assert_eq!(done.points[1].measured, 584_147.32);
    for p in &done.points {
        let err = p.after / p.measured - 1.0;
        assert!(
            err.abs() < 0.05,
            "{}: {} vs {} ({err:+.3})",
            p.point.label,
            p.after,
            p.measured
        );
    }
    assert!(
        done.rms_after < done.rms_before,
        "{} {}",
        done.rms_after,
        done.rms_before
    );
    check_profile(&done);
    // Two points fit two numbers: the compute efficiency (both move with it) and the
    // service-time CV (only the Server point does); the batch overhead, whose moves the two
    // already span, is kept and the table says why.
    let fitted: Vec<&str> = done
        .params
        .iter()
        .filter(|p| p.fitted)
        .map(|p| p.key)
        .collect();
    assert_eq!(
        fitted,
        ["efficiency.compute", "efficiency.service_cv"],
        "{:?}",
        done.params
    );
    let overhead = done
        .params
        .iter()
        .find(|p| p.key == "efficiency.batch_overhead_ms")
        .unwrap();
    assert_eq!(overhead.like, Some("efficiency.compute"));
    assert!(fit::table(&done).contains("kept: the points cannot tell it from the fitted ones"));
}

#[test]
fn an_offline_summary_alone_fits_its_figure() {
    let done = fit::run(&h100(vec![offline()])).unwrap();
    let p = &done.points[0];
    assert!((p.after / 703_770.0 - 1.0).abs() < 0.01, "{}", p.after);
    check_profile(&done);
}

#[test]
fn a_csv_fits_its_figure() {
    let done = fit::run(&h100(vec![
        Path::new(DATA).join("resnet50-h100-offline.csv"),
    ]))
    .unwrap();
    let p = &done.points[0];
    assert_eq!(p.point.label, "batch 2048 req/s");
    assert!((p.after / 703_770.0 - 1.0).abs() < 0.01, "{}", p.after);
    check_profile(&done);
}

#[test]
fn a_vllm_result_fits_its_saturated_throughput() {
    // The all-at-once line: 37.76 req/s of ~999 + ~269 tokens over 4 replicas.
    let text = std::fs::read_to_string(Path::new(DATA).join("vllm/results-base.json")).unwrap();
    let inf = text.lines().nth(2).unwrap();
    let dir = std::env::temp_dir().join("tco-sim-calibrate-from-vllm");
    std::fs::create_dir_all(&dir).unwrap();
    let one = dir.join("inf.json");
    std::fs::write(&one, inf).unwrap();
    let done = fit::run(&opts(
        vec![one],
        "tests/data/calibrate/l40s-4x.toml",
        "llama32-3b-l40s.toml",
    ))
    .unwrap();
    print!("{}", fit::summary(&done, Path::new("fitted.toml")));
    let p = &done.points[0];
    assert!((p.measured - 37.764).abs() < 0.01);
    assert!((p.after / p.measured - 1.0).abs() < 0.02, "{}", p.after);
    check_profile(&done);
}

#[test]
fn the_vllm_file_reads_every_line_with_its_tokens() {
    let r = runs::read(&Path::new(DATA).join("vllm/results-base.json"), false).unwrap();
    assert_eq!(r.format, runs::Format::VllmJson);
    assert_eq!(r.date.as_deref(), Some("2025-05-30"));
    // Two Poisson rates x (TTFT, TPOT) + the saturated line.
    assert_eq!(r.points.len(), 5);
    assert_eq!(r.points[4].line, 3);
    let (i, o) = r.points[4].tokens.unwrap();
    assert!((i - 999.0).abs() < 1e-9 && (o - 241_786.0 / 900.0).abs() < 1e-9);
    match &r.points[0].observed {
        runs::Observed::MedianAtRate { rate, value_s, .. } => {
            assert_eq!(*rate, 10.0);
            assert!((value_s * 1e3 - 52.794).abs() < 1e-3);
        }
        o => panic!("{o:?}"),
    }
}

fn write(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join("tco-sim-calibrate-from-bad");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A copy of the summary `from` with `old` (which must be in it) replaced by `new`, written as
/// `dir/mlperf_log_summary.txt` under the temporary folder (`dir` keeps the model's folder).
fn edited_summary(from: &Path, old: &str, new: &str, dir: &str) -> PathBuf {
    let text = std::fs::read_to_string(from).unwrap();
    assert!(text.contains(old), "`{old}` is not in {}", from.display());
    let dir = std::env::temp_dir().join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("mlperf_log_summary.txt");
    std::fs::write(&p, text.replace(old, new)).unwrap();
    p
}

fn err(o: &FromOptions) -> String {
    format!("{:#}", fit::run(o).unwrap_err())
}

#[test]
fn an_unknown_format_is_named() {
    let p = write("notes.txt", "we ran it and it was fast\n");
    let e = err(&h100(vec![p]));
    assert!(
        e.contains("notes.txt") && e.contains("unknown format"),
        "{e}"
    );
    assert!(
        e.contains("mlperf_log_summary.txt") && e.contains("CSV"),
        "{e}"
    );
}

#[test]
fn a_missing_field_is_named_with_its_file() {
    let p = edited_summary(
        &server(),
        "target_latency (ns): 15000000\n",
        "",
        "tco-sim-calibrate-from-bad/resnet50/Server",
    );
    let e = err(&h100(vec![p]));
    assert!(
        e.contains("mlperf_log_summary.txt") && e.contains("target_latency (ns) is missing"),
        "{e}"
    );
    // A bad value is located at its line.
    let p = write("bad.csv", "model,batch,throughput_rps\nResNet-50,64,fast\n");
    let e = err(&h100(vec![p]));
    assert!(
        e.contains("bad.csv:2:") && e.contains("`fast` is not a positive number"),
        "{e}"
    );
    // A vLLM line without its throughput.
    let p = write(
        "v.json",
        r#"{"model_id": "meta-llama/Llama-3.2-3B-Instruct", "request_rate": "inf", "max_concurrency": null, "completed": 10, "total_input_tokens": 100, "total_output_tokens": 100}"#,
    );
    let e = err(&opts(
        vec![p],
        "tests/data/calibrate/l40s-4x.toml",
        "llama32-3b-l40s.toml",
    ));
    assert!(
        e.contains("v.json:1:") && e.contains("request_throughput is missing"),
        "{e}"
    );
}

#[test]
fn an_invalid_run_is_refused_unless_allowed() {
    let p = edited_summary(
        &offline(),
        "Result is : VALID",
        "Result is : INVALID",
        "tco-sim-calibrate-from-invalid/resnet50/Offline",
    );
    let e = err(&h100(vec![p.clone()]));
    assert!(
        e.contains(":8:") && e.contains("INVALID") && e.contains("--allow-invalid"),
        "{e}"
    );
    let r = runs::read(&p, true).unwrap();
    assert_eq!(r.points.len(), 1);
}

#[test]
fn a_measurement_of_another_workload_is_refused() {
    // The ResNet-50 summary against the Llama scenario.
    let e = err(&opts(
        vec![offline()],
        "tests/data/calibrate/l40s-4x.toml",
        "llama32-3b-l40s.toml",
    ));
    assert!(
        e.contains("measures `ResNet-50`") && e.contains("Llama-3.2-3B"),
        "{e}"
    );
    // A CSV naming its model on line 2.
    let p = write("bert.csv", "model,batch,throughput_rps\nbert-base,8,1000\n");
    let e = err(&h100(vec![p]));
    assert!(
        e.contains("bert.csv:2:") && e.contains("measures `bert-base`"),
        "{e}"
    );
}

#[test]
fn a_set_no_parameters_can_fit_is_refused_with_its_residuals() {
    // Two Offline figures of the same system a factor of two apart.
    let p = edited_summary(
        &offline(),
        "Samples per second: 703770",
        "Samples per second: 351885",
        "tco-sim-calibrate-from-unfit/resnet50/Offline",
    );
    let e = err(&h100(vec![offline(), p]));
    assert!(e.contains("no parameters fit these measurements"), "{e}");
    assert!(
        e.contains(&format!("{:.0} % bound", 100.0 * MAX_RMS)),
        "{e}"
    );
    assert!(e.contains("Offline samples/s"), "{e}");
}

fn l40s(from: Vec<PathBuf>) -> FromOptions {
    opts(
        from,
        "tests/data/calibrate/l40s-4x.toml",
        "llama32-3b-l40s.toml",
    )
}

#[test]
fn a_closed_loop_vllm_file_reads_throughput_ttft_and_tpot_per_concurrency() {
    let r = runs::read(
        &Path::new(DATA).join("vllm/closed-loop-synthetic.json"),
        false,
    )
    .unwrap();
    // Three lines x (req/s, median TTFT, median TPOT).
    assert_eq!(r.points.len(), 9);
    assert_eq!(r.date.as_deref(), Some("2026-12-01"));
    match &r.points[3].observed {
        runs::Observed::Throughput {
            rps,
            batch: None,
            concurrency: Some(4),
        } => assert_eq!(*rps, 0.9939),
        o => panic!("{o:?}"),
    }
    match &r.points[8].observed {
        runs::Observed::MedianAtConcurrency {
            concurrency: 16,
            metric: runs::TokenLatency::Tpot,
            value_s,
        } => assert!((value_s * 1e3 - 16.134).abs() < 1e-9),
        o => panic!("{o:?}"),
    }
    assert_eq!(r.points[8].line, 3);
    assert_eq!(r.points[0].tokens, Some((1000.0, 270.0)));
}

/// The closed-loop fixture is synthetic (tests/data/calibrate/README.md): made with compute 0.35,
/// memory 0.65 and a 3 ms overhead. From the unchanged profile (0.5 / 0.8 / 0.5 ms) the fit
/// moves all three LLM coefficients and reproduces the nine figures within the fit bound.
#[test]
fn a_closed_loop_vllm_fixture_fits_and_reproduces_its_figures() {
    let done = fit::run(&l40s(vec![
        Path::new(DATA).join("vllm/closed-loop-synthetic.json"),
    ]))
    .unwrap();
    print!("{}", fit::summary(&done, Path::new("fitted.toml")));
    assert_eq!(done.points.len(), 9);
    assert!(done.rms_before > 0.2, "{}", done.rms_before);
    assert!(
        done.rms_after <= MAX_RMS && done.rms_after < done.rms_before / 3.0,
        "{} -> {}",
        done.rms_before,
        done.rms_after
    );
    for key in [
        "efficiency.compute",
        "efficiency.memory",
        "efficiency.batch_overhead_ms",
    ] {
        let p = done.params.iter().find(|p| p.key == key).unwrap();
        assert!(p.fitted, "{key} is a prefill/decode coefficient: {p:?}");
    }
    // Prefill is compute-bound: the fitted compute efficiency falls from 0.5 towards 0.35.
    let c = done
        .params
        .iter()
        .find(|p| p.key == "efficiency.compute")
        .unwrap();
    assert!(c.after < 0.45, "{c:?}");
    let profile = check_profile(&done);
    assert!(
        done.params.iter().filter(|p| p.fitted).count() < done.points.len(),
        "nine points over-determine the fit"
    );
    the_fitted_numbers_are_varied_by_their_spread(&done, &profile);
}

/// A scenario whose tier runs the written profile varies each fitted number lognormal around
/// its value with the profile's `log_sd` — where before a measured number was never varied.
fn the_fitted_numbers_are_varied_by_their_spread(done: &fit::Fitted, profile: &Profile) {
    use tco_sim::scenario::uncertainty::RangeOrigin;
    use tco_sim::uncertainty::ranges::Dist;
    let dir = std::env::temp_dir().join(format!("tco-sim-calibrate-spread-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("fitted.toml"), &done.profile_toml).unwrap();
    let scenario = std::fs::read_to_string(Path::new(DATA).join("llama32-3b-l40s.toml"))
        .unwrap()
        .replace("profile = \"l40s-4x.toml\"", "profile = \"fitted.toml\"");
    std::fs::write(dir.join("s.toml"), scenario).unwrap();
    let s = tco_sim::scenario::Scenario::load(&dir.join("s.toml")).unwrap();
    let inputs = s.uncertain_inputs();
    let mut varied = 0;
    for fp in done.params.iter().filter(|p| p.fitted) {
        let n = tco_sim::hardware::numbers::PROFILE_NUMBERS
            .iter()
            .find(|n| n.key == fp.key)
            .unwrap();
        let c = n.get(profile).unwrap();
        let sd = c.log_sd.unwrap();
        let Some(u) = inputs.iter().find(|u| u.path.key.ends_with(fp.key)) else {
            // A number the plan does not read is not offered (Scenario::why_inert).
            continue;
        };
        assert_eq!(u.origin, RangeOrigin::Measured { log_sd: sd }, "{}", fp.key);
        let (v, _, spread) = s.input_value(u.path.target);
        assert_eq!(spread, Some(sd));
        assert_eq!(Some(u.dist), Dist::lognormal_median(v, sd), "{}", fp.key);
        varied += 1;
    }
    assert!(varied >= 2, "{varied} fitted numbers varied");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_csv_by_concurrency_is_fitted_with_the_closed_loop() {
    let done = fit::run(&l40s(vec![
        Path::new(DATA).join("llama32-3b-l40s-concurrency.csv"),
    ]))
    .unwrap();
    print!("{}", fit::summary(&done, Path::new("fitted.toml")));
    assert_eq!(done.points.len(), 3);
    assert_eq!(done.points[2].point.label, "concurrency 16 req/s");
    for p in &done.points {
        let err = p.after / p.measured - 1.0;
        assert!(err.abs() < MAX_RMS, "{}: {err:+.3}", p.point.label);
    }
    // Before the fit the base profile is ~45 % fast: the closed loop responds to it.
    assert!(done.rms_before > 0.2, "{}", done.rms_before);
    check_profile(&done);
}

#[test]
fn a_paced_and_capped_vllm_run_is_refused_at_its_line() {
    let p = write(
        "paced.json",
        r#"{"model_id": "meta-llama/Llama-3.2-3B-Instruct", "request_rate": 4.0, "max_concurrency": 8, "completed": 10, "total_input_tokens": 100, "total_output_tokens": 100, "request_throughput": 3.0, "median_ttft_ms": 50, "median_tpot_ms": 15}"#,
    );
    let e = err(&l40s(vec![p]));
    assert!(
        e.contains("paced.json:1:") && e.contains("neither an open nor a closed loop"),
        "{e}"
    );
    let p = write(
        "half.json",
        r#"{"model_id": "meta-llama/Llama-3.2-3B-Instruct", "request_rate": "inf", "max_concurrency": 2.5, "completed": 10, "total_input_tokens": 100, "total_output_tokens": 100, "request_throughput": 3.0}"#,
    );
    let e = err(&l40s(vec![p]));
    assert!(
        e.contains("half.json:1:") && e.contains("max_concurrency = 2.5"),
        "{e}"
    );
}

/// On a base profile that sets an iteration overhead (as the H100 and H200 profiles do), a
/// generative model's iterations pay that and not the batch overhead, so the fit moves it — the
/// batch overhead is left as it was — and the written profile carries it as measured.
#[test]
fn a_generative_fit_moves_the_iteration_overhead_where_the_base_sets_one() {
    let text = std::fs::read_to_string("tests/data/calibrate/l40s-4x.toml").unwrap();
    let with = text.replacen(
        "batch_overhead_ms = ",
        "iteration_overhead_ms = { value = 0.5, source = \"authors-estimate\", basis = \"estimate\", note = \"a starting point for the fit\" }\nbatch_overhead_ms = ",
        1,
    );
    assert_ne!(with, text);
    let base = write("l40s-4x-iteration.toml", &with);
    let done = fit::run(&opts(
        vec![Path::new(DATA).join("vllm/closed-loop-synthetic.json")],
        base.to_str().unwrap(),
        "llama32-3b-l40s.toml",
    ))
    .unwrap();
    let param = |key: &str| done.params.iter().find(|p| p.key == key).unwrap();
    let it = param("efficiency.iteration_overhead_ms");
    assert!(it.fitted, "{it:?}");
    // The fixture was made with a 3 ms fixed time per iteration.
    assert!(it.after > 1.5e-3, "{it:?}");
    let batch = param("efficiency.batch_overhead_ms");
    assert!(!batch.fitted && batch.after == batch.before, "{batch:?}");
    assert!(done.rms_after <= MAX_RMS, "{}", done.rms_after);
    let p = check_profile(&done);
    assert_eq!(p.iteration_overhead_s.as_ref().unwrap().value, it.after);
}

const LLAMA70: &str = "tests/data/calibrate/mlperf-v4.1/closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/llama2-70b-99";

fn llama70(scenario: &str) -> PathBuf {
    Path::new(LLAMA70).join(format!(
        "{scenario}/performance/run_1/mlperf_log_summary.txt"
    ))
}

fn h100_llama70(from: Vec<PathBuf>) -> FromOptions {
    opts(from, "hgx-h100-8x", "llama2-70b-h100.toml")
}

/// An LLM Server summary is read by its own constraints: the rate LoadGen completed under the
/// p99 TTFT and TPOT bounds over its run's length, and the output tokens per request its
/// tokens per second imply (the Offline summary's too).
#[test]
fn an_llm_server_summary_reads_its_ttft_and_tpot_bounds() {
    let r = runs::read(&llama70("Server"), false).unwrap();
    assert_eq!(r.model, "Llama-2-70B");
    let p = &r.points[0];
    assert_eq!(
        p.observed,
        runs::Observed::RateUnderTokenBounds {
            rps: 74.42,
            ttft_s: 2.0,
            tpot_s: 0.2,
            duration_s: 2400.0,
        }
    );
    assert_eq!(p.line, 7);
    assert_eq!(p.label, "Server p99 TTFT 2,000 / TPOT 200 ms");
    let (out, line) = p.output_per_request.unwrap();
    assert!(
        (out - 21605.79 / 74.42).abs() < 1e-9 && line == 8,
        "{out} {line}"
    );
    let r = runs::read(&llama70("Offline"), false).unwrap();
    let (out, line) = r.points[0].output_per_request.unwrap();
    assert!(
        (out - 24524.9 / 84.4792).abs() < 1e-9 && line == 8,
        "{out} {line}"
    );
    // A classic summary counts no tokens.
    let r = runs::read(&offline(), false).unwrap();
    assert_eq!(r.points[0].output_per_request, None);
}

/// Bad LLM summaries: a missing TPOT bound is named, and a scenario whose requests are not the
/// measured ones (another mean output) is refused at the tokens figure's line.
#[test]
fn an_llm_summary_of_other_lengths_or_without_its_bound_is_refused() {
    let p = edited_summary(
        &llama70("Server"),
        "tpot_latency (ns): 200000000\n",
        "",
        "tco-sim-calibrate-from-bad/llama2-70b-99/Server",
    );
    let e = err(&h100_llama70(vec![p]));
    assert!(
        e.contains("mlperf_log_summary.txt") && e.contains("tpot_latency (ns) is missing"),
        "{e}"
    );
    let scenario = std::fs::read_to_string(Path::new(DATA).join("llama2-70b-h100.toml"))
        .unwrap()
        .replace("output_tokens = 290", "output_tokens = 150");
    let s = write("llama2-70b-short.toml", &scenario);
    let e = err(&FromOptions {
        scenario: s,
        ..h100_llama70(vec![llama70("Offline")])
    });
    assert!(
        e.contains("mlperf_log_summary.txt:8:")
            && e.contains("averaged 290.3 output tokens")
            && e.contains("the scenario's workload 149.8"),
        "{e}"
    );
}

/// The issue's measurement for an LLM: one Offline and one Server LoadGen summary of the same
/// system, fitted together; the fit reports how far the planner is from each.
#[test]
fn llm_offline_and_server_summaries_are_fitted_together() {
    let done = fit::run(&h100_llama70(vec![llama70("Offline"), llama70("Server")])).unwrap();
    print!("{}", fit::summary(&done, Path::new("fitted.toml")));
    assert_eq!(done.points.len(), 2);
    assert_eq!(done.points[0].measured, 84.4792);
    assert_eq!(done.points[1].measured, 74.42);
    // The LLM's Offline and Server throughputs move together under every number (its decode
    // at ~1,000 sequences is compute-bound), so the one that moves them most is fitted: the
    // class efficiency generative models compute at. The rest are kept at the base's values.
    let fitted: Vec<&str> = done
        .params
        .iter()
        .filter(|p| p.fitted)
        .map(|p| p.key)
        .collect();
    assert_eq!(fitted, ["efficiency.compute_matmul"], "{:?}", done.params);
    for key in ["efficiency.memory", "efficiency.iteration_overhead_ms"] {
        let p = done.params.iter().find(|p| p.key == key).unwrap();
        assert_eq!(p.like, Some("efficiency.compute_matmul"), "{key}");
        assert_eq!(p.after, p.before, "{key}");
    }
    // The issue's bound: both figures within 5 %. The Server point pays the streamed token's
    // host cost (LoadGen's LLM Server harnesses stream every token; Offline does not), so the
    // planner's Server / Offline is 0.904 where the run measured 74.42 / 84.48 = 0.881: one
    // number leaves -1.6 % / +1.7 % (measured 2026-12-07; before that cost was charged, 0.999
    // and the best fit +-6.3 %).
    for p in &done.points {
        assert!(
            (p.after / p.measured - 1.0).abs() < 0.05,
            "{} {p:?}",
            p.point.label
        );
    }
    assert!(done.rms_after < done.rms_before, "{}", done.rms_after);
    let (o, s) = (&done.points[0], &done.points[1]);
    assert!(o.after < o.measured && s.after > s.measured, "{o:?} {s:?}");
    // Two points, one number: the residual becomes the number's spread.
    let p = check_profile(&done);
    let m = p.efficiency_compute_matmul.as_ref().unwrap();
    assert_eq!(m.basis, tco_sim::cite::Basis::Measured);
    assert!(m.log_sd.is_some_and(|sd| sd > 0.0 && sd < 0.05), "{m:?}");
}
