//! The results of one run: everything the reports show, as one serializable value.
//!
//! Stage 7 of the pipeline: [`plan`] sequences a run — the capacity plan of every tier
//! (analytic or simulated), the cost of every option over it, the break-even table and the
//! recommendation — and returns [`RunResults`]; it prints and writes nothing.
//!
//! `results.json` is this structure (schema version [`SCHEMA_VERSION`]); the terminal table,
//! the CSV, the charts and the PDF are all rendered from it, so every format shows the same
//! numbers.

pub mod cashflow;
pub mod decision;
mod note;

use serde::Serialize;

use crate::cost::inputs::CostInputs;

pub use note::Note;

use crate::capacity::{self, CapacityYear, LoadPoint, TierPlan};
use crate::cost::{self, CostLine, ExactBreakEven, OptionCost};

use crate::format::usd;
use crate::hardware::{DeploymentOption, UnitKind};
use crate::scenario::{InputRecord, Scenario};
use crate::sim::SimError;

/// Version of the `results.json` layout. Bump it when a field changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 3;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunResults {
    pub schema_version: u32,
    pub tool: String,
    pub tool_version: String,
    pub scenario: ScenarioSummary,
    pub tiers: Vec<TierResult>,
    /// Request rate in each hour of the last year's peak day \[req/s\].
    pub design_day_rps: Vec<f64>,
    pub break_even: Vec<BreakEven>,
    pub recommendation: Option<Recommendation>,
    /// This run beside the published figures the scenario names.
    pub references: Vec<ReferenceComparison>,
    /// Every input with its value, source and date.
    pub inputs: Vec<InputRecord>,
    /// Things a reader must know: estimates that decide the answer, under-provisioned fleets…
    pub notes: Vec<Note>,
    /// How the recommendation moves with each uncertain input, one at a time (tornado, flip
    /// points): see [`crate::uncertainty`]. Absent when the analysis did not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sensitivity: Option<crate::uncertainty::Sensitivity>,
    /// Every uncertain input drawn at once (Monte Carlo): absent when the analysis did not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncertainty: Option<crate::uncertainty::Uncertainty>,
    /// Year-by-year cash flows of the recommended option and the runner-up, with payback,
    /// incremental NPV and the IRR of owning against renting (see [`cashflow`]). Absent
    /// without a recommendation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cash_flow: Option<cashflow::CashFlow>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScenarioSummary {
    pub name: String,
    pub description: Option<String>,
    pub file: String,
    pub horizon_years: u32,
    pub seed: u64,
    pub workload: String,
    pub precision: String,
    pub traffic: String,
    pub slo: String,
    /// The contract in numbers: percentile in (0, 100) and the bounds it puts on end-to-end
    /// latency, time to first token and time per output token \[s\].
    pub slo_percentile: f64,
    pub slo_latency_s: Option<f64>,
    pub slo_ttft_s: Option<f64>,
    pub slo_tpot_s: Option<f64>,
    /// How the fleets were sized: "analytic" (utilization bound) or "simulated".
    pub capacity_method: String,
    /// The cost assumptions, typed, for the report's text (`inputs` holds the same values with
    /// their sources for the JSON).
    #[serde(skip)]
    pub costs: CostInputs,
    /// The planned utilization ceiling (`slo.max_utilization`), in (0, 1].
    #[serde(skip)]
    pub max_utilization: f64,
}

/// How one unit of a generative tier is split into model replicas.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ReplicaLayout {
    /// Devices (accelerators) or chips (CPUs) per replica: the tensor-parallel degree.
    pub devices_per_replica: u32,
    pub replicas_per_unit: u32,
    /// Whether the tier fixed the split (`tensor_parallel`) rather than the planner choosing it.
    pub fixed_by_tier: bool,
    /// The all-reduces' fixed latency in one iteration \[s\] (0 on one device).
    pub allreduce_s_per_iteration: f64,
    /// The KV cache's element type ("fp16", "fp8", …): the tier's `kv_cache_precision`, else the
    /// default ([`crate::workload::kv_precision`]: 16-bit, fp32 with fp32 weights).
    pub kv_cache_precision: &'static str,
    /// Compiled-shape devices: the context the attention was compiled for \[tokens\], which
    /// every decoding sequence reads (the tier's `compiled_context_tokens`); `None` otherwise.
    pub compiled_context_tokens: Option<u32>,
}

impl ReplicaLayout {
    /// The layout of a service plan, `None` for a classic one.
    pub fn of(
        plan: &crate::perf::ServicePlan,
        batching: &crate::hardware::Batching,
        precision: crate::hardware::Precision,
        profile: &crate::hardware::Profile,
        workload: &crate::workload::Workload,
    ) -> Option<Self> {
        let (
            crate::perf::ServicePlan::Generative(g),
            crate::workload::Workload::Generative { model, .. },
        ) = (plan, workload)
        else {
            return None;
        };
        Some(ReplicaLayout {
            devices_per_replica: g.devices_per_replica,
            replicas_per_unit: g.replicas_per_unit,
            fixed_by_tier: batching.tensor_parallel.is_some(),
            allreduce_s_per_iteration: crate::perf::collective_cost(
                profile,
                model,
                g.devices_per_replica,
            )
            .0,
            kv_cache_precision: crate::workload::kv_precision(
                precision,
                batching.kv_cache_precision,
            )
            .label(),
            compiled_context_tokens: batching.compiled_context_tokens,
        })
    }

    /// "4 replicas of 2 devices per unit (tensor parallel, chosen by the planner; all-reduce
    /// latency 5.67 ms per iteration), KV cache in fp8", as the terminal and the PDF say it.
    pub fn label(&self) -> String {
        let replicas = match self.replicas_per_unit {
            1 => "1 replica".to_string(),
            n => format!("{n} replicas"),
        };
        let split = if self.devices_per_replica <= 1 {
            format!("{replicas} per unit, one device or CPU chip each")
        } else {
            format!(
                "{replicas} of {} devices per unit (tensor parallel, {}; all-reduce latency {} per iteration)",
                self.devices_per_replica,
                if self.fixed_by_tier {
                    "set by the tier"
                } else {
                    "chosen by the planner"
                },
                crate::format::duration(self.allreduce_s_per_iteration)
            )
        };
        let compiled = self.compiled_context_tokens.map_or(String::new(), |c| {
            format!(
                ", attention compiled for {} tokens",
                crate::format::grouped(f64::from(c), 0)
            )
        });
        format!("{split}, KV cache in {}{compiled}", self.kv_cache_precision)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TierResult {
    pub name: String,
    pub profile: String,
    pub kind: UnitKind,
    pub precision: String,
    /// Requests per second one unit sustains at full load (roofline).
    pub unit_throughput_rps: f64,
    /// Generative workloads: how a unit is split into model replicas (tensor parallelism);
    /// `None` for a classic model.
    pub replicas: Option<ReplicaLayout>,
    pub capacity: Vec<CapacityYear>,
    /// One entry per deployment option; empty when no fleet size meets the contract.
    pub options: Vec<OptionCost>,
    /// Why no fleet size of this tier meets the contract, when none does.
    pub infeasible: Option<String>,
    /// Tail latency against offered load at the last year's planned fleet (the "hockey
    /// stick"), when simulated; empty for analytic runs.
    pub latency_curve: Vec<LoadPoint>,
    /// Latency distribution at the last year's planned fleet as (latency \[s\], quantile) points,
    /// when simulated.
    pub latency_cdf: Vec<(f64, f64)>,
    /// Units an autoscaled cloud fleet runs in each hour of the last year's peak day.
    pub design_day_units: Vec<u32>,
    /// The region the profile's prices are for, when it names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price_region: Option<String>,
    /// [`TierResult::utilization`] of each year's planned fleet, in the order of `capacity`
    /// (a fraction; the CSV's `utilization_pct` is the same value in percent). Filled by
    /// [`TierResult::judge`].
    pub utilization: Vec<f64>,
    /// [`decision::year_status`] of each year's planned fleet, in the order of `capacity`, and
    /// the tier's verdict ([`decision::tier_status`], the worst year). Filled by
    /// [`TierResult::judge`].
    pub slo_status_by_year: Vec<decision::SloStatus>,
    pub slo_status: decision::SloStatus,
    /// Generative tiers: the last year's operating point (mean sequences in flight per replica
    /// at the planned fleet's design run) and how the accuracy suite's held-out rows near it
    /// fared. Filled by [`attach_evidence`]; `None` for classic tiers and before it runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suite_evidence: Option<crate::accuracy::Evidence>,
}

impl ScenarioSummary {
    /// The contract's bounds, for [`decision::year_status`] and [`decision::tier_status`].
    pub fn bounds(&self) -> decision::Bounds {
        decision::Bounds {
            latency_s: self.slo_latency_s,
            ttft_s: self.slo_ttft_s,
            tpot_s: self.slo_tpot_s,
        }
    }
}

impl TierResult {
    /// Fill the figures `results.json` carries beside the plan — each year's utilization and
    /// contract status, and the tier's verdict — from the functions every report calls, so the
    /// JSON says what the terminal, CSV and PDF say.
    pub fn judge(&mut self, bounds: &decision::Bounds) {
        self.utilization = self.capacity.iter().map(|c| self.utilization(c)).collect();
        self.slo_status_by_year = self
            .capacity
            .iter()
            .map(|c| decision::year_status(c, bounds))
            .collect();
        self.slo_status = decision::tier_status(self, bounds);
    }

    /// Whether every year's fleet meets the contract.
    pub fn meets_slo(&self) -> bool {
        self.infeasible.is_none() && self.capacity.iter().all(|c| c.stop.meets_slo())
    }

    /// The fleet's capacity in year `c` \[req/s\]: units planned × one unit's roofline
    /// throughput at full load.
    pub fn capacity_rps(&self, c: &CapacityYear) -> f64 {
        c.units as f64 * self.unit_throughput_rps
    }

    /// **Utilization**, the one definition every output uses: the offered load at the design
    /// (busiest) hour ÷ the fleet's capacity ([`TierResult::capacity_rps`]), a fraction printed
    /// as a percentage. Zero for a fleet with no capacity. Not the simulator's busy fraction: a
    /// batching server is "busy" whenever one request is in flight, at any load.
    pub fn utilization(&self, c: &CapacityYear) -> f64 {
        let cap = self.capacity_rps(c);
        if cap > 0.0 { c.peak_rps / cap } else { 0.0 }
    }

    /// The highest offered load the last year's planned fleet carries within the SLO bound on
    /// end-to-end latency, read off the simulated latency-against-load curve (linear between
    /// simulated points) \[req/s\]: `None` without a curve or a bound, or when the bound is
    /// broken at every load simulated; the last load simulated when it is never broken.
    pub fn slo_limit_rps(&self, percentile: f64, bound_s: Option<f64>) -> Option<f64> {
        let bound = bound_s?;
        self.limit_rps(
            |l| {
                Some(match percentile {
                    p if p < 72.5 => l.p50_s,
                    p if p < 97.0 => l.p95_s,
                    _ => l.p99_s,
                })
            },
            bound,
        )
    }

    /// The highest offered load the last year's planned fleet carries with `value` (a metric
    /// read off each simulated load point; points without it are left out) within `bound_s`,
    /// linear between simulated points \[req/s\]: `None` without points, or when the bound is
    /// broken at every load simulated; the last load simulated when it is never broken.
    pub fn limit_rps(
        &self,
        value: impl Fn(&LoadPoint) -> Option<f64>,
        bound_s: f64,
    ) -> Option<f64> {
        let mut curve: Vec<(f64, f64)> = self
            .latency_curve
            .iter()
            .filter(|l| l.offered_rps.is_finite())
            .filter_map(|l| value(l).map(|v| (l.offered_rps, v)))
            .collect();
        curve.sort_by(|a, b| a.0.total_cmp(&b.0));
        let Some(bad) = curve.iter().position(|l| l.1 > bound_s) else {
            return curve.last().map(|l| l.0);
        };
        let (a, b) = (curve.get(bad.checked_sub(1)?)?, curve[bad]);
        let t = if b.1 > a.1 {
            ((bound_s - a.1) / (b.1 - a.1)).clamp(0.0, 1.0)
        } else {
            0.0
        };
        Some(a.0 + t * (b.0 - a.0))
    }

    /// The highest offered load the last year's planned fleet carries within every bound of
    /// the contract it was simulated against (end-to-end at the percentile, time to first
    /// token, time per output token), the lowest of [`TierResult::limit_rps`] over them
    /// \[req/s\]; `None` when no bounded metric has a curve, or one is broken at every load.
    pub fn contract_limit_rps(&self, percentile: f64, bounds: &decision::Bounds) -> Option<f64> {
        let mut limits = vec![];
        if bounds.latency_s.is_some() {
            limits.push(self.slo_limit_rps(percentile, bounds.latency_s));
        }
        if let Some(b) = bounds.ttft_s
            && self.latency_curve.iter().any(|l| l.ttft_s.is_some())
        {
            limits.push(self.limit_rps(|l| l.ttft_s, b));
        }
        if let Some(b) = bounds.tpot_s
            && self.latency_curve.iter().any(|l| l.tpot_s.is_some())
        {
            limits.push(self.limit_rps(|l| l.tpot_s, b));
        }
        if limits.is_empty() {
            return None;
        }
        limits
            .into_iter()
            .try_fold(f64::INFINITY, |m, l| l.map(|l| m.min(l)))
    }
}

/// One row/column pair of the break-even table: an on-prem tier against a cloud option, both
/// as lines of net present cost in hours per day of full use of the planned fleet (see
/// [`cost::break_even`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BreakEven {
    pub on_prem_tier: String,
    pub cloud_tier: String,
    pub cloud_option: DeploymentOption,
    /// Seed 004's form, 24 × on-prem cash ÷ cloud cash at 24 h/day, against on-demand only
    /// (`None` against a reservation or a hybrid, which are not paid by the hour used). It may
    /// exceed 24: on-prem never pays off; the reports then say "> 24 h/day (never)".
    pub simplified_hours_per_day: Option<f64>,
    /// Where the two lines cross, if they do within the day.
    pub exact: ExactBreakEven,
    /// The cloud option's net present cost less on-prem's, each line at its own actual
    /// operating point \[USD\]: positive when on-prem is cheaper as the tiers actually run —
    /// the verdict that agrees with the ranking.
    pub on_prem_saving_usd: f64,
    /// The two tiers run different hardware (chip model, chips per unit or kind differ), so
    /// the row compares fleets of different sizes, not one unit against its rented twin.
    pub cross_hardware: bool,
    /// On-prem units installed, smallest and largest over the horizon.
    pub on_prem_units: UnitRange,
    /// Cloud units planned (at the design peak), smallest and largest over the horizon.
    pub cloud_units: UnitRange,
    pub on_prem_line: CostLine,
    pub cloud_line: CostLine,
}

impl BreakEven {
    /// Whether on-prem is the cheaper of the two at their actual operating points.
    pub fn on_prem_cheaper_at_actual_use(&self) -> bool {
        self.on_prem_saving_usd >= 0.0
    }
}

/// The smallest and largest of a count over the horizon.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct UnitRange {
    pub min: u32,
    pub max: u32,
}

impl UnitRange {
    fn of(counts: impl Iterator<Item = u32>) -> UnitRange {
        counts
            .fold(
                UnitRange {
                    min: u32::MAX,
                    max: 0,
                },
                |r, n| UnitRange {
                    min: r.min.min(n),
                    max: r.max.max(n),
                },
            )
            .or_zero()
    }

    fn or_zero(self) -> UnitRange {
        if self.min > self.max {
            UnitRange { min: 0, max: 0 }
        } else {
            self
        }
    }
}

/// A published figure beside this run's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReferenceComparison {
    pub label: String,
    pub tier: String,
    pub option: DeploymentOption,
    pub reference_total_usd: Option<f64>,
    pub total_usd: f64,
    /// (this run − reference) / reference.
    pub total_change: Option<f64>,
    pub reference_break_even_hours_per_day: Option<f64>,
    /// This run's break-even of the first on-prem tier against this option, both forms.
    pub break_even_simplified_hours_per_day: Option<f64>,
    pub break_even_exact: Option<ExactBreakEven>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Choice {
    pub tier: String,
    pub option: DeploymentOption,
    /// Net present cost ([`OptionCost::net_present_cost_usd`]): the ranking figure.
    pub net_present_cost_usd: f64,
    pub total_usd: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recommendation {
    pub best: Choice,
    pub runner_up: Option<Choice>,
    /// NPV difference to the runner-up \[USD\] and as a fraction of the runner-up.
    pub margin_usd: Option<f64>,
    pub margin_fraction: Option<f64>,
    pub sentence: String,
}

/// How the fleets of a run are sized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// The utilization bound only, no simulation (`--analytic`): quick, and a lower bound.
    Analytic,
    /// Every candidate fleet simulated on each year's design traffic, `replications` times:
    /// the answer a planner takes to the meeting.
    Simulated { replications: u32 },
}

impl Method {
    /// How `results.json` and the reports name the method.
    pub fn label(self, scenario: &Scenario) -> String {
        match self {
            Method::Analytic => "analytic (utilization bound)".into(),
            Method::Simulated { replications } => format!(
                "simulated ({replications} replications of a {} s design window per fleet size, {})",
                scenario.simulation.window_s,
                scenario.simulation.dispatch.description()
            ),
        }
    }
}

/// Plan and cost a scenario: size every tier's fleet by `method`, cost every option over the
/// plan and put the answer together. `tick(done, total)` is called as simulated tier-years
/// finish (from worker threads), for a progress bar; analytic runs never call it.
///
/// # Errors
/// A [`SimError`] when the simulator refuses a fleet (a bug in the capacity plan's fleets, as
/// validation checks every input it derives them from).
pub fn plan(
    scenario: &Scenario,
    method: Method,
    tick: &(dyn Fn(usize, usize) + Sync),
) -> Result<RunResults, SimError> {
    let tiers = match method {
        Method::Analytic => capacity::analytic_tiers(scenario),
        Method::Simulated { replications } => {
            capacity::search::plan_all(scenario, replications, tick)?
        }
    };
    Ok(assemble(scenario, tiers, &method.label(scenario)))
}

/// Cost every tier's options over its plan and put the answer together.
pub fn assemble(scenario: &Scenario, tiers: Vec<TierPlan>, capacity_method: &str) -> RunResults {
    let mut out_tiers = Vec::new();
    let mut notes = Vec::new();
    let mut same_as_reserved = Vec::new();
    for input in tiers {
        notes.extend(adjustment_notes(
            scenario,
            &scenario.tiers[input.index].name,
            &input.adjustments,
        ));
        let capacity = input.years;
        let tier = &scenario.tiers[input.index];
        let fleet: Vec<_> = capacity.iter().map(|c| c.fleet.clone()).collect();
        let costs = cost::TierCosts {
            energy_override: tier.energy_override.as_ref().map(|c| c.value),
            software_usd_per_unit_year: tier.software_override.as_ref().map(|c| c.value),
            porting_usd: tier.porting.as_ref().map_or(0.0, |c| c.value),
            peak_rps: capacity.last().map_or(0.0, |c| c.peak_rps),
            unit_throughput_rps: input.unit_throughput_rps,
            spares: tier.spares,
        };
        // A tier with no fleet that meets the contract — infeasible at any size, or not within
        // simulation.max_units — has no plan to cost.
        let infeasible = capacity
            .iter()
            .find(|c| {
                matches!(
                    c.stop,
                    capacity::StopReason::Infeasible
                        | capacity::StopReason::CapacityCap
                        | capacity::StopReason::Unstable
                )
            })
            .map(|c| c.detail.clone().unwrap_or_default());
        // A tier no fleet size can serve within the contract is not costed: the utilization
        // bound it would take says nothing a planner can buy.
        let mut options: Vec<OptionCost> = if infeasible.is_some() {
            vec![]
        } else {
            tier.options
                .iter()
                .map(|&o| cost::option_cost_for(o, &tier.profile, &fleet, &scenario.costs, &costs))
                .collect()
        };
        drop_hybrids_equal_to_reservations(&tier.name, &mut options, &mut same_as_reserved);
        if let Some(why) = &infeasible {
            notes.push(Note::TierNotCosted {
                tier: tier.name.clone(),
                slo: scenario.slo.label(),
                why: why.clone(),
            });
        }
        let short: Vec<&CapacityYear> = capacity
            .iter()
            .filter(|c| c.stop == capacity::StopReason::UnderProvisioned)
            .collect();
        if let Some(first) = short.first() {
            notes.push(Note::FixedFleetShort {
                tier: tier.name.clone(),
                years: short.iter().map(|c| c.year).collect(),
                detail: first.detail.clone().unwrap_or_default(),
            });
        }
        let design_day_units = capacity
            .last()
            .map(|c| {
                peak_day(
                    &c.fleet.hourly_units,
                    scenario.traffic.hourly_rates(c.year).as_slice(),
                )
            })
            .unwrap_or_default();
        out_tiers.push(TierResult {
            name: tier.name.clone(),
            profile: tier.profile.name.clone(),
            kind: tier.profile.kind,
            precision: tier.precision.label().into(),
            unit_throughput_rps: input.unit_throughput_rps,
            replicas: ReplicaLayout::of(
                &tier.plan,
                &tier.batching,
                tier.precision,
                &tier.profile,
                &scenario.workload,
            ),
            capacity,
            options,
            infeasible,
            latency_curve: input.latency_curve,
            latency_cdf: input.latency_cdf,
            design_day_units,
            price_region: tier.profile.prices.region.clone(),
            utilization: vec![],
            slo_status_by_year: vec![],
            slo_status: decision::SloStatus::Met,
            suite_evidence: None,
        });
    }
    let bounds = decision::Bounds {
        latency_s: scenario.slo.latency_s,
        ttft_s: scenario.slo.ttft_s,
        tpot_s: scenario.slo.tpot_s,
    };
    for t in &mut out_tiers {
        t.judge(&bounds);
    }
    // Generative workloads: the same levelized cost per million tokens (prompt and output, at
    // the workload's mean counts).
    if let Some(tokens) = tokens_per_request(&scenario.workload) {
        for o in out_tiers.iter_mut().flat_map(|t| t.options.iter_mut()) {
            o.cost_per_million_tokens_usd = o.cost_per_million_usd.map(|c| c / tokens);
        }
    }
    for t in &out_tiers {
        // An on-prem fleet of one working unit and no spare (units are the planned one plus
        // spares and any kept idle).
        for o in t
            .options
            .iter()
            .filter(|o| o.option == DeploymentOption::OnPrem)
        {
            let years: Vec<u32> = o
                .yearly
                .iter()
                .zip(&t.capacity)
                .filter(|(y, c)| c.fleet.units == 1 && y.units <= 1)
                .map(|(y, _)| y.year)
                .collect();
            if !years.is_empty() {
                notes.push(Note::SingleUnitNoSpare {
                    tier: t.name.clone(),
                    years,
                });
            }
        }
        for o in t
            .options
            .iter()
            .filter(|o| o.committed_beyond_horizon_usd > 0.0)
        {
            notes.push(Note::CommittedBeyondHorizon {
                tier: t.name.clone(),
                option: o.option,
                horizon_years: scenario.horizon_years,
                owed_usd: o.committed_beyond_horizon_usd,
            });
        }
    }
    for t in &out_tiers {
        if spot_meets_slo(scenario, &t.name) {
            continue;
        }
        for o in t
            .options
            .iter()
            .filter(|o| o.option == DeploymentOption::Spot)
        {
            notes.push(Note::SpotNotRecommended {
                tier: t.name.clone(),
                net_present_cost_usd: o.net_present_cost_usd,
            });
        }
    }
    let break_even = break_even_table(scenario, &out_tiers);
    let recommendation = recommend(scenario, &out_tiers);
    let cash_flow = cashflow::cash_flow(recommendation.as_ref(), &out_tiers, &scenario.costs);
    let references = compare_references(scenario, &out_tiers, &break_even);
    if !same_as_reserved.is_empty() {
        notes.push(Note::HybridsShownAsReservation {
            options: same_as_reserved,
        });
    }
    notes.extend(scenario.traffic.notes().iter().cloned().map(Note::Traffic));
    let estimates = scenario
        .input_records()
        .iter()
        .filter(|r| r.basis == crate::cite::Basis::Estimate)
        .count();
    if estimates > 0 {
        notes.push(Note::Estimates { count: estimates });
    }
    if scenario.costs.tax_rate.value > 0.0 {
        notes.push(Note::AfterTax {
            rate: scenario.costs.tax_rate.value,
            macrs: scenario.costs.tax_depreciation.value >= 0.5,
        });
    }
    RunResults {
        schema_version: SCHEMA_VERSION,
        tool: "tco-sim".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        scenario: ScenarioSummary {
            name: scenario.name.clone(),
            description: scenario.description.clone(),
            file: scenario.file.clone(),
            horizon_years: scenario.horizon_years,
            seed: scenario.seed,
            workload: scenario.workload.name().to_string(),
            precision: scenario.workload.precision().label().into(),
            traffic: scenario.traffic.description(),
            slo: scenario.slo.label(),
            slo_percentile: scenario.slo.percentile,
            slo_latency_s: scenario.slo.latency_s,
            slo_ttft_s: scenario.slo.ttft_s,
            slo_tpot_s: scenario.slo.tpot_s,
            capacity_method: capacity_method.into(),
            costs: scenario.costs.clone(),
            max_utilization: scenario.slo.max_utilization.value,
        },
        tiers: out_tiers,
        design_day_rps: {
            let rates = scenario.traffic.hourly_rates(scenario.horizon_years);
            peak_day(&rates, &rates)
        },
        break_even,
        recommendation,
        references,
        inputs: scenario.input_records(),
        notes,
        sensitivity: None,
        uncertainty: None,
        cash_flow,
    }
}

/// One note per kind of measurement change in a tier's plan, naming its years, with the first
/// such year's figures.
fn adjustment_notes(
    scenario: &Scenario,
    tier: &str,
    adjustments: &[capacity::Adjustment],
) -> Vec<Note> {
    use capacity::Adjustment as A;
    let percentile = crate::format::percentile(scenario.slo.percentile);
    let years = |pick: fn(&A) -> bool| -> Vec<u32> {
        adjustments
            .iter()
            .filter(|a| pick(a))
            .map(A::year)
            .collect()
    };
    let mut notes = Vec::new();
    if let Some(A::WindowShortened {
        from_s,
        to_s,
        arrivals,
        ..
    }) = adjustments
        .iter()
        .find(|a| matches!(a, A::WindowShortened { .. }))
    {
        notes.push(Note::WindowShortened {
            tier: tier.into(),
            years: years(|a| matches!(a, A::WindowShortened { .. })),
            from_s: *from_s,
            to_s: *to_s,
            arrivals: *arrivals,
            budget: capacity::search::MAX_ARRIVALS_PER_EVALUATION,
        });
    }
    if let Some(A::ReplicationsRaised {
        from, to, needed, ..
    }) = adjustments
        .iter()
        .find(|a| matches!(a, A::ReplicationsRaised { .. }))
    {
        notes.push(Note::ReplicationsRaised {
            tier: tier.into(),
            years: years(|a| matches!(a, A::ReplicationsRaised { .. })),
            from: *from,
            to: *to,
            needed: *needed,
            percentile: percentile.clone(),
        });
    }
    if let Some(A::AnalyticFallback {
        expected, needed, ..
    }) = adjustments
        .iter()
        .find(|a| matches!(a, A::AnalyticFallback { .. }))
    {
        notes.push(Note::TooFewRequests {
            tier: tier.into(),
            years: years(|a| matches!(a, A::AnalyticFallback { .. })),
            expected: *expected,
            needed: *needed,
            percentile,
        });
    }
    notes
}

/// A hybrid whose best reserved base turns out to be the whole fleet costs what the reservation
/// of the same term costs: it is the same plan, so it is shown once. `dropped` collects
/// "tier option" for the note that says so.
fn drop_hybrids_equal_to_reservations(
    tier: &str,
    options: &mut Vec<OptionCost>,
    dropped: &mut Vec<String>,
) {
    let same = |a: &OptionCost, b: &OptionCost| {
        a.yearly.len() == b.yearly.len()
            && a.committed_beyond_horizon_usd == b.committed_beyond_horizon_usd
            && a.yearly
                .iter()
                .zip(&b.yearly)
                .all(|(x, y)| (x.total_usd - y.total_usd).abs() < 0.5)
    };
    let twin_of = |o: DeploymentOption| match o {
        DeploymentOption::Hybrid1y => Some(DeploymentOption::Reserved1y),
        DeploymentOption::Hybrid3y => Some(DeploymentOption::Reserved3y),
        _ => None,
    };
    let duplicates: Vec<(DeploymentOption, DeploymentOption)> = options
        .iter()
        .filter_map(|h| {
            let twin = twin_of(h.option)?;
            let r = options.iter().find(|x| x.option == twin)?;
            same(h, r).then_some((h.option, twin))
        })
        .collect();
    for (h, _) in &duplicates {
        dropped.push(format!("{tier} {h}"));
    }
    options.retain(|o| !duplicates.iter().any(|(h, _)| *h == o.option));
}

/// Mean tokens a generative request carries, prompt and output together; `None` for other
/// workloads.
pub fn tokens_per_request(w: &crate::workload::Workload) -> Option<f64> {
    match w {
        crate::workload::Workload::Generative {
            prompt_tokens,
            output_tokens,
            ..
        } => Some(prompt_tokens.mean() + output_tokens.mean()).filter(|t| *t > 0.0),
        crate::workload::Workload::Classic { .. } => None,
    }
}

/// The 24 values of `series` on the day whose traffic (`rates`, hourly) peaks highest.
fn peak_day<T: Copy>(series: &[T], rates: &[f64]) -> Vec<T> {
    if series.len() < 24 || rates.len() != series.len() {
        return vec![];
    }
    let day = (0..series.len() / 24)
        .max_by(|&a, &b| {
            let peak = |d: usize| {
                rates[d * 24..d * 24 + 24]
                    .iter()
                    .copied()
                    .fold(f64::MIN, f64::max)
            };
            peak(a).total_cmp(&peak(b)).then(b.cmp(&a))
        })
        .unwrap_or(0);
    series[day * 24..day * 24 + 24].to_vec()
}

fn break_even_table(scenario: &Scenario, tiers: &[TierResult]) -> Vec<BreakEven> {
    let fleet_of = |t: &TierResult| {
        t.capacity
            .iter()
            .map(|y| y.fleet.clone())
            .collect::<Vec<_>>()
    };
    let mut out = Vec::new();
    for (ti, t) in tiers.iter().enumerate() {
        let Some(op) = t
            .options
            .iter()
            .find(|o| o.option == DeploymentOption::OnPrem)
        else {
            continue;
        };
        let tier = &scenario.tiers[ti];
        let energy = tier.energy_override.as_ref().map(|c| c.value);
        let op_line = cost::on_prem_line(&tier.profile, op, &fleet_of(t), &scenario.costs, energy);
        for (ci, c) in tiers.iter().enumerate() {
            let cloud_profile = &scenario.tiers[ci].profile;
            let cloud_fleet = fleet_of(c);
            for oc in c.options.iter().filter(|o| o.option.is_cloud()) {
                let cl_line = cost::cloud_line(cloud_profile, oc, &cloud_fleet, &scenario.costs);
                out.push(BreakEven {
                    on_prem_tier: t.name.clone(),
                    cloud_tier: c.name.clone(),
                    cloud_option: oc.option,
                    simplified_hours_per_day: (oc.option == DeploymentOption::OnDemand)
                        .then(|| cost::simplified_break_even(op_line, cl_line))
                        .flatten(),
                    exact: cost::exact_break_even(op_line, cl_line),
                    on_prem_saving_usd: cl_line.at_actual_use() - op_line.at_actual_use(),
                    cross_hardware: !same_hardware(&tier.profile, cloud_profile),
                    on_prem_units: UnitRange::of(op.yearly.iter().map(|y| y.units)),
                    cloud_units: UnitRange::of(cloud_fleet.iter().map(|f| f.units)),
                    on_prem_line: op_line,
                    cloud_line: cl_line,
                });
            }
        }
    }
    out
}

/// Whether two profiles are the same hardware: the same kind, chip model and chips per unit
/// (an 8x H100 server and a p5.48xlarge are; an 8x H100 server and an L4 instance are not).
fn same_hardware(a: &crate::hardware::Profile, b: &crate::hardware::Profile) -> bool {
    a.kind == b.kind && a.chip_model == b.chip_model && a.chips.value == b.chips.value
}

fn compare_references(
    scenario: &Scenario,
    tiers: &[TierResult],
    break_even: &[BreakEven],
) -> Vec<ReferenceComparison> {
    let first_on_prem = break_even.first().map(|b| b.on_prem_tier.clone());
    scenario
        .references
        .iter()
        .filter_map(|r| {
            let t = tiers.iter().find(|t| t.name == r.tier)?;
            let o = t.options.iter().find(|o| o.option == r.option)?;
            let be = break_even.iter().find(|b| {
                Some(&b.on_prem_tier) == first_on_prem.as_ref()
                    && b.cloud_tier == r.tier
                    && b.cloud_option == r.option
            });
            Some(ReferenceComparison {
                label: r.label.clone(),
                tier: r.tier.clone(),
                option: r.option,
                reference_total_usd: r.total_usd,
                total_usd: o.total_usd,
                total_change: r
                    .total_usd
                    .filter(|&x| x > 0.0)
                    .map(|x| (o.total_usd - x) / x),
                reference_break_even_hours_per_day: r.break_even_hours_per_day,
                break_even_simplified_hours_per_day: be.and_then(|b| b.simplified_hours_per_day),
                break_even_exact: be.map(|b| b.exact.clone()),
            })
        })
        .collect()
}

/// Whether the scenario's tier of this name takes spot capacity as meeting its contract.
fn spot_meets_slo(scenario: &Scenario, tier: &str) -> bool {
    scenario
        .tiers
        .iter()
        .any(|t| t.name == tier && t.spot_meets_slo)
}

/// The cheapest option by NPV among tiers that meet the SLO every year (spot only where the
/// tier says its service rides out interruptions).
fn recommend(scenario: &Scenario, tiers: &[TierResult]) -> Option<Recommendation> {
    let mut choices: Vec<Choice> = tiers
        .iter()
        .filter(|t| t.meets_slo())
        .flat_map(|t| {
            let spot_ok = spot_meets_slo(scenario, &t.name);
            t.options
                .iter()
                .filter(move |o| spot_ok || o.option != DeploymentOption::Spot)
                .map(|o| Choice {
                    tier: t.name.clone(),
                    option: o.option,
                    net_present_cost_usd: o.net_present_cost_usd,
                    total_usd: o.total_usd,
                })
        })
        .collect();
    // Cheapest first; on a tie the simpler option (on-prem < on-demand < reserved < hybrid).
    choices.sort_by(|a, b| {
        a.net_present_cost_usd
            .total_cmp(&b.net_present_cost_usd)
            .then_with(|| a.option.cmp(&b.option))
            .then_with(|| a.tier.cmp(&b.tier))
    });
    let mut it = choices.into_iter();
    let best = it.next()?;
    // The runner-up is the best alternative: the cheapest option of another tier, or, with a
    // single tier, its next option that is a different plan (not a hybrid equal to it).
    let rest: Vec<Choice> = it.collect();
    let runner_up = rest
        .iter()
        .find(|c| c.tier != best.tier)
        .or_else(|| {
            rest.iter()
                .find(|c| (c.net_present_cost_usd - best.net_present_cost_usd).abs() >= 1.0)
        })
        .cloned();
    let rate = scenario.costs.discount_rate.value * 100.0;
    let years = scenario.horizon_years;
    let basis = format!(
        "{years}-year net present cost at {rate:.0} % (cash discounted, less the resale of owned \
         hardware at the end, plus reservations owed after it)"
    );
    let (margin_usd, margin_fraction, sentence) = match &runner_up {
        Some(r) => {
            let m = r.net_present_cost_usd - best.net_present_cost_usd;
            let f = if r.net_present_cost_usd > 0.0 {
                m / r.net_present_cost_usd
            } else {
                0.0
            };
            (
                Some(m),
                Some(f),
                format!(
                    "{} is the cheapest option that meets {}: {basis} {}, {} ({:.1} %) less than the runner-up, {}.",
                    decision::label_of(&best),
                    scenario.slo.label(),
                    usd(best.net_present_cost_usd),
                    usd(m),
                    f * 100.0,
                    decision::label_of(r),
                ),
            )
        }
        None => (
            None,
            None,
            format!(
                "{} is the only option that meets {}: {basis} {}.",
                decision::label_of(&best),
                scenario.slo.label(),
                usd(best.net_present_cost_usd)
            ),
        ),
    };
    Some(Recommendation {
        best,
        runner_up,
        margin_usd,
        margin_fraction,
        sentence,
    })
}

/// Give every generative tier its [`TierResult::suite_evidence`]: the accuracy suite's
/// held-out rows near the last year's operating point, each predicted once. Kept out of
/// [`plan`] (and the uncertainty analysis's re-plans): it reads the shipped table, not the
/// scenario.
///
/// # Errors
/// When the shipped accuracy table or a profile it names does not load (a build defect).
pub fn attach_evidence(r: &mut RunResults) -> Result<(), crate::input::InputError> {
    let points: Vec<(usize, (crate::hardware::UnitKind, f64))> = r
        .tiers
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let llm = t.capacity.last()?.latency.as_ref()?.llm.as_ref()?;
            let n = llm.mean_running_per_replica;
            (n.is_finite() && n > 0.0).then_some((i, (t.kind, n)))
        })
        .collect();
    if points.is_empty() {
        return Ok(());
    }
    let found = crate::accuracy::evidence(&points.iter().map(|p| p.1).collect::<Vec<_>>())?;
    for ((i, _), e) in points.into_iter().zip(found) {
        r.tiers[i].suite_evidence = Some(e);
    }
    Ok(())
}
