//! How sure the answer is (issue 12): for every uncertain input, how the recommendation's ranking
//! figure moves across the input's range (the tornado), where in that range the recommendation
//! changes (flip points), and, with every input drawn at once, how the ranking figures spread and
//! how often each option is the cheapest (Monte Carlo on a Latin hypercube).
//!
//! Stage 7, beside `results`: it takes a finished run (the base [`RunResults`]) and re-costs it.
//! The ranking figure is [`crate::cost::OptionCost::net_present_cost_usd`]; the recommended
//! option is the cheapest option of a tier that meets the contract, ties going to the simpler
//! option and then the tier name, as in `results`.
//!
//! - A cost input (a `[costs]` assumption, a price or power figure of a profile, a tier's cost
//!   setting) never re-plans: the base fleets are costed again with the changed input.
//! - A performance input (efficiencies, peaks, bandwidth, the model's size, traffic growth, the
//!   utilization ceiling) re-plans each tier without simulating ([`replan`]): exactly for an
//!   analytic run, scaled from the base run's latency-against-load curve for a simulated one.
//!   The probability that the planned fleet still meets the contract (`p_slo_met`) comes from
//!   the same scaling.
//!
//! Samples are drawn from `rng::stream(seed, sample, UNCERTAINTY)` (the Latin hypercube's
//! strata from `rng::stream(seed, input, UNCERTAINTY_STRATA)`), evaluated in parallel and
//! collected in sample order, so the answer does not depend on the thread count.

pub mod ranges;
pub mod replan;

use rand::RngExt;
use rand::seq::SliceRandom;
use rayon::prelude::*;
use serde::Serialize;

use std::borrow::Cow;

use crate::capacity::FleetYear;
use crate::cost::inputs::COST_INPUTS;
use crate::cost::{self, TierCosts};
use crate::format;
use crate::hardware::DeploymentOption;
use crate::hardware::Profile;
use crate::hardware::numbers::PROFILE_NUMBERS;
use crate::results::{Method, RunResults};
use crate::scenario::Scenario;
use crate::scenario::uncertainty::{Target, TierSetting, UncertainInput};
use crate::traffic::YearTraffic;
use ranges::Dist;

/// The number of Monte Carlo samples when `--samples` is not given.
pub const DEFAULT_SAMPLES: u32 = 1_000;
/// Points the flip-point search tries on each side of the base value before bisecting.
const FLIP_GRID: usize = 8;
/// Bisection steps once a flip is bracketed: the flip value to 1/(8·2³⁰) of the range.
const FLIP_BISECTIONS: usize = 30;
/// The quantiles kept of each option's ranking figure for distribution charts: 0, 5, …, 100 %.
const CHART_QUANTILES: usize = 21;

/// A tier and one of its deployment options.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OptionRef {
    pub tier: String,
    pub option: DeploymentOption,
}

/// How the answer moves with each uncertain input, one at a time (`results.json`
/// `sensitivity`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sensitivity {
    /// The recommended option at the base inputs.
    pub best: OptionRef,
    /// The runner-up at the base inputs (as the recommendation names it), if there is one.
    pub runner_up: Option<OptionRef>,
    /// One row per uncertain input, the widest swing first.
    pub tornado: Vec<TornadoRow>,
    /// One entry per uncertain input, in the order of `tornado`.
    pub flip_points: Vec<FlipPoint>,
}

/// One bar of the tornado: the input at its low and its high end, every other input at base.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TornadoRow {
    /// The input's path (`costs.pue`, `tier.h100.price.purchase_usd`, …).
    pub input: String,
    /// The unit the values are written in.
    pub unit: String,
    /// Whether the input changes the capacity plan (re-planned) rather than only the costs.
    pub performance: bool,
    /// Its distribution, in the unit above.
    pub dist: Dist,
    /// Where the range comes from: `scenario line N`, `declared with the input`, the
    /// estimate rule, or the fit rule (a constant fitted by the accuracy suite).
    pub range_source: String,
    pub base_value: f64,
    /// The low end: the distribution's lowest value, or its P10 when it is unbounded; inside
    /// the input's valid range.
    pub low_value: f64,
    /// The high end: the highest value, or the P90.
    pub high_value: f64,
    /// The recommended option's ranking figure (net present cost) at the low and high end
    /// \[USD\]; absent when its tier no longer meets the contract there.
    pub best_npv_low_usd: Option<f64>,
    pub best_npv_high_usd: Option<f64>,
    /// The runner-up's ranking figure at the low and high end \[USD\].
    pub runner_up_npv_low_usd: Option<f64>,
    pub runner_up_npv_high_usd: Option<f64>,
    /// Runner-up minus recommended at the low and high end \[USD\]: positive while the
    /// recommendation stays the cheaper of the two.
    pub difference_low_usd: Option<f64>,
    pub difference_high_usd: Option<f64>,
    /// |difference at high − difference at low| \[USD\] (with no runner-up, the recommended
    /// option's own change): what the rows are sorted by.
    pub swing_usd: f64,
}

/// Where in its range one input changes the recommendation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlipPoint {
    pub input: String,
    pub unit: String,
    pub base_value: f64,
    /// The range searched: the distribution's support, or P1–P99 when it is unbounded.
    pub search_low: f64,
    pub search_high: f64,
    /// Whether the recommendation changes anywhere in that range.
    pub flips: bool,
    /// The value nearest the base at which it has changed (bisected to 1/(8·2³⁰) of the
    /// range; set this value and the recommendation is `to`).
    pub value: Option<f64>,
    /// (value − base) / base; absent when the base is 0.
    pub change_fraction: Option<f64>,
    /// The option recommended at `value`; absent when no option meets the contract there.
    pub to: Option<OptionRef>,
    /// "flips to h100 reserved-3y at 345,600 USD (+8.0 %)" or "does not flip within its range".
    pub verdict: String,
}

/// Every uncertain input drawn at once (`results.json` `uncertainty`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Uncertainty {
    /// Monte Carlo samples drawn.
    pub samples: u32,
    /// "latin hypercube, seed 1".
    pub method: String,
    /// How performance inputs were re-planned: "analytic re-plan" or "scaled from the
    /// simulated latency curve"; absent when only cost inputs vary.
    pub replan: Option<String>,
    /// The inputs drawn, with their distributions.
    pub inputs: Vec<InputRange>,
    /// Samples in which no tier met the contract (no option could be recommended).
    pub samples_without_recommendation: u32,
    /// One entry per tier × option of the base run, in its order.
    pub options: Vec<OptionSpread>,
}

/// One input of the Monte Carlo.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InputRange {
    pub input: String,
    pub unit: String,
    pub base_value: f64,
    pub dist: Dist,
    /// "triangular 0.056–0.08–0.12".
    pub label: String,
    pub range_source: String,
    pub performance: bool,
}

/// The spread of one option's ranking figure over the samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OptionSpread {
    pub tier: String,
    pub option: DeploymentOption,
    /// The ranking figure at the base inputs \[USD\].
    pub npv_base: f64,
    /// Its 10th, 50th and 90th percentiles over the samples \[USD\].
    pub npv_p10: f64,
    pub npv_p50: f64,
    pub npv_p90: f64,
    /// The 0th, 5th, …, 100th percentiles (21 values) \[USD\], for a distribution chart.
    pub npv_quantiles: Vec<f64>,
    /// The share of samples in which it is the recommended (cheapest eligible) option.
    pub p_cheapest: f64,
    /// When performance inputs vary: the share of samples in which the tier's planned fleet
    /// still meets the contract.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_slo_met: Option<f64>,
}

/// The ranking figure of an option whose tier could not be planned in a sample (the model no
/// longer fits its units): never shown, filtered out of every output.
const UNPLANNED: f64 = f64::MAX;

/// A tier's own cost settings, as the cost model takes them.
#[derive(Debug, Clone, Copy)]
struct Settings {
    energy: Option<f64>,
    software: Option<f64>,
    porting: f64,
    spares: Option<u32>,
}

impl Settings {
    fn of(t: &crate::scenario::Tier) -> Settings {
        Settings {
            energy: t.energy_override.as_ref().map(|c| c.value),
            software: t.software_override.as_ref().map(|c| c.value),
            porting: t.porting.as_ref().map_or(0.0, |c| c.value),
            spares: t.spares,
        }
    }

    fn set(&mut self, s: TierSetting, v: f64) {
        match s {
            TierSetting::EnergyUsdPerUnitHour => self.energy = Some(v),
            TierSetting::SoftwareUsdPerUnitYear => self.software = Some(v),
            TierSetting::PortingUsd => self.porting = v,
        }
    }

    /// As `results::assemble` builds them.
    fn tier_costs(&self, peak_rps: f64, unit_throughput_rps: f64) -> TierCosts {
        TierCosts {
            energy_override: self.energy,
            software_usd_per_unit_year: self.software,
            porting_usd: self.porting,
            peak_rps,
            unit_throughput_rps,
            spares: self.spares,
        }
    }
}

/// One tier × option that the base run costed.
#[derive(Debug, Clone)]
struct Slot {
    tier: usize,
    option: DeploymentOption,
}

/// What one evaluation gives.
#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    /// Ranking figure per slot.
    npv: Vec<f64>,
    /// The recommended slot, if any tier is eligible.
    best: Option<usize>,
    /// Per tier: whether the base plan's fleet still meets the contract (performance samples).
    planned_meets: Vec<bool>,
}

/// The base run, ready to be re-costed with changed inputs.
pub struct Model<'a> {
    scenario: &'a Scenario,
    results: &'a RunResults,
    simulated: bool,
    slots: Vec<Slot>,
    fleets: Vec<Vec<FleetYear>>,
    eligible: Vec<bool>,
    base: Outcome,
    /// The scenario's traffic year by year, computed once: every re-plan that leaves the
    /// traffic alone reads it.
    traffic: Vec<YearTraffic>,
}

impl<'a> Model<'a> {
    /// The model of a finished run of `scenario` by `method`.
    pub fn new(scenario: &'a Scenario, results: &'a RunResults, method: Method) -> Model<'a> {
        let slots = results
            .tiers
            .iter()
            .enumerate()
            .flat_map(|(tier, t)| {
                t.options.iter().map(move |o| Slot {
                    tier,
                    option: o.option,
                })
            })
            .collect();
        let fleets = results
            .tiers
            .iter()
            .map(|t| t.capacity.iter().map(|c| c.fleet.clone()).collect())
            .collect();
        let eligible = results.tiers.iter().map(|t| t.meets_slo()).collect();
        let mut m = Model {
            scenario,
            results,
            simulated: matches!(method, Method::Simulated { .. }),
            slots,
            fleets,
            eligible,
            base: Outcome {
                npv: vec![],
                best: None,
                planned_meets: vec![],
            },
            traffic: scenario
                .traffic
                .years(scenario.horizon_years, scenario.simulation.window_s),
        };
        m.base = m.evaluate(&[]);
        m
    }

    fn slot_ref(&self, i: usize) -> OptionRef {
        OptionRef {
            tier: self.scenario.tiers[self.slots[i].tier].name.clone(),
            option: self.slots[i].option,
        }
    }

    fn find_slot(&self, tier: &str, option: DeploymentOption) -> Option<usize> {
        self.slots
            .iter()
            .position(|s| self.scenario.tiers[s.tier].name == tier && s.option == option)
    }

    /// The ranking figures and the recommendation with `values` set (each in its written unit,
    /// inside its valid range), every other input at base.
    fn evaluate(&self, values: &[(Target, f64)]) -> Outcome {
        if values.iter().any(|(t, _)| t.is_performance()) {
            return self.evaluate_replanned(values);
        }
        // Cost inputs only: the base fleets, costed with copies of just what changed.
        let tiers = &self.scenario.tiers;
        let mut costs = Cow::Borrowed(&self.scenario.costs);
        let mut profiles: Vec<Cow<'_, Profile>> =
            tiers.iter().map(|t| Cow::Borrowed(&t.profile)).collect();
        let mut settings: Vec<Settings> = tiers.iter().map(Settings::of).collect();
        for &(t, v) in values {
            match t {
                Target::Cost(i) => {
                    if let Some(c) = costs.to_mut().get_mut(COST_INPUTS[i].key) {
                        c.value = v;
                    }
                }
                Target::Profile { tier, number } => {
                    let n = &PROFILE_NUMBERS[number];
                    let name = &tiers[tier].profile.name;
                    for (j, t) in tiers.iter().enumerate() {
                        if &t.profile.name == name
                            && let Some(c) = n.get_mut(profiles[j].to_mut())
                        {
                            c.value = v * n.scale;
                        }
                    }
                }
                Target::Tier { tier, setting } => settings[tier].set(setting, v),
                // Performance inputs go through `evaluate_replanned`.
                Target::Workload(_) | Target::Growth | Target::MaxUtilization => {}
            }
        }
        let npv: Vec<f64> = self
            .slots
            .iter()
            .map(|slot| {
                let t = &self.results.tiers[slot.tier];
                let tc = settings[slot.tier].tier_costs(
                    t.capacity.last().map_or(0.0, |c| c.peak_rps),
                    t.unit_throughput_rps,
                );
                cost::option_cost_for(
                    slot.option,
                    &profiles[slot.tier],
                    &self.fleets[slot.tier],
                    &costs,
                    &tc,
                )
                .net_present_cost_usd
            })
            .collect();
        Outcome {
            best: self.best_of(&npv, &self.eligible),
            npv,
            planned_meets: vec![true; tiers.len()],
        }
    }

    /// [`Model::evaluate`] with performance inputs: the scenario with every value set, each
    /// tier's service plan rebuilt and its fleet re-planned ([`replan`]), then costed.
    fn evaluate_replanned(&self, values: &[(Target, f64)]) -> Outcome {
        let mut s = self.scenario.clone();
        for &(t, v) in values {
            s.set_input(t, v);
        }
        let n = s.tiers.len();
        let fits = s.rebuild_service_plans();
        // Year by year once for all tiers: the base's when the inputs left the traffic alone
        // (only its growth is an input).
        let traffic = if s.traffic == self.scenario.traffic {
            Cow::Borrowed(&self.traffic)
        } else {
            Cow::Owned(s.traffic.years(s.horizon_years, s.simulation.window_s))
        };
        let mut fleets: Vec<Option<Vec<FleetYear>>> = vec![None; n];
        let mut eligible = vec![false; n];
        let mut planned_meets = vec![false; n];
        let mut peak = vec![0.0; n];
        let mut throughput = vec![0.0; n];
        for i in 0..n {
            if !fits[i] {
                // The model no longer fits this tier's units: nothing to plan or cost.
                continue;
            }
            let t = &self.results.tiers[i];
            let r = replan::replan(
                self.scenario,
                &s,
                i,
                replan::BasePlan {
                    years: &t.capacity,
                    latency_curve: &t.latency_curve,
                    unit_throughput_rps: t.unit_throughput_rps,
                    simulated: self.simulated,
                    traffic: &self.traffic,
                },
                &traffic,
            );
            eligible[i] = self.eligible[i] && r.eligible;
            planned_meets[i] = r.planned_meets;
            peak[i] = r.peak_rps;
            throughput[i] = r.unit_throughput_rps;
            fleets[i] = Some(r.fleets);
        }
        let npv: Vec<f64> = self
            .slots
            .iter()
            .map(|slot| {
                let tier = &s.tiers[slot.tier];
                let Some(fleet) = &fleets[slot.tier] else {
                    return UNPLANNED;
                };
                let tc = Settings::of(tier).tier_costs(peak[slot.tier], throughput[slot.tier]);
                cost::option_cost_for(slot.option, &tier.profile, fleet, &s.costs, &tc)
                    .net_present_cost_usd
            })
            .collect();
        Outcome {
            best: self.best_of(&npv, &eligible),
            npv,
            planned_meets,
        }
    }

    /// The cheapest slot of an eligible tier; on a tie the simpler option, then the tier name
    /// (the order `results` ranks by).
    fn best_of(&self, npv: &[f64], eligible: &[bool]) -> Option<usize> {
        (0..self.slots.len())
            .filter(|&i| eligible[self.slots[i].tier])
            .min_by(|&a, &b| {
                npv[a]
                    .total_cmp(&npv[b])
                    .then_with(|| self.slots[a].option.cmp(&self.slots[b].option))
                    .then_with(|| {
                        self.scenario.tiers[self.slots[a].tier]
                            .name
                            .cmp(&self.scenario.tiers[self.slots[b].tier].name)
                    })
            })
    }

    /// The recommended option at the base inputs, as this model finds it.
    pub fn base_best(&self) -> Option<OptionRef> {
        self.base.best.map(|i| self.slot_ref(i))
    }

    /// One input at `value` (clamped into its valid range), every other at base: the
    /// recommended option there, and the ranking figure of every tier × option in base order.
    pub fn with_value(&self, input: &UncertainInput, value: f64) -> (Option<OptionRef>, Vec<f64>) {
        let v = ranges::clamp(value, &self.scenario.input_valid(input.path.target));
        let o = self.evaluate(&[(input.path.target, v)]);
        (o.best.map(|i| self.slot_ref(i)), o.npv)
    }

    /// The tornado and the flip points of every input, the tornado sorted by swing.
    pub fn sensitivity(&self, inputs: &[UncertainInput]) -> Option<Sensitivity> {
        let rec = self.results.recommendation.as_ref()?;
        let best = self.find_slot(&rec.best.tier, rec.best.option)?;
        let runner = rec
            .runner_up
            .as_ref()
            .and_then(|r| self.find_slot(&r.tier, r.option));
        let rows: Vec<(TornadoRow, FlipPoint)> = inputs
            .par_iter()
            .map(|u| (self.tornado_row(u, best, runner), self.flip_point(u)))
            .collect();
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by(|&a, &b| {
            rows[b]
                .0
                .swing_usd
                .total_cmp(&rows[a].0.swing_usd)
                .then(a.cmp(&b))
        });
        Some(Sensitivity {
            best: self.slot_ref(best),
            runner_up: runner.map(|r| self.slot_ref(r)),
            tornado: order.iter().map(|&i| rows[i].0.clone()).collect(),
            flip_points: order.iter().map(|&i| rows[i].1.clone()).collect(),
        })
    }

    fn tornado_row(&self, u: &UncertainInput, best: usize, runner: Option<usize>) -> TornadoRow {
        let t = u.path.target;
        let valid = self.scenario.input_valid(t);
        let (lo, hi) = u.dist.tornado_ends();
        let (lo, hi) = (ranges::clamp(lo, &valid), ranges::clamp(hi, &valid));
        let at = |x: f64| self.evaluate(&[(t, x)]);
        let (a, b) = (at(lo), at(hi));
        let figure = |o: &Outcome, slot: usize| {
            let v = o.npv[slot];
            (v != UNPLANNED).then_some(v)
        };
        let diff = |o: &Outcome| Some(figure(o, runner?)? - figure(o, best)?);
        let (dl, dh) = (diff(&a), diff(&b));
        let swing = match (dl, dh, figure(&a, best), figure(&b, best)) {
            (Some(l), Some(h), _, _) => (h - l).abs(),
            (_, _, Some(l), Some(h)) => (h - l).abs(),
            _ => 0.0,
        };
        TornadoRow {
            input: u.path.key.clone(),
            unit: self.scenario.input_unit(t).into(),
            performance: t.is_performance(),
            dist: u.dist,
            range_source: u.origin.label(),
            base_value: self.scenario.input_value(t).0,
            low_value: lo,
            high_value: hi,
            best_npv_low_usd: figure(&a, best),
            best_npv_high_usd: figure(&b, best),
            runner_up_npv_low_usd: runner.and_then(|r| figure(&a, r)),
            runner_up_npv_high_usd: runner.and_then(|r| figure(&b, r)),
            difference_low_usd: dl,
            difference_high_usd: dh,
            swing_usd: swing,
        }
    }

    fn flip_point(&self, u: &UncertainInput) -> FlipPoint {
        let t = u.path.target;
        let valid = self.scenario.input_valid(t);
        let base = self.scenario.input_value(t).0;
        let (lo, hi) = u.dist.search_ends();
        let (lo, hi) = (ranges::clamp(lo, &valid), ranges::clamp(hi, &valid));
        let best = self.base.best;
        let flipped = |x: f64| {
            let o = self.evaluate(&[(t, ranges::clamp(x, &valid))]);
            (o.best != best).then_some(o.best)
        };
        let mut found: Option<(f64, Option<usize>)> = None;
        for end in [hi, lo] {
            if end == base {
                continue;
            }
            let mut prev = base;
            for k in 1..=FLIP_GRID {
                let x = base + (end - base) * k as f64 / FLIP_GRID as f64;
                if let Some(to) = flipped(x) {
                    // Bisect between the last unflipped point and this one.
                    let (mut a, mut b, mut to) = (prev, x, to);
                    for _ in 0..FLIP_BISECTIONS {
                        let m = (a + b) / 2.0;
                        if ranges::clamp(m, &valid) == ranges::clamp(b, &valid)
                            || ranges::clamp(m, &valid) == ranges::clamp(a, &valid)
                        {
                            break;
                        }
                        match flipped(m) {
                            Some(t) => {
                                b = m;
                                to = t;
                            }
                            None => a = m,
                        }
                    }
                    let v = ranges::clamp(b, &valid);
                    if found.is_none_or(|(f, _)| (v - base).abs() < (f - base).abs()) {
                        found = Some((v, to));
                    }
                    break;
                }
                prev = x;
            }
        }
        let unit = self.scenario.input_unit(t).to_string();
        let change = |v: f64| (base != 0.0).then(|| (v - base) / base);
        match found {
            Some((v, to)) => {
                let to = to.map(|i| self.slot_ref(i));
                let target = to
                    .as_ref()
                    .map_or("no option meeting the contract".to_string(), |o| {
                        format!("{} {}", o.tier, o.option)
                    });
                let verdict = format!(
                    "flips to {target} at {}{}",
                    value_text(v, &unit),
                    change(v).map_or(String::new(), |c| format!(" ({})", format::change_text(c)))
                );
                FlipPoint {
                    input: u.path.key.clone(),
                    unit,
                    base_value: base,
                    search_low: lo,
                    search_high: hi,
                    flips: true,
                    value: Some(v),
                    change_fraction: change(v),
                    to,
                    verdict,
                }
            }
            None => FlipPoint {
                input: u.path.key.clone(),
                unit,
                base_value: base,
                search_low: lo,
                search_high: hi,
                flips: false,
                value: None,
                change_fraction: None,
                to: None,
                verdict: "does not flip within its range".into(),
            },
        }
    }

    /// `samples` draws of every input at once on a Latin hypercube seeded from `seed`.
    pub fn monte_carlo(&self, inputs: &[UncertainInput], samples: u32, seed: u64) -> Uncertainty {
        let n = samples.max(1) as usize;
        let k = inputs.len();
        // One permutation of the strata per input, drawn in input order.
        let strata: Vec<Vec<usize>> = (0..k)
            .map(|j| {
                let mut p: Vec<usize> = (0..n).collect();
                let mut rng =
                    crate::rng::stream(seed, j as u64, crate::rng::streams::UNCERTAINTY_STRATA);
                p.shuffle(&mut rng);
                p
            })
            .collect();
        let valid: Vec<_> = inputs
            .iter()
            .map(|u| self.scenario.input_valid(u.path.target))
            .collect();
        let outcomes: Vec<Outcome> = (0..n)
            .into_par_iter()
            .map(|i| {
                let mut rng = crate::rng::stream(seed, i as u64, crate::rng::streams::UNCERTAINTY);
                let values: Vec<(Target, f64)> = inputs
                    .iter()
                    .enumerate()
                    .map(|(j, u)| {
                        let jitter: f64 = rng.random();
                        let q = (strata[j][i] as f64 + jitter) / n as f64;
                        (u.path.target, ranges::clamp(u.dist.quantile(q), &valid[j]))
                    })
                    .collect();
                self.evaluate(&values)
            })
            .collect();
        let performance = inputs.iter().any(|u| u.path.target.is_performance());
        let options = (0..self.slots.len())
            .map(|s| {
                let mut v: Vec<f64> = outcomes
                    .iter()
                    .map(|o| o.npv[s])
                    .filter(|&x| x != UNPLANNED)
                    .collect();
                v.sort_by(f64::total_cmp);
                let q = |p: f64| quantile_sorted(&v, p).unwrap_or(self.base.npv[s]);
                let tier = self.slots[s].tier;
                OptionSpread {
                    tier: self.scenario.tiers[tier].name.clone(),
                    option: self.slots[s].option,
                    npv_base: self.base.npv[s],
                    npv_p10: q(0.1),
                    npv_p50: q(0.5),
                    npv_p90: q(0.9),
                    npv_quantiles: (0..CHART_QUANTILES)
                        .map(|i| q(i as f64 / (CHART_QUANTILES - 1) as f64))
                        .collect(),
                    p_cheapest: outcomes.iter().filter(|o| o.best == Some(s)).count() as f64
                        / n as f64,
                    p_slo_met: performance.then(|| {
                        outcomes.iter().filter(|o| o.planned_meets[tier]).count() as f64 / n as f64
                    }),
                }
            })
            .collect();
        Uncertainty {
            samples: n as u32,
            method: format!("latin hypercube, seed {seed}"),
            replan: performance.then(|| {
                if self.simulated {
                    "scaled from the simulated latency-against-load curve".to_string()
                } else {
                    "analytic re-plan".to_string()
                }
            }),
            inputs: inputs
                .iter()
                .map(|u| InputRange {
                    input: u.path.key.clone(),
                    unit: self.scenario.input_unit(u.path.target).into(),
                    base_value: self.scenario.input_value(u.path.target).0,
                    dist: u.dist,
                    label: u.dist.label(),
                    range_source: u.origin.label(),
                    performance: u.path.target.is_performance(),
                })
                .collect(),
            samples_without_recommendation: outcomes.iter().filter(|o| o.best.is_none()).count()
                as u32,
            options,
        }
    }
}

/// The `p`-quantile of sorted values, linear between order statistics (Hyndman & Fan type 7).
fn quantile_sorted(v: &[f64], p: f64) -> Option<f64> {
    let last = v.len().checked_sub(1)?;
    let h = p.clamp(0.0, 1.0) * last as f64;
    let (i, f) = (h.floor() as usize, h.fract());
    Some(if i >= last {
        v[last]
    } else {
        v[i] + f * (v[i + 1] - v[i])
    })
}

/// "345,600 USD", "0.113 fraction per year": three significant figures, for sentences (the
/// JSON and CSV keep the exact value).
fn value_text(v: f64, unit: &str) -> String {
    format!("{} {unit}", format::figures3(v))
}

/// Flip points that flip, nearest the base first (by relative change, then by name): the
/// recommendation sentence, the PDF's decision page and its risks all read this one order.
pub fn flips_nearest_first(s: &Sensitivity) -> Vec<&FlipPoint> {
    let mut f: Vec<_> = s
        .flip_points
        .iter()
        .filter(|f| f.flips && f.value.is_some())
        .collect();
    f.sort_by(|a, b| {
        let d = |x: &FlipPoint| x.change_fraction.map_or(f64::MAX, f64::abs);
        d(a).total_cmp(&d(b)).then_with(|| a.input.cmp(&b.input))
    });
    f
}

/// "cheapest in 99.5 % of 1,000 samples": the probability the recommended option is the
/// cheapest, as every output says it.
pub fn chance_text(p_cheapest: f64, samples: u32) -> String {
    format!(
        "cheapest in {} of {} samples",
        format::share(p_cheapest),
        format::count(samples)
    )
}

/// "nearest flip: costs.x at 373,713 USD (+16.8 %)", or that no input flips it within its
/// range.
pub fn flip_text(s: Option<&Sensitivity>) -> String {
    match s.and_then(|s| flips_nearest_first(s).into_iter().next()) {
        Some(f) => format!(
            "nearest flip: {} at {}{}",
            f.input,
            value_text(f.value.unwrap_or(f.base_value), &f.unit),
            f.change_fraction
                .map_or(String::new(), |c| format!(" ({})", format::change_text(c)))
        ),
        None => "no input flips it within its range".into(),
    }
}

/// Run the whole analysis on a finished run and attach it: `sensitivity` and `uncertainty` in
/// the results, and the recommendation sentence's "(cheapest in X % of N samples; nearest
/// flip: …)". Does nothing when the scenario has no uncertain input.
pub fn attach(scenario: &Scenario, results: &mut RunResults, method: Method, samples: u32) {
    let inputs = scenario.uncertain_inputs();
    if inputs.is_empty() || results.recommendation.is_none() {
        return;
    }
    let model = Model::new(scenario, results, method);
    let sensitivity = model.sensitivity(&inputs);
    let mc = model.monte_carlo(&inputs, samples, scenario.seed);
    let best = model.base.best;
    drop(model);
    if let (Some(rec), Some(b)) = (results.recommendation.as_mut(), best) {
        let p = mc.options.get(b).map_or(0.0, |o| o.p_cheapest);
        let sentence = rec.sentence.trim_end_matches('.').to_string();
        rec.sentence = format!(
            "{sentence} ({}; {}).",
            chance_text(p, mc.samples),
            flip_text(sensitivity.as_ref())
        );
    }
    results.sensitivity = sensitivity;
    results.uncertainty = Some(mc);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_7_quantiles() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile_sorted(&v, 0.5), Some(3.0));
        assert_eq!(quantile_sorted(&v, 0.1), Some(1.4));
        assert_eq!(quantile_sorted(&v, 1.0), Some(5.0));
        assert_eq!(quantile_sorted(&[], 0.5), None);
    }
}
