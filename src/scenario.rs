//! Scenarios: the validated description of one planning question — a workload, its traffic, a
//! latency contract, the hardware tiers and deployment options to compare, and the cost
//! assumptions (each with a cited default).
//!
//! `scenario.toml` is read into the raw mirror of [`self::file`], then validated once into
//! [`Scenario`]; everything downstream sees only validated values.

pub mod file;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Serialize;
use toml::Spanned;

use crate::cite::{Basis, Cited, Source};
use crate::hardware::{Batching, DeploymentOption, Precision, Profile, ProfileSearch};
use crate::input::{InputError, NumberCheck, SourceFile, closest};
use crate::traffic::TrafficSpec;
use crate::workload::{self, ClassicModel, GenerativeModel, TokenCount, Workload};
pub use file::DispatchPolicy;
use file::{CostsFile, ScenarioFile, SimulationFile, TierFile, WorkloadFile};

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
    /// "p99 ≤ 200 ms", or "p99 TTFT ≤ 2000 ms, TPOT ≤ 100 ms".
    pub fn label(&self) -> String {
        let mut parts = Vec::new();
        for (name, v) in [
            ("", self.latency_s),
            ("TTFT ", self.ttft_s),
            ("TPOT ", self.tpot_s),
        ] {
            if let Some(v) = v {
                parts.push(format!("{name}≤ {} ms", trim_float(v * 1e3)));
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
}

/// Cost assumptions, each cited (a default's source, or the scenario line that set it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostInputs {
    pub electricity_usd_per_kwh: Cited,
    pub pue: Cited,
    pub colocation_usd_per_kw_month: Cited,
    pub maintenance_share_per_year: Cited,
    pub depreciation_years: Cited,
    pub discount_rate: Cited,
    pub install_share_of_capex: Cited,
    pub units_per_admin: Cited,
    pub admin_cost_usd_per_year: Cited,
    pub egress_bytes_per_request: Cited,
    pub egress_usd_per_gb: Cited,
}

/// How the capacity planner simulates each candidate fleet.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimulationSettings {
    pub replications: u32,
    pub window_s: f64,
    pub warmup_s: f64,
    pub max_units: u32,
    pub dispatch: DispatchPolicy,
}

impl Default for SimulationSettings {
    fn default() -> Self {
        SimulationSettings {
            replications: 4,
            window_s: 600.0,
            warmup_s: 60.0,
            max_units: 10_000,
            dispatch: DispatchPolicy::JoinShortestQueue,
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
            if !seen.insert(t.profile.name.clone()) {
                continue;
            }
            for (field, c) in t.profile.cited_numbers() {
                out.push(InputRecord::new(&t.profile.name, &field, c));
            }
        }
        out
    }
}

impl CostInputs {
    /// Every assumption with its scenario key.
    pub fn fields(&self) -> [(&'static str, &Cited); 11] {
        [
            ("electricity_usd_per_kwh", &self.electricity_usd_per_kwh),
            ("pue", &self.pue),
            (
                "colocation_usd_per_kw_month",
                &self.colocation_usd_per_kw_month,
            ),
            (
                "maintenance_share_per_year",
                &self.maintenance_share_per_year,
            ),
            ("depreciation_years", &self.depreciation_years),
            ("discount_rate", &self.discount_rate),
            ("install_share_of_capex", &self.install_share_of_capex),
            ("units_per_admin", &self.units_per_admin),
            ("admin_cost_usd_per_year", &self.admin_cost_usd_per_year),
            ("egress_bytes_per_request", &self.egress_bytes_per_request),
            ("egress_usd_per_gb", &self.egress_usd_per_gb),
        ]
    }
}

fn source(key: &str, title: &str, url: &str, date: &str) -> Source {
    Source {
        key: key.into(),
        title: title.into(),
        url: (!url.is_empty()).then(|| url.into()),
        date: date.into(),
    }
}

fn default_cited(value: f64, basis: Basis, src: Source, note: Option<&str>) -> Cited {
    Cited {
        value,
        basis,
        source: src,
        note: note.map(String::from),
    }
}

/// The cited default of every cost assumption (`reference/hardware.md` §6).
pub fn default_costs() -> CostInputs {
    use Basis::*;
    CostInputs {
        electricity_usd_per_kwh: default_cited(
            0.081,
            Cited,
            source(
                "eia-2023",
                "EIA Electric Power Annual 2023: US average industrial price 8.06 ¢/kWh (via Statista)",
                "https://www.eia.gov/electricity/annual/",
                "2024-10-17",
            ),
            Some("industrial rate; state averages range 6.4 ¢ (WA) to 18.6 ¢ (CA)"),
        ),
        pue: default_cited(
            1.56,
            Cited,
            source(
                "uptime-2024",
                "Uptime Institute, 'Large data centers are mostly more efficient' (global average PUE 1.56–1.58)",
                "https://journal.uptimeinstitute.com/",
                "2024-02-07",
            ),
            Some("enterprise/colocation average; new large builds ~1.3"),
        ),
        colocation_usd_per_kw_month: default_cited(
            184.0,
            Cited,
            source(
                "cbre-h2-2024",
                "CBRE, North America Data Center Trends H2 2024: wholesale colocation 250–500 kW",
                "https://www.cbre.com/insights/reports/north-america-data-center-trends-h2-2024",
                "2025-02-26",
            ),
            Some(
                "per kW of provisioned IT load; retail colocation for small footprints costs more",
            ),
        ),
        maintenance_share_per_year: default_cited(
            0.10,
            Cited,
            source(
                "alpine-2025",
                "alpineblockchain.com, GPU server TCO (hardware support ~10 %/yr of capex; 10–12 % per librarytechnology.org)",
                "",
                "2025",
            ),
            None,
        ),
        depreciation_years: default_cited(
            5.0,
            Cited,
            source(
                "amazon-10k-2025",
                "Amazon 10-K: servers depreciated over 5 years from 2025-01-01 (enterprises 3–5 years)",
                "",
                "2025-02-11",
            ),
            Some("hardware is refreshed at the end of this life"),
        ),
        discount_rate: default_cited(
            0.08,
            Estimate,
            source(
                "damodaran-2026",
                "Damodaran, cost of capital by US industry, January 2026 (mostly 5–10 %)",
                "https://pages.stern.nyu.edu/~adamodar/New_Home_Page/datafile/wacc.html",
                "2026-01",
            ),
            Some("a mid-range cost of capital; use your finance team's rate"),
        ),
        install_share_of_capex: default_cited(
            0.15,
            Derived,
            source(
                "hamilton-split",
                "J. Hamilton's data-centre cost split via danluu.com/datacenter-power: servers 53 %, network 8 % of monthly cost",
                "https://danluu.com/datacenter-power/",
                "2019",
            ),
            Some("network and installation as a share of server capex: 8 % / 53 % = 0.15"),
        ),
        units_per_admin: default_cited(
            100.0,
            Estimate,
            source(
                "staffing",
                "Industry staffing ratios: 1 administrator per ~100 servers (GPU: 1 FTE per 50–100 nodes); traditional 10–20:1, hyperscale 1,000+:1",
                "",
                "2024",
            ),
            Some("a fractional share of an administrator is charged per unit"),
        ),
        admin_cost_usd_per_year: default_cited(
            126_700.0,
            Derived,
            source(
                "bls-ooh-2022",
                "US BLS Occupational Outlook Handbook: network and computer systems administrators, median pay $90,520 (May 2022)",
                "https://www.bls.gov/ooh/computer-and-information-technology/network-and-computer-systems-administrators.htm",
                "2023-09",
            ),
            Some(
                "$90,520 x 1.4 employer cost loading (benefits and taxes; the 1.4 is an estimate)",
            ),
        ),
        egress_bytes_per_request: default_cited(
            2_000.0,
            Estimate,
            source(
                "egress-size",
                "tco-sim default: a JSON response of ~2 KB per request (a label, an embedding or a short completion)",
                "",
                "2026-11",
            ),
            Some("set it from your API's real response size"),
        ),
        egress_usd_per_gb: default_cited(
            0.09,
            Cited,
            source(
                "aws-egress-2026",
                "AWS data transfer out to the internet, first 10 TB/month ($0.085–0.05 beyond)",
                "https://aws.amazon.com/ec2/pricing/on-demand/",
                "2026",
            ),
            Some("charged to cloud options only; on-prem transit is inside the installation share"),
        ),
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
    let workload = validate_workload(src, &f.workload)?;
    let traffic = crate::traffic::file::validate(src, &f.traffic, &base)?;
    let slo = validate_slo(src, &f.slo, matches!(workload, Workload::Generative { .. }))?;

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
    Ok(Scenario {
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
    })
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
            .non_negative(v, "USD ≥ 0")
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

fn validate_workload(src: &SourceFile, w: &WorkloadFile) -> Result<Workload, InputError> {
    let precision = *w.precision.get_ref();
    let num = |v: &Option<Spanned<f64>>, field: &str| -> Result<Option<Cited>, InputError> {
        v.as_ref()
            .map(|s| {
                let x = NumberCheck { source: src, field }.positive(s, "a number > 0")?;
                Ok(user_cited(src, s, x, w.source.as_ref()))
            })
            .transpose()
    };
    let generative_keys = [&w.layers, &w.hidden_size, &w.kv_heads, &w.head_dim];
    let is_generative_custom = generative_keys.iter().any(|k| k.is_some());
    if let Some(preset) = &w.preset {
        let p = preset.get_ref().as_str();
        if let Some(model) = workload::classic_preset(p) {
            reject_extra(src, w, false)?;
            return Ok(Workload::Classic { model, precision });
        }
        if let Some(model) = workload::generative_preset(p) {
            reject_extra(src, w, true)?;
            return generative(src, w, model, precision);
        }
        let all: Vec<&str> = workload::CLASSIC_PRESETS
            .iter()
            .chain(workload::GENERATIVE_PRESETS.iter())
            .copied()
            .collect();
        let help = match closest(p, &all) {
            Some(b) => format!("did you mean `{b}`? presets: {}", all.join(", ")),
            None => format!(
                "presets: {}; or omit `preset` and give the model's numbers",
                all.join(", ")
            ),
        };
        return Err(src
            .error(
                preset,
                "workload.preset",
                format!("unknown workload preset `{p}`"),
            )
            .with_help(help));
    }
    let name = w.name.clone().unwrap_or_else(|| "custom model".into());
    if is_generative_custom {
        let need = |v: &Option<Spanned<f64>>, field: &str| -> Result<Cited, InputError> {
            num(v, field)?.ok_or_else(|| {
                src.error_at(None, field, "missing for a custom generative model")
                    .with_help("a generative model needs parameters, layers, hidden_size, kv_heads and head_dim")
            })
        };
        let model = GenerativeModel {
            name,
            parameters: need(&w.parameters, "workload.parameters")?,
            layers: need(&w.layers, "workload.layers")?,
            hidden_size: need(&w.hidden_size, "workload.hidden_size")?,
            kv_heads: need(&w.kv_heads, "workload.kv_heads")?,
            head_dim: need(&w.head_dim, "workload.head_dim")?,
        };
        return generative(src, w, model, precision);
    }
    let need = |v: &Option<Spanned<f64>>, field: &str| -> Result<Cited, InputError> {
        num(v, field)?.ok_or_else(|| {
            src.error_at(None, field, "missing for a custom model")
                .with_help(format!(
                    "give `preset` (one of {}) or flops_per_item, parameters and activation_elements_per_item",
                    workload::CLASSIC_PRESETS.join(", ")
                ))
        })
    };
    let model = ClassicModel {
        name,
        flops_per_item: need(&w.flops_per_item, "workload.flops_per_item")?,
        parameters: need(&w.parameters, "workload.parameters")?,
        activation_elements_per_item: need(
            &w.activation_elements_per_item,
            "workload.activation_elements_per_item",
        )?,
    };
    Ok(Workload::Classic { model, precision })
}

/// A preset fixes the model's numbers; giving them too is a contradiction, not an override.
fn reject_extra(src: &SourceFile, w: &WorkloadFile, generative: bool) -> Result<(), InputError> {
    let model_keys = [
        ("flops_per_item", &w.flops_per_item),
        ("parameters", &w.parameters),
        (
            "activation_elements_per_item",
            &w.activation_elements_per_item,
        ),
        ("layers", &w.layers),
        ("hidden_size", &w.hidden_size),
        ("kv_heads", &w.kv_heads),
        ("head_dim", &w.head_dim),
    ];
    for (k, v) in model_keys {
        if let Some(v) = v {
            return Err(src
                .error(
                    v,
                    format!("workload.{k}"),
                    "a preset already fixes this number",
                )
                .with_help("remove `preset` to describe a custom model, or remove this key"));
        }
    }
    if !generative {
        for (k, v) in [
            ("prompt_tokens", &w.prompt_tokens),
            ("output_tokens", &w.output_tokens),
        ] {
            if let Some(v) = v {
                return Err(src
                    .error(
                        v,
                        format!("workload.{k}"),
                        "token counts apply only to generative models",
                    )
                    .with_help(format!(
                        "`{k}` is for llama-3-8b, llama-2-70b or a custom generative model"
                    )));
            }
        }
    }
    Ok(())
}

fn generative(
    src: &SourceFile,
    w: &WorkloadFile,
    model: GenerativeModel,
    precision: Precision,
) -> Result<Workload, InputError> {
    let tokens = |v: &Option<Spanned<f64>>, field: &str, default: f64| -> Result<f64, InputError> {
        match v {
            Some(s) => NumberCheck { source: src, field }.range(
                s,
                Some(1.0),
                false,
                Some(1e6),
                "tokens from 1 to 1,000,000",
            ),
            None => Ok(default),
        }
    };
    let prompt = tokens(&w.prompt_tokens, "workload.prompt_tokens", 1024.0)?;
    let output = tokens(&w.output_tokens, "workload.output_tokens", 256.0)?;
    let cv = match &w.token_cv {
        Some(s) => NumberCheck {
            source: src,
            field: "workload.token_cv",
        }
        .range(s, Some(0.0), false, Some(10.0), "0 (fixed) up to 10")?,
        None => 0.0,
    };
    let max = match &w.max_tokens {
        Some(m) => whole(src, m, "workload.max_tokens", 1, 1_000_000)?,
        None => 32_768,
    };
    let count = |mean: f64| {
        if cv == 0.0 {
            TokenCount::Fixed {
                tokens: mean.round() as u32,
            }
        } else {
            TokenCount::LogNormal { mean, cv, max }
        }
    };
    Ok(Workload::Generative {
        model,
        precision,
        prompt_tokens: count(prompt),
        output_tokens: count(output),
        tokens_from_trace: w.tokens_from_trace.unwrap_or(true),
    })
}

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
                Some(0.0),
                true,
                Some(1.0),
                "a fraction in (0, 1], e.g. 0.7 to keep 30 % headroom",
            )?;
            user_cited(src, u, x, None)
        }
        None => Cited {
            value: 0.8,
            basis: Basis::Estimate,
            source: source(
                "planning-headroom",
                "tco-sim default: plan fleets to at most 80 % utilization (headroom for failures and unmodelled bursts)",
                "",
                "2026-11",
            ),
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
                            labels(&profile.options())
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
            .non_negative(e, "USD per unit-hour ≥ 0")?;
            Some(user_cited(src, e, x, t.energy_source.as_ref()))
        }
        None => None,
    };
    let mut batching = profile.batching.clone();
    if let Some(b) = &t.max_batch {
        batching.max_batch = whole(src, b, &field("max_batch"), 1, 4096)?;
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
        .non_negative(w, "milliseconds ≥ 0")?
            * 1e-3;
    }
    // The model must fit: check now so the error names the tier, not a later stage.
    crate::perf::plan(&profile, workload, precision, &batching).map_err(|e| {
        src.error(&t.profile, field("profile"), e.message.clone())
            .with_help(e.help.clone().unwrap_or_default())
    })?;
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
    Ok(Tier {
        name,
        profile,
        options,
        fixed_units,
        precision,
        energy_override,
        batching,
        autoscale_interval_h,
    })
}

fn labels(options: &[DeploymentOption]) -> String {
    options
        .iter()
        .map(|o| o.label())
        .collect::<Vec<_>>()
        .join(", ")
}

fn validate_costs(src: &SourceFile, c: &CostsFile) -> Result<CostInputs, InputError> {
    let mut out = default_costs();
    let known: Vec<&str> = out.fields().iter().map(|(k, _)| *k).collect();
    for key in c.sources.keys() {
        if !known.contains(&key.as_str()) {
            let help = match closest(key, &known) {
                Some(b) => format!("did you mean `{b}`? keys: {}", known.join(", ")),
                None => format!("keys: {}", known.join(", ")),
            };
            return Err(src
                .error_at(
                    None,
                    format!("costs.sources.{key}"),
                    format!("no cost assumption is named `{key}`"),
                )
                .with_help(help));
        }
    }
    // (key, value in the file, target, lower bound, strict, upper bound, what is valid)
    type Slot<'a> = (
        &'static str,
        &'a Option<Spanned<f64>>,
        &'a mut Cited,
        f64,
        bool,
        Option<f64>,
        &'static str,
    );
    let slots: [Slot<'_>; 11] = [
        (
            "electricity_usd_per_kwh",
            &c.electricity_usd_per_kwh,
            &mut out.electricity_usd_per_kwh,
            0.0,
            false,
            Some(10.0),
            "USD per kWh from 0 to 10",
        ),
        (
            "pue",
            &c.pue,
            &mut out.pue,
            1.0,
            false,
            Some(5.0),
            "a PUE from 1.0 to 5.0 (typical 1.1–2.0)",
        ),
        (
            "colocation_usd_per_kw_month",
            &c.colocation_usd_per_kw_month,
            &mut out.colocation_usd_per_kw_month,
            0.0,
            false,
            None,
            "USD per kW-month ≥ 0",
        ),
        (
            "maintenance_share_per_year",
            &c.maintenance_share_per_year,
            &mut out.maintenance_share_per_year,
            0.0,
            false,
            Some(1.0),
            "a fraction of capex per year from 0 to 1, e.g. 0.1 for 10 %",
        ),
        (
            "depreciation_years",
            &c.depreciation_years,
            &mut out.depreciation_years,
            1.0,
            false,
            Some(30.0),
            "years from 1 to 30",
        ),
        (
            "discount_rate",
            &c.discount_rate,
            &mut out.discount_rate,
            0.0,
            false,
            Some(1.0),
            "a yearly rate from 0 to 1, e.g. 0.08 for 8 %",
        ),
        (
            "install_share_of_capex",
            &c.install_share_of_capex,
            &mut out.install_share_of_capex,
            0.0,
            false,
            Some(2.0),
            "a fraction of the purchase price from 0 to 2",
        ),
        (
            "units_per_admin",
            &c.units_per_admin,
            &mut out.units_per_admin,
            0.0,
            true,
            None,
            "units per administrator > 0",
        ),
        (
            "admin_cost_usd_per_year",
            &c.admin_cost_usd_per_year,
            &mut out.admin_cost_usd_per_year,
            0.0,
            false,
            None,
            "USD per year ≥ 0",
        ),
        (
            "egress_bytes_per_request",
            &c.egress_bytes_per_request,
            &mut out.egress_bytes_per_request,
            0.0,
            false,
            None,
            "bytes ≥ 0",
        ),
        (
            "egress_usd_per_gb",
            &c.egress_usd_per_gb,
            &mut out.egress_usd_per_gb,
            0.0,
            false,
            None,
            "USD per GB ≥ 0",
        ),
    ];
    for (key, value, target, min, strict, max, valid) in slots {
        if let Some(v) = value {
            let field = format!("costs.{key}");
            let x = NumberCheck {
                source: src,
                field: &field,
            }
            .range(v, Some(min), strict, max, valid)?;
            *target = user_cited(src, v, x, c.sources.get(key));
        }
    }
    if out.depreciation_years.value.fract() != 0.0 {
        let v = c.depreciation_years.as_ref().map(|v| v.span());
        return Err(src
            .error_at(
                v,
                "costs.depreciation_years",
                format!(
                    "= {} is not a whole number of years",
                    out.depreciation_years.value
                ),
            )
            .with_help("valid: whole years from 1 to 30"));
    }
    Ok(out)
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
