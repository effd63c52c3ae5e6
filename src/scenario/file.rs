//! The scenario TOML as written, before validation. Every table rejects unknown keys, and numbers
//! keep their spans so a bad value is reported at its line and column.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use crate::cost::inputs::cost_input;
use crate::hardware::{DeploymentOption, Precision};
use crate::traffic::file::TrafficFile;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// Years the plan and the costs cover (default 5).
    #[serde(default)]
    pub horizon_years: Option<Spanned<i64>>,
    /// Seed of every random stream (default 1); `--seed` overrides it.
    #[serde(default)]
    pub seed: Option<Spanned<i64>>,
    /// A folder of profile files that override the shipped ones, relative to this file.
    #[serde(default)]
    pub profiles_dir: Option<Spanned<String>>,
    pub workload: WorkloadFile,
    pub traffic: TrafficFile,
    pub slo: SloFile,
    #[serde(rename = "tier")]
    pub tiers: Spanned<Vec<TierFile>>,
    #[serde(default)]
    pub costs: CostsFile,
    #[serde(default)]
    pub simulation: Option<SimulationFile>,
    /// Published figures to compare this run against (e.g. the seed article's table).
    #[serde(default, rename = "reference")]
    pub references: Vec<ReferenceFile>,
    /// Ranges of inputs for the uncertainty analysis, by input path
    /// (`"costs.pue" = { low = 1.3, high = 1.8 }`); sorted by path.
    #[serde(default)]
    pub uncertainty: BTreeMap<Spanned<String>, Spanned<RangeFile>>,
}

/// One entry of `[uncertainty]`: a distribution of an input's value, in the unit the input is
/// written in. `dist` defaults to uniform (`{ low, high }`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RangeFile {
    /// `uniform` (default), `triangular`, `normal`, `lognormal` or `pert`.
    #[serde(default)]
    pub dist: Option<Spanned<String>>,
    #[serde(default)]
    pub low: Option<Spanned<f64>>,
    #[serde(default)]
    pub mode: Option<Spanned<f64>>,
    #[serde(default)]
    pub high: Option<Spanned<f64>>,
    #[serde(default)]
    pub mean: Option<Spanned<f64>>,
    #[serde(default)]
    pub sd: Option<Spanned<f64>>,
}

/// A published figure for one tier and option, shown beside this run's result.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceFile {
    /// Where the figure comes from, e.g. "seed 004 §4.3 (2023 prices, capex + power only)".
    pub label: String,
    /// The tier's name in this scenario.
    pub tier: Spanned<String>,
    pub option: Spanned<DeploymentOption>,
    /// The published total over the horizon \[USD\].
    #[serde(default)]
    pub total_usd: Option<Spanned<f64>>,
    /// The published break-even of on-prem against this (cloud) option \[hours per day\].
    #[serde(default)]
    pub break_even_hours_per_day: Option<Spanned<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadFile {
    /// A shipped model (`resnet-50`, `bert-base`, `llama-3-8b`, …) or absent for custom numbers.
    #[serde(default)]
    pub preset: Option<Spanned<String>>,
    /// Display name of a custom model.
    #[serde(default)]
    pub name: Option<String>,
    pub precision: Spanned<Precision>,
    /// Where custom numbers come from (shown in the report).
    #[serde(default)]
    pub source: Option<String>,
    // Classic custom model.
    #[serde(default)]
    pub flops_per_item: Option<Spanned<f64>>,
    #[serde(default)]
    pub parameters: Option<Spanned<f64>>,
    #[serde(default)]
    pub activation_elements_per_item: Option<Spanned<f64>>,
    // Generative custom model.
    #[serde(default)]
    pub layers: Option<Spanned<f64>>,
    #[serde(default)]
    pub hidden_size: Option<Spanned<f64>>,
    #[serde(default)]
    pub kv_heads: Option<Spanned<f64>>,
    #[serde(default)]
    pub head_dim: Option<Spanned<f64>>,
    /// Mean prompt tokens per request (generative).
    #[serde(default)]
    pub prompt_tokens: Option<Spanned<f64>>,
    /// Mean output tokens per request (generative).
    #[serde(default)]
    pub output_tokens: Option<Spanned<f64>>,
    /// Coefficient of variation of token counts: 0 = fixed, > 0 = lognormal.
    #[serde(default)]
    pub token_cv: Option<Spanned<f64>>,
    /// Largest prompt or output length drawn \[tokens\].
    #[serde(default)]
    pub max_tokens: Option<Spanned<i64>>,
    /// Use each replayed request's own token counts when the trace has them (default true).
    #[serde(default)]
    pub tokens_from_trace: Option<bool>,
    /// Classic sequence models: the distribution of sequence lengths \[tokens\].
    #[serde(default)]
    pub sequence_tokens: Option<Spanned<SequenceTokensFile>>,
    /// Classic sequence models: the longest sequence (and the padded length) \[tokens\].
    #[serde(default)]
    pub max_sequence_tokens: Option<Spanned<i64>>,
    /// Classic sequence models: `"max"` pads every item to `max_sequence_tokens`, `"none"`
    /// charges each item its own length, `"batch"` pads its attention to the batch's longest.
    #[serde(default)]
    pub padding: Option<Spanned<String>>,
    /// Classic sequence models with `padding = "batch"`: the key lengths the runtime's
    /// attention kernels are compiled for, ascending \[tokens\].
    #[serde(default)]
    pub attention_lengths: Option<Spanned<Vec<i64>>>,
    /// Classic sequence models: take each replayed request's length from the trace's input-token
    /// column when it has one (default false).
    #[serde(default)]
    pub sequence_from_trace: Option<Spanned<bool>>,
    /// Custom classic sequence model: the length `flops_per_item` is given at \[tokens\].
    #[serde(default)]
    pub item_tokens: Option<Spanned<i64>>,
    /// Custom classic model: dominant operator class, `"conv"` or `"matmul"`.
    #[serde(default)]
    pub op_class: Option<Spanned<String>>,
    /// Prefix caching from the trace's prompt blocks (default: on when the trace has them).
    #[serde(default)]
    pub prefix_caching: Option<Spanned<bool>>,
}

/// A tier's `service_times`: measured times inline, or a column of a CSV file with a header row.
/// Exactly one of `values` and `file`; `column` goes with `file`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceTimesFile {
    #[serde(default)]
    pub values: Option<Spanned<Vec<f64>>>,
    #[serde(default)]
    pub file: Option<Spanned<String>>,
    #[serde(default)]
    pub column: Option<Spanned<String>>,
}

/// `sequence_tokens`: a fixed length, a lognormal `{ mean, cv }`, or `{ values = [...] }`. An
/// untagged enum buffers its input, which drops the positions a `Spanned` inside it needs (so
/// no form parsed at all); the whole value carries the span instead.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum SequenceTokensFile {
    Fixed(i64),
    LogNormal(LengthLogNormalFile),
    Empirical(LengthValuesFile),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LengthLogNormalFile {
    pub mean: f64,
    pub cv: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LengthValuesFile {
    pub values: Vec<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SloFile {
    /// Latency percentile the contract is written on, in (0, 100): 99 for p99.
    pub percentile: Spanned<f64>,
    /// Bound on that percentile of end-to-end latency \[ms\].
    #[serde(default)]
    pub latency_ms: Option<Spanned<f64>>,
    /// Generative models: bound on that percentile of time to first token \[ms\].
    #[serde(default)]
    pub ttft_ms: Option<Spanned<f64>>,
    /// Generative models: bound on that percentile of time per output token after the first \[ms\].
    #[serde(default)]
    pub tpot_ms: Option<Spanned<f64>>,
    /// Highest planned utilization of a fleet (headroom), in (0, 1].
    #[serde(default)]
    pub max_utilization: Option<Spanned<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TierFile {
    /// Display name (default: the profile name).
    #[serde(default)]
    pub name: Option<Spanned<String>>,
    /// A profile name, or a path to a profile file (relative to the scenario).
    pub profile: Spanned<String>,
    /// Deployment options to compare (default: every option the profile has a price for).
    #[serde(default)]
    pub options: Option<Spanned<Vec<DeploymentOption>>>,
    /// A fixed fleet size instead of a planned one (e.g. "one server", as in seed 004).
    #[serde(default)]
    pub units: Option<Spanned<i64>>,
    /// Override the workload's precision on this tier.
    #[serde(default)]
    pub precision: Option<Spanned<Precision>>,
    /// All-in power and cooling per unit-hour \[USD/h\], paid around the clock, instead of the
    /// power × PUE × price model (seed 004 uses $0.87/h).
    #[serde(default)]
    pub energy_usd_per_unit_hour: Option<Spanned<f64>>,
    /// Where that figure comes from.
    #[serde(default)]
    pub energy_source: Option<String>,
    /// Override the profile's batching.
    #[serde(default)]
    pub max_batch: Option<Spanned<i64>>,
    #[serde(default)]
    pub window_ms: Option<Spanned<f64>>,
    /// Generative workloads: prefill prompts in chunks under a per-iteration token budget
    /// (default true, as vLLM V1); false prefills every admitted prompt whole.
    #[serde(default)]
    pub chunked_prefill: Option<Spanned<bool>>,
    /// Generative workloads: the per-iteration token budget with chunked prefill \[tokens\]
    /// (default vLLM's for the device: 8,192 with 70 GiB or more per device, else 2,048).
    #[serde(default)]
    pub max_batched_tokens: Option<Spanned<i64>>,
    /// Generative workloads: "paged" (default: KV grown in 16-token blocks, newest sequence
    /// preempted and recomputed when it runs out) or "reserve" (whole context reserved at
    /// admission, never preempted).
    #[serde(default)]
    pub kv_allocation: Option<Spanned<String>>,
    /// Generative workloads: "split" (default: a long context split across thread blocks, as
    /// vLLM and TensorRT-LLM from 0.13.0 run the decode attention) or "per-head" (one block per
    /// sequence and head, TensorRT-LLM before 0.13.0; needs the profile's
    /// `efficiency.attention_block_ns_per_token`).
    #[serde(default)]
    pub decode_attention: Option<Spanned<String>>,
    /// CPU tiers: cores that run one request (or batch) together, intra-op parallel (default 1:
    /// one request per core).
    #[serde(default)]
    pub cores_per_request: Option<Spanned<i64>>,
    /// Accelerator tiers, generative workloads: devices per model replica (tensor parallelism,
    /// vLLM's `--tensor-parallel-size`); default: the planner's choice.
    #[serde(default)]
    pub tensor_parallel: Option<Spanned<i64>>,
    /// Compiled-shape accelerator tiers (Inferentia), generative workloads: the context length
    /// the model's attention was compiled for (Neuron `n_positions`) \[tokens\].
    #[serde(default)]
    pub compiled_context_tokens: Option<Spanned<i64>>,
    /// Generative workloads: the KV cache's element type (vLLM's `--kv-cache-dtype`); default
    /// 16-bit (fp32 with fp32 weights).
    #[serde(default)]
    pub kv_cache_precision: Option<Spanned<Precision>>,
    /// How often an autoscaled cloud fleet may change size \[hours\] (default 1: hour by hour).
    #[serde(default)]
    pub autoscale_interval_hours: Option<Spanned<i64>>,
    /// Software licences per unit-year \[USD\], for any kind of unit, instead of
    /// `costs.software_usd_per_gpu_year` × GPUs per unit.
    #[serde(default)]
    pub software_usd_per_unit_year: Option<Spanned<f64>>,
    /// Where that figure comes from.
    #[serde(default)]
    pub software_source: Option<String>,
    /// One-time porting and engineering cost of this tier \[USD\] (seed 004 §8.1 step 5: the
    /// team's expertise with the platform's stack), paid at the start of year 1.
    #[serde(default)]
    pub porting_usd: Option<Spanned<f64>>,
    /// Where that figure comes from.
    #[serde(default)]
    pub porting_source: Option<String>,
    /// The tier's service tolerates spot interruptions within its contract, so `spot` may be
    /// recommended (default false).
    #[serde(default)]
    pub spot_meets_slo: Option<Spanned<bool>>,
    /// Override the profile's yearly change of hourly prices (`price.change_per_year`).
    #[serde(default)]
    pub price_change_per_year: Option<Spanned<f64>>,
    /// Where that figure comes from.
    #[serde(default)]
    pub price_change_source: Option<String>,
    /// Override the profile's service-time spread (`efficiency.service_cv`): the coefficient of
    /// variation of each request's, batch's or iteration's time around the roofline.
    #[serde(default)]
    pub service_cv: Option<Spanned<f64>>,
    /// Where that figure comes from.
    #[serde(default)]
    pub service_cv_source: Option<String>,
    /// Measured times of one unit of work, whose shape replaces the log-normal spread:
    /// `{ values = [...] }` or `{ file = "times.csv", column = "latency_ms" }`.
    #[serde(default)]
    pub service_times: Option<Spanned<ServiceTimesFile>>,
    /// Where those times come from (default: the file, or the scenario's line).
    #[serde(default)]
    pub service_times_source: Option<Spanned<String>>,
    /// On-prem spares kept beside the planned units every year (N + k), instead of the number
    /// `costs.availability_target` gives.
    #[serde(default)]
    pub spares: Option<Spanned<i64>>,
}

/// The `[costs]` table: any of the assumptions declared in [`crate::cost::inputs`], plus
/// `sources`. It is read generically, key by key, so that a new assumption needs no field here;
/// a key that names no assumption is kept with its span and reported by validation with a
/// suggestion.
#[derive(Debug, Default)]
pub struct CostsFile {
    /// Each assumption set here, in file order.
    pub values: Vec<(Spanned<String>, Spanned<f64>)>,
    /// Keys that name no cost assumption.
    pub unknown: Vec<Spanned<String>>,
    /// Citations for values set here: `sources = { pue = "our facility, 2025 audit" }`.
    pub sources: Vec<(Spanned<String>, String)>,
}

impl CostsFile {
    /// The value set for an assumption's key.
    pub fn value(&self, key: &str) -> Option<&Spanned<f64>> {
        self.values
            .iter()
            .find(|(k, _)| k.get_ref() == key)
            .map(|(_, v)| v)
    }

    /// The citation given for an assumption's key.
    pub fn source(&self, key: &str) -> Option<&String> {
        self.sources
            .iter()
            .find(|(k, _)| k.get_ref() == key)
            .map(|(_, v)| v)
    }
}

impl<'de> Deserialize<'de> for CostsFile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = CostsFile;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a table of cost assumptions")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<CostsFile, A::Error> {
                let mut out = CostsFile::default();
                while let Some(key) = map.next_key::<Spanned<String>>()? {
                    if key.get_ref() == "sources" {
                        let s: BTreeMap<Spanned<String>, String> = map.next_value()?;
                        out.sources.extend(s);
                    } else if cost_input(key.get_ref()).is_some() {
                        out.values.push((key, map.next_value()?));
                    } else {
                        // Its value may be of any type: the name is what is wrong.
                        map.next_value::<serde::de::IgnoredAny>()?;
                        out.unknown.push(key);
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_map(Visitor)
    }
}

/// Simulation settings (the capacity planner's design runs).
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct SimulationFile {
    #[serde(default)]
    pub replications: Option<Spanned<i64>>,
    /// Simulated design window per fleet evaluation \[s\].
    #[serde(default)]
    pub window_s: Option<Spanned<f64>>,
    /// Warm-up discarded at the start of each run \[s\].
    #[serde(default)]
    pub warmup_s: Option<Spanned<f64>>,
    /// Upper bound on units tried per tier and year.
    #[serde(default)]
    pub max_units: Option<Spanned<i64>>,
    /// How the load balancer assigns requests to units (the simulator's own enum, spelled in
    /// kebab-case).
    #[serde(default)]
    pub dispatch: Option<crate::sim::Dispatch>,
}
