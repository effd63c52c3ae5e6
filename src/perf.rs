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
//! `BW/k`, so a bandwidth-bound request slows as concurrency rises.
//!
//! **CPU instances (intra-op parallelism and batching).** A tier may pin `c` cores to each
//! request (`cores_per_request`, default 1), as OpenVINO / IPEX / ONNX Runtime instances and
//! Intel's MLPerf harness do: a chip of `C` cores then has `n = ⌊C/c⌋` instances, each with
//! `c / (1 + s(c − 1))`× one core's peak (Amdahl's law, `s` the profile's
//! `efficiency.serial_fraction`, 0 when absent; a generative replica splits its compute over all
//! `C` cores the same way), sharing the chip's bandwidth among the busy instances (the same
//! `BW/k` rule, `k` counting instances). A CPU tier with `max_batch > 1` batches on each
//! instance the way an accelerator does (the simulator's batching server, one device per
//! instance, `window_ms` to fill); its batch times take the bandwidth shared by all `n`
//! instances, the full-load case, so a batched CPU tier is never faster at low load than this
//! plan says. `c = 1` with `max_batch = 1` is exactly the one-request-per-core plan.
//!
//! **Cache-resident weights (CPUs).** The same weights serve every request, so a model whose
//! weights fit in the cache the executing cores reach is not re-read from DRAM per request: the
//! DRAM term drops `W` when `W ≤ c·L2 + LLC` — the private L2 of the instance's `c` cores
//! (`chip.l2_mb_per_core`) plus the chip's shared last-level cache (`chip.llc_mb`, the VM's share
//! on a cloud slice), which holds one copy for every instance since all run the same model.
//! The weight read from cache is taken to hide under compute (cache bandwidth is several times
//! DRAM's per core); activations still stream from DRAM. The rule is all-or-nothing: a model
//! swept cyclically through a cache smaller than itself misses on every line under LRU
//! replacement, so a model that does not fit pays the full DRAM read. A profile without cache
//! sizes counts them as 0 (today's plan). Accelerators read weights once per batch and are not
//! affected.
//!
//! An accelerator batches; a
//! compiled-shape accelerator (Inferentia) pads a batch up to the next compiled size, paying for
//! the padding. A generative model runs a compute-bound prefill, then memory-bound decode steps.
//!
//! These times are means. The profile's `efficiency.service_cv` (or the tier's `service_cv`)
//! spreads each around its mean with a log-normal multiplier of mean 1 — per request on a CPU
//! core, per batch on an accelerator, per iteration for a generative model — which the plan
//! carries as a [`Variability`] for the simulator; the throughput and the analytic bound, which
//! depend only on the means, do not change with it.

use serde::Serialize;

use crate::hardware::{
    Batching, DecodeAttention, GenerativeScheduling, Precision, Profile, UnitKind,
};
use crate::input::InputError;
use crate::sim::{IterationCost, IterationWork, KvAllocation, Scheduler, Variability};
use crate::workload::{GenerativeModel, OpClass, Workload};

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
    /// Execution slots per unit (CPU instances of `cores_per_request` cores, or devices).
    pub slots: u32,
    /// Slots sharing one chip's bandwidth (CPUs: instances per chip, which is cores per chip at
    /// one core per request); 1 for accelerators.
    pub cores_per_chip: u32,
    /// CPUs: cores running one request or batch together (1 for accelerators).
    pub cores_per_request: u32,
    /// CPUs: the weights fit the cache the executing cores reach, so the DRAM term omits them.
    pub weights_in_cache: bool,
    pub roofline: Roofline,
    /// CPUs: service time of one request when k slots of its chip are busy, k = 1..=slots per chip.
    pub time_at_busy_s: Vec<f64>,
    /// Accelerators and batching CPU tiers: time of a batch of b requests, b = 1..=max_batch,
    /// padded to compiled shapes.
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
            UnitKind::Cpu if !self.cpu_batches() => {
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

    /// A CPU tier that batches on its instances (`max_batch > 1`): simulated as a batching
    /// server with one device per instance.
    pub fn cpu_batches(&self) -> bool {
        self.kind == UnitKind::Cpu && self.batching.max_batch > 1
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
    /// The bytes of a token's all-reduces across a tensor-parallel replica \[s/token\] (0 on one
    /// device; their fixed latency is in `fixed_s`).
    pub collective_s_per_token: f64,
    /// Compiled-shape devices: the context every decoding sequence's attention reads
    /// \[tokens\]; 0: its own context.
    pub compiled_context_tokens: f64,
    /// The streaming server's host time per decoding sequence per iteration \[s\]
    /// (`efficiency.stream_overhead_us`; 0 without one).
    pub stream_s_per_seq: f64,
    /// One decode-attention block's time per cached token over every layer, where the tier
    /// runs the decode attention one block per sequence and head \[s/token\]
    /// ([`IterationCost::attention_block_s_per_token`]); 0 where it splits contexts.
    pub attention_block_s_per_token: f64,
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
            collective_s_per_token: self.collective_s_per_token,
            compiled_context_tokens: self.compiled_context_tokens,
            stream_s_per_seq: self.stream_s_per_seq,
            attention_block_s_per_token: self.attention_block_s_per_token,
        }
    }

    /// Time of one iteration with `prefill` prompt tokens, `decode` running sequences,
    /// `pairs` attention query–key pairs, `context` tokens of KV cache read and `longest` the
    /// longest decoding sequence's context.
    pub fn iteration_s(
        &self,
        prefill: f64,
        decode: f64,
        pairs: f64,
        context: f64,
        longest: f64,
    ) -> f64 {
        self.cost().iteration_s(&IterationWork {
            prefill_tokens: prefill,
            decode_seqs: decode,
            attention_pairs: pairs,
            context_tokens: context,
            longest_decode_context: longest,
        })
    }

    /// Prompt tokens one iteration may prefill for a lone request (the budget when prompts are
    /// chunked, else the whole prompt).
    fn chunk_tokens(&self) -> f64 {
        match self.scheduler.max_batched_tokens {
            Some(b) if self.scheduler.chunked_prefill => f64::from(b),
            _ => f64::INFINITY,
        }
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
            t += self.iteration_s(n, 0.0, pairs, done + n, 0.0);
            done += n;
        }
        t
    }

    /// One decode step of a sequence alone on a replica with `context` tokens \[s\].
    pub fn lone_tpot_s(&self, context: f64) -> f64 {
        self.iteration_s(0.0, 1.0, context, context, context)
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
        // prompt + output/2, the oldest's nearly prompt + output, and prefills batch/output new
        // prompts on average.
        let mean_context = prompt + output / 2.0;
        let new_prompts = batch / output;
        let step = self.iteration_s(
            new_prompts * prompt,
            batch,
            batch * mean_context + new_prompts * prompt * (prompt + 1.0) / 2.0,
            batch * mean_context,
            prompt + output,
        );
        self.replicas_per_unit as f64 * batch / (output * step)
    }
}

/// vLLM V1's default `max_num_batched_tokens` for an OpenAI-compatible server: 8,192 on a device
/// with at least 70 GiB of memory (H100, MI300X; vLLM excludes the A100), 2,048 otherwise
/// (`EngineArgs.get_batch_defaults`, vllm/engine/arg_utils.py, vLLM 0.10–0.11, 2025). Applied by
/// the memory of one device (one CPU chip's DRAM for a CPU).
pub fn default_max_batched_tokens(profile: &Profile) -> u32 {
    if vllm_large_device(profile) {
        8192
    } else {
        2048
    }
}

/// The per-iteration token budget of a scheduler that prefills prompts whole: TensorRT-LLM's
/// `max_num_tokens`, "set to 8192 by default starting from v0.11", which counts the context
/// requests' tokens together with the generation requests' scheduled in the same iteration
/// (docs/source/performance/perf-best-practices.md, "max_num_tokens",
/// <https://github.com/NVIDIA/TensorRT-LLM/blob/06255cb759835a9797b656aa5d1dc8f7e75fdca6/docs/source/performance/perf-best-practices.md>).
/// vLLM V0 without chunked prefill uses `max(max_model_len, 2048)`, the same 8,192 for a
/// model served at an 8k context.
pub const WHOLE_PROMPT_MAX_BATCHED_TOKENS: u32 = 8192;

/// The branch of vLLM's `EngineArgs.get_batch_defaults` that gives its larger defaults: a
/// device with at least 70 GiB of memory that is not an A100.
fn vllm_large_device(profile: &Profile) -> bool {
    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
    profile.memory_bytes_per_chip.value >= 70.0 * GIB && !profile.name.contains("a100")
}

/// vLLM V1's default `max_num_seqs` for an OpenAI-compatible server on a GPU: 1,024 on a device
/// with at least 70 GiB of memory (H100, H200, MI300X; vLLM excludes the A100), 256 otherwise
/// (`EngineArgs.get_batch_defaults`, vllm/engine/arg_utils.py, vLLM 0.10–0.11, 2025: the same
/// branch as [`default_max_batched_tokens`]). `None` off a GPU: Neuron, TPU, Gaudi and CPU
/// serving stacks have their own limits, which the profile's `[batching] max_batch` states.
pub fn default_max_num_seqs(profile: &Profile) -> Option<u32> {
    (profile.kind == UnitKind::Gpu).then(|| {
        if vllm_large_device(profile) {
            1024
        } else {
            256
        }
    })
}

/// The most sequences one replica of a generative tier runs at once: the tier's (or measured
/// run's) `max_batch`, else vLLM's default on a GPU, else the profile's `max_batch`.
pub fn max_num_seqs(profile: &Profile, batching: &Batching) -> u32 {
    batching
        .generative
        .max_num_seqs
        .or_else(|| default_max_num_seqs(profile))
        .unwrap_or(batching.max_batch)
        .max(1)
}

/// vLLM's default KV block size on GPUs \[tokens\] (engine argument `block_size`, default 16;
/// Kwon et al., "Efficient Memory Management for Large Language Model Serving with
/// PagedAttention", SOSP 2023, §4 uses blocks of 16 tokens).
pub const KV_BLOCK_TOKENS: u32 = 16;

/// The simulator's scheduler for a tier's generative scheduling choice on `profile`.
pub fn scheduler(profile: &Profile, g: &GenerativeScheduling) -> Scheduler {
    let default = if g.chunked_prefill {
        default_max_batched_tokens(profile)
    } else {
        WHOLE_PROMPT_MAX_BATCHED_TOKENS
    };
    Scheduler {
        max_batched_tokens: Some(g.max_batched_tokens.unwrap_or(default)),
        chunked_prefill: g.chunked_prefill,
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

/// How one unit of work's time spreads around the roofline's: the tier's measured times when it
/// gives them (`service_times`), else a log-normal of the profile's (or tier's) `service_cv`.
fn spread(profile: &Profile, batching: &Batching) -> Variability {
    match &batching.service_times {
        Some(times) => Variability::Empirical {
            relative: times.clone(),
        },
        None => Variability::lognormal(profile.service_cv.value),
    }
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
            // The mean item over the sequence-length distribution (the model's own figures when
            // it has none), and the compute efficiency of the model's operator class.
            let (f, a_elements) = model.mean_item_cost();
            let w = workload.weight_bytes(precision);
            let a = a_elements * precision.bytes();
            let mut roof = roof;
            if let Some(e) = class_efficiency(profile, model.op_class) {
                roof.e_compute = e;
            }
            roof.t0_s += layer_overhead_s(profile, model.layers.as_ref().map(|l| l.value), &model.name)?;
            check_fits(profile, w, 1)?;
            if batching.compiled_context_tokens.is_some() {
                return Err(InputError::new(format!(
                    "compiled_context_tokens has no effect on `{}`: a classic model has no KV cache",
                    model.name
                ))
                .with_help("compiled_context_tokens applies to generative models; remove it"));
            }
            if batching.kv_cache_precision.is_some() {
                return Err(InputError::new(format!(
                    "kv_cache_precision has no effect on `{}`: a classic model has no KV cache",
                    model.name
                ))
                .with_help("kv_cache_precision applies to generative models; remove it"));
            }
            if batching.tensor_parallel.is_some() {
                return Err(InputError::new(format!(
                    "tensor_parallel has no effect on `{}`: a classic model runs whole on each device or core",
                    model.name
                ))
                .with_help("tensor_parallel applies to generative models on accelerators; remove it"));
            }
            // Each request's own length sets its work when the model has a length distribution;
            // a batch formed in arrival order also pads its attention to its longest item.
            let batch_attention = model.batch_attention(batching.max_batch.max(1));
            let variability = match model.relative_work_by_length() {
                Some(relative_work) => Variability::BySize {
                    relative_work,
                    spread: Box::new(spread(profile, batching)),
                    batch_attention: batch_attention.clone(),
                },
                None => spread(profile, batching),
            };
            // The planned time of a batch of b holds that padding's mean over such batches.
            let padded_attention =
                |b: u32| 1.0 + batch_attention.as_ref().map_or(0.0, |ba| ba.planned(b as usize));
            if profile.kind == UnitKind::Cpu {
                let mut plan = cpu_classic_plan(profile, roof, batching, (f, w, a), variability)?;
                if plan.cpu_batches() {
                    for (i, t) in plan.batch_time_s.iter_mut().enumerate() {
                        *t *= padded_attention(i as u32 + 1);
                    }
                }
                return Ok(ServicePlan::Classic(plan));
            }
            let batch_time_s = (1..=batching.max_batch)
                .map(|b| {
                    let padded = padded_batch(b, &batching.compiled_batch_sizes) as f64;
                    roof.batch_time(padded, f, w, a, 1.0) * padded_attention(b)
                })
                .collect();
            Ok(ServicePlan::Classic(ClassicPlan {
                kind: profile.kind,
                slots: profile.slots(),
                cores_per_chip: 1,
                cores_per_request: 1,
                weights_in_cache: false,
                roofline: roof,
                time_at_busy_s: vec![],
                batch_time_s,
                batching: batching.clone(),
                variability,
            }))
        }
        Workload::Generative { .. } if batching.cores_per_request != 1 => Err(InputError::new(
            format!(
                "cores_per_request = {} has no effect on a generative model: a CPU replica runs on all cores of a chip",
                batching.cores_per_request
            ),
        )
        .with_help("remove cores_per_request from the tier")),
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
            // A transformer's prefill and decode are GEMMs: the profile's matmul efficiency
            // when it sets one (fitted on BERT, the same operator class), else `compute`. An
            // engine iteration's fixed time is the profile's iteration overhead when it sets
            // one, else its per-batch overhead.
            Roofline {
                e_compute: class_efficiency(profile, Some(OpClass::Matmul))
                    .unwrap_or(roof.e_compute),
                t0_s: profile.generative_overhead_s(),
                ..roof
            },
            (prompt_tokens.mean(), output_tokens.mean().max(1.0)),
        )
        .map(ServicePlan::Generative),
    }
}

/// The profile's compute efficiency for an operator class, when it sets one
/// (`efficiency.compute_conv`, `efficiency.compute_matmul`); `None`: `efficiency.compute`.
pub fn class_efficiency(profile: &Profile, class: Option<OpClass>) -> Option<f64> {
    match class? {
        OpClass::Conv => profile.efficiency_compute_conv.as_ref(),
        OpClass::Matmul => profile.efficiency_compute_matmul.as_ref(),
    }
    .map(|c| c.value)
}

/// Cache the executing cores of one CPU instance reach for the model's weights \[B\]: the
/// private L2 of its `cores_per_request` cores plus the chip's shared last-level cache.
pub fn instance_cache_bytes(profile: &Profile, cores_per_request: u32) -> f64 {
    let l2 = profile.l2_bytes_per_core.as_ref().map_or(0.0, |c| c.value);
    let llc = profile.llc_bytes_per_chip.as_ref().map_or(0.0, |c| c.value);
    cores_per_request as f64 * l2 + llc
}

/// The classic plan of a CPU tier: `n = ⌊cores / cores_per_request⌋` instances per chip, each
/// with [`Profile::parallel_cores`]`(cores_per_request)`× one core's peak, sharing the chip's
/// bandwidth; weights that fit the instance's cache are not read from DRAM (the rules in this
/// module's header).
fn cpu_classic_plan(
    profile: &Profile,
    core: Roofline,
    batching: &Batching,
    (f, w, a): (f64, f64, f64),
    variability: Variability,
) -> Result<ClassicPlan, InputError> {
    let cores = profile
        .cores_per_chip
        .as_ref()
        .map_or(1, |c| c.value as u32);
    let k = batching.cores_per_request.max(1);
    if k > cores {
        return Err(InputError::new(format!(
            "cores_per_request = {k} exceeds the {cores} cores of a `{}` chip",
            profile.name
        ))
        .with_help(format!("valid: a whole number from 1 to {cores}")));
    }
    let instances = cores / k;
    // k cores split each request's forward pass, at Amdahl's speed-up.
    let roof = Roofline {
        peak_flops: core.peak_flops * profile.parallel_cores(k),
        ..core
    };
    let weights_in_cache = w <= instance_cache_bytes(profile, k);
    let w_dram = if weights_in_cache { 0.0 } else { w };
    let time_at_busy_s: Vec<f64> = (1..=instances)
        .map(|j| roof.batch_time(1.0, f, w_dram, a, j as f64))
        .collect();
    let cpu_batching = Batching {
        max_batch: batching.max_batch.max(1),
        window_s: if batching.max_batch > 1 {
            batching.window_s
        } else {
            0.0
        },
        compiled_batch_sizes: vec![],
        cores_per_request: k,
        tensor_parallel: None,
        compiled_context_tokens: None,
        kv_cache_precision: None,
        service_times: None,
        generative: batching.generative,
    };
    let batch_time_s = if cpu_batching.max_batch > 1 {
        (1..=cpu_batching.max_batch)
            .map(|b| roof.batch_time(b as f64, f, w_dram, a, instances as f64))
            .collect()
    } else {
        vec![time_at_busy_s[0]]
    };
    Ok(ClassicPlan {
        kind: profile.kind,
        slots: profile.chip_count() * instances,
        cores_per_chip: instances,
        cores_per_request: k,
        weights_in_cache,
        roofline: roof,
        time_at_busy_s,
        batch_time_s,
        batching: cpu_batching,
        variability,
    })
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

/// Bytes per element of the activations a tensor-parallel all-reduce sums: fp16/bf16, which
/// TensorRT-LLM and vLLM keep for the residual stream even with fp8 or int8 weights.
pub const ALLREDUCE_BYTES_PER_ELEMENT: f64 = 2.0;

/// Fixed time of one forward pass's layers: `layers × efficiency.layer_overhead` \[s\]; 0 when
/// the profile sets no per-layer overhead. A model without a layer count on a profile that
/// charges per layer is an error naming the missing key, never a silent 0.
pub fn layer_overhead_s(
    profile: &Profile,
    layers: Option<f64>,
    model: &str,
) -> Result<f64, InputError> {
    let Some(per_layer) = &profile.layer_overhead_s else {
        return Ok(0.0);
    };
    match layers {
        Some(l) => Ok(l * per_layer.value),
        None if per_layer.value == 0.0 => Ok(0.0),
        None => Err(InputError::new(format!(
            "profile `{}` charges efficiency.layer_overhead_ms per layer, and `{model}` gives no layer count",
            profile.name
        ))
        .with_help("give the model's depth as workload.layers (ResNet-50: 50, BERT-base: 12)")),
    }
}

/// The all-reduces of a tensor-parallel replica of `devices` devices, per iteration: two per
/// layer (after attention and after the MLP; Shoeybi et al., "Megatron-LM", 2019, §3), each
/// `α + 2(d−1)/d · m / B` for a ring over links of `B` bytes/s one way ([`group_bandwidth`]) and
/// `m` bytes summed
/// (Patarasuk & Yuan, "Bandwidth optimal all-reduce algorithms", JPDC 69(2), 2009). Returns the
/// fixed latency per iteration \[s\] and the bytes' time per scheduled token \[s/token\], with
/// `m = hidden × 2 B` per token; both 0 on one device.
pub fn collective_cost(profile: &Profile, model: &GenerativeModel, devices: u32) -> (f64, f64) {
    if devices <= 1 {
        return (0.0, 0.0);
    }
    let per_iteration = 2.0 * model.layers.value;
    let alpha = profile
        .allreduce_latency_s
        .as_ref()
        .map_or(0.0, |c| c.value);
    let per_token = match &profile.interconnect_bandwidth {
        Some(b) => {
            let d = devices as f64;
            let bytes = model.hidden_size.value * ALLREDUCE_BYTES_PER_ELEMENT;
            per_iteration * 2.0 * (d - 1.0) / d * bytes / group_bandwidth(profile, b.value, devices)
        }
        None => 0.0,
    };
    (per_iteration * alpha, per_token)
}

/// The link bandwidth a device of a `devices`-device group sends into its collective \[B/s\]:
/// all of it through a switch; on a mesh, the share of its links that reach the group's other
/// members, `(d−1)/(N−1)` of the `N`-device unit's.
pub fn group_bandwidth(profile: &Profile, bandwidth: f64, devices: u32) -> f64 {
    let n = profile.chip_count();
    if !profile.interconnect_mesh || n <= 1 {
        return bandwidth;
    }
    bandwidth * f64::from(devices.saturating_sub(1)) / f64::from(n - 1)
}

/// Lay a generative model out on a unit. A CPU replica is one chip (all its cores on one model).
/// An accelerator replica is a group of devices (tensor parallelism) that holds the weights and
/// at least 4,096 tokens of KV cache: the tier's `tensor_parallel` when it sets one, else the
/// power-of-two group size, among those that fit, giving the unit the most steady-state
/// throughput at the workload's mean request size — larger groups buy KV-cache room (bigger
/// batches) and bandwidth at the price of fewer replicas and of their all-reduces
/// ([`collective_cost`]).
fn generative_plan(
    profile: &Profile,
    model: &GenerativeModel,
    precision: Precision,
    batching: &Batching,
    roof: Roofline,
    mean_tokens: (f64, f64),
) -> Result<GenerativePlan, InputError> {
    let w = model.parameters.value * precision.bytes();
    let kv = model.kv_bytes_per_token(crate::workload::kv_precision(
        precision,
        batching.kv_cache_precision,
    ));
    let chips = profile.chip_count();
    let mem = profile.memory_bytes_per_chip.value;
    let needed = w + 4096.0 * kv;
    let per_layer = layer_overhead_s(profile, Some(model.layers.value), &model.name)?;
    // The attention's KV read reaches its own share of the bandwidth where the profile gives
    // one (a runtime whose attention kernel streams the cache less well than a GEMM its weights).
    let e_attention = profile
        .efficiency_attention_memory
        .as_ref()
        .map_or(roof.e_memory, |c| c.value);
    if batching.compiled_context_tokens.is_some() && batching.compiled_batch_sizes.is_empty() {
        return Err(InputError::new(format!(
            "compiled_context_tokens has no effect on `{}`: it compiles no shapes",
            profile.name
        ))
        .with_help("compiled_context_tokens is for compiled-shape devices (a profile with batching.compiled_batch_sizes, e.g. Inferentia); remove it"));
    }
    // A decode attention of one block per sequence and head walks the longest context block by
    // block, at the profile's time per token per layer.
    let attention_block_s_per_token = match batching.generative.decode_attention {
        DecodeAttention::Split => 0.0,
        DecodeAttention::PerHead => match &profile.attention_block_s_per_token {
            Some(c) => c.value * model.layers.value,
            None => {
                return Err(InputError::new(format!(
                    "decode_attention = \"per-head\" on `{}`: the profile has no efficiency.attention_block_ns_per_token",
                    profile.name
                ))
                .with_help("give the profile the time one decode-attention block takes per cached token per layer (measured or fitted), or use decode_attention = \"split\" (the default)"));
            }
        },
    };
    let layout = |devices: u32, peak: f64, bandwidth: f64| {
        let kv_capacity = ((devices as f64 * mem * USABLE_MEMORY_FRACTION - w) / kv).floor() as u64;
        let flops_per_token = model.flops_per_token();
        let compute = peak * roof.e_compute;
        let (collective_fixed, collective_s_per_token) = collective_cost(profile, model, devices);
        GenerativePlan {
            devices_per_replica: devices,
            replicas_per_unit: (chips / devices).max(1),
            kv_capacity_tokens: kv_capacity,
            max_batch: max_num_seqs(profile, batching),
            fixed_s: roof.t0_s + per_layer + collective_fixed,
            prefill_s_per_token: flops_per_token / compute,
            decode_compute_s_per_seq: flops_per_token / compute,
            weight_read_s: w / (bandwidth * roof.e_memory),
            kv_read_s_per_token: kv / (bandwidth * e_attention),
            attention_s_per_pair: model.attention_flops_per_pair() / compute,
            collective_s_per_token,
            compiled_context_tokens: batching.compiled_context_tokens.map_or(0.0, f64::from),
            stream_s_per_seq: profile.stream_overhead_s.as_ref().map_or(0.0, |c| c.value),
            attention_block_s_per_token,
            scheduler: scheduler(profile, &batching.generative),
            variability: spread(profile, batching),
        }
    };
    if profile.kind == UnitKind::Cpu {
        if batching.tensor_parallel.is_some() {
            return Err(InputError::new(format!(
                "tensor_parallel has no effect on `{}`: a CPU replica runs on one chip",
                profile.name
            ))
            .with_help("tensor_parallel applies to accelerators; remove it"));
        }
        if needed > mem * USABLE_MEMORY_FRACTION {
            return Err(too_big(profile, needed));
        }
        // The replica splits every iteration across the chip's cores, at Amdahl's speed-up.
        let cores = profile
            .cores_per_chip
            .as_ref()
            .map_or(1, |c| c.value as u32);
        return Ok(layout(
            1,
            roof.peak_flops * profile.parallel_cores(cores),
            roof.bandwidth,
        ));
    }
    let fits = |d: u32| d as f64 * mem * USABLE_MEMORY_FRACTION >= needed;
    let at = |d: u32| layout(d, roof.peak_flops * d as f64, roof.bandwidth * d as f64);
    if let Some(d) = batching.tensor_parallel {
        if d == 0 || d > chips {
            return Err(InputError::new(format!(
                "tensor_parallel = {d} does not fit a `{}` unit of {chips} devices",
                profile.name
            ))
            .with_help(format!("valid: a whole number from 1 to {chips}")));
        }
        if !fits(d) {
            return Err(too_big(profile, needed).with_help(format!(
                "{d} device(s) of {:.0} GB do not hold the weights and 4,096 tokens of KV cache; raise tensor_parallel, or choose a lower precision",
                mem / 1e9
            )));
        }
        return Ok(at(d));
    }
    let (prompt, output) = mean_tokens;
    std::iter::successors(Some(1u32), |d| Some(d * 2))
        .take_while(|&d| d <= chips)
        .filter(|&d| fits(d))
        .map(at)
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

    fn cpu_profile(name: &str) -> Profile {
        crate::hardware::ProfileSearch::default()
            .load(name, std::path::Path::new("."))
            .unwrap()
    }

    fn classic(model: &str, precision: Precision) -> Workload {
        Workload::Classic {
            model: crate::workload::classic_preset(model).unwrap(),
            precision,
        }
    }

    fn classic_plan(p: &Profile, w: &Workload, b: &Batching) -> ClassicPlan {
        match plan(p, w, w.precision(), b).unwrap() {
            ServicePlan::Classic(c) => c,
            ServicePlan::Generative(_) => unreachable!(),
        }
    }

    /// A one-core-per-request CPU plan as it was before instances and cache sizes existed: every
    /// request on one core, weights read from DRAM, `BW/k` with k cores busy.
    fn one_core_plan_by_hand(p: &Profile, w: &Workload) -> Vec<f64> {
        let roof = slot_roofline(p, w.precision()).unwrap();
        let Workload::Classic { model, .. } = w else {
            unreachable!()
        };
        let cores = p.cores_per_chip.as_ref().unwrap().value as u32;
        (1..=cores)
            .map(|k| {
                roof.batch_time(
                    1.0,
                    model.flops_per_item.value,
                    w.weight_bytes(w.precision()),
                    model.activation_elements_per_item.value * w.precision().bytes(),
                    k as f64,
                )
            })
            .collect()
    }

    #[test]
    fn cores_per_request_one_without_caches_is_the_one_request_per_core_plan() {
        let mut p = cpu_profile("aws-c7i.8xlarge");
        p.l2_bytes_per_core = None;
        p.llc_bytes_per_chip = None;
        let w = classic("resnet-50", Precision::Int8);
        let c = classic_plan(&p, &w, &p.batching.clone());
        assert_eq!(c.time_at_busy_s, one_core_plan_by_hand(&p, &w));
        assert_eq!(
            (c.slots, c.cores_per_chip, c.cores_per_request),
            (16, 16, 1)
        );
        assert!(!c.weights_in_cache && !c.cpu_batches());
        assert_eq!(c.batching.max_batch, 1);
    }

    #[test]
    fn weights_that_fit_the_cache_skip_the_dram_read() {
        // all-minilm-l6-v2 (22.7 M parameters, 22.7 MB at int8) fits c7i's 2 MB L2 + 30 MB L3
        // share; a memory-bound case: with all 16 cores busy, a core's DRAM share is 4.8 GB/s.
        let p = cpu_profile("aws-c7i.8xlarge");
        let w = classic("all-minilm-l6-v2", Precision::Int8);
        let fits = classic_plan(&p, &w, &p.batching.clone());
        assert!(fits.weights_in_cache, "MiniLM int8 should fit 32 MB");
        let mut no_cache = p.clone();
        no_cache.llc_bytes_per_chip = None;
        let misses = classic_plan(&no_cache, &w, &no_cache.batching.clone());
        assert!(!misses.weights_in_cache);
        let Workload::Classic { model, .. } = &w else {
            unreachable!()
        };
        let wb = w.weight_bytes(Precision::Int8);
        let ab = model.activation_elements_per_item.value;
        let r = fits.roofline;
        let t0 = r.t0_s;
        let k = 16.0;
        // Memory-bound both ways at 16 busy cores: the DRAM term shrinks from (W + A) to A bytes,
        // so the time beyond t0 falls by the bytes ratio (the DRAM bandwidth is the same).
        let dram = |bytes: f64| bytes / (r.bandwidth / k * r.e_memory);
        let compute = model.flops_per_item.value / (r.peak_flops * r.e_compute);
        let slow = misses.time_at_busy_s[15] - t0;
        let fast = fits.time_at_busy_s[15] - t0;
        assert!((slow - dram(wb + ab).max(compute)).abs() < 1e-12 * slow.max(1.0));
        assert!((fast - dram(ab).max(compute)).abs() < 1e-12 * slow.max(1.0));
        assert!(fast < slow, "{fast} !< {slow}");
        if dram(ab) > compute {
            assert!(((slow / fast) - (wb + ab) / ab).abs() < 1e-9);
        } else {
            // Compute-bound once the weights stay in cache.
            assert!((fast - compute).abs() < 1e-15);
        }
        // A model larger than the cache (BERT-large, 340 MB) is read from DRAM as before.
        let big = classic("bert-large", Precision::Int8);
        assert!(!classic_plan(&p, &big, &p.batching.clone()).weights_in_cache);
    }

    #[test]
    fn k_cores_per_request_give_amdahls_share_of_k_times_the_compute() {
        // BERT-large at int8 on c7i: 4 cores per request, each request compute-bound alone.
        let shipped = cpu_profile("aws-c7i.8xlarge");
        let s = shipped.serial_fraction.as_ref().unwrap().value;
        assert!(s > 0.0 && s < 0.1, "{s}");
        let mut linear = shipped.clone();
        linear.serial_fraction = None;
        let w = classic("bert-large", Precision::Int8);
        let Workload::Classic { model, .. } = &w else {
            unreachable!()
        };
        for (p, four_cores) in [(&linear, 4.0), (&shipped, 4.0 / (1.0 + 3.0 * s))] {
            let one = classic_plan(p, &w, &p.batching.clone());
            let mut b = p.batching.clone();
            b.cores_per_request = 4;
            let four = classic_plan(p, &w, &b);
            assert_eq!((four.slots, four.cores_per_chip), (4, 4));
            assert_eq!(
                four.roofline.peak_flops,
                four_cores * one.roofline.peak_flops
            );
            let t0 = one.roofline.t0_s;
            let compute1 =
                model.flops_per_item.value / (one.roofline.peak_flops * one.roofline.e_compute);
            assert!(
                (one.time_at_busy_s[0] - t0 - compute1).abs() < 1e-12,
                "compute-bound alone"
            );
            let speedup = (one.time_at_busy_s[0] - t0) / (four.time_at_busy_s[0] - t0);
            assert!(
                (speedup - four_cores).abs() < 1e-9,
                "{speedup} vs {four_cores}"
            );
        }
        // One core per request splits nothing: the serial fraction leaves it alone.
        let one_shipped = classic_plan(&shipped, &w, &shipped.batching.clone());
        let one_linear = classic_plan(&linear, &w, &linear.batching.clone());
        assert_eq!(one_shipped.time_at_busy_s, one_linear.time_at_busy_s);
        // Too many cores per request is refused, naming the chip's core count.
        let mut b = shipped.batching.clone();
        b.cores_per_request = 17;
        let e = plan(&shipped, &w, Precision::Int8, &b).unwrap_err();
        assert!(e.message.contains("16 cores"), "{}", e.message);
    }

    /// A generative replica on a CPU splits every iteration over all the chip's cores: its
    /// compute (prefill, batched decode, attention) runs at Amdahl's share of them, while the
    /// weight and KV reads, bandwidth-bound, are unchanged.
    #[test]
    fn a_cpu_generative_replica_computes_at_amdahls_share_of_its_cores() {
        let shipped = cpu_profile("altra-max-m128-30-1u");
        let s = shipped.serial_fraction.as_ref().unwrap().value;
        let mut linear = shipped.clone();
        linear.serial_fraction = None;
        let w = Workload::Generative {
            model: crate::workload::generative_preset("llama-3-8b").unwrap(),
            precision: Precision::Int8,
            prompt_tokens: crate::workload::TokenCount::Fixed { tokens: 128 },
            output_tokens: crate::workload::TokenCount::Fixed { tokens: 256 },
            tokens_from_trace: false,
        };
        let gen_plan = |p: &Profile| match plan(p, &w, Precision::Int8, &p.batching).unwrap() {
            ServicePlan::Generative(g) => g,
            ServicePlan::Classic(_) => unreachable!(),
        };
        let (a, b) = (gen_plan(&linear), gen_plan(&shipped));
        let slower = 1.0 + s * 127.0;
        assert!(slower > 6.0, "128 cores at s = {s}: {slower}");
        for (x, y) in [
            (a.prefill_s_per_token, b.prefill_s_per_token),
            (a.decode_compute_s_per_seq, b.decode_compute_s_per_seq),
            (a.attention_s_per_pair, b.attention_s_per_pair),
        ] {
            assert!((y / x - slower).abs() < 1e-9, "{y} / {x}");
        }
        assert_eq!(a.weight_read_s, b.weight_read_s);
        assert_eq!(a.kv_read_s_per_token, b.kv_read_s_per_token);
    }

    #[test]
    fn a_batching_cpu_tier_runs_batches_on_its_instances() {
        let p = cpu_profile("aws-c7i.8xlarge");
        let w = classic("bert-large", Precision::Int8);
        let mut b = p.batching.clone();
        b.cores_per_request = 8;
        b.max_batch = 4;
        let c = classic_plan(&p, &w, &b);
        assert!(c.cpu_batches());
        assert_eq!((c.slots, c.batch_time_s.len()), (2, 4));
        // Batch times use the bandwidth shared by both instances; throughput is slots x b / t(b).
        let t4 = c.batch_time_s[3];
        assert!((c.unit_throughput_rps() - 2.0 * 4.0 / t4).abs() < 1e-9);
        assert!(c.batch_time_s.windows(2).all(|x| x[1] >= x[0]));
    }

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
            collective_s_per_token: 0.0,
            compiled_context_tokens: 0.0,
            stream_s_per_seq: 0.0,
            attention_block_s_per_token: 0.0,
            scheduler: Scheduler::legacy(),
            variability: Variability::None,
        };
        // Decode of 8 sequences with 8,000 context tokens: memory 0.01 + 0.0008 beats compute 8e-5.
        assert!((p.iteration_s(0.0, 8.0, 8000.0, 8000.0, 1000.0) - 0.0108).abs() < 1e-12);
        // A 2,000-token prefill is compute-bound: 0.02 s.
        assert!((p.iteration_s(2000.0, 0.0, 0.0, 0.0, 0.0) - 0.02).abs() < 1e-12);
        // The same prefill with those 8 decoding alongside: the GEMMs are compute-bound
        // (0.02 + 8e-5 beats the 0.01 weight read) and the attention's KV read (0.0008) runs
        // after them, not hidden under them: 0.02088, where one roofline over the whole
        // iteration would say 0.02008.
        assert!((p.iteration_s(2000.0, 8.0, 8000.0, 8000.0, 1000.0) - 0.02088).abs() < 1e-12);
        // Decode attention one block per sequence and head, 1e-6 s per cached token over the
        // layers: the longest context's block (7,000 tokens: 0.007 s) outlasts the KV read of
        // all 8,000 tokens (0.0008 s), so it is the attention's time; with the longest at 1,000
        // tokens the block (0.001 s) still does; at 500 (0.0005 s) the KV read is back.
        let blocks = GenerativePlan {
            attention_block_s_per_token: 1e-6,
            ..p.clone()
        };
        let step = |longest| blocks.iteration_s(0.0, 8.0, 8000.0, 8000.0, longest);
        assert!((step(7000.0) - (0.01 + 0.007)).abs() < 1e-12);
        assert!((step(1000.0) - (0.01 + 0.001)).abs() < 1e-12);
        assert!((step(500.0) - 0.0108).abs() < 1e-12);
        // Without blocks (split contexts) the longest context is not read.
        assert!((p.iteration_s(0.0, 8.0, 8000.0, 8000.0, 7000.0) - 0.0108).abs() < 1e-12);
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
            collective_s_per_token: 0.0,
            compiled_context_tokens: 0.0,
            stream_s_per_seq: 0.0,
            attention_block_s_per_token: 0.0,
            scheduler,
            variability: Variability::None,
        }
    }

    /// Attention grows with context: the same request mix at longer prompts sustains fewer
    /// requests per second than weights-only FLOPs alone would allow, and the gap widens. At
    /// short contexts the attention's arithmetic hides under its own KV read (one kernel class,
    /// one roofline); at long prompts it shows.
    #[test]
    fn attention_flops_make_throughput_fall_with_context() {
        let with = llama_like(Scheduler::legacy());
        let without = GenerativePlan {
            attention_s_per_pair: 0.0,
            ..with.clone()
        };
        let ratios: Vec<f64> = [1_000.0, 4_000.0, 16_000.0]
            .iter()
            .map(|&prompt| {
                with.unit_throughput_rps(prompt, 200.0) / without.unit_throughput_rps(prompt, 200.0)
            })
            .collect();
        // Hidden at 1k and 4k (the steady batch's KV read is the larger), 5 % of the
        // throughput at 16k.
        assert_eq!(ratios[0], 1.0, "{ratios:?}");
        assert!(ratios[1] <= ratios[0], "{ratios:?}");
        assert!(ratios[2] < ratios[1], "{ratios:?}");
        assert!(ratios[2] < 0.95, "{ratios:?}");
        // A decode step at 32k context costs more than one at 1k.
        assert!(with.lone_tpot_s(32_000.0) > with.lone_tpot_s(1_000.0));
    }

    /// Every generative scheduler has a budget: vLLM's device default with chunked prefill
    /// (8,192 on an H100, 2,048 on an L4), TensorRT-LLM's 8,192 for whole prompts on any device,
    /// and the tier's own when it sets one, chunked or not.
    #[test]
    fn the_scheduler_budget_defaults_by_how_prompts_meet_it() {
        let h100 = cpu_profile("hgx-h100-8x");
        let l4 = cpu_profile("aws-g6.xlarge");
        let chunked = GenerativeScheduling::default();
        assert!(chunked.chunked_prefill);
        let whole = GenerativeScheduling {
            chunked_prefill: false,
            ..chunked
        };
        let budget = |p: &Profile, g: &GenerativeScheduling| {
            let s = scheduler(p, g);
            (s.max_batched_tokens, s.chunked_prefill)
        };
        assert_eq!(budget(&h100, &chunked), (Some(8192), true));
        assert_eq!(budget(&l4, &chunked), (Some(2048), true));
        assert_eq!(budget(&l4, &whole), (Some(8192), false));
        let own = GenerativeScheduling {
            max_batched_tokens: Some(512),
            ..whole
        };
        assert_eq!(budget(&h100, &own), (Some(512), false));
    }

    /// A lone prompt under a token budget takes one iteration per chunk; the attention pairs of
    /// the chunks add up to the whole prompt's, so only the per-iteration costs differ.
    #[test]
    fn chunked_lone_ttft_counts_one_iteration_per_chunk() {
        let whole = llama_like(Scheduler::legacy());
        let chunked = llama_like(Scheduler {
            max_batched_tokens: Some(2048),
            chunked_prefill: true,
            kv: KvAllocation::Reserve,
        });
        // The same budget with whole prompts: one iteration, as with no budget.
        let whole_budget = llama_like(Scheduler {
            chunked_prefill: false,
            ..chunked.scheduler
        });
        assert_eq!(whole_budget.lone_ttft_s(5000.0), whole.lone_ttft_s(5000.0));
        // 5,000 tokens: chunks of 2048, 2048, 904, each compute-bound.
        let pairs = |c: f64, n: f64| n * c + n * (n + 1.0) / 2.0;
        let expect = [(0.0, 2048.0), (2048.0, 2048.0), (4096.0, 904.0)]
            .iter()
            .map(|&(c, n)| whole.iteration_s(n, 0.0, pairs(c, n), c + n, 0.0))
            .sum::<f64>();
        assert!((chunked.lone_ttft_s(5000.0) - expect).abs() < 1e-12);
        assert!(chunked.lone_ttft_s(5000.0) > whole.lone_ttft_s(5000.0));
        assert_eq!(
            pairs(0.0, 2048.0) + pairs(2048.0, 2048.0) + pairs(4096.0, 904.0),
            pairs(0.0, 5000.0)
        );
    }
}
