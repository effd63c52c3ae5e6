//! Tensor parallelism, per-layer overhead and compiled contexts: the all-reduce cost of a replica
//! split over devices (`[interconnect]`), the tier key that fixes the split (`tensor_parallel`),
//! the fixed time per layer (`efficiency.layer_overhead_ms`) and the KV a compiled-shape device
//! reads (`compiled_context_tokens`, `efficiency.attention_memory`) — each against hand
//! arithmetic, and each bad input refused where it is written.

use std::path::Path;

use tco_sim::hardware::{Batching, Precision, Profile, ProfileSearch};
use tco_sim::input::InputError;
use tco_sim::perf::{self, GenerativePlan, ServicePlan};
use tco_sim::scenario::Scenario;
use tco_sim::workload::{self, Workload};

fn profile(name: &str) -> Profile {
    ProfileSearch::default().load(name, Path::new(".")).unwrap()
}

/// Generative preset `name` at `precision`, every request `prompt` + `output` tokens.
fn llm(name: &str, precision: Precision, prompt: u32, output: u32) -> Workload {
    Workload::Generative {
        model: workload::generative_preset(name).unwrap(),
        precision,
        prompt_tokens: workload::TokenCount::Fixed { tokens: prompt },
        output_tokens: workload::TokenCount::Fixed { tokens: output },
        tokens_from_trace: false,
    }
}

fn llama70b(precision: Precision) -> Workload {
    llm("llama-2-70b", precision, 1000, 250)
}

fn generative(p: &Profile, w: &Workload, tp: Option<u32>) -> Result<GenerativePlan, InputError> {
    let batching = Batching {
        tensor_parallel: tp,
        ..p.batching.clone()
    };
    match perf::plan(p, w, w.precision(), &batching)? {
        ServicePlan::Generative(g) => Ok(g),
        ServicePlan::Classic(_) => unreachable!(),
    }
}

/// Load `text` as profile file `name`.toml from a scratch directory.
fn load_profile_text(name: &str, text: &str) -> Result<Profile, InputError> {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    ProfileSearch::default().load(path.to_str().unwrap(), tmp.path())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1e-300)
}

#[test]
fn a_tensor_parallel_replica_pays_two_all_reduces_per_layer() {
    let p = profile("hgx-h100-8x");
    let alpha = p.allreduce_latency_s.as_ref().unwrap().value;
    let bw = p.interconnect_bandwidth.as_ref().unwrap().value;
    assert!(alpha > 0.0 && bw > 0.0);
    let t0 = p.iteration_overhead_s.as_ref().unwrap().value;
    let w = llama70b(Precision::Fp8);
    let one = generative(&p, &w, Some(1)).unwrap();
    let two = generative(&p, &w, Some(2)).unwrap();
    let four = generative(&p, &w, Some(4)).unwrap();
    assert_eq!(
        (
            one.devices_per_replica,
            two.devices_per_replica,
            four.devices_per_replica
        ),
        (1, 2, 4)
    );
    // One device: no collective at all.
    assert_eq!(one.collective_s_per_token, 0.0);
    assert!(close(one.fixed_s, t0));
    // d devices: 2 x 80 layers of (alpha + 2(d-1)/d x 8192 x 2 B / bw).
    for (g, d) in [(&two, 2.0), (&four, 4.0)] {
        assert!(close(g.fixed_s, t0 + 160.0 * alpha));
        let per_token = 160.0 * 2.0 * (d - 1.0) / d * 8192.0 * 2.0 / bw;
        assert!(close(g.collective_s_per_token, per_token), "{d}");
    }
    // The cost reaches the iteration time the simulator plays: a decode step of 10 sequences
    // and a 100-token prefill chunk pay the bytes of 110 tokens, after the roofline.
    let work = tco_sim::sim::IterationWork {
        prefill_tokens: 100.0,
        decode_seqs: 10.0,
        attention_pairs: 0.0,
        context_tokens: 0.0,
        longest_decode_context: 0.0,
    };
    let no_links = tco_sim::sim::IterationCost {
        fixed_s: 0.0,
        collective_s_per_token: 0.0,
        ..two.cost()
    };
    let t = two.cost().iteration_s(&work) - no_links.iteration_s(&work);
    assert!(close(t, two.fixed_s + 110.0 * two.collective_s_per_token));
}

#[test]
fn without_an_interconnect_section_the_collectives_are_free() {
    let mut p = profile("hgx-h100-8x");
    p.allreduce_latency_s = None;
    p.interconnect_bandwidth = None;
    let g = generative(&p, &llama70b(Precision::Fp8), Some(4)).unwrap();
    assert_eq!(g.collective_s_per_token, 0.0);
    assert_eq!(g.fixed_s, p.iteration_overhead_s.as_ref().unwrap().value);
}

#[test]
fn the_planner_weighs_the_collectives_when_it_picks_the_group() {
    let w = llama70b(Precision::Fp8);
    let mut p = profile("hgx-h100-8x");
    // Free links: the planner's choice, whatever it is, is a power of two that fits.
    p.allreduce_latency_s.as_mut().unwrap().value = 0.0;
    let free = generative(&p, &w, None).unwrap();
    // Links so slow that any split costs more than it buys: the smallest group that fits wins.
    p.allreduce_latency_s.as_mut().unwrap().value = 0.05;
    let slow = generative(&p, &w, None).unwrap();
    let smallest = [1u32, 2, 4, 8]
        .into_iter()
        .find(|&d| generative(&p, &w, Some(d)).is_ok())
        .unwrap();
    assert_eq!(slow.devices_per_replica, smallest);
    assert!(free.devices_per_replica.is_power_of_two());
    // Its throughput is the best of the candidates, collectives included.
    let (i, o) = (1000.0, 250.0);
    for d in [1u32, 2, 4, 8] {
        if let Ok(g) = generative(&p, &w, Some(d)) {
            assert!(g.unit_throughput_rps(i, o) <= slow.unit_throughput_rps(i, o) * (1.0 + 1e-12));
        }
    }
}

#[test]
fn a_forced_split_that_does_not_fit_is_refused() {
    let p = profile("hgx-h100-8x");
    // Llama-2-70B at fp16 (138 GB) does not fit one 80 GB H100.
    let e = generative(&p, &llama70b(Precision::Fp16), Some(1)).unwrap_err();
    assert!(e.to_string().contains("does not fit"), "{e}");
    assert!(
        e.help.as_deref().unwrap_or("").contains("tensor_parallel"),
        "{e:?}"
    );
    let e = generative(&p, &llama70b(Precision::Fp16), Some(9)).unwrap_err();
    assert!(e.help.as_deref().unwrap_or("").contains("1 to 8"), "{e:?}");
}

/// No shipped profile charges per layer since 2026-12-05 (Inferentia2 went back to a cost per
/// call), so the key is tested on a profile given one: 10 µs per layer.
#[test]
fn layers_cost_a_fixed_time_each() {
    let mut p = profile("aws-inf2.xlarge");
    let mut cited = p.batch_overhead_s.clone();
    cited.value = 1e-5;
    p.layer_overhead_s = Some(cited);
    let per_layer = p.layer_overhead_s.as_ref().unwrap().value;
    let classic = |name: &str| Workload::Classic {
        model: workload::classic_preset(name).unwrap(),
        precision: Precision::Fp16,
    };
    let t0 = |w: &Workload| match perf::plan(&p, w, Precision::Fp16, &p.batching).unwrap() {
        ServicePlan::Classic(c) => c.roofline.t0_s,
        ServicePlan::Generative(_) => unreachable!(),
    };
    let base = p.batch_overhead_s.value;
    assert!(close(t0(&classic("resnet-50")), base + 50.0 * per_layer));
    assert!(close(t0(&classic("bert-base")), base + 12.0 * per_layer));
    assert!(close(t0(&classic("bert-large")), base + 24.0 * per_layer));
    // A custom model without a depth cannot be charged per layer: an error naming the key.
    let mut custom = workload::classic_preset("bert-base").unwrap();
    custom.layers = None;
    let w = Workload::Classic {
        model: custom,
        precision: Precision::Fp16,
    };
    let e = perf::plan(&p, &w, Precision::Fp16, &p.batching).unwrap_err();
    assert!(
        e.help.as_deref().unwrap_or("").contains("workload.layers"),
        "{e:?}"
    );
    // A profile that charges nothing per layer plans it as before.
    let mut none = p.clone();
    none.layer_overhead_s = None;
    assert!(perf::plan(&none, &w, Precision::Fp16, &none.batching).is_ok());
}

fn scenario(text: &str) -> Result<Scenario, InputError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(&path, text).unwrap();
    Scenario::load(&path)
}

fn shipped(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name);
    std::fs::read_to_string(p).unwrap()
}

/// The tier of `s` on profile `profile`.
fn tier_of<'a>(s: &'a Scenario, profile: &str) -> &'a tco_sim::scenario::Tier {
    s.tiers.iter().find(|t| t.profile.name == profile).unwrap()
}

/// llama70b-chat with `extra` added to the tier whose profile line is `profile`.
fn llama70b_chat_with(profile: &str, extra: &str) -> String {
    let s = shipped("llama70b-chat.toml");
    let line = format!("profile = \"{profile}\"\n");
    assert!(s.contains(&line), "{profile}");
    s.replacen(&line, &format!("{line}{extra}"), 1)
}

/// embedding-api (a classic model) with `extra` added to its Inferentia2 tier.
fn embedding_api_with(extra: &str) -> String {
    let s = shipped("embedding-api.toml");
    let at = s.find("profile = \"aws-inf2.xlarge\"").unwrap();
    let end = at + s[at..].find('\n').unwrap() + 1;
    format!("{}{extra}{}", &s[..end], &s[end..])
}

/// `e` points at its position, names a field ending in `field`, and says `says` (message or
/// help).
fn assert_refused_at(e: &InputError, field: &str, says: &str) {
    let shown = format!("{e} {}", e.help.clone().unwrap_or_default());
    assert!(e.position.is_some(), "no position: {shown}");
    assert!(e.field.as_deref().unwrap_or("").ends_with(field), "{shown}");
    assert!(shown.contains(says), "{shown}");
}

/// The results.json tier of a run whose profile is `profile`.
fn json_tier(r: &tco_sim::results::RunResults, profile: &str) -> serde_json::Value {
    let json = serde_json::to_value(r).unwrap();
    json["tiers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["profile"] == profile)
        .unwrap()
        .clone()
}

#[test]
fn a_tier_fixes_the_split_and_bad_values_are_refused_where_they_are() {
    let s = scenario(&llama70b_chat_with("hgx-h100-8x", "tensor_parallel = 4\n")).unwrap();
    let t = tier_of(&s, "hgx-h100-8x");
    assert_eq!(t.batching.tensor_parallel, Some(4));
    match perf::plan(&t.profile, &s.workload, t.precision, &t.batching).unwrap() {
        ServicePlan::Generative(g) => {
            assert_eq!((g.devices_per_replica, g.replicas_per_unit), (4, 2))
        }
        ServicePlan::Classic(_) => unreachable!(),
    }
    for (text, field, says) in [
        (
            llama70b_chat_with("hgx-h100-8x", "tensor_parallel = 9\n"),
            "tensor_parallel",
            "1 to 8",
        ),
        (
            llama70b_chat_with("hgx-h100-8x", "tensor_parallel = 0\n"),
            "tensor_parallel",
            "1 to 8",
        ),
        (
            llama70b_chat_with("altra-max-m128-30-1u", "tensor_parallel = 1\n"),
            "tensor_parallel",
            "CPU",
        ),
        (
            embedding_api_with("tensor_parallel = 1\n"),
            "tensor_parallel",
            "classic",
        ),
    ] {
        assert_refused_at(&scenario(&text).unwrap_err(), field, says);
    }
}

#[test]
fn an_interconnect_on_a_cpu_profile_is_refused() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("hardware-profiles");
    let text = std::fs::read_to_string(dir.join("altra-max-m128-30-1u.toml")).unwrap();
    let at = text.find("\n[price]").unwrap();
    let key = text
        .split("[sources.")
        .nth(1)
        .unwrap()
        .split(']')
        .next()
        .unwrap();
    let bad = format!(
        "{}\n[interconnect]\nbandwidth_gbps = {{ value = 100, source = \"{key}\" }}\n{}",
        &text[..at],
        &text[at..]
    );
    let e = load_profile_text("altra-max-m128-30-1u", &bad).unwrap_err();
    let shown = format!("{e} {}", e.help.clone().unwrap_or_default());
    assert!(
        shown.contains("interconnect") && shown.contains("accelerator"),
        "{shown}"
    );
    assert!(e.position.is_some(), "{shown}");
}

#[test]
fn a_mesh_gives_a_small_group_its_share_of_the_links() {
    let p = profile("mi300x-8x");
    assert!(p.interconnect_mesh);
    let bw = p.interconnect_bandwidth.as_ref().unwrap().value;
    let w = llama70b(Precision::Fp8);
    for d in [2u32, 4, 8] {
        let g = generative(&p, &w, Some(d)).unwrap();
        let df = f64::from(d);
        // d − 1 of the 7 peers' links, each ring step 2(d−1)/d of 8192 × 2 B.
        let share = bw * (df - 1.0) / 7.0;
        let per_token = 160.0 * 2.0 * (df - 1.0) / df * 8192.0 * 2.0 / share;
        assert!(close(g.collective_s_per_token, per_token), "{d}");
    }
    // A switch gives every group the whole bandwidth.
    let mut switch = p.clone();
    switch.interconnect_mesh = false;
    let g = generative(&switch, &w, Some(2)).unwrap();
    assert!(close(g.collective_s_per_token, 160.0 * 8192.0 * 2.0 / bw));
}

#[test]
fn an_unknown_topology_is_refused_with_the_valid_ones() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("hardware-profiles");
    let text = std::fs::read_to_string(dir.join("mi300x-8x.toml")).unwrap();
    let bad = text.replace("topology = \"mesh\"", "topology = \"torus\"");
    assert_ne!(bad, text);
    let e = load_profile_text("mi300x-8x", &bad).unwrap_err();
    let shown = format!("{e} {}", e.help.clone().unwrap_or_default());
    assert!(
        shown.contains("torus") && shown.contains("\"mesh\""),
        "{shown}"
    );
    assert_eq!(e.field.as_deref(), Some("interconnect.topology"), "{shown}");
    assert!(e.position.is_some(), "{shown}");
}

/// results.json gives each generative tier's split, from the plan the tier was sized with.
#[test]
fn results_name_each_generative_tiers_replicas() {
    let s = scenario(&llama70b_chat_with("hgx-h100-8x", "tensor_parallel = 4\n")).unwrap();
    let r = tco_sim::results::plan(&s, tco_sim::results::Method::Analytic, &|_, _| {}).unwrap();
    for (t, tier) in r.tiers.iter().zip(&s.tiers) {
        let l = t.replicas.expect("a generative tier has replicas");
        let ServicePlan::Generative(g) =
            perf::plan(&tier.profile, &s.workload, tier.precision, &tier.batching).unwrap()
        else {
            unreachable!()
        };
        assert_eq!(
            (l.devices_per_replica, l.replicas_per_unit),
            (g.devices_per_replica, g.replicas_per_unit)
        );
        assert_eq!(
            l.fixed_by_tier,
            tier.profile.name == "hgx-h100-8x",
            "{}",
            t.name
        );
        if l.devices_per_replica > 1 {
            assert!(l.allreduce_s_per_iteration > 0.0, "{}", t.name);
        }
    }
    let h100 = json_tier(&r, "hgx-h100-8x");
    assert_eq!(h100["replicas"]["devices_per_replica"], 4);
    assert_eq!(h100["replicas"]["replicas_per_unit"], 2);
}

/// A compiled-shape device's decoding sequences read the compiled context's KV, whatever their
/// own context; the read runs at the profile's attention efficiency.
#[test]
fn a_compiled_context_is_read_whole_by_every_decoding_sequence() {
    let p = profile("aws-inf2.48xlarge");
    let e_attention = p.efficiency_attention_memory.as_ref().unwrap().value;
    assert!(e_attention < p.efficiency_memory.value);
    let w = llm("llama-3-8b", Precision::Int8, 128, 1000);
    let plan = |compiled: Option<u32>| {
        let batching = Batching {
            tensor_parallel: Some(12),
            compiled_context_tokens: compiled,
            ..p.batching.clone()
        };
        match perf::plan(&p, &w, Precision::Int8, &batching).unwrap() {
            ServicePlan::Generative(g) => g,
            ServicePlan::Classic(_) => unreachable!(),
        }
    };
    let own = plan(None);
    let compiled = plan(Some(4096));
    // The KV read per token: 128 KiB over 12 chips' bandwidth at the attention efficiency.
    let kv = 131_072.0 / (12.0 * p.memory_bandwidth_per_chip.value * e_attention);
    assert!(close(own.kv_read_s_per_token, kv));
    assert_eq!(compiled.compiled_context_tokens, 4096.0);
    // 8 sequences at 600 tokens of context each: their own read 4,800 tokens, the compiled
    // shape 8 x 4,096.
    let (seqs, ctx) = (8.0, 8.0 * 600.0);
    let t_own = own.iteration_s(0.0, seqs, ctx, ctx, 600.0);
    let t_compiled = compiled.iteration_s(0.0, seqs, ctx, ctx, 600.0);
    let memory = |tokens: f64| own.weight_read_s + tokens * kv;
    let compute = seqs * own.decode_compute_s_per_seq + ctx * own.attention_s_per_pair;
    let rest = own.fixed_s + seqs * (own.collective_s_per_token + own.stream_s_per_seq);
    assert!(own.stream_s_per_seq > 0.0);
    assert!(close(t_own, rest + compute.max(memory(ctx))));
    assert!(close(t_compiled, rest + compute.max(memory(seqs * 4096.0))));
    // A context longer than the compiled one (a prefill chunk's) is read as it is.
    let long = 8.0 * 5000.0;
    assert!(close(
        compiled.iteration_s(0.0, seqs, long, long, 5000.0),
        own.iteration_s(0.0, seqs, long, long, 5000.0)
    ));
}

#[test]
fn a_compiled_context_is_refused_where_it_has_no_effect() {
    let p = profile("hgx-h100-8x");
    let batching = Batching {
        compiled_context_tokens: Some(4096),
        ..p.batching.clone()
    };
    let e = perf::plan(&p, &llama70b(Precision::Fp8), Precision::Fp8, &batching).unwrap_err();
    assert!(e.to_string().contains("compiles no shapes"), "{e}");
    let e = scenario(&llama70b_chat_with(
        "hgx-h100-8x",
        "compiled_context_tokens = 4096\n",
    ))
    .unwrap_err();
    assert_refused_at(&e, "compiled_context_tokens", "");
    let s = scenario(&llama70b_chat_with(
        "aws-inf2.48xlarge",
        "compiled_context_tokens = 4096\n",
    ))
    .unwrap();
    let t = tier_of(&s, "aws-inf2.48xlarge");
    assert_eq!(t.batching.compiled_context_tokens, Some(4096));
}

/// An fp8 KV cache holds twice the tokens of the 16-bit default in the same memory and its read
/// takes half the time; nothing else in the plan moves.
#[test]
fn an_fp8_kv_cache_halves_the_bytes_per_token() {
    let p = profile("hgx-h100-8x");
    let w = llama70b(Precision::Fp8);
    let sixteen = generative(&p, &w, Some(2)).unwrap();
    let eight = match perf::plan(
        &p,
        &w,
        Precision::Fp8,
        &Batching {
            tensor_parallel: Some(2),
            kv_cache_precision: Some(Precision::Fp8),
            ..p.batching.clone()
        },
    )
    .unwrap()
    {
        ServicePlan::Generative(g) => g,
        ServicePlan::Classic(_) => unreachable!(),
    };
    // Llama-2-70B: 2 x 80 layers x 8 KV heads x 128 = 163,840 values per token; 2 B by default.
    assert_eq!(
        workload::kv_precision(Precision::Fp8, None),
        Precision::Fp16
    );
    let m = workload::generative_preset("llama-2-70b").unwrap();
    assert_eq!(m.kv_bytes_per_token(Precision::Fp16), 327_680.0);
    assert_eq!(m.kv_bytes_per_token(Precision::Fp8), 163_840.0);
    assert!(close(
        eight.kv_read_s_per_token,
        sixteen.kv_read_s_per_token / 2.0
    ));
    // The room left after the weights holds twice the tokens (to the token: floor of each).
    let room = sixteen.kv_capacity_tokens as f64 * 327_680.0;
    assert!((eight.kv_capacity_tokens as f64 * 163_840.0 - room).abs() <= 2.0 * 327_680.0);
    assert!(eight.kv_capacity_tokens >= 2 * sixteen.kv_capacity_tokens);
    assert_eq!(
        (
            eight.weight_read_s,
            eight.fixed_s,
            eight.prefill_s_per_token
        ),
        (
            sixteen.weight_read_s,
            sixteen.fixed_s,
            sixteen.prefill_s_per_token
        )
    );
}

/// The tier key reaches the plan and the results, and is refused where it has no effect or
/// names no precision.
#[test]
fn a_tier_sets_the_kv_cache_precision_and_the_results_say_it() {
    let s = scenario(&llama70b_chat_with(
        "hgx-h100-8x",
        "kv_cache_precision = \"fp8\"\n",
    ))
    .unwrap();
    let t = tier_of(&s, "hgx-h100-8x");
    assert_eq!(t.batching.kv_cache_precision, Some(Precision::Fp8));
    let r = tco_sim::results::plan(&s, tco_sim::results::Method::Analytic, &|_, _| {}).unwrap();
    let layout = |profile: &str| {
        r.tiers
            .iter()
            .find(|x| x.profile == profile)
            .unwrap()
            .replicas
            .unwrap()
    };
    assert_eq!(layout("hgx-h100-8x").kv_cache_precision, "fp8");
    assert!(layout("hgx-h100-8x").label().contains("KV cache in fp8"));
    // The other tiers keep the 16-bit default, and say so.
    assert_eq!(layout("aws-p5.48xlarge").kv_cache_precision, "fp16");
    assert_eq!(
        json_tier(&r, "hgx-h100-8x")["replicas"]["kv_cache_precision"],
        "fp8"
    );
    // A classic model has no KV cache: refused at the key, with the reason.
    assert_refused_at(
        &scenario(&embedding_api_with("kv_cache_precision = \"fp8\"\n")).unwrap_err(),
        "kv_cache_precision",
        "no KV cache",
    );
    // Not a precision: the parser names the valid ones, at the key's line.
    let e = scenario(&llama70b_chat_with(
        "hgx-h100-8x",
        "kv_cache_precision = \"fp4\"\n",
    ))
    .unwrap_err();
    let shown = format!("{e} {}", e.help.clone().unwrap_or_default());
    assert!(e.position.is_some(), "{shown}");
    assert!(shown.contains("fp8") && shown.contains("fp16"), "{shown}");
    // The library refuses it on a classic plan too (callers that bypass a scenario).
    let p = profile("aws-inf2.xlarge");
    let minilm = tco_sim::workload::Workload::Classic {
        model: workload::classic_preset("all-minilm-l6-v2").unwrap(),
        precision: Precision::Fp16,
    };
    let batching = Batching {
        kv_cache_precision: Some(Precision::Fp8),
        ..p.batching.clone()
    };
    let e = perf::plan(&p, &minilm, Precision::Fp16, &batching).unwrap_err();
    assert!(e.to_string().contains("no KV cache"), "{e}");
}

/// A generative replica runs at most vLLM's default `max_num_seqs` on a GPU — 1,024 on a device
/// with at least 70 GiB (H100), 256 below it (L4) — not the profile's classic `[batching]
/// max_batch`; off a GPU (Inferentia2, whose compiled batches the profile states) the profile's
/// `max_batch` stays; and a tier's `max_batch` is its engine's limit everywhere.
#[test]
fn a_generative_replica_runs_vllms_default_sequences_on_a_gpu_or_the_tiers_max_batch() {
    let llama8b = llm("llama-3-8b", Precision::Fp16, 1000, 250);
    let h100 = profile("hgx-h100-8x");
    assert_eq!(h100.batching.max_batch, 64);
    assert_eq!(
        generative(&h100, &llama8b, Some(1)).unwrap().max_batch,
        1024
    );
    let l4 = profile("aws-g6.xlarge");
    assert_eq!(generative(&l4, &llama8b, None).unwrap().max_batch, 256);
    let inf2 = profile("aws-inf2.48xlarge");
    assert_eq!(
        generative(&inf2, &llama8b, None).unwrap().max_batch,
        inf2.batching.max_batch
    );
    // A tier's max_batch sets the engine's limit.
    let s = scenario(&llama70b_chat_with("hgx-h100-8x", "max_batch = 48\n")).unwrap();
    match &tier_of(&s, "hgx-h100-8x").plan {
        ServicePlan::Generative(g) => assert_eq!(g.max_batch, 48),
        ServicePlan::Classic(_) => unreachable!(),
    }
    let s = scenario(&shipped("llama70b-chat.toml")).unwrap();
    match &tier_of(&s, "hgx-h100-8x").plan {
        ServicePlan::Generative(g) => assert_eq!(g.max_batch, 1024),
        ServicePlan::Classic(_) => unreachable!(),
    }
}

/// A generative engine's iteration pays the profile's `iteration_overhead_ms` (fitted on the
/// H100 to a NIM decode at concurrency 1); a classic batch keeps `batch_overhead_ms`; a profile
/// without the key charges its batch overhead per iteration, as before the key existed.
#[test]
fn an_engine_iteration_pays_the_iteration_overhead_and_a_classic_batch_the_batch_overhead() {
    let p = profile("hgx-h100-8x");
    let iteration = p.iteration_overhead_s.as_ref().unwrap().value;
    let batch = p.batch_overhead_s.value;
    assert!(iteration > 2.0 * batch, "{iteration} vs {batch}");
    let w = llm("llama-3-8b", Precision::Fp8, 200, 200);
    // One device per replica: no all-reduce adds to the fixed time.
    let g = generative(&p, &w, Some(1)).unwrap();
    assert!(close(g.fixed_s, iteration), "{}", g.fixed_s);
    let mut without = p.clone();
    without.iteration_overhead_s = None;
    let g = generative(&without, &w, Some(1)).unwrap();
    assert!(close(g.fixed_s, batch), "{}", g.fixed_s);
    let resnet = Workload::Classic {
        model: workload::classic_preset("resnet-50").unwrap(),
        precision: Precision::Int8,
    };
    match perf::plan(&p, &resnet, Precision::Int8, &p.batching).unwrap() {
        ServicePlan::Classic(c) => assert_eq!(c.roofline.t0_s, batch),
        ServicePlan::Generative(_) => unreachable!(),
    }
}
