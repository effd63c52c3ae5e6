//! From measurements to a hardware profile in the shipped format (`hardware::file::ProfileFile`),
//! so a scenario can name the written file directly.
//!
//! How the measured numbers map onto the profile's roofline, t = F / (P·e_c) and
//! (W + b·A) / (BW·e_m) (DESIGN.md, "Service time"):
//!
//! - **Peak P (fp32)** stays the *theoretical* dense peak, as in every shipped profile, so
//!   efficiencies compare across profiles: per core, FMA pipes × f32 lanes × 2 FLOP × clock.
//!   The clock is the one the OS shows (sysfs `cpuinfo_max_freq`, else `/proc/cpuinfo`
//!   `cpu MHz`), and the FMA pipe count is not readable from any register: we assume 2 (every
//!   AVX-512 Xeon since Skylake-SP Gold, AVX2 cores since Haswell, Neoverse N1), and say so in
//!   the note. If the measured register-only FMA ceiling *exceeds* that figure, the clock the OS
//!   showed is not the clock the core runs (turbo; a VM showing its nominal TSC clock) or the
//!   core has more pipes, and the measured ceiling becomes the peak (`basis = "measured"`).
//!   Without a clock, the ceiling is the peak as well.
//! - **e_c** = measured all-core f32 GEMM (best square shape) / P.
//! - **Peak (int8)**: the format has one `efficiency.compute` for all precisions, so the int8
//!   peak is written as measured int8 GEMM / e_c: then P_int8·e_c is exactly the measured int8
//!   throughput, which is what the simulator uses. The note gives the theoretical VNNI figure.
//!   fp16 and fp8 are not measured and are left out rather than guessed.
//! - **Bandwidth BW and e_m**: with a theoretical bandwidth (given by `--memory-bandwidth-gbps`,
//!   or the `--base` profile's when it describes a CPU with as many cores as this one), e_m =
//!   measured all-core triad / BW. Otherwise (no DMI table is read: it needs root and is
//!   absent in most VMs and containers) BW is the measured triad itself and e_m = 1.0.

use std::collections::BTreeMap;

use anyhow::Context;

use crate::cite::{Basis, CitedFileEntry, SourceFileEntry};
use crate::hardware::file::{
    CalibrationFile, ChipFile, EfficiencyFile, PeakFile, PowerFile, PriceFile, ProfileFile,
};

use super::Calibration;
use super::suite::Kind;

/// FMA pipes per core assumed for the theoretical peak (see the module doc).
pub const ASSUMED_FMA_PIPES: f64 = 2.0;

/// What the user supplied besides the measurements.
#[derive(Debug, Default)]
pub struct ProfileInputs {
    pub name: String,
    /// The `--base` profile, parsed (already validated by the caller).
    pub base: Option<ProfileFile>,
    pub memory_bandwidth_gbps: Option<f64>,
    pub purchase_usd: Option<f64>,
    pub usd_per_hour: Option<f64>,
    pub idle_w: Option<f64>,
    pub peak_w: Option<f64>,
}

/// The per-chip numbers the profile states, with the reasoning for the summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Derived {
    pub chips: f64,
    pub cores_per_chip: f64,
    /// Theoretical f32 peak of the whole machine from the OS clock [FLOP/s], if a clock is known.
    pub theoretical_fp32: Option<f64>,
    /// Measured register-only FMA ceiling, all cores [FLOP/s].
    pub fma_ceiling: f64,
    /// The peak written to the profile, whole machine [FLOP/s], and whether it is measured.
    pub peak_fp32: f64,
    pub peak_is_measured: bool,
    /// Best square f32 GEMM, all cores [FLOP/s].
    pub gemm_fp32: f64,
    pub e_c: f64,
    /// Best int8 GEMM, all cores [OP/s], and the theoretical VNNI peak if known.
    pub gemm_int8: Option<f64>,
    pub theoretical_int8: Option<f64>,
    /// Measured all-core triad [B/s].
    pub triad: f64,
    /// Theoretical bandwidth [B/s] and where it came from, if any.
    pub bandwidth: Option<(f64, String)>,
    pub e_m: f64,
    /// Things the summary must tell (a figure overridden, a count adjusted).
    pub warnings: Vec<String>,
}

/// Best all-core median of a kind (the largest over shapes), and its one-core median.
fn best(cal: &Calibration, kind: Kind) -> Option<(f64, f64)> {
    cal.results
        .iter()
        .filter(|r| {
            r.kind == kind
                && (kind != Kind::Sgemm || r.shape.is_some_and(|(m, n, k)| m == n && n == k))
        })
        .map(|r| (r.all_cores.stats.median, r.one_core.stats.median))
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

pub fn derive(cal: &Calibration, inputs: &ProfileInputs) -> anyhow::Result<Derived> {
    let cpu = &cal.cpu;
    let cores = cal.threads as f64;
    let mut warnings = Vec::new();
    // A profile states whole cores per chip; if the CPUs we may use do not split evenly over
    // the sockets (a restricted affinity mask), count the machine as one chip.
    let chips = if cal.threads.is_multiple_of(cpu.sockets.max(1)) {
        cpu.sockets.max(1) as f64
    } else {
        warnings.push(format!(
            "{} usable CPUs do not split evenly over {} sockets; the profile counts one chip",
            cal.threads, cpu.sockets
        ));
        1.0
    };
    let (fma_ceiling, _) =
        best(cal, Kind::FmaCeiling).context("the FMA ceiling was not measured")?;
    let (gemm_fp32, _) = best(cal, Kind::Sgemm).context("no square f32 GEMM was measured")?;
    let lanes = cal.f32_isa.f32_lanes() as f64;
    let theoretical_fp32 = cpu
        .clock
        .as_ref()
        .filter(|_| lanes > 1.0)
        .map(|c| cores * ASSUMED_FMA_PIPES * lanes * 2.0 * c.ghz * 1e9);
    // Anything measured above the "theoretical" figure proves that figure wrong.
    let floor = fma_ceiling.max(gemm_fp32);
    let (peak_fp32, peak_is_measured) = match theoretical_fp32 {
        Some(t) if t >= floor => (t, false),
        _ => (floor, true),
    };
    let e_c = (gemm_fp32 / peak_fp32).min(1.0);
    let gemm_int8 = best(cal, Kind::Igemm).map(|b| b.0);
    let theoretical_int8 = match (&cpu.clock, cal.int8_isa) {
        // vpdpbusd on the FMA pipes: 16 lanes × 4 products × 2 OP per pipe per cycle.
        (Some(c), super::kernels::Isa::Avx512Vnni) => {
            Some(cores * ASSUMED_FMA_PIPES * 128.0 * c.ghz * 1e9)
        }
        _ => None,
    };
    let (triad, _) = best(cal, Kind::Triad).context("the triad was not measured")?;
    let base_bw = inputs.base.as_ref().and_then(|b| {
        let same_cores =
            b.chip.cores.as_ref().is_some_and(|c| {
                (*c.value.get_ref() * *b.chips.value.get_ref() - cores).abs() < 0.5
            });
        same_cores.then(|| {
            (
                *b.chip.memory_bandwidth_gbps.value.get_ref() * 1e9 * *b.chips.value.get_ref(),
                format!("the --base profile `{}`", b.name.get_ref()),
            )
        })
    });
    let mut bandwidth = inputs
        .memory_bandwidth_gbps
        .map(|g| (g * 1e9, "--memory-bandwidth-gbps".to_string()))
        .or(base_bw);
    // A measured triad above the "theoretical" bandwidth proves that figure wrong (or meant
    // for another machine): say so and fall back to the measured triad rather than lose the
    // run.
    if let Some((bw, from)) = &bandwidth
        && triad > *bw * 1.02
    {
        warnings.push(format!(
            "the measured triad ({:.1} GB/s) exceeds the theoretical bandwidth from {from} ({:.1} GB/s), so the profile uses the triad; check that figure",
            triad / 1e9,
            bw / 1e9
        ));
        bandwidth = None;
    }
    let e_m = bandwidth
        .as_ref()
        .map_or(1.0, |(bw, _)| (triad / bw).min(1.0));
    if cpu.virtualized
        && let Some(c) = cpu.llc
    {
        warnings.push(format!(
            "this is a VM: its {:.1} MB last-level cache is shared with neighbours the OS does not show, so the profile leaves chip.llc_mb out (weights then fit only in the cores' L2); add the VM's share by hand if you know it",
            c.bytes as f64 / 1e6
        ));
    }
    Ok(Derived {
        chips,
        cores_per_chip: cores / chips,
        theoretical_fp32,
        fma_ceiling,
        peak_fp32,
        peak_is_measured,
        gemm_fp32,
        e_c,
        gemm_int8,
        theoretical_int8,
        triad,
        bandwidth,
        e_m,
        warnings,
    })
}

/// Build the profile. Keeps the base's description, chip model, memory size, power, batching,
/// prices and sources; replaces every performance number with a measured one.
pub fn build(cal: &Calibration, inputs: &ProfileInputs) -> anyhow::Result<ProfileFile> {
    let d = derive(cal, inputs)?;
    let cpu = &cal.cpu;
    let key = format!("calibrate-{}", cal.date);
    // Four significant digits: more than a noisy measurement supports, few enough to read.
    let measured =
        |v: f64, note: String| CitedFileEntry::new(sig4(v), &key, Basis::Measured, Some(note));
    let estimate =
        |v: f64, note: &str| CitedFileEntry::new(v, &key, Basis::Estimate, Some(note.to_string()));
    let user = |v: f64, flag: &str| {
        CitedFileEntry::new(
            v,
            &key,
            Basis::UserInput,
            Some(format!("given with {flag}")),
        )
    };
    let per_chip = |v: f64| v / d.chips;
    let clock_note = cpu
        .clock
        .as_ref()
        .map(|c| c.source.clone())
        .unwrap_or_default();

    let peak_note = match (&cpu.clock, d.peak_is_measured) {
        (Some(c), false) => format!(
            "{:.0} cores x {ASSUMED_FMA_PIPES} FMA pipes (assumed) x {} f32 lanes ({}) x 2 FLOP x {:.2} GHz ({}); measured FMA ceiling {:.1} GFLOP/s",
            d.cores_per_chip,
            cal.f32_isa.f32_lanes(),
            cal.f32_isa,
            c.ghz,
            c.source,
            d.fma_ceiling / 1e9
        ),
        (Some(c), true) => format!(
            "measured register-only FMA ceiling, all cores ({}); it exceeds the {:.1} GFLOP/s that {ASSUMED_FMA_PIPES} FMA pipes x {} lanes x 2 x {:.2} GHz ({}) give, so the core runs faster than that clock (turbo, or a VM showing its nominal clock)",
            cal.f32_isa,
            d.theoretical_fp32.unwrap_or(0.0) / 1e9,
            cal.f32_isa.f32_lanes(),
            c.ghz,
            c.source
        ),
        (None, _) => format!(
            "measured register-only FMA ceiling, all cores ({}); the OS shows no clock to derive a theoretical peak from",
            cal.f32_isa
        ),
    };
    let fp32 = CitedFileEntry::new(
        sig4(per_chip(d.peak_fp32) / 1e12),
        &key,
        if d.peak_is_measured {
            Basis::Measured
        } else {
            Basis::Derived
        },
        Some(peak_note),
    );
    let int8 = d.gemm_int8.map(|g| {
        let theo = d.theoretical_int8.map_or(String::new(), |t| {
            format!("; theoretical VNNI peak {:.2} TOPS (2 pipes x 64 multiply-adds x 2 x clock)", per_chip(t) / 1e12)
        });
        measured(
            per_chip(g / d.e_c) / 1e12,
            format!(
                "effective: measured int8 GEMM {:.1} GOP/s ({}) / efficiency.compute {:.3}, so that peak x efficiency = the measured int8 throughput (the format has one compute efficiency){theo}",
                g / 1e9,
                cal.int8_isa,
                d.e_c
            ),
        )
    });

    let (bw_entry, e_m_entry) = match (&d.bandwidth, &inputs.base) {
        (Some((_, from)), Some(b)) if from.starts_with("the --base") => (
            clone_entry(&b.chip.memory_bandwidth_gbps),
            measured(
                d.e_m,
                format!(
                    "measured all-core triad {:.1} GB/s / the base profile's bandwidth",
                    d.triad / 1e9
                ),
            ),
        ),
        (Some((bw, _)), _) => (
            user(per_chip(*bw) / 1e9, "--memory-bandwidth-gbps"),
            measured(
                d.e_m,
                format!(
                    "measured all-core triad {:.1} GB/s / {:.1} GB/s",
                    d.triad / 1e9,
                    bw / 1e9
                ),
            ),
        ),
        (None, _) => (
            measured(
                per_chip(d.triad) / 1e9,
                format!(
                    "measured all-core STREAM triad ({}); no theoretical bandwidth known (no DMI), so this is the sustained figure",
                    cal.stream_sizing
                ),
            ),
            measured(
                1.0,
                "the bandwidth above is already the measured triad".into(),
            ),
        ),
    };

    let base = inputs.base.as_ref();
    let memory_gb = match base {
        Some(b) => clone_entry(&b.chip.memory_gb),
        None => measured(
            cpu.mem_total_bytes.map_or(1.0, |b| b as f64 / 1e9) / d.chips,
            "/proc/meminfo MemTotal".into(),
        ),
    };
    let power = match base {
        Some(b) => PowerFile {
            idle_w: clone_entry(&b.power.idle_w),
            peak_w: clone_entry(&b.power.peak_w),
        },
        None => PowerFile {
            idle_w: inputs.idle_w.map_or_else(
                || {
                    estimate(
                        20.0 + 2.0 * d.cores_per_chip * d.chips,
                        "not measured: 20 W platform + 2 W per core; set --idle-w",
                    )
                },
                |w| user(w, "--idle-w"),
            ),
            peak_w: inputs.peak_w.map_or_else(
                || {
                    estimate(
                        40.0 + 8.0 * d.cores_per_chip * d.chips,
                        "not measured: 40 W platform + 8 W per core; set --peak-w",
                    )
                },
                |w| user(w, "--peak-w"),
            ),
        },
    };
    let efficiency = EfficiencyFile {
        compute: measured(
            d.e_c,
            format!(
                "measured all-core f32 GEMM {:.1} GFLOP/s (best square shape, {}) / peak {:.1} GFLOP/s",
                d.gemm_fp32 / 1e9,
                cal.f32_isa,
                d.peak_fp32 / 1e9
            ),
        ),
        memory: e_m_entry,
        batch_overhead_ms: match base {
            Some(b) => clone_entry(&b.efficiency.batch_overhead_ms),
            None => estimate(
                0.2,
                "not measured by calibrate: per-request dispatch overhead of a CPU inference runtime, an assumption",
            ),
        },
        // Not measured by the kernels: the base profile's, or the kind's default.
        service_cv: base.and_then(|b| b.efficiency.service_cv.as_ref().map(clone_entry)),
        // The measured GEMM efficiency stands for every operator class: the base profile's
        // per-class fits belong to its own runtime, not this machine's.
        compute_conv: None,
        compute_matmul: None,
        // Not measured: the base profile's iteration overhead (it belongs to its engine).
        iteration_overhead_ms: base
            .and_then(|b| b.efficiency.iteration_overhead_ms.as_ref().map(clone_entry)),
        // Not measured: the base profile's streaming host cost (it belongs to its server).
        stream_overhead_us: base
            .and_then(|b| b.efficiency.stream_overhead_us.as_ref().map(clone_entry)),
        // Not measured: the base profile's decode-attention block time (it belongs to its
        // runtime's kernel).
        attention_block_ns_per_token: base.and_then(|b| {
            b.efficiency
                .attention_block_ns_per_token
                .as_ref()
                .map(clone_entry)
        }),
        // Not measured: the base profile's per-layer overhead (it belongs to its runtime).
        layer_overhead_ms: base
            .and_then(|b| b.efficiency.layer_overhead_ms.as_ref().map(clone_entry)),
        // Not measured by the kernels: the base profile's, if it has one.
        attention_memory: base
            .and_then(|b| b.efficiency.attention_memory.as_ref().map(clone_entry)),
        // Not measured by single-kernel peaks (they run on every core at once): the base
        // profile's, if it has one.
        serial_fraction: base.and_then(|b| b.efficiency.serial_fraction.as_ref().map(clone_entry)),
    };
    let price = match base {
        Some(b) => PriceFile {
            region: b.price.region.clone(),
            purchase_usd: b.price.purchase_usd.as_ref().map(clone_entry),
            on_demand_usd_per_hour: b.price.on_demand_usd_per_hour.as_ref().map(clone_entry),
            reserved_1y_usd_per_hour: b.price.reserved_1y_usd_per_hour.as_ref().map(clone_entry),
            reserved_3y_usd_per_hour: b.price.reserved_3y_usd_per_hour.as_ref().map(clone_entry),
            spot_usd_per_hour: b.price.spot_usd_per_hour.as_ref().map(clone_entry),
            change_per_year: b.price.change_per_year.as_ref().map(clone_entry),
            egress: b.price.egress.clone(),
        },
        None => PriceFile {
            region: None,
            purchase_usd: inputs.purchase_usd.map(|v| user(v, "--purchase-usd")),
            on_demand_usd_per_hour: inputs.usd_per_hour.map(|v| user(v, "--usd-per-hour")),
            reserved_1y_usd_per_hour: None,
            reserved_3y_usd_per_hour: None,
            spot_usd_per_hour: None,
            change_per_year: None,
            egress: None,
        },
    };
    let mut sources: BTreeMap<String, SourceFileEntry> = BTreeMap::new();
    if let Some(b) = base {
        for (k, s) in &b.sources {
            sources.insert(
                k.clone(),
                SourceFileEntry {
                    title: toml::Spanned::new(0..0, s.title.get_ref().clone()),
                    url: s.url.clone(),
                    date: toml::Spanned::new(0..0, s.date.get_ref().clone()),
                },
            );
        }
    }
    sources.insert(
        key.clone(),
        SourceFileEntry {
            title: toml::Spanned::new(
                0..0,
                format!(
                    "tco-sim calibrate {} on host `{}` ({})",
                    env!("CARGO_PKG_VERSION"),
                    cal.host,
                    cpu.model
                ),
            ),
            url: None,
            date: toml::Spanned::new(0..0, cal.date.clone()),
        },
    );

    let mut record = BTreeMap::new();
    for r in &cal.results {
        // Rates in G-units (GFLOP/s, GOP/s, GB/s), as people read them.
        let scale = 1e9;
        let unit = match r.kind.unit() {
            "B/s" => "gbps",
            "OP/s" => "gops",
            _ => "gflops",
        };
        let slug: String = r
            .label
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect::<String>()
            .split('_')
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("_");
        record.insert(
            format!("{slug}_1core_{unit}"),
            round3(r.one_core.stats.median / scale),
        );
        record.insert(
            format!("{slug}_allcore_{unit}"),
            round3(r.all_cores.stats.median / scale),
        );
        record.insert(
            format!("{slug}_allcore_spread"),
            round3(r.all_cores.stats.spread),
        );
    }
    record.insert("cores".into(), cal.threads as f64);
    if let Some(c) = &cpu.clock {
        record.insert("clock_ghz_reported".into(), c.ghz);
    }

    let base_name = base.map(|b| b.name.get_ref().clone());
    let nt = cal
        .results
        .iter()
        .find_map(|r| r.nt_stores)
        .unwrap_or(false);
    let method = format!(
        "{} logical CPUs ({}), threads pinned: {}; SIMD: {}; kernels: f32 {} (BLIS-style, packed), int8 {}; warm-up then >= {} trials per kernel, medians reported; all-core GEMM splits one GEMM's columns over the threads; STREAM {} with {} stores{}",
        cal.threads,
        cpu.arch,
        if cal.pinned {
            "yes"
        } else {
            "no (the OS refused affinity)"
        },
        cpu.simd.join(" "),
        cal.f32_isa,
        cal.int8_isa,
        cal.min_trials,
        cal.stream_sizing,
        if nt { "non-temporal" } else { "ordinary" },
        base_name.as_ref().map_or(String::new(), |n| format!(
            "; prices, power, memory size and description kept from `{n}`"
        )),
    );

    Ok(ProfileFile {
        schema: toml::Spanned::new(0..0, crate::hardware::file::PROFILE_SCHEMA),
        name: toml::Spanned::new(0..0, inputs.name.clone()),
        description: match base {
            Some(b) => b.description.clone(),
            None => format!(
                "This machine as calibrated on {}: {} ({} logical CPUs)",
                cal.date, cpu.model, cal.threads
            ),
        },
        kind: toml::Spanned::new(0..0, crate::hardware::UnitKind::Cpu),
        chip_model: match base {
            Some(b) => b.chip_model.clone(),
            None => cpu.model.clone(),
        },
        chips: measured(d.chips, "distinct `physical id` in /proc/cpuinfo".into()),
        // A CPU profile has no interconnect section (a CPU replica is one chip).
        interconnect: None,
        chip: ChipFile {
            cores: Some(measured(
                d.cores_per_chip,
                "logical CPUs this process may run on, per chip (hardware threads count as cores)"
                    .into(),
            )),
            clock_ghz: cpu
                .clock
                .as_ref()
                .map(|c| measured(c.ghz, format!("as reported by {clock_note}"))),
            // Cache sizes as the OS shows them: L2 per logical CPU (a core's L2 shared by its
            // hardware threads), and the last level on bare metal only (see `derive`).
            l2_mb_per_core: cpu.l2.map(|c| {
                measured(
                    c.bytes as f64 / c.shared_by as f64 / 1e6,
                    format!(
                        "sysfs cpu0/cache: level-2 cache of {} KiB shared by {} logical CPU(s), per logical CPU",
                        c.bytes / 1024,
                        c.shared_by
                    ),
                )
            }),
            llc_mb: cpu.llc.filter(|_| !cpu.virtualized).map(|c| {
                let share = (d.cores_per_chip / c.shared_by as f64).min(1.0);
                measured(
                    c.bytes as f64 * share / 1e6,
                    format!(
                        "sysfs cpu0/cache: level-{} cache of {} KiB shared by {} logical CPU(s), x {:.3} for the {} this process may use per chip",
                        c.level,
                        c.bytes / 1024,
                        c.shared_by,
                        share,
                        d.cores_per_chip
                    ),
                )
            }),
            memory_gb,
            memory_bandwidth_gbps: bw_entry,
            peak_tflops: PeakFile {
                fp32: Some(fp32),
                fp16: None,
                int8,
                fp8: None,
            },
        },
        power,
        efficiency,
        batching: base.and_then(|b| {
            b.batching
                .as_ref()
                .map(|bf| crate::hardware::file::BatchingFile {
                    max_batch: toml::Spanned::new(0..0, *bf.max_batch.get_ref()),
                    window_ms: bf
                        .window_ms
                        .as_ref()
                        .map(|w| toml::Spanned::new(0..0, *w.get_ref())),
                    compiled_batch_sizes: bf
                        .compiled_batch_sizes
                        .as_ref()
                        .map(|s| toml::Spanned::new(0..0, s.get_ref().clone())),
                })
        }),
        price,
        calibration: Some(CalibrationFile {
            host: cal.host.clone(),
            date: cal.date.clone(),
            method,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            measured: record,
        }),
        sources,
    })
}

/// `x` rounded to four significant digits.
pub fn sig4(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(3 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// A copy of a base profile's entry (the file types hold spans and are not `Clone`).
fn clone_entry(e: &CitedFileEntry) -> CitedFileEntry {
    CitedFileEntry::new(
        *e.value.get_ref(),
        e.source.get_ref(),
        e.basis,
        e.note.clone(),
    )
}

/// The profile as TOML, with a header saying where it came from.
pub fn to_toml(p: &ProfileFile) -> anyhow::Result<String> {
    let body = toml::to_string(p).context("serialising the profile")?;
    Ok(format!(
        "# Written by `tco-sim calibrate`; measured numbers carry basis = \"measured\" and cite the\n# [sources.calibrate-*] run. Rerun it rather than editing the figures by hand.\n{body}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::cpu::{Clock, CpuInfo};
    use crate::calibrate::kernels::Isa;
    use crate::calibrate::measure::{Measured, Stats};
    use crate::calibrate::suite::KernelResult;

    fn measured(rate: f64) -> Measured {
        Measured {
            stats: Stats::from_rates(&[rate]).unwrap(),
            threads: 1,
            pinned: true,
            on_cpu: Some(1.0),
            on_cpu_rate: None,
        }
    }

    /// A fake 4-core AVX-512 machine at `ghz` with the given all-core rates [G-units/s].
    fn cal(ghz: Option<f64>, fma: f64, gemm: f64, triad: f64) -> Calibration {
        let r = |kind, label: &str, shape, rate: f64| KernelResult {
            kind,
            label: label.into(),
            shape,
            isa: Isa::Avx512,
            one_core: measured(rate * 1e9 / 4.0),
            all_cores: measured(rate * 1e9),
            nt_stores: None,
        };
        Calibration {
            cpu: CpuInfo {
                model: "test cpu".into(),
                arch: "x86_64",
                logical_cpus: 4,
                sockets: 1,
                simd: vec!["avx512f".into()],
                clock: ghz.map(|g| Clock {
                    ghz: g,
                    source: "test".into(),
                }),
                llc_bytes: None,
                l2: Some(crate::calibrate::cpu::Cache {
                    level: 2,
                    bytes: 2 * 1024 * 1024,
                    shared_by: 2,
                }),
                llc: Some(crate::calibrate::cpu::Cache {
                    level: 3,
                    bytes: 32 * 1024 * 1024,
                    shared_by: 8,
                }),
                virtualized: false,
                mem_total_bytes: Some(16_000_000_000),
                mem_available_bytes: None,
            },
            host: "h".into(),
            date: "2026-11-29".into(),
            threads: 4,
            pinned: true,
            f32_isa: Isa::Avx512,
            int8_isa: Isa::Avx512Vnni,
            min_trials: 5,
            stream_sizing: "test".into(),
            results: vec![
                r(Kind::FmaCeiling, "fma", None, fma),
                r(Kind::Sgemm, "sgemm 2048", Some((2048, 2048, 2048)), gemm),
                // A skinny GEMM is never the compute-efficiency figure.
                r(
                    Kind::Sgemm,
                    "sgemm 1x8192x8192",
                    Some((1, 8192, 8192)),
                    10.0 * gemm,
                ),
                r(Kind::Igemm, "int8", Some((2048, 2048, 2048)), 4.0 * gemm),
                r(Kind::Triad, "triad", None, triad),
            ],
            elapsed: std::time::Duration::ZERO,
        }
    }

    #[test]
    fn four_significant_digits() {
        assert_eq!(sig4(0.4645174152027554), 0.4645);
        assert_eq!(sig4(17.4030529394307), 17.4);
        assert_eq!(sig4(123456.0), 123500.0);
        assert_eq!(sig4(0.0), 0.0);
    }

    fn inputs() -> ProfileInputs {
        ProfileInputs {
            name: "t".into(),
            usd_per_hour: Some(1.0),
            ..ProfileInputs::default()
        }
    }

    #[test]
    fn the_peak_is_theoretical_when_the_clock_explains_the_ceiling() {
        // 4 cores × 2 pipes × 16 lanes × 2 FLOP × 3 GHz = 768 GFLOP/s ≥ the 700 measured.
        let d = derive(&cal(Some(3.0), 700.0, 600.0, 40.0), &inputs()).unwrap();
        assert!((d.peak_fp32 - 768e9).abs() < 1.0);
        assert!(!d.peak_is_measured);
        assert!((d.e_c - 600.0 / 768.0).abs() < 1e-12);
        // No theoretical bandwidth: the triad is the bandwidth, at efficiency 1.
        assert_eq!((d.bandwidth.clone(), d.e_m, d.triad), (None, 1.0, 40e9));
    }

    #[test]
    fn a_ceiling_above_the_clocks_figure_becomes_the_peak() {
        // 2.6 GHz gives 665.6 GFLOP/s, but the cores ran faster (turbo).
        let d = derive(&cal(Some(2.6), 900.0, 600.0, 40.0), &inputs()).unwrap();
        assert_eq!(d.peak_fp32, 900e9);
        assert!(d.peak_is_measured);
        let d = derive(&cal(None, 900.0, 600.0, 40.0), &inputs()).unwrap();
        assert_eq!((d.peak_fp32, d.peak_is_measured), (900e9, true));
    }

    #[test]
    fn a_given_bandwidth_sets_the_memory_efficiency_unless_the_triad_beats_it() {
        let mut i = inputs();
        i.memory_bandwidth_gbps = Some(50.0);
        let d = derive(&cal(Some(3.0), 700.0, 600.0, 40.0), &i).unwrap();
        assert!((d.e_m - 0.8).abs() < 1e-12);
        assert!(d.warnings.is_empty());
        i.memory_bandwidth_gbps = Some(30.0);
        let d = derive(&cal(Some(3.0), 700.0, 600.0, 40.0), &i).unwrap();
        assert_eq!((d.e_m, d.bandwidth.is_none()), (1.0, true));
        assert!(d.warnings[0].contains("exceeds"), "{:?}", d.warnings);
    }

    #[test]
    fn peak_times_efficiency_is_the_measured_throughput_for_fp32_and_int8() {
        let c = cal(Some(3.0), 700.0, 600.0, 40.0);
        let p = build(&c, &inputs()).unwrap();
        let e_c = *p.efficiency.compute.value.get_ref();
        let fp32 = *p.chip.peak_tflops.fp32.as_ref().unwrap().value.get_ref() * 1e12;
        let int8 = *p.chip.peak_tflops.int8.as_ref().unwrap().value.get_ref() * 1e12;
        // Within the rounding to four significant digits.
        assert!((fp32 * e_c / 600e9 - 1.0).abs() < 1e-3);
        assert!((int8 * e_c / 2400e9 - 1.0).abs() < 1e-3);
        assert!(p.chip.peak_tflops.fp16.is_none());
    }

    /// Cache sizes come from sysfs: L2 per logical CPU (2 MiB shared by 2 threads), the last
    /// level scaled to the CPUs this process uses (4 of the 8 sharing 32 MiB); in a VM the last
    /// level is left out, with a warning, since its neighbours share it unseen.
    #[test]
    fn cache_sizes_are_written_as_sysfs_shows_them_and_not_guessed_in_a_vm() {
        let c = cal(Some(3.0), 700.0, 600.0, 40.0);
        let p = build(&c, &inputs()).unwrap();
        let mb = |e: &Option<CitedFileEntry>| e.as_ref().map(|e| *e.value.get_ref());
        assert_eq!(mb(&p.chip.l2_mb_per_core), Some(sig4(1.048576)));
        assert_eq!(mb(&p.chip.llc_mb), Some(sig4(16.777216)));
        let basis = p.chip.llc_mb.as_ref().map(|e| e.basis);
        assert_eq!(basis, Some(Basis::Measured));

        let mut vm = cal(Some(3.0), 700.0, 600.0, 40.0);
        vm.cpu.virtualized = true;
        let p = build(&vm, &inputs()).unwrap();
        assert!(p.chip.llc_mb.is_none());
        assert_eq!(mb(&p.chip.l2_mb_per_core), Some(sig4(1.048576)));
        let d = derive(&vm, &inputs()).unwrap();
        assert!(
            d.warnings.iter().any(|w| w.contains("chip.llc_mb")),
            "{:?}",
            d.warnings
        );
    }
}
