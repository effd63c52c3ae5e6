//! The discrete-event simulator: requests through a fleet of units behind a dispatcher.
//!
//! Stage of the pipeline (DESIGN.md): `traffic` gives arrivals, `perf` turns workload × hardware
//! into a [`ServerModel`] with plain numbers, and this module plays the requests through the fleet
//! and returns latency, utilization and queue statistics as a [`SimReport`]. `capacity` calls it
//! once per candidate fleet size.
//!
//! # Using it
//!
//! ```
//! use tco_sim::sim::{self, Dispatch, FleetSpec, RunSpec, ServerModel, ServiceDist};
//!
//! // M/M/2: two single-slot units behind one FIFO queue, 80 % busy.
//! let fleet = FleetSpec {
//!     units: 2,
//!     server: ServerModel::Slots { slots: 1, service: ServiceDist::Exponential { mean_s: 0.010 } },
//!     dispatch: Dispatch::SharedQueue,
//!     queue_cap: None,
//!     timeout_s: None,
//! };
//! let run = RunSpec { warmup_s: 1.0, replications: 2, seed: 7, quantiles: vec![] };
//! let report = sim::simulate(&fleet, &run, |rep| {
//!     sim::PoissonArrivals::new(7, rep, 160.0, 20_000)
//! })?;
//! assert!(!report.unstable);
//! assert!(report.little.relative_error < 0.05);
//! # Ok::<(), tco_sim::sim::SimError>(())
//! ```
//!
//! # How it works
//!
//! * Events are ordered by (integer nanosecond time, insertion sequence); ties fire first-in,
//!   first-out. Arrivals are read lazily from the caller's iterator, one at a time, so memory does
//!   not grow with the number of requests.
//! * The fleet is a set of *stations*, each a FIFO queue with a pool of servers: one station over
//!   the whole fleet for [`Dispatch::SharedQueue`], otherwise one station per unit, chosen at
//!   arrival by the dispatcher. The server model decides what a server is (a slot, a core, a
//!   device, a replica) and how long work takes. Join-shortest-queue compares every unit at each
//!   arrival (O(units)); the other dispatchers are O(1).
//! * Slots behind a shared queue (the FIFO M/G/c queue) are played by a recursion over requests
//!   instead of events, with identical results and about 1.5× fewer instructions per request
//!   ([`simulate_with`] and [`Engine`] choose explicitly).
//! * Replications run in parallel with rayon, each with its own random streams
//!   ([`crate::rng::stream`]); results are merged in replication order, so the report is the same
//!   bit for bit at any thread count.
//! * An overloaded fleet never hangs or exhausts memory: when more than [`QUEUE_GUARD`] requests
//!   wait at once (or [`IN_SYSTEM_GUARD`] are inside) the replication stops and the report is
//!   flagged [`SimReport::unstable`].

mod arrivals;
mod batching;
mod continuous;
mod core;
mod cutoff;
mod engine;
mod event;
mod fast;
mod prefix;
mod service;
mod shared_bandwidth;
mod slots;
mod stats;
mod validate;

use serde::{Deserialize, Serialize};

use crate::traffic::Request;
/// A batch's padded attention, a workload fact the batching model charges.
pub use crate::workload::BatchAttention;

pub use arrivals::{ClosedLoop, DeterministicArrivals, PoissonArrivals, ThinkTime};
pub use cutoff::Cutoff;
pub use prefix::{PrefixCacheStats, PrefixCaching};
pub use stats::{
    CdfPoint, Counts, Estimate, LatencyStats, LittleCheck, LlmStats, QueueStats, SimReport,
    UnitStats,
};

/// Above this many requests waiting at once (over the whole fleet) a replication is stopped and
/// reported unstable. 2^20 requests of 16 bytes is 16 MiB of queue: far beyond any queue that
/// meets a latency contract, and small enough that an overloaded fleet cannot exhaust memory.
pub const QUEUE_GUARD: usize = 1 << 20;

/// Above this many requests in the system at once (waiting or in service) a replication is
/// likewise stopped: continuous batching can hold many sequences in service without a queue, and
/// this bounds their memory too. 4·2^20 is three times the cores of a 10 000-server fleet of
/// 128-core CPUs.
pub const IN_SYSTEM_GUARD: usize = 4 << 20;

/// Largest `max_batch` accepted: 65 536 sequences or items, beyond any serving stack's batch
/// (vLLM's default `max_num_seqs` is 256) and small enough that one batch fits in memory.
pub const MAX_BATCH: u32 = 1 << 16;

/// Longest duration any time parameter may take \[s\]. Keeps every time in integer nanoseconds far
/// from `u64` overflow (10^6 s is 11.6 days; 2^64 ns is 584 years).
pub const MAX_DURATION_S: f64 = 1.0e6;

/// A fleet: `units` identical units of one server model behind a dispatcher.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FleetSpec {
    /// Number of units (servers, instances) in the fleet. At least 1.
    pub units: u32,
    /// What one unit is and how long work takes on it.
    pub server: ServerModel,
    /// How arriving requests are assigned to units.
    pub dispatch: Dispatch,
    /// Most requests that may wait in one queue (the shared queue, or each unit's queue); a
    /// request arriving to a full queue is rejected and counted. `None`: unbounded. `Some(0)`
    /// makes a loss system (a request that cannot start at once is rejected).
    pub queue_cap: Option<u32>,
    /// A request still waiting (not yet in service) this long after it arrived is dropped and
    /// counted \[s\]. `None`: requests wait forever.
    pub timeout_s: Option<f64>,
}

/// How a run is played: warm-up, replications and the seed of every random stream.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSpec {
    /// Requests arriving before this time are simulated but not counted \[s\].
    pub warmup_s: f64,
    /// Independent replications (each with its own random streams). At least 1; at least 2 give
    /// confidence intervals.
    pub replications: u32,
    /// Seed of every random stream of the run.
    pub seed: u64,
    /// Quantiles in (0, 1) to report besides p50–p99.9 (e.g. 0.995 for an SLO on p99.5), in
    /// [`LatencyStats::extra`].
    pub quantiles: Vec<f64>,
}

/// What one unit is and how long work takes on it. `perf` builds this from workload × hardware;
/// the simulator only needs the plain numbers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum ServerModel {
    /// `slots` identical FIFO servers per unit, each serving one request at a time with a service
    /// time drawn from `service` (the classic M/G/c queue).
    Slots {
        /// Servers per unit.
        slots: u32,
        /// Service-time distribution of one request.
        service: ServiceDist,
    },
    /// A many-core CPU: each core serves one request, and the cores of a chip share memory
    /// bandwidth. With k cores of a chip busy, a request alone would take `time_at_busy_s[k-1]`
    /// seconds; it progresses at rate 1/t(k) of its work while k changes under it.
    SharedBandwidth {
        /// Chips (sockets) per unit.
        chips: u32,
        /// Cores per chip; one request per core.
        cores_per_chip: u32,
        /// Service time of one request when k cores of its chip are busy, for k = 1..=cores \[s\].
        /// Exactly `cores_per_chip` entries.
        time_at_busy_s: Vec<f64>,
        /// Per-request multiplier of the work (mean 1): a request of work m takes m·t(k).
        variability: Variability,
    },
    /// Accelerators with dynamic batching: a free device takes up to `max_batch` waiting requests;
    /// with fewer waiting it waits until the oldest has waited `window_s` (or the batch fills).
    Batching {
        /// Devices per unit, each running one batch at a time.
        devices: u32,
        /// Largest batch.
        max_batch: u32,
        /// Longest the oldest waiting request is held for a fuller batch \[s\]. 0: never wait.
        window_s: f64,
        /// Time to run a batch of b requests, for b = 1..=max_batch \[s\]; already padded to the
        /// compiled shapes by `perf`. Exactly `max_batch` entries.
        batch_time_s: Vec<f64>,
        /// Per-batch multiplier of the batch time (mean 1).
        variability: Variability,
    },
    /// Generative models served with iteration-level (continuous) batching, vLLM/Orca style.
    ///
    /// Each replica runs iterations back to back while it has work. What an iteration schedules
    /// is set by [`Scheduler`]: with [`Scheduler::legacy`] (no token budget, whole-context KV
    /// reservation) it admits waiting requests in FIFO order while `running < max_batch` and the
    /// KV cache has room for the request's full context (`input_tokens + output_tokens`), so a
    /// running sequence is never preempted; it prefills the newly admitted prompts whole and runs
    /// one decode step for every sequence already running. With a token budget
    /// ([`Scheduler::max_batched_tokens`]) decodes are scheduled first and prompt chunks fill the
    /// rest of the budget, so a long prompt spans iterations (or, without chunking, whole prompts
    /// fill it, so a burst of prompts spans iterations); with paged KV
    /// ([`KvAllocation::Paged`]) the cache grows block by block as tokens are computed and, when
    /// it is exhausted, the newest running sequence is preempted and recomputed later (vLLM V1's
    /// policy). A request's first token comes at the end of the iteration that finishes its
    /// prompt, then one token per iteration, and it completes with its last token. A request with
    /// `output_tokens == 0` is treated as generating one token. A request whose context exceeds
    /// the KV capacity can never run and is rejected at arrival.
    ContinuousBatching {
        /// Model replicas per unit (each one batch of sequences).
        replicas: u32,
        /// Most sequences running at once on a replica.
        max_batch: u32,
        /// KV-cache capacity of a replica \[tokens\].
        kv_capacity_tokens: u64,
        /// Time of one iteration.
        cost: IterationCost,
        /// Per-iteration multiplier of the iteration time (mean 1).
        variability: Variability,
        /// What one iteration may schedule and how the KV cache is allocated.
        scheduler: Scheduler,
        /// Prefix caching: each replica keeps computed prompt blocks and a prefill skips the
        /// leading blocks it still holds (`sim/prefix.rs`). `None`: every prompt is computed.
        prefix_cache: Option<PrefixCaching>,
    },
}

/// The iteration scheduler of a continuous-batching replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub struct Scheduler {
    /// Most tokens one iteration computes — one per decoding sequence plus the prompt tokens
    /// prefilled (vLLM's `max_num_batched_tokens`, TensorRT-LLM's `max_num_tokens`). `None`: no
    /// budget, every admitted prompt is prefilled whole in one iteration.
    pub max_batched_tokens: Option<u32>,
    /// How prompts meet the budget. `true`: chunked to fit it, so a long prompt spans
    /// iterations (vLLM's chunked prefill, TensorRT-LLM's chunked context). `false`: whole — a
    /// waiting prompt is admitted when all of it fits what the budget has left, or as the
    /// iteration's first prompt whatever its length, so a burst of prompts is spread over
    /// iterations (TensorRT-LLM's in-flight batching without chunked context, vLLM V0 without
    /// chunked prefill). Without a budget it has no effect.
    pub chunked_prefill: bool,
    /// How the KV cache is allocated.
    pub kv: KvAllocation,
}

impl Scheduler {
    /// No token budget and whole-context reservation: the scheduler before chunked prefill and
    /// paged KV were modelled (never preempts).
    pub const fn legacy() -> Self {
        Scheduler {
            max_batched_tokens: None,
            chunked_prefill: false,
            kv: KvAllocation::Reserve,
        }
    }
}

/// How a replica's KV cache is handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum KvAllocation {
    /// A request's whole context (`input_tokens + output_tokens`) is reserved at admission;
    /// nothing is ever preempted.
    #[default]
    Reserve,
    /// Blocks of `block_tokens` tokens are allocated as the sequence's tokens are computed
    /// (PagedAttention, Kwon et al., SOSP 2023). When a running sequence needs a block and none
    /// is free, the newest running sequence is preempted: its blocks are freed and it waits at
    /// the head of its replica's queue to be prefilled again (prompt plus the tokens it had
    /// generated: vLLM V1's recompute preemption).
    Paged {
        /// Tokens per KV block (vLLM's default `block_size` is 16).
        block_tokens: u32,
    },
}

/// Query–key pairs the attention of `n` new tokens computes when `cached` tokens of the same
/// sequence are already in the KV cache: token `i` (0-based position `cached + i`) attends to
/// itself and every token before it (causal mask), so the pairs are
/// `Σ_{p=cached}^{cached+n−1} (p + 1) = n·cached + n(n+1)/2` — quadratic in a prompt prefilled
/// at once, linear in context for a decode step (`n = 1`). Chunking a prompt does not change
/// the total.
#[inline]
pub fn attention_pairs(cached: u64, n: u64) -> u64 {
    n * cached + n * (n + 1) / 2
}

/// The work of one continuous-batching iteration, the input of [`IterationCost::iteration_s`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct IterationWork {
    /// Prompt tokens prefilled (including recomputed ones).
    pub prefill_tokens: f64,
    /// Sequences taking a decode step.
    pub decode_seqs: f64,
    /// Query–key pairs of the attention over every scheduled token ([`attention_pairs`]).
    pub attention_pairs: f64,
    /// KV-cache tokens the attention reads: every scheduled sequence's context after this
    /// iteration's tokens are written.
    pub context_tokens: f64,
    /// The longest context among the sequences taking a decode step (after this step's token is
    /// written) \[tokens\]; 0 when none decodes. Read only where the decode attention runs one
    /// block per sequence and head ([`IterationCost::attention_block_s_per_token`]).
    pub longest_decode_context: f64,
}

/// How the time of one unit of work (a request on a core, a batch, an iteration) varies around
/// the planned roofline time: a multiplier drawn per unit of work from stream
/// [`crate::rng::streams::SERVICE`], with mean 1, so the mean service time, the throughput and
/// the analytic bound are those of the roofline and only the spread is added.
///
/// [`Variability::None`] draws nothing, so a fleet without variability plays exactly as before
/// the multiplier existed.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Variability {
    /// Every unit of work takes exactly the planned time.
    #[default]
    None,
    /// Log-normal with mean 1 and coefficient of variation `cv` (std / mean), in 0..=10:
    /// σ² = ln(1 + cv²), μ = −σ²/2.
    LogNormal {
        /// Standard deviation over mean of the multiplier; 0 is the same as `None`.
        cv: f64,
    },
    /// One of `relative` drawn with equal probability, divided by their mean: measured
    /// latencies (any unit) of the same work, whose shape is kept and whose mean is the roofline's.
    Empirical {
        /// Measured times of one unit of work, any positive unit; at least one > 0.
        relative: Vec<f64>,
    },
    /// Work that depends on the request's size, times `spread`: a request whose `input_tokens`
    /// is t does `relative_work[t − 1]` (the last entry beyond the table, the first for t = 0)
    /// of the planned mean work. Built by `perf` for a classic sequence model from its length
    /// distribution (FLOPs of each length over the mean, so the mean over the distribution is
    /// 1). A core's request does its own work; a batch takes the mean over its requests (the
    /// batch's items share one launch), times one draw of the spread.
    BySize {
        /// Work of a request of 1, 2, … tokens relative to the mean request (all > 0).
        relative_work: Vec<f64>,
        /// The spread of the same work around its size's time: [`Variability::None`],
        /// [`Variability::LogNormal`] or [`Variability::Empirical`] (not another `BySize`).
        spread: Box<Variability>,
        /// A batch's padded attention beyond its items' own work, when its runtime pads the
        /// attention to the batch's longest item (`padding = "batch"`); `None`: none.
        #[serde(skip_serializing_if = "Option::is_none")]
        batch_attention: Option<BatchAttention>,
    },
}

impl Variability {
    /// A log-normal multiplier of this cv, or `None` for cv = 0 (so that CV 0 draws nothing).
    pub fn lognormal(cv: f64) -> Variability {
        if cv == 0.0 {
            Variability::None
        } else {
            Variability::LogNormal { cv }
        }
    }
}

/// Service-time distribution of one request on one slot.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum ServiceDist {
    /// Exponential with mean `mean_s` \[s\] (the M in M/M/c).
    Exponential {
        /// Mean \[s\].
        mean_s: f64,
    },
    /// Always `s` \[s\] (the D in M/D/1).
    Deterministic {
        /// Service time \[s\].
        s: f64,
    },
    /// Log-normal with mean `mean_s` \[s\] and coefficient of variation `cv` (std / mean).
    LogNormal {
        /// Mean \[s\].
        mean_s: f64,
        /// Standard deviation over mean; 0 is deterministic.
        cv: f64,
    },
    /// Measured service times, each drawn with equal probability \[s\].
    Empirical {
        /// The samples \[s\].
        samples_s: Vec<f64>,
    },
}

/// Time of one continuous-batching iteration: a roofline per kernel class, summed, because a
/// layer runs its GEMMs and its attention one after the other:
///
/// ```text
/// t_iter = fixed_s + max( P·prefill_s_per_token + D·decode_compute_s_per_seq, weight_read_s )
///                  + max( A·attention_s_per_pair, K·kv_read_s_per_token,
///                         C·attention_block_s_per_token )
///                  + (P + D)·collective_s_per_token + D·stream_s_per_seq
/// ```
///
/// with P the prompt tokens prefilled in this iteration, D the sequences taking a decode step, A
/// the query–key pairs of the attention ([`attention_pairs`]) and K the context tokens (prompt +
/// generated so far) of every sequence in the batch, whose KV cache the attention reads. The
/// GEMMs stream the weights; the attention kernels (FlashAttention, PagedAttention) stream the
/// KV cache. One phase's memory traffic does not hide under the other's arithmetic: at a large
/// decode batch the GEMMs are compute-bound and the KV read still costs its own time. On a
/// compiled-shape device each decoding sequence reads the compiled context's KV instead of its
/// own (`compiled_context_tokens`). Where the decode attention runs one block per sequence and
/// head without splitting a context across blocks, the block of the longest decoding context C
/// walks it alone, so the attention takes at least `C·attention_block_s_per_token` however few
/// the sequences (TensorRT-LLM ran its decode attention so by default until 0.13.0, whose
/// release notes say "Enabled `multi_block_mode` by default"). A tensor-parallel replica adds its all-reduces,
/// `(P + D)·collective_s_per_token` (their fixed latency is in `fixed_s`): serving engines run
/// them between a layer's GEMMs, not overlapped with them (Shoeybi et al., "Megatron-LM", 2019,
/// §3: two all-reduces per layer in the forward pass). A streaming server adds its host work for
/// each decoding sequence, `D·stream_s_per_seq` (detokenising and sending the token, scheduling
/// the sequence), serialized with the step as in vLLM's own profile of its server (vLLM v0.6.0,
/// <https://blog.vllm.ai/2024/09/05/perf-update.html>, 2024-09-05: the HTTP API server 33 % and
/// scheduling 29 % of the execution time of Llama 3 8B on one H100). Units: seconds. After
/// Williams, Waterman & Patterson, "Roofline", CACM 52(4), 2009, applied per operator as in
/// Yuan et al., "LLM Inference Unveiled: Survey and Roofline Model Insights", arXiv:2402.16363,
/// 2024; iteration-level scheduling after Yu et al., "Orca", OSDI 2022.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IterationCost {
    /// Per-iteration overhead (launch, scheduling) \[s\].
    pub fixed_s: f64,
    /// Compute time per prompt token prefilled \[s/token\].
    pub prefill_s_per_token: f64,
    /// Compute time of one decode step per sequence \[s\].
    pub decode_compute_s_per_seq: f64,
    /// Time to read all weights once \[s\].
    pub weight_read_s: f64,
    /// Time to read the KV cache of one context token \[s/token\].
    pub kv_read_s_per_token: f64,
    /// Compute time of the attention for one query–key pair (QKᵀ and the weighted sum of V over
    /// every layer) \[s\]; 0 counts weights-only FLOPs.
    pub attention_s_per_pair: f64,
    /// Tensor parallelism: the bytes of every all-reduce of one scheduled token (prompt token or
    /// decode step) across the replica's links \[s/token\]; 0 on one device.
    pub collective_s_per_token: f64,
    /// Compiled-shape devices (Neuron): the context length the attention was compiled for
    /// \[tokens\]. Every decoding sequence reads this much KV cache, whatever its own context:
    /// the KV read is `max(K, D × compiled_context_tokens)`. 0: each reads its own context.
    pub compiled_context_tokens: f64,
    /// A streaming server's host time per decoding sequence per iteration \[s\]; 0 where nothing
    /// streams (an in-process offline benchmark).
    pub stream_s_per_seq: f64,
    /// A decode attention that runs one thread block per sequence and head, each walking its
    /// sequence's whole cache alone (TensorRT-LLM before 0.13.0 without `multi_block_mode`): the
    /// time of one cached token through one block, summed over the layers \[s/token\]. The
    /// attention then takes at least `longest_decode_context` times this. 0 where the runtime
    /// splits a long context across blocks (multi-block mode, flash-decoding, PagedAttention
    /// V2).
    pub attention_block_s_per_token: f64,
}

impl IterationCost {
    /// Time of one iteration doing `w` \[s\]: the one formula the analytic plan
    /// ([`crate::perf::GenerativePlan`]) and the simulator both use.
    ///
    /// Always inlined: out of line, the work passed by reference is stored field by field and
    /// read back as pairs, which defeats store-to-load forwarding (perf put 19 % of a plan
    /// on the first two loads).
    #[inline(always)]
    pub fn iteration_s(&self, w: &IterationWork) -> f64 {
        let gemm = w.prefill_tokens * self.prefill_s_per_token
            + w.decode_seqs * self.decode_compute_s_per_seq;
        let attention = w.attention_pairs * self.attention_s_per_pair;
        let kv_tokens = if self.compiled_context_tokens > 0.0 {
            w.context_tokens
                .max(w.decode_seqs * self.compiled_context_tokens)
        } else {
            w.context_tokens
        };
        let kv = kv_tokens * self.kv_read_s_per_token;
        let blocks = w.longest_decode_context * self.attention_block_s_per_token;
        let collectives = (w.prefill_tokens + w.decode_seqs) * self.collective_s_per_token;
        self.fixed_s
            + gemm.max(self.weight_read_s)
            + attention.max(kv).max(blocks)
            + collectives
            + w.decode_seqs * self.stream_s_per_seq
    }
}

/// How an arriving request is assigned to a unit: the load balancer in front of a fleet.
///
/// The one dispatch type of the program: a scenario's `simulation.dispatch` deserializes into it
/// directly (`shared-queue`, `join-shortest-queue`, `round-robin`, `power-of-two`), the capacity
/// plan passes it on, and the engine keeps only its per-replication state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dispatch {
    /// One FIFO queue for the whole fleet; whichever unit frees first takes the oldest request.
    SharedQueue,
    /// The unit with the fewest requests in it (waiting + in service); ties to the lowest index.
    JoinShortestQueue,
    /// Units in turn, regardless of load.
    RoundRobin,
    /// Two distinct units at random (stream [`crate::rng::streams::DISPATCH`]); the one with fewer
    /// requests in it, ties to the first drawn (Mitzenmacher, "The power of two choices in
    /// randomized load balancing", IEEE TPDS 12(10), 2001).
    #[serde(rename = "power-of-two")]
    PowerOfTwoChoices,
}

impl Dispatch {
    /// How the policy reads in a sentence ("join-shortest-queue balancing"), as the capacity
    /// method of a simulated plan names it.
    pub fn description(self) -> &'static str {
        match self {
            Dispatch::SharedQueue => "one shared queue",
            Dispatch::JoinShortestQueue => "join-shortest-queue balancing",
            Dispatch::RoundRobin => "round-robin balancing",
            Dispatch::PowerOfTwoChoices => "power-of-two-choices balancing",
        }
    }
}

/// Which implementation plays a run. Both give the same latencies request for request (see
/// [`simulate_with`]); the choice only exists so the general engine can be tested and
/// benchmarked on the fleets the fast path would take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Engine {
    /// The fast FIFO recursion for slots behind a shared queue, the event engine otherwise.
    Auto,
    /// Always the event engine.
    General,
}

/// A fleet or run the simulator cannot play. Messages name the field, the bad value and what is
/// valid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// A count that must be at least 1 is zero.
    #[error("{field}: must be at least 1, got 0")]
    Zero {
        /// Dotted field name.
        field: &'static str,
    },
    /// A time or cost that is NaN, infinite, negative or too large.
    #[error("{field}: {value} is not valid; {valid}")]
    BadNumber {
        /// Dotted field name.
        field: String,
        /// The offending value.
        value: f64,
        /// What is valid.
        valid: &'static str,
    },
    /// A table whose length does not match the count it describes.
    #[error("{field}: has {len} entries, needs exactly {expected} ({why})")]
    TableLength {
        /// Dotted field name.
        field: &'static str,
        /// Entries given.
        len: usize,
        /// Entries needed.
        expected: usize,
        /// Which count fixes the length.
        why: &'static str,
    },
    /// The batching window is not shorter than the timeout, so every held request would time out.
    #[error(
        "timeout_s: {timeout_s} s must be longer than server.window_s ({window_s} s), or requests held for a batch time out"
    )]
    WindowNotBelowTimeout {
        /// The batching window \[s\].
        window_s: f64,
        /// The request timeout \[s\].
        timeout_s: f64,
    },
    /// A count above what the simulator accepts.
    #[error("{field}: {value} is more than the {max} allowed")]
    TooLarge {
        /// Dotted field name.
        field: &'static str,
        /// The value given.
        value: u64,
        /// The limit.
        max: u64,
    },
    /// The fleet has more servers than the simulator holds state for.
    #[error("fleet: {servers} servers in total is too many; at most {max}")]
    FleetTooLarge {
        /// Servers (slots, cores, devices, replicas) over all units.
        servers: u64,
        /// The limit.
        max: u64,
    },
    /// A size-dependent variability whose spread depends on size again.
    #[error(
        "server.variability.spread: the request's size already sets its work; the spread around it must be none, log-normal or empirical"
    )]
    NestedSizeSpread,
    /// The arrivals iterator went back in time.
    #[error(
        "arrivals: request at {arrival_ns} ns came after one at {previous_ns} ns; arrivals must be sorted by time"
    )]
    ArrivalsOutOfOrder {
        /// The out-of-order arrival \[ns\].
        arrival_ns: u64,
        /// The arrival before it \[ns\].
        previous_ns: u64,
    },
}

/// What happened to one request, from [`simulate_traced`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Outcome {
    /// Served to completion.
    Served,
    /// Rejected at arrival because its queue was full.
    RejectedQueueFull,
    /// Rejected at arrival because its context can never fit the KV cache.
    RejectedTooLarge,
    /// Dropped from the queue after waiting `timeout_s`.
    TimedOut,
}

/// The life of one request, from [`simulate_traced`]. Times in ns since the start of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// The request as it arrived.
    pub request: Request,
    /// What happened to it.
    pub outcome: Outcome,
    /// Unit that served it (`None` unless served).
    pub unit: Option<u32>,
    /// When service (or admission to a batch) began \[ns\]; equals `end_ns` unless served.
    pub start_ns: u64,
    /// When it left the system \[ns\].
    pub end_ns: u64,
    /// When its first token was emitted (continuous batching only) \[ns\].
    pub first_token_ns: Option<u64>,
}

/// Simulate `fleet` under the arrivals that `arrivals(replication)` yields, `run.replications`
/// times in parallel, and merge the statistics.
///
/// `arrivals` is called once per replication with the replication index and must yield requests
/// sorted by `arrival_ns`; seed its randomness from [`crate::rng::stream`] with that index so
/// replications are independent and reproducible. A replication ends when its iterator is
/// exhausted and the requests in flight have drained, or early when more than [`QUEUE_GUARD`]
/// requests wait at once (the report is then flagged unstable).
///
/// # Errors
/// [`SimError`] when the fleet or run is not valid, or when arrivals are out of order.
pub fn simulate<F, I>(fleet: &FleetSpec, run: &RunSpec, arrivals: F) -> Result<SimReport, SimError>
where
    F: Fn(u64) -> I + Sync,
    I: Iterator<Item = Request>,
{
    simulate_with(fleet, run, Engine::Auto, arrivals)
}

/// [`simulate`] by the event engine, stopped early when the merged result is certain to miss a
/// bound of `cutoff`: its quantile of end-to-end latency, TTFT or TPOT above the bound however
/// the rest of the run would go. `None` then (the run failed; its partial report is not
/// returned), else exactly [`simulate`]'s report. The arrivals of every replication are
/// generated twice: once to count them (an upper bound on what the run records, which the
/// certainty rests on), once to play them. A fleet [`simulate`] plays by the fast recursion
/// (slots behind a shared queue, already quick) is played whole, as [`simulate`] plays it.
///
/// # Errors
/// As [`simulate`]; a run stopped early has not read all its arrivals, so it reports no
/// [`SimError::ArrivalsOutOfOrder`] after the point where it stopped.
pub fn simulate_unless<F, I>(
    fleet: &FleetSpec,
    run: &RunSpec,
    cutoff: &Cutoff,
    arrivals: F,
) -> Result<Option<SimReport>, SimError>
where
    F: Fn(u64) -> I + Sync,
    I: Iterator<Item = Request>,
{
    validate::fleet(fleet)?;
    validate::run(run)?;
    engine::simulate_unless(fleet, run, cutoff, arrivals)
}

/// [`simulate`] with a choice of implementation.
///
/// [`Engine::Auto`] plays [`ServerModel::Slots`] behind [`Dispatch::SharedQueue`] (the FIFO
/// M/G/c queue) with a recursion over requests, about twice as fast as the event engine, and
/// every other fleet with the event engine. The recursion draws the same random numbers in the
/// same order, so latency, queueing and service statistics are identical; the only possible
/// difference is when an arrival and a completion fall on the same nanosecond while a queue cap
/// or timeout is in force (the engine orders them by insertion, the recursion counts the server
/// as free). A replication that trips the queue guard is replayed by the engine, so unstable
/// reports are the engine's.
///
/// # Errors
/// As [`simulate`].
pub fn simulate_with<F, I>(
    fleet: &FleetSpec,
    run: &RunSpec,
    engine: Engine,
    arrivals: F,
) -> Result<SimReport, SimError>
where
    F: Fn(u64) -> I + Sync,
    I: Iterator<Item = Request>,
{
    validate::fleet(fleet)?;
    validate::run(run)?;
    engine::simulate(fleet, run, engine, arrivals)
}

/// Simulate `fleet` under closed-loop load: `closed.clients` requests in flight, each client
/// sending its next request a think time after its last one left ([`ClosedLoop`]).
/// `requests(replication)` gives the requests' token counts in the order they are sent (their
/// arrival times are ignored); a classic fleet can pass `std::iter::repeat(Request::default())`.
/// Think times come from stream [`crate::rng::streams::THINK`], so the report is the same at
/// any thread count. Always played by the event engine.
///
/// # Errors
/// As [`simulate`], and [`SimError::Zero`] / [`SimError::BadNumber`] for a closed loop without
/// clients or with a bad think time or duration.
pub fn simulate_closed<F, I>(
    fleet: &FleetSpec,
    run: &RunSpec,
    closed: &ClosedLoop,
    requests: F,
) -> Result<SimReport, SimError>
where
    F: Fn(u64) -> I + Sync,
    I: Iterator<Item = Request>,
{
    validate::fleet(fleet)?;
    validate::run(run)?;
    validate::closed(closed)?;
    engine::simulate_closed(fleet, run, closed, requests)
}

/// [`simulate`] that also returns, per replication in index order, the life of every measured
/// request it served (arrived after the warm-up, completed), in the order they left: the rows
/// whose latencies the report's statistics summarise (`simulate --requests-csv`). Always played
/// by the event engine; memory grows with the number of requests.
///
/// # Errors
/// As [`simulate`].
pub fn simulate_recorded<F, I>(
    fleet: &FleetSpec,
    run: &RunSpec,
    arrivals: F,
) -> Result<(SimReport, Vec<Vec<Completion>>), SimError>
where
    F: Fn(u64) -> I + Sync,
    I: Iterator<Item = Request>,
{
    validate::fleet(fleet)?;
    validate::run(run)?;
    engine::simulate_recorded(fleet, run, arrivals)
}

/// [`simulate_closed`] that also returns the measured requests, as [`simulate_recorded`].
///
/// # Errors
/// As [`simulate_closed`].
pub fn simulate_closed_recorded<F, I>(
    fleet: &FleetSpec,
    run: &RunSpec,
    closed: &ClosedLoop,
    requests: F,
) -> Result<(SimReport, Vec<Vec<Completion>>), SimError>
where
    F: Fn(u64) -> I + Sync,
    I: Iterator<Item = Request>,
{
    validate::fleet(fleet)?;
    validate::run(run)?;
    validate::closed(closed)?;
    engine::simulate_closed_recorded(fleet, run, closed, requests)
}

/// Check a fleet and a run as [`simulate`] would, without simulating: lets a caller report a
/// bad input before any work (the capacity plan checks every tier's server model up front).
///
/// # Errors
/// As [`simulate`], for the fleet and run alone.
pub fn check(fleet: &FleetSpec, run: &RunSpec) -> Result<(), SimError> {
    validate::fleet(fleet)?;
    validate::run(run)
}

/// Most units of `server` a fleet may have: the simulator holds state for at most 4,194,304
/// servers (slots, cores, devices or replicas) over the whole fleet.
pub fn max_units(server: &ServerModel) -> u32 {
    let per_unit = validate::servers_per_unit(server).max(1);
    (validate::MAX_SERVERS / per_unit).min(u64::from(u32::MAX)) as u32
}

/// Simulate one replication and return the life of every request, in the order they left the
/// system. For small runs and exact tests: memory grows with the number of requests.
///
/// # Errors
/// As [`simulate`].
pub fn simulate_traced<I>(
    fleet: &FleetSpec,
    seed: u64,
    arrivals: I,
) -> Result<Vec<Completion>, SimError>
where
    I: IntoIterator<Item = Request>,
{
    validate::fleet(fleet)?;
    engine::simulate_traced(fleet, seed, arrivals.into_iter())
}
