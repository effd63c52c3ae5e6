//! The generative engine of issue 10: chunked prefill under a token budget, paged KV growth with
//! recompute preemption, attention cost, the LLM statistics and `simulate --requests-csv`.
//! Hand-worked cases (times in ms in the comments) and on/off comparisons.

mod common;

use common::{ms, run};
use tco_sim::sim::{
    self, Completion, Dispatch, FleetSpec, IterationCost, IterationWork, KvAllocation,
    PoissonArrivals, Scheduler, ServerModel, Variability,
};
use tco_sim::traffic::Request;

fn llm(kv: u64, max_batch: u32, cost: IterationCost, scheduler: Scheduler) -> FleetSpec {
    FleetSpec {
        units: 1,
        server: ServerModel::ContinuousBatching {
            replicas: 1,
            max_batch,
            kv_capacity_tokens: kv,
            cost,
            variability: Variability::None,
            scheduler,
            prefix_cache: None,
        },
        dispatch: Dispatch::SharedQueue,
        queue_cap: None,
        timeout_s: None,
    }
}

/// Every iteration takes exactly 1 ms.
fn one_ms() -> IterationCost {
    IterationCost {
        fixed_s: 0.001,
        prefill_s_per_token: 0.0,
        decode_compute_s_per_seq: 0.0,
        weight_read_s: 0.0,
        kv_read_s_per_token: 0.0,
        attention_s_per_pair: 0.0,
        collective_s_per_token: 0.0,
        compiled_context_tokens: 0.0,
        stream_s_per_seq: 0.0,
        attention_block_s_per_token: 0.0,
    }
}

fn tok(arrival_ms: f64, input: u32, output: u32) -> Request {
    Request {
        arrival_ns: ms(arrival_ms),
        input_tokens: input,
        output_tokens: output,
        prefix: 0,
    }
}

fn paged(block_tokens: u32, budget: Option<u32>) -> Scheduler {
    Scheduler {
        max_batched_tokens: budget,
        chunked_prefill: true,
        kv: KvAllocation::Paged { block_tokens },
    }
}

fn trace(f: &FleetSpec, reqs: Vec<Request>) -> Vec<Completion> {
    sim::simulate_traced(f, 1, reqs).unwrap_or_else(|e| panic!("{e}"))
}

fn by_input(t: &[Completion], arrival_ms: f64, input: u32) -> &Completion {
    t.iter()
        .find(|c| c.request.arrival_ns == ms(arrival_ms) && c.request.input_tokens == input)
        .unwrap_or_else(|| panic!("no request at {arrival_ms} ms with {input} tokens in"))
}

/// Blocks of 4 tokens, 16 tokens of cache (4 blocks); A (4 in, 6 out) and B (5 in, 6 out) at 0.
/// Iteration 1 (0–1): A prefills 4 (1 block). 2: A decodes (5 tokens: 2 blocks), B prefills 5
/// (2 blocks): 4 blocks, full. 3–5: both grow to 8 tokens within their 2 blocks. 6: A's 9th
/// token needs a fifth block: B, the newest, is preempted (2 blocks freed) and A takes one; A
/// emits its 6th token at 6 and leaves. 7: B recomputes its prompt and the 4 tokens it had
/// emitted (9 tokens, 3 blocks) and emits its 5th; 8: its 6th. Exactly one preemption.
/// With room for both (10 blocks) B ends at 7; reserving whole contexts instead (10 + 11 > 16),
/// B waits for A and ends at 6 + 6 = 12.
#[test]
fn preemption_happens_when_kv_runs_out_and_is_counted_exactly() {
    let reqs = || vec![tok(0.0, 4, 6), tok(0.0, 5, 6)];
    let f = llm(16, 8, one_ms(), paged(4, None));
    let t = trace(&f, reqs());
    let a = by_input(&t, 0.0, 4);
    let b = by_input(&t, 0.0, 5);
    assert_eq!((a.first_token_ns, a.end_ns), (Some(ms(1.0)), ms(6.0)));
    assert_eq!((b.first_token_ns, b.end_ns), (Some(ms(2.0)), ms(8.0)));
    let r = sim::simulate(&f, &run(0.0, 2, 1), |_| reqs().into_iter())
        .unwrap_or_else(|e| panic!("{e}"));
    let stats = r
        .llm
        .unwrap_or_else(|| panic!("continuous batching reports LLM stats"));
    assert_eq!(stats.preemptions, 2, "one per replication");
    assert!((stats.kv_utilization_peak - 1.0).abs() < 1e-12, "{stats:?}");

    // Room for both (40 tokens = 10 blocks): no preemption.
    let roomy = llm_fleet_with_kv(40);
    let r = sim::simulate(&roomy, &run(0.0, 1, 1), |_| reqs().into_iter())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.llm.map(|l| l.preemptions), Some(0));
    let t = trace(&roomy, reqs());
    assert_eq!(by_input(&t, 0.0, 5).end_ns, ms(7.0));

    // Whole-context reservation never preempts: B waits for A.
    let reserve = llm(16, 8, one_ms(), Scheduler::legacy());
    let t = trace(&reserve, reqs());
    assert_eq!(by_input(&t, 0.0, 5).end_ns, ms(6.0 + 6.0));
}

/// Whole prompts under a budget (TensorRT-LLM's `max_num_tokens` without chunked context):
/// 8 tokens per 1 ms iteration. A (4 in, 3 out) arrives at 0 and prefills alone in iteration 1;
/// B (3 in), C (5 in), 3 out each, and D (15 in, 1 out) arrive at 0.5. Iteration 2: A decodes
/// (1 token), B fits (3 of the 7 left), C's 5 do not fit the 4 then left, so C waits rather than
/// being split. 3: A and B decode (2), C fits (5 of 6); D's 15 do not fit the 1 left. 4 (A done):
/// B and C decode (2); D is longer than the budget and comes first among this iteration's
/// prompts, so it is admitted whole. First tokens 1, 2, 3, 4; ends 3, 4, 5, 4. Without a budget
/// B, C and D all prefill in iteration 2; chunked, C's last token of prompt lands in 3 as well
/// but D takes iterations 3 to 5.
#[test]
fn whole_prompts_fill_the_budget_without_being_split() {
    let reqs = || {
        vec![
            tok(0.0, 4, 3),
            tok(0.5, 3, 3),
            tok(0.5, 5, 3),
            tok(0.5, 15, 1),
        ]
    };
    let at = |t: &[Completion], arrival_ms: f64, input: u32| {
        let c = by_input(t, arrival_ms, input);
        (
            c.first_token_ns.map(|n| n / 1_000_000),
            c.end_ns / 1_000_000,
        )
    };
    let whole = Scheduler {
        max_batched_tokens: Some(8),
        chunked_prefill: false,
        kv: KvAllocation::Reserve,
    };
    let t = trace(&llm(1_000, 8, one_ms(), whole), reqs());
    assert_eq!(at(&t, 0.0, 4), (Some(1), 3));
    assert_eq!(at(&t, 0.5, 3), (Some(2), 4));
    assert_eq!(at(&t, 0.5, 5), (Some(3), 5));
    assert_eq!(at(&t, 0.5, 15), (Some(4), 4));
    // No budget: B, C and D in iteration 2.
    let t = trace(&llm(1_000, 8, one_ms(), Scheduler::legacy()), reqs());
    assert_eq!(at(&t, 0.5, 5), (Some(2), 4));
    assert_eq!(at(&t, 0.5, 15), (Some(2), 2));
    // Chunked: C takes 4 tokens in 2 and its last in 3; D takes 5 in 3, 6 in 4, 4 in 5.
    let chunked = Scheduler {
        chunked_prefill: true,
        ..whole
    };
    let t = trace(&llm(1_000, 8, one_ms(), chunked), reqs());
    assert_eq!(at(&t, 0.5, 5), (Some(3), 5));
    assert_eq!(at(&t, 0.5, 15), (Some(5), 5));
}

fn llm_fleet_with_kv(kv: u64) -> FleetSpec {
    llm(kv, 8, one_ms(), paged(4, None))
}

/// Overload a small cache with Poisson traffic: preemptions occur, every request still
/// completes, and with a cache large enough for every context at once there are none.
#[test]
fn preemption_only_when_the_cache_is_exhausted() {
    let cost = IterationCost {
        fixed_s: 0.0005,
        prefill_s_per_token: 0.000_01,
        decode_compute_s_per_seq: 0.000_1,
        weight_read_s: 0.002,
        kv_read_s_per_token: 0.000_000_5,
        attention_s_per_pair: 1e-9,
        collective_s_per_token: 0.0,
        compiled_context_tokens: 0.0,
        stream_s_per_seq: 0.0,
        attention_block_s_per_token: 0.0,
    };
    let go = |kv: u64| {
        let f = llm(kv, 32, cost.clone(), paged(16, Some(512)));
        sim::simulate(&f, &run(0.5, 2, 3), |rep| {
            PoissonArrivals::new(3, rep, 40.0, 2_000).with_tokens(300, 120)
        })
        .unwrap_or_else(|e| panic!("{e}"))
    };
    let tight = go(4_000);
    let roomy = go(1_000_000);
    let (t, r) = match (tight.llm, roomy.llm) {
        (Some(t), Some(r)) => (t, r),
        _ => panic!("continuous batching reports LLM stats"),
    };
    assert!(t.preemptions > 0, "{t:?}");
    assert_eq!(r.preemptions, 0, "{r:?}");
    assert_eq!(tight.counts.completed, tight.counts.arrived);
    assert!(t.kv_utilization_peak > r.kv_utilization_peak);
    assert!(t.kv_utilization_mean > 0.0 && t.kv_utilization_mean <= 1.0);
    // Tokens per second: the same requests complete, so the same tokens over the windows.
    assert!(t.output_tokens_per_s > 0.0 && t.input_tokens_per_s > t.output_tokens_per_s);
}

/// Four short chats (10 in, 40 out) decode while a 100,000-token prompt arrives at 5 ms.
/// Prefill 0.01 ms/token, weights 2 ms, fixed 1 ms. Prefilled whole, the long prompt takes one
/// iteration of 1 + 1,000 ms, and every chat stalls behind it; under a 512-token budget each
/// iteration is at most 1 + max(5.12, 2) = 6.12 ms, so the chats' TPOT stays below that, while
/// the long prompt's first token comes later than unchunked.
#[test]
fn chunked_prefill_keeps_decode_tpot_bounded_when_a_long_prompt_arrives() {
    let cost = IterationCost {
        fixed_s: 0.001,
        prefill_s_per_token: 0.000_01,
        decode_compute_s_per_seq: 0.0,
        weight_read_s: 0.002,
        kv_read_s_per_token: 0.0,
        attention_s_per_pair: 0.0,
        collective_s_per_token: 0.0,
        compiled_context_tokens: 0.0,
        stream_s_per_seq: 0.0,
        attention_block_s_per_token: 0.0,
    };
    let mut reqs: Vec<Request> = (0..4).map(|_| tok(0.0, 10, 40)).collect();
    reqs.push(tok(5.0, 100_000, 2));
    let tpot = |c: &Completion| {
        let f = c.first_token_ns.unwrap_or(c.end_ns);
        (c.end_ns - f) as f64 / 39.0 / 1e6
    };
    let worst_chat = |t: &[Completion]| {
        t.iter()
            .filter(|c| c.request.input_tokens == 10)
            .map(tpot)
            .fold(0.0, f64::max)
    };
    let ttft_long = |t: &[Completion]| {
        let c = by_input(t, 5.0, 100_000);
        c.first_token_ns
            .map_or(f64::INFINITY, |f| (f - c.request.arrival_ns) as f64 / 1e6)
    };
    let whole = trace(
        &llm(1_000_000, 8, cost.clone(), paged(16, None)),
        reqs.clone(),
    );
    let chunked = trace(&llm(1_000_000, 8, cost, paged(16, Some(512))), reqs);
    assert!(worst_chat(&whole) > 25.0, "{}", worst_chat(&whole));
    assert!(worst_chat(&chunked) <= 6.12, "{}", worst_chat(&chunked));
    assert!(ttft_long(&chunked) > ttft_long(&whole));
    assert_eq!(chunked.len(), 5);
}

/// Attention cost grows with context in the simulator as in the plan: the same requests with
/// longer prompts take longer per output token when attention is counted.
#[test]
fn attention_cost_slows_long_contexts() {
    let cost = |a: f64| IterationCost {
        fixed_s: 0.0005,
        prefill_s_per_token: 0.000_01,
        decode_compute_s_per_seq: 0.000_01,
        weight_read_s: 0.0,
        kv_read_s_per_token: 0.0,
        attention_s_per_pair: a,
        collective_s_per_token: 0.0,
        compiled_context_tokens: 0.0,
        stream_s_per_seq: 0.0,
        attention_block_s_per_token: 0.0,
    };
    let tpot = |a: f64, prompt: u32| {
        let t = trace(
            &llm(1_000_000, 8, cost(a), paged(16, None)),
            vec![tok(0.0, prompt, 11)],
        );
        let c = &t[0];
        (c.end_ns - c.first_token_ns.unwrap_or(0)) as f64 / 10.0
    };
    assert_eq!(tpot(0.0, 1_000), tpot(0.0, 30_000));
    assert!(tpot(1e-9, 30_000) > tpot(1e-9, 1_000));
}

fn tiny_llm_scenario(extra_tier: &str) -> Result<tco_sim::scenario::Scenario, String> {
    tiny_llm_scenario_on("hgx-h100-8x", extra_tier)
}

fn tiny_llm_scenario_on(
    profile: &str,
    extra_tier: &str,
) -> Result<tco_sim::scenario::Scenario, String> {
    let text = format!(
        r#"
name = "tiny llm"
horizon_years = 1
[workload]
preset = "llama-3-8b"
precision = "fp16"
prompt_tokens = 800
output_tokens = 60
token_cv = 0.5
max_tokens = 4096
[traffic]
peak_rps = 4
mean_rps = 2
[slo]
percentile = 99
ttft_ms = 3000
tpot_ms = 200
[[tier]]
name = "8x H100"
profile = "{profile}"
{extra_tier}
[simulation]
window_s = 60
warmup_s = 10
replications = 2
"#
    );
    tco_sim::scenario::Scenario::from_source(&tco_sim::input::SourceFile::from_text(
        "tiny.toml",
        text,
    ))
    .map_err(|e| e.to_string())
}

/// One row per measured request served, and the file's percentiles are the report's (within
/// the histograms' 0.1 % resolution).
#[test]
fn requests_csv_rows_match_the_report() {
    let s = tiny_llm_scenario("").unwrap_or_else(|e| panic!("{e}"));
    let sweep = tco_sim::capacity::search::sweep_sizes_with(&s, 1, &[1], &|_, _| {}, true)
        .unwrap_or_else(|e| panic!("{e}"));
    let csv = tco_sim::report::simulate::requests_csv(&sweep);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some(tco_sim::report::simulate::REQUESTS_CSV_HEADER)
    );
    let rows: Vec<Vec<String>> = lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    let run0 = &sweep.runs[0];
    assert_eq!(rows.len() as u64, run0.report.counts.completed);
    assert!(rows.len() > 50, "{}", rows.len());
    let col = |i: usize| {
        let mut v: Vec<f64> = rows
            .iter()
            .filter_map(|r| r[i].parse::<f64>().ok())
            .collect();
        v.sort_by(f64::total_cmp);
        v
    };
    // Nearest rank, as the histogram's value_at_quantile.
    let pct = |v: &[f64], q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    let close = |a: f64, b: f64| (a - b).abs() <= 2e-3 * b.abs().max(1e-9);
    let e2e = col(6);
    let ttft = col(4);
    let tpot = col(5);
    let l = &run0.report.latency;
    assert!(
        close(pct(&e2e, 0.5), l.p50.value_s),
        "{} {}",
        pct(&e2e, 0.5),
        l.p50.value_s
    );
    assert!(close(pct(&e2e, 0.99), l.p99.value_s));
    let t = run0.report.ttft.as_ref().unwrap_or_else(|| panic!("ttft"));
    assert!(
        close(pct(&ttft, 0.99), t.p99.value_s),
        "{} {}",
        pct(&ttft, 0.99),
        t.p99.value_s
    );
    let p = run0.report.tpot.as_ref().unwrap_or_else(|| panic!("tpot"));
    assert_eq!(tpot.len() as u64, p.count);
    assert!(close(pct(&tpot, 0.5), p.p50.value_s));
    // Tokens per second agree with the rows' token counts.
    let llm = run0.report.llm.unwrap_or_else(|| panic!("llm stats"));
    let out: f64 = col(8).iter().sum();
    assert!(close(
        out / run0.report.measured_time_s,
        llm.output_tokens_per_s
    ));
}

/// The scheduling keys: generative only, a budget with or without chunking, a known allocation.
#[test]
fn scheduling_keys_are_checked() {
    assert!(tiny_llm_scenario("chunked_prefill = false\nkv_allocation = \"reserve\"").is_ok());
    assert!(tiny_llm_scenario("max_batched_tokens = 512").is_ok());
    // Without chunking the budget holds whole prompts (TensorRT-LLM's max_num_tokens).
    assert!(tiny_llm_scenario("chunked_prefill = false\nmax_batched_tokens = 512").is_ok());
    let e = tiny_llm_scenario("kv_allocation = \"swap\"")
        .err()
        .unwrap_or_default();
    assert!(e.contains("kv_allocation") && e.contains("reserve"), "{e}");
    let e = tiny_llm_scenario("max_batched_tokens = 0")
        .err()
        .unwrap_or_default();
    assert!(e.contains("max_batched_tokens"), "{e}");
}

/// A KV block larger than the engine handles is refused with the field named, not run.
#[test]
fn an_oversized_kv_block_is_refused() {
    let f = llm(1 << 20, 8, one_ms(), paged(4096, None));
    let e = sim::simulate_traced(&f, 1, vec![tok(0.0, 4, 6)])
        .err()
        .unwrap_or_else(|| panic!("a 4,096-token block is refused"));
    let msg = e.to_string();
    assert!(
        msg.contains("server.scheduler.kv.block_tokens") && msg.contains("1024"),
        "{msg}"
    );
}

/// The mean sequences in flight per replica is the operating point. Every iteration takes 1 ms
/// and a request (20 in, 50 out) runs 50 of them. With 24 clients kept in flight, no think time
/// and room in the batch, a client's next request arrives as its last one ends and is admitted
/// at the next iteration: each client's cycle is 1 ms waiting plus 50 running, so
/// 24 × 50 / 51 = 23.53 run on average. When the batch holds only 8, it is always full.
#[test]
fn mean_running_per_replica_is_the_concurrency_or_the_batch_limit() {
    let go = |max_batch: u32, clients: u32| {
        let f = llm(1_000_000, max_batch, one_ms(), paged(16, None));
        let c = sim::ClosedLoop {
            clients,
            think: sim::ThinkTime::None,
            duration_s: 60.0,
            max_requests: 1_000_000,
        };
        let r = sim::simulate_closed(&f, &run(5.0, 2, 11), &c, |_| {
            std::iter::repeat(tok(0.0, 20, 50))
        })
        .unwrap_or_else(|e| panic!("{e}"));
        r.llm.expect("continuous batching reports LLM stats")
    };
    let roomy = go(64, 24);
    assert!(
        (roomy.mean_running_per_replica - 24.0 * 50.0 / 51.0).abs() < 0.02,
        "{roomy:?}"
    );
    let full = go(8, 24);
    assert!(
        (full.mean_running_per_replica - 8.0).abs() < 0.02,
        "{full:?}"
    );
}

/// A streaming server's host cost is paid once per decoding sequence of an iteration, on top of
/// the roofline, and not by a prefill-only iteration.
#[test]
fn the_stream_cost_is_paid_per_decoding_sequence() {
    let base = one_ms();
    let streamed = IterationCost {
        stream_s_per_seq: 20e-6,
        attention_block_s_per_token: 0.0,
        ..base.clone()
    };
    let work = |prefill: f64, decode: f64| IterationWork {
        prefill_tokens: prefill,
        decode_seqs: decode,
        attention_pairs: 0.0,
        context_tokens: 0.0,
        longest_decode_context: 0.0,
    };
    for d in [1.0, 10.0, 100.0] {
        let w = work(0.0, d);
        let extra = streamed.iteration_s(&w) - base.iteration_s(&w);
        assert!((extra - d * 20e-6).abs() < 1e-12, "{d}: {extra}");
    }
    let prefill_only = work(512.0, 0.0);
    assert_eq!(
        streamed.iteration_s(&prefill_only),
        base.iteration_s(&prefill_only)
    );
}

/// Decode attention one block per sequence and head: every step waits for the block of the
/// longest decoding context, so a short sequence decoding beside a long one runs at the long
/// one's pace, and at its own once the long one has left. Iterations cost 1 ms plus 1 µs per
/// token of the longest decoding context (written this step). A (1,000 in, 5 out) arrives
/// first and its arrival starts the replica: it prefills alone (1 ms, no decoder); B (10 in,
/// 50 out), arriving in the same instant, prefills at step 2 beside A's first decode. A decodes
/// at steps 2–5 (contexts 1,001–1,004: 2.001–2.004 ms) and ends at 9.010 ms; B then decodes
/// alone at steps 6–51 (contexts 14–59: 46 ms + 1.679 ms) and ends at 56.689 ms. Both the
/// general path (a sequence leaves) and the decode-only fast path (nothing changes) run here.
#[test]
fn per_head_attention_waits_for_the_longest_decoding_context() {
    let blocks = IterationCost {
        attention_block_s_per_token: 1e-6,
        ..one_ms()
    };
    let run = |cost: IterationCost| {
        let t = trace(
            &llm(1_000_000, 8, cost, paged(16, None)),
            vec![tok(0.0, 1000, 5), tok(0.0, 10, 50)],
        );
        let end = |input| by_input(&t, 0.0, input).end_ns as f64 / 1e6;
        (end(1000), end(10))
    };
    let (a, b) = run(blocks);
    assert!((a - (1.0 + 8.010)).abs() < 1e-3, "A ends at {a} ms");
    assert!(
        (b - (9.010 + 46.0 + 1.679)).abs() < 1e-3,
        "B ends at {b} ms"
    );
    // Split contexts: the longest context costs nothing more.
    let (a, b) = run(one_ms());
    assert!((a - 5.0).abs() < 1e-6 && (b - 51.0).abs() < 1e-6, "{a} {b}");
}

/// `decode_attention` is checked: a known value, and "per-head" only on a profile that gives
/// its block time (no shipped profile does: a user measures it), where it slows a long
/// context's lone decode step and leaves a short one's as it was.
#[test]
fn decode_attention_key_is_checked() {
    assert!(tiny_llm_scenario("decode_attention = \"split\"").is_ok());
    let e = tiny_llm_scenario("decode_attention = \"multi-block\"")
        .err()
        .unwrap_or_default();
    assert!(
        e.contains("decode_attention") && e.contains("per-head") && e.contains("tiny.toml"),
        "{e}"
    );
    let e = tiny_llm_scenario("decode_attention = \"per-head\"")
        .err()
        .unwrap_or_default();
    assert!(
        e.contains("attention_block_ns_per_token") && e.contains("hgx-h100-8x"),
        "{e}"
    );
    // The H100 profile with a measured block time of 7 ns per token per layer.
    let dir = std::env::temp_dir().join(format!("tco-sim-blocks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shipped = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("hardware-profiles/hgx-h100-8x.toml"),
    )
    .unwrap();
    let with_blocks = shipped.replacen(
        "[efficiency]\n",
        "[efficiency]\nattention_block_ns_per_token = { value = 7.0, source = \"authors-estimate\", basis = \"estimate\" }\n",
        1,
    );
    let path = dir.join("h100-blocks.toml");
    std::fs::write(&path, with_blocks).unwrap();
    let profile = path.to_str().unwrap();
    let plan = |extra: &str| {
        let s = tiny_llm_scenario_on(profile, &format!("tensor_parallel = 1\n{extra}"))
            .unwrap_or_else(|e| panic!("{e}"));
        match &s.tiers[0].plan {
            tco_sim::perf::ServicePlan::Generative(g) => g.clone(),
            other => panic!("{other:?}"),
        }
    };
    let split = plan("");
    let per_head = plan("decode_attention = \"per-head\"");
    // 32 layers x 7 ns.
    assert!((per_head.attention_block_s_per_token - 32.0 * 7e-9).abs() < 1e-15);
    assert_eq!(split.attention_block_s_per_token, 0.0);
    // A lone step: one block walks the context at 224 ns per token where the whole device reads
    // it at kv_read_s_per_token (46 ns), so the step lasts the difference longer per token, and
    // at 7,000 tokens 1.25 ms.
    let gap = |c: f64| per_head.lone_tpot_s(c) - split.lone_tpot_s(c);
    let per_token = 32.0 * 7e-9 - split.kv_read_s_per_token;
    assert!(per_token > 1.5e-7, "{per_token}");
    for c in [100.0, 7000.0] {
        assert!((gap(c) - c * per_token).abs() < 1e-12, "{c}: {}", gap(c));
    }
    std::fs::remove_dir_all(&dir).ok();
}
