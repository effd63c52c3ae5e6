//! Prefix caching from Mooncake `hash_ids`: exact hit counts on hand-made traces, no hits
//! without shared prefixes, the hit rate on the shipped Mooncake trace, the scenario key's
//! located errors, and determinism at 1 and 4 threads.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tco_sim::capacity::search;
use tco_sim::input::SourceFile;
use tco_sim::scenario::Scenario;
use tco_sim::sim::{
    self, Dispatch, FleetSpec, IterationCost, PrefixCaching, RunSpec, ServerModel, SimReport,
    Variability,
};
use tco_sim::traffic::{Growth, ReplayOptions, Request, Trace, TraceFormat, TraceTraffic};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn mooncake_path() -> PathBuf {
    root().join("traces/mooncake-fast25/conversation_trace.jsonl")
}

fn parse(text: &str) -> Result<Trace, tco_sim::input::InputError> {
    Trace::parse(
        &SourceFile::from_text("t.jsonl", text),
        TraceFormat::Mooncake,
    )
}

/// `units` units of one replica each, with a KV cache of `kv` tokens.
fn fleet(prefix: Option<&Trace>, units: u32, dispatch: Dispatch, kv: u64) -> FleetSpec {
    FleetSpec {
        units,
        server: ServerModel::ContinuousBatching {
            replicas: 1,
            max_batch: 64,
            kv_capacity_tokens: kv,
            cost: IterationCost {
                fixed_s: 0.001,
                prefill_s_per_token: 0.000_01,
                decode_compute_s_per_seq: 0.000_02,
                // Memory time too small to matter: every iteration's time is its compute.
                weight_read_s: 0.000_001,
                kv_read_s_per_token: 1e-10,
                attention_s_per_pair: 0.0,
                collective_s_per_token: 0.0,
                compiled_context_tokens: 0.0,
                stream_s_per_seq: 0.0,
                attention_block_s_per_token: 0.0,
            },
            variability: Variability::None,
            // The earlier engine (whole prompts, whole context reserved), so the hand-made
            // trace's times stay exact sums.
            scheduler: tco_sim::sim::Scheduler::legacy(),
            prefix_cache: prefix.map(|t| PrefixCaching {
                blocks: Arc::clone(t.prefix_blocks().expect("the trace has hash_ids")),
            }),
        },
        dispatch,
        queue_cap: None,
        timeout_s: None,
    }
}

fn run(warmup_s: f64, replications: u32, seed: u64) -> RunSpec {
    RunSpec {
        warmup_s,
        replications,
        seed,
        quantiles: vec![],
    }
}

/// The recorded requests, one every 10 s (each finishes long before the next arrives).
fn spaced(t: &Trace) -> Vec<Request> {
    t.requests()
        .enumerate()
        .map(|(i, r)| Request {
            arrival_ns: i as u64 * 10_000_000_000,
            ..r
        })
        .collect()
}

fn play(f: &FleetSpec, reqs: &[Request]) -> SimReport {
    sim::simulate(f, &run(0.0, 1, 1), |_| reqs.iter().copied()).unwrap()
}

const HAND_MADE: &str = r#"{"timestamp": 0, "input_length": 1100, "output_length": 4, "hash_ids": [10, 20, 30]}
{"timestamp": 1000, "input_length": 1100, "output_length": 4, "hash_ids": [10, 20, 40]}
{"timestamp": 2000, "input_length": 600, "output_length": 4, "hash_ids": [10, 50]}
{"timestamp": 3000, "input_length": 512, "output_length": 4, "hash_ids": [10]}
{"timestamp": 4000, "input_length": 1000, "output_length": 4, "hash_ids": [60, 20]}
"#;

#[test]
fn a_hand_made_trace_gives_the_exact_hit_count() {
    let t = parse(HAND_MADE).unwrap();
    let reqs = spaced(&t);
    let on = play(&fleet(Some(&t), 1, Dispatch::SharedQueue, 100_000), &reqs);
    let p = on.prefix_cache.expect("prefix caching reports its counts");
    // Request 2 hits blocks 10, 20 (1,024 tokens); request 3 hits 10 (512); request 4 hits all
    // of its one block but computes its last token (511); request 5 starts with an unseen block
    // (60), so its cached 20 does not count: a hit is a leading run.
    assert_eq!(p.prompt_tokens, 1100 + 1100 + 600 + 512 + 1000);
    assert_eq!(p.hit_tokens, 1024 + 512 + 511);
    assert!((p.hit_rate - 2047.0 / 4312.0).abs() < 1e-15);
    // What it saves is prefill: the same requests without the cache take longer to their first
    // token, by exactly the skipped tokens' prefill time (2,047 × 10 µs over 5 requests).
    let off = play(&fleet(None, 1, Dispatch::SharedQueue, 100_000), &reqs);
    assert!(off.prefix_cache.is_none());
    let (ttft_on, ttft_off) = (
        on.ttft.unwrap().mean.value_s,
        off.ttft.unwrap().mean.value_s,
    );
    assert!(
        ((ttft_off - ttft_on) - 2047.0 * 0.000_01 / 5.0).abs() < 1e-6,
        "{ttft_off} − {ttft_on}"
    );
}

#[test]
fn caches_are_per_replica_and_limited_to_free_kv() {
    let t = parse(HAND_MADE).unwrap();
    let reqs = spaced(&t);
    // Round-robin over two units: requests 1, 3, 5 meet one cache, 2 and 4 the other. Request 3
    // hits 10 from request 1 (512); request 4 finds only request 2's blocks: 10 (511).
    let two = play(&fleet(Some(&t), 2, Dispatch::RoundRobin, 100_000), &reqs);
    assert_eq!(two.prefix_cache.unwrap().hit_tokens, 512 + 511);
    // A KV cache of 2,000 tokens keeps ⌊(2,000 − reserved)/512⌋ freed blocks at each admission:
    // request 2 reserves 1,104 → 1 block kept, the least recently freed evicted first. Request
    // 1 freed 30, 20, 10 (its tail first), so 10 is kept and request 2 hits 512; request 3
    // (604 reserved → 2 blocks: 10, then 20 from request 2's release, 40 evicted) hits 512;
    // request 4 (516 → 2 blocks: 10, 50) hits its one block, 511; request 5 finds no 60.
    let small = play(&fleet(Some(&t), 1, Dispatch::SharedQueue, 2_000), &reqs);
    assert_eq!(small.prefix_cache.unwrap().hit_tokens, 512 + 512 + 511);
}

#[test]
fn no_shared_prefixes_no_hits() {
    let text: String = (0..40)
        .map(|i| {
            format!(
                "{{\"timestamp\": {}, \"input_length\": 1500, \"output_length\": 3, \"hash_ids\": [{}, {}, {}]}}\n",
                i * 500,
                3 * i,
                3 * i + 1,
                3 * i + 2
            )
        })
        .collect();
    let t = parse(&text).unwrap();
    assert_eq!(t.unbounded_prefix_hit_fraction(), Some(0.0));
    let r = play(
        &fleet(Some(&t), 1, Dispatch::SharedQueue, 1_000_000),
        &spaced(&t),
    );
    let p = r.prefix_cache.unwrap();
    assert_eq!(
        (p.prompt_tokens, p.hit_tokens, p.hit_rate),
        (60_000, 0, 0.0)
    );
}

#[test]
fn bad_hash_ids_are_refused_with_their_line() {
    // 1,100 tokens are three 512-token blocks, not two.
    let e = parse(
        "{\"timestamp\": 0, \"input_length\": 900, \"output_length\": 4, \"hash_ids\": [1, 2]}\n{\"timestamp\": 9, \"input_length\": 1100, \"output_length\": 4, \"hash_ids\": [1, 2]}\n",
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("hash_ids"));
    assert_eq!(e.position.map(|p| p.0), Some(2));
    assert!(
        e.message.contains("2 block ids for 1100 input tokens"),
        "{e}"
    );
    // On some lines and not others.
    let e = parse(
        "{\"timestamp\": 0, \"input_length\": 900, \"output_length\": 4, \"hash_ids\": [1, 2]}\n{\"timestamp\": 9, \"input_length\": 1100, \"output_length\": 4}\n",
    )
    .unwrap_err();
    assert_eq!(e.position.map(|p| p.0), Some(2));
    assert!(
        e.message
            .contains("line 1 has `hash_ids` and line 2 has none"),
        "{e}"
    );
    // Without hash_ids anywhere the trace reads as before, with no blocks.
    let t = parse("{\"timestamp\": 0, \"input_length\": 900, \"output_length\": 4}\n{\"timestamp\": 9, \"input_length\": 1100, \"output_length\": 4}\n").unwrap();
    assert!(t.prefix_blocks().is_none());
    assert!(t.requests().all(|r| r.prefix == 0));
}

#[test]
fn the_mooncake_trace_reads_its_blocks() {
    let t = Trace::read(&mooncake_path(), TraceFormat::Mooncake).unwrap();
    let b = t.prefix_blocks().unwrap();
    assert_eq!(b.requests(), 12_031);
    assert_eq!(b.block_tokens(), 512);
    // The ids are 0..182,789, each used: 182,790 distinct blocks.
    assert_eq!(b.distinct_blocks(), 182_790);
    // Computed independently (Python, one pass in file order, unbounded cache): 37.36 % of
    // the prompt tokens repeat an earlier prompt's leading blocks. The Mooncake README says
    // "up to 50% cache hit ratio" for its (global, DRAM/SSD) store.
    let f = t.unbounded_prefix_hit_fraction().unwrap();
    assert!((f - 0.373_623).abs() < 1e-5, "{f}");
}

/// A scenario held in memory; its relative paths resolve against the working directory, the
/// package root under `cargo test`.
fn scenario(text: &str) -> Result<Scenario, tco_sim::input::InputError> {
    Scenario::from_source(&SourceFile::from_text("prefix-test.toml", text))
}

const MOONCAKE_TRAFFIC: &str = "[traffic.trace]\npath = \"traces/mooncake-fast25/conversation_trace.jsonl\"\nformat = \"mooncake\"\n";
const TIER: &str = "[slo]\npercentile = 99\nttft_ms = 20000\n\n[[tier]]\nprofile = \"hgx-h100-8x\"\nprecision = \"fp8\"\n";

#[test]
fn the_key_is_refused_where_it_has_no_effect() {
    let line_of = |text: &str| {
        text.lines()
            .position(|l| l.starts_with("prefix_caching"))
            .unwrap()
            + 1
    };
    // A classic model.
    let text = format!(
        "name = \"x\"\n[workload]\npreset = \"resnet-50\"\nprecision = \"int8\"\nprefix_caching = true\n{MOONCAKE_TRAFFIC}[slo]\npercentile = 99\nlatency_ms = 100\n[[tier]]\nprofile = \"hgx-h100-8x\"\n"
    );
    let e = scenario(&text).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("workload.prefix_caching"));
    assert_eq!(e.position.map(|p| p.0), Some(line_of(&text)));
    assert!(e.message.contains("only to generative"), "{e}");
    // A trace without hash_ids (Azure), and synthetic traffic.
    for traffic in [
        "[traffic.trace]\npath = \"traces/azure-llm-2023/AzureLLMInferenceTrace_conv.csv\"\nformat = \"azure\"\n",
        "[traffic]\npattern = \"constant\"\npeak_rps = 3\n",
    ] {
        let text = format!(
            "name = \"x\"\n[workload]\npreset = \"llama-3-8b\"\nprecision = \"fp16\"\nprefix_caching = false\n{traffic}{TIER}"
        );
        let e = scenario(&text).unwrap_err();
        assert_eq!(e.position.map(|p| p.0), Some(line_of(&text)), "{e}");
        assert!(e.message.contains("names no prompt blocks"), "{e}");
    }
    // Prompts drawn instead of replayed.
    let text = format!(
        "name = \"x\"\n[workload]\npreset = \"llama-3-8b\"\nprecision = \"fp16\"\ntokens_from_trace = false\nprefix_caching = true\n{MOONCAKE_TRAFFIC}{TIER}"
    );
    let e = scenario(&text).unwrap_err();
    assert!(e.message.contains("tokens_from_trace = false"), "{e}");
    // Default on with the Mooncake trace; off when asked, or when prompts are drawn.
    let base = format!(
        "name = \"x\"\n[workload]\npreset = \"llama-3-8b\"\nprecision = \"fp16\"\n{MOONCAKE_TRAFFIC}{TIER}"
    );
    assert!(scenario(&base).unwrap().traffic.prefix_blocks().is_some());
    let off = base.replace("fp16\"\n", "fp16\"\nprefix_caching = false\n");
    assert!(scenario(&off).unwrap().traffic.prefix_blocks().is_none());
    let drawn = base.replace("fp16\"\n", "fp16\"\ntokens_from_trace = false\n");
    assert!(scenario(&drawn).unwrap().traffic.prefix_blocks().is_none());
}

/// Two units of the real trace's first 15 minutes.
fn real_run(threads: usize, seed: u64) -> SimReport {
    let t = Trace::read(&mooncake_path(), TraceFormat::Mooncake).unwrap();
    let f = fleet(Some(&t), 2, Dispatch::JoinShortestQueue, 400_000);
    let tt = TraceTraffic {
        trace: t,
        options: ReplayOptions::default(),
        growth: Growth::NONE,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        sim::simulate(&f, &run(60.0, 4, seed), |rep| {
            tt.replay(1, 900.0, seed, rep)
        })
        .unwrap()
    })
}

#[test]
fn the_real_trace_hits_and_is_deterministic_at_1_and_4_threads() {
    let one = real_run(1, 7);
    let four = real_run(4, 7);
    assert_eq!(
        serde_json::to_string(&one).unwrap(),
        serde_json::to_string(&four).unwrap()
    );
    let p = one.prefix_cache.unwrap();
    eprintln!(
        "Mooncake, 2 units × 400k-token KV, JSQ: hit rate {:.4} of {} prompt tokens",
        p.hit_rate, p.prompt_tokens
    );
    // Loosely: shared system prompts and conversation turns give hits, and no finite cache can
    // beat the unbounded one (37.4 %).
    assert!(p.hit_rate > 0.02 && p.hit_rate < 0.374, "{}", p.hit_rate);
    assert!(!one.unstable);
    let other = real_run(1, 8);
    assert_ne!(
        serde_json::to_string(&other).unwrap(),
        serde_json::to_string(&one).unwrap()
    );
}

#[test]
fn the_shipped_scenario_reports_its_hit_rate() {
    let s = Scenario::load(Path::new(
        &root().join("scenarios/mooncake-prefix-llama8b.toml"),
    ))
    .unwrap();
    assert!(s.traffic.prefix_blocks().is_some());
    let sweep = search::sweep_sizes(&s, 1, &[2], &|_, _| {}).unwrap();
    let p = sweep.runs[0].report.prefix_cache.unwrap();
    assert!(p.hit_rate > 0.02 && p.hit_rate < 0.374, "{}", p.hit_rate);
    let text = tco_sim::report::simulate::render(&s, &sweep);
    assert!(text.contains("prefix cache: "), "{text}");
    let json = serde_json::to_string(&sweep.runs).unwrap();
    assert!(
        json.contains("\"prefix_cache\":{\"prompt_tokens\":"),
        "{json}"
    );
}
