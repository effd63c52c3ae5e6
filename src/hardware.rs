//! Hardware profiles: one purchasable or rentable *unit* (a server or a cloud instance) per file,
//! every number with its source and date.
//!
//! Profiles ship in `hardware-profiles/` and are embedded in the binary (see `build.rs`), so the
//! tool runs from any directory. A profile file of the same name in the scenario's
//! `profiles_dir`, or beside the scenario, overrides the embedded one; a scenario may also name a
//! profile file by path (`profile = "hardware-profiles/local.toml"`), which is how a profile
//! written by `tco-sim calibrate` is used.

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
}

impl DeploymentOption {
    pub const ALL: [DeploymentOption; 6] = [
        DeploymentOption::OnPrem,
        DeploymentOption::OnDemand,
        DeploymentOption::Reserved1y,
        DeploymentOption::Reserved3y,
        DeploymentOption::Hybrid1y,
        DeploymentOption::Hybrid3y,
    ];

    pub fn label(self) -> &'static str {
        match self {
            DeploymentOption::OnPrem => "on-prem",
            DeploymentOption::OnDemand => "on-demand",
            DeploymentOption::Reserved1y => "reserved-1y",
            DeploymentOption::Reserved3y => "reserved-3y",
            DeploymentOption::Hybrid1y => "hybrid-1y",
            DeploymentOption::Hybrid3y => "hybrid-3y",
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
}

/// Prices of one unit per deployment option.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prices {
    pub region: Option<String>,
    pub purchase_usd: Option<Cited>,
    pub on_demand_usd_per_hour: Option<Cited>,
    pub reserved_1y_usd_per_hour: Option<Cited>,
    pub reserved_3y_usd_per_hour: Option<Cited>,
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
    pub memory_bytes_per_chip: Cited,
    pub memory_bandwidth_per_chip: Cited,
    /// Dense peak per chip \[FLOP/s or OP/s\].
    pub peak_per_chip: BTreeMap<Precision, Cited>,
    pub idle_power_w: Cited,
    pub peak_power_w: Cited,
    pub efficiency_compute: Cited,
    pub efficiency_memory: Cited,
    pub batch_overhead_s: Cited,
    pub batching: Batching,
    pub prices: Prices,
    pub calibration: Option<CalibrationFile>,
    #[serde(skip)]
    pub sources: Sources,
}

impl Profile {
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
        }
    }

    /// Deployment options this profile has prices for.
    pub fn options(&self) -> Vec<DeploymentOption> {
        DeploymentOption::ALL
            .into_iter()
            .filter(|o| self.price(*o).is_some())
            .collect()
    }

    /// Every number of the profile with its field name, for the assumptions table of a report.
    pub fn cited_numbers(&self) -> Vec<(String, &Cited)> {
        let mut v: Vec<(String, &Cited)> = vec![("chips".into(), &self.chips)];
        if let Some(c) = &self.cores_per_chip {
            v.push(("chip.cores".into(), c));
        }
        if let Some(c) = &self.clock_ghz {
            v.push(("chip.clock_ghz".into(), c));
        }
        v.push(("chip.memory [B]".into(), &self.memory_bytes_per_chip));
        v.push((
            "chip.memory_bandwidth [B/s]".into(),
            &self.memory_bandwidth_per_chip,
        ));
        for (p, c) in &self.peak_per_chip {
            v.push((format!("chip.peak.{p} [FLOP/s]"), c));
        }
        v.push(("power.idle_w".into(), &self.idle_power_w));
        v.push(("power.peak_w".into(), &self.peak_power_w));
        v.push(("efficiency.compute".into(), &self.efficiency_compute));
        v.push(("efficiency.memory".into(), &self.efficiency_memory));
        v.push((
            "efficiency.batch_overhead [s]".into(),
            &self.batch_overhead_s,
        ));
        let p = &self.prices;
        for (name, c) in [
            ("price.purchase_usd", &p.purchase_usd),
            ("price.on_demand_usd_per_hour", &p.on_demand_usd_per_hour),
            (
                "price.reserved_1y_usd_per_hour",
                &p.reserved_1y_usd_per_hour,
            ),
            (
                "price.reserved_3y_usd_per_hour",
                &p.reserved_3y_usd_per_hour,
            ),
        ] {
            if let Some(c) = c {
                v.push((name.into(), c));
            }
        }
        v
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
    let kind = match f.kind.get_ref().as_str() {
        "cpu" => UnitKind::Cpu,
        "gpu" => UnitKind::Gpu,
        "accelerator" => UnitKind::Accelerator,
        other => {
            return Err(src
                .error(&f.kind, "kind", format!("unknown kind `{other}`"))
                .with_help("valid: cpu, gpu, accelerator"));
        }
    };
    let sources = Sources::from_file(src, &f.sources)?;
    let cite = |field: &str, e: &file::CitedEntry| sources.resolve(src, field, e);
    // Each number: resolve its source, then check its range.
    let positive = |field: &str, e: &file::CitedEntry, valid: &str| -> Result<Cited, InputError> {
        let c = cite(field, e)?;
        crate::input::NumberCheck { source: src, field }.positive(&e.value, valid)?;
        Ok(c)
    };
    let whole = |field: &str, e: &file::CitedEntry| -> Result<Cited, InputError> {
        let c = positive(field, e, "a whole number ≥ 1")?;
        if c.value.fract() != 0.0 || c.value > 1e6 {
            return Err(src
                .error(
                    &e.value,
                    field,
                    format!("= {} is not a whole number", c.value),
                )
                .with_help("valid: a whole number ≥ 1"));
        }
        Ok(c)
    };
    let fraction = |field: &str, e: &file::CitedEntry| -> Result<Cited, InputError> {
        let c = cite(field, e)?;
        crate::input::NumberCheck { source: src, field }.range(
            &e.value,
            Some(0.0),
            true,
            Some(1.0),
            "a fraction in (0, 1]",
        )?;
        Ok(c)
    };

    let chips = whole("chips", &f.chips)?;
    let cores_per_chip = match (&f.chip.cores, kind) {
        (Some(e), UnitKind::Cpu) => Some(whole("chip.cores", e)?),
        (None, UnitKind::Cpu) => {
            return Err(src
                .error(&f.kind, "chip.cores", "a cpu profile needs chip.cores")
                .with_help("add cores = { value = …, source = \"…\" } under [chip]"));
        }
        (Some(e), _) => Some(whole("chip.cores", e)?),
        (None, _) => None,
    };
    let clock_ghz = f
        .chip
        .clock_ghz
        .as_ref()
        .map(|e| positive("chip.clock_ghz", e, "a clock in GHz > 0"))
        .transpose()?;
    let memory = positive("chip.memory_gb", &f.chip.memory_gb, "GB > 0")?.scaled(1e9);
    let bandwidth = positive(
        "chip.memory_bandwidth_gbps",
        &f.chip.memory_bandwidth_gbps,
        "GB/s > 0",
    )?
    .scaled(1e9);
    let mut peak = BTreeMap::new();
    for (p, e) in [
        (Precision::Fp32, &f.chip.peak_tflops.fp32),
        (Precision::Fp16, &f.chip.peak_tflops.fp16),
        (Precision::Int8, &f.chip.peak_tflops.int8),
        (Precision::Fp8, &f.chip.peak_tflops.fp8),
    ] {
        if let Some(e) = e {
            let field = format!("chip.peak_tflops.{p}");
            peak.insert(p, positive(&field, e, "TFLOP/s > 0")?.scaled(1e12));
        }
    }
    if peak.is_empty() {
        return Err(src
            .error_at(None, "chip.peak_tflops", "no peak compute is given")
            .with_help("give at least one of fp32, fp16, int8, fp8 (dense TFLOP/s per chip)"));
    }
    let idle = cite("power.idle_w", &f.power.idle_w)?;
    crate::input::NumberCheck {
        source: src,
        field: "power.idle_w",
    }
    .non_negative(&f.power.idle_w.value, "watts ≥ 0")?;
    let peak_w = positive("power.peak_w", &f.power.peak_w, "watts > 0")?;
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
    let e_c = fraction("efficiency.compute", &f.efficiency.compute)?;
    let e_m = fraction("efficiency.memory", &f.efficiency.memory)?;
    let t0 = cite(
        "efficiency.batch_overhead_ms",
        &f.efficiency.batch_overhead_ms,
    )?;
    crate::input::NumberCheck {
        source: src,
        field: "efficiency.batch_overhead_ms",
    }
    .non_negative(&f.efficiency.batch_overhead_ms.value, "milliseconds ≥ 0")?;
    let t0 = t0.scaled(1e-3);

    let batching = match &f.batching {
        None => Batching {
            max_batch: 1,
            window_s: 0.0,
            compiled_batch_sizes: vec![],
        },
        Some(b) => {
            let max_batch = *b.max_batch.get_ref();
            if max_batch == 0 {
                return Err(src
                    .error(&b.max_batch, "batching.max_batch", "= 0 is out of range")
                    .with_help("valid: a whole number ≥ 1"));
            }
            let window_s = match &b.window_ms {
                Some(w) => {
                    crate::input::NumberCheck {
                        source: src,
                        field: "batching.window_ms",
                    }
                    .non_negative(w, "milliseconds ≥ 0")?
                        * 1e-3
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
            }
        }
    };

    let price = |field: &str, e: &Option<file::CitedEntry>| -> Result<Option<Cited>, InputError> {
        e.as_ref()
            .map(|e| {
                let c = cite(field, e)?;
                crate::input::NumberCheck { source: src, field }
                    .non_negative(&e.value, "USD ≥ 0")?;
                Ok(c)
            })
            .transpose()
    };
    let prices = Prices {
        region: f.price.region.clone(),
        purchase_usd: price("price.purchase_usd", &f.price.purchase_usd)?,
        on_demand_usd_per_hour: price(
            "price.on_demand_usd_per_hour",
            &f.price.on_demand_usd_per_hour,
        )?,
        reserved_1y_usd_per_hour: price(
            "price.reserved_1y_usd_per_hour",
            &f.price.reserved_1y_usd_per_hour,
        )?,
        reserved_3y_usd_per_hour: price(
            "price.reserved_3y_usd_per_hour",
            &f.price.reserved_3y_usd_per_hour,
        )?,
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
        memory_bytes_per_chip: memory,
        memory_bandwidth_per_chip: bandwidth,
        peak_per_chip: peak,
        idle_power_w: idle,
        peak_power_w: peak_w,
        efficiency_compute: e_c,
        efficiency_memory: e_m,
        batch_overhead_s: t0,
        batching,
        prices,
        calibration: f.calibration,
        sources,
    })
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
