//! Hardware profiles: one purchasable or rentable *unit* (a server or a cloud instance) per file,
//! every number with its source and date.
//!
//! Profiles ship in `hardware-profiles/` and are embedded in the binary (see `build.rs`), so the
//! tool runs from any directory. A profile file of the same name in the scenario's
//! `profiles_dir`, or beside the scenario, overrides the embedded one; a scenario may also name a
//! profile file by path (`profile = "hardware-profiles/local.toml"`), which is how a profile
//! written by `tco-sim calibrate` is used.

pub mod egress;
pub mod file;
pub mod numbers;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::cite::{Cited, Sources};
use crate::input::{InputError, SourceFile, closest};
use file::{CalibrationFile, PROFILE_SCHEMA, ProfileFile};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_profiles.rs"));
}

/// The largest batch a profile or a tier may allow. Batch-time tables hold one entry per size,
/// and no serving runtime batches more than a few thousand requests.
pub const MAX_BATCH: u32 = 4096;
/// The longest batching window \[ms\]: typical windows are 1–10 ms, and a request held for ten
/// seconds waiting for company has already missed any latency contract worth planning for. It
/// also keeps every window well inside what the simulator accepts (it refuses
/// durations above 10⁶ s), so what validates also runs.
pub const MAX_WINDOW_MS: f64 = 10_000.0;
/// [`MAX_WINDOW_MS`] in words, for the help line of a range error.
pub const WINDOW_MS_TEXT: &str = "milliseconds from 0 to 10,000";

/// What kind of execution slots a unit has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnitKind {
    /// Many-core CPU: each core serves one request at a time; cores share memory bandwidth.
    Cpu,
    /// GPU: each device runs batches.
    Gpu,
    /// Inference ASIC (Inferentia, TPU…): each device runs batches, possibly of fixed shapes.
    Accelerator,
}

impl UnitKind {
    pub fn label(self) -> &'static str {
        match self {
            UnitKind::Cpu => "cpu",
            UnitKind::Gpu => "gpu",
            UnitKind::Accelerator => "accelerator",
        }
    }
}

/// Numeric precision of a workload; selects the peak and the bytes per parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    Fp32,
    /// 16-bit float: fp16 or bf16.
    #[serde(alias = "bf16")]
    Fp16,
    Int8,
    Fp8,
}

impl Precision {
    pub const ALL: [Precision; 4] = [
        Precision::Fp32,
        Precision::Fp16,
        Precision::Int8,
        Precision::Fp8,
    ];

    pub fn bytes(self) -> f64 {
        match self {
            Precision::Fp32 => 4.0,
            Precision::Fp16 => 2.0,
            Precision::Int8 | Precision::Fp8 => 1.0,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Fp16 => "fp16",
            Precision::Int8 => "int8",
            Precision::Fp8 => "fp8",
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// How a unit is paid for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeploymentOption {
    /// Bought, installed and run in a colocation facility.
    OnPrem,
    /// Rented by the hour, only while needed.
    OnDemand,
    /// Committed for one year, paid every hour whether used or not.
    #[serde(rename = "reserved-1y")]
    Reserved1y,
    /// Committed for three years.
    #[serde(rename = "reserved-3y")]
    Reserved3y,
    /// A 1-year reserved base plus on-demand burst, with the base chosen to minimise cost.
    #[serde(rename = "hybrid-1y")]
    Hybrid1y,
    /// A 3-year reserved base plus on-demand burst.
    #[serde(rename = "hybrid-3y")]
    Hybrid3y,
    /// Spot (AWS) or preemptible (OCI) capacity, rented by the hour while needed and taken back
    /// at the provider's notice: costed only when a tier lists it, and not taken as meeting the
    /// latency contract unless the tier says so (`spot_meets_slo`).
    Spot,
}

impl DeploymentOption {
    pub const ALL: [DeploymentOption; 7] = [
        DeploymentOption::OnPrem,
        DeploymentOption::OnDemand,
        DeploymentOption::Reserved1y,
        DeploymentOption::Reserved3y,
        DeploymentOption::Hybrid1y,
        DeploymentOption::Hybrid3y,
        DeploymentOption::Spot,
    ];

    pub fn label(self) -> &'static str {
        match self {
            DeploymentOption::OnPrem => "on-prem",
            DeploymentOption::OnDemand => "on-demand",
            DeploymentOption::Reserved1y => "reserved-1y",
            DeploymentOption::Reserved3y => "reserved-3y",
            DeploymentOption::Hybrid1y => "hybrid-1y",
            DeploymentOption::Hybrid3y => "hybrid-3y",
            DeploymentOption::Spot => "spot",
        }
    }

    pub fn is_cloud(self) -> bool {
        self != DeploymentOption::OnPrem
    }

    pub fn is_hybrid(self) -> bool {
        matches!(
            self,
            DeploymentOption::Hybrid1y | DeploymentOption::Hybrid3y
        )
    }

    /// Reservation term in years, for reserved and hybrid options.
    pub fn term_years(self) -> Option<u32> {
        match self {
            DeploymentOption::Reserved1y | DeploymentOption::Hybrid1y => Some(1),
            DeploymentOption::Reserved3y | DeploymentOption::Hybrid3y => Some(3),
            _ => None,
        }
    }
}

impl fmt::Display for DeploymentOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Dynamic-batching defaults of a unit (serving configuration; a tier may override).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Batching {
    pub max_batch: u32,
    /// How long a device waits for a batch to fill \[s\].
    pub window_s: f64,
    /// Compiled batch shapes, ascending; empty means any size up to `max_batch`.
    pub compiled_batch_sizes: Vec<u32>,
    /// CPUs: cores that run one request (or one batch) together with intra-op parallelism, the
    /// way OpenVINO / IPEX / ONNX Runtime instances are pinned; 1 (the default) is one request
    /// per core. A tier sets it (`cores_per_request`); profiles do not.
    pub cores_per_request: u32,
    /// Accelerators, generative models: devices per model replica (tensor parallelism), as
    /// vLLM's `--tensor-parallel-size`; `None`: the planner picks the group size that gives the
    /// unit the most throughput. A tier sets it (`tensor_parallel`); profiles do not.
    pub tensor_parallel: Option<u32>,
    /// Compiled-shape devices, generative models: the context length the attention was compiled
    /// for (Neuron's `n_positions`), which every decoding sequence reads whatever its own
    /// context; `None`: each reads its own. A tier sets it (`compiled_context_tokens`).
    pub compiled_context_tokens: Option<u32>,
    /// Generative models: the KV cache's element type (vLLM's `--kv-cache-dtype`, TensorRT-LLM's
    /// `kv_cache_dtype`); `None`: 16-bit, or fp32 with fp32 weights
    /// ([`crate::workload::kv_precision`]). A tier sets it (`kv_cache_precision`).
    pub kv_cache_precision: Option<Precision>,
    /// Measured times of one unit of work of this tier (a request on a core, a batch, an
    /// iteration), in any one unit: their shape, each over their mean, replaces the log-normal
    /// spread of [`Profile::service_cv`], while the roofline keeps the mean. A tier sets it
    /// (`service_times`); profiles do not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_times: Option<Vec<f64>>,
    /// How a generative model's iterations are scheduled (ignored by classic models).
    pub generative: GenerativeScheduling,
}

/// The iteration scheduler of a generative model's serving engine: vLLM V1's by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GenerativeScheduling {
    /// Chunked prefill under a per-iteration token budget: decodes first, then prompt chunks
    /// fill the rest of the budget. vLLM V1 always enables it ("Optimization and Tuning",
    /// <https://docs.vllm.ai/en/stable/configuration/optimization/>, read 2026-12-01). Off: every
    /// admitted prompt is prefilled whole in one iteration, and whole prompts fill the budget
    /// (TensorRT-LLM without chunked context; vLLM V0's default).
    pub chunked_prefill: bool,
    /// The per-iteration token budget \[tokens\]; `None`: vLLM's default for the device
    /// ([`crate::perf::default_max_batched_tokens`]) with chunked prefill, TensorRT-LLM's
    /// ([`crate::perf::WHOLE_PROMPT_MAX_BATCHED_TOKENS`]) without.
    pub max_batched_tokens: Option<u32>,
    /// KV cache allocated in 16-token blocks as tokens are computed, preempting the newest
    /// sequence when it runs out (vLLM); false: a request's whole context is reserved at
    /// admission and nothing is preempted.
    pub paged_kv: bool,
    /// The most sequences a replica runs at once (vLLM's `max_num_seqs`); `None`: vLLM's
    /// default for the device on a GPU ([`crate::perf::default_max_num_seqs`]), the profile's
    /// `[batching] max_batch` elsewhere. A tier's or a measured run's `max_batch` sets it.
    pub max_num_seqs: Option<u32>,
    /// How the engine's decode attention spreads a sequence's context over the device.
    pub decode_attention: DecodeAttention,
}

/// How a generative engine holds a sequence's KV cache: the values of a scenario tier's and an
/// accuracy row's `kv_allocation` (one vocabulary for both), setting
/// [`GenerativeScheduling::paged_kv`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KvAllocationChoice {
    /// Blocks allocated as tokens are computed; preemption when full (vLLM).
    Paged,
    /// The whole context reserved at admission (TensorRT-LLM's `guaranteed_no_evict`).
    Reserve,
}

/// The variant of a unit-only enum that a key's value names, by the names serde reads it with
/// (one vocabulary for a file's key and the code that checks it).
fn by_name<'de, T: Deserialize<'de>>(name: &'de str) -> Option<T> {
    use serde::de::{IntoDeserializer, value::Error};
    T::deserialize(IntoDeserializer::<Error>::into_deserializer(name)).ok()
}

/// How a unit's device links reach each other: the vocabulary of a profile's
/// `interconnect.topology` and of an accuracy row's `interconnect_topology`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Topology {
    /// Through a switch: every device reaches every other at the full bandwidth (NVSwitch).
    Switch,
    /// Point to point, spread over the unit's other devices: a group of `d` of `N` devices
    /// gets `(d−1)/(N−1)` of the bandwidth ([`Profile::interconnect_mesh`]).
    Mesh,
}

impl Topology {
    /// The topology a key's value names (`"switch"`, `"mesh"`), by the same names serde reads.
    pub fn from_name(name: &str) -> Option<Self> {
        by_name(name)
    }
}

/// How a generative engine's decode attention spreads one sequence's context over the device:
/// the values of a scenario tier's and an accuracy row's `decode_attention`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DecodeAttention {
    /// A long context is split across thread blocks and the parts reduced (TensorRT-LLM's
    /// `multi_block_mode`, on by default from 0.13.0; flash-decoding; vLLM's PagedAttention V2
    /// and its FlashAttention backend): the attention's time is its KV read or its arithmetic.
    #[default]
    Split,
    /// One thread block per sequence and head walks the whole context alone (TensorRT-LLM
    /// before 0.13.0 by default: its release notes for 0.13.0, "Enabled `multi_block_mode` by
    /// default"): the attention takes at least the longest context's walk,
    /// [`Profile::attention_block_s_per_token`] per token per layer.
    PerHead,
}

impl DecodeAttention {
    /// The choice a key's value names (`"split"`, `"per-head"`), by the same names serde reads.
    pub fn from_name(name: &str) -> Option<Self> {
        by_name(name)
    }
}

impl KvAllocationChoice {
    /// The choice a key's value names (`"paged"`, `"reserve"`), by the same names serde reads.
    pub fn from_name(name: &str) -> Option<Self> {
        by_name(name)
    }

    /// Whether this choice is [`GenerativeScheduling::paged_kv`].
    pub fn is_paged(self) -> bool {
        self == KvAllocationChoice::Paged
    }
}

impl Default for GenerativeScheduling {
    fn default() -> Self {
        GenerativeScheduling {
            chunked_prefill: true,
            max_batched_tokens: None,
            paged_kv: true,
            max_num_seqs: None,
            decode_attention: DecodeAttention::Split,
        }
    }
}

/// Prices of one unit per deployment option.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prices {
    pub region: Option<String>,
    pub purchase_usd: Option<Cited>,
    pub on_demand_usd_per_hour: Option<Cited>,
    pub reserved_1y_usd_per_hour: Option<Cited>,
    pub reserved_3y_usd_per_hour: Option<Cited>,
    pub spot_usd_per_hour: Option<Cited>,
    /// Yearly change g of every hourly price; absent means none.
    pub change_per_year: Option<Cited>,
    /// The provider's internet egress schedule; absent, egress is priced at the flat
    /// `[costs] egress_usd_per_gb`.
    pub egress: Option<&'static egress::EgressSchedule>,
}

impl Prices {
    /// The yearly price change g (0 when the profile gives none).
    pub fn change_per_year(&self) -> f64 {
        self.change_per_year.as_ref().map_or(0.0, |c| c.value)
    }
}

/// A validated hardware profile. Performance figures are in SI units (FLOP/s, B/s, B, s, W).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Profile {
    pub name: String,
    pub description: String,
    pub kind: UnitKind,
    pub chip_model: String,
    /// Where it was loaded from: a path, or `embedded:<name>`.
    pub origin: String,
    pub chips: Cited,
    pub cores_per_chip: Option<Cited>,
    pub clock_ghz: Option<Cited>,
    /// CPUs: private L2 cache per core \[B\].
    pub l2_bytes_per_core: Option<Cited>,
    /// CPUs: shared last-level cache (L3 / SLC) per chip \[B\].
    pub llc_bytes_per_chip: Option<Cited>,
    pub memory_bytes_per_chip: Cited,
    pub memory_bandwidth_per_chip: Cited,
    /// Dense peak per chip \[FLOP/s or OP/s\].
    pub peak_per_chip: BTreeMap<Precision, Cited>,
    pub idle_power_w: Cited,
    pub peak_power_w: Cited,
    pub efficiency_compute: Cited,
    /// Compute efficiency of convolution-dominated classic models; `None`: `efficiency_compute`.
    pub efficiency_compute_conv: Option<Cited>,
    /// Compute efficiency of matmul-dominated classic models; `None`: `efficiency_compute`.
    pub efficiency_compute_matmul: Option<Cited>,
    pub efficiency_memory: Cited,
    /// Generative models: fraction of the bandwidth the attention's KV-cache read reaches;
    /// `None`: `efficiency_memory`.
    pub efficiency_attention_memory: Option<Cited>,
    /// CPUs: Amdahl's serial fraction of a forward pass split across cores
    /// ([`Profile::parallel_cores`]); `None`: 0.
    pub serial_fraction: Option<Cited>,
    pub batch_overhead_s: Cited,
    /// Generative models: fixed time of one engine iteration \[s\], in place of
    /// `batch_overhead_s`; `None`: `batch_overhead_s`.
    pub iteration_overhead_s: Option<Cited>,
    /// Generative models served streaming: host time per running sequence per iteration \[s\];
    /// `None`: 0.
    pub stream_overhead_s: Option<Cited>,
    /// Generative models on a runtime whose decode attention runs one block per sequence and
    /// head (a tier's `decode_attention = "per-head"`): one block's time per cached token per
    /// layer \[s\]; `None`: such a tier is refused.
    pub attention_block_s_per_token: Option<Cited>,
    /// Fixed time per layer of a forward pass \[s\]; `None`: 0.
    pub layer_overhead_s: Option<Cited>,
    /// Accelerators: fixed time of one all-reduce across a tensor-parallel replica \[s\]; `None`: 0.
    pub allreduce_latency_s: Option<Cited>,
    /// Accelerators: bandwidth one device sends into a collective, one direction \[B/s\];
    /// `None`: the collectives' bytes are free.
    pub interconnect_bandwidth: Option<Cited>,
    /// The links join devices point to point, spread over the unit's other devices (a mesh),
    /// rather than through a switch: a group of `d` of `N` devices gets `(d−1)/(N−1)` of
    /// [`Profile::interconnect_bandwidth`].
    pub interconnect_mesh: bool,
    /// Coefficient of variation of the service time around the roofline time (std / mean of a
    /// log-normal multiplier of mean 1); from the profile or [`default_service_cv`].
    pub service_cv: Cited,
    pub batching: Batching,
    pub prices: Prices,
    pub calibration: Option<CalibrationFile>,
    #[serde(skip)]
    pub sources: Sources,
}

impl Profile {
    /// How many cores' worth of compute `k` cores give one forward pass split across them:
    /// Amdahl's law, `k / (1 + s (k − 1))` with `s` the profile's serial fraction (G. M. Amdahl,
    /// "Validity of the single processor approach to achieving large scale computing
    /// capabilities", AFIPS Spring Joint Computer Conference, 1967). `k` without one.
    pub fn parallel_cores(&self, k: u32) -> f64 {
        let k = f64::from(k.max(1));
        let s = self.serial_fraction.as_ref().map_or(0.0, |c| c.value);
        k / (1.0 + s * (k - 1.0))
    }

    /// The fixed time of one iteration of a generative model \[s\]: the iteration overhead
    /// where the profile sets one, else the per-batch overhead.
    pub fn generative_overhead_s(&self) -> f64 {
        self.iteration_overhead_s
            .as_ref()
            .map_or(self.batch_overhead_s.value, |c| c.value)
    }

    /// Chips per unit as an integer.
    pub fn chip_count(&self) -> u32 {
        self.chips.value as u32
    }

    /// Execution slots per unit: CPU cores, or accelerator devices.
    pub fn slots(&self) -> u32 {
        match (self.kind, &self.cores_per_chip) {
            (UnitKind::Cpu, Some(cores)) => self.chip_count() * cores.value as u32,
            _ => self.chip_count(),
        }
    }

    /// Dense peak of the whole unit at a precision \[FLOP/s\], if the chip supports it.
    pub fn unit_peak(&self, p: Precision) -> Option<f64> {
        self.peak_per_chip
            .get(&p)
            .map(|c| c.value * self.chips.value)
    }

    /// Memory of the whole unit \[B\].
    pub fn unit_memory_bytes(&self) -> f64 {
        self.memory_bytes_per_chip.value * self.chips.value
    }

    /// The price that applies to an option, if the profile supports it.
    pub fn price(&self, option: DeploymentOption) -> Option<&Cited> {
        let p = &self.prices;
        match option {
            DeploymentOption::OnPrem => p.purchase_usd.as_ref(),
            DeploymentOption::OnDemand => p.on_demand_usd_per_hour.as_ref(),
            DeploymentOption::Reserved1y => p.reserved_1y_usd_per_hour.as_ref(),
            DeploymentOption::Reserved3y => p.reserved_3y_usd_per_hour.as_ref(),
            DeploymentOption::Hybrid1y => p
                .reserved_1y_usd_per_hour
                .as_ref()
                .filter(|_| p.on_demand_usd_per_hour.is_some()),
            DeploymentOption::Hybrid3y => p
                .reserved_3y_usd_per_hour
                .as_ref()
                .filter(|_| p.on_demand_usd_per_hour.is_some()),
            DeploymentOption::Spot => p.spot_usd_per_hour.as_ref(),
        }
    }

    /// Deployment options a tier compares by default: every one this profile has a price for
    /// except `spot`, which a tier must ask for (its capacity can be taken back).
    pub fn options(&self) -> Vec<DeploymentOption> {
        DeploymentOption::ALL
            .into_iter()
            .filter(|o| *o != DeploymentOption::Spot && self.price(*o).is_some())
            .collect()
    }

    /// Every option this profile has a price for, `spot` included (for help text).
    pub fn priced_options(&self) -> Vec<DeploymentOption> {
        DeploymentOption::ALL
            .into_iter()
            .filter(|o| self.price(*o).is_some())
            .collect()
    }

    /// Every number of the profile with its name in reports, for the assumptions table: the
    /// numbers declared in [`numbers::PROFILE_NUMBERS`] that this profile gives, in that order.
    pub fn cited_numbers(&self) -> Vec<(String, &Cited)> {
        numbers::PROFILE_NUMBERS
            .iter()
            .filter_map(|n| n.get(self).map(|c| (n.label.to_string(), c)))
            .collect()
    }

    /// Parse and validate a profile file. `expected_name` is the file stem, which `name` must
    /// match so that a profile is always found by the name it declares.
    pub fn from_source(
        src: &SourceFile,
        expected_name: Option<&str>,
    ) -> Result<Profile, InputError> {
        let f: ProfileFile = src.parse()?;
        validate(src, f, expected_name)
    }
}

fn validate(
    src: &SourceFile,
    f: ProfileFile,
    expected_name: Option<&str>,
) -> Result<Profile, InputError> {
    if *f.schema.get_ref() != PROFILE_SCHEMA {
        return Err(src
            .error(
                &f.schema,
                "schema",
                format!("unknown profile schema {}", f.schema.get_ref()),
            )
            .with_help(format!("valid: {PROFILE_SCHEMA}")));
    }
    let name = f.name.get_ref().clone();
    if let Some(stem) = expected_name
        && stem != name
    {
        return Err(src
            .error(
                &f.name,
                "name",
                format!("the profile is named `{name}` but its file is `{stem}.toml`"),
            )
            .with_help(format!(
                "name the file `{name}.toml`, or set name = \"{stem}\""
            )));
    }
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err(src
            .error(
                &f.name,
                "name",
                format!("`{name}` is not a valid profile name"),
            )
            .with_help("valid: letters, digits, '-', '_' and '.'"));
    }
    let kind = *f.kind.get_ref();
    let sources = Sources::from_file(src, &f.sources)?;
    // Each number through its declaration: resolve its source, check its range, convert it.
    let read = |n: &numbers::ProfileNumber| n.read(src, &sources, &f);
    let required = |n: &numbers::ProfileNumber| -> Result<Cited, InputError> {
        read(n)?.ok_or_else(|| {
            src.error_at(None, n.key, format!("a profile needs {}", n.key))
                .with_help(format!("valid: {}", n.valid.text))
        })
    };

    let chips = required(&numbers::CHIPS)?;
    let cores_per_chip = read(&numbers::CORES)?;
    if kind == UnitKind::Cpu && cores_per_chip.is_none() {
        return Err(src
            .error(&f.kind, "chip.cores", "a cpu profile needs chip.cores")
            .with_help("add cores = { value = …, source = \"…\" } under [chip]"));
    }
    let clock_ghz = read(&numbers::CLOCK)?;
    let l2_bytes_per_core = read(&numbers::L2_PER_CORE)?;
    let llc_bytes_per_chip = read(&numbers::LLC)?;
    if kind != UnitKind::Cpu {
        // CPU-only numbers, refused elsewhere rather than ignored.
        const CACHE: &str = "the planner reads cache sizes only for CPU cores (weights that fit stay in cache); remove it";
        const SPLIT: &str = "the planner splits a pass across cores only on CPUs; an accelerator device is one slot; remove it";
        for (given, n, help) in [
            (f.chip.l2_mb_per_core.as_ref(), &numbers::L2_PER_CORE, CACHE),
            (f.chip.llc_mb.as_ref(), &numbers::LLC, CACHE),
            (
                f.efficiency.serial_fraction.as_ref(),
                &numbers::SERIAL_FRACTION,
                SPLIT,
            ),
        ] {
            if let Some(e) = given {
                return Err(src
                    .error(&e.value, n.key, "is for `cpu` profiles only")
                    .with_help(help));
            }
        }
    }
    let memory = required(&numbers::MEMORY)?;
    let bandwidth = required(&numbers::BANDWIDTH)?;
    let mut peak = BTreeMap::new();
    for (p, n) in [
        (Precision::Fp32, &numbers::PEAK_FP32),
        (Precision::Fp16, &numbers::PEAK_FP16),
        (Precision::Int8, &numbers::PEAK_INT8),
        (Precision::Fp8, &numbers::PEAK_FP8),
    ] {
        if let Some(c) = read(n)? {
            peak.insert(p, c);
        }
    }
    if peak.is_empty() {
        return Err(src
            .error_at(None, "chip.peak_tflops", "no peak compute is given")
            .with_help("give at least one of fp32, fp16, int8, fp8 (dense TFLOP/s per chip)"));
    }
    let idle = required(&numbers::IDLE_POWER)?;
    let peak_w = required(&numbers::PEAK_POWER)?;
    if idle.value > peak_w.value {
        return Err(src
            .error(
                &f.power.idle_w.value,
                "power.idle_w",
                format!(
                    "idle power {} W exceeds peak power {} W",
                    idle.value, peak_w.value
                ),
            )
            .with_help("idle_w must not exceed peak_w"));
    }
    let e_c = required(&numbers::EFFICIENCY_COMPUTE)?;
    let e_conv = read(&numbers::EFFICIENCY_COMPUTE_CONV)?;
    let e_matmul = read(&numbers::EFFICIENCY_COMPUTE_MATMUL)?;
    let e_m = required(&numbers::EFFICIENCY_MEMORY)?;
    let e_attention = read(&numbers::EFFICIENCY_ATTENTION_MEMORY)?;
    let serial_fraction = read(&numbers::SERIAL_FRACTION)?;
    let t0 = required(&numbers::BATCH_OVERHEAD)?;
    let iteration_overhead = read(&numbers::ITERATION_OVERHEAD)?;
    let stream_overhead = read(&numbers::STREAM_OVERHEAD)?;
    let attention_block = read(&numbers::ATTENTION_BLOCK)?;
    let layer_overhead = read(&numbers::LAYER_OVERHEAD)?;
    let allreduce_latency = read(&numbers::ALLREDUCE_LATENCY)?;
    let interconnect_bandwidth = read(&numbers::INTERCONNECT_BANDWIDTH)?;
    if kind == UnitKind::Cpu
        && let Some(i) = &f.interconnect
    {
        let at = i
            .allreduce_latency_us
            .as_ref()
            .or(i.bandwidth_gbps.as_ref())
            .map(|e| e.value.span());
        return Err(src
            .error_at(at, "interconnect", "is for accelerator profiles only")
            .with_help("a CPU replica runs on one chip, so no collective crosses a link; remove [interconnect]"));
    }
    let interconnect_mesh = match f.interconnect.as_ref().and_then(|i| i.topology.as_ref()) {
        None => false,
        Some(t) => {
            let valid = "\"switch\" (every device reaches every other at the full bandwidth) or \
                         \"mesh\" (links spread over the unit's other devices)";
            let field = "interconnect.topology";
            src.choice(t, field, "topology", valid, Topology::from_name)? == Topology::Mesh
        }
    };
    let service_cv = match read(&numbers::SERVICE_CV)? {
        Some(c) => c,
        None => default_service_cv(kind),
    };

    let batching = match &f.batching {
        None => Batching {
            max_batch: 1,
            window_s: 0.0,
            compiled_batch_sizes: vec![],
            generative: GenerativeScheduling::default(),
            cores_per_request: 1,
            tensor_parallel: None,
            compiled_context_tokens: None,
            kv_cache_precision: None,
            service_times: None,
        },
        Some(b) => {
            let max_batch = *b.max_batch.get_ref();
            if !(1..=MAX_BATCH).contains(&max_batch) {
                return Err(src
                    .error(
                        &b.max_batch,
                        "batching.max_batch",
                        format!("= {max_batch} is out of range"),
                    )
                    .with_help(format!("valid: a whole number from 1 to {MAX_BATCH}")));
            }
            let window_s = match &b.window_ms {
                Some(w) => {
                    crate::input::NumberCheck {
                        source: src,
                        field: "batching.window_ms",
                    }
                    .range(
                        w,
                        Some(0.0),
                        false,
                        Some(MAX_WINDOW_MS),
                        WINDOW_MS_TEXT,
                    )? * 1e-3
                }
                None => 0.0,
            };
            let sizes = match &b.compiled_batch_sizes {
                Some(s) => check_compiled_sizes(src, s, max_batch)?,
                None => vec![],
            };
            Batching {
                max_batch,
                window_s,
                compiled_batch_sizes: sizes,
                generative: GenerativeScheduling::default(),
                cores_per_request: 1,
                tensor_parallel: None,
                compiled_context_tokens: None,
                kv_cache_precision: None,
                service_times: None,
            }
        }
    };

    let prices = Prices {
        region: f.price.region.clone(),
        purchase_usd: read(&numbers::PURCHASE)?,
        on_demand_usd_per_hour: read(&numbers::ON_DEMAND)?,
        reserved_1y_usd_per_hour: read(&numbers::RESERVED_1Y)?,
        reserved_3y_usd_per_hour: read(&numbers::RESERVED_3Y)?,
        spot_usd_per_hour: read(&numbers::SPOT)?,
        change_per_year: read(&numbers::CHANGE_PER_YEAR)?,
        egress: match &f.price.egress {
            None => None,
            Some(name) => Some(egress::schedule(name.get_ref()).ok_or_else(|| {
                let known = egress::names();
                let help = match closest(name.get_ref(), &known) {
                    Some(b) => format!("did you mean `{b}`? schedules: {}", known.join(", ")),
                    None => format!("schedules: {}", known.join(", ")),
                };
                src.error(
                    name,
                    "price.egress",
                    format!("no egress schedule is named `{}`", name.get_ref()),
                )
                .with_help(help)
            })?),
        },
    };
    if prices.purchase_usd.is_none()
        && prices.on_demand_usd_per_hour.is_none()
        && prices.reserved_1y_usd_per_hour.is_none()
        && prices.reserved_3y_usd_per_hour.is_none()
    {
        return Err(src
            .error_at(None, "price", "the profile has no price")
            .with_help("give purchase_usd (on-prem) and/or on_demand_usd_per_hour, reserved_1y_usd_per_hour, reserved_3y_usd_per_hour"));
    }

    Ok(Profile {
        name,
        description: f.description,
        kind,
        chip_model: f.chip_model,
        origin: src.name.clone(),
        chips,
        cores_per_chip,
        clock_ghz,
        l2_bytes_per_core,
        llc_bytes_per_chip,
        memory_bytes_per_chip: memory,
        memory_bandwidth_per_chip: bandwidth,
        peak_per_chip: peak,
        idle_power_w: idle,
        peak_power_w: peak_w,
        efficiency_compute: e_c,
        efficiency_compute_conv: e_conv,
        efficiency_compute_matmul: e_matmul,
        efficiency_memory: e_m,
        efficiency_attention_memory: e_attention,
        serial_fraction,
        batch_overhead_s: t0,
        iteration_overhead_s: iteration_overhead,
        stream_overhead_s: stream_overhead,
        attention_block_s_per_token: attention_block,
        layer_overhead_s: layer_overhead,
        allreduce_latency_s: allreduce_latency,
        interconnect_bandwidth,
        interconnect_mesh,
        service_cv,
        batching,
        prices,
        calibration: f.calibration,
        sources,
    })
}

/// The service-time CV of a profile that does not give `efficiency.service_cv`: an estimate per
/// kind of unit, until measured latencies replace it.
///
/// * Accelerators, 0.05: Gujarati et al. observe that DNN inference on a dedicated GPU is close
///   to deterministic (Clockwork, OSDI 2020); 5 % leaves room for clock boosting, framework
///   jitter and input-dependent kernels.
/// * CPUs, 0.25: cores that share caches and memory vary far more; Yang, Lu & Ren measure
///   latency variability that grows with CPU contention (arXiv 2003.00138, 2020). 0.25 is an
///   estimate of a loaded server's spread, not a measurement.
pub fn default_service_cv(kind: UnitKind) -> Cited {
    let (value, source, note) = match kind {
        UnitKind::Cpu => (
            0.25,
            crate::cite::Source {
                key: "yang-2020-latency-variability".into(),
                title: "Yang, Lu & Ren, 'A Note on Latency Variability of Deep Neural Networks for Mobile Inference', arXiv 2003.00138 (latency variability grows with CPU resource contention)".into(),
                url: Some("https://arxiv.org/abs/2003.00138".into()),
                date: "2020-02-29".into(),
            },
            "tco-sim default for a CPU profile without efficiency.service_cv: cores sharing caches and memory bandwidth, OS noise and input-dependent kernels spread each request's time; 0.25 is an estimate, not a measurement — replace it with the CV of measured per-request latencies",
        ),
        _ => (
            0.05,
            crate::cite::Source {
                key: "gujarati-2020-clockwork".into(),
                title: "Gujarati et al., 'Serving DNNs like Clockwork: Performance Predictability from the Bottom Up', OSDI 2020 (DNN inference on a dedicated accelerator is close to deterministic)".into(),
                url: Some("https://arxiv.org/abs/2006.02464".into()),
                date: "2020-11".into(),
            },
            "tco-sim default for an accelerator profile without efficiency.service_cv: inference of a fixed shape on a dedicated device is near-deterministic (Clockwork); 0.05 allows for clock boosting and framework jitter. An estimate — replace it with the CV of measured per-batch latencies",
        ),
    };
    Cited {
        log_sd: None,
        value,
        basis: crate::cite::Basis::Estimate,
        source,
        note: Some(note.into()),
    }
}

fn check_compiled_sizes(
    src: &SourceFile,
    s: &toml::Spanned<Vec<u32>>,
    max_batch: u32,
) -> Result<Vec<u32>, InputError> {
    let sizes = s.get_ref().clone();
    let ascending = sizes.windows(2).all(|w| w[0] < w[1]);
    if sizes.is_empty() || sizes[0] == 0 || !ascending || *sizes.last().unwrap() != max_batch {
        return Err(src
            .error(s, "batching.compiled_batch_sizes", format!("{sizes:?} is not a valid list of compiled batch sizes"))
            .with_help(format!("valid: strictly ascending sizes ≥ 1 ending at max_batch ({max_batch}), e.g. [1, 4, 16, {max_batch}]")));
    }
    Ok(sizes)
}

/// Names of the profiles embedded in this binary, sorted.
pub fn embedded_names() -> Vec<&'static str> {
    embedded::PROFILES.iter().map(|(n, _)| *n).collect()
}

/// The text of an embedded profile.
pub fn embedded_text(name: &str) -> Option<&'static str> {
    embedded::PROFILES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
}

/// Where profiles are looked up for one scenario.
#[derive(Debug, Clone, Default)]
pub struct ProfileSearch {
    /// Folders searched first, in order (the scenario's `profiles_dir`, then its own folder).
    pub dirs: Vec<PathBuf>,
}

impl ProfileSearch {
    /// Load a profile by name (`altra-q80-30-1u`) or by path (anything ending in `.toml` or
    /// holding a path separator, relative to `base`).
    pub fn load(&self, reference: &str, base: &Path) -> Result<Profile, InputError> {
        if reference.ends_with(".toml") || reference.contains('/') || reference.contains('\\') {
            let path = base.join(reference);
            let src = SourceFile::read(&path)?;
            return Profile::from_source(&src, None);
        }
        for dir in &self.dirs {
            let path = dir.join(format!("{reference}.toml"));
            if path.is_file() {
                let src = SourceFile::read(&path)?;
                return Profile::from_source(&src, Some(reference));
            }
        }
        match embedded_text(reference) {
            Some(text) => {
                let src = SourceFile::from_text(format!("embedded:{reference}"), text);
                Profile::from_source(&src, Some(reference))
            }
            None => Err(self.unknown(reference)),
        }
    }

    /// Every profile name this search can see: local files first, then embedded.
    pub fn available(&self) -> Vec<String> {
        let mut names: Vec<String> = embedded_names().into_iter().map(String::from).collect();
        for dir in &self.dirs {
            if let Ok(entries) = std::fs::read_dir(dir) {
                for e in entries.flatten() {
                    let p = e.path();
                    if p.extension().is_some_and(|x| x == "toml")
                        && let Some(stem) = p.file_stem().and_then(|s| s.to_str())
                        && looks_like_profile(&p)
                    {
                        names.push(stem.to_string());
                    }
                }
            }
        }
        names.sort();
        names.dedup();
        names
    }

    fn unknown(&self, reference: &str) -> InputError {
        let names = self.available();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let help = match closest(reference, &refs) {
            Some(best) => format!(
                "did you mean `{best}`? available profiles: {}",
                names.join(", ")
            ),
            None => format!("available profiles: {}", names.join(", ")),
        };
        InputError::new(format!("unknown hardware profile `{reference}`")).with_help(help)
    }
}

/// A cheap check that a TOML file in a profiles folder is a profile and not, say, a scenario.
fn looks_like_profile(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| t.contains("chip_model") && t.contains("[chip"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_profile_validates_and_cites_every_number() {
        let names = embedded_names();
        assert!(!names.is_empty());
        for name in names {
            let src =
                SourceFile::from_text(format!("embedded:{name}"), embedded_text(name).unwrap());
            let p = Profile::from_source(&src, Some(name)).unwrap_or_else(|e| panic!("{e}"));
            for (field, c) in p.cited_numbers() {
                assert!(!c.source.title.is_empty(), "{name}: {field} has no source");
                assert!(
                    crate::cite::is_date(&c.source.date),
                    "{name}: {field} has no date"
                );
                assert!(c.value.is_finite(), "{name}: {field}");
            }
            assert!(!p.options().is_empty(), "{name} has no deployment option");
            assert!(p.slots() >= 1);
        }
    }

    fn altra_with(from: &str, to: &str) -> Result<Profile, InputError> {
        let text = embedded_text("altra-q80-30-1u").unwrap();
        assert!(text.contains(from), "{from}");
        let src = SourceFile::from_text("p.toml", text.replacen(from, to, 1));
        Profile::from_source(&src, None)
    }

    /// The serial fraction splits a pass across CPU cores; on an accelerator it would do
    /// nothing, so it is refused at its position, naming the key.
    #[test]
    fn a_serial_fraction_on_an_accelerator_is_refused() {
        let text = embedded_text("aws-g6.xlarge").unwrap();
        let at = "[efficiency]\n";
        assert!(text.contains(at));
        let src = SourceFile::from_text(
            "g6.toml",
            text.replacen(
                at,
                "[efficiency]\nserial_fraction = { value = 0.05, source = \"accuracy-fit\" }\n",
                1,
            ),
        );
        let e = Profile::from_source(&src, None).unwrap_err().to_string();
        assert!(e.contains("efficiency.serial_fraction"), "{e}");
        assert!(e.contains("`cpu` profiles only"), "{e}");
        assert!(e.contains("g6.toml:"), "{e}");
        // A CPU profile takes it.
        let p = altra_with("", "").unwrap();
        assert!(p.serial_fraction.is_some());
        assert!((p.parallel_cores(1) - 1.0).abs() < 1e-15);
        assert!(p.parallel_cores(80) < 80.0 && p.parallel_cores(80) > 10.0);
    }

    /// `interconnect.topology` reads the same two names an accuracy row's key does; any other is
    /// refused at its position with the valid ones.
    #[test]
    fn an_interconnect_topology_is_one_of_two_names() {
        let text = embedded_text("mi300x-8x").unwrap();
        let mesh = "topology = \"mesh\"";
        assert!(text.contains(mesh));
        let with = |to: &str| {
            let src = SourceFile::from_text("m.toml", text.replacen(mesh, to, 1));
            Profile::from_source(&src, None)
        };
        assert!(with(mesh).unwrap().interconnect_mesh);
        assert!(!with("topology = \"switch\"").unwrap().interconnect_mesh);
        let e = with("topology = \"ring\"").unwrap_err().to_string();
        assert!(
            e.contains("m.toml:") && e.contains("interconnect.topology"),
            "{e}"
        );
        assert!(
            e.contains("= \"ring\" is not a topology")
                && e.contains("\"switch\"")
                && e.contains("\"mesh\""),
            "{e}"
        );
    }

    #[test]
    fn cited_numbers_keep_their_report_labels_in_order() {
        let p = altra_with("", "").unwrap();
        let labels: Vec<String> = p.cited_numbers().into_iter().map(|(l, _)| l).collect();
        assert_eq!(
            labels,
            [
                "chips",
                "chip.cores",
                "chip.clock_ghz",
                "chip.l2_per_core [B]",
                "chip.llc [B]",
                "chip.memory [B]",
                "chip.memory_bandwidth [B/s]",
                "chip.peak.fp32 [FLOP/s]",
                "chip.peak.fp16 [FLOP/s]",
                "chip.peak.int8 [FLOP/s]",
                "power.idle_w",
                "power.peak_w",
                "efficiency.compute",
                "efficiency.memory",
                "efficiency.serial_fraction",
                "efficiency.batch_overhead [s]",
                "efficiency.stream_overhead [s]",
                // Not in the file: the CPU default, listed with its source like any number.
                "efficiency.service_cv",
                "price.purchase_usd",
            ]
        );
        // Held in SI units: the file's 256 GB and 0.2 ms.
        assert_eq!(p.memory_bytes_per_chip.value, 256e9);
        assert_eq!(p.batch_overhead_s.value, 0.2e-3);
    }

    #[test]
    fn a_bad_kind_names_the_valid_ones_at_its_line() {
        let e = altra_with("kind = \"cpu\"", "kind = \"tpu\"").unwrap_err();
        assert_eq!(e.message, "unknown value `tpu`");
        assert_eq!(e.field.as_deref(), Some("kind"));
        assert_eq!(e.position, Some((17, 8)));
        let help = e.help.clone().unwrap();
        assert!(help.contains("cpu, gpu, accelerator"), "{help}");
    }

    #[test]
    fn a_number_is_checked_against_its_declaration() {
        let e = altra_with("cores = { value = 80,", "cores = { value = 80.5,").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("chip.cores"));
        assert_eq!(e.message, "= 80.5 is not a whole number");
        let e = altra_with("compute = { value = 0.5,", "compute = { value = 1.5,").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("efficiency.compute"));
        assert_eq!(e.help.as_deref(), Some("valid: a fraction from 0.001 to 1"));
        let e = altra_with("cores = { value = 80, source = \"heise-2020\" }\n", "").unwrap_err();
        assert_eq!(e.message, "a cpu profile needs chip.cores");
    }

    #[test]
    fn unknown_profile_lists_the_available_ones() {
        let e = ProfileSearch::default()
            .load("altra-q80-30-1x", Path::new("."))
            .unwrap_err();
        assert_eq!(e.message, "unknown hardware profile `altra-q80-30-1x`");
        let help = e.help.clone().unwrap();
        assert!(
            help.starts_with("did you mean `altra-q80-30-1u`?"),
            "{help}"
        );
        assert!(help.contains("aws-p5.48xlarge"), "{help}");
    }
}
