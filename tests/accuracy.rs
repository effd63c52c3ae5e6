//! The accuracy suite (`tco-sim accuracy`): the shipped table loads, every row is cited, the fit
//! rows reproduce with the shipped profile constants, the JSON carries its fields, and the
//! held-out error meets the issue's bound (a benchmark of the model, which fails today: see the
//! test's note).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use tco_sim::accuracy::{self, Constant, Split};

fn table() -> accuracy::Table {
    accuracy::load(accuracy::TABLE).unwrap_or_else(|e| panic!("{e}"))
}

/// The shipped table's report, run once for every test of this file that reads it unchanged:
/// each run simulates all 747 rows, and a dozen tests read it.
fn shipped_report() -> &'static accuracy::Report {
    static REPORT: std::sync::OnceLock<accuracy::Report> = std::sync::OnceLock::new();
    REPORT.get_or_init(|| accuracy::run(&table(), false).unwrap_or_else(|e| panic!("{e}")))
}

/// Row `id` of the table `text` predicted with its shipped profile, as `accuracy::run` does.
fn predicted_in(text: &str, id: &str) -> f64 {
    let t = accuracy::load(text).unwrap();
    let row = t.rows.iter().find(|r| r.id == id).unwrap();
    accuracy::predict(&t, row, &accuracy::shipped_profile(&row.profile).unwrap()).unwrap()
}

/// The shipped table with its first `from` replaced by `to` (which must change it), refused on
/// load: the error's text.
fn refused_with(from: &str, to: &str) -> String {
    let text = accuracy::TABLE.replacen(from, to, 1);
    assert_ne!(text, accuracy::TABLE, "`{from}` is not in the table");
    accuracy::load(&text).unwrap_err().to_string()
}

#[test]
fn every_row_is_cited_with_a_url_and_a_date() {
    let t = table();
    assert!(t.rows.len() >= 16, "{} rows", t.rows.len());
    for r in &t.rows {
        let s = &t.sources[&r.source];
        assert!(s.url.starts_with("https://"), "{}: {}", r.id, s.url);
        assert!(tco_sim::cite::is_date(&s.date), "{}: {}", r.id, s.date);
        assert!(!s.version.is_empty() && !r.location.is_empty(), "{}", r.id);
        assert!(!r.system.is_empty(), "{}", r.id);
    }
    let ids: BTreeSet<&str> = t.rows.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids.len(), t.rows.len(), "row ids are unique");
    assert!(t.rows.iter().any(|r| r.split == Split::Fit));
    assert!(t.rows.iter().filter(|r| r.split == Split::HeldOut).count() >= 10);
}

/// Issue 10: many-core Arm CPU, x86 CPU, GPU and ASIC rows (the Arm rows: Ampere Altra Max,
/// llama.cpp decode).
#[test]
fn the_table_spans_four_kinds_of_hardware() {
    let kinds: BTreeSet<String> = table().rows.iter().map(|r| r.kind.clone()).collect();
    assert!(kinds.len() >= 4, "{kinds:?}");
}

#[test]
fn the_table_spans_gpu_cpu_and_asic_with_classic_and_generative_models() {
    let t = table();
    let kinds: BTreeSet<&str> = t.rows.iter().map(|r| r.kind.as_str()).collect();
    for k in ["gpu", "x86-cpu", "arm-cpu", "asic"] {
        assert!(kinds.contains(k), "{kinds:?}");
    }
    assert!(t.rows.iter().any(|r| r.workload.starts_with("llama")));
    assert!(t.rows.iter().any(|r| r.workload.starts_with("resnet")));
}

/// The shipped profiles' fitted constants reproduce their fit rows, and re-running the fit gives
/// the shipped values (to the 4 significant figures the files carry). A fit that ran into the end
/// of its range is not shipped: the profile keeps its estimate.
#[test]
fn fit_rows_reproduce_and_the_fit_gives_the_shipped_constants() {
    let t = table();
    let rep = shipped_report();
    let fit = &accuracy::fit(&t).unwrap();
    for f in fit.iter().filter(|f| f.converged) {
        let rel = (f.value - f.shipped).abs() / f.value;
        assert!(
            rel < 2e-3,
            "{} {:?}: fit {} shipped {}",
            f.profile,
            f.constant,
            f.value,
            f.shipped
        );
        if f.constant == accuracy::Constant::ServiceCv {
            // A least-squares fit reproduces no row alone: it must beat the estimate it replaced.
            let rows: Vec<&accuracy::Row> = f
                .rows
                .iter()
                .map(|id| t.rows.iter().find(|r| &r.id == id).unwrap())
                .collect();
            let shipped = accuracy::shipped_profile(&f.profile).unwrap();
            let mut estimate = shipped.clone();
            estimate.service_cv = tco_sim::hardware::default_service_cv(shipped.kind);
            let at_fit = accuracy::squared_log_error(&t, &rows, &shipped).unwrap();
            let at_estimate = accuracy::squared_log_error(&t, &rows, &estimate).unwrap();
            assert!(
                at_fit < at_estimate,
                "{}: {at_fit} at the fitted CV, {at_estimate} at the default",
                f.profile
            );
            continue;
        }
        for id in &f.rows {
            let r = rep.rows.iter().find(|r| &r.id == id).unwrap();
            assert!(r.error.abs() < 0.01, "{id}: error {}", r.error);
        }
    }
    let unconverged: Vec<&str> = fit
        .iter()
        .filter(|f| !f.converged)
        .map(|f| f.profile.as_str())
        .collect();
    // The Xeon fit converges since ResNet-50's int8 weights stay in cache (compute-bound).
    assert!(unconverged.is_empty(), "unconverged fits: {unconverged:?}");
}

/// The JSON rows carry the issue's fields, and the suite is deterministic: the binary on one
/// thread prints exactly the report this process computed on all of its threads.
#[test]
fn json_rows_carry_the_fields_and_do_not_depend_on_the_threads() {
    let out = Command::new(env!("CARGO_BIN_EXE_tco-sim"))
        .args(["accuracy", "--format", "json", "--threads", "1"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v == serde_json::to_value(shipped_report()).unwrap(),
        "the one-thread JSON differs from the in-process report"
    );
    let rows = v["rows"].as_array().unwrap();
    assert!(rows.len() >= 16);
    for r in rows {
        for k in [
            "system",
            "kind",
            "workload",
            "metric",
            "published",
            "predicted",
            "error",
            "split",
            "source",
        ] {
            assert!(!r[k].is_null(), "{k} missing in {r}");
        }
        let (p, q, e) = (
            r["published"].as_f64().unwrap(),
            r["predicted"].as_f64().unwrap(),
            r["error"].as_f64().unwrap(),
        );
        // A server row may be predicted at 0: no rate meets the bound in the model (error −100 %).
        let server = matches!(r["metric"].as_str(), Some("server" | "tokens-server"));
        assert!(q.is_finite() && (q > 0.0 || server && q == 0.0), "{r}");
        assert!((e - (q - p) / p).abs() < 1e-9, "{r}");
        assert!(["fit", "held-out"].contains(&r["split"].as_str().unwrap()));
    }
    assert!(!v["summary"].as_array().unwrap().is_empty());
}

/// The table `tco-sim accuracy` prints ([`accuracy::render`] of the report, whose JSON the binary
/// test above checks against a run of the binary): rendered from the cached report rather than
/// a third run of the suite, which cost CI about a minute.
#[test]
fn the_table_prints_with_a_summary() {
    let s = accuracy::render(shipped_report());
    // CI prints it after the tests (.ci/run), from the same run.
    std::fs::write(
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("accuracy-table.txt"),
        &s,
    )
    .unwrap();
    assert!(
        s.contains("h100-resnet50-offline") && s.contains("Held-out rows"),
        "{s}"
    );
}

/// The pooled held-out error, held to what was measured on 2026-12-07 (`tco-sim accuracy`: 3,176
/// rows, median 11.7 %, max 1,515.3 % with the 27 L40S cells of the TensorRT-LLM 0.17 table held
/// out and the L40S's PCIe all-reduce fitted on two TP2 steps of the 0.9.0 block, 24.2 % / 41.0 %
/// among themselves; 3,151 rows, median 12.1 %, max 1,515.3 % with the L40S's 30 MLPerf v4.1
/// results held out, 11.9 % /
/// 38.7 % among themselves (the GEMM efficiency fitted on one failed its test); 3,121 rows,
/// median 12.1 %, max 1,515.3 % with the 213 L40S decode steps of TensorRT-LLM 0.9.0 held
/// out beside the one that fits the L40S's memory efficiency, 7.6 % / 47.1 % among themselves
/// (a 70B split over PCIe); 2,908 rows, median 12.5 %, max 1,515.3 % once the A100's memory efficiency is fit on one
/// TensorRT-LLM 0.9.0 decode step, with that source's 204 other A100 steps and 34 A100 cells of
/// the TensorRT-LLM 0.17 table held out, 7.3 % / 37.2 % among themselves (12.6 % / 41.2 % at the
/// carried 0.85), and the NIM A100 rows 20.3 % -> 15.7 %; 2,670
/// rows, median 14.2 %, max 1,515.3 % with the 378 blind NIM rows of the DLI dataset on A100, run
/// on a profile whose every constant is the H100's, 20.3 % / 149.0 % among themselves; 2,292
/// rows, median 12.6 %, max 1,515.3 % with the 765 blind NIM rows of the DLI dataset at 2-250
/// clients and the 16-bit cache their second blind test gave the fp8 engines, whose worst is an
/// 8B fp8's mean TTFT at 200 clients and 2,000-token prompts, where the real server queued 1.8 s
/// and the planner's halved room queues 28 s; 1,527 rows, 8.8 % / 166.7 % before them), and on
/// 2026-12-06 (1,096 rows, median 12.7 %, max 168.2 % with the 86 blind MLPerf v4.1 rows of other vendors' H100
/// and H200 systems, 6.2 % / 45.8 % among themselves; 1,010 rows, median 13.3 %, max 168.2 %
/// once the H200's memory efficiency is fit to its TensorRT-LLM 0.9.0 batch-1 row (the H200's
/// other 145 rows there: median 16.5 % -> 10.4 %); 1,011 rows,
/// median 15.0 %, max 168.2 % once a scheduler without chunked prefill fills its token
/// budget with whole prompts, which spreads the closed-loop clients that start together, as
/// TensorRT-LLM's `max_num_tokens` does — the worst row now a NIM 8B's TTFT at 25 clients,
/// +168 %; median 15.1 %, max 877.7 % with the 279 blind TensorRT-LLM 0.9.0 decode steps, 13.4 % /
/// 37.8 % among themselves; 732 rows, median 16.0 %, max 877.7 % with the 330 blind NIM rows of the DLI dataset, whose worst
/// is an 8B's mean TTFT at 100 clients and 7,000-token prompts, where the planner's clients
/// prefill in lock-step and real ones do not (see the README); 402 rows, median 8.5 %, max
/// 127.6 % with the 120 blind open-loop TensorRT-LLM rows, whose worst
/// is the 70B's mean TTFT at 32 requests/s, where the planner's prefill runs near saturation; 282
/// rows, median 8.3 %, max 67.0 % with the 88 blind TensorRT-LLM 0.17 rows, whose worst is the
/// 70B on one H100, where the planner's KV cache holds a fraction of the engine's; 194
/// rows, median 7.6 %, max 61.4 % with the 40 TensorRT-LLM perf-overview rows, 6.4 % / 39.7 %
/// among themselves once they run the 8-bit cache their figures require (34.1 % / 50.3 %, all
/// low, with the 16-bit cache committed first); 154
/// rows, median 8.3 %, max 61.4 % with the 30 blind NIM rows past 100 clients, which the
/// planner predicts up to 61 % fast; 124 rows, 5.8 % / 49.8 % before them, once the NIM rows
/// ran the 8-bit KV cache their plateaus require; 7.2 % / 49.9 % with a 16-bit cache; the 74
/// rows before the 50 blind NIM rows of the iteration-overhead rule 9.5 % / 48.9 %, and 10.8 % / 46.6 % before the rule; 46 rows,
/// 10.6 % / 46.6 % before the 28 NIM rows) so a regression fails. Issue 10's bound (median ≤
/// 10 %, max ≤ 25 %) held pooled over 28 rows until the twelve Neuron-table rows of other
/// encoders and CNNs were added blind (ResNet-18 at batch 1 +127 %); the Neuron harness rule
/// (requests in flight, a cost per call) took that to +35 %, and its six blind VGG/ViT rows miss
/// by up to 47 % (VGG-11 at batch 64); the worst row now is the Llama-3.1-8B's TTFT for a
/// 200-token prompt alone (−50 %: the request's own fixed latency is not modelled).
#[test]
fn held_out_error_is_held_to_its_measured_level() {
    let rep = shipped_report();
    let a = rep.all_held_out.as_ref().unwrap();
    assert!(a.rows >= 1096, "{} held-out rows", a.rows);
    assert!(
        a.median_abs_error <= 0.117 + 0.005,
        "median {}",
        a.median_abs_error
    );
    assert!(a.max_abs_error <= 15.153 + 0.005, "max {}", a.max_abs_error);
    assert!(
        !(a.median_abs_error <= accuracy::BOUND_MEDIAN && a.max_abs_error <= accuracy::BOUND_MAX),
        "the pooled error is back within issue 10's bound: say so in the README and here"
    );
}

/// The per-figure summary (throughput alone, under a latency bound, TTFT/TPOT) partitions the
/// held-out rows, is computed from them, and says whether each figure meets the bound. Held to
/// the figures measured 2026-12-06 (`tco-sim accuracy`: 9.8 %, 15.8 %, 13.6 % median; 138.7 %,
/// 45.8 %, 168.2 % max with the 86 blind MLPerf v4.1 rows of other vendors' H100 and H200
/// systems, 43 throughput alone and 43 under a latency bound, whose BERT and H100 Llama-2-70B
/// Server rows the planner puts 10–46 % high; 12.2 %, 10.9 %, 13.6 % median; 138.7 %,
/// 20.6 %, 168.2 % max once the H200's memory efficiency is fit to its batch-1 row, one of the
/// TensorRT-LLM 0.9.0 rows, which were held-out; 12.6 %, 10.9 %, 15.7 % median, the same max,
/// once whole prompts fill the token budget of a scheduler without chunked
/// prefill; TTFT/TPOT 16.1 % median with the 279
/// blind TensorRT-LLM 0.9.0 decode steps, all TTFT/TPOT; 12.6 %, 10.9 %, 20.1 % median; 137.2 %,
/// 20.6 %, 877.7 % max with the 330 blind NIM rows of the DLI dataset, 78 throughput alone and
/// 252 TTFT/TPOT; 8.2 %, 10.9 %, 8.8 % median; 67.0 %,
/// 20.6 %, 127.6 % max with the 120 blind open-loop rows, all TTFT/TPOT; 8.1 % / 49.8 % for
/// TTFT/TPOT before them and with the 88 blind TensorRT-LLM 0.17 rows, all throughput alone; 7.1 %,
/// 10.9 %, 8.1 % median; 61.4 %,
/// 20.6 %, 49.8 % max with the 40 TensorRT-LLM perf-overview rows, all throughput alone; 7.7 %
/// throughput median before them, with the 30 blind NIM rows past 100 clients; 5.8 % and 5.4 % median,
/// 46.6 % throughput max before them, since the NIM rows run the 8-bit KV cache their
/// plateaus require — 6.5 % and 20.8 %, 49.9 % before it; 12.8 % / 46.6 % and 8.5 % / 40.5 %
/// for throughput alone and TTFT/TPOT
/// before the 50 blind NIM rows of the iteration-overhead rule, which are many and mostly
/// close, so the medians fell with the mix more than with the model; TTFT/TPOT was 5.4 % /
/// 12.6 % before the 28 NIM rows, whose Llama-3.1-8B
/// ITLs miss by up to 40 %; throughput alone was 12.0 % / 24.3 % before the twelve blind Neuron rows,
/// 14.5 % / 127.1 % after them, 15.5 % / 46.6 % after the Neuron harness rule and its rows,
/// under a latency bound 10.2 % before L4's BERT-99 Server row, +11.8 %) so a regression fails;
/// all three are outside the bound today (throughput alone by its maximum only).
#[test]
fn held_out_rows_by_figure_partition_the_held_out_set_and_hold_their_measured_errors() {
    use tco_sim::accuracy::{BOUND_MAX, BOUND_MEDIAN, Figure};
    let rep = shipped_report();
    let total: usize = rep.by_figure.iter().map(|f| f.rows).sum();
    assert_eq!(total, rep.all_held_out.as_ref().unwrap().rows);
    for f in &rep.by_figure {
        let mut errs: Vec<f64> = rep
            .rows
            .iter()
            .filter(|r| r.split == Split::HeldOut && r.metric.figure() == f.figure)
            .map(|r| r.error.abs())
            .collect();
        errs.sort_by(f64::total_cmp);
        let n = errs.len();
        let median = if n % 2 == 1 {
            errs[n / 2]
        } else {
            0.5 * (errs[n / 2 - 1] + errs[n / 2])
        };
        assert_eq!(f.rows, n);
        assert!(
            (f.median_abs_error - median).abs() < 1e-12,
            "{:?}",
            f.figure
        );
        assert_eq!(f.max_abs_error, errs[n - 1], "{:?}", f.figure);
        assert_eq!(
            f.within_bound,
            median <= BOUND_MEDIAN && errs[n - 1] <= BOUND_MAX,
            "{:?}",
            f.figure
        );
        // The figures as last measured: a change that makes one worse must say so here. (The
        // eight MLPerf v4.0 rows, TensorRT 9.3 and 16-30 % slower than the planner, raised the
        // median under a bound from 0.158 to 0.175; the 4-GPU mesh lowered its max from 0.458.
        // Five Server rows that now set their profiles' service_cv left the held-out set, all
        // five below its median: 0.175 -> 0.184. TensorRT's BERT paying attention at its
        // batch's longest item lowered it to 0.158 (its Server rows 2.6 points each); the
        // compute_matmul refit that rule brought (+0.6 %: Offline now pays its own kernels)
        // raised the max, an H100 70B Server row, 0.304 -> 0.310, and the latency median. A
        // streamed token's host cost per running sequence lowered the throughput median and max
        // (0.096 -> 0.085, 1.388 -> 1.163: NIM at 25 and 100 clients) and the latency median
        // (0.137 -> 0.129); the latency max moved 1.6668 -> 1.6673, inside the slack. Probing
        // an LLM Server row over its LoadGen run's length lowered the max under a bound, the
        // v4.0 Dell XE9640's 70B Server row, 0.310 -> 0.303. The 765 blind rows of 2024 NIM
        // runs at 2-250 clients, predicted worse than the rest, raised the throughput median
        // 0.085 -> 0.136 and the latency median 0.091 -> 0.124; the 16-bit cache their blind test
        // gave the fp8 engines lowered the throughput max 1.163 -> 0.841 and, where the real
        // server queued, sent the latency max 1.667 -> 15.153. The 378 blind rows of the same
        // runs on A100, on a profile carrying the H100's constants, raised the throughput median
        // 0.136 -> 0.147 and the latency median 0.124 -> 0.141. The A100's memory efficiency
        // fitted on one TensorRT-LLM 0.9.0 step, with 238 blind A100 rows of two TensorRT-LLM
        // sources, lowered them to 0.133 and 0.124; the 213 L40S steps the latency median to
        // 0.118. The L40S's 30 MLPerf v4.1 results, 14 of them under a bound, raised that
        // figure's max 0.198 -> 0.363, Fujitsu's Llama-2-70B Server at TP4 over PCIe, +36 %, and
        // its median 0.092 -> 0.099: it is outside the bound again. The L40S's PCIe all-reduce,
        // fitted at TP2, sent that row to -46.7 % (the max, 0.467), and with the 27 blind L40S
        // cells of the TensorRT-LLM 0.17 table raised the throughput median 0.133 -> 0.139 and
        // lowered the latency median 0.118 -> 0.113.)
        let (median_then, max_then) = match f.figure {
            Figure::Throughput => (0.139, 0.841),
            Figure::ThroughputUnderBound => (0.158, 0.467),
            Figure::Latency => (0.113, 15.153),
        };
        assert!(
            f.median_abs_error <= median_then + 0.005 && f.max_abs_error <= max_then + 0.005,
            "{:?}: median {:.3} (was {median_then}), max {:.3} (was {max_then})",
            f.figure,
            f.median_abs_error,
            f.max_abs_error
        );
    }
}

/// The spread the uncertainty analysis gives fitted constants is the one the suite measures on
/// its held-out throughput rows — pooled, per class of model, and per kind of hardware and class
/// for a cell with enough rows: change a prediction, a row or a constant and this fails until
/// the `FIT_LOG_SD*` constants (and the reports' rule text) say the new figures.
#[test]
fn the_fit_rule_spread_is_the_suites_held_out_throughput_error() {
    use tco_sim::hardware::UnitKind;
    use tco_sim::uncertainty::ranges::{self, FIT_MIN_ROWS_PER_KIND};
    let rep = shipped_report();
    let sp = rep.held_out_throughput_spread.clone().unwrap();
    assert!(sp.rows >= 16, "{} held-out throughput rows", sp.rows);
    let by_hand: Vec<f64> = rep
        .rows
        .iter()
        .filter(|r| r.split == Split::HeldOut && r.metric.throughput())
        .map(|r| (r.published / r.predicted).ln())
        .collect();
    assert_eq!(by_hand.len(), sp.rows);
    let rms = (by_hand.iter().map(|x| x * x).sum::<f64>() / by_hand.len() as f64).sqrt();
    assert!((rms - sp.rms_log_ratio).abs() < 1e-12);
    let close = |measured: f64, constant: f64, what: &str| {
        assert!(
            (measured - constant).abs() < 5e-5,
            "{what}: the suite measures {measured:.4}; the constant is {constant}"
        )
    };
    close(sp.rms_log_ratio, ranges::FIT_LOG_SD, "pooled");
    assert!(ranges::FIT_RULE.contains(&format!(
        "over {}",
        rep.held_out_throughput_spread_by_class[0].rows
    )));
    // The two classes partition the pooled rows, each with its own σ.
    let classes = &rep.held_out_throughput_spread_by_class;
    assert_eq!(classes.len(), 2);
    assert_eq!(classes.iter().map(|c| c.rows).sum::<usize>(), sp.rows);
    for c in classes {
        let generative = c.generative.unwrap();
        let constant = ranges::class_log_sd(generative);
        assert!(c.rows >= FIT_MIN_ROWS_PER_KIND);
        close(
            c.rms_log_ratio,
            constant,
            if generative { "generative" } else { "classic" },
        );
        assert_eq!(c.uncertainty_log_sd, constant);
    }
    // The cells partition them again; a cell with enough rows has its own σ (the constant),
    // any other takes its class's — and so does a cell with no row at all.
    let cells = &rep.held_out_throughput_spread_by_kind;
    assert_eq!(cells.iter().map(|k| k.rows).sum::<usize>(), sp.rows);
    for kind in [UnitKind::Gpu, UnitKind::Accelerator, UnitKind::Cpu] {
        for generative in [false, true] {
            let class_sd = ranges::class_log_sd(generative);
            let sd = ranges::fit_log_sd(kind, generative);
            let what = format!(
                "{} {}",
                kind.label(),
                if generative { "generative" } else { "classic" }
            );
            match cells
                .iter()
                .find(|c| c.kind == Some(kind) && c.generative == Some(generative))
            {
                Some(c) if c.rows >= FIT_MIN_ROWS_PER_KIND => {
                    close(c.rms_log_ratio, sd, &what);
                    assert_eq!(c.uncertainty_log_sd, sd, "{what}");
                }
                Some(c) => {
                    assert_eq!(
                        sd, class_sd,
                        "{what}: {} rows, too few for its own σ",
                        c.rows
                    );
                    assert_eq!(c.uncertainty_log_sd, sd, "{what}");
                }
                None => assert_eq!(sd, class_sd, "{what}: no row, the class's σ"),
            }
        }
    }
}

/// The GPU/ASIC classic held-out rows after sequence lengths and per-class efficiencies (issue
/// 10): measured 2026-12-01 with `tco-sim accuracy`, every one within 25 % except Inferentia2
/// ResNet-50 at batch 1 (then +141 %, +18 % since the per-layer overhead). The Inferentia2 rows
/// of other depths added blind on 2026-12-05 missed by more (ResNet-18 +127 % at batch 1: the
/// per-layer overhead did not carry across depth). Since the Neuron harness rule (requests in
/// flight from each row's P50, one cost per call) the rows beyond 25 % are ResNet-18 (+31 %,
/// +35 %), ResNet-152 at batch 64 (−32 %) and the blind VGG rows (VGG-11 −47 % / +43 %, VGG-16
/// at batch 8 −43 %: VGG's wide 3x3 convolutions run at about twice ResNet-50's fitted
/// efficiency); each is held to its measured gap (+0.5 point) so a regression fails. The L40S's
/// MLPerf v4.1 rows, added blind on 2026-12-07, add two: Dell's and HPE's ResNet-50 Offline at
/// batch 32 (−38.7 %, −36.0 %), where the L4's 0.5 ms per-batch overhead, carried, is most of
/// the predicted batch.
#[test]
fn gpu_and_asic_classic_held_out_rows_stay_within_their_measured_bounds() {
    let rep = shipped_report();
    let rows: Vec<_> = rep
        .rows
        .iter()
        .filter(|r| {
            r.split == Split::HeldOut
                && (r.kind == "gpu" || r.kind == "asic")
                && !r.metric.generative()
        })
        .collect();
    assert!(rows.len() >= 7, "{}", rows.len());
    for r in rows {
        let bound = match r.id.as_str() {
            "inf2-resnet18-b8" => 0.317,
            "inf2-resnet18-b1" => 0.353,
            "inf2-resnet152-b64" => 0.322,
            "inf2-vgg11-b64" => 0.471,
            "inf2-vgg11-b1" => 0.434,
            "inf2-vgg16-b8" => 0.438,
            "l40s-v41-dell-r760xa-l40sx4-resnet50-offline" => 0.392,
            "l40s-v41-hpe-dl380a-l40sx4-resnet50-offline" => 0.365,
            _ => 0.25,
        };
        assert!(r.error.abs() <= bound, "{}: {:+.3}", r.id, r.error);
    }
}

/// Issue 10: at least six generative rows (MLPerf LLM Offline and Server, published points at a
/// fixed concurrency, Neuron decoder rows), predicted by `tco-sim accuracy`, and — the rule in
/// the table's header — none of them sets a constant except those no classic row can set: the
/// all-reduce latency (a batch-1 decode step of a split replica), the attention's KV-read
/// efficiency (a decode step of a compiled-shape device), and the GEMM efficiency of a profile
/// with no classic row (its Offline row; MI300X), at most one row each per profile.
#[test]
fn generative_rows_run_and_are_all_held_out() {
    let t = table();
    let gen_rows: Vec<&accuracy::Row> = t.rows.iter().filter(|r| r.metric.generative()).collect();
    assert!(gen_rows.len() >= 6, "{} generative rows", gen_rows.len());
    let mut generative_fits = std::collections::BTreeSet::new();
    for r in &gen_rows {
        if r.split == Split::Fit {
            match r.fit {
                Some(accuracy::Constant::AllreduceLatency) => {
                    assert_eq!(r.metric, accuracy::Metric::Tpot, "{}", r.id);
                    assert_eq!(r.batch, Some(1), "{}: a batch-1 decode step", r.id);
                    assert!(
                        r.tensor_parallel.unwrap_or(1) > 1,
                        "{}: a split replica",
                        r.id
                    );
                }
                // A batch-1 decode step on one device: its fixed time (the iteration overhead)
                // or, on a profile with no other fit row, its weight read (the memory).
                Some(c @ (accuracy::Constant::IterationOverhead | accuracy::Constant::Memory)) => {
                    assert_eq!(r.metric, accuracy::Metric::Tpot, "{}", r.id);
                    assert_eq!(r.batch, Some(1), "{}: a batch-1 decode step", r.id);
                    assert!(
                        r.tensor_parallel.unwrap_or(1) == 1 && r.chips == Some(1),
                        "{}: an unsplit replica, no all-reduce in its step",
                        r.id
                    );
                    if c == accuracy::Constant::Memory {
                        // Its profile's other fit rows, if any, set the interconnect, which an
                        // unsplit step never crosses: the memory is what it changes.
                        assert!(
                            !t.rows.iter().any(|o| o.profile == r.profile
                                && o.id != r.id
                                && o.fit.is_some()
                                && !matches!(
                                    o.fit,
                                    Some(
                                        Constant::AllreduceLatency
                                            | Constant::InterconnectBandwidth
                                    )
                                )),
                            "{}: its profile has no other fit row but the interconnect's",
                            r.id
                        );
                    }
                }
                // A streamed server's host cost per sequence: a loaded closed-loop ITL on one
                // device, whose profile's lone decode step (same page) sets the fixed time.
                Some(accuracy::Constant::StreamOverhead) => {
                    assert_eq!(r.metric, accuracy::Metric::TpotAtConcurrency, "{}", r.id);
                    assert!(
                        r.concurrency.unwrap_or(0) >= 25,
                        "{}: a loaded server",
                        r.id
                    );
                    assert!(
                        r.tensor_parallel.unwrap_or(1) == 1 && r.chips == Some(1),
                        "{}: an unsplit replica",
                        r.id
                    );
                    assert!(
                        t.rows.iter().any(|o| o.profile == r.profile
                            && o.source == r.source
                            && o.fit == Some(accuracy::Constant::IterationOverhead)),
                        "{}: its page's lone step sets the iteration overhead",
                        r.id
                    );
                }
                // The bandwidth an all-reduce reaches: a split replica's decode step at a large
                // batch (its all-reduces' bytes grow with the batch), whose profile's batch-1
                // step of the same split sets the latency.
                Some(Constant::InterconnectBandwidth) => {
                    assert_eq!(r.metric, accuracy::Metric::Tpot, "{}", r.id);
                    assert!(r.batch.unwrap_or(1) >= 64, "{}: a large batch", r.id);
                    assert!(
                        t.rows.iter().any(|o| o.profile == r.profile
                            && o.fit == Some(Constant::AllreduceLatency)
                            && o.tensor_parallel == r.tensor_parallel
                            && o.batch == Some(1)),
                        "{}: its latency is set by a batch-1 step of the same split",
                        r.id
                    );
                }
                Some(accuracy::Constant::AttentionMemory) => {
                    assert_eq!(r.metric, accuracy::Metric::Tpot, "{}", r.id);
                    assert!(
                        r.compiled_context_tokens.is_some(),
                        "{}: a compiled-shape decode step",
                        r.id
                    );
                }
                Some(accuracy::Constant::ComputeMatmul) => {
                    assert_eq!(r.metric, accuracy::Metric::TokensOffline, "{}", r.id);
                    assert!(
                        !t.rows
                            .iter()
                            .any(|c| c.profile == r.profile && !c.metric.generative()),
                        "{}: its profile has a classic row to set compute_matmul",
                        r.id
                    );
                }
                other => panic!("{}: a generative row may not set {other:?}", r.id),
            }
            assert!(
                generative_fits.insert((r.profile.clone(), r.fit)),
                "{}: one per constant per profile",
                r.id
            );
            continue;
        }
        assert_eq!(r.split, Split::HeldOut, "{}", r.id);
        assert!(r.fit.is_none(), "{}", r.id);
        assert!(
            ["gpu", "asic", "arm-cpu"].contains(&r.kind.as_str()),
            "{}: {}",
            r.id,
            r.kind
        );
        assert!(
            tco_sim::workload::GENERATIVE_PRESETS.contains(&r.workload.as_str()),
            "{}",
            r.id
        );
    }
    let metrics: BTreeSet<&str> = gen_rows.iter().map(|r| r.metric.label()).collect();
    for m in [
        "tokens-offline",
        "tokens-server",
        "tokens-at-concurrency",
        "tpot-at-concurrency",
        "ttft-at-concurrency",
        "tpot",
    ] {
        assert!(metrics.contains(m), "no {m} row: {metrics:?}");
    }
    // MLPerf LLM rows on both H100 and H200 systems.
    for p in ["hgx-h100-8x", "hgx-h200-8x"] {
        for m in [
            accuracy::Metric::TokensOffline,
            accuracy::Metric::TokensServer,
        ] {
            assert!(
                gen_rows.iter().any(|r| r.profile == p && r.metric == m),
                "{p} {m:?}"
            );
        }
    }
    let rep = shipped_report();
    for r in rep.rows.iter().filter(|r| r.metric.generative()) {
        assert!(
            r.predicted.is_finite() && r.predicted > 0.0,
            "{}: {}",
            r.id,
            r.predicted
        );
        assert!(r.error.is_finite(), "{}", r.id);
    }
    assert!(
        rep.summary
            .iter()
            .any(|s| s.metric == accuracy::Metric::TokensServer)
    );
}

/// A held-out row never sets a constant: doubling every held-out row's published figure leaves
/// every fitted constant exactly as it was (a held-out row that fed the fit would move one).
#[test]
fn held_out_rows_set_no_constant() {
    let t = table();
    let base = accuracy::fit(&t).unwrap();
    let mut moved = table();
    for r in moved.rows.iter_mut().filter(|r| r.split == Split::HeldOut) {
        r.published *= 2.0;
    }
    let after = accuracy::fit(&moved).unwrap();
    assert_eq!(base.len(), after.len());
    for (a, b) in base.iter().zip(&after) {
        assert_eq!(
            (a.profile.as_str(), a.constant, a.value.to_bits()),
            (b.profile.as_str(), b.constant, b.value.to_bits()),
            "a held-out row moved a fitted constant"
        );
        for id in &a.rows {
            let r = t.rows.iter().find(|r| &r.id == id).unwrap();
            assert_eq!(
                r.split,
                Split::Fit,
                "{id} is held-out but set {:?}",
                a.constant
            );
        }
    }
}

/// The MLPerf llama2-70b Server rows replay their dataset's spread of prompt and output lengths
/// (`token_cv`), drawn so that the means stay the published ones. Probed at the request floor
/// alone (`min_duration_s` = 1 s: about 110 s of arrivals, before the queue can grow), the
/// simulated Server meets MLPerf's TTFT and TPOT bounds right up to the plan's full-load
/// capacity with or without the spread, so the prediction is the same within the bisection's
/// 0.1 % step: a spread that moved it there (as an earlier draw whose clamp cut the mean did, by
/// −1.6 %) would be counting tokens the capacity was not computed for. (Over a LoadGen run's
/// length the spread may move it: that is its tail, not its mean.) One row moves more, and is
/// held to what it measured (+0.66 %, within 1 %; +0.39 % before the L40S's PCIe all-reduce was
/// fitted, slowing its steps): Fujitsu's L40S at TP4, whose steps at a batch of ~1,000 are the
/// slowest of these rows (PCIe all-reduces, GDDR6), so its floor probe sits nearer the 200 ms
/// TPOT bound, where the spread's tail can move the capacity.
#[test]
fn server_rows_with_a_length_spread_keep_the_published_means() {
    let t = table();
    let spread: Vec<&accuracy::Row> = t.rows.iter().filter(|r| r.token_cv.is_some()).collect();
    assert_eq!(
        spread.len(),
        27,
        "the MLPerf llama2-70b Server rows: v4.1's three of NVIDIA and AMD, 16 of other vendors' H100 and H200 and Fujitsu's L40S, the MI300X's other three (AMD's one-GPU and Turin systems, Dell's), v4.0's four"
    );
    for r in spread {
        assert_eq!(r.metric, accuracy::Metric::TokensServer, "{}", r.id);
        let p = accuracy::shipped_profile(&r.profile).unwrap();
        let mut at_floor = r.clone();
        at_floor.min_duration_s = Some(1.0);
        let varied = accuracy::predict(&t, &at_floor, &p).unwrap();
        let mut fixed = at_floor.clone();
        fixed.token_cv = None;
        fixed.max_tokens = None;
        let fixed = accuracy::predict(&t, &fixed, &p).unwrap();
        let within = if r.id == "l40s-v41-fujitsu-cdi-l40sx8-llama2-70b-server" {
            0.01
        } else {
            0.002
        };
        assert!(
            (varied / fixed - 1.0).abs() < within,
            "{}: {varied} with the spread against {fixed} at fixed lengths",
            r.id
        );
    }
}

/// `token_cv` only has an effect where a Server simulation draws lengths: elsewhere, or
/// without its clamp, the table is refused.
#[test]
fn token_cv_is_refused_where_it_has_no_effect() {
    let e = refused_with(
        "published = 24524.9",
        "token_cv = 0.78\nmax_tokens = 1024\npublished = 24524.9",
    );
    assert!(
        e.contains("h100-llama2-70b-offline") && e.contains("tokens-server rows only"),
        "{e}"
    );
    let e = refused_with("max_tokens = 1024\n", "");
    assert!(e.contains("go together"), "{e}");
    let e = refused_with("token_cv = 0.78\n", "token_cv = 0\n");
    assert!(e.contains("token_cv must be in (0, 10]"), "{e}");
}

/// An LLM Server row is probed over its LoadGen run's length: at the floor alone (a 1 s
/// minimum) the H100 probes end before the 70B server's batch and KV cache reach their steady
/// state and read a higher rate than over the run's 2,400 s. The key is required on a
/// tokens-server row, refused on any other, and bounded.
#[test]
fn a_server_probe_lasts_its_loadgen_run() {
    let id = "h100-llama2-70b-server";
    let (from, to) = ("min_duration_s = 2400\n", "min_duration_s = 1\n");
    let short = accuracy::TABLE.replacen(from, to, 1);
    assert_ne!(short, accuracy::TABLE);
    let (run, floor) = (predicted_in(accuracy::TABLE, id), predicted_in(&short, id));
    assert!(
        run < floor,
        "over the run {run} tokens/s, at the floor {floor}"
    );
    let e = refused_with(from, "");
    assert!(e.contains(id) && e.contains("needs min_duration_s"), "{e}");
    let e = refused_with(from, "min_duration_s = 0.5\n");
    assert!(e.contains("from 1 to 86400 s"), "{e}");
    let e = refused_with(
        "published = 24524.9",
        "min_duration_s = 600\npublished = 24524.9",
    );
    assert!(
        e.contains("h100-llama2-70b-offline") && e.contains("remove it"),
        "{e}"
    );
}

/// A row's engine scheduler reaches its prediction: a 512-token budget caps the H100 Offline
/// engine's batch at 290 sequences (512 x 290 / (222 + 290)) where its 896 ran, so tokens/s fall
/// (by 8.5 %: the step is compute-bound either way, only the per-step weight read and overheads
/// are spread over fewer sequences); the keys are refused where no scheduler runs, and a budget
/// without chunking is refused.
#[test]
fn a_rows_engine_scheduler_reaches_its_prediction_and_is_refused_where_it_has_none() {
    let predicted = |text: &str| predicted_in(text, "h100-llama2-70b-offline");
    let base = predicted(accuracy::TABLE);
    let small = accuracy::TABLE.replacen(
        "max_batched_tokens = 4096\nmetric = \"tokens-offline\"",
        "max_batched_tokens = 512\nmetric = \"tokens-offline\"",
        1,
    );
    assert_ne!(small, accuracy::TABLE);
    let capped = predicted(&small);
    assert!(capped < 0.95 * base, "{capped} vs {base}");
    // Reserving each sequence's whole context (TensorRT-LLM's guaranteed_no_evict) fits fewer
    // sequences in the KV cache than paged blocks do: 128 + 4,096 tokens each against
    // 128 + 2,048 + 8 on average. With its batch limit lifted from trtllm-bench's 256 to 1,024,
    // this row's batch is bound by its cache, so paged runs more sequences and its tokens/s
    // rise — by 5 %, not 2x: each step of the larger batch reads that much more KV.
    let id = "trtllm-h100-llama31-8b-128-4096";
    let with = |kv: &str| {
        let at = accuracy::TABLE.find(&format!("id = \"{id}\"")).unwrap();
        let row = accuracy::TABLE[at..]
            .replacen("kv_allocation = \"reserve\"", kv, 1)
            .replacen("batch = 256", "batch = 1024", 1);
        predicted_in(&format!("{}{row}", &accuracy::TABLE[..at]), id)
    };
    let (reserved, paged) = (
        with("kv_allocation = \"reserve\""),
        with("kv_allocation = \"paged\""),
    );
    assert!(paged > 1.03 * reserved, "{paged} vs {reserved}");
    for key in ["kv_allocation = \"paged\"", "chunked_prefill = false"] {
        let e = refused_with("metric = \"tpot\"", &format!("{key}\nmetric = \"tpot\""));
        assert!(e.contains("runs no scheduler"), "{key}: {e}");
    }
    let (from, to) = (
        "max_batched_tokens = 4096\nmetric = \"tokens-offline\"",
        "max_batched_tokens = 4096\nkv_allocation = \"evict\"\nmetric = \"tokens-offline\"",
    );
    let e = refused_with(from, to);
    // Named where it stands: file, line and column, the key, and the valid values.
    let at = e
        .strip_prefix("data/accuracy.toml:")
        .unwrap_or_else(|| panic!("{e}"));
    let line: usize = at.split(':').next().unwrap().parse().unwrap();
    let text = accuracy::TABLE.replacen(from, to, 1);
    assert_eq!(
        text.lines().nth(line - 1),
        Some("kv_allocation = \"evict\""),
        "{e}"
    );
    assert!(
        e.contains("kv_allocation") && e.contains("paged, reserve"),
        "{e}"
    );
    let e = refused_with("max_batched_tokens = 65536\n", "max_batched_tokens = 0\n");
    assert!(e.contains("max_batched_tokens") && e.contains("≥ 1"), "{e}");
}

/// A row's `interconnect_topology` reaches its prediction: the 4-GPU H100 systems link each
/// pair of GPUs by 6 of their 18 NVLinks, so a TP2 engine's all-reduces cross a third of the
/// bandwidth an NVSwitch gives; "switch" is the profile's own topology and predicts what the row
/// without the key does. The key is refused on a row that splits nothing over devices, and an
/// unknown topology names the valid ones where it stands.
#[test]
fn a_rows_interconnect_topology_reaches_its_prediction_and_is_refused_where_nothing_crosses_it() {
    let id = "v41-dell-xe8640-h100-sxm-80gbx4-llama2-70b-offline";
    let at = accuracy::TABLE.find(&format!("id = \"{id}\"")).unwrap();
    let key = "interconnect_topology = \"mesh\"\n";
    let end = at + accuracy::TABLE[at..].find("\n\n").unwrap();
    assert!(
        accuracy::TABLE[at..end].contains(key),
        "`{key}` is not in row {id}"
    );
    let with = |replacement: &str| {
        let row = accuracy::TABLE[at..].replacen(key, replacement, 1);
        predicted_in(&format!("{}{row}", &accuracy::TABLE[..at]), id)
    };
    let (mesh, switch, none) = (
        with(key),
        with("interconnect_topology = \"switch\"\n"),
        with(""),
    );
    assert_eq!(switch.to_bits(), none.to_bits(), "{switch} vs {none}");
    // The bytes of a TP2 step's all-reduces take three times as long over 6 links as over 18;
    // at ~1,600 tokens an iteration that is a tenth of the step.
    assert!(
        mesh < 0.92 * switch && mesh > 0.8 * switch,
        "{mesh} vs {switch}"
    );

    // The same rule, at the plan: a pair of a 4-device mesh gets (2-1)/(4-1) of the bandwidth.
    let mut p = accuracy::shipped_profile("hgx-h100-8x").unwrap();
    p.chips.value = 4.0;
    let model = tco_sim::workload::generative_preset("llama-2-70b").unwrap();
    let (_, over_switch) = tco_sim::perf::collective_cost(&p, &model, 2);
    p.interconnect_mesh = true;
    let (_, over_mesh) = tco_sim::perf::collective_cost(&p, &model, 2);
    assert!(
        (over_mesh / over_switch - 3.0).abs() < 1e-12,
        "{over_mesh} / {over_switch}"
    );

    // The table's first classic row (ResNet-50 on one H100) splits nothing over devices.
    let classic = refused_with(
        "metric = \"offline\"",
        "interconnect_topology = \"mesh\"\nmetric = \"offline\"",
    );
    assert!(
        classic.contains("interconnect_topology") && classic.contains("tensor_parallel ≥ 2"),
        "{classic}"
    );
    // A profile whose links carry nothing: the key would have no effect, so it is refused.
    let t = table();
    let row = t.rows.iter().find(|r| r.id == id).unwrap();
    let mut free = accuracy::shipped_profile(&row.profile).unwrap();
    free.interconnect_bandwidth = None;
    let e = accuracy::predict(&t, row, &free).unwrap_err().to_string();
    assert!(
        e.contains(id) && e.contains("no interconnect bandwidth"),
        "{e}"
    );
    let e = refused_with(key, "interconnect_topology = \"ring\"\n");
    assert!(
        e.starts_with("data/accuracy.toml:") && e.contains("switch") && e.contains("mesh"),
        "{e}"
    );
}

/// The NVLink mesh's blind test (data/accuracy.toml, MLPerf v4.0): the 4-GPU systems' published
/// tokens/s per GPU, over the same round's 8-GPU systems', sit nearer the ratio the planner
/// predicts with their mesh than the one it predicts through a switch — for at least three of
/// the four rows, the pass criterion committed with the rule.
#[test]
fn the_4_gpu_mesh_predicts_mlperf_v4_0s_per_gpu_ratio() {
    let t = table();
    let (mut seen, mut passed) = (0, 0);
    for scenario in ["offline", "server"] {
        let eight: Vec<_> = t
            .rows
            .iter()
            .filter(|r| r.source == "mlperf-v4-0" && r.chips.is_none())
            .filter(|r| r.id.ends_with(scenario))
            .collect();
        assert_eq!(eight.len(), 2, "{scenario}");
        let per_gpu = |v: f64| v / 8.0;
        let published8 = eight.iter().map(|r| per_gpu(r.published)).sum::<f64>() / 2.0;
        let predicted8 = eight
            .iter()
            .map(|r| per_gpu(predicted_in(accuracy::TABLE, &r.id)))
            .sum::<f64>()
            / 2.0;
        for four in t
            .rows
            .iter()
            .filter(|r| r.source == "mlperf-v4-0" && r.chips == Some(4))
            .filter(|r| r.id.ends_with(scenario))
        {
            let at = accuracy::TABLE
                .find(&format!("id = \"{}\"", four.id))
                .unwrap();
            let switch = format!(
                "{}{}",
                &accuracy::TABLE[..at],
                accuracy::TABLE[at..].replacen(
                    "interconnect_topology = \"mesh\"",
                    "interconnect_topology = \"switch\"",
                    1
                )
            );
            let ratio = |v: f64| v / 4.0 / predicted8;
            let (mesh, through_switch) = (
                ratio(predicted_in(accuracy::TABLE, &four.id)),
                ratio(predicted_in(&switch, &four.id)),
            );
            let published = four.published / 4.0 / published8;
            seen += 1;
            assert!(
                mesh < 0.9 && (through_switch - 1.0).abs() < 0.01,
                "{mesh} {through_switch}"
            );
            if (published - mesh).abs() < (published - through_switch).abs() {
                passed += 1;
            }
        }
    }
    assert_eq!(
        seen, 4,
        "the v4.0 4-GPU rows: two systems, Offline and Server"
    );
    assert!(passed >= 3, "{passed} of 4 rows nearer the mesh");
}

/// A closed-loop row without a concurrency (or an open-loop row with one) is refused on load.
#[test]
fn a_closed_loop_row_needs_its_concurrency() {
    let e = refused_with("concurrency = 25\n", "");
    assert!(e.contains("needs concurrency"), "{e}");
}

/// The CPU rows, asserted loosely so a regression in the CPU physics (cache-resident weights,
/// instances of several cores at Amdahl's speed-up, CPU batching) fails: each prediction within
/// a band around today's error. The two fit rows reproduce (ResNet-50 Offline on 1-core
/// instances sets compute, BERT-99 Offline on 4-core instances the serial fraction); the Server
/// rows on 2- and 8-core instances are held out.
#[test]
fn cpu_rows_stay_within_their_bands() {
    let rep = shipped_report();
    let err = |id: &str| {
        rep.rows
            .iter()
            .find(|r| r.id == id)
            .unwrap_or_else(|| panic!("no row {id}"))
            .error
    };
    assert!(
        err("xeon-resnet50-offline").abs() < 0.01,
        "the fit row reproduces"
    );
    assert!(
        err("xeon-bert99-offline").abs() < 0.01,
        "the fit row reproduces"
    );
    assert!(
        err("xeon-resnet50-server").abs() < 0.10,
        "{}",
        err("xeon-resnet50-server")
    );
    // BERT at SQuAD's variable length (Intel's harness packs by tokens) on 8-core instances:
    // +9.5 % (measured 2026-12-02; +44 % while k cores computed k times as fast as one).
    let e = err("xeon-bert99-server");
    assert!((-0.15..=0.15).contains(&e), "xeon-bert99-server: {e}");
}

/// The Arm CPU rows (Ampere Altra Max, llama.cpp decode of Llama-3-8B at 8-bit), held to bands
/// around their errors measured 2026-12-02 with `tco-sim accuracy` so a regression in the CPU
/// decode model fails: batch 1 −9.2 % (decode reads every weight once per step: bandwidth-bound,
/// as modelled); batch 32 +8.5 % — compute-bound, its GEMMs split over 128 threads at the Xeon's
/// fitted serial fraction (carried to this profile as an estimate; −78.9 % before, when 128
/// threads computed 128 times as fast as one). Both are held out: no Altra constant is fitted.
#[test]
fn arm_cpu_rows_stay_within_their_bands() {
    let rep = shipped_report();
    let err = |id: &str| {
        let r = rep
            .rows
            .iter()
            .find(|r| r.id == id)
            .unwrap_or_else(|| panic!("no row {id}"));
        assert_eq!(r.kind, "arm-cpu", "{id}");
        assert_eq!(r.split, Split::HeldOut, "{id}");
        r.error
    };
    let e = err("altramax-llama3-8b-q8r16-b1-tpot");
    assert!((-0.25..=0.25).contains(&e), "batch 1: {e}");
    let e = err("altramax-llama3-8b-q8r16-b32-tpot");
    assert!((-0.25..=0.25).contains(&e), "batch 32: {e}");
}

/// The Neuron harness (data/accuracy.toml's rule of 2026-12-05): every Inferentia2 classic row
/// carries its table row's P50 latency, from which Little's law gives the requests in flight —
/// two on the encoder rows (one per NeuronCore), four on the CNN and ViT throughput rows, one on
/// their batch-1 rows — and a row with one in flight is predicted at half the chip's throughput.
#[test]
fn the_neuron_harness_requests_in_flight_come_from_each_rows_own_latency() {
    let t = table();
    let rep = shipped_report();
    let neuron: Vec<&accuracy::Row> = t
        .rows
        .iter()
        .filter(|r| r.profile == "aws-inf2.xlarge" && r.metric == accuracy::Metric::Offline)
        .collect();
    assert!(neuron.len() >= 24, "{} rows", neuron.len());
    for r in &neuron {
        let n = r.in_flight().unwrap_or_else(|| panic!("{}: no P50", r.id));
        let cnn_or_vit = ["resnet", "vgg", "vit"]
            .iter()
            .any(|m| r.workload.starts_with(m));
        let expected = match (cnn_or_vit, r.batch) {
            (false, _) => 2.0,
            (true, Some(1)) => 1.0,
            (true, _) => 4.0,
        };
        assert_eq!(n, expected, "{}", r.id);
        assert_eq!(r.busy_core_share(), expected.min(2.0) / 2.0, "{}", r.id);
    }
    // One in flight: exactly half of what the same row predicts with both cores busy.
    let r = neuron.iter().find(|r| r.id == "inf2-resnet50-b1").unwrap();
    let mut both = (*r).clone();
    both.latency_p50_ms = None;
    both.data_parallel_cores = None;
    let p = accuracy::shipped_profile("aws-inf2.xlarge").unwrap();
    let full = accuracy::predict(&t, &both, &p).unwrap();
    let row = rep.rows.iter().find(|x| x.id == r.id).unwrap();
    let got = row.predicted;
    assert!((got - 0.5 * full).abs() < 1e-9 * full, "{got} vs {full}");
    // The output says the configuration it predicted.
    assert!(
        row.system.contains("1 in flight") && row.system.contains("50 % of the device busy"),
        "{}",
        row.system
    );
}

/// A P50 that does not give a whole number of requests in flight, or one without its cores, is
/// refused naming the row.
#[test]
fn a_neuron_row_whose_latency_does_not_match_its_throughput_is_refused() {
    let e = refused_with("latency_p50_ms = 0.83\n", "latency_p50_ms = 1.2\n");
    assert!(
        e.contains("inf2-resnet50-b1") && e.contains("in flight"),
        "{e}"
    );
    let e = refused_with(
        "latency_p50_ms = 0.83\ndata_parallel_cores = 2\n",
        "latency_p50_ms = 0.83\n",
    );
    assert!(e.contains("go together"), "{e}");
}

/// The rows read from the NIM page's length tables: those the first rule added (25 and 100
/// clients), or the rest (the iteration-overhead rule's).
fn nim_table_rows(t: &accuracy::Table, at_25_or_100: bool) -> Vec<&accuracy::Row> {
    rows_where(t, |r| {
        r.source == "nim-bench-tables"
            && r.concurrency.unwrap_or(1) <= 100
            && matches!(r.concurrency, Some(25 | 100)) == at_25_or_100
    })
}

/// The table's rows that `keep` keeps, in table order.
fn rows_where(t: &accuracy::Table, keep: impl Fn(&accuracy::Row) -> bool) -> Vec<&accuracy::Row> {
    t.rows.iter().filter(|r| keep(r)).collect()
}

/// A closed-loop NIM row gives the point's tokens/s or its ITL, nothing else.
fn assert_tokens_or_itl(r: &accuracy::Row) {
    assert!(
        matches!(
            r.metric,
            accuracy::Metric::TokensAtConcurrency | accuracy::Metric::TpotAtConcurrency
        ),
        "{}",
        r.id
    );
}

/// The NIM rule of 2026-12-05 (data/accuracy.toml): every other length table of the page's
/// Llama-3.3-70B and Llama-3.1-8B results at 25 and 100 clients, tokens/s and ITL, except points
/// whose published TTFT passes 2 s — 14 points, 28 held-out rows — and the 100-client rows run
/// 100 sequences at once (the correction the page's TTFT supports).
#[test]
fn the_nim_rows_follow_their_rule() {
    let t = table();
    let nim = nim_table_rows(&t, true);
    assert_eq!(nim.len(), 28);
    let mut points = BTreeSet::new();
    for r in &nim {
        // One of them sets the streaming cost (the rule of 2026-12-06); the rest are held out.
        if r.id == "nim-h100x1-llama31-8b-200-200-c100-itl" {
            assert_eq!(r.split, Split::Fit, "{}", r.id);
            assert_eq!(r.fit, Some(accuracy::Constant::StreamOverhead), "{}", r.id);
        } else {
            assert_eq!(r.split, Split::HeldOut, "{}", r.id);
        }
        let c = r.concurrency.unwrap();
        assert!(c == 25 || c == 100, "{}", r.id);
        assert_eq!(r.batch, (c == 100).then_some(100), "{}", r.id);
        assert_tokens_or_itl(r);
        points.insert((r.workload.clone(), r.prompt_tokens, r.output_tokens, c));
    }
    // Each point gives both figures; none is the 5000/500 table the older NIM rows read for
    // Llama-3.3-70B, and none is 20000/2000 (its TTFT passes 2 s at 25 clients already).
    assert_eq!(points.len(), 14);
    for (w, i, o, _) in &points {
        assert!(!(w == "llama-2-70b" && *i == Some(5000)), "{w} {i:?}");
        assert_ne!((*i, *o), (Some(20000), Some(2000)));
    }
}

/// The NIM iteration-overhead rule of 2026-12-05 (data/accuracy.toml): the page's points at
/// concurrency 1 (ITL as one batch-1 decode step, and TTFT), 5 and 50 (tokens/s and ITL) of
/// every length table of both models, except points whose published TTFT passes 2 s — 50
/// held-out rows, 23 of the 70B and 27 of the 8B.
#[test]
fn the_nim_concurrency_rows_follow_their_rule() {
    let t = table();
    let rows = nim_table_rows(&t, false);
    let held: Vec<&&accuracy::Row> = rows.iter().filter(|r| r.split == Split::HeldOut).collect();
    assert_eq!(held.len(), 50);
    let fit: Vec<&str> = rows
        .iter()
        .filter(|r| r.split == Split::Fit)
        .map(|r| r.id.as_str())
        .collect();
    assert_eq!(fit, ["nim-h100x1-llama31-8b-200-200-c1-itl"]);
    let of = |w: &str| held.iter().filter(|r| r.workload == w).count();
    assert_eq!((of("llama-2-70b"), of("llama-3-8b")), (23, 27));
    for r in &rows {
        let c = r.concurrency.unwrap_or(1);
        assert!(matches!(c, 1 | 5 | 50), "{}", r.id);
        let expected = match (c, r.metric) {
            (1, accuracy::Metric::Tpot) => r.batch == Some(1) && r.concurrency.is_none(),
            (1, accuracy::Metric::TtftAtConcurrency) => r.batch.is_none(),
            (
                5 | 50,
                accuracy::Metric::TokensAtConcurrency | accuracy::Metric::TpotAtConcurrency,
            ) => r.batch.is_none(),
            _ => false,
        };
        assert!(expected, "{}: {:?} at concurrency {c}", r.id, r.metric);
        // The points whose published TTFT passes 2 s: 8B 20000/2000 from 50 clients, 70B
        // 20000/2000 from 5.
        let long = (r.prompt_tokens, r.output_tokens) == (Some(20000), Some(2000));
        let limit = if r.workload == "llama-2-70b" { 1 } else { 5 };
        assert!(!long || c <= limit, "{}", r.id);
    }
}

/// The per-source summary partitions the held-out rows and is computed from them, most rows
/// first — so a reader sees how much of the pooled figure one publication carries (78 of the
/// 124 held-out rows came from NIM's length tables on 2026-12-05; since 2026-12-06 the largest
/// source is TensorRT-LLM's online-serving table, 120 of 402).
#[test]
fn held_out_rows_by_source_partition_the_held_out_set() {
    let rep = shipped_report();
    let total: usize = rep.by_source.iter().map(|s| s.rows).sum();
    assert_eq!(total, rep.all_held_out.as_ref().unwrap().rows);
    assert!(rep.by_source.windows(2).all(|w| w[0].rows >= w[1].rows));
    for s in &rep.by_source {
        let errs: Vec<f64> = rep
            .rows
            .iter()
            .filter(|r| r.split == Split::HeldOut && r.source_key == s.source)
            .map(|r| r.error.abs())
            .collect();
        assert_eq!(errs.len(), s.rows, "{}", s.source);
        let max = errs.iter().copied().fold(0.0, f64::max);
        assert_eq!(s.max_abs_error, max, "{}", s.source);
    }
    let nim = rep
        .by_source
        .iter()
        .find(|s| s.source == "nim-bench-tables")
        .unwrap();
    // 1,473 rows of 2024 NIM runs (1,095 on H100, 378 on A100) before 1,124 TensorRT-LLM 0.9.0
    // steps (five models and precisions, four GPUs), then the 149 cells of the TensorRT-LLM
    // 0.17 table (H100, H200, A100 and L40S) and MLPerf v4.1's 123 (H100, H200, L40S).
    assert_eq!(rep.by_source[0].source, "nim-dli-llama3");
    assert_eq!(rep.by_source[1].source, "trt-llm-090-dli");
    assert_eq!(rep.by_source[2].source, "trtllm-v017-perf-overview");
    assert_eq!(rep.by_source[3].source, "mlperf-v4-1");
    assert_eq!(rep.by_source[4].source, "trtllm-online-serving");
    assert_eq!(rep.by_source[5].source, nim.source);
    assert!(nim.rows >= 78, "{}", nim.rows);
    let text = accuracy::render(rep);
    assert!(text.contains("Held-out rows by source"), "{text}");
}

/// The KV-cache deduction of 2026-12-05 (data/accuracy.toml): the NIM page's plateaus hold a
/// pool of tokens that fits an 80 GB H100 beside the fp8 weights only at 8 bits, so every NIM row
/// runs an 8-bit cache. The sequences decoding at once are tokens/s x ITL (Little's law); the
/// figures are the page's plateau points (tokens/s, ITL ms, mean context).
#[test]
fn the_nim_rows_run_the_8_bit_cache_their_plateaus_require() {
    use tco_sim::hardware::Precision;
    use tco_sim::hardware::ProfileSearch;
    use tco_sim::workload::generative_preset;
    let t = table();
    let nim = rows_where(&t, |r| r.source.starts_with("nim-bench"));
    assert!(nim.len() >= 84, "{}", nim.len());
    for r in &nim {
        assert_eq!(r.kv_cache_precision, Some(Precision::Fp8), "{}", r.id);
    }
    let h100 = ProfileSearch::default()
        .load("hgx-h100-8x", std::path::Path::new("."))
        .unwrap();
    let memory = h100.memory_bytes_per_chip.value;
    // (preset, GPUs, [(tokens/s, ITL ms, mean context)] at the plateaus)
    let plateaus = [
        (
            "llama-2-70b",
            2.0,
            [(920.9, 92.86, 5250.0), (427.06, 50.13, 21000.0)],
        ),
        (
            "llama-3-8b",
            1.0,
            [(3378.48, 50.41, 5250.0), (1337.66, 31.62, 21000.0)],
        ),
    ];
    for (preset, gpus, points) in plateaus {
        let m = generative_preset(preset).unwrap();
        let weights = m.parameters.value * Precision::Fp8.bytes() / gpus;
        for (tokens_per_s, itl_ms, context) in points {
            let pool_tokens = tokens_per_s * itl_ms / 1000.0 * context;
            let at = |p: Precision| pool_tokens * m.kv_bytes_per_token(p) / gpus;
            assert!(
                weights + at(Precision::Fp16) > memory,
                "{preset}: a 16-bit pool of {pool_tokens:.0} tokens would fit"
            );
            assert!(
                weights + at(Precision::Fp8) < 0.95 * memory,
                "{preset}: an 8-bit pool of {pool_tokens:.0} tokens would not fit"
            );
        }
    }
}

/// The rule of 2026-12-05 for NIM past 100 clients (data/accuracy.toml): every point of both
/// models' tables at 150, 200 and 250 clients whose published TTFT is at most 2 s, tokens/s and
/// ITL — 15 points, 30 held-out rows, 9 points of the 8B and 6 of the 70B — each running every
/// client at once (`batch` = concurrency) on the 8-bit cache.
#[test]
fn the_nim_rows_past_100_clients_follow_their_rule() {
    let t = table();
    let rows = rows_where(&t, |r| {
        r.source == "nim-bench-tables" && r.concurrency.unwrap_or(1) > 100
    });
    assert_eq!(rows.len(), 30);
    let mut points = BTreeSet::new();
    for r in &rows {
        assert_eq!(r.split, Split::HeldOut, "{}", r.id);
        let c = r.concurrency.unwrap();
        assert!(matches!(c, 150 | 200 | 250), "{}", r.id);
        assert_eq!(r.batch, Some(c), "{}", r.id);
        assert_tokens_or_itl(r);
        points.insert((
            r.workload.clone(),
            r.prompt_tokens,
            r.output_tokens,
            c,
            r.metric,
        ));
    }
    assert_eq!(points.len(), 30, "each point gives both figures once");
    let of = |w: &str| rows.iter().filter(|r| r.workload == w).count();
    assert_eq!((of("llama-3-8b"), of("llama-2-70b")), (18, 12));
    // No point of a table whose TTFT passed 2 s by then: 20000/2000 (both), 70B 5000/500.
    for r in &rows {
        assert_ne!(
            (r.prompt_tokens, r.output_tokens),
            (Some(20000), Some(2000))
        );
        assert!(!(r.workload == "llama-2-70b" && r.prompt_tokens == Some(5000)));
    }
}

/// The TensorRT-LLM perf-overview rows follow the rule committed with them (data/accuracy.toml):
/// all 40 cells of the two dense-Llama Hopper tables, held-out, offline tokens/s, chunked
/// prefill off, KV reserved whole, the 8-bit cache deduced below, and each row's `batch` is
/// trtllm-bench's heuristic for its ISL/OSL: requests fitting 0.90 of device memory less fp8
/// weights at 1-byte KV elements, capped at 4,096 and rounded up (32 under 256, 128 under
/// 1,024, else 256; at least 64).
#[test]
fn the_trtllm_rows_run_trtllm_bench_s_heuristic_batch() {
    use tco_sim::hardware::Precision;
    let t = table();
    let rows = rows_where(&t, |r| r.source == "trtllm-perf-overview");
    assert_eq!(rows.len(), 40);
    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
    const MIB: f64 = 1024.0 * 1024.0;
    for r in rows {
        assert_eq!(r.split, accuracy::Split::HeldOut, "{}", r.id);
        assert_eq!(r.metric, accuracy::Metric::TokensOffline, "{}", r.id);
        assert_eq!(r.chunked_prefill, Some(false), "{}", r.id);
        assert_eq!(
            r.kv_allocation,
            Some(tco_sim::hardware::KvAllocationChoice::Reserve),
            "{}",
            r.id
        );
        assert_eq!(r.kv_cache_precision, Some(Precision::Fp8), "{}", r.id);
        let device_mib = match r.profile.as_str() {
            "hgx-h100-8x" => 81_559.0,
            "hgx-h200-8x" => 143_771.0,
            p => panic!("{}: profile {p}", r.id),
        };
        let (layers, params) = checkpoint(&r.workload);
        let tp = f64::from(r.tensor_parallel.unwrap());
        assert_eq!(r.chips, r.tensor_parallel, "{}", r.id);
        // Both models have 8 KV heads of 128; trtllm-bench counts at least one head per GPU.
        let bytes_per_token_gib = 2.0 * layers * tp.max(8.0) * 128.0 * 1.0 / GIB;
        let available_gib = device_mib * MIB / GIB * tp - params / GIB;
        let seq = f64::from(r.prompt_tokens.unwrap() + r.output_tokens.unwrap());
        let raw = (available_gib * 0.90 / (bytes_per_token_gib * seq)).min(4096.0);
        let step = if raw < 256.0 {
            32.0
        } else if raw < 1024.0 {
            128.0
        } else {
            256.0
        };
        let batch = ((raw / step).ceil() * step).max(64.0);
        assert_eq!(f64::from(r.batch.unwrap()), batch, "{}", r.id);
    }
}

/// The TensorRT-LLM 0.17 rows (data/accuracy.toml, their rule) run the engine `trtllm-bench
/// build --dataset` of that release would build: max_batch_size from calc_engine_setting at its
/// default KV fraction 0.95, with the weights counted in 1e9-byte GB against NVML's GiB as that
/// code does, and the 8-bit cache the page states (16 bits, 2 bytes, in the A100's FP16 column).
/// All 122 cells of the two models on H100, H200 and A100, held-out when committed.
#[test]
fn the_trtllm_017_rows_run_their_build_heuristic_batch() {
    use tco_sim::hardware::Precision;
    let t = table();
    let rows = rows_where(&t, |r| r.source == "trtllm-v017-perf-overview");
    assert_eq!(rows.len(), 149);
    let on = |p: &str| rows.iter().filter(|r| r.profile == p).count();
    assert_eq!(
        (
            on("hgx-h100-8x"),
            on("hgx-h200-8x"),
            on("hgx-a100-8x"),
            on("aws-g6e.48xlarge")
        ),
        (43, 45, 34, 27)
    );
    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
    for r in rows {
        assert_eq!(r.metric, accuracy::Metric::TokensOffline, "{}", r.id);
        assert_eq!(r.chunked_prefill, Some(false), "{}", r.id);
        assert_eq!(r.max_batched_tokens, None, "{}", r.id);
        assert_eq!(
            r.kv_allocation,
            Some(tco_sim::hardware::KvAllocationChoice::Reserve),
            "{}",
            r.id
        );
        assert_eq!(r.chips, r.tensor_parallel, "{}", r.id);
        // NVML's totals (the L40S's from source nvidia-smi-l40s); the A100 column is the page's
        // FP16, the others its FP8.
        let (device_mib, precision) = match r.profile.as_str() {
            "hgx-h100-8x" => (81_559.0, Precision::Fp8),
            "hgx-h200-8x" => (143_771.0, Precision::Fp8),
            "hgx-a100-8x" => (81_920.0, Precision::Fp16),
            "aws-g6e.48xlarge" => (46_068.0, Precision::Fp8),
            p => panic!("{}: profile {p}", r.id),
        };
        assert_eq!(r.precision, precision, "{}", r.id);
        assert_eq!(r.kv_cache_precision, Some(precision), "{}", r.id);
        // That release's tuning.py: 1 byte per element in FP8, else 2, for weights and cache.
        let bytes = if precision == Precision::Fp8 {
            1.0
        } else {
            2.0
        };
        let device_gib = device_mib / 1024.0;
        let (layers, params) = checkpoint(&r.workload);
        let tp = f64::from(r.tensor_parallel.unwrap());
        let bytes_per_token_gib = 2.0 * layers * tp.max(8.0) * 128.0 * bytes / GIB;
        let available = device_gib * tp - params / 1e9 * bytes;
        let seq = f64::from(r.prompt_tokens.unwrap() + r.output_tokens.unwrap());
        let requests = available * 0.95 / bytes_per_token_gib / seq;
        assert!(available > 0.0 && requests >= 1.0, "{}", r.id);
        let raw = requests.min(4096.0);
        let batch = if raw < 256.0 {
            (32.0 * (raw / 32.0).ceil()).max(64.0)
        } else if raw < 1024.0 {
            128.0 * (raw / 128.0).ceil()
        } else {
            256.0 * (raw / 256.0).ceil()
        };
        assert_eq!(f64::from(r.batch.unwrap()), batch, "{}", r.id);
    }
}

/// The open-loop rows (data/accuracy.toml, their rule): every finite-QPS point of the online
/// serving table, a mean TTFT and a mean ITL each, 500 Poisson requests at the point's rate, as
/// the backend's defaults run them; held-out.
#[test]
fn the_online_serving_rows_are_every_finite_rate_point_twice() {
    let t = table();
    let rows = rows_where(&t, |r| r.source == "trtllm-online-serving");
    assert_eq!(rows.len(), 120);
    let mut points: BTreeSet<(String, u32, u32, u64)> = BTreeSet::new();
    for r in &rows {
        assert_eq!(r.split, Split::HeldOut, "{}", r.id);
        assert!(r.metric.at_rate(), "{}", r.id);
        assert_eq!(r.requests, Some(500), "{}", r.id);
        assert_eq!(r.chunked_prefill, Some(false), "{}", r.id);
        assert_eq!(r.kv_cache_precision, None, "{}: BF16 cache", r.id);
        assert_eq!(r.precision, tco_sim::hardware::Precision::Fp16, "{}", r.id);
        let rate = r.request_rate.unwrap();
        assert!([2.0, 4.0, 8.0, 16.0, 32.0].contains(&rate), "{}", r.id);
        points.insert((
            format!("{}/{}", r.profile, r.workload),
            r.prompt_tokens.unwrap(),
            r.output_tokens.unwrap(),
            rate as u64,
        ));
    }
    // 2 GPUs x 2 models x 3 lengths x 5 rates, each point a TTFT row and an ITL row.
    assert_eq!(points.len(), 60);
    let ttft = rows
        .iter()
        .filter(|r| r.metric == accuracy::Metric::TtftAtRate)
        .count();
    assert_eq!(ttft, 60);
}

/// An open-loop row without its rate, or a rate on another metric, is refused by name.
#[test]
fn an_open_loop_row_needs_its_rate_and_only_it_has_one() {
    let e = refused_with("request_rate = 2.0\n", "");
    assert!(e.contains("request_rate and requests"), "{e}");
    let e = refused_with("requests = 500\n", "requests = 0\n");
    assert!(e.contains("requests ≥ 1"), "{e}");
    let e = refused_with(
        "metric = \"tokens-offline\"\n",
        "metric = \"tokens-offline\"\nrequest_rate = 1.0\nrequests = 10\n",
    );
    assert!(e.contains("other rows neither"), "{e}");
}

/// At a rate so low that no two requests overlap, the open-loop run's mean time per output
/// token is a lone sequence's decode step at its mean context — what a `tpot` row at batch 1
/// predicts — within the per-iteration spread; and a rate near the fleet's capacity waits
/// longer for the first token than a trickle does.
#[test]
fn a_trickle_of_open_loop_requests_decodes_alone() {
    let t = table();
    let row = t
        .rows
        .iter()
        .find(|r| r.id == "trtllm014-online-h100-llama31-8b-tp1-467-256-qps2-tpot")
        .expect("the row");
    let profile = accuracy::shipped_profile(&row.profile).unwrap();
    let mut trickle = row.clone();
    trickle.request_rate = Some(0.01);
    trickle.requests = Some(40);
    let open = accuracy::predict(&t, &trickle, &profile).unwrap();
    let mut lone = row.clone();
    lone.metric = accuracy::Metric::Tpot;
    lone.batch = Some(1);
    lone.request_rate = None;
    lone.requests = None;
    lone.chunked_prefill = None;
    lone.kv_allocation = None;
    let step = accuracy::predict(&t, &lone, &profile).unwrap();
    assert!(
        (open / step - 1.0).abs() < 0.03,
        "open loop {open} ms, lone step {step} ms"
    );
    let mut first = trickle.clone();
    first.metric = accuracy::Metric::TtftAtRate;
    let ttft_trickle = accuracy::predict(&t, &first, &profile).unwrap();
    first.request_rate = Some(60.0);
    first.requests = Some(500);
    let ttft_busy = accuracy::predict(&t, &first, &profile).unwrap();
    assert!(
        ttft_busy > ttft_trickle,
        "{ttft_busy} ms busy, {ttft_trickle} ms alone"
    );
}

/// Layers and parameters of the TensorRT-LLM rows' checkpoints (their configs: Llama 3.1 8B,
/// 8,030,261,248; Llama 3.3 70B, 70,553,706,496), by the preset each row runs.
fn checkpoint(workload: &str) -> (f64, f64) {
    match workload {
        "llama-3-8b" => (32.0, 8.03e9),
        "llama-2-70b" => (80.0, 70.55e9),
        w => panic!("workload {w}"),
    }
}

/// The deduction that corrected the TensorRT-LLM rows' cache to 8 bits (data/accuracy.toml),
/// recomputed from the page's figures, the presets' KV size and the profiles' memory and peak
/// bandwidth: with sequences reserving ISL + OSL in 0.95 of the memory the fp8 weights leave,
/// a decode step reads the weights and each sequence's KV at ISL + OSL/2, which caps tokens/s
/// even at 100 % of peak bandwidth with prefill free. At 16 bits eleven 8B rows and two 70B rows
/// beat that cap (six while the profiles held 80 and 141 GB, not the 85.52 and 150.75 GB the
/// driver reports); at 8 bits none does.
#[test]
fn the_trtllm_rows_run_the_8_bit_cache_their_figures_require() {
    use tco_sim::hardware::{Precision, ProfileSearch};
    use tco_sim::workload::generative_preset;
    let t = table();
    let profiles: std::collections::BTreeMap<&str, _> = ["hgx-h100-8x", "hgx-h200-8x"]
        .into_iter()
        .map(|name| {
            let p = ProfileSearch::default().load(name, std::path::Path::new("."));
            (name, p.unwrap())
        })
        .collect();
    let mut beaten = std::collections::BTreeMap::<&str, usize>::new();
    for r in rows_where(&t, |r| r.source == "trtllm-perf-overview") {
        let p = &profiles[r.profile.as_str()];
        let gpus = f64::from(r.chips.unwrap());
        let (_, params) = checkpoint(&r.workload);
        let m = generative_preset(&r.workload).unwrap();
        let (isl, osl) = (
            f64::from(r.prompt_tokens.unwrap()),
            f64::from(r.output_tokens.unwrap()),
        );
        let weights = params * Precision::Fp8.bytes();
        let pool = 0.95 * (p.memory_bytes_per_chip.value * gpus - weights);
        let bandwidth = p.memory_bandwidth_per_chip.value * gpus;
        let cap = |kv: Precision| {
            let per_token = m.kv_bytes_per_token(kv);
            let sequences = pool / ((isl + osl) * per_token);
            bandwidth * sequences / (weights + sequences * (isl + osl / 2.0) * per_token)
        };
        assert!(r.published < 0.8 * cap(Precision::Fp8), "{}", r.id);
        if r.published > cap(Precision::Fp16) {
            *beaten.entry(r.workload.as_str()).or_default() += 1;
        }
    }
    assert_eq!(beaten.get("llama-3-8b"), Some(&11), "{beaten:?}");
    assert_eq!(beaten.get("llama-2-70b"), Some(&2), "{beaten:?}");
}

/// The evidence a report gives for an operating point is `tco-sim accuracy`'s own errors, on
/// exactly the held-out throughput rows of that kind of hardware within half to twice its
/// sequences in flight; the worst held-out throughput row (the 2024 NIM dataset's 8B at 100
/// clients) is in the evidence at its own concurrency, and a point no row is near says the
/// planner is untested there.
#[test]
fn evidence_near_an_operating_point_is_the_suites_own_rows_and_errors() {
    use tco_sim::hardware::UnitKind;
    let t = table();
    let report = shipped_report();
    let worst = report
        .rows
        .iter()
        .filter(|r| r.split == Split::HeldOut && r.metric.throughput())
        .max_by(|a, b| a.error.abs().total_cmp(&b.error.abs()))
        .expect("held-out throughput rows");
    let worst_row = t.rows.iter().find(|r| r.id == worst.id).expect("its row");
    let at = accuracy::sequences_in_flight(worst_row).expect("a generative row");
    let points = [
        (UnitKind::Gpu, at),
        (UnitKind::Gpu, 6.0),
        (UnitKind::Accelerator, 20.0),
    ];
    let found = accuracy::evidence(&points).expect("evidence");
    assert_eq!(found.len(), points.len());
    for (e, &(kind, n)) in found.iter().zip(&points) {
        assert_eq!((e.kind, e.sequences_per_replica), (kind, n));
        let expected: Vec<&str> = t
            .rows
            .iter()
            .filter(|r| {
                r.split == Split::HeldOut
                    && r.metric.throughput()
                    && accuracy::shipped_profile(&r.profile).expect("profile").kind == kind
                    && accuracy::sequences_in_flight(r)
                        .is_some_and(|s| s >= n / 2.0 && s <= n * 2.0)
            })
            .map(|r| r.id.as_str())
            .collect();
        let ids: Vec<&str> = e.rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, expected, "{kind:?} at {n}");
        for r in &e.rows {
            let suite = report
                .rows
                .iter()
                .find(|x| x.id == r.id)
                .expect("in the report");
            assert_eq!(r.error, suite.error, "{}", r.id);
        }
        if e.rows.is_empty() {
            assert!(e.sentence().contains("untested"), "{}", e.sentence());
            assert_eq!(e.median_abs_error, None);
        } else {
            let lo = e.rows.iter().map(|r| r.error).fold(f64::INFINITY, f64::min);
            let hi = e
                .rows
                .iter()
                .map(|r| r.error)
                .fold(f64::NEG_INFINITY, f64::max);
            assert_eq!((e.min_error, e.max_error), (Some(lo), Some(hi)));
            assert!(e.sentence().contains(&format!("{} held-out", e.rows.len())));
        }
    }
    assert!(found[0].rows.iter().any(|r| r.id == worst.id));
    let extreme = if worst.error < 0.0 {
        found[0].min_error
    } else {
        found[0].max_error
    };
    assert_eq!(extreme, Some(worst.error));
    assert!(!found[1].rows.is_empty());
    // Inferentia2's generative rows are TPOT, not throughput: none near 20.
    assert!(found[2].rows.is_empty());
}

/// The by-load summary partitions the held-out generative throughput rows into its bands, and
/// each band's figures are those of its rows' errors.
#[test]
fn held_out_generative_rows_by_sequences_in_flight_partition_and_hold_their_errors() {
    let t = table();
    let report = shipped_report();
    let generative: Vec<(f64, f64)> = t
        .rows
        .iter()
        .zip(&report.rows)
        .filter(|(_, r)| r.split == Split::HeldOut && r.metric.throughput())
        .filter_map(|(row, r)| Some((accuracy::sequences_in_flight(row)?, r.error)))
        .collect();
    assert!(generative.len() >= 80, "{}", generative.len());
    let total: usize = report.by_in_flight.iter().map(|b| b.rows).sum();
    assert_eq!(total, generative.len());
    for b in &report.by_in_flight {
        let mut errs: Vec<f64> = generative
            .iter()
            .filter(|(n, _)| *n >= f64::from(b.low) && b.high.is_none_or(|h| *n <= f64::from(h)))
            .map(|&(_, e)| e)
            .collect();
        assert_eq!(errs.len(), b.rows, "{}", b.label());
        let mean = errs.iter().sum::<f64>() / errs.len() as f64;
        assert!((mean - b.mean_error).abs() < 1e-12, "{}", b.label());
        let max = errs.iter().fold(0.0_f64, |m, e| m.max(e.abs()));
        assert_eq!(max, b.max_abs_error, "{}", b.label());
        errs.iter_mut().for_each(|e| *e = e.abs());
        errs.sort_by(f64::total_cmp);
        let k = errs.len();
        let median = if k % 2 == 1 {
            errs[k / 2]
        } else {
            (errs[k / 2 - 1] + errs[k / 2]) / 2.0
        };
        assert!((median - b.median_abs_error).abs() < 1e-12, "{}", b.label());
    }
    // The worst held-out throughput row (the DLI dataset's 70B fp8 TP8 7000/1000 at 2 clients,
    // +84 %) sits in the band of 1-4 sequences, as the README says; it was 65-256's (8B fp8
    // 2000/2000 at 100 clients, +116 %) until the 2024 fp8 engines ran a 16-bit cache. The
    // worst median is 65-256's (21.7 %, the NIM runs at 100-250 clients): 17-64 held it (14.3 %)
    // before the blind NIM rows at 2-250 clients, and before that 65-256 (18.3 %) until the
    // streaming cost brought it to 12.5 %.
    let worst = report
        .by_in_flight
        .iter()
        .max_by(|a, b| a.max_abs_error.total_cmp(&b.max_abs_error))
        .expect("bands");
    assert_eq!((worst.low, worst.high), (1, Some(4)));
    let worst_median = report
        .by_in_flight
        .iter()
        .max_by(|a, b| a.median_abs_error.total_cmp(&b.median_abs_error))
        .expect("bands");
    assert_eq!((worst_median.low, worst_median.high), (65, Some(256)));
    let out = accuracy::render(report);
    assert!(out.contains("by sequences in flight"), "{out}");
    assert!(out.contains("65–256"), "{out}");
}

/// A DLI NIM configuration: model, TP degree, precision, prompt and output tokens.
type DliConfig = (String, u32, String, u32, u32);

/// What every DLI NIM row shares, on either GPU: held-out, a closed-loop row of the file's
/// configurations (8B on one or two GPUs, 70B on four or eight, one chip per TP rank),
/// TensorRT-LLM's scheduler defaults of the time, a 16-bit KV cache, a batch limit of 256, one of
/// the file's concurrencies and six lengths, and the 2 s TTFT rule. Returns each configuration
/// (model, TP, precision, lengths) and each point's metrics, every point checked to give its TTFT
/// and ITL and, above one client, its tokens/s.
fn dli_configs_and_points(
    rows: &[&accuracy::Row],
) -> (BTreeSet<DliConfig>, BTreeMap<String, Vec<accuracy::Metric>>) {
    use accuracy::Metric;
    use tco_sim::hardware::KvAllocationChoice;
    let mut configs = BTreeSet::new();
    let mut points: BTreeMap<String, Vec<Metric>> = BTreeMap::new();
    for r in rows {
        assert_eq!(r.source, "nim-dli-llama3", "{}", r.id);
        assert_eq!(r.split, Split::HeldOut, "{}", r.id);
        assert!(r.metric.closed_loop(), "{}", r.id);
        let tp = r.tensor_parallel.unwrap();
        let expect_tp: &[u32] = if r.workload == "llama-3-8b" {
            &[1, 2]
        } else {
            &[4, 8]
        };
        assert!(expect_tp.contains(&tp), "{}", r.id);
        assert_eq!(r.chips, Some(tp), "{}", r.id);
        assert_eq!(r.chunked_prefill, Some(false), "{}", r.id);
        assert_eq!(
            r.kv_allocation,
            Some(KvAllocationChoice::Reserve),
            "{}",
            r.id
        );
        assert_eq!(r.batch, Some(256), "{}", r.id);
        // A 16-bit cache in fp8 engines too (the test of 2026-12-07).
        assert_eq!(r.kv_cache_precision, None, "{}", r.id);
        let c = r.concurrency.unwrap();
        assert!(
            [1, 2, 5, 10, 25, 50, 100, 150, 200, 250].contains(&c),
            "{}",
            r.id
        );
        let (i, o) = (r.prompt_tokens.unwrap(), r.output_tokens.unwrap());
        assert!(
            [
                (200, 200),
                (200, 1000),
                (200, 2000),
                (2000, 200),
                (2000, 2000),
                (7000, 1000)
            ]
            .contains(&(i, o)),
            "{}",
            r.id
        );
        configs.insert((r.workload.clone(), tp, format!("{:?}", r.precision), i, o));
        let point = r.id.rsplit_once('-').unwrap().0.to_string();
        points.entry(point).or_default().push(r.metric);
        if r.metric == Metric::TtftAtConcurrency {
            assert!(r.published <= 2000.0, "{}: the 2 s rule", r.id);
        }
    }
    for (p, metrics) in &points {
        let lone = p.ends_with("-c1");
        assert_eq!(metrics.len(), if lone { 2 } else { 3 }, "{p}");
        assert!(metrics.contains(&Metric::TtftAtConcurrency), "{p}");
        assert!(metrics.contains(&Metric::TpotAtConcurrency), "{p}");
    }
    (configs, points)
}

/// The DLI NIM rows on H100 (data/accuracy.toml, their three rules): every H100 point of the file
/// at 1, 25 and 100 clients, then at 2, 5 and 10 (the first of the file's two runs at 5), then at
/// 50, 150, 200 and 250, whose published mean TTFT is at most 2 s — 48 configurations (two
/// models, two TP degrees each, fp16 and fp8, six lengths), 126, 141 and 114 points — its TTFT
/// and ITL, and above one client its tokens/s; TensorRT-LLM's scheduler defaults, a 16-bit KV
/// cache (fp8 weights too); held-out.
#[test]
fn the_nim_dli_rows_follow_their_rule() {
    use tco_sim::hardware::Precision;
    let t = table();
    let rows = rows_where(&t, |r| {
        r.source == "nim-dli-llama3" && r.profile == "hgx-h100-8x"
    });
    let a100 = rows_where(&t, |r| {
        r.source == "nim-dli-llama3" && r.profile == "hgx-a100-8x"
    });
    let all = rows_where(&t, |r| r.source == "nim-dli-llama3");
    assert_eq!(
        rows.len() + a100.len(),
        all.len(),
        "a DLI row on another GPU"
    );
    assert_eq!(rows.len(), 330 + 423 + 342);
    for r in &rows {
        assert!(
            matches!(r.precision, Precision::Fp8 | Precision::Fp16),
            "{}",
            r.id
        );
    }
    let (configs, points) = dli_configs_and_points(&rows);
    assert_eq!(configs.len(), 48);
    let first = |p: &&String| [1, 25, 100].iter().any(|c| p.ends_with(&format!("-c{c}")));
    assert_eq!(points.keys().filter(first).count(), 126);
    let second = |p: &&String| [2, 5, 10].iter().any(|c| p.ends_with(&format!("-c{c}")));
    assert_eq!(points.keys().filter(second).count(), 141);
    assert_eq!(points.len(), 126 + 141 + 114);
}

/// The DLI NIM rows on A100 (data/accuracy.toml, their rule, the A100 profile's blind test):
/// every A100 point of the file — Llama 3 8B fp16 on one and two GPUs, 70B fp16 on four and bf16
/// on eight (run as fp16), six lengths, every concurrency — whose published mean TTFT is at most
/// 2 s, the first run of a repeated point: 134 points, 378 rows, held-out, configured as the H100
/// rows; none sets a constant: the profile's one fitted number, its memory efficiency, comes from
/// a TensorRT-LLM 0.9.0 A100 row (the rule after).
#[test]
fn the_nim_dli_a100_rows_follow_their_rule() {
    use tco_sim::hardware::Precision;
    let t = table();
    let rows = rows_where(&t, |r| {
        r.profile == "hgx-a100-8x" && r.source == "nim-dli-llama3"
    });
    assert_eq!(rows.len(), 378);
    for r in &rows {
        assert!(r.id.starts_with("nimdli-a100x"), "{}", r.id);
        assert_eq!(r.precision, Precision::Fp16, "{}", r.id);
    }
    let (configs, points) = dli_configs_and_points(&rows);
    assert_eq!(configs.len(), 24);
    assert_eq!(points.len(), 134);
    let profile = tco_sim::hardware::ProfileSearch::default()
        .load("hgx-a100-8x", Path::new("."))
        .unwrap();
    // Nothing is fitted on these rows: the one fitted A100 constant comes from another stack's
    // row (the TensorRT-LLM A100 rule below).
    let fitted: Vec<String> = profile
        .cited_numbers()
        .into_iter()
        .filter(|(_, c)| c.basis == tco_sim::cite::Basis::Fit)
        .map(|(field, _)| field.to_string())
        .collect();
    assert_eq!(fitted, ["efficiency.memory"]);
    for r in &rows {
        assert_eq!(r.split, Split::HeldOut, "{}", r.id);
    }
}

/// What every row of one GPU's TensorRT-LLM 0.9.0 block has (the A100's and the L40S's rules):
/// each of `fit_rows` sets its constant of the profile and every other row is held-out; each is one
/// decode step at `precision` with a cache of the same width, cites its line of the file as
/// `cited_as`, runs chips = tensor parallelism and a batch of 1 to 1,536; and the block holds
/// `expected` rows per (workload, tensor parallelism).
fn check_trt090_gpu_block(
    rows: &[&accuracy::Row],
    fit_rows: &[(&str, accuracy::Constant)],
    precision: tco_sim::hardware::Precision,
    cited_as: &str,
    expected: &[(&str, u32, usize)],
) {
    let mut by: BTreeMap<(&str, u32), usize> = BTreeMap::new();
    for r in rows {
        assert_eq!(r.source, "trt-llm-090-dli", "{}", r.id);
        if let Some(&(_, c)) = fit_rows.iter().find(|(id, _)| *id == r.id) {
            assert_eq!(r.split, Split::Fit, "{}", r.id);
            assert_eq!(r.fit, Some(c), "{}", r.id);
        } else {
            assert_eq!(r.split, Split::HeldOut, "{}", r.id);
            assert!(r.fit.is_none(), "{}", r.id);
        }
        assert_eq!(r.metric, accuracy::Metric::Tpot, "{}", r.id);
        assert_eq!(r.precision, precision, "{}", r.id);
        assert_eq!(r.kv_cache_precision, Some(precision), "{}", r.id);
        assert!(r.location.contains(cited_as), "{}", r.id);
        let tp = r.tensor_parallel.unwrap();
        assert_eq!(r.chips, Some(tp), "{}", r.id);
        assert!((1..=1536).contains(&r.batch.unwrap()), "{}", r.id);
        *by.entry((r.workload.as_str(), tp)).or_default() += 1;
    }
    let by: Vec<(&str, u32, usize)> = by.into_iter().map(|((w, tp), n)| (w, tp, n)).collect();
    assert_eq!(by, expected);
    for (id, _) in fit_rows {
        assert!(rows.iter().any(|r| r.id == *id), "{id} is missing");
    }
}

/// The L40S rows (data/accuracy.toml, their rule, 2026-12-07): every TensorRT-LLM 0.9.0 decode
/// step of LLaMA v2 7B, 13B, 70B and Mistral 7B on L40S with a token-to-token latency (214 rows,
/// all FP8 with an FP8 cache), on the 8-GPU g6e, one of which sets the L40S's memory efficiency
/// and two (TP2, batch 1 and 256; by the later TensorRT-LLM 0.17 L40S rule) its PCIe
/// all-reduce's latency and bandwidth; the one-GPU g6e carries the memory value and the chip.
#[test]
fn the_l40s_trtllm_090_rows_follow_their_rule() {
    use tco_sim::hardware::Precision;
    let t = table();
    let rows = rows_where(&t, |r| {
        r.profile.starts_with("aws-g6e.") && r.source == "trt-llm-090-dli"
    });
    assert_eq!(rows.len(), 214);
    assert!(rows.iter().all(|r| r.profile == "aws-g6e.48xlarge"));
    check_trt090_gpu_block(
        &rows,
        &[
            (
                "trt090-l40s-llama2-13b-fp8-tp1-b1-128-128-tpot",
                Constant::Memory,
            ),
            // Set later, by the TensorRT-LLM 0.17 L40S block's rule (data/accuracy.toml).
            (
                "trt090-l40s-llama2-70b-fp8-tp2-b1-128-128-tpot",
                Constant::AllreduceLatency,
            ),
            (
                "trt090-l40s-llama2-70b-fp8-tp2-b256-128-128-tpot",
                Constant::InterconnectBandwidth,
            ),
        ],
        Precision::Fp8,
        ", L40S, FP8, TP ",
        &[
            ("llama-2-13b", 1, 29),
            ("llama-2-70b", 2, 30),
            ("llama-2-70b", 4, 37),
            ("llama-2-70b", 8, 44),
            ("llama-2-7b", 1, 33),
            ("mistral-7b", 1, 41),
        ],
    );
    // The one-GPU instance is the same chip, with the fitted value carried.
    let load = |name: &str| accuracy::shipped_profile(name).unwrap();
    let (eight, one) = (load("aws-g6e.48xlarge"), load("aws-g6e.xlarge"));
    assert_eq!(one.efficiency_memory.value, eight.efficiency_memory.value);
    assert_eq!(
        one.memory_bytes_per_chip.value,
        eight.memory_bytes_per_chip.value
    );
    assert_eq!(one.efficiency_memory.basis, tco_sim::cite::Basis::Estimate);
    assert_eq!(eight.efficiency_memory.basis, tco_sim::cite::Basis::Fit);
}

/// An MLPerf row's system and benchmark: its id without the scenario suffix, so an Offline row
/// and its Server partner share it.
fn mlperf_pair_key(id: &str) -> &str {
    id.trim_end_matches("-offline").trim_end_matches("-server")
}

/// No row of a block (ids starting `prefix`) repeats a result the table already had elsewhere.
fn assert_no_repeated_result(t: &accuracy::Table, rows: &[&accuracy::Row], prefix: &str) {
    for r in rows {
        assert!(
            !t.rows
                .iter()
                .any(|o| !o.id.starts_with(prefix) && o.location == r.location),
            "{}",
            r.id
        );
    }
}

/// The L40S's MLPerf Inference v4.1 rows (data/accuracy.toml, their rule, 2026-12-07): every
/// closed resnet50, bert-99 and llama2-70b-99 result, Offline or Server, of a single-node _TRT
/// system of L40S, at its submitter's own batch. The GEMM efficiency fitted on one of them
/// (QCT's BERT-99 Offline, chosen by its configs) failed the rule's test, so every row is
/// held-out and both L40S profiles keep the L4's efficiencies.
#[test]
fn the_l40s_mlperf_v41_rows_follow_their_rule() {
    use accuracy::Metric;
    let t = table();
    let rows = rows_where(&t, |r| r.id.starts_with("l40s-v41-"));
    assert_eq!(rows.len(), 30);
    let mut pairs: BTreeMap<String, Vec<Metric>> = BTreeMap::new();
    for r in &rows {
        assert_eq!(r.profile, "aws-g6e.48xlarge", "{}", r.id);
        assert_eq!(r.source, "mlperf-v4-1", "{}", r.id);
        assert!(r.location.starts_with("closed/"), "{}", r.id);
        assert!(r.location.contains("L40S"), "{}", r.id);
        // chips = the GPUs the system's name gives: the digit beside "l40s" (l40sx2, 3xl40s).
        let tag = r.id["l40s-v41-".len()..]
            .split('-')
            .find(|part| part.contains("l40s"))
            .unwrap_or_else(|| panic!("{}: no system tag", r.id));
        let gpus: u32 = tag.replace("l40s", "").replace('x', "").parse().unwrap();
        assert_eq!(r.chips, Some(gpus), "{}", r.id);
        assert_eq!(r.split, Split::HeldOut, "{}", r.id);
        assert!(r.fit.is_none(), "{}", r.id);
        match (r.workload.as_str(), r.metric) {
            ("resnet-50", Metric::Offline) | ("bert-large-squad", Metric::Offline) => {
                assert_eq!(r.latency_bound_ms, None, "{}", r.id)
            }
            ("resnet-50", Metric::Server) => {
                assert_eq!(r.latency_bound_ms, Some(15.0), "{}", r.id);
                assert_eq!(r.window_ms, Some(2.0), "{}", r.id);
            }
            ("bert-large-squad", Metric::Server) => {
                assert_eq!(r.latency_bound_ms, Some(130.0), "{}", r.id)
            }
            ("llama-2-70b", Metric::TokensOffline | Metric::TokensServer) => {
                assert_eq!(
                    (r.tensor_parallel, r.batch),
                    (Some(4), Some(1024)),
                    "{}",
                    r.id
                );
                assert_eq!(r.max_batched_tokens, Some(4096), "{}", r.id);
            }
            other => panic!("{}: {other:?} is not in the rule", r.id),
        }
        // The batch is the submitter's own config, named in the row with its class.
        let batch = r.batch.unwrap_or_else(|| panic!("{}: no batch", r.id));
        assert!(
            r.system.contains(&format!("gpu_batch_size {batch}")) && r.system.contains("class "),
            "{}",
            r.id
        );
        pairs
            .entry(mlperf_pair_key(&r.id).to_string())
            .or_default()
            .push(r.metric);
    }
    // Nine systems: 16 system-benchmark pairs, each with its Offline row; all but the edge
    // system's two (edge submissions have no Server scenario) with their Server row.
    assert_eq!(pairs.len(), 16);
    for (k, m) in &pairs {
        let servers = m
            .iter()
            .filter(|m| matches!(m, Metric::Server | Metric::TokensServer))
            .count();
        assert_eq!(m.len() - servers, 1, "{k}");
        assert_eq!(servers, usize::from(!k.contains("lenovo-2xl40s")), "{k}");
    }
    // None repeats a row the table already had.
    assert_no_repeated_result(&t, &rows, "l40s-v41-");
    // The fit failed its test: both L40S profiles run the L4's GEMM and convolution
    // efficiencies, as estimates.
    let load = |name: &str| accuracy::shipped_profile(name).unwrap();
    let l4 = load("aws-g6.xlarge");
    for name in ["aws-g6e.48xlarge", "aws-g6e.xlarge"] {
        let p = load(name);
        let (matmul, l4_matmul) = (
            p.efficiency_compute_matmul.clone().unwrap(),
            l4.efficiency_compute_matmul.clone().unwrap(),
        );
        assert_eq!(matmul.value, l4_matmul.value, "{name}");
        assert_eq!(matmul.basis, tco_sim::cite::Basis::Estimate, "{name}");
        assert_eq!(
            p.efficiency_compute.value, l4.efficiency_compute.value,
            "{name}"
        );
        assert_eq!(
            p.efficiency_compute.basis,
            tco_sim::cite::Basis::Estimate,
            "{name}"
        );
    }
}

/// The A100's TensorRT-LLM rows (data/accuracy.toml, their rule, 2026-12-07): every 0.9.0
/// static-batch decode step of LLaMA v2 7B, 13B, 70B and Mistral 7B on A100-SXM4-80GB with a
/// token-to-token latency (205 rows, all "Mixed", in 16 bits with a 16-bit cache), one of which
/// sets the A100's memory efficiency; the rented A100 carries that value.
#[test]
fn the_a100_trtllm_090_rows_follow_their_rule() {
    use tco_sim::hardware::Precision;
    let t = table();
    let rows = rows_where(&t, |r| {
        r.profile == "hgx-a100-8x" && r.source == "trt-llm-090-dli"
    });
    assert_eq!(rows.len(), 205);
    check_trt090_gpu_block(
        &rows,
        &[(
            "trt090-a100-llama2-13b-fp16-tp1-b1-128-128-tpot",
            Constant::Memory,
        )],
        Precision::Fp16,
        ", A100-SXM4-80GB, Mixed, TP ",
        &[
            ("llama-2-13b", 1, 30),
            ("llama-2-70b", 2, 28),
            ("llama-2-70b", 4, 41),
            ("llama-2-70b", 8, 35),
            ("llama-2-7b", 1, 31),
            ("mistral-7b", 1, 40),
        ],
    );
    // The rented A100 runs the fitted value.
    let memory = |name: &str| {
        accuracy::shipped_profile(name)
            .unwrap()
            .efficiency_memory
            .value
    };
    assert_eq!(memory("aws-p4de.24xlarge"), memory("hgx-a100-8x"));
}

/// The TensorRT-LLM 0.9.0 rows (data/accuracy.toml, their rule): every LLaMA v2 70B FP8 point on
/// H100 and H200 with a token-to-token latency, as one decode step of its static batch — TP 1,
/// 2, 4 and 8, five lengths, 279 rows; FP8 cache; held-out but for the H200's batch-1 row at
/// 128/128, which sets that profile's memory efficiency.
#[test]
fn the_trtllm_090_rows_are_every_llama2_70b_fp8_decode_step() {
    use tco_sim::hardware::Precision;
    let t = table();
    let rows = rows_where(&t, |r| {
        r.source == "trt-llm-090-dli"
            && r.precision == Precision::Fp8
            && r.workload == "llama-2-70b"
            && r.profile != "aws-g6e.48xlarge"
    });
    assert_eq!(rows.len(), 279);
    let mut by_gpu_tp: BTreeMap<(String, u32), usize> = BTreeMap::new();
    for r in &rows {
        // One row sets the H200's memory efficiency (the profile had no fit row of its own).
        if r.id == "trt090-h200-llama2-70b-tp1-b1-128-128-tpot" {
            assert_eq!(r.split, Split::Fit);
            assert_eq!(r.fit, Some(accuracy::Constant::Memory));
        } else {
            assert_eq!(r.split, Split::HeldOut, "{}", r.id);
        }
        assert_eq!(r.metric, accuracy::Metric::Tpot, "{}", r.id);
        assert_eq!(r.workload, "llama-2-70b", "{}", r.id);
        assert_eq!(r.precision, Precision::Fp8, "{}", r.id);
        assert_eq!(r.kv_cache_precision, Some(Precision::Fp8), "{}", r.id);
        let tp = r.tensor_parallel.unwrap();
        assert!([1, 2, 4, 8].contains(&tp), "{}", r.id);
        assert_eq!(r.chips, Some(tp), "{}", r.id);
        let b = r.batch.unwrap();
        assert!((1..=1536).contains(&b), "{}", r.id);
        let (i, o) = (r.prompt_tokens.unwrap(), r.output_tokens.unwrap());
        assert!(
            [
                (128, 128),
                (128, 2048),
                (128, 4096),
                (2048, 128),
                (2048, 2048)
            ]
            .contains(&(i, o)),
            "{}",
            r.id
        );
        *by_gpu_tp.entry((r.profile.clone(), tp)).or_default() += 1;
    }
    // Both GPUs at every TP degree.
    assert_eq!(by_gpu_tp.len(), 8, "{by_gpu_tp:?}");
    assert_eq!(by_gpu_tp[&("hgx-h100-8x".to_string(), 1)], 27);
    assert_eq!(by_gpu_tp[&("hgx-h200-8x".to_string(), 2)], 44);
}

/// The same benchmark's 16-bit ("Mixed") rows (data/accuracy.toml, their rule, 2026-12-07): every
/// LLaMA v2 70B "Mixed" point on H100 with a token-to-token latency — TP 2, 4 and 8 (the file has
/// no TP1 "Mixed" row), the FP8 rows' five lengths, 90 rows — in 16 bits with a 16-bit cache, all
/// held-out, each citing its line of the file as "Mixed".
#[test]
fn the_trtllm_090_sixteen_bit_rows_follow_their_rule() {
    use tco_sim::hardware::Precision;
    let t = table();
    let rows = rows_where(&t, |r| {
        r.source == "trt-llm-090-dli"
            && r.precision != Precision::Fp8
            && r.workload == "llama-2-70b"
            && r.profile != "hgx-a100-8x"
    });
    assert_eq!(rows.len(), 90);
    let mut by_tp: BTreeMap<u32, usize> = BTreeMap::new();
    for r in &rows {
        assert_eq!(r.split, Split::HeldOut, "{}", r.id);
        assert!(r.fit.is_none(), "{}", r.id);
        assert_eq!(r.metric, accuracy::Metric::Tpot, "{}", r.id);
        assert_eq!(r.workload, "llama-2-70b", "{}", r.id);
        assert_eq!(r.profile, "hgx-h100-8x", "{}", r.id);
        assert_eq!(r.precision, Precision::Fp16, "{}", r.id);
        assert_eq!(r.kv_cache_precision, Some(Precision::Fp16), "{}", r.id);
        assert!(r.location.contains(", Mixed, TP "), "{}", r.id);
        let tp = r.tensor_parallel.unwrap();
        assert_eq!(r.chips, Some(tp), "{}", r.id);
        *by_tp.entry(tp).or_default() += 1;
    }
    assert_eq!(
        by_tp.into_iter().collect::<Vec<_>>(),
        [(2, 24), (4, 36), (8, 30)]
    );
}

/// The same benchmark's smaller models (data/accuracy.toml, their rule, 2026-12-07): every LLaMA
/// v2 7B, LLaMA v2 13B and Mistral 7B point on one H100 (FP8 and "Mixed") or one H200 (FP8) with a
/// token-to-token latency — 339 rows, 101 of them 16-bit — on the presets added for them, each at
/// its file's precision with a cache of the same width.
#[test]
fn the_trtllm_090_small_model_rows_follow_their_rule() {
    use tco_sim::hardware::Precision;
    let t = table();
    let rows = rows_where(&t, |r| {
        r.source == "trt-llm-090-dli"
            && r.workload != "llama-2-70b"
            && !["hgx-a100-8x", "aws-g6e.48xlarge"].contains(&r.profile.as_str())
    });
    assert_eq!(rows.len(), 339);
    let mut by: BTreeMap<(String, String, Precision), usize> = BTreeMap::new();
    for r in &rows {
        // All held-out, as their rule says: none sets a constant.
        assert_eq!(r.split, Split::HeldOut, "{}", r.id);
        assert!(r.fit.is_none(), "{}", r.id);
        assert_eq!(r.metric, accuracy::Metric::Tpot, "{}", r.id);
        assert_eq!((r.tensor_parallel, r.chips), (Some(1), Some(1)), "{}", r.id);
        assert_eq!(r.kv_cache_precision, Some(r.precision), "{}", r.id);
        let named = if r.precision == Precision::Fp8 {
            ", FP8, TP 1"
        } else {
            ", Mixed, TP 1"
        };
        assert!(r.location.contains(named), "{}", r.id);
        assert!((1..=896).contains(&r.batch.unwrap()), "{}", r.id);
        *by.entry((r.workload.clone(), r.profile.clone(), r.precision))
            .or_default() += 1;
    }
    let count = |w: &str, p: &str, x: Precision| by.get(&(w.to_string(), p.to_string(), x));
    for (w, p, x, n) in [
        ("llama-2-7b", "hgx-h100-8x", Precision::Fp16, 31),
        ("llama-2-13b", "hgx-h100-8x", Precision::Fp16, 30),
        ("mistral-7b", "hgx-h100-8x", Precision::Fp16, 40),
        ("mistral-7b", "hgx-h200-8x", Precision::Fp8, 41),
    ] {
        assert_eq!(count(w, p, x), Some(&n), "{w} {p} {x:?}");
    }
    // No 16-bit row on the H200: the file has none.
    assert!(count("llama-2-7b", "hgx-h200-8x", Precision::Fp16).is_none());
    assert_eq!(by.len(), 9, "{by:?}");
}

/// The MLPerf v4.1 rows of other vendors' H100 and H200 SXM systems (data/accuracy.toml, their
/// rule): every resnet50, bert-99 and llama2-70b-99 Offline and Server result of those
/// single-node systems not already in the table — 86 rows, an Offline and a Server row for each
/// system and workload, held-out, run at NVIDIA's harness defaults for the GPU.
#[test]
fn the_mlperf_v41_vendor_rows_follow_their_rule() {
    use accuracy::Metric;
    let t = table();
    let rows = rows_where(&t, |r| r.id.starts_with("v41-"));
    assert_eq!(rows.len(), 86);
    let mut scenarios: BTreeMap<String, Vec<Metric>> = BTreeMap::new();
    for r in &rows {
        assert_eq!(r.split, Split::HeldOut, "{}", r.id);
        assert!(r.fit.is_none(), "{}", r.id);
        assert_eq!(r.source, "mlperf-v4-1", "{}", r.id);
        assert!(
            r.location.starts_with("closed/") && !r.location.contains("_MaxQ"),
            "{}",
            r.id
        );
        let h100 = r.profile == "hgx-h100-8x";
        assert!(h100 || r.profile == "hgx-h200-8x", "{}", r.id);
        assert!(matches!(r.chips, None | Some(4)), "{}", r.id);
        let (batch, latency_bound_ms) = match (r.workload.as_str(), r.metric) {
            ("resnet-50", Metric::Offline) => (2048, None),
            ("resnet-50", Metric::Server) => (256, Some(15.0)),
            ("bert-large-squad", Metric::Offline) => (1280, None),
            ("bert-large-squad", Metric::Server) => (128, Some(130.0)),
            ("llama-2-70b", Metric::TokensOffline) => (if h100 { 896 } else { 806 }, None),
            ("llama-2-70b", Metric::TokensServer) => (if h100 { 1024 } else { 896 }, None),
            other => panic!("{}: {other:?} is not in the rule", r.id),
        };
        assert_eq!(r.batch, Some(batch), "{}", r.id);
        assert_eq!(r.latency_bound_ms, latency_bound_ms, "{}", r.id);
        if r.workload == "llama-2-70b" {
            assert_eq!(
                r.tensor_parallel,
                Some(if h100 { 2 } else { 1 }),
                "{}",
                r.id
            );
        }
        scenarios
            .entry(mlperf_pair_key(&r.id).to_string())
            .or_default()
            .push(r.metric);
    }
    // Each system and workload has its Offline and its Server row, as MLPerf requires.
    assert_eq!(scenarios.len(), 43);
    for (k, m) in &scenarios {
        assert_eq!(m.len(), 2, "{k}");
        assert!(
            m.iter()
                .any(|m| matches!(m, Metric::Offline | Metric::TokensOffline)),
            "{k}"
        );
        assert!(
            m.iter()
                .any(|m| matches!(m, Metric::Server | Metric::TokensServer)),
            "{k}"
        );
    }
    // None repeats a row the table already had (the rule leaves those out).
    assert_no_repeated_result(&t, &rows, "v41-");
}

/// The streamed token's host cost (`efficiency.stream_overhead_us`) reaches a streamed row's
/// prediction and no in-process one: without it the NIM ITL at 100 clients falls, and by about
/// 100 sequences' worth of it; trtllm-bench, MLPerf Offline and Server and a lone decode step are
/// unchanged.
#[test]
fn the_stream_overhead_reaches_streamed_rows_only() {
    let t = table();
    let shipped = accuracy::shipped_profile("hgx-h100-8x").unwrap();
    let per_seq = shipped.stream_overhead_s.as_ref().unwrap().value;
    assert!(per_seq > 0.0);
    let mut without = shipped.clone();
    without.stream_overhead_s = None;
    let row = |id: &str| t.rows.iter().find(|r| r.id == id).unwrap();
    let itl = row("nim-h100x1-llama31-8b-200-200-c100-itl");
    let (with_ms, without_ms) = (
        accuracy::predict(&t, itl, &shipped).unwrap(),
        accuracy::predict(&t, itl, &without).unwrap(),
    );
    // Each step decodes at most 100 sequences: the ITL grows by less than 100 per-sequence
    // costs, and by more than half of that (most steps run most of the clients).
    let grew_ms = with_ms - without_ms;
    assert!(
        grew_ms > 50.0 * per_seq * 1e3 && grew_ms < 100.0 * per_seq * 1e3,
        "{without_ms} -> {with_ms} ms"
    );
    // In-process offline runs (trtllm-bench, LoadGen Offline) and a lone decode step do not
    // pay it.
    for id in [
        "trtllm017-h100-llama31-8b-tp1-128-128",
        "h100-llama2-70b-offline",
        "nim-h100x1-llama31-8b-200-200-c1-itl",
    ] {
        let r = row(id);
        assert_eq!(
            accuracy::predict(&t, r, &shipped).unwrap(),
            accuracy::predict(&t, r, &without).unwrap(),
            "{id}"
        );
    }
    // MLPerf's LLM Server harnesses stream every running sequence's token at every step
    // (data/accuracy.toml, "MLPerf's LLM Server harnesses stream"): at about 1,000 sequences
    // the cost is several percent of a step, and the rate sustained under the bounds falls by
    // more than 3 % (9.5 % on 2026-12-07).
    let server = row("h100-llama2-70b-server");
    let (with_tps, without_tps) = (
        accuracy::predict(&t, server, &shipped).unwrap(),
        accuracy::predict(&t, server, &without).unwrap(),
    );
    assert!(
        with_tps < 0.97 * without_tps,
        "{without_tps} -> {with_tps} tokens/s"
    );
}

/// The README's accuracy tables are the suite's own: the block between its
/// `accuracy-summary` markers is what `tco-sim accuracy --markdown` prints (blank lines around it
/// aside), so a change to the table, a profile or the planner that moves a figure fails here
/// until the README quotes it (paste the printed block, or the one this message shows).
#[test]
fn the_readme_quotes_the_suites_own_summary() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let (start, end) = (
        "<!-- accuracy-summary:start -->",
        "<!-- accuracy-summary:end -->",
    );
    let a = readme.find(start).expect("README.md has the start marker") + start.len();
    let b = readme[a..].find(end).expect("README.md has the end marker") + a;
    let want = accuracy::summary_markdown(shipped_report());
    assert!(
        readme[a..b].trim() == want.trim(),
        "README.md's accuracy summary is stale; `tco-sim accuracy --markdown` prints:\n{want}"
    );
    // The block states the bound's verdict the suite computes, figure by figure.
    for f in &shipped_report().by_figure {
        let verdict = if f.within_bound { "yes" } else { "**no**" };
        assert!(
            want.lines()
                .any(|l| l.starts_with(&format!("| {} |", f.figure.label()))
                    && l.ends_with(&format!("| {verdict} |"))),
            "{:?}",
            f.figure
        );
    }
}
