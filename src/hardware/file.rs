//! The hardware-profile TOML as written (`hardware-profiles/*.toml`), before validation.
//!
//! Serializable too, so `tco-sim calibrate --base` can read a shipped profile, replace its
//! performance numbers and write it back in the same format.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::UnitKind;
use crate::cite::{Basis, CitedFileEntry, SourceFileEntry};

/// Current profile schema; a file states it so that later formats can be told apart.
pub const PROFILE_SCHEMA: u32 = 1;

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileFile {
    pub schema: Spanned<u32>,
    pub name: Spanned<String>,
    pub description: String,
    pub kind: Spanned<UnitKind>,
    pub chip_model: String,
    /// Chips (CPU sockets or accelerator devices) in one unit.
    pub chips: CitedEntry,
    pub chip: ChipFile,
    pub power: PowerFile,
    pub efficiency: EfficiencyFile,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batching: Option<BatchingFile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interconnect: Option<InterconnectFile>,
    pub price: PriceFile,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<CalibrationFile>,
    pub sources: BTreeMap<String, SourceFileEntry>,
}

/// A cited number in a profile: `{ value, source, basis?, note? }`.
pub type CitedEntry = CitedFileEntry;

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ChipFile {
    /// CPU cores per chip (one request at a time each). CPUs only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<CitedEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_ghz: Option<CitedEntry>,
    /// Private L2 cache per core [MB = 1e6 B]. CPUs only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2_mb_per_core: Option<CitedEntry>,
    /// Shared last-level cache (L3 / system-level cache) per chip [MB = 1e6 B]. CPUs only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llc_mb: Option<CitedEntry>,
    /// Memory per chip [GB = 1e9 B].
    pub memory_gb: CitedEntry,
    /// Sustainable-peak memory bandwidth per chip [GB/s = 1e9 B/s].
    pub memory_bandwidth_gbps: CitedEntry,
    /// Dense (not 2:4-sparse) peak per chip \[TFLOP/s or TOPS\], by precision.
    pub peak_tflops: PeakFile,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PeakFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp32: Option<CitedEntry>,
    /// 16-bit floating point (fp16 or bf16, whichever the chip runs at full rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp16: Option<CitedEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub int8: Option<CitedEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp8: Option<CitedEntry>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PowerFile {
    /// Whole unit at idle \[W\].
    pub idle_w: CitedEntry,
    /// Whole unit at full load \[W\].
    pub peak_w: CitedEntry,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EfficiencyFile {
    /// Fraction of peak compute a real inference runtime reaches (e_c).
    pub compute: CitedEntry,
    /// Fraction of peak memory bandwidth a real runtime reaches (e_m).
    pub memory: CitedEntry,
    /// Fixed time per batch: launch, framework and dispatch overhead (t0) \[ms\].
    pub batch_overhead_ms: CitedEntry,
    /// Coefficient of variation of the service time around the roofline (absent: the kind's
    /// default, [`crate::hardware::default_service_cv`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_cv: Option<CitedEntry>,
    /// Compute efficiency of convolution-dominated models (absent: `compute`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_conv: Option<CitedEntry>,
    /// Compute efficiency of matmul-dominated (transformer) classic models (absent: `compute`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_matmul: Option<CitedEntry>,
    /// Generative models: fixed time of one engine iteration (scheduling, sampling, token
    /// output, kernel launches), in place of `batch_overhead_ms` \[ms\] (absent:
    /// `batch_overhead_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iteration_overhead_ms: Option<CitedEntry>,
    /// Generative models served streaming: host time per running sequence per iteration
    /// (detokenising and sending its token, scheduling it), serialized with the step \[µs\]
    /// (absent: 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_overhead_us: Option<CitedEntry>,
    /// Generative models on a runtime whose decode attention runs one thread block per
    /// sequence and head: one block's time per cached token per layer \[ns\] (absent: such a
    /// tier is refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attention_block_ns_per_token: Option<CitedEntry>,
    /// Fixed time per layer of a forward pass (a batch, or an iteration of a generative model),
    /// on top of `batch_overhead_ms` \[ms\] (absent: 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer_overhead_ms: Option<CitedEntry>,
    /// Fraction of the bandwidth a generative model's KV-cache read reaches (absent: `memory`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attention_memory: Option<CitedEntry>,
    /// CPUs: the serial fraction of a forward pass split across cores (Amdahl), which makes
    /// `k` cores compute `k / (1 + s (k − 1))` times as fast as one (absent: 0, linear).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial_fraction: Option<CitedEntry>,
}

/// The links between the devices of a unit, which tensor parallelism's all-reduces cross.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct InterconnectFile {
    /// Fixed time of one all-reduce of a small message across a replica's devices \[µs\].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allreduce_latency_us: Option<CitedEntry>,
    /// Bandwidth one device sends into the collective, one direction \[GB/s = 1e9 B/s\].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_gbps: Option<CitedEntry>,
    /// "switch" (default: every device reaches every other at `bandwidth_gbps`, NVSwitch) or
    /// "mesh" (point-to-point links spread evenly over the unit's other devices, so a group of
    /// `d` of `N` devices reaches its peers over `(d−1)/(N−1)` of them: Infinity Fabric, Gaudi).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<toml::Spanned<String>>,
}

/// Serving configuration, not a hardware fact; a scenario tier may override it.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BatchingFile {
    pub max_batch: Spanned<u32>,
    #[serde(default)]
    pub window_ms: Option<Spanned<f64>>,
    /// Inferentia-style compiled shapes: a batch is padded up to the next one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiled_batch_sizes: Option<Spanned<Vec<u32>>>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PriceFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// On-prem purchase price of one unit \[USD\].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purchase_usd: Option<CitedEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_demand_usd_per_hour: Option<CitedEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserved_1y_usd_per_hour: Option<CitedEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserved_3y_usd_per_hour: Option<CitedEntry>,
    /// Spot or preemptible hourly price (enables `spot` when a tier lists it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spot_usd_per_hour: Option<CitedEntry>,
    /// Yearly change of the hourly prices (negative = cheaper), from the price's own history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_per_year: Option<CitedEntry>,
    /// The provider's internet egress schedule, by name (see `hardware::egress`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress: Option<Spanned<String>>,
}

/// Written by `tco-sim calibrate`: where and how the performance numbers were measured.
#[derive(Debug, Deserialize, Serialize, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CalibrationFile {
    pub host: String,
    pub date: String,
    pub method: String,
    pub tool_version: String,
    /// Further measured figures (single-core GFLOP/s, triad GB/s, …) for the record.
    #[serde(default)]
    pub measured: BTreeMap<String, f64>,
}

impl CitedFileEntry {
    /// A new entry (for writers such as `calibrate`).
    pub fn new(value: f64, source: &str, basis: Basis, note: Option<String>) -> Self {
        CitedFileEntry {
            value: Spanned::new(0..0, value),
            source: Spanned::new(0..0, source.to_string()),
            basis,
            note,
            log_sd: None,
        }
    }
}
