//! Scenarios: the validated description of one planning question — a workload, its traffic, a
//! latency contract, the hardware tiers and deployment options to compare, and the cost
//! assumptions (each with a cited default).
//!
//! `scenario.toml` is read into the raw mirror of [`self::file`], then validated once into
//! [`Scenario`]; everything downstream sees only validated values. The workload's validation is
//! in `scenario/workload.rs`, the traffic's in [`crate::traffic::file`]; the cost assumptions are
//! checked against their declarations in [`crate::cost::inputs`], which also give their defaults.

pub mod file;
mod prefix;
pub mod uncertainty;
mod workload;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Serialize;
use toml::Spanned;

use crate::cite::{Basis, Cited, Source};
use crate::cost::inputs::{self, CostInputs};
use crate::hardware::{
    Batching, DecodeAttention, DeploymentOption, KvAllocationChoice, Precision, Profile,
    ProfileSearch,
};
use crate::input::{InputError, NumberCheck, SourceFile, closest};
use crate::traffic::TrafficSpec;
use crate::workload::Workload;
use file::{CostsFile, ScenarioFile, SimulationFile, TierFile};

/// The latency contract: one percentile, with a bound on end-to-end latency and, for
/// generative models, on time to first token and time per output token. At least one bound.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Slo {
    /// Percentile in (0, 100).
    pub percentile: f64,
    /// Bound on that percentile of end-to-end latency \[s\].
    pub latency_s: Option<f64>,
    /// Bound on that percentile of time to first token \[s\].
    pub ttft_s: Option<f64>,
    /// Bound on that percentile of time per output token \[s\].
    pub tpot_s: Option<f64>,
    /// Highest planned fleet utilization (headroom).
    pub max_utilization: Cited,
}

impl Slo {
    /// "p99 ≤ 200 ms", "p99 ≤ 60 s", or "p99 TTFT ≤ 2 s, TPOT ≤ 100 ms" (one duration
    /// formatter for every text: [`crate::format::duration`]).
    pub fn label(&self) -> String {
        let mut parts = Vec::new();
        for (name, v) in [
            ("", self.latency_s),
            ("TTFT ", self.ttft_s),
            ("TPOT ", self.tpot_s),
        ] {
            if let Some(v) = v {
                parts.push(format!("{name}≤ {}", crate::format::duration(v)));
            }
        }
        format!("p{} {}", trim_float(self.percentile), parts.join(", "))
    }
}

/// One hardware tier: a profile and the ways of paying for it to compare.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tier {
    pub name: String,
    pub profile: Profile,
    pub options: Vec<DeploymentOption>,
    /// A fleet size fixed by the scenario instead of planned.
    pub fixed_units: Option<u32>,
    pub precision: Precision,
    /// All-in power and cooling per unit-hour, replacing the energy model.
    pub energy_override: Option<Cited>,
    pub batching: Batching,
    /// How often an autoscaled cloud fleet may change size \[hours\].
    pub autoscale_interval_h: u32,
    /// Software licences per unit-year \[USD\], replacing the per-GPU default.
    pub software_override: Option<Cited>,
    /// One-time porting and engineering \[USD\], paid at the start of year 1.
    pub porting: Option<Cited>,
    /// Whether `spot` counts as meeting the contract (the tier says its service rides out
    /// interruptions); otherwise a spot option is costed but never recommended.
    pub spot_meets_slo: bool,
    /// The tier's own `price_change_per_year`, which replaces the profile's (kept here for the
    /// report's inputs; the tier's copy of the profile carries it into the cost model).
    pub price_change_override: Option<Cited>,
    /// On-prem spares per year (N + k), replacing the availability target's.
    pub spares: Option<u32>,
    /// The tier's own `service_cv`, which replaces the profile's `efficiency.service_cv` (kept
    /// here for the report's inputs; the tier's copy of the profile carries it into the plan).
    pub service_cv_override: Option<Cited>,
    /// The coefficient of variation of the tier's `service_times`, with where they come from
    /// (kept for the report's inputs; the tier's batching carries the times into the plan).
    pub service_times_override: Option<Cited>,
    /// The service-time plan of this tier's profile, workload, precision and batching, computed
    /// once here (validation already needs it to check that the model fits) and kept, so the
    /// capacity plan and the reports never recompute it. Derived, not an input, so not
    /// serialized.
    #[serde(skip)]
    pub plan: crate::perf::ServicePlan,
}

/// How the capacity planner simulates each candidate fleet.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimulationSettings {
    pub replications: u32,
    pub window_s: f64,
    pub warmup_s: f64,
    pub max_units: u32,
    pub dispatch: crate::sim::Dispatch,
}

impl Default for SimulationSettings {
    fn default() -> Self {
        SimulationSettings {
            replications: 4,
            window_s: 600.0,
            warmup_s: 60.0,
            max_units: 10_000,
            dispatch: crate::sim::Dispatch::JoinShortestQueue,
        }
    }
}

/// A published figure to compare a result with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reference {
    pub label: String,
    pub tier: String,
    pub option: DeploymentOption,
    pub total_usd: Option<f64>,
    pub break_even_hours_per_day: Option<f64>,
}

/// One input of the run, for the report's assumptions table: every number with its source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InputRecord {
    /// Where it applies: `costs`, `workload`, or a tier's profile name.
    pub scope: String,
    pub field: String,
    pub value: f64,
    pub basis: Basis,
    pub source: String,
    pub date: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl InputRecord {
    fn new(scope: &str, field: &str, c: &Cited) -> Self {
        InputRecord {
            scope: scope.into(),
            field: field.into(),
            value: c.value,
            basis: c.basis,
            source: c.source.title.clone(),
            date: c.source.date.clone(),
            note: c.note.clone(),
        }
    }
}

/// A validated scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    pub name: String,
    pub description: Option<String>,
    /// The file as named on the command line.
    pub file: String,
    pub horizon_years: u32,
    pub seed: u64,
    pub workload: Workload,
    #[serde(skip)]
    pub traffic: TrafficSpec,
    pub slo: Slo,
    pub tiers: Vec<Tier>,
    pub costs: CostInputs,
    pub simulation: SimulationSettings,
    pub references: Vec<Reference>,
    /// The inputs `[uncertainty]` gives ranges to, validated, in path order
    /// ([`Scenario::uncertain_inputs`] adds the estimates' default ranges).
    #[serde(skip)]
    pub uncertainty: Vec<uncertainty::UncertainInput>,
}

impl Scenario {
    /// Read and validate a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, InputError> {
        let src = SourceFile::read(path)?;
        Scenario::from_source(&src)
    }

    /// Validate a scenario held in memory (its relative paths resolve against its folder).
    pub fn from_source(src: &SourceFile) -> Result<Scenario, InputError> {
        let f: ScenarioFile = src.parse()?;
        validate(src, f)
    }

    /// Every input with its source, for the report.
    pub fn input_records(&self) -> Vec<InputRecord> {
        let mut out = Vec::new();
        for (field, c) in self.workload.cited_numbers() {
            out.push(InputRecord::new("workload", &field, c));
        }
        out.push(InputRecord::new(
            "slo",
            "max_utilization",
            &self.slo.max_utilization,
        ));
        for (field, c) in self.costs.fields() {
            out.push(InputRecord::new("costs", field, c));
        }
        let mut seen = BTreeSet::new();
        for t in &self.tiers {
            if let Some(e) = &t.energy_override {
                out.push(InputRecord::new(&t.name, "energy_usd_per_unit_hour", e));
            }
            if let Some(e) = &t.software_override {
                out.push(InputRecord::new(&t.name, "software_usd_per_unit_year", e));
            }
            if let Some(e) = &t.porting {
                out.push(InputRecord::new(&t.name, "porting_usd", e));
            }
            if let Some(g) = &t.price_change_override {
                out.push(InputRecord::new(&t.name, "price_change_per_year", g));
            }
            if let Some(c) = &t.service_cv_override {
                out.push(InputRecord::new(&t.name, "service_cv", c));
            }
            if let Some(c) = &t.service_times_override {
                out.push(InputRecord::new(&t.name, "service_times (CV)", c));
            }
            if !seen.insert(t.profile.name.clone()) {
                continue;
            }
            for (field, c) in t.profile.cited_numbers() {
                // A tier's override is recorded under the tier, not as the profile's figure.
                if t.price_change_override.is_some()
                    && field == crate::hardware::numbers::CHANGE_PER_YEAR.label
                {
                    continue;
                }
                if (t.service_cv_override.is_some() || t.service_times_override.is_some())
                    && field == crate::hardware::numbers::SERVICE_CV.label
                {
                    continue;
                }
                out.push(InputRecord::new(&t.profile.name, &field, c));
            }
            if let Some(e) = t.profile.prices.egress {
                for (field, c) in e.cited_numbers() {
                    out.push(InputRecord::new(&t.profile.name, &field, &c));
                }
            }
        }
        out
    }
}

fn trim_float(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn validate(src: &SourceFile, f: ScenarioFile) -> Result<Scenario, InputError> {
    let base = src.base_dir();
    let name = f.name.get_ref().trim().to_string();
    if name.is_empty() {
        return Err(src
            .error(&f.name, "name", "the scenario name is empty")
            .with_help("give the scenario a name, e.g. name = \"ResNet-50 image API\""));
    }
    let horizon_years = match &f.horizon_years {
        Some(h) => whole(src, h, "horizon_years", 1, 20)?,
        None => 5,
    };
    let seed = match &f.seed {
        Some(s) => {
            if *s.get_ref() < 0 {
                return Err(src
                    .error(s, "seed", format!("= {} is out of range", s.get_ref()))
                    .with_help("valid: a whole number ≥ 0"));
            }
            *s.get_ref() as u64
        }
        None => 1,
    };
    let workload = workload::validate(src, &f.workload)?;
    let mut traffic = crate::traffic::file::validate(src, &f.traffic, &base)?;
    prefix::validate(src, &f.workload, &workload, &mut traffic)?;
    crate::traffic::file::check_peak(src, &f.traffic, &traffic, horizon_years)?;
    let slo = validate_slo(src, &f.slo, workload.is_generative())?;

    let mut search = ProfileSearch::default();
    if let Some(dir) = &f.profiles_dir {
        let d = base.join(dir.get_ref());
        if !d.is_dir() {
            return Err(src
                .error(
                    dir,
                    "profiles_dir",
                    format!("`{}` is not a folder", d.display()),
                )
                .with_help("give a folder of profile .toml files, relative to this scenario"));
        }
        search.dirs.push(d);
    }
    search.dirs.push(base.clone());

    if f.tiers.get_ref().is_empty() {
        return Err(src
            .error(&f.tiers, "tier", "no tiers to compare")
            .with_help("add at least one [[tier]] with a profile"));
    }
    let mut tiers: Vec<Tier> = Vec::new();
    for (i, t) in f.tiers.get_ref().iter().enumerate() {
        let tier = validate_tier(src, &search, &base, i, t, &workload)?;
        if tiers.iter().any(|o| o.name == tier.name) {
            let at = t.name.as_ref().map_or(t.profile.span(), |n| n.span());
            return Err(src
                .error_at(
                    Some(at),
                    format!("tier[{i}].name"),
                    format!("a second tier is named `{}`", tier.name),
                )
                .with_help("give each tier a distinct name"));
        }
        tiers.push(tier);
    }
    let costs = validate_costs(src, &f.costs)?;
    let simulation = validate_simulation(src, f.simulation.as_ref())?;
    let references = f
        .references
        .iter()
        .enumerate()
        .map(|(i, r)| validate_reference(src, i, r, &tiers))
        .collect::<Result<_, _>>()?;
    let mut scenario = Scenario {
        name,
        description: f.description,
        file: src.name.clone(),
        horizon_years,
        seed,
        workload,
        traffic,
        slo,
        tiers,
        costs,
        simulation,
        references,
        uncertainty: vec![],
    };
    scenario.uncertainty = uncertainty::validate(src, &scenario, &f.uncertainty)?;
    Ok(scenario)
}

fn validate_reference(
    src: &SourceFile,
    i: usize,
    r: &file::ReferenceFile,
    tiers: &[Tier],
) -> Result<Reference, InputError> {
    let field = |k: &str| format!("reference[{i}].{k}");
    let Some(tier) = tiers.iter().find(|t| &t.name == r.tier.get_ref()) else {
        let names: Vec<&str> = tiers.iter().map(|t| t.name.as_str()).collect();
        return Err(src
            .error(
                &r.tier,
                field("tier"),
                format!("no tier is named `{}`", r.tier.get_ref()),
            )
            .with_help(format!("tiers in this scenario: {}", names.join(", "))));
    };
    let option = *r.option.get_ref();
    if !tier.options.contains(&option) {
        return Err(src
            .error(
                &r.option,
                field("option"),
                format!("tier `{}` does not compare {option}", tier.name),
            )
            .with_help(format!("its options: {}", labels(&tier.options))));
    }
    let total_usd = r
        .total_usd
        .as_ref()
        .map(|v| {
            NumberCheck {
                source: src,
                field: &field("total_usd"),
            }
            .range(
                v,
                Some(0.0),
                false,
                Some(MAX_REFERENCE_USD),
                "USD from 0 to 1e12",
            )
        })
        .transpose()?;
    let break_even_hours_per_day = match &r.break_even_hours_per_day {
        Some(v) if !option.is_cloud() => {
            return Err(src
                .error(
                    v,
                    field("break_even_hours_per_day"),
                    "a break-even is stated against a cloud option",
                )
                .with_help(
                    "put it on the reference of the cloud tier and option it was computed against",
                ));
        }
        Some(v) => Some(
            NumberCheck {
                source: src,
                field: &field("break_even_hours_per_day"),
            }
            .range(
                v,
                Some(0.0),
                false,
                Some(24.0),
                "hours per day from 0 to 24",
            )?,
        ),
        None => None,
    };
    Ok(Reference {
        label: r.label.clone(),
        tier: tier.name.clone(),
        option,
        total_usd,
        break_even_hours_per_day,
    })
}

/// A whole number in `[min, max]`.
/// A tier key that applies to some generative tiers only: refused at its place with `why_not`
/// when it would have no effect there (it applies to `applies_to`), else a whole number from 1
/// to `max`.
fn generative_key(
    src: &SourceFile,
    v: &Spanned<i64>,
    field: &str,
    why_not: Option<String>,
    applies_to: &str,
    max: i64,
) -> Result<u32, InputError> {
    let key = field.rsplit('.').next().unwrap_or(field);
    if let Some(why) = why_not {
        return Err(src
            .error(v, field, why)
            .with_help(format!("{key} is for {applies_to}; remove it")));
    }
    whole(src, v, field, 1, max)
}

fn whole(
    src: &SourceFile,
    v: &Spanned<i64>,
    field: &str,
    min: i64,
    max: i64,
) -> Result<u32, InputError> {
    let x = *v.get_ref();
    if x < min || x > max {
        return Err(src
            .error(v, field, format!("= {x} is out of range"))
            .with_help(format!("valid: a whole number from {min} to {max}")));
    }
    Ok(x as u32)
}

fn user_cited(src: &SourceFile, v: &Spanned<f64>, value: f64, citation: Option<&String>) -> Cited {
    let (line, _) = src.line_col(v.span().start);
    match citation {
        Some(c) => Cited {
            log_sd: None,
            value,
            basis: Basis::Cited,
            source: Source {
                key: "scenario".into(),
                title: c.clone(),
                url: None,
                date: String::new(),
            },
            note: Some(format!("set in {}:{line}", src.name)),
        },
        None => Cited::user(value, format!("{}:{line}", src.name)),
    }
}

/// The most measured times a tier's `service_times` may hold: far more than any percentile needs,
/// and few enough that the planner keeps them all in memory.
const MAX_SERVICE_TIMES: usize = 10_000_000;

/// A tier's `service_times` as numbers, at least two, each finite and > 0, with where they come
/// from (the scenario's line, or the file and column). `key` is the field's path.
fn service_times(
    src: &SourceFile,
    st: &Spanned<file::ServiceTimesFile>,
    key: &str,
) -> Result<(Vec<f64>, String), InputError> {
    let f = st.get_ref();
    let (line, _) = src.line_col(st.span().start);
    let help = "give `values = [...]` (measured times in one unit) or `file = \"times.csv\"` with \
                `column = \"<header>\"`";
    let (times, from) = match (&f.values, &f.file) {
        (Some(v), None) => {
            if let Some(c) = &f.column {
                return Err(src
                    .error(
                        c,
                        format!("{key}.column"),
                        "names a column, but there is no `file`",
                    )
                    .with_help("give `file` with `column`, or remove `column`"));
            }
            for (i, &x) in v.get_ref().iter().enumerate() {
                if !(x.is_finite() && x > 0.0) {
                    return Err(src
                        .error(
                            v,
                            format!("{key}.values[{i}]"),
                            format!("= {x} is not a measured time"),
                        )
                        .with_help("valid: finite numbers > 0, all in one unit"));
                }
            }
            (v.get_ref().clone(), format!("{}:{line}", src.name))
        }
        (None, Some(path)) => {
            let Some(column) = &f.column else {
                return Err(src
                    .error(
                        path,
                        format!("{key}.file"),
                        "needs `column`: the header of the column of times",
                    )
                    .with_help("add column = \"<header>\", e.g. column = \"latency_ms\""));
            };
            let full = src.base_dir().join(path.get_ref());
            let file = SourceFile::read(&full).map_err(|e| {
                src.error(path, format!("{key}.file"), e.message.clone())
                    .with_help("a CSV file with a header row; a relative path is read from the scenario's folder")
            })?;
            let times = crate::traffic::read::positive_column(
                &file,
                column.get_ref(),
                "a header row, then one measured time per row",
            )?;
            let from = format!("{}, column `{}`", path.get_ref(), column.get_ref());
            (times, from)
        }
        (Some(v), Some(_)) => {
            return Err(src
                .error(
                    v,
                    format!("{key}.values"),
                    "is given with `file`: one source of times",
                )
                .with_help(help));
        }
        (None, None) => {
            return Err(src
                .error(st, key.to_string(), "gives no times")
                .with_help(help));
        }
    };
    if times.len() < 2 {
        return Err(src
            .error(
                st,
                key.to_string(),
                format!(
                    "holds {} measured time(s); a spread needs at least 2",
                    times.len()
                ),
            )
            .with_help("give every measured time of the run, or use service_cv"));
    }
    if times.len() > MAX_SERVICE_TIMES {
        return Err(src
            .error(
                st,
                key.to_string(),
                format!(
                    "holds {} measured times, more than the {MAX_SERVICE_TIMES} allowed",
                    times.len()
                ),
            )
            .with_help("a random sample of them keeps the shape"));
    }
    Ok((times, from))
}

/// The lowest `slo.max_utilization`: a fleet planned to run at most 1 % busy keeps 99 % of its
/// capacity idle, beyond any headroom policy; below it the utilization bound alone asks for
/// hundreds of times the units the traffic needs.
const MIN_UTILIZATION: f64 = 0.01;
/// The dearest all-in power and cooling a unit-hour may cost \[USD\]: the seed's 8×H100 server
/// costs $0.87/h, and the dearest cloud instance $100/h; ten times that.
const MAX_ENERGY_USD_PER_UNIT_HOUR: f64 = 1_000.0;
/// The dearest licences a unit-year may carry \[USD\]: NVIDIA AI Enterprise lists $4,500 per
/// GPU-year, $36,000 for an 8-GPU server; a million is beyond any per-server software bill.
const MAX_SOFTWARE_USD_PER_UNIT_YEAR: f64 = 1_000_000.0;
/// The largest one-time porting cost \[USD\]: ten billion is beyond any engineering
/// programme, custom-silicon NRE included.
const MAX_PORTING_USD: f64 = 1e10;
/// The largest published cost a reference may quote \[USD\]: a trillion dollars is beyond any
/// fleet's lifetime cost.
const MAX_REFERENCE_USD: f64 = 1e12;
/// The longest lone-request service time a tier may have \[s\]: the simulator holds times as
/// integer nanoseconds and refuses durations above 10⁶ s, and a request taking over a day is
/// outside any latency contract.
const MAX_SERVICE_S: f64 = crate::units::DAY_S;

fn validate_slo(src: &SourceFile, s: &file::SloFile, generative: bool) -> Result<Slo, InputError> {
    let p = *s.percentile.get_ref();
    if !(p.is_finite() && p > 0.0 && p < 100.0) {
        return Err(src
            .error(
                &s.percentile,
                "slo.percentile",
                format!("= {p} is out of range"),
            )
            .with_help("valid: a percentile strictly between 0 and 100, e.g. 99 for p99 or 99.9"));
    }
    let bound = |v: &Option<Spanned<f64>>, field: &str| -> Result<Option<f64>, InputError> {
        v.as_ref()
            .map(|v| {
                NumberCheck { source: src, field }
                    .positive(v, "milliseconds > 0")
                    .map(|ms| ms * 1e-3)
            })
            .transpose()
    };
    let latency_s = bound(&s.latency_ms, "slo.latency_ms")?;
    let ttft_s = bound(&s.ttft_ms, "slo.ttft_ms")?;
    let tpot_s = bound(&s.tpot_ms, "slo.tpot_ms")?;
    if latency_s.is_none() && ttft_s.is_none() && tpot_s.is_none() {
        return Err(src
            .error(&s.percentile, "slo", "the contract has no bound")
            .with_help(
                "give latency_ms (end-to-end), or for generative models ttft_ms and/or tpot_ms",
            ));
    }
    if !generative {
        for (v, field) in [(&s.ttft_ms, "slo.ttft_ms"), (&s.tpot_ms, "slo.tpot_ms")] {
            if let Some(v) = v {
                return Err(src
                    .error(v, field, "token timings apply only to generative models")
                    .with_help("use latency_ms for a classic model"));
            }
        }
    }
    let max_utilization = match &s.max_utilization {
        Some(u) => {
            let x = NumberCheck {
                source: src,
                field: "slo.max_utilization",
            }
            .range(
                u,
                Some(MIN_UTILIZATION),
                false,
                Some(1.0),
                "a fraction from 0.01 to 1, e.g. 0.7 to keep 30 % headroom",
            )?;
            user_cited(src, u, x, None)
        }
        None => Cited {
            log_sd: None,
            value: 0.8,
            basis: Basis::Estimate,
            source: Source {
                key: "planning-headroom".into(),
                title: "tco-sim default: plan fleets to at most 80 % utilization (headroom for failures and unmodelled bursts)".into(),
                url: None,
                date: "2026-11".into(),
            },
            note: Some("a planning choice, not a measurement; set slo.max_utilization".into()),
        },
    };
    Ok(Slo {
        percentile: p,
        latency_s,
        ttft_s,
        tpot_s,
        max_utilization,
    })
}

fn validate_tier(
    src: &SourceFile,
    search: &ProfileSearch,
    base: &Path,
    i: usize,
    t: &TierFile,
    workload: &Workload,
) -> Result<Tier, InputError> {
    let field = |k: &str| format!("tier[{i}].{k}");
    let profile = search.load(t.profile.get_ref(), base).map_err(|e| {
        // A profile file's own errors keep their location; an unknown name, or a profile file
        // that cannot be read, points at the tier that names it.
        if e.position.is_some() {
            e
        } else if let Some(file) = &e.file {
            src.error(&t.profile, field("profile"), format!("profile file {file}: {}", e.message))
                .with_help("give a shipped profile name (`tco-sim profiles`) or a path relative to this scenario")
        } else {
            let mut located = src.error(&t.profile, field("profile"), e.message.clone());
            located.help = e.help.clone();
            located
        }
    })?;
    let name = t
        .name
        .as_ref()
        .map(|n| n.get_ref().trim().to_string())
        .unwrap_or_else(|| profile.name.clone());
    if let Some(n) = &t.name
        && name.is_empty()
    {
        return Err(src
            .error(n, field("name"), "the tier name is empty")
            .with_help(format!(
                "give the tier a name, e.g. name = \"{}\", or remove `name` to use the profile's",
                profile.name
            )));
    }
    let options = match &t.options {
        Some(opts) => {
            if opts.get_ref().is_empty() {
                return Err(src
                    .error(opts, field("options"), "no deployment options")
                    .with_help(format!(
                        "options this profile has prices for: {}",
                        labels(&profile.options())
                    )));
            }
            for o in opts.get_ref() {
                if profile.price(*o).is_none() {
                    return Err(src
                        .error(
                            opts,
                            field("options"),
                            format!("profile `{}` has no price for {o}", profile.name),
                        )
                        .with_help(format!(
                            "options this profile has prices for: {}",
                            labels(&profile.priced_options())
                        )));
                }
            }
            let mut v = opts.get_ref().clone();
            v.sort();
            v.dedup();
            v
        }
        None => profile.options(),
    };
    let fixed_units = t
        .units
        .as_ref()
        .map(|u| whole(src, u, &field("units"), 1, 1_000_000))
        .transpose()?;
    // A fixed fleet runs around the clock, so a hybrid (reserved base + on-demand burst) is the
    // pure reservation again; list hybrids by default only when the fleet follows the traffic.
    let options = match (&t.options, fixed_units) {
        (None, Some(_)) => options.into_iter().filter(|o| !o.is_hybrid()).collect(),
        _ => options,
    };
    let precision = t
        .precision
        .as_ref()
        .map_or(workload.precision(), |p| *p.get_ref());
    if !profile.peak_per_chip.contains_key(&precision) {
        let have: Vec<&str> = profile.peak_per_chip.keys().map(|p| p.label()).collect();
        let at = t.precision.as_ref().map_or(t.profile.span(), |p| p.span());
        return Err(src
            .error_at(
                Some(at),
                field("precision"),
                format!("profile `{}` has no {precision} peak", profile.name),
            )
            .with_help(format!(
                "set precision on this tier to one of: {}",
                have.join(", ")
            )));
    }
    let energy_override = match &t.energy_usd_per_unit_hour {
        Some(e) => {
            let x = NumberCheck {
                source: src,
                field: &field("energy_usd_per_unit_hour"),
            }
            .range(
                e,
                Some(0.0),
                false,
                Some(MAX_ENERGY_USD_PER_UNIT_HOUR),
                "USD per unit-hour from 0 to 1,000",
            )?;
            // Only an on-prem option pays for its own power; a cloud price already includes
            // it, so the number would be read and then ignored.
            if !options.contains(&DeploymentOption::OnPrem) {
                return Err(src
                    .error(
                        e,
                        field("energy_usd_per_unit_hour"),
                        format!(
                            "tier `{name}` compares only cloud options ({}), whose prices include power",
                            labels(&options)
                        ),
                    )
                    .with_help("energy_usd_per_unit_hour applies to on-prem units; remove it, or add \"on-prem\" to the tier's options"));
            }
            Some(user_cited(src, e, x, t.energy_source.as_ref()))
        }
        None => None,
    };
    let mut batching = profile.batching.clone();
    if let Some(b) = &t.max_batch {
        batching.max_batch = whole(
            src,
            b,
            &field("max_batch"),
            1,
            i64::from(crate::hardware::MAX_BATCH),
        )?;
        if !batching.compiled_batch_sizes.is_empty() {
            batching
                .compiled_batch_sizes
                .retain(|&s| s < batching.max_batch);
            batching.compiled_batch_sizes.push(batching.max_batch);
        }
    }
    if let Some(w) = &t.window_ms {
        batching.window_s = NumberCheck {
            source: src,
            field: &field("window_ms"),
        }
        .range(
            w,
            Some(0.0),
            false,
            Some(crate::hardware::MAX_WINDOW_MS),
            crate::hardware::WINDOW_MS_TEXT,
        )? * 1e-3;
    }
    batching.generative = generative_scheduling(src, t, &field, workload)?;
    // A generative tier's max_batch is its engine's max_num_seqs.
    if t.max_batch.is_some() {
        batching.generative.max_num_seqs = Some(batching.max_batch);
    }
    if let Some(k) = &t.cores_per_request {
        let cores = match (profile.kind, &profile.cores_per_chip) {
            (crate::hardware::UnitKind::Cpu, Some(c)) => c.value as i64,
            _ => {
                return Err(src
                    .error(
                        k,
                        field("cores_per_request"),
                        format!("profile `{}` is not a CPU", profile.name),
                    )
                    .with_help("cores_per_request is for CPU tiers (cores per request); an accelerator batches with max_batch"));
            }
        };
        batching.cores_per_request = whole(src, k, &field("cores_per_request"), 1, cores)?;
    }
    // Generative-only keys: refused where they would have no effect, with the reason.
    let generative = workload.is_generative();
    let classic_why =
        |what: &str| format!("workload `{}` is a classic model, {what}", workload.name());
    if let Some(d) = &t.tensor_parallel {
        let why_not = if profile.kind == crate::hardware::UnitKind::Cpu {
            Some(format!(
                "profile `{}` is a CPU: a generative replica runs on one chip",
                profile.name
            ))
        } else {
            (!generative).then(|| classic_why("which runs whole on each device"))
        };
        let chips = i64::from(profile.chip_count());
        batching.tensor_parallel = Some(generative_key(
            src,
            d,
            &field("tensor_parallel"),
            why_not,
            "generative models on accelerator tiers",
            chips,
        )?);
    }
    if let Some(c) = &t.compiled_context_tokens {
        let why_not = if profile.batching.compiled_batch_sizes.is_empty() {
            Some(format!(
                "profile `{}` compiles no shapes: its attention reads each sequence's own context",
                profile.name
            ))
        } else {
            (!generative).then(|| classic_why("which has no KV cache"))
        };
        batching.compiled_context_tokens = Some(generative_key(
            src,
            c,
            &field("compiled_context_tokens"),
            why_not,
            "generative models on compiled-shape tiers (Inferentia)",
            1_000_000,
        )?);
    }
    if let Some(p) = &t.kv_cache_precision {
        if !generative {
            return Err(src
                .error(
                    p,
                    field("kv_cache_precision"),
                    classic_why("which has no KV cache"),
                )
                .with_help("kv_cache_precision is for generative models; remove it"));
        }
        batching.kv_cache_precision = Some(*p.get_ref());
    }
    // The tier's service-time spread replaces the profile's before the plan is built from it.
    let mut profile = profile;
    let service_cv_override = match &t.service_cv {
        Some(v) => {
            let decl = &crate::hardware::numbers::SERVICE_CV;
            let x = decl.valid.check(src, &field("service_cv"), v)?;
            let c = user_cited(src, v, x, t.service_cv_source.as_ref());
            profile.service_cv = c.clone();
            Some(c)
        }
        None => {
            if t.service_cv_source.is_some() {
                return Err(src
                    .error_at(
                        Some(t.profile.span()),
                        field("service_cv_source"),
                        "cites a service_cv the tier does not set",
                    )
                    .with_help("set service_cv on this tier, or remove service_cv_source"));
            }
            None
        }
    };
    // Measured times replace the log-normal spread: one way of giving it per tier.
    let service_times_override = match &t.service_times {
        Some(st) => {
            if let Some(cv) = &t.service_cv {
                return Err(src
                    .error(
                        cv,
                        field("service_cv"),
                        "sets the spread `service_times` already gives from measured times",
                    )
                    .with_help(
                        "keep service_times (measured) or service_cv (a log-normal), not both",
                    ));
            }
            let (times, from) = service_times(src, st, &field("service_times"))?;
            let n = times.len();
            let mean = times.iter().sum::<f64>() / n as f64;
            let var = times.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            let title = t
                .service_times_source
                .as_ref()
                .map_or_else(|| from.clone(), |s| s.get_ref().clone());
            batching.service_times = Some(times);
            Some(Cited {
                log_sd: None,
                value: var.sqrt() / mean,
                basis: Basis::Measured,
                source: Source {
                    key: "scenario".into(),
                    title,
                    url: None,
                    date: String::new(),
                },
                note: Some(format!(
                    "coefficient of variation of {n} measured times ({from}); their shape, over \
                     their mean, spreads each unit of work around the roofline time"
                )),
            })
        }
        None => {
            if let Some(s) = &t.service_times_source {
                return Err(src
                    .error(
                        s,
                        field("service_times_source"),
                        "cites service_times the tier does not set",
                    )
                    .with_help("set service_times on this tier, or remove service_times_source"));
            }
            None
        }
    };
    // The model must fit: check now so the error names the tier, not a later stage.
    let plan = crate::perf::plan(&profile, workload, precision, &batching).map_err(|e| {
        src.error(&t.profile, field("profile"), e.message.clone())
            .with_help(e.help.clone().unwrap_or_default())
    })?;
    check_service_time(src, t, &field("profile"), &plan, workload)?;
    let autoscale_interval_h = match &t.autoscale_interval_hours {
        Some(h) => whole(
            src,
            h,
            &field("autoscale_interval_hours"),
            1,
            crate::units::YEAR_HOURS as i64,
        )?,
        None => 1,
    };
    let money = |v: &Option<Spanned<f64>>, key: &str, max: f64, text: &str, cite| {
        v.as_ref()
            .map(|e| {
                NumberCheck {
                    source: src,
                    field: &field(key),
                }
                .range(e, Some(0.0), false, Some(max), text)
                .map(|x| user_cited(src, e, x, cite))
            })
            .transpose()
    };
    let software_override = money(
        &t.software_usd_per_unit_year,
        "software_usd_per_unit_year",
        MAX_SOFTWARE_USD_PER_UNIT_YEAR,
        "USD per unit-year from 0 to 1,000,000",
        t.software_source.as_ref(),
    )?;
    let porting = money(
        &t.porting_usd,
        "porting_usd",
        MAX_PORTING_USD,
        "USD from 0 to 1e10",
        t.porting_source.as_ref(),
    )?;
    let spot_meets_slo = match &t.spot_meets_slo {
        Some(b) => {
            if *b.get_ref() && !options.contains(&DeploymentOption::Spot) {
                return Err(src
                    .error(
                        b,
                        field("spot_meets_slo"),
                        format!("tier `{name}` does not compare spot ({})", labels(&options)),
                    )
                    .with_help(
                        "add \"spot\" to the tier's options (its profile needs price.spot_usd_per_hour), or remove spot_meets_slo",
                    ));
            }
            *b.get_ref()
        }
        None => false,
    };
    let price_change_override = match &t.price_change_per_year {
        Some(v) => {
            let decl = &crate::hardware::numbers::CHANGE_PER_YEAR;
            let x = decl.valid.check(src, &field("price_change_per_year"), v)?;
            let c = user_cited(src, v, x, t.price_change_source.as_ref());
            profile.prices.change_per_year = Some(c.clone());
            Some(c)
        }
        None => None,
    };
    let spares = t
        .spares
        .as_ref()
        .map(|k| {
            whole(
                src,
                k,
                &field("spares"),
                0,
                i64::from(crate::cost::inputs::MAX_SPARES),
            )
        })
        .transpose()?;
    if let (Some(k), false) = (&t.spares, options.contains(&DeploymentOption::OnPrem)) {
        return Err(src
            .error(
                k,
                field("spares"),
                format!(
                    "tier `{name}` compares only cloud options ({}), which keep no spares",
                    labels(&options)
                ),
            )
            .with_help("spares applies to on-prem units; remove it, or add \"on-prem\" to the tier's options"));
    }
    Ok(Tier {
        spares,
        name,
        profile,
        spot_meets_slo,
        price_change_override,
        service_cv_override,
        service_times_override,
        options,
        fixed_units,
        precision,
        energy_override,
        batching,
        autoscale_interval_h,
        software_override,
        porting,
        plan,
    })
}

/// Most tokens one iteration may be given as its budget: 2^20, beyond any serving engine's.
pub const MAX_BATCHED_TOKENS: i64 = 1 << 20;

/// The tier's `chunked_prefill`, `max_batched_tokens`, `kv_allocation` and `decode_attention`,
/// checked: generative
/// workloads only (a classic model has no iterations to schedule). The budget holds with
/// chunking on or off: off, whole prompts fill it.
fn generative_scheduling(
    src: &SourceFile,
    t: &TierFile,
    field: &dyn Fn(&str) -> String,
    workload: &Workload,
) -> Result<crate::hardware::GenerativeScheduling, InputError> {
    let mut g = crate::hardware::GenerativeScheduling::default();
    if !workload.is_generative() {
        let given = [
            (
                "chunked_prefill",
                t.chunked_prefill.as_ref().map(|v| v.span()),
            ),
            (
                "max_batched_tokens",
                t.max_batched_tokens.as_ref().map(|v| v.span()),
            ),
            ("kv_allocation", t.kv_allocation.as_ref().map(|v| v.span())),
            (
                "decode_attention",
                t.decode_attention.as_ref().map(|v| v.span()),
            ),
        ];
        if let Some((key, span)) = given.into_iter().find(|(_, s)| s.is_some()) {
            return Err(src
                .error_at(span, field(key), "applies to generative workloads only")
                .with_help(
                    "a classic model runs no iterations to schedule; remove it, or use max_batch and window_ms",
                ));
        }
        return Ok(g);
    }
    if let Some(c) = &t.chunked_prefill {
        g.chunked_prefill = *c.get_ref();
    }
    if let Some(b) = &t.max_batched_tokens {
        g.max_batched_tokens = Some(whole(
            src,
            b,
            &field("max_batched_tokens"),
            1,
            MAX_BATCHED_TOKENS,
        )?);
    }
    if let Some(k) = &t.kv_allocation {
        let valid = "\"paged\" (grow in 16-token blocks, preempt when full) or \"reserve\" \
                     (whole context at admission)";
        let choice = KvAllocationChoice::from_name;
        g.paged_kv = src
            .choice(k, field("kv_allocation"), "KV allocation", valid, choice)?
            .is_paged();
    }
    if let Some(a) = &t.decode_attention {
        let valid = "\"split\" (a long context split across thread blocks: vLLM, TensorRT-LLM \
                     from 0.13.0) or \"per-head\" (one block per sequence and head: \
                     TensorRT-LLM before 0.13.0)";
        let choice = DecodeAttention::from_name;
        g.decode_attention = src.choice(
            a,
            field("decode_attention"),
            "decode attention",
            valid,
            choice,
        )?;
    }

    Ok(g)
}

/// Numbers that are each in range can still combine into a request no unit can serve in time
/// (a model of 10¹⁵ FLOP per item on a 1 GFLOP/s core): refuse a tier whose lone request
/// takes longer than [`MAX_SERVICE_S`], or whose throughput is not a positive finite number,
/// here rather than as "inf ms" or an internal error in the simulator.
fn check_service_time(
    src: &SourceFile,
    t: &TierFile,
    field: &str,
    plan: &crate::perf::ServicePlan,
    workload: &Workload,
) -> Result<(), InputError> {
    let lone_s = match (plan, workload) {
        (crate::perf::ServicePlan::Classic(p), _) => p.lone_request_s(),
        (
            crate::perf::ServicePlan::Generative(p),
            Workload::Generative {
                prompt_tokens,
                output_tokens,
                ..
            },
        ) => p.lone_request_s(prompt_tokens.mean(), output_tokens.mean().max(1.0)),
        (crate::perf::ServicePlan::Generative(_), Workload::Classic { .. }) => 0.0,
    };
    let throughput = plan.unit_throughput_rps(workload);
    if lone_s.is_finite() && lone_s <= MAX_SERVICE_S && throughput.is_finite() && throughput > 0.0 {
        return Ok(());
    }
    Err(src
        .error(
            &t.profile,
            field,
            format!(
                "one request would take {lone_s:.3e} s on this tier (throughput {throughput:.3e} req/s per unit)"
            ),
        )
        .with_help(
            "valid: a lone request served within a day; check the workload's size against the profile's peak, bandwidth and efficiencies",
        ))
}

fn labels(options: &[DeploymentOption]) -> String {
    options
        .iter()
        .map(|o| o.label())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every assumption set under `[costs]` replaces its cited default, checked against its
/// declaration in [`crate::cost::inputs`].
fn validate_costs(src: &SourceFile, c: &CostsFile) -> Result<CostInputs, InputError> {
    let mut out = CostInputs::default();
    let known = inputs::keys();
    if let Some(key) = c.unknown.first() {
        return Err(src
            .error(
                key,
                format!("costs.{}", key.get_ref()),
                format!("unknown key `{}`", key.get_ref()),
            )
            .with_help(did_you_mean(key.get_ref(), &known)));
    }
    for (key, _) in &c.sources {
        if inputs::cost_input(key.get_ref()).is_none() {
            return Err(src
                .error(
                    key,
                    format!("costs.sources.{}", key.get_ref()),
                    format!("no cost assumption is named `{}`", key.get_ref()),
                )
                .with_help(did_you_mean(key.get_ref(), &known)));
        }
    }
    for decl in inputs::COST_INPUTS {
        let Some(v) = c.value(decl.key) else {
            continue;
        };
        let x = decl.valid.check(src, &format!("costs.{}", decl.key), v)?;
        // Every declared key is a field of `CostInputs` (the macro makes both from one list).
        if let Some(target) = out.get_mut(decl.key) {
            *target = user_cited(src, v, x, c.source(decl.key));
        }
    }
    Ok(out)
}

/// "did you mean `pue`? keys: …" when a key is close to a known one.
fn did_you_mean(key: &str, known: &[&str]) -> String {
    match closest(key, known) {
        Some(b) => format!("did you mean `{b}`? keys: {}", known.join(", ")),
        None => format!("keys: {}", known.join(", ")),
    }
}

fn validate_simulation(
    src: &SourceFile,
    s: Option<&SimulationFile>,
) -> Result<SimulationSettings, InputError> {
    let mut out = SimulationSettings::default();
    let Some(s) = s else { return Ok(out) };
    if let Some(r) = &s.replications {
        out.replications = whole(src, r, "simulation.replications", 1, 1000)?;
    }
    if let Some(w) = &s.window_s {
        out.window_s = NumberCheck {
            source: src,
            field: "simulation.window_s",
        }
        .range(
            w,
            Some(1.0),
            false,
            Some(86_400.0 * 7.0),
            "seconds from 1 to 604,800",
        )?;
    }
    if let Some(w) = &s.warmup_s {
        out.warmup_s = NumberCheck {
            source: src,
            field: "simulation.warmup_s",
        }
        .range(
            w,
            Some(0.0),
            false,
            Some(out.window_s),
            "seconds from 0 to window_s",
        )?;
    }
    if let Some(m) = &s.max_units {
        out.max_units = whole(src, m, "simulation.max_units", 1, 1_000_000)?;
    }
    if let Some(d) = s.dispatch {
        out.dispatch = d;
    }
    Ok(out)
}

/// Where outputs of a scenario go by default: `reports/<file stem>/`.
pub fn default_out_dir(scenario_path: &Path) -> PathBuf {
    let stem = scenario_path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("scenario");
    Path::new("reports").join(stem)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "name = \"t\"\n[workload]\npreset = \"resnet-50\"\nprecision = \"int8\"\n[traffic]\npeak_rps = 100\n[slo]\npercentile = 99\nlatency_ms = 200\n[[tier]]\nprofile = \"aws-inf2.xlarge\"\n[costs]\n";

    fn costs(lines: &str) -> Result<CostInputs, InputError> {
        let src = SourceFile::from_text("s.toml", format!("{BASE}{lines}"));
        Scenario::from_source(&src).map(|s| s.costs)
    }

    #[test]
    fn a_value_set_in_costs_replaces_its_default_with_its_citation() {
        let c = costs("pue = 1.2\nsources = { pue = \"our 2025 audit\" }\n").unwrap();
        assert_eq!(c.pue.value, 1.2);
        assert_eq!(c.pue.source.title, "our 2025 audit");
        assert_eq!(c.pue.note.as_deref(), Some("set in s.toml:13"));
        let d = CostInputs::default();
        assert_eq!(c.discount_rate, d.discount_rate);
        let c = costs("discount_rate = 0.1\n").unwrap();
        assert_eq!(c.discount_rate.basis, Basis::UserInput);
        assert_eq!(c.discount_rate.source.title, "s.toml:13");
    }

    #[test]
    fn an_unknown_key_is_located_and_suggested_whatever_its_value() {
        let e = costs("pue = 1.2\ndiscount_rat = \"eight\"\n").unwrap_err();
        assert_eq!(e.position, Some((14, 1)));
        assert_eq!(e.field.as_deref(), Some("costs.discount_rat"));
        assert_eq!(e.message, "unknown key `discount_rat`");
        assert!(
            e.help
                .as_deref()
                .unwrap()
                .starts_with("did you mean `discount_rate`?")
        );
        let e = costs("sources = { peu = \"x\" }\n").unwrap_err();
        assert_eq!(e.position, Some((13, 13)));
        assert_eq!(e.message, "no cost assumption is named `peu`");
        assert!(
            e.help
                .as_deref()
                .unwrap()
                .starts_with("did you mean `pue`?")
        );
    }

    #[test]
    fn ranges_and_whole_numbers_come_from_the_declarations() {
        let e = costs("depreciation_years = 4.5\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("costs.depreciation_years"));
        assert_eq!(e.message, "= 4.5 is not a whole number");
        assert_eq!(e.help.as_deref(), Some("valid: whole years from 1 to 30"));
        let e = costs("units_per_admin = 0\n").unwrap_err();
        assert_eq!(e.message, "= 0 is out of range");
        assert_eq!(
            e.help.as_deref(),
            Some("valid: units per administrator from 0.1 to 100,000")
        );
        let e = costs("pue = \"high\"\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("costs.pue"));
        assert!(e.message.contains("expected a number"), "{e}");
    }
}
