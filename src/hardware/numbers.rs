//! The cited numbers of a hardware profile, each declared once — where it is written in the
//! profile file, its name in reports, the unit it is written in, what values are valid and what
//! it means — and [`Valid`], the range a declared number accepts (shared with the cost
//! assumptions of [`crate::cost::inputs`], which sit later in the pipeline).
//!
//! Profile validation ([`super::Profile::from_source`]) reads and checks every number through its
//! declaration; [`super::Profile::cited_numbers`] (the report's assumptions and `results.json`
//! `inputs`) and the table in `docs/profile-format.md` ([`docs_table`]) list them from the same
//! declarations, so a number cannot be validated but missing from the report, or documented with
//! a range the code does not check.

use toml::Spanned;

use super::Profile;
use super::file::{CitedEntry, ProfileFile};
use crate::cite::{Cited, Sources};
use crate::input::{InputError, NumberCheck, SourceFile};

/// What values a declared number accepts: a lower bound (strict or not), an upper bound, whether
/// it must be whole, and `text` saying so in words (the help line of an error and the docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Valid {
    pub min: Option<f64>,
    /// The lower bound itself is invalid (`> 0` rather than `≥ 0`).
    pub strict_min: bool,
    pub max: Option<f64>,
    pub whole: bool,
    pub text: &'static str,
}

impl Valid {
    /// From `min` to `max`, both included.
    pub const fn from_to(min: f64, max: f64, text: &'static str) -> Valid {
        Valid {
            min: Some(min),
            strict_min: false,
            max: Some(max),
            whole: false,
            text,
        }
    }

    /// Above `min`, `min` excluded, up to `max` included: a fraction in (0, 1].
    pub const fn above_to(min: f64, max: f64, text: &'static str) -> Valid {
        Valid {
            min: Some(min),
            strict_min: true,
            max: Some(max),
            whole: false,
            text,
        }
    }

    /// `min` or more.
    pub const fn at_least(min: f64, text: &'static str) -> Valid {
        Valid {
            min: Some(min),
            strict_min: false,
            max: None,
            whole: false,
            text,
        }
    }

    /// More than `min`.
    pub const fn above(min: f64, text: &'static str) -> Valid {
        Valid {
            min: Some(min),
            strict_min: true,
            max: None,
            whole: false,
            text,
        }
    }

    /// The same range, whole numbers only.
    pub const fn whole(self) -> Valid {
        Valid {
            whole: true,
            ..self
        }
    }

    /// Check one spanned value; errors name `field`, the value and [`Valid::text`].
    pub fn check(
        &self,
        src: &SourceFile,
        field: &str,
        v: &Spanned<f64>,
    ) -> Result<f64, InputError> {
        let x = NumberCheck { source: src, field }.range(
            v,
            self.min,
            self.strict_min,
            self.max,
            self.text,
        )?;
        if self.whole && x.fract() != 0.0 {
            return Err(src
                .error(
                    v,
                    field,
                    format!("= {} is not a whole number", crate::input::shown(x)),
                )
                .with_help(format!("valid: {}", self.text)));
        }
        Ok(x)
    }
}

/// When a profile must give a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    Required,
    /// Required in a `kind = "cpu"` profile, optional otherwise.
    RequiredForCpu,
    Optional,
    /// At least one peak precision must be given.
    OneOfPeaks,
    /// At least one price must be given.
    OneOfPrices,
}

impl Presence {
    fn label(self) -> &'static str {
        match self {
            Presence::Required => "required",
            Presence::RequiredForCpu => "required for `cpu`",
            Presence::Optional => "optional",
            Presence::OneOfPeaks => "at least one precision",
            Presence::OneOfPrices => "at least one price",
        }
    }
}

/// One cited number of a profile file.
#[derive(Debug, Clone, Copy)]
pub struct ProfileNumber {
    /// Where it is written in a profile file, e.g. `chip.memory_gb`.
    pub key: &'static str,
    /// Its name in reports and `results.json`, with the SI unit it is held in when that differs
    /// from the written one, e.g. `chip.memory [B]`.
    pub label: &'static str,
    /// The unit it is written in.
    pub unit: &'static str,
    /// Written unit → held unit (GB → B is 1e9).
    pub scale: f64,
    pub valid: Valid,
    pub presence: Presence,
    /// What it means, for the docs.
    pub help: &'static str,
    raw: fn(&ProfileFile) -> Option<&CitedEntry>,
    held: fn(&Profile) -> Option<&Cited>,
    held_mut: fn(&mut Profile) -> Option<&mut Cited>,
}

impl ProfileNumber {
    /// Read this number from a profile file: resolve its source, check its range, convert it to
    /// the unit it is held in. `None` when the file does not give it.
    pub fn read(
        &self,
        src: &SourceFile,
        sources: &Sources,
        f: &ProfileFile,
    ) -> Result<Option<Cited>, InputError> {
        let Some(e) = (self.raw)(f) else {
            return Ok(None);
        };
        let c = sources.resolve(src, self.key, e)?;
        self.valid.check(src, self.key, &e.value)?;
        Ok(Some(c.scaled(self.scale)))
    }

    /// The validated value in a profile, if it has one.
    pub fn get<'a>(&self, p: &'a Profile) -> Option<&'a Cited> {
        (self.held)(p)
    }

    /// The validated value in a profile, to change (the uncertainty analysis sets sampled
    /// values, in the held unit).
    pub fn get_mut<'a>(&self, p: &'a mut Profile) -> Option<&'a mut Cited> {
        (self.held_mut)(p)
    }
}

const WHOLE_UNITS: Valid = Valid::from_to(1.0, 1e6, "a whole number from 1 to 1,000,000").whole();
// The upper bounds are far above any unit on sale, so they never refuse a real profile; they
// exist so that a typo (1e308, a price in cents) is refused here instead of printing "$inf" or
// "NaN %" at the end of a run. Each is the largest published figure ×10 or more, as its `help`
// says; the lower bounds of rates (bandwidth, peak, efficiency) keep a service time finite.
const FRACTION: Valid = Valid::from_to(0.001, 1.0, "a fraction from 0.001 to 1");
const PURCHASE_USD: Valid = Valid::from_to(0.0, 1e8, "USD from 0 to 100,000,000");
const USD_PER_HOUR: Valid = Valid::from_to(0.0, 1_000.0, "USD per hour from 0 to 1,000");

pub const CHIPS: ProfileNumber = ProfileNumber {
    key: "chips",
    label: "chips",
    unit: "chips",
    scale: 1.0,
    valid: WHOLE_UNITS,
    presence: Presence::Required,
    help: "CPU sockets or accelerator devices in one unit",
    raw: |f| Some(&f.chips),
    held: |p| Some(&p.chips),
    held_mut: |p| Some(&mut p.chips),
};
pub const CORES: ProfileNumber = ProfileNumber {
    key: "chip.cores",
    label: "chip.cores",
    unit: "cores",
    scale: 1.0,
    valid: WHOLE_UNITS,
    presence: Presence::RequiredForCpu,
    help: "CPU cores per chip, each serving one request at a time",
    raw: |f| f.chip.cores.as_ref(),
    held: |p| p.cores_per_chip.as_ref(),
    held_mut: |p| p.cores_per_chip.as_mut(),
};
pub const CLOCK: ProfileNumber = ProfileNumber {
    key: "chip.clock_ghz",
    label: "chip.clock_ghz",
    unit: "GHz",
    scale: 1.0,
    valid: Valid::above_to(0.0, 10.0, "a clock in GHz > 0, up to 10"),
    presence: Presence::Optional,
    help: "sustained all-core clock (no shipping CPU sustains 6 GHz; 10 leaves room)",
    raw: |f| f.chip.clock_ghz.as_ref(),
    held: |p| p.clock_ghz.as_ref(),
    held_mut: |p| p.clock_ghz.as_mut(),
};
pub const L2_PER_CORE: ProfileNumber = ProfileNumber {
    key: "chip.l2_mb_per_core",
    label: "chip.l2_per_core [B]",
    unit: "MB (1e6 B)",
    scale: 1e6,
    valid: Valid::from_to(0.0, 1_000.0, "MB from 0 to 1,000"),
    presence: Presence::Optional,
    help: "CPUs only: private L2 cache of one core (at most 1,000 MB: the largest shipping L2 is 4 MB per core, ×250). With `chip.llc_mb` it decides whether a model's weights stay in cache (perf.rs, \"cache-resident weights\"); absent counts as 0. Vendors write cache sizes in binary MB: 1 MiB is 1.049 here, as `calibrate` writes it",
    raw: |f| f.chip.l2_mb_per_core.as_ref(),
    held: |p| p.l2_bytes_per_core.as_ref(),
    held_mut: |p| p.l2_bytes_per_core.as_mut(),
};
pub const LLC: ProfileNumber = ProfileNumber {
    key: "chip.llc_mb",
    label: "chip.llc [B]",
    unit: "MB (1e6 B)",
    scale: 1e6,
    valid: Valid::from_to(0.0, 100_000.0, "MB from 0 to 100,000"),
    presence: Presence::Optional,
    help: "CPUs only: shared last-level cache (L3, or the system-level cache of Arm chips) of one chip, or of the VM's share of it (at most 100,000 MB: the largest L3 per socket is 1,152 MB, ×80). Weights that fit in the cache the executing cores reach are not re-read from DRAM per request; absent counts as 0. A vendor's \"32 MB\" cache is 32 MiB, 33.55 here",
    raw: |f| f.chip.llc_mb.as_ref(),
    held: |p| p.llc_bytes_per_chip.as_ref(),
    held_mut: |p| p.llc_bytes_per_chip.as_mut(),
};
pub const MEMORY: ProfileNumber = ProfileNumber {
    key: "chip.memory_gb",
    label: "chip.memory [B]",
    unit: "GB (1e9 B)",
    scale: 1e9,
    valid: Valid::from_to(0.001, 100_000.0, "GB from 0.001 to 100,000"),
    presence: Presence::Required,
    help: "memory per chip that holds weights and KV cache (at most 100,000 GB: a socket holds at most ~12 TB of DRAM, ×8). For an accelerator, the total its driver reports (nvidia-smi, rocminfo), which a serving engine's memory fraction multiplies: a vendor's \"80 GB\" is usually 80 GiB (an H100 reports 81,559 MiB, 85.52 GB)",
    raw: |f| Some(&f.chip.memory_gb),
    held: |p| Some(&p.memory_bytes_per_chip),
    held_mut: |p| Some(&mut p.memory_bytes_per_chip),
};
pub const BANDWIDTH: ProfileNumber = ProfileNumber {
    key: "chip.memory_bandwidth_gbps",
    label: "chip.memory_bandwidth [B/s]",
    unit: "GB/s (1e9 B/s)",
    scale: 1e9,
    valid: Valid::from_to(0.1, 100_000.0, "GB/s from 0.1 to 100,000"),
    presence: Presence::Required,
    help: "sustainable-peak memory bandwidth per chip (at most 100,000 GB/s: the fastest HBM3e parts give 8,000 GB/s, ×12)",
    raw: |f| Some(&f.chip.memory_bandwidth_gbps),
    held: |p| Some(&p.memory_bandwidth_per_chip),
    held_mut: |p| Some(&mut p.memory_bandwidth_per_chip),
};

/// One dense peak per precision; the label carries the precision as `Precision` prints it.
macro_rules! peak {
    ($name:ident, $field:ident, $precision:ident, $key:literal, $label:literal) => {
        pub const $name: ProfileNumber = ProfileNumber {
            key: $key,
            label: $label,
            unit: "TFLOP/s or TOPS",
            scale: 1e12,
            valid: Valid::from_to(0.001, 100_000.0, "TFLOP/s from 0.001 to 100,000"),
            presence: Presence::OneOfPeaks,
            help: "dense (not 2:4-sparse) peak per chip at this precision (at most 100,000: the largest published dense peak is under 10,000, ×10)",
            raw: |f| f.chip.peak_tflops.$field.as_ref(),
            held: |p| p.peak_per_chip.get(&super::Precision::$precision),
            held_mut: |p| p.peak_per_chip.get_mut(&super::Precision::$precision),
        };
    };
}
peak!(
    PEAK_FP32,
    fp32,
    Fp32,
    "chip.peak_tflops.fp32",
    "chip.peak.fp32 [FLOP/s]"
);
peak!(
    PEAK_FP16,
    fp16,
    Fp16,
    "chip.peak_tflops.fp16",
    "chip.peak.fp16 [FLOP/s]"
);
peak!(
    PEAK_INT8,
    int8,
    Int8,
    "chip.peak_tflops.int8",
    "chip.peak.int8 [FLOP/s]"
);
peak!(
    PEAK_FP8,
    fp8,
    Fp8,
    "chip.peak_tflops.fp8",
    "chip.peak.fp8 [FLOP/s]"
);

pub const IDLE_POWER: ProfileNumber = ProfileNumber {
    key: "power.idle_w",
    label: "power.idle_w",
    unit: "W",
    scale: 1.0,
    valid: Valid::from_to(0.0, 2e6, "watts from 0 to 2,000,000"),
    presence: Presence::Required,
    help: "the whole unit at idle; at most `power.peak_w`",
    raw: |f| Some(&f.power.idle_w),
    held: |p| Some(&p.idle_power_w),
    held_mut: |p| Some(&mut p.idle_power_w),
};
pub const PEAK_POWER: ProfileNumber = ProfileNumber {
    key: "power.peak_w",
    label: "power.peak_w",
    unit: "W",
    scale: 1.0,
    valid: Valid::above_to(0.0, 2e6, "watts > 0, up to 2,000,000"),
    presence: Presence::Required,
    help: "the whole unit at full load (at most 2 MW: the largest rack-scale unit draws ~130 kW, ×15)",
    raw: |f| Some(&f.power.peak_w),
    held: |p| Some(&p.peak_power_w),
    held_mut: |p| Some(&mut p.peak_power_w),
};
pub const EFFICIENCY_COMPUTE: ProfileNumber = ProfileNumber {
    key: "efficiency.compute",
    label: "efficiency.compute",
    unit: "fraction",
    scale: 1.0,
    valid: FRACTION,
    presence: Presence::Required,
    help: "fraction of peak compute a real inference runtime reaches (e_c)",
    raw: |f| Some(&f.efficiency.compute),
    held: |p| Some(&p.efficiency_compute),
    held_mut: |p| Some(&mut p.efficiency_compute),
};
pub const EFFICIENCY_COMPUTE_CONV: ProfileNumber = ProfileNumber {
    key: "efficiency.compute_conv",
    label: "efficiency.compute_conv",
    unit: "fraction",
    scale: 1.0,
    valid: FRACTION,
    presence: Presence::Optional,
    help: "fraction of peak compute reached on convolution-dominated classic models (`op_class = \"conv\"`: ResNet-50); absent: efficiency.compute",
    raw: |f| f.efficiency.compute_conv.as_ref(),
    held: |p| p.efficiency_compute_conv.as_ref(),
    held_mut: |p| p.efficiency_compute_conv.as_mut(),
};
pub const EFFICIENCY_COMPUTE_MATMUL: ProfileNumber = ProfileNumber {
    key: "efficiency.compute_matmul",
    label: "efficiency.compute_matmul",
    unit: "fraction",
    scale: 1.0,
    valid: FRACTION,
    presence: Presence::Optional,
    help: "fraction of peak compute reached on matmul-dominated models: classic ones with `op_class = \"matmul\"` (BERT, embedding models) and every generative model (its prefill and decode are transformer GEMMs); absent: efficiency.compute",
    raw: |f| f.efficiency.compute_matmul.as_ref(),
    held: |p| p.efficiency_compute_matmul.as_ref(),
    held_mut: |p| p.efficiency_compute_matmul.as_mut(),
};
pub const EFFICIENCY_MEMORY: ProfileNumber = ProfileNumber {
    key: "efficiency.memory",
    label: "efficiency.memory",
    unit: "fraction",
    scale: 1.0,
    valid: FRACTION,
    presence: Presence::Required,
    help: "fraction of peak memory bandwidth a real runtime reaches (e_m)",
    raw: |f| Some(&f.efficiency.memory),
    held: |p| Some(&p.efficiency_memory),
    held_mut: |p| Some(&mut p.efficiency_memory),
};
pub const EFFICIENCY_ATTENTION_MEMORY: ProfileNumber = ProfileNumber {
    key: "efficiency.attention_memory",
    label: "efficiency.attention_memory",
    unit: "fraction",
    scale: 1.0,
    valid: FRACTION,
    presence: Presence::Optional,
    help: "generative models: fraction of peak memory bandwidth the attention's KV-cache read reaches, where a runtime's attention kernel streams the cache less well than its GEMMs stream weights; absent: efficiency.memory",
    raw: |f| f.efficiency.attention_memory.as_ref(),
    held: |p| p.efficiency_attention_memory.as_ref(),
    held_mut: |p| p.efficiency_attention_memory.as_mut(),
};
pub const SERIAL_FRACTION: ProfileNumber = ProfileNumber {
    key: "efficiency.serial_fraction",
    label: "efficiency.serial_fraction",
    unit: "fraction",
    scale: 1.0,
    valid: Valid::from_to(0.0, 0.5, "a fraction from 0 to 0.5"),
    presence: Presence::Optional,
    help: "CPUs: Amdahl's serial fraction s of a forward pass split across k cores (a CPU instance of cores_per_request cores, or a generative replica on the whole chip), which then computes k / (1 + s (k - 1)) times as fast as one core; absent: 0 (linear)",
    raw: |f| f.efficiency.serial_fraction.as_ref(),
    held: |p| p.serial_fraction.as_ref(),
    held_mut: |p| p.serial_fraction.as_mut(),
};
pub const BATCH_OVERHEAD: ProfileNumber = ProfileNumber {
    key: "efficiency.batch_overhead_ms",
    label: "efficiency.batch_overhead [s]",
    unit: "ms",
    scale: 1e-3,
    valid: Valid::from_to(0.0, 10_000.0, "milliseconds from 0 to 10,000"),
    presence: Presence::Required,
    help: "fixed time per batch: launch, framework and dispatch overhead (t0; at most 10 s, a thousand times a slow framework's 10 ms)",
    raw: |f| Some(&f.efficiency.batch_overhead_ms),
    held: |p| Some(&p.batch_overhead_s),
    held_mut: |p| Some(&mut p.batch_overhead_s),
};
pub const ITERATION_OVERHEAD: ProfileNumber = ProfileNumber {
    key: "efficiency.iteration_overhead_ms",
    label: "efficiency.iteration_overhead [s]",
    unit: "ms",
    scale: 1e-3,
    valid: Valid::from_to(0.0, 10_000.0, "milliseconds from 0 to 10,000"),
    presence: Presence::Optional,
    help: "generative models: fixed time of one engine iteration (scheduling, sampling, detokenising and streaming a token, its kernel launches), in place of batch_overhead_ms, which then holds for classic batches only (at most 10 s). Absent: batch_overhead_ms",
    raw: |f| f.efficiency.iteration_overhead_ms.as_ref(),
    held: |p| p.iteration_overhead_s.as_ref(),
    held_mut: |p| p.iteration_overhead_s.as_mut(),
};
pub const STREAM_OVERHEAD: ProfileNumber = ProfileNumber {
    key: "efficiency.stream_overhead_us",
    label: "efficiency.stream_overhead [s]",
    unit: "us",
    scale: 1e-6,
    valid: Valid::from_to(0.0, 10_000.0, "microseconds from 0 to 10,000"),
    presence: Presence::Optional,
    help: "generative models served streaming: host time per running sequence per iteration (the server detokenising and sending each sequence's token, scheduling it), serialized with the step; paid by every decoding sequence of every iteration a scenario plans or simulates (at most 10 ms). Absent: 0",
    raw: |f| f.efficiency.stream_overhead_us.as_ref(),
    held: |p| p.stream_overhead_s.as_ref(),
    held_mut: |p| p.stream_overhead_s.as_mut(),
};
pub const ATTENTION_BLOCK: ProfileNumber = ProfileNumber {
    key: "efficiency.attention_block_ns_per_token",
    label: "efficiency.attention_block_per_token [s]",
    unit: "ns",
    scale: 1e-9,
    valid: Valid::from_to(0.0, 1_000.0, "nanoseconds from 0 to 1,000"),
    presence: Presence::Optional,
    help: "generative models on a runtime whose decode attention runs one thread block per sequence and head without splitting a context (a tier's decode_attention = \"per-head\", TensorRT-LLM before 0.13.0): the time one block takes per cached token per layer, so a step's attention lasts at least layers x longest context x this (at most 1 us). Absent: a per-head tier is refused",
    raw: |f| f.efficiency.attention_block_ns_per_token.as_ref(),
    held: |p| p.attention_block_s_per_token.as_ref(),
    held_mut: |p| p.attention_block_s_per_token.as_mut(),
};
pub const LAYER_OVERHEAD: ProfileNumber = ProfileNumber {
    key: "efficiency.layer_overhead_ms",
    label: "efficiency.layer_overhead [s]",
    unit: "ms",
    scale: 1e-3,
    valid: Valid::from_to(0.0, 100.0, "milliseconds from 0 to 100"),
    presence: Presence::Optional,
    help: "fixed time per layer of one forward pass (a batch, or an iteration of a generative model), added to batch_overhead_ms: the synchronisation between layers of a compiled graph or the kernel launches of a layer, which a deep model at batch 1 pays once per layer (at most 100 ms, 10,000 times a 10 us kernel launch). Absent: 0",
    raw: |f| f.efficiency.layer_overhead_ms.as_ref(),
    held: |p| p.layer_overhead_s.as_ref(),
    held_mut: |p| p.layer_overhead_s.as_mut(),
};
pub const ALLREDUCE_LATENCY: ProfileNumber = ProfileNumber {
    key: "interconnect.allreduce_latency_us",
    label: "interconnect.allreduce_latency [s]",
    unit: "us",
    scale: 1e-6,
    valid: Valid::from_to(0.0, 100_000.0, "microseconds from 0 to 100,000"),
    presence: Presence::Optional,
    help: "accelerators: fixed time of one all-reduce of a small message across the devices of a tensor-parallel replica (two per layer per iteration). Absent: 0, tensor parallelism's collectives are free (at most 100 ms, 1,000 times a slow network's)",
    raw: |f| {
        f.interconnect
            .as_ref()
            .and_then(|i| i.allreduce_latency_us.as_ref())
    },
    held: |p| p.allreduce_latency_s.as_ref(),
    held_mut: |p| p.allreduce_latency_s.as_mut(),
};
pub const INTERCONNECT_BANDWIDTH: ProfileNumber = ProfileNumber {
    key: "interconnect.bandwidth_gbps",
    label: "interconnect.bandwidth [B/s]",
    unit: "GB/s (1e9 B/s)",
    scale: 1e9,
    valid: Valid::above_to(0.0, 100_000.0, "GB/s > 0, up to 100,000"),
    presence: Presence::Optional,
    help: "accelerators: bandwidth one device sends into a collective, one direction (NVLink 4: 450 GB/s of its 900 GB/s both ways). A ring all-reduce of m bytes over d devices moves 2(d-1)/d x m per device. Absent: the collectives' bytes are free (at most 100,000 GB/s, ~100 times NVLink 5)",
    raw: |f| {
        f.interconnect
            .as_ref()
            .and_then(|i| i.bandwidth_gbps.as_ref())
    },
    held: |p| p.interconnect_bandwidth.as_ref(),
    held_mut: |p| p.interconnect_bandwidth.as_mut(),
};
pub const SERVICE_CV: ProfileNumber = ProfileNumber {
    key: "efficiency.service_cv",
    label: "efficiency.service_cv",
    unit: "ratio (std / mean)",
    scale: 1.0,
    valid: Valid::from_to(0.0, 10.0, "a ratio from 0 (constant) to 10"),
    presence: Presence::Optional,
    help: "coefficient of variation of the service time around the roofline time: a log-normal multiplier of mean 1, drawn per request on a CPU core, per batch on an accelerator, per iteration for a generative model. 0 makes every service time the roofline's. A tier may override it (`service_cv`). Absent: 0.25 on a CPU, 0.05 on an accelerator (estimates; see docs/profile-format.md)",
    raw: |f| f.efficiency.service_cv.as_ref(),
    held: |p| Some(&p.service_cv),
    held_mut: |p| Some(&mut p.service_cv),
};
pub const PURCHASE: ProfileNumber = ProfileNumber {
    key: "price.purchase_usd",
    label: "price.purchase_usd",
    unit: "USD",
    scale: 1.0,
    valid: PURCHASE_USD,
    presence: Presence::OneOfPrices,
    help: "on-prem purchase price of one unit (enables `on-prem`; at most $100 M: a rack-scale GPU system lists near $4 M, ×25)",
    raw: |f| f.price.purchase_usd.as_ref(),
    held: |p| p.prices.purchase_usd.as_ref(),
    held_mut: |p| p.prices.purchase_usd.as_mut(),
};
pub const ON_DEMAND: ProfileNumber = ProfileNumber {
    key: "price.on_demand_usd_per_hour",
    label: "price.on_demand_usd_per_hour",
    unit: "USD/h",
    scale: 1.0,
    valid: USD_PER_HOUR,
    presence: Presence::OneOfPrices,
    help: "hourly on-demand price (enables `on-demand`, and with a reservation `hybrid-*`; at most $1,000/h: the dearest published instance is near $100/h, ×10)",
    raw: |f| f.price.on_demand_usd_per_hour.as_ref(),
    held: |p| p.prices.on_demand_usd_per_hour.as_ref(),
    held_mut: |p| p.prices.on_demand_usd_per_hour.as_mut(),
};
pub const RESERVED_1Y: ProfileNumber = ProfileNumber {
    key: "price.reserved_1y_usd_per_hour",
    label: "price.reserved_1y_usd_per_hour",
    unit: "USD/h",
    scale: 1.0,
    valid: USD_PER_HOUR,
    presence: Presence::OneOfPrices,
    help: "effective hourly price of a 1-year reservation (enables `reserved-1y`)",
    raw: |f| f.price.reserved_1y_usd_per_hour.as_ref(),
    held: |p| p.prices.reserved_1y_usd_per_hour.as_ref(),
    held_mut: |p| p.prices.reserved_1y_usd_per_hour.as_mut(),
};
pub const RESERVED_3Y: ProfileNumber = ProfileNumber {
    key: "price.reserved_3y_usd_per_hour",
    label: "price.reserved_3y_usd_per_hour",
    unit: "USD/h",
    scale: 1.0,
    valid: USD_PER_HOUR,
    presence: Presence::OneOfPrices,
    help: "effective hourly price of a 3-year reservation (enables `reserved-3y`)",
    raw: |f| f.price.reserved_3y_usd_per_hour.as_ref(),
    held: |p| p.prices.reserved_3y_usd_per_hour.as_ref(),
    held_mut: |p| p.prices.reserved_3y_usd_per_hour.as_mut(),
};

pub const SPOT: ProfileNumber = ProfileNumber {
    key: "price.spot_usd_per_hour",
    label: "price.spot_usd_per_hour",
    unit: "USD/h",
    scale: 1.0,
    valid: USD_PER_HOUR,
    presence: Presence::Optional,
    help: "hourly spot (AWS) or preemptible (OCI) price, e.g. a snapshot's average (enables `spot` for a tier that lists it in `options`; never chosen by default)",
    raw: |f| f.price.spot_usd_per_hour.as_ref(),
    held: |p| p.prices.spot_usd_per_hour.as_ref(),
    held_mut: |p| p.prices.spot_usd_per_hour.as_mut(),
};
pub const CHANGE_PER_YEAR: ProfileNumber = ProfileNumber {
    key: "price.change_per_year",
    label: "price.change_per_year",
    unit: "fraction per year",
    scale: 1.0,
    valid: Valid::from_to(
        -0.5,
        0.5,
        "a yearly change from -0.5 to 0.5, e.g. -0.1 for 10 % cheaper each year",
    ),
    presence: Presence::Optional,
    help: "yearly change of the hourly prices (on-demand, reservations, spot), from the price's own history; negative = cheaper. Year y pays p·(1+g)^(y−1); a reservation keeps the price of the year it is bought. Absent: no trend (at most ±50 %/yr: the steepest published cut, P5's 44 % in June 2025, annualises to −25 %/yr)",
    raw: |f| f.price.change_per_year.as_ref(),
    held: |p| p.prices.change_per_year.as_ref(),
    held_mut: |p| p.prices.change_per_year.as_mut(),
};

/// Every cited number of a profile, in the order reports list them.
pub static PROFILE_NUMBERS: &[ProfileNumber] = &[
    CHIPS,
    CORES,
    CLOCK,
    L2_PER_CORE,
    LLC,
    MEMORY,
    BANDWIDTH,
    PEAK_FP32,
    PEAK_FP16,
    PEAK_INT8,
    PEAK_FP8,
    IDLE_POWER,
    PEAK_POWER,
    EFFICIENCY_COMPUTE,
    EFFICIENCY_COMPUTE_CONV,
    EFFICIENCY_COMPUTE_MATMUL,
    EFFICIENCY_MEMORY,
    EFFICIENCY_ATTENTION_MEMORY,
    SERIAL_FRACTION,
    BATCH_OVERHEAD,
    ITERATION_OVERHEAD,
    STREAM_OVERHEAD,
    ATTENTION_BLOCK,
    LAYER_OVERHEAD,
    SERVICE_CV,
    ALLREDUCE_LATENCY,
    INTERCONNECT_BANDWIDTH,
    PURCHASE,
    ON_DEMAND,
    RESERVED_1Y,
    RESERVED_3Y,
    SPOT,
    CHANGE_PER_YEAR,
];

/// The markdown table of every cited profile number, as `docs/profile-format.md` shows it
/// between its `profile-numbers` markers.
pub fn docs_table() -> String {
    let mut out = String::from(
        "| key | unit | valid | given | in reports as | meaning |\n|---|---|---|---|---|---|\n",
    );
    for n in PROFILE_NUMBERS {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | `{}` | {} |\n",
            n.key,
            n.unit,
            n.valid.text,
            n.presence.label(),
            n.label,
            n.help
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_labels_are_unique() {
        let mut keys: Vec<&str> = PROFILE_NUMBERS.iter().map(|n| n.key).collect();
        let mut labels: Vec<&str> = PROFILE_NUMBERS.iter().map(|n| n.label).collect();
        keys.sort();
        labels.sort();
        let n = PROFILE_NUMBERS.len();
        keys.dedup();
        labels.dedup();
        assert_eq!((keys.len(), labels.len()), (n, n));
    }

    #[test]
    fn a_whole_number_rejects_a_fraction_with_the_declared_text() {
        let src = SourceFile::from_text("v.toml", "x = 2.5\n");
        #[derive(serde::Deserialize)]
        struct X {
            x: Spanned<f64>,
        }
        let x: X = src.parse().unwrap();
        let e = WHOLE_UNITS.check(&src, "chips", &x.x).unwrap_err();
        assert_eq!(e.message, "= 2.5 is not a whole number");
        assert_eq!(
            e.help.as_deref(),
            Some("valid: a whole number from 1 to 1,000,000")
        );
        assert_eq!(e.position, Some((1, 5)));
        assert_eq!(
            FRACTION.check(&src, "f", &x.x).unwrap_err().message,
            "= 2.5 is out of range"
        );
    }
}
