//! `tco-sim calibrate`: native GEMM and memory-bandwidth microbenchmarks that measure the CPU
//! this runs on and write a hardware profile (DESIGN.md, "Calibration").
//!
//! Why: a CPU judged with an unoptimised kernel looks slow, and the plan then buys GPUs it did
//! not need (seed 000). So the kernels here run near the best BLAS on the CPU (AVX-512 / AVX2
//! on x86_64, NEON on aarch64), every result is checked against a reference, and the numbers
//! land in the same profile format as the shipped profiles, each with `basis = "measured"`.
//!
//! Pipeline: [`cpu::CpuInfo::detect`] → [`suite::run_plan`] (kernels via [`measure`]) →
//! [`Calibration`] → [`profile::build`] → TOML, returned as [`Calibrated`] with the text of
//! [`summary`]; `app` writes the file and prints the summary. A stage-2 model (it measures
//! hardware and yields a hardware profile), so it takes a plain [`Options`], not clap's.

#[allow(unsafe_code)]
pub mod kernels;

pub mod cpu;
pub mod fit;
pub mod measure;
pub mod profile;
pub mod runs;
pub mod suite;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::hardware::{Profile, ProfileSearch, embedded_text, file::ProfileFile};
use crate::input::{InputError, SourceFile};
use kernels::Isa;
use suite::{KernelResult, Plan};

/// Default time for the timed trials; set-up and warm-up come on top, and the whole default
/// run stays under a minute.
pub const DEFAULT_SECONDS: f64 = 24.0;
/// Trial time with `--quick`; the whole run stays under ten seconds on a 2-core VM.
pub const QUICK_SECONDS: f64 = 2.0;

/// How long to measure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Effort {
    /// Spend about this long on the timed trials \[s\] (set-up and warm-up come on top).
    Timed(f64),
    /// A short run (under 10 s): fewer shapes and trials.
    Quick,
    /// Test only: tiny shapes that run every kernel through the real path in a debug build.
    /// The figures are cache-resident and mean nothing.
    Smoke,
}

impl Default for Effort {
    fn default() -> Self {
        Effort::Timed(DEFAULT_SECONDS)
    }
}

/// What to calibrate and what the profile should carry besides the measurements. `app` builds
/// it from the command line; the error messages name the flags that set each field.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Profile name: letters, digits, '-', '_' and '.'.
    pub name: String,
    /// Keep this profile's prices, power, memory size and description (a shipped profile name
    /// or a path) and replace its performance numbers with the measured ones.
    pub base: Option<String>,
    pub effort: Effort,
    /// Theoretical memory bandwidth of this machine \[GB/s\]; the profile's memory efficiency
    /// becomes measured triad / this.
    pub memory_bandwidth_gbps: Option<f64>,
    /// On-prem purchase price of this machine \[USD\] (needed without `base`).
    pub purchase_usd: Option<f64>,
    /// Cloud on-demand price of this instance \[USD/h\] (needed without `base` or a purchase
    /// price).
    pub usd_per_hour: Option<f64>,
    /// Idle and full-load power of the whole machine \[W\] (without `base`; default: an
    /// estimate).
    pub idle_w: Option<f64>,
    pub peak_w: Option<f64>,
}

/// What a long calibration reports as it goes, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'a> {
    /// The run will take this many steps (one per measurement, plus allocating the arrays).
    Planned(u64),
    /// A measurement starts.
    Measuring(&'a str),
    /// A timed trial finished.
    Trial,
}

/// A finished calibration: the measurements, the figures derived from them, and the profile
/// as TOML, validated by the same loader a scenario uses. Nothing is written yet.
#[derive(Debug, Clone)]
pub struct Calibrated {
    pub calibration: Calibration,
    pub derived: profile::Derived,
    pub profile_toml: String,
}

/// Everything one calibration run measured, before it becomes a profile.
#[derive(Debug, Clone)]
pub struct Calibration {
    pub cpu: cpu::CpuInfo,
    pub host: String,
    /// `YYYY-MM-DD` (UTC).
    pub date: String,
    /// Threads of the all-core runs (the logical CPUs we may use).
    pub threads: usize,
    pub pinned: bool,
    pub f32_isa: Isa,
    pub int8_isa: Isa,
    pub min_trials: usize,
    pub stream_sizing: String,
    pub results: Vec<KernelResult>,
    pub elapsed: Duration,
}

/// Measure this machine with `plan`. `progress` is told the label of each measurement and
/// of each finished trial.
pub fn calibrate(plan: &Plan, progress: &(dyn Fn(Step<'_>) + Sync)) -> anyhow::Result<Calibration> {
    let cpu = cpu::CpuInfo::detect();
    let ids = core_affinity::get_core_ids().unwrap_or_default();
    let cpus: Vec<Option<core_affinity::CoreId>> = if ids.is_empty() {
        vec![None; cpu.logical_cpus.max(1)]
    } else {
        ids.into_iter().map(Some).collect()
    };
    let started = Instant::now();
    let results = suite::run_plan(
        plan,
        &cpus,
        &|label| progress(Step::Measuring(label)),
        &|| progress(Step::Trial),
    )
    .map_err(|e| {
        anyhow::anyhow!("a calibration kernel gave a wrong result, so no profile was written: {e}")
    })?;
    let pinned = results
        .iter()
        .all(|r| r.one_core.pinned && r.all_cores.pinned);
    Ok(Calibration {
        host: hostname(),
        date: today_utc(),
        threads: cpus.len(),
        pinned,
        f32_isa: Isa::best_f32(),
        int8_isa: Isa::best_int8(),
        min_trials: plan.min_trials,
        stream_sizing: plan.stream_sizing.clone(),
        results,
        elapsed: started.elapsed(),
        cpu,
    })
}

/// `tco-sim calibrate`: check the options, measure, and build the profile. Returns the data;
/// the caller writes the profile and prints [`summary`].
pub fn run(options: &Options, progress: &(dyn Fn(Step<'_>) + Sync)) -> anyhow::Result<Calibrated> {
    let inputs = inputs(options)?;
    let detected = cpu::CpuInfo::detect();
    let plan = match options.effort {
        Effort::Smoke => Plan::smoke(),
        Effort::Quick => Plan::new(
            true,
            QUICK_SECONDS,
            detected.llc_bytes,
            detected.mem_available_bytes,
        ),
        Effort::Timed(seconds) => Plan::new(
            false,
            seconds,
            detected.llc_bytes,
            detected.mem_available_bytes,
        ),
    };
    progress(Step::Planned(
        plan.measurements(Isa::Avx512Vnni.available()) as u64 + 1,
    ));
    let cal = calibrate(&plan, progress)?;
    let file = profile::build(&cal, &inputs)?;
    let text = profile::to_toml(&file)?;
    // Never hand back a profile the simulator would then refuse.
    let check = SourceFile::from_text(format!("{}.toml", inputs.name), text.clone());
    Profile::from_source(&check, None)
        .context("the calibrated profile does not validate (a bug in calibrate)")?;
    let derived = profile::derive(&cal, &inputs)?;
    Ok(Calibrated {
        calibration: cal,
        derived,
        profile_toml: text,
    })
}

/// Check the options and load `--base` before spending a minute measuring. Each problem here is
/// the user's (a flag out of range, a missing price), so it is an [`InputError`]: exit code 2,
/// with the flags that would fix it, before any measurement.
fn inputs(args: &Options) -> anyhow::Result<profile::ProfileInputs> {
    if let Effort::Timed(d) = args.effort
        && !(d.is_finite() && d > 0.0 && d <= crate::units::DAY_S)
    {
        return Err(InputError::new(format!("--duration {d} is out of range"))
            .with_help("valid: seconds in (0, 86400]")
            .into());
    }
    // Each flag becomes a number of the written profile, so it takes that number's declared
    // range: a value the profile would refuse is the user's fault, found before measuring.
    use crate::hardware::numbers;
    for (flag, v, n) in [
        (
            "--memory-bandwidth-gbps",
            args.memory_bandwidth_gbps,
            &numbers::BANDWIDTH,
        ),
        ("--purchase-usd", args.purchase_usd, &numbers::PURCHASE),
        ("--usd-per-hour", args.usd_per_hour, &numbers::ON_DEMAND),
        ("--idle-w", args.idle_w, &numbers::IDLE_POWER),
        ("--peak-w", args.peak_w, &numbers::PEAK_POWER),
    ] {
        let valid = n.valid;
        if let Some(v) = v
            && !(v.is_finite()
                && valid
                    .min
                    .is_none_or(|m| if valid.strict_min { v > m } else { v >= m })
                && valid.max.is_none_or(|m| v <= m))
        {
            return Err(InputError::new(format!(
                "{flag} {} is out of range",
                crate::input::shown(v)
            ))
            .with_help(format!("valid: {}", valid.text))
            .into());
        }
    }
    let name = args.name.clone();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err(
            InputError::new(format!("`{name}` is not a valid profile name"))
                .with_help("valid: letters, digits, '-', '_' and '.' (set --name)")
                .into(),
        );
    }
    let base = args.base.as_deref().map(load_base).transpose()?;
    if base.is_none() && args.purchase_usd.is_none() && args.usd_per_hour.is_none() {
        return Err(InputError::new("a profile needs a price")
            .with_help(
                "give --base PROFILE to keep a shipped profile's prices and power, or --purchase-usd USD (on-prem) / --usd-per-hour USD (cloud)",
            )
            .into());
    }
    Ok(profile::ProfileInputs {
        name,
        base,
        memory_bandwidth_gbps: args.memory_bandwidth_gbps,
        purchase_usd: args.purchase_usd,
        usd_per_hour: args.usd_per_hour,
        idle_w: args.idle_w,
        peak_w: args.peak_w,
    })
}

/// The text of a profile named on the command line: a path (`*.toml` or with a separator), a
/// file in `./hardware-profiles/`, or a profile embedded in the binary, with the name its file
/// stem requires (none for a path). An unknown name gets the loader's error with suggestions.
pub fn load_profile_file(reference: &str) -> anyhow::Result<(SourceFile, Option<String>)> {
    let is_path =
        reference.ends_with(".toml") || reference.contains('/') || reference.contains('\\');
    let local = Path::new("hardware-profiles").join(format!("{reference}.toml"));
    if is_path {
        Ok((SourceFile::read(Path::new(reference))?, None))
    } else if local.is_file() {
        Ok((SourceFile::read(&local)?, Some(reference.to_string())))
    } else if let Some(text) = embedded_text(reference) {
        Ok((
            SourceFile::from_text(format!("embedded:{reference}"), text),
            Some(reference.to_string()),
        ))
    } else {
        // Let the loader say what is available and what was probably meant.
        let search = ProfileSearch {
            dirs: vec![PathBuf::from("hardware-profiles")],
        };
        Err(search.load(reference, Path::new(".")).err().map_or_else(
            || anyhow::anyhow!("cannot load profile {reference}"),
            anyhow::Error::from,
        ))
    }
}

/// Load and validate `--base`: a path (`*.toml` or with a separator), a file in
/// `./hardware-profiles/`, or a profile embedded in the binary. Errors are the profile
/// loader's `InputError`s (unknown name with suggestions, bad field with line and column).
pub fn load_base(reference: &str) -> anyhow::Result<ProfileFile> {
    let (src, expected) = load_profile_file(reference)?;
    let expected = expected.as_deref();
    let validated = Profile::from_source(&src, expected)?;
    if validated.kind != crate::hardware::UnitKind::Cpu {
        return Err(InputError::new(format!(
            "--base {reference} is a {} profile; calibrate measures CPUs",
            validated.kind.label()
        ))
        .with_help("give a cpu profile as --base, e.g. altra-q80-30-1u")
        .into());
    }
    Ok(src.parse::<ProfileFile>()?)
}

/// The human summary printed after a run.
pub fn summary(cal: &Calibration, d: &profile::Derived, out: &Path) -> String {
    let g = |x: f64| x / 1e9;
    let mut s = String::new();
    let cpu = &cal.cpu;
    let _ = writeln!(
        s,
        "tco-sim calibrate: {} on `{}`, {}",
        cpu.model, cal.host, cal.date
    );
    let _ = writeln!(
        s,
        "  {} logical CPUs ({}), pinned: {}, SIMD: {}",
        cal.threads,
        cpu.arch,
        if cal.pinned { "yes" } else { "no" },
        cpu.simd.join(" ")
    );
    if let Some(c) = &cpu.clock {
        let _ = writeln!(s, "  clock {:.2} GHz from {}", c.ghz, c.source);
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "  {:<34} {:>12} {:>12}   spread (1 core / all)",
        "kernel", "1 core", "all cores"
    );
    let mut noisy = Vec::new();
    let mut lowest_on_cpu: f64 = 1.0;
    for r in &cal.results {
        let unit = match r.kind.unit() {
            "B/s" => "GB/s",
            "OP/s" => "GOP/s",
            _ => "GFLOP/s",
        };
        let nt = match r.nt_stores {
            Some(true) => " (nt stores)",
            Some(false) => " (cached stores)",
            None => "",
        };
        let _ = writeln!(
            s,
            "  {:<34} {:>8.1} {:<7} {:>8.1}   {:>4.0}% / {:.0}%  [{}]{}",
            r.label,
            g(r.one_core.stats.median),
            unit,
            g(r.all_cores.stats.median),
            100.0 * r.one_core.stats.spread,
            100.0 * r.all_cores.stats.spread,
            r.isa,
            nt
        );
        if r.one_core.stats.noisy() || r.all_cores.stats.noisy() {
            noisy.push(r.label.clone());
        }
        for m in [&r.one_core, &r.all_cores] {
            if let Some(f) = m.on_cpu {
                lowest_on_cpu = lowest_on_cpu.min(f);
            }
        }
    }
    let _ = writeln!(s);
    match d.theoretical_fp32 {
        Some(t) => {
            let _ = writeln!(
                s,
                "  theoretical f32 peak {:.1} GFLOP/s = {} cores x {} FMA pipes (assumed) x {} lanes x 2 x clock; measured FMA ceiling {:.1} GFLOP/s{}",
                g(t),
                cal.threads,
                profile::ASSUMED_FMA_PIPES,
                cal.f32_isa.f32_lanes(),
                g(d.fma_ceiling),
                if d.peak_is_measured {
                    " (higher: the core runs above the reported clock, so the profile uses the ceiling)"
                } else {
                    ""
                }
            );
        }
        None => {
            let _ = writeln!(
                s,
                "  no clock shown by the OS: the profile's peak is the measured FMA ceiling {:.1} GFLOP/s",
                g(d.fma_ceiling)
            );
        }
    }
    let _ = writeln!(
        s,
        "  compute efficiency {:.3} = f32 GEMM {:.1} / peak {:.1} GFLOP/s",
        d.e_c,
        g(d.gemm_fp32),
        g(d.peak_fp32)
    );
    match &d.bandwidth {
        Some((bw, from)) => {
            let _ = writeln!(
                s,
                "  memory efficiency {:.3} = triad {:.1} / {:.1} GB/s ({from})",
                d.e_m,
                g(d.triad),
                g(*bw)
            );
        }
        None => {
            let _ = writeln!(
                s,
                "  memory bandwidth = measured triad {:.1} GB/s, efficiency 1.0 (no theoretical bandwidth known; --memory-bandwidth-gbps sets one)",
                g(d.triad)
            );
        }
    }
    let _ = writeln!(s, "  stream arrays: {}", cal.stream_sizing);
    for w in &d.warnings {
        let _ = writeln!(s, "\n  warning: {w}");
    }
    if lowest_on_cpu < 0.9 {
        let _ = writeln!(
            s,
            "\n  warning: during some trials the timed thread ran only {:.0}% of the time: other processes competed for the cores, so those figures under-report this machine.",
            100.0 * lowest_on_cpu
        );
    }
    if !noisy.is_empty() {
        let _ = writeln!(
            s,
            "\n  warning: trials spread more than {:.0}% on: {}. The machine was busy, throttling or shared; rerun when it is idle, or with --duration for more trials.",
            100.0 * measure::NOISY_SPREAD,
            noisy.join(", ")
        );
    }
    let _ = writeln!(
        s,
        "\n  profile written to {} ({:.1} s)",
        out.display(),
        cal.elapsed.as_secs_f64()
    );
    s
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".into())
}

/// Today's date in UTC, `YYYY-MM-DD`, from the system clock.
pub(crate) fn today_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    crate::units::CivilDate::from_unix(secs).to_string()
}
