//! Service time: what a request (or a batch of them) takes on one execution slot of a unit.
//!
//! The roofline of `DESIGN.md`, for a batch of `b` items on a device with peak compute `P`
//! \[FLOP/s\] at the workload's precision, memory bandwidth `BW` \[B/s\], efficiencies `e_c`, `e_m`
//! and a fixed per-batch overhead `t0` \[s\]:
//!
//! ```text
//! t(b) = t0 + max( b·F / (P·e_c),  (W + b·A) / (BW·e_m) )
//! ```
//!
//! with `F` FLOPs per item, `W` weight bytes (read once per batch) and `A` activation bytes per
//! item (Williams, Waterman & Patterson, "Roofline", CACM 52(4), 2009). A many-core CPU runs one
//! request per core and its cores share the chip's bandwidth: with `k` cores busy each gets
//! `BW/k`, so a bandwidth-bound request slows as concurrency rises. An accelerator batches; a
//! compiled-shape accelerator (Inferentia) pads a batch up to the next compiled size, paying for
//! the padding. A generative model runs a compute-bound prefill, then memory-bound decode steps.
//!
//! These times are means. The profile's `efficiency.service_cv` (or the tier's `service_cv`)
//! spreads each around its mean with a log-normal multiplier of mean 1 — per request on a CPU
//! core, per batch on an accelerator, per iteration for a generative model — which the plan
//! carries as a [`Variability`] for the simulator; the throughput and the analytic bound, which
//! depend only on the means, do not change with it.

use serde::Serialize;

use crate::hardware::{Batching, GenerativeScheduling, Precision, Profile, UnitKind};
use crate::input::InputError;
use crate::sim::{IterationCost, IterationWork, KvAllocation, Scheduler, Variability};
use crate::workload::{GenerativeModel, Workload};

/// Fraction of device memory a serving engine may use for weights and KV cache. vLLM's default
/// `gpu_memory_utilization` is 0.9 (vLLM engine arguments documentation, 2024); the rest is
/// activations, CUDA graphs and fragmentation.
pub const USABLE_MEMORY_FRACTION: f64 = 0.9;

/// The roofline parameters of one execution slot.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Roofline {
    /// Peak compute at the workload's precision \[FLOP/s\].
    pub peak_flops: f64,
    /// Memory bandwidth available to the slot when it runs alone \[B/s\].
    pub bandwidth: f64,
    pub e_compute: f64,
    pub e_memory: f64,
    /// Fixed per-batch overhead \[s\].
    pub t0_s: f64,
}

impl Roofline {
    /// `t(b)` for `b` items of `flops` FLOP and `act_bytes` activation bytes each, reading
    /// `weight_bytes` once, with the bandwidth divided among `sharers` concurrent slots.
    pub fn batch_time(
        &self,
        b: f64,
        flops: f64,
        weight_bytes: f64,
        act_bytes: f64,
        sharers: f64,
    ) -> f64 {
        let compute = b * flops / (self.peak_flops * self.e_compute);
        let memory = (weight_bytes + b * act_bytes) / (self.bandwidth / sharers * self.e_memory);
        self.t0_s + compute.max(memory)
    }
}

/// The service-time plan of one tier for a classic workload, computed once.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassicPlan {
    pub kind: UnitKind,
    /// Execution slots per unit (cores, or devices).
    pub slots: u32,
    /// Cores sharing one chip's bandwidth (CPUs); 1 for accelerators.
    pub cores_per_chip: u32,
    pub roofline: Roofline,
    /// CPUs: service time of one request when k cores of its chip are busy, k = 1..=cores.
    pub time_at_busy_s: Vec<f64>,
    /// Accelerators: time of a batch of b requests, b = 1..=max_batch, padded to compiled shapes.
    pub batch_time_s: Vec<f64>,
    pub batching: Batching,
    /// Spread of each request's (CPU) or batch's (accelerator) time around the times above,
    /// which are its mean.
    pub variability: Variability,
}

impl ClassicPlan {
    /// Requests per second one unit sustains with every slot busy at full batch.
    pub fn unit_throughput_rps(&self) -> f64 {
        match self.kind {
            UnitKind::Cpu => {
                self.slots as f64 / self.time_at_busy_s[self.cores_per_chip as usize - 1]
            }
            _ => {
                let b = self.batching.max_batch as usize;
                self.slots as f64 * b as f64 / self.batch_time_s[b - 1]
            }
        }
    }

    /// Mean service time of a lone request (no contention, batch of one) \[s\].
    pub fn lone_request_s(&self) -> f64 {
        match self.kind {
            UnitKind::Cpu => self.time_at_busy_s[0],
            _ => self.batch_time_s[0],
        }
    }
}

/// The plan of one tier for a generative workload: how replicas are laid out and what an
/// iteration of continuous batching costs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GenerativePlan {
    /// Devices (accelerators) or chips (CPUs) per model replica.
    pub devices_per_replica: u32,
    pub replicas_per_unit: u32,
    /// KV-cache capacity of one replica \[tokens\].
    pub kv_capacity_tokens: u64,
    pub max_batch: u32,
    pub fixed_s: f64,
    /// Prefill compute per prompt token \[s\].
    pub prefill_s_per_token: f64,
    /// Decode compute per running sequence per step \[s\].
    pub decode_compute_s_per_seq: f64,
    /// Reading all weights once \[s\].
    pub weight_read_s: f64,
    /// Reading one token of KV cache \[s\].
    pub kv_read_s_per_token: f64,
    /// Attention compute per query–key pair \[s\] ([`GenerativeModel::attention_flops_per_pair`]).
    pub attention_s_per_pair: f64,
    /// Token budget and KV allocation of an iteration.
    pub scheduler: Scheduler,
    /// Spread of each iteration's time around [`GenerativePlan::iteration_s`], its mean.
    pub variability: Variability,
}

impl GenerativePlan {
    /// The iteration cost the simulator plays: the same numbers, so the plan and the simulator
    /// share one formula ([`IterationCost::iteration_s`]).
    pub fn cost(&self) -> IterationCost {
        IterationCost {
            fixed_s: self.fixed_s,
            prefill_s_per_token: self.prefill_s_per_token,
            decode_compute_s_per_seq: self.decode_compute_s_per_seq,
            weight_read_s: self.weight_read_s,
            kv_read_s_per_token: self.kv_read_s_per_token,
            attention_s_per_pair: self.attention_s_per_pair,
        }
    }

    /// Time of one iteration with `prefill` prompt tokens, `decode` running sequences,
    /// `pairs` attention query–key pairs and `context` tokens of KV cache read.
    pub fn iteration_s(&self, prefill: f64, decode: f64, pairs: f64, context: f64) -> f64 {
        self.cost().iteration_s(&IterationWork {
            prefill_tokens: prefill,
            decode_seqs: decode,
            attention_pairs: pairs,
            context_tokens: context,
        })
    }

    /// Prompt tokens one iteration may prefill for a lone request (the budget, or the prompt).
    fn chunk_tokens(&self) -> f64 {
        self.scheduler
            .max_batched_tokens
            .map_or(f64::INFINITY, f64::from)
    }

    /// Time to first token of a request alone on a replica: its prefill iterations, one per
    /// chunk of the token budget \[s\].
    pub fn lone_ttft_s(&self, prompt: f64) -> f64 {
        let chunk = self.chunk_tokens().max(1.0);
        let prompt = prompt.max(1.0);
        let mut done = 0.0;
        let mut t = 0.0;
        // At most MAX_TOKENS / 1 chunks; prompts are bounded by the workload's max_tokens.
        while done < prompt {
            let n = chunk.min(prompt - done);
            let pairs = n * done + n * (n + 1.0) / 2.0;
            t += self.iteration_s(n, 0.0, pairs, done + n);
            done += n;
        }
        t
    }

    /// One decode step of a sequence alone on a replica with `context` tokens \[s\].
    pub fn lone_tpot_s(&self, context: f64) -> f64 {
        self.iteration_s(0.0, 1.0, context, context)
    }

    /// End-to-end time of a request alone on a replica: prefill, then a step per further token.
    pub fn lone_request_s(&self, prompt: f64, output: f64) -> f64 {
        self.lone_ttft_s(prompt) + (output - 1.0).max(0.0) * self.lone_tpot_s(prompt + output / 2.0)
    }

    /// Requests per second one unit sustains at steady state with `prompt` and `output` mean
    /// tokens, every replica running at the largest batch its KV cache, its token budget and
    /// `max_batch` allow.
    pub fn unit_throughput_rps(&self, prompt: f64, output: f64) -> f64 {
        // KV held per sequence: its whole context when reserved; under paged allocation, on
        // average the prompt and half the output (plus half a block of rounding).
        let per_request_kv = match self.scheduler.kv {
            KvAllocation::Reserve => prompt + output,
            KvAllocation::Paged { block_tokens } => {
                prompt + output / 2.0 + f64::from(block_tokens) / 2.0
            }
        };
        let by_kv = (self.kv_capacity_tokens as f64 / per_request_kv).floor();
        // Each step computes one token per decoding sequence and prompt/output prompt tokens
        // per sequence on average: batch·(1 + prompt/output) tokens within the budget.
        let by_budget = (self.chunk_tokens() * output / (output + prompt)).floor();
        let batch = by_kv.min(by_budget).min(self.max_batch as f64).max(1.0);
        // At steady state each step decodes `batch` sequences whose mean context is
        // prompt + output/2, and prefills batch/output new prompts on average.
        let mean_context = prompt + output / 2.0;
        let new_prompts = batch / output;
        let step = self.iteration_s(
            new_prompts * prompt,
            batch,
            batch * mean_context + new_prompts * prompt * (prompt + 1.0) / 2.0,
            batch * mean_context,
        );
        self.replicas_per_unit as f64 * batch / (output * step)
    }
}

/// vLLM V1's default `max_num_batched_tokens` for an OpenAI-compatible server: 8,192 on a device
/// with at least 70 GiB of memory (H100, MI300X; vLLM excludes the A100), 2,048 otherwise
/// (`EngineArgs.get_batch_defaults`, vllm/engine/arg_utils.py, vLLM 0.10–0.11, 2025). Applied by
/// the memory of one device (one CPU chip's DRAM for a CPU).
pub fn default_max_batched_tokens(profile: &Profile) -> u32 {
    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
    if profile.memory_bytes_per_chip.value >= 70.0 * GIB && !profile.name.contains("a100") {
        8192
    } else {
        2048
    }
}

/// vLLM's default KV block size on GPUs \[tokens\] (engine argument `block_size`, default 16;
/// Kwon et al., "Efficient Memory Management for Large Language Model Serving with
/// PagedAttention", SOSP 2023, §4 uses blocks of 16 tokens).
pub const KV_BLOCK_TOKENS: u32 = 16;

/// The simulator's scheduler for a tier's generative scheduling choice on `profile`.
pub fn scheduler(profile: &Profile, g: &GenerativeScheduling) -> Scheduler {
    Scheduler {
        max_batched_tokens: g.chunked_prefill.then(|| {
            g.max_batched_tokens
                .unwrap_or_else(|| default_max_batched_tokens(profile))
        }),
        kv: if g.paged_kv {
            KvAllocation::Paged {
                block_tokens: KV_BLOCK_TOKENS,
            }
        } else {
            KvAllocation::Reserve
        },
    }
}

/// The service-time plan of a tier: classic or generative.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ServicePlan {
    Classic(ClassicPlan),
    Generative(GenerativePlan),
}

impl ServicePlan {
    /// The analytic throughput of one unit at full load \[req/s\].
    pub fn unit_throughput_rps(&self, workload: &Workload) -> f64 {
        match (self, workload) {
            (ServicePlan::Classic(p), _) => p.unit_throughput_rps(),
            (
                ServicePlan::Generative(p),
                Workload::Generative {
                    prompt_tokens,
                    output_tokens,
                    ..
                },
            ) => p.unit_throughput_rps(prompt_tokens.mean(), output_tokens.mean().max(1.0)),
            (ServicePlan::Generative(_), Workload::Classic { .. }) => 0.0,
        }
    }
}

/// The roofline of one execution slot of a profile at a precision, or an error naming the
/// precisions the chip has.
pub fn slot_roofline(profile: &Profile, precision: Precision) -> Result<Roofline, InputError> {
    let chip_peak = profile.peak_per_chip.get(&precision).ok_or_else(|| {
        let have: Vec<&str> = profile.peak_per_chip.keys().map(|p| p.label()).collect();
        InputError::new(format!(
            "profile `{}` has no {precision} peak",
            profile.name
        ))
        .with_help(format!(
            "valid precisions for this profile: {}; set `precision` on the tier",
            have.join(", ")
        ))
    })?;
    let cores = profile.cores_per_chip.as_ref().map_or(1.0, |c| c.value);
    let per_slot = if profile.kind == UnitKind::Cpu {
        cores
    } else {
        1.0
    };
    Ok(Roofline {
        peak_flops: chip_peak.value / per_slot,
        bandwidth: profile.memory_bandwidth_per_chip.value,
        e_compute: profile.efficiency_compute.value,
        e_memory: profile.efficiency_memory.value,
        t0_s: profile.batch_overhead_s.value,
    })
}

/// Build the service plan of a tier.
pub fn plan(
    profile: &Profile,
    workload: &Workload,
    precision: Precision,
    batching: &Batching,
) -> Result<ServicePlan, InputError> {
    let roof = slot_roofline(profile, precision)?;
    match workload {
        Workload::Classic { model, .. } => {
            let f = model.flops_per_item.value;
            let w = workload.weight_bytes(precision);
            let a = model.activation_elements_per_item.value * precision.bytes();
            check_fits(profile, w, 1)?;
            let cores = if profile.kind == UnitKind::Cpu {
                profile
                    .cores_per_chip
                    .as_ref()
                    .map_or(1, |c| c.value as u32)
            } else {
                1
            };
            let time_at_busy_s = if profile.kind == UnitKind::Cpu {
                (1..=cores)
                    .map(|k| roof.batch_time(1.0, f, w, a, k as f64))
                    .collect()
            } else {
                vec![]
            };
            let batch_time_s = if profile.kind == UnitKind::Cpu {
                vec![time_at_busy_s[0]]
            } else {
                (1..=batching.max_batch)
                    .map(|b| {
                        let padded = padded_batch(b, &batching.compiled_batch_sizes) as f64;
                        roof.batch_time(padded, f, w, a, 1.0)
                    })
                    .collect()
            };
            Ok(ServicePlan::Classic(ClassicPlan {
                kind: profile.kind,
                slots: profile.slots(),
                cores_per_chip: cores,
                roofline: roof,
                time_at_busy_s,
                batch_time_s,
                batching: if profile.kind == UnitKind::Cpu {
                    Batching {
                        max_batch: 1,
                        window_s: 0.0,
                        compiled_batch_sizes: vec![],
                        generative: batching.generative,
                    }
                } else {
                    batching.clone()
                },
                variability: Variability::lognormal(profile.service_cv.value),
            }))
        }
        Workload::Generative {
            model,
            prompt_tokens,
            output_tokens,
            ..
        } => generative_plan(
            profile,
            model,
            precision,
            batching,
            roof,
            (prompt_tokens.mean(), output_tokens.mean().max(1.0)),
        )
        .map(ServicePlan::Generative),
    }
}

/// The smallest compiled shape that holds `b` requests (or `b` itself when shapes are free).
pub fn padded_batch(b: u32, compiled: &[u32]) -> u32 {
    if compiled.is_empty() {
        return b;
    }
    compiled.iter().copied().find(|&s| s >= b).unwrap_or(b)
}

/// Weights must fit the memory of `devices` devices (or one CPU chip's DRAM).
fn check_fits(profile: &Profile, weight_bytes: f64, devices: u32) -> Result<(), InputError> {
    let usable = profile.memory_bytes_per_chip.value * devices as f64 * USABLE_MEMORY_FRACTION;
    if weight_bytes > usable {
        return Err(too_big(profile, weight_bytes));
    }
    Ok(())
}

fn too_big(profile: &Profile, needed: f64) -> InputError {
    let unit = profile.unit_memory_bytes() * USABLE_MEMORY_FRACTION;
    InputError::new(format!(
        "the model does not fit profile `{}`: it needs {:.1} GB of weights plus KV cache, the unit has {:.1} GB usable ({} x {:.0} GB x {USABLE_MEMORY_FRACTION})",
        profile.name,
        needed / 1e9,
        unit / 1e9,
        profile.chip_count(),
        profile.memory_bytes_per_chip.value / 1e9,
    ))
    .with_help("choose a lower precision (int8, fp8), a smaller model, or a unit with more memory")
}

/// Lay a generative model out on a unit. A CPU replica is one chip (all its cores on one model).
/// An accelerator replica is a power-of-two group of devices (tensor parallelism) that holds the
/// weights and at least 4,096 tokens of KV cache; among the group sizes that fit, the one giving
/// the unit the most steady-state throughput at the workload's mean request size is chosen —
/// larger groups buy KV-cache room (bigger batches) at the price of fewer replicas.
fn generative_plan(
    profile: &Profile,
    model: &GenerativeModel,
    precision: Precision,
    batching: &Batching,
    roof: Roofline,
    mean_tokens: (f64, f64),
) -> Result<GenerativePlan, InputError> {
    let w = model.parameters.value * precision.bytes();
    let kv = model.kv_bytes_per_token(precision);
    let chips = profile.chip_count();
    let mem = profile.memory_bytes_per_chip.value;
    let needed = w + 4096.0 * kv;
    let layout = |devices: u32, peak: f64, bandwidth: f64| {
        let kv_capacity = ((devices as f64 * mem * USABLE_MEMORY_FRACTION - w) / kv).floor() as u64;
        let flops_per_token = model.flops_per_token();
        let compute = peak * roof.e_compute;
        GenerativePlan {
            devices_per_replica: devices,
            replicas_per_unit: (chips / devices).max(1),
            kv_capacity_tokens: kv_capacity,
            max_batch: batching.max_batch.max(1),
            fixed_s: roof.t0_s,
            prefill_s_per_token: flops_per_token / compute,
            decode_compute_s_per_seq: flops_per_token / compute,
            weight_read_s: w / (bandwidth * roof.e_memory),
            kv_read_s_per_token: kv / (bandwidth * roof.e_memory),
            attention_s_per_pair: model.attention_flops_per_pair() / compute,
            scheduler: scheduler(profile, &batching.generative),
            variability: Variability::lognormal(profile.service_cv.value),
        }
    };
    if profile.kind == UnitKind::Cpu {
        if needed > mem * USABLE_MEMORY_FRACTION {
            return Err(too_big(profile, needed));
        }
        let cores = profile.cores_per_chip.as_ref().map_or(1.0, |c| c.value);
        return Ok(layout(1, roof.peak_flops * cores, roof.bandwidth));
    }
    let (prompt, output) = mean_tokens;
    std::iter::successors(Some(1u32), |d| Some(d * 2))
        .take_while(|&d| d <= chips)
        .filter(|&d| d as f64 * mem * USABLE_MEMORY_FRACTION >= needed)
        .map(|d| layout(d, roof.peak_flops * d as f64, roof.bandwidth * d as f64))
        .max_by(|a, b| {
            a.unit_throughput_rps(prompt, output)
                .total_cmp(&b.unit_throughput_rps(prompt, output))
                // On a tie the smaller group: more replicas, shorter queues.
                .then(b.devices_per_replica.cmp(&a.devices_per_replica))
        })
        .ok_or_else(|| too_big(profile, needed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roofline_matches_hand_computed_cases() {
        let r = Roofline {
            peak_flops: 100e12,
            bandwidth: 2e12,
            e_compute: 0.5,
            e_memory: 0.8,
            t0_s: 0.001,
        };
        // Compute-bound: 64 x 1e10 FLOP / 50e12 = 12.8 ms; memory (1e8 + 64 x 1e6) / 1.6e12 = 0.1025 ms.
        let t = r.batch_time(64.0, 1e10, 1e8, 1e6, 1.0);
        assert!((t - (0.001 + 0.0128)).abs() < 1e-12, "{t}");
        // Memory-bound: 1 x 1e6 FLOP / 50e12 = 2e-8 s; (1e9 + 0) / 1.6e12 = 0.625 ms.
        let t = r.batch_time(1.0, 1e6, 1e9, 0.0, 1.0);
        assert!((t - (0.001 + 0.000625)).abs() < 1e-12, "{t}");
        // Four sharers quarter the bandwidth: memory term x4.
        let t4 = r.batch_time(1.0, 1e6, 1e9, 0.0, 4.0);
        assert!((t4 - (0.001 + 0.0025)).abs() < 1e-12, "{t4}");
    }

    #[test]
    fn padding_never_picks_a_smaller_shape() {
        let shapes = [1, 2, 4, 8, 16, 32];
        for b in 1..=32 {
            let p = padded_batch(b, &shapes);
            assert!(p >= b && shapes.contains(&p), "{b} -> {p}");
            assert!(
                shapes.iter().all(|&s| s < b || s >= p),
                "{b} -> {p} skips a fitting shape"
            );
        }
        assert_eq!(padded_batch(5, &[]), 5);
    }

    #[test]
    fn generative_iteration_is_a_roofline() {
        let p = GenerativePlan {
            devices_per_replica: 1,
            replicas_per_unit: 1,
            kv_capacity_tokens: 100_000,
            max_batch: 64,
            fixed_s: 0.0,
            prefill_s_per_token: 1e-5,
            decode_compute_s_per_seq: 1e-5,
            weight_read_s: 0.01,
            kv_read_s_per_token: 1e-7,
            attention_s_per_pair: 0.0,
            scheduler: Scheduler::legacy(),
            variability: Variability::None,
        };
        // Decode of 8 sequences with 8,000 context tokens: memory 0.01 + 0.0008 beats compute 8e-5.
        assert!((p.iteration_s(0.0, 8.0, 8000.0, 8000.0) - 0.0108).abs() < 1e-12);
        // A 2,000-token prefill is compute-bound: 0.02 s.
        assert!((p.iteration_s(2000.0, 0.0, 0.0, 0.0) - 0.02).abs() < 1e-12);
    }

    fn llama_like(scheduler: Scheduler) -> GenerativePlan {
        GenerativePlan {
            devices_per_replica: 1,
            replicas_per_unit: 1,
            kv_capacity_tokens: 1_000_000,
            max_batch: 256,
            fixed_s: 0.0005,
            prefill_s_per_token: 2e-5,
            decode_compute_s_per_seq: 2e-5,
            weight_read_s: 0.008,
            kv_read_s_per_token: 2e-8,
            // 4 × 32 layers × 4096 hidden / 800 TFLOP/s.
            attention_s_per_pair: 4.0 * 32.0 * 4096.0 / 8e14,
            scheduler,
            variability: Variability::None,
        }
    }

    /// Attention grows with context: the same request mix at longer prompts sustains fewer
    /// requests per second than weights-only FLOPs alone would allow, and the gap widens.
    #[test]
    fn attention_flops_make_throughput_fall_with_context() {
        let with = llama_like(Scheduler::legacy());
        let without = GenerativePlan {
            attention_s_per_pair: 0.0,
            ..with.clone()
        };
        let mut last_ratio = 1.0;
        for prompt in [1_000.0, 4_000.0, 16_000.0] {
            let a = with.unit_throughput_rps(prompt, 200.0);
            let b = without.unit_throughput_rps(prompt, 200.0);
            let ratio = a / b;
            assert!(
                ratio < last_ratio,
                "prompt {prompt}: {ratio} vs {last_ratio}"
            );
            last_ratio = ratio;
        }
        assert!(last_ratio < 0.9, "{last_ratio}");
        // A decode step at 32k context costs more than one at 1k.
        assert!(with.lone_tpot_s(32_000.0) > with.lone_tpot_s(1_000.0));
    }

    /// A lone prompt under a token budget takes one iteration per chunk; the attention pairs of
    /// the chunks add up to the whole prompt's, so only the per-iteration costs differ.
    #[test]
    fn chunked_lone_ttft_counts_one_iteration_per_chunk() {
        let whole = llama_like(Scheduler::legacy());
        let chunked = llama_like(Scheduler {
            max_batched_tokens: Some(2048),
            kv: KvAllocation::Reserve,
        });
        // 5,000 tokens: chunks of 2048, 2048, 904, each compute-bound.
        let pairs = |c: f64, n: f64| n * c + n * (n + 1.0) / 2.0;
        let expect = [(0.0, 2048.0), (2048.0, 2048.0), (4096.0, 904.0)]
            .iter()
            .map(|&(c, n)| whole.iteration_s(n, 0.0, pairs(c, n), c + n))
            .sum::<f64>();
        assert!((chunked.lone_ttft_s(5000.0) - expect).abs() < 1e-12);
        assert!(chunked.lone_ttft_s(5000.0) > whole.lone_ttft_s(5000.0));
        assert_eq!(
            pairs(0.0, 2048.0) + pairs(2048.0, 2048.0) + pairs(4096.0, 904.0),
            pairs(0.0, 5000.0)
        );
    }
}
