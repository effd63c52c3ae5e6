//! The scenario's `[uncertainty]` table and the inputs it can name: every numeric input by a
//! path, its value, the range it accepts, and how to set it. Stage 4: validation turns the raw
//! table into [`UncertainInput`]s with located errors; [`crate::uncertainty`] samples them.
//!
//! Paths:
//!
//! ```text
//! costs.<key>                         a [costs] assumption (docs/scenario-format.md)
//! tier.<tier>.<profile number key>    a number of the tier's profile as a profile file writes it
//!                                     (efficiency.compute, price.purchase_usd, chip.memory_gb …),
//!                                     in the written unit; it applies to every tier of that profile
//! tier.<tier>.energy_usd_per_unit_hour | software_usd_per_unit_year | porting_usd
//!                                     a tier's own cost setting, when the tier sets it
//! workload.<field>                    a model number (parameters, flops_per_item, layers …)
//! traffic.growth_per_year             the traffic's compound yearly growth
//! slo.max_utilization                 the planned utilization ceiling
//! ```
//!
//! Every input whose basis is "estimate" gets a default range (its declared one, or the rule of
//! [`crate::uncertainty::ranges`]) unless the table names it; `slo.max_utilization` is a planning
//! choice, not a quantity anyone is unsure of, so it is varied only when the table names it.

use serde::Serialize;
use toml::Spanned;

use super::file::RangeFile;
use super::{
    MAX_ENERGY_USD_PER_UNIT_HOUR, MAX_PORTING_USD, MAX_SOFTWARE_USD_PER_UNIT_YEAR, MIN_UTILIZATION,
    Scenario, Tier,
};
use crate::cite::{Basis, Cited};
use crate::cost::inputs::COST_INPUTS;
use crate::hardware::numbers::{PROFILE_NUMBERS, ProfileNumber, Valid};
use crate::input::{InputError, SourceFile, closest};
use crate::traffic::Growth;
use crate::traffic::file::{MAX_GROWTH_PER_YEAR, MIN_GROWTH_PER_YEAR};
use crate::uncertainty::ranges::{self, Dist};

/// A tier's own cost setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TierSetting {
    EnergyUsdPerUnitHour,
    SoftwareUsdPerUnitYear,
    PortingUsd,
}

impl TierSetting {
    const ALL: [TierSetting; 3] = [
        TierSetting::EnergyUsdPerUnitHour,
        TierSetting::SoftwareUsdPerUnitYear,
        TierSetting::PortingUsd,
    ];

    fn key(self) -> &'static str {
        match self {
            TierSetting::EnergyUsdPerUnitHour => "energy_usd_per_unit_hour",
            TierSetting::SoftwareUsdPerUnitYear => "software_usd_per_unit_year",
            TierSetting::PortingUsd => "porting_usd",
        }
    }

    fn get(self, t: &Tier) -> Option<&Cited> {
        match self {
            TierSetting::EnergyUsdPerUnitHour => t.energy_override.as_ref(),
            TierSetting::SoftwareUsdPerUnitYear => t.software_override.as_ref(),
            TierSetting::PortingUsd => t.porting.as_ref(),
        }
    }

    fn get_mut(self, t: &mut Tier) -> Option<&mut Cited> {
        match self {
            TierSetting::EnergyUsdPerUnitHour => t.energy_override.as_mut(),
            TierSetting::SoftwareUsdPerUnitYear => t.software_override.as_mut(),
            TierSetting::PortingUsd => t.porting.as_mut(),
        }
    }

    fn valid(self) -> Valid {
        match self {
            TierSetting::EnergyUsdPerUnitHour => Valid::from_to(
                0.0,
                MAX_ENERGY_USD_PER_UNIT_HOUR,
                "USD per unit-hour from 0 to 1,000",
            ),
            TierSetting::SoftwareUsdPerUnitYear => Valid::from_to(
                0.0,
                MAX_SOFTWARE_USD_PER_UNIT_YEAR,
                "USD per unit-year from 0 to 1,000,000",
            ),
            TierSetting::PortingUsd => Valid::from_to(0.0, MAX_PORTING_USD, "USD from 0 to 1e10"),
        }
    }
}

/// What an input path points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A `[costs]` assumption, by its index in [`COST_INPUTS`].
    Cost(usize),
    /// A number of a tier's profile, by its index in [`PROFILE_NUMBERS`]; it applies to every
    /// tier of the same profile.
    Profile { tier: usize, number: usize },
    /// A tier's own cost setting.
    Tier { tier: usize, setting: TierSetting },
    /// A model number of the workload.
    Workload(&'static str),
    /// `traffic.growth_per_year`.
    Growth,
    /// `slo.max_utilization`.
    MaxUtilization,
}

/// A path to one numeric input, as `[uncertainty]` and the reports spell it.
#[derive(Debug, Clone, PartialEq)]
pub struct InputPath {
    /// `costs.pue`, `tier.altra-max.efficiency.compute`, …
    pub key: String,
    pub target: Target,
}

/// Where an input's range comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum RangeOrigin {
    /// The scenario's `[uncertainty]` table, at this line.
    Scenario { line: usize },
    /// The range declared with the input (e.g. the discount rate's 6–12 %).
    Declared { why: String },
    /// The general rule for estimates ([`ranges::ESTIMATE_RULE`]).
    EstimateRule { why: String },
    /// The rule for constants the accuracy suite fitted ([`ranges::FIT_RULE`]): the spread of
    /// its held-out throughput errors.
    FitRule { why: String },
    /// A measured value's own spread (its `log_sd`, which `calibrate --from` sets to its fit's
    /// residual): lognormal with its median at the value.
    Measured { log_sd: f64 },
}

impl RangeOrigin {
    /// For tables: "scenario line 40", "declared: …", "estimate rule".
    pub fn label(&self) -> String {
        match self {
            RangeOrigin::Scenario { line } => format!("scenario line {line}"),
            RangeOrigin::Declared { .. } => "declared with the input".into(),
            RangeOrigin::EstimateRule { .. } => "estimate rule (AACE class 4)".into(),
            RangeOrigin::FitRule { .. } => "fit rule (accuracy suite held-out error)".into(),
            RangeOrigin::Measured { log_sd } => format!(
                "measured: lognormal, σ = {} in ln terms (its log_sd: a calibrate --from fit's residual)",
                crate::format::plain(*log_sd)
            ),
        }
    }
}

/// One input the analysis varies: where it is, how it is distributed (in its written unit) and
/// where that range comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct UncertainInput {
    pub path: InputPath,
    pub dist: Dist,
    pub origin: RangeOrigin,
}

/// The valid workload model numbers, per kind of workload.
const CLASSIC_FIELDS: [&str; 3] = [
    "flops_per_item",
    "parameters",
    "activation_elements_per_item",
];
const GENERATIVE_FIELDS: [&str; 5] = [
    "parameters",
    "layers",
    "hidden_size",
    "kv_heads",
    "head_dim",
];

impl Target {
    /// Whether changing it changes the capacity plan (re-plan) rather than only the costs.
    pub fn is_performance(&self) -> bool {
        match self {
            Target::Cost(_) | Target::Tier { .. } => false,
            Target::Profile { number, .. } => {
                let key = PROFILE_NUMBERS[*number].key;
                !(key.starts_with("price.") || key.starts_with("power."))
            }
            Target::Workload(_) | Target::Growth | Target::MaxUtilization => true,
        }
    }
}

impl Scenario {
    /// Every input path this scenario has, in report order: costs, the tiers' profile numbers
    /// and settings, the workload, the traffic's growth and the utilization ceiling.
    pub fn input_paths(&self) -> Vec<InputPath> {
        let mut out: Vec<InputPath> = COST_INPUTS
            .iter()
            .enumerate()
            .map(|(i, c)| InputPath {
                key: format!("costs.{}", c.key),
                target: Target::Cost(i),
            })
            .collect();
        for (ti, t) in self.tiers.iter().enumerate() {
            for (ni, n) in PROFILE_NUMBERS.iter().enumerate() {
                if self.why_inert(t, n).is_some() {
                    continue;
                }
                if n.get(&t.profile).is_some() {
                    out.push(InputPath {
                        key: format!("tier.{}.{}", t.name, n.key),
                        target: Target::Profile {
                            tier: ti,
                            number: ni,
                        },
                    });
                }
            }
            for s in TierSetting::ALL {
                if s.get(t).is_some() {
                    out.push(InputPath {
                        key: format!("tier.{}.{}", t.name, s.key()),
                        target: Target::Tier {
                            tier: ti,
                            setting: s,
                        },
                    });
                }
            }
        }
        for f in self.workload_fields() {
            out.push(InputPath {
                key: format!("workload.{f}"),
                target: Target::Workload(f),
            });
        }
        out.push(InputPath {
            key: "traffic.growth_per_year".into(),
            target: Target::Growth,
        });
        out.push(InputPath {
            key: "slo.max_utilization".into(),
            target: Target::MaxUtilization,
        });
        out
    }

    /// Why profile number `n` does not move tier `t`'s base plan of this workload, and what
    /// to vary instead; `None` when it does. A number that does not would show a tornado bar
    /// of zero and be drawn for nothing, so it is not offered as an uncertain input, and
    /// `[uncertainty]` naming it is refused with this reason:
    /// - the service-time spread moves only the simulated tail, never the throughput the
    ///   re-plan scales by (its multiplier has mean 1);
    /// - the serial fraction only slows a pass split across cores, so not a classic tier of one
    ///   core per request;
    /// - of the compute efficiencies, only the one the workload's operator class reads
    ///   ([`crate::perf::class_efficiency`]: `compute_conv` for convolutions, `compute_matmul`
    ///   for transformers and every generative model, `compute` where the profile sets no
    ///   class value);
    /// - the attention's memory efficiency only reads a generative model's KV cache;
    /// - a generative model's iterations pay the iteration overhead where the profile sets one,
    ///   never the batch overhead, and a classic batch pays only the batch overhead;
    /// - the streaming cost per sequence is paid only by a generative model's iterations;
    /// - all-reduce latency and link bandwidth only act on a replica split over devices.
    pub fn why_inert(&self, t: &Tier, n: &ProfileNumber) -> Option<&'static str> {
        use crate::hardware::numbers as k;
        use crate::workload::{OpClass, Workload};
        let (class, generative) = match &self.workload {
            Workload::Classic { model, .. } => (model.op_class, false),
            Workload::Generative { .. } => (Some(OpClass::Matmul), true),
        };
        let class_value = crate::perf::class_efficiency(&t.profile, class).is_some();
        match n.key {
            key if key == k::SERVICE_CV.key => Some(
                "the service-time spread moves only the simulated tail, not the throughput the re-plan scales by; set the tier's service_cv to study it",
            ),
            key if key == k::SERIAL_FRACTION.key
                && !generative
                && t.batching.cores_per_request <= 1 =>
            {
                Some(
                    "the serial fraction only slows a pass split across cores, and this tier runs one core per request",
                )
            }
            key if key == k::EFFICIENCY_COMPUTE.key && class_value => Some(
                "the workload's operator class has its own efficiency in this profile (efficiency.compute_matmul or efficiency.compute_conv); vary that",
            ),
            key if key == k::EFFICIENCY_COMPUTE_CONV.key && class != Some(OpClass::Conv) => Some(
                "the workload is not a convolutional model; its compute efficiency is efficiency.compute_matmul (transformers) or efficiency.compute",
            ),
            key if key == k::EFFICIENCY_COMPUTE_MATMUL.key && class != Some(OpClass::Matmul) => {
                Some(
                    "the workload is not a transformer; its compute efficiency is efficiency.compute_conv (convolutions) or efficiency.compute",
                )
            }
            key if key == k::EFFICIENCY_ATTENTION_MEMORY.key && !generative => Some(
                "the attention's memory efficiency reads a generative model's KV cache, and this workload has none; vary efficiency.memory",
            ),
            key if key == k::BATCH_OVERHEAD.key
                && generative
                && t.profile.iteration_overhead_s.is_some() =>
            {
                Some(
                    "a generative model's iterations pay this profile's efficiency.iteration_overhead_ms instead; vary that",
                )
            }
            key if key == k::ITERATION_OVERHEAD.key && !generative => Some(
                "only a generative model's iterations pay it; a classic batch pays efficiency.batch_overhead_ms, vary that",
            ),
            key if key == k::STREAM_OVERHEAD.key && !generative => Some(
                "only a generative model's streamed iterations pay it, once per decoding sequence; a classic batch pays efficiency.batch_overhead_ms, vary that",
            ),
            key if (key == k::ALLREDUCE_LATENCY.key || key == k::INTERCONNECT_BANDWIDTH.key)
                && !matches!(&t.plan, crate::perf::ServicePlan::Generative(g) if g.devices_per_replica > 1) =>
            {
                Some(
                    "the tier's replicas run on one device each, so no all-reduce crosses the interconnect",
                )
            }
            _ => None,
        }
    }

    fn workload_fields(&self) -> &'static [&'static str] {
        match self.workload {
            crate::workload::Workload::Classic { .. } => &CLASSIC_FIELDS,
            crate::workload::Workload::Generative { .. } => &GENERATIVE_FIELDS,
        }
    }

    /// The input's value in the unit it is written in, its basis, and a measured value's own
    /// spread (`log_sd`).
    pub fn input_value(&self, t: Target) -> (f64, Basis, Option<f64>) {
        let of = |c: &Cited, scale: f64| (c.value / scale, c.basis, c.log_sd);
        match t {
            Target::Cost(i) => self
                .costs
                .fields()
                .get(i)
                .map_or((0.0, Basis::Cited, None), |(_, c)| of(c, 1.0)),
            Target::Profile { tier, number } => {
                let n = &PROFILE_NUMBERS[number];
                n.get(&self.tiers[tier].profile)
                    .map_or((0.0, Basis::Cited, None), |c| of(c, n.scale))
            }
            Target::Tier { tier, setting } => setting
                .get(&self.tiers[tier])
                .map_or((0.0, Basis::Cited, None), |c| of(c, 1.0)),
            Target::Workload(f) => self
                .workload
                .cited_numbers()
                .into_iter()
                .find(|(k, _)| k == f)
                .map_or((0.0, Basis::Cited, None), |(_, c)| of(c, 1.0)),
            Target::Growth => (self.traffic.growth().per_year, Basis::UserInput, None),
            Target::MaxUtilization => of(&self.slo.max_utilization, 1.0),
        }
    }

    /// What values the input accepts, in its written unit.
    pub fn input_valid(&self, t: Target) -> Valid {
        match t {
            Target::Cost(i) => COST_INPUTS[i].valid,
            Target::Profile { number, .. } => PROFILE_NUMBERS[number].valid,
            Target::Tier { setting, .. } => setting.valid(),
            Target::Workload(f) => {
                let (max, text) = super::workload::model_bound(&format!("workload.{f}"));
                Valid::above_to(0.0, max, text)
            }
            Target::Growth => Valid::from_to(
                MIN_GROWTH_PER_YEAR,
                MAX_GROWTH_PER_YEAR,
                "a fraction per year from -0.9 to 3",
            ),
            Target::MaxUtilization => {
                Valid::from_to(MIN_UTILIZATION, 1.0, "a fraction from 0.01 to 1")
            }
        }
    }

    /// The unit the input is written in.
    pub fn input_unit(&self, t: Target) -> &'static str {
        match t {
            Target::Cost(i) => COST_INPUTS[i].unit,
            Target::Profile { number, .. } => PROFILE_NUMBERS[number].unit,
            Target::Tier { setting, .. } => match setting {
                TierSetting::EnergyUsdPerUnitHour => "USD/unit-hour",
                TierSetting::SoftwareUsdPerUnitYear => "USD/unit-year",
                TierSetting::PortingUsd => "USD",
            },
            Target::Workload(_) => "count",
            Target::Growth | Target::MaxUtilization => "fraction",
        }
    }

    /// Set the input to `value` (in its written unit, already inside its valid range). A
    /// profile number is set in every tier of that profile; the tiers' service plans are the
    /// caller's to recompute after a performance input changes.
    pub fn set_input(&mut self, t: Target, value: f64) {
        match t {
            Target::Cost(i) => {
                if let Some(c) = self.costs.get_mut(COST_INPUTS[i].key) {
                    c.value = value;
                }
            }
            Target::Profile { tier, number } => {
                let n = &PROFILE_NUMBERS[number];
                let name = self.tiers[tier].profile.name.clone();
                for t in self.tiers.iter_mut().filter(|t| t.profile.name == name) {
                    if let Some(c) = n.get_mut(&mut t.profile) {
                        c.value = value * n.scale;
                    }
                }
            }
            Target::Tier { tier, setting } => {
                if let Some(c) = setting.get_mut(&mut self.tiers[tier]) {
                    c.value = value;
                }
            }
            Target::Workload(f) => {
                if let Some(c) = self.workload.number_mut(f) {
                    c.value = value;
                }
            }
            Target::Growth => self.traffic.set_growth(Growth { per_year: value }),
            Target::MaxUtilization => self.slo.max_utilization.value = value,
        }
    }

    /// Rebuild every tier's service plan from its (changed) profile and the workload, after a
    /// performance input was set. Per tier, whether the model still fits its units; a tier
    /// that no longer fits keeps its old plan, and must not be planned.
    pub fn rebuild_service_plans(&mut self) -> Vec<bool> {
        let workload = self.workload.clone();
        self.tiers
            .iter_mut()
            .map(
                |t| match crate::perf::plan(&t.profile, &workload, t.precision, &t.batching) {
                    Ok(p) => {
                        t.plan = p;
                        true
                    }
                    Err(_) => false,
                },
            )
            .collect()
    }

    /// Every input the uncertainty analysis varies: those the `[uncertainty]` table names (in
    /// its order), then every other estimate with a default range, every constant the
    /// accuracy suite fitted (basis "fit", spread by its held-out error) and every measured
    /// number that carries its spread (`log_sd`), in
    /// [`Scenario::input_paths`] order. A profile's number is listed once, under the first tier
    /// of that profile.
    pub fn uncertain_inputs(&self) -> Vec<UncertainInput> {
        let mut out = self.uncertainty.clone();
        let mut seen_profiles: Vec<(String, usize)> = Vec::new();
        for p in self.input_paths() {
            if out
                .iter()
                .any(|u| same_input(self, u.path.target, p.target))
            {
                continue;
            }
            if let Target::Profile { tier, number } = p.target {
                let name = self.tiers[tier].profile.name.clone();
                if seen_profiles.contains(&(name.clone(), number)) {
                    continue;
                }
                seen_profiles.push((name, number));
            }
            if p.target == Target::MaxUtilization {
                continue;
            }
            let (value, basis, log_sd) = self.input_value(p.target);
            let (dist, origin) = match basis {
                Basis::Estimate => {
                    let declared = match p.target {
                        Target::Cost(i) => COST_INPUTS[i].range,
                        _ => None,
                    };
                    let Some(dist) =
                        Dist::for_estimate(value, declared, &self.input_valid(p.target))
                    else {
                        continue;
                    };
                    let origin = match declared {
                        Some(d) => RangeOrigin::Declared { why: d.why.into() },
                        None => RangeOrigin::EstimateRule {
                            why: ranges::ESTIMATE_RULE.into(),
                        },
                    };
                    (dist, origin)
                }
                Basis::Fit => {
                    // A profile's kind and the workload's class pick the fit rule's σ;
                    // anything else takes the pooled one.
                    let dist = match p.target {
                        Target::Profile { tier, .. } => Dist::for_fit(
                            value,
                            self.tiers[tier].profile.kind,
                            self.workload.is_generative(),
                        ),
                        _ => Dist::lognormal_median(value, ranges::FIT_LOG_SD),
                    };
                    let Some(dist) = dist else {
                        continue;
                    };
                    let why = ranges::FIT_RULE.into();
                    (dist, RangeOrigin::FitRule { why })
                }
                Basis::Measured => {
                    let Some((sd, dist)) =
                        log_sd.and_then(|sd| Some((sd, Dist::lognormal_median(value, sd)?)))
                    else {
                        continue;
                    };
                    (dist, RangeOrigin::Measured { log_sd: sd })
                }
                _ => continue,
            };
            out.push(UncertainInput {
                path: p,
                dist,
                origin,
            });
        }
        out
    }
}

/// Whether two targets are the same input (a profile number is the same in every tier of the
/// profile).
fn same_input(s: &Scenario, a: Target, b: Target) -> bool {
    match (a, b) {
        (
            Target::Profile {
                tier: ta,
                number: na,
            },
            Target::Profile {
                tier: tb,
                number: nb,
            },
        ) => na == nb && s.tiers[ta].profile.name == s.tiers[tb].profile.name,
        _ => a == b,
    }
}

/// Why a `tier.<name>.<profile number>` path that the tier's profile sets moves nothing
/// ([`Scenario::why_inert`]); `None` for any other path.
fn inert_number(s: &Scenario, key: &str) -> Option<&'static str> {
    s.tiers.iter().find_map(|t| {
        let number = key.strip_prefix(&format!("tier.{}.", t.name))?;
        let n = PROFILE_NUMBERS.iter().find(|n| n.key == number)?;
        n.get(&t.profile)?;
        s.why_inert(t, n)
    })
}

/// Resolve a path against the scenario's inputs by its whole key, so tier names with dots
/// (`aws-inf2.xlarge`) resolve without splitting.
fn resolve(s: &Scenario, key: &str) -> Option<InputPath> {
    s.input_paths().into_iter().find(|p| p.key == key)
}

/// Validate `[uncertainty]`: each path names an input of this scenario, each distribution is
/// possible and overlaps the input's valid range.
pub(super) fn validate(
    src: &SourceFile,
    s: &Scenario,
    table: &std::collections::BTreeMap<Spanned<String>, Spanned<RangeFile>>,
) -> Result<Vec<UncertainInput>, InputError> {
    let mut out = Vec::new();
    for (key, entry) in table {
        let field = format!("uncertainty.\"{}\"", key.get_ref());
        let Some(path) = resolve(s, key.get_ref()) else {
            let (message, help) = match inert_number(s, key.get_ref()) {
                Some(why) => (
                    format!("`{}` has no effect on this scenario's plan", key.get_ref()),
                    why.to_string(),
                ),
                None => {
                    let all = s.input_paths();
                    let names: Vec<&str> = all.iter().map(|p| p.key.as_str()).collect();
                    let hint = "paths: costs.<key>, tier.<tier>.<profile number key>, tier.<tier>.porting_usd, workload.<field>, traffic.growth_per_year, slo.max_utilization";
                    let help = match closest(key.get_ref(), &names) {
                        Some(b) => format!("did you mean `{b}`? {hint}"),
                        None => hint.to_string(),
                    };
                    (
                        format!("no input of this scenario is at `{}`", key.get_ref()),
                        help,
                    )
                }
            };
            return Err(src.error(key, field, message).with_help(help));
        };
        let dist = dist_of(src, &field, entry)?;
        let valid = s.input_valid(path.target);
        let (low, high) = dist.search_ends();
        let below = valid.max.is_some_and(|m| low > m);
        let above = valid
            .min
            .is_some_and(|m| high < m || (valid.strict_min && high <= m));
        if below || above {
            return Err(src
                .error(
                    entry,
                    field,
                    format!(
                        "the range {} lies outside what the input accepts",
                        dist.label()
                    ),
                )
                .with_help(format!("valid: {}", valid.text)));
        }
        let (line, _) = src.line_col(entry.span().start);
        out.push(UncertainInput {
            path,
            dist,
            origin: RangeOrigin::Scenario { line },
        });
    }
    Ok(out)
}

const DISTS: [&str; 5] = ["uniform", "triangular", "normal", "lognormal", "pert"];

fn dist_of(src: &SourceFile, field: &str, entry: &Spanned<RangeFile>) -> Result<Dist, InputError> {
    let r = entry.get_ref();
    let name = r.dist.as_ref().map_or("uniform", |d| d.get_ref().as_str());
    let wanted: &[&str] = match name {
        "uniform" => &["low", "high"],
        "triangular" | "pert" => &["low", "mode", "high"],
        "normal" | "lognormal" => &["mean", "sd"],
        _ => {
            let d = r.dist.as_ref().expect("a named distribution");
            let help = match closest(name, &DISTS) {
                Some(b) => format!("did you mean `{b}`? distributions: {}", DISTS.join(", ")),
                None => format!("distributions: {}", DISTS.join(", ")),
            };
            return Err(src
                .error(
                    d,
                    format!("{field}.dist"),
                    format!("unknown distribution `{name}`"),
                )
                .with_help(help));
        }
    };
    let all = [
        ("low", &r.low),
        ("mode", &r.mode),
        ("high", &r.high),
        ("mean", &r.mean),
        ("sd", &r.sd),
    ];
    let need = format!("a {name} range takes {}", wanted.join(", "));
    for (k, v) in all {
        if let Some(v) = v
            && !wanted.contains(&k)
        {
            return Err(src
                .error(
                    v,
                    format!("{field}.{k}"),
                    format!("`{k}` is not a parameter of a {name} range"),
                )
                .with_help(need));
        }
    }
    let mut vals = Vec::new();
    for k in wanted {
        let v = all
            .iter()
            .find(|(n, _)| n == k)
            .and_then(|(_, v)| v.as_ref())
            .ok_or_else(|| {
                src.error(entry, field, format!("`{k}` is missing"))
                    .with_help(need.clone())
            })?;
        vals.push(*v.get_ref());
    }
    let dist = match name {
        "uniform" => Dist::Uniform {
            low: vals[0],
            high: vals[1],
        },
        "triangular" => Dist::Triangular {
            low: vals[0],
            mode: vals[1],
            high: vals[2],
        },
        "pert" => Dist::Pert {
            low: vals[0],
            mode: vals[1],
            high: vals[2],
        },
        "normal" => Dist::Normal {
            mean: vals[0],
            sd: vals[1],
        },
        _ => Dist::LogNormal {
            mean: vals[0],
            sd: vals[1],
        },
    };
    dist.check()
        .map_err(|e| src.error(entry, field, e.message).with_help(e.help))?;
    Ok(dist)
}
