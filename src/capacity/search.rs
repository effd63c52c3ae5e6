//! The simulated capacity plan: the smallest fleet of a tier whose simulated SLO percentile meets
//! the bound on the design traffic of each year.
//!
//! Evaluating a fleet ([`evaluate`]) is kept apart from choosing the next size to try
//! ([`search_year`]): the search starts at the utilization bound — a lower bound, since no
//! smaller fleet can carry the design traffic within the planned utilization — and grows by half
//! its size until the SLO is met, then bisects down to the smallest size that meets it. It
//! reports why it stopped: met, capacity cap, unstable, or infeasible (the service time alone
//! exceeds the bound). Latency falls as units are added (DESIGN.md, Capacity plan), which is
//! what makes bisection valid; every size tried keeps the same random numbers (common random
//! numbers), so the comparison between sizes is not blurred by sampling noise.
//!
//! Every tier is simulated through one [`TierContext`], built by [`TierContext::new`] from the
//! service plan kept on the validated tier. [`plan_all`] is the simulated plan of `tco-sim run`;
//! [`sweep_sizes`] is `tco-sim simulate` (fixed fleet sizes, no search).

use std::sync::atomic::{AtomicUsize, Ordering};

use rand::RngExt;
use rayon::prelude::*;
use serde::Serialize;

use super::{
    Adjustment, CapacityYear, FleetYear, LatencyAtPlan, LoadPoint, StopReason, TierPlan,
    cap_detail, completions_needed, hourly_units, units_for, utilization_bound,
};
use crate::perf::ServicePlan;
use crate::rng;
use crate::scenario::{Scenario, Tier};
use crate::sim::{self, Dispatch, FleetSpec, RunSpec, ServerModel, SimError, SimReport};
use crate::traffic::{Request, YearTraffic};
use crate::workload::{LengthSampler, TokenCount, Workload};

/// Most arrivals one evaluation (one fleet size, all replications) simulates: 2^22, about
/// 4.2 million, above the largest design traffic of any shipped scenario (3.7 million, in
/// `embedding-api.toml`) and a fraction of a second of simulation. Above it the design window is
/// shortened to its busiest stretch that fits, and the plan says so
/// ([`Adjustment::WindowShortened`]).
pub const MAX_ARRIVALS_PER_EVALUATION: f64 = 4_194_304.0;

/// Most queue comparisons join-shortest-queue dispatch may make in one evaluation: it compares
/// every unit at each arrival, so its work is arrivals × units. 2^26 (67 million) is about as
/// much work as [`MAX_ARRIVALS_PER_EVALUATION`] arrivals of the other policies, and 2.7 times
/// what the largest shipped fleet needs (starter's 9 units × 2.7 million arrivals). Counted at
/// the tier-year's lower bound, so every size the search tries sees the same window.
pub const MAX_DISPATCH_SCANS_PER_EVALUATION: f64 = 67_108_864.0;

/// Most replications an evaluation is raised to for a percentile that needs more completions
/// than the design window holds: the scenario's own limit for `simulation.replications`.
pub const MAX_REPLICATIONS: u32 = 1000;

/// How one tier-year is measured: the window and warm-up each fleet size is simulated over and
/// the replications, decided once from the design traffic (never from the fleet size, so every
/// size tried sees the same arrivals).
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    pub window_s: f64,
    pub warmup_s: f64,
    pub replications: u32,
    /// What was changed from the scenario's window and replications, and why.
    pub adjustment: Option<Adjustment>,
}

impl Measurement {
    /// Whether the tier-year is sized by the utilization bound instead of simulated.
    pub fn falls_back(&self) -> bool {
        matches!(self.adjustment, Some(Adjustment::AnalyticFallback { .. }))
    }
}

/// Decide how `year` of the tier is measured. Work is bounded by
/// [`MAX_ARRIVALS_PER_EVALUATION`] (and, under join-shortest-queue, by
/// [`MAX_DISPATCH_SCANS_PER_EVALUATION`] at `units` units); a percentile needs
/// [`completions_needed`] measured requests over all replications, from the expected count (the
/// design rate times the measured time), so the decision is the same for any seed.
pub fn measurement(ctx: &TierContext<'_>, year: u32, units: u32) -> Measurement {
    let s = ctx.scenario;
    let w = s.traffic.design_window(year, s.simulation.window_s);
    let (window, warmup, reps) = (w.duration_s, s.simulation.warmup_s, ctx.replications.max(1));
    let keep = Measurement {
        window_s: s.simulation.window_s,
        warmup_s: warmup,
        replications: reps,
        adjustment: None,
    };
    let rate = w.mean_rps;
    if !(rate.is_finite() && rate > 0.0 && window > 0.0) {
        return keep;
    }
    let needed = completions_needed(s.slo.percentile);
    let measured_per_rep = rate * (window - warmup).max(0.0);
    let arrivals = rate * window * reps as f64;
    let scan_factor = match ctx.dispatch {
        sim::Dispatch::JoinShortestQueue => f64::from(units.max(1)),
        _ => 1.0,
    };
    let budget = MAX_ARRIVALS_PER_EVALUATION.min(MAX_DISPATCH_SCANS_PER_EVALUATION / scan_factor);
    if measured_per_rep * (reps as f64) < needed {
        let want = (needed / measured_per_rep).ceil();
        if measured_per_rep > 0.0
            && want <= MAX_REPLICATIONS as f64
            && want * rate * window <= budget
        {
            return Measurement {
                replications: want as u32,
                adjustment: Some(Adjustment::ReplicationsRaised {
                    year,
                    from: reps,
                    to: want as u32,
                    needed,
                }),
                ..keep
            };
        }
        return Measurement {
            adjustment: Some(Adjustment::AnalyticFallback {
                year,
                expected: measured_per_rep * reps as f64,
                needed,
            }),
            ..keep
        };
    }
    if arrivals > budget {
        let f = budget / arrivals;
        return Measurement {
            window_s: window * f,
            warmup_s: warmup * f,
            adjustment: Some(Adjustment::WindowShortened {
                year,
                from_s: window,
                to_s: window * f,
                arrivals,
            }),
            ..keep
        };
    }
    keep
}

/// The simulator's model of one unit of a tier, from its service plan.
pub fn server_model(plan: &ServicePlan) -> ServerModel {
    match plan {
        ServicePlan::Classic(p) if p.kind == crate::hardware::UnitKind::Cpu && !p.cpu_batches() => {
            ServerModel::SharedBandwidth {
                chips: p.slots / p.cores_per_chip.max(1),
                cores_per_chip: p.cores_per_chip,
                time_at_busy_s: p.time_at_busy_s.clone(),
                variability: p.variability.clone(),
            }
        }
        ServicePlan::Classic(p) => ServerModel::Batching {
            devices: p.slots,
            max_batch: p.batching.max_batch,
            window_s: p.batching.window_s,
            batch_time_s: p.batch_time_s.clone(),
            variability: p.variability.clone(),
        },
        ServicePlan::Generative(p) => ServerModel::ContinuousBatching {
            replicas: p.replicas_per_unit,
            max_batch: p.max_batch,
            kv_capacity_tokens: p.kv_capacity_tokens,
            cost: p.cost(),
            variability: p.variability.clone(),
            scheduler: p.scheduler,
            prefix_cache: None,
        },
    }
}

/// The server model with prefix caching on when the scenario's replayed requests carry prompt
/// prefix blocks (a trace with `hash_ids` and `workload.prefix_caching` not false; the scenario
/// drops the blocks otherwise).
pub fn with_prefix_caching(mut server: ServerModel, scenario: &Scenario) -> ServerModel {
    if let (ServerModel::ContinuousBatching { prefix_cache, .. }, Some(b)) =
        (&mut server, scenario.traffic.prefix_blocks())
    {
        *prefix_cache = Some(sim::PrefixCaching { blocks: b.clone() });
    }
    server
}

/// Everything needed to simulate one tier, decided once.
pub struct TierContext<'a> {
    pub scenario: &'a Scenario,
    pub tier: &'a Tier,
    pub tier_index: usize,
    pub server: ServerModel,
    pub unit_throughput_rps: f64,
    pub replications: u32,
    pub dispatch: Dispatch,
    /// Largest fleet the search may try: `simulation.max_units`, or fewer if the simulator
    /// cannot hold that many of these units ([`sim::max_units`]).
    pub max_units: u32,
}

impl<'a> TierContext<'a> {
    /// The context of tier `tier_index` of `scenario`, simulated with `replications`
    /// replications per fleet size and the scenario's dispatch policy. The one constructor:
    /// the server model and throughput come from the service plan kept on the validated tier.
    ///
    /// # Panics
    /// If `tier_index` is not a tier of `scenario`.
    pub fn new(scenario: &'a Scenario, tier_index: usize, replications: u32) -> Self {
        let tier = &scenario.tiers[tier_index];
        let server = with_prefix_caching(server_model(&tier.plan), scenario);
        TierContext {
            scenario,
            tier,
            tier_index,
            max_units: scenario
                .simulation
                .max_units
                .min(sim::max_units(&server))
                .max(1),
            server,
            unit_throughput_rps: tier.plan.unit_throughput_rps(&scenario.workload),
            replications,
            dispatch: scenario.simulation.dispatch,
        }
    }
}

/// Whether the simulator accepts every tier's server model and the scenario's run settings, as
/// [`sim::check`] judges them: the checks a simulated run would otherwise meet only after
/// planning had begun. On failure, the tier's name and the simulator's error.
pub fn check_tiers(scenario: &Scenario) -> Result<(), (String, SimError)> {
    let contexts: Vec<TierContext<'_>> = (0..scenario.tiers.len())
        .map(|i| TierContext::new(scenario, i, scenario.simulation.replications))
        .collect();
    check_contexts(&contexts)
}

fn check_contexts(contexts: &[TierContext<'_>]) -> Result<(), (String, SimError)> {
    for ctx in contexts {
        let fleet = FleetSpec {
            units: 1,
            server: ctx.server.clone(),
            dispatch: ctx.dispatch,
            queue_cap: None,
            timeout_s: None,
        };
        let run = RunSpec {
            warmup_s: ctx.scenario.simulation.warmup_s,
            replications: ctx.replications.max(1),
            seed: ctx.scenario.seed,
            quantiles: vec![ctx.scenario.slo.percentile / 100.0],
        };
        sim::check(&fleet, &run).map_err(|e| (ctx.tier.name.clone(), e))?;
    }
    Ok(())
}

/// One fleet size, simulated on one year's design traffic.
#[derive(Debug, Clone)]
pub struct Evaluation {
    pub units: u32,
    /// The SLO percentile of end-to-end latency and its 95 % confidence half-width \[s\].
    pub slo_s: f64,
    pub slo_ci95_s: Option<f64>,
    /// The same percentile of service time alone (no queueing) \[s\].
    pub service_slo_s: f64,
    /// The same percentile of time to first token and time per output token \[s\].
    pub ttft_s: Option<f64>,
    pub tpot_s: Option<f64>,
    /// Their 95 % confidence half-widths \[s\].
    pub ttft_ci95_s: Option<f64>,
    pub tpot_ci95_s: Option<f64>,
    pub report: SimReport,
}

impl Evaluation {
    /// Every bound of the contract holds, the fleet kept up, and requests were measured.
    pub fn meets(&self, slo: &crate::scenario::Slo) -> bool {
        let within = |v: Option<f64>, bound: Option<f64>| match bound {
            Some(b) => v.is_some_and(|v| v <= b),
            None => true,
        };
        !self.report.unstable
            && self.report.counts.completed > 0
            && within(Some(self.slo_s), slo.latency_s)
            && within(self.ttft_s, slo.ttft_s)
            && within(self.tpot_s, slo.tpot_s)
    }

    /// Queueing is not what fails: the service time alone breaks the end-to-end bound.
    fn service_breaks(&self, slo: &crate::scenario::Slo) -> bool {
        !self.report.unstable && slo.latency_s.is_some_and(|b| self.service_slo_s > b)
    }
}

/// Seed of a tier-year: every fleet size tried for it sees the same arrivals.
fn tier_year_seed(seed: u64, tier: usize, year: u32) -> u64 {
    let mut r = rng::stream(
        seed,
        ((tier as u64) << 32) | year as u64,
        rng::streams::ARRIVALS,
    );
    r.random()
}

/// Token counts for generative requests that do not carry their own (synthetic traffic, or
/// `tokens_from_trace = false`), drawn from the `SIZES` stream.
struct Sizes {
    prompt: TokenCount,
    output: TokenCount,
    from_trace: bool,
    rng: rand::rngs::Xoshiro256PlusPlus,
    /// Classic sequence models: the length distribution and the longest length.
    lengths: Option<(LengthSampler, u32)>,
}

impl Sizes {
    fn new(workload: &Workload, seed: u64, replication: u64) -> Option<Sizes> {
        match workload {
            Workload::Generative {
                prompt_tokens,
                output_tokens,
                tokens_from_trace,
                ..
            } => Some(Sizes {
                prompt: prompt_tokens.clone(),
                output: output_tokens.clone(),
                from_trace: *tokens_from_trace,
                rng: rng::stream(seed, replication, rng::streams::SIZES),
                lengths: None,
            }),
            // A classic sequence model's length rides in `input_tokens` (output 0).
            Workload::Classic { model, .. } => model.lengths.as_ref().map(|l| Sizes {
                prompt: TokenCount::Fixed { tokens: 1 },
                output: TokenCount::Fixed { tokens: 0 },
                from_trace: l.from_trace,
                rng: rng::stream(seed, replication, rng::streams::SIZES),
                lengths: Some((LengthSampler::new(l), l.max)),
            }),
        }
    }

    fn fill(&mut self, mut r: Request) -> Request {
        let has_own = r.input_tokens > 0 || r.output_tokens > 0;
        if let Some((lengths, max)) = &self.lengths {
            r.input_tokens = if self.from_trace && r.input_tokens > 0 {
                r.input_tokens.min(*max)
            } else {
                lengths.draw(&mut self.rng)
            };
            r.output_tokens = 0;
            return r;
        }
        if !(self.from_trace && has_own) {
            r.input_tokens = self.prompt.draw(&mut self.rng);
            r.output_tokens = self.output.draw(&mut self.rng);
            // Drawn prompts are not the trace's: its prefix blocks do not describe them.
            r.prefix = 0;
        }
        r
    }
}

/// The design arrivals of `year` over a window of `window_s` seconds for one replication, with
/// request sizes where the workload needs them.
pub fn design_arrivals<'a>(
    scenario: &'a Scenario,
    year: u32,
    window_s: f64,
    seed: u64,
    replication: u64,
) -> impl Iterator<Item = Request> + 'a {
    let mut sizes = Sizes::new(&scenario.workload, seed, replication);
    scenario
        .traffic
        .design_arrivals(year, window_s, seed, replication)
        .map(move |r| match sizes.as_mut() {
            Some(s) => s.fill(r),
            None => r,
        })
}

/// Simulate `units` units of the tier on the design traffic of `year`, measured as
/// [`measurement`] decides for that many units (the window shortened to the event budget, the
/// replications raised for the percentile).
pub fn evaluate(ctx: &TierContext<'_>, year: u32, units: u32) -> Result<Evaluation, SimError> {
    evaluate_with(ctx, year, units, &measurement(ctx, year, units))
}

/// Simulate `units` units of the tier on the design traffic of `year`, measured as `m` says.
pub fn evaluate_with(
    ctx: &TierContext<'_>,
    year: u32,
    units: u32,
    m: &Measurement,
) -> Result<Evaluation, SimError> {
    evaluate_recorded(ctx, year, units, m, false).map(|(e, _)| e)
}

/// [`evaluate_with`], and with `record` the measured requests of each replication
/// ([`sim::simulate_recorded`]); empty without.
fn evaluate_recorded(
    ctx: &TierContext<'_>,
    year: u32,
    units: u32,
    m: &Measurement,
    record: bool,
) -> Result<(Evaluation, Vec<Vec<sim::Completion>>), SimError> {
    let (fleet, run) = fleet_and_run(ctx, year, units, m);
    let (s, seed, window) = (ctx.scenario, run.seed, m.window_s);
    let arrivals = |rep| design_arrivals(s, year, window, seed, rep);
    let (report, requests) = if record {
        sim::simulate_recorded(&fleet, &run, arrivals)?
    } else {
        (sim::simulate(&fleet, &run, arrivals)?, Vec::new())
    };
    Ok((evaluation(fleet.units, report), requests))
}

/// [`evaluate_with`] for a size whose failure needs no report: `None` as soon as the run is
/// certain to miss the contract ([`sim::simulate_unless`]), so a failing size costs only the
/// part of its run that decides it. A size that meets the contract, or fails only at the very
/// end, is the whole run, the same as [`evaluate_with`].
fn evaluate_unless(
    ctx: &TierContext<'_>,
    year: u32,
    units: u32,
    m: &Measurement,
) -> Result<Option<Evaluation>, SimError> {
    let (fleet, run) = fleet_and_run(ctx, year, units, m);
    let (s, seed, window) = (ctx.scenario, run.seed, m.window_s);
    let slo = &s.slo;
    let cutoff = sim::Cutoff {
        quantile: run.quantiles[0],
        latency_s: slo.latency_s,
        ttft_s: slo.ttft_s,
        tpot_s: slo.tpot_s,
    };
    let report = sim::simulate_unless(&fleet, &run, &cutoff, |rep| {
        design_arrivals(s, year, window, seed, rep)
    })?;
    Ok(report.map(|r| evaluation(fleet.units, r)))
}

/// The fleet of `units` units of the tier and the run that measures it on `year`'s design
/// traffic, as `m` says.
fn fleet_and_run(
    ctx: &TierContext<'_>,
    year: u32,
    units: u32,
    m: &Measurement,
) -> (FleetSpec, RunSpec) {
    let s = ctx.scenario;
    let fleet = FleetSpec {
        units: units.max(1),
        server: ctx.server.clone(),
        dispatch: ctx.dispatch,
        queue_cap: None,
        timeout_s: None,
    };
    let run = RunSpec {
        warmup_s: m.warmup_s,
        replications: m.replications,
        seed: tier_year_seed(s.seed, ctx.tier_index, year),
        quantiles: vec![s.slo.percentile / 100.0],
    };
    (fleet, run)
}

/// The contract's figures of a simulated fleet of `units` units.
fn evaluation(units: u32, report: sim::SimReport) -> Evaluation {
    let at = |l: &sim::LatencyStats| l.extra.first().map(|(_, e)| *e);
    let slo = at(&report.latency);
    let service = at(&report.service);
    Evaluation {
        units,
        slo_s: slo.map_or(f64::INFINITY, |e| e.value_s),
        slo_ci95_s: slo.and_then(|e| e.ci95_half_width_s),
        service_slo_s: service.map_or(f64::INFINITY, |e| e.value_s),
        ttft_s: report.ttft.as_ref().and_then(at).map(|e| e.value_s),
        tpot_s: report.tpot.as_ref().and_then(at).map(|e| e.value_s),
        ttft_ci95_s: report
            .ttft
            .as_ref()
            .and_then(at)
            .and_then(|e| e.ci95_half_width_s),
        tpot_ci95_s: report
            .tpot
            .as_ref()
            .and_then(at)
            .and_then(|e| e.ci95_half_width_s),
        report,
    }
}

/// The smallest fleet meeting the SLO in `year`, and why the search stopped.
pub fn search_year(
    ctx: &TierContext<'_>,
    year: u32,
    lower_bound: u32,
) -> Result<(StopReason, Evaluation), SimError> {
    search_year_with(ctx, year, lower_bound, &measurement(ctx, year, lower_bound))
}

/// [`search_year`] with every size measured as `m` says.
pub fn search_year_with(
    ctx: &TierContext<'_>,
    year: u32,
    lower_bound: u32,
    m: &Measurement,
) -> Result<(StopReason, Evaluation), SimError> {
    let slo = &ctx.scenario.slo;
    // The cap is the scenario's: a bound above it is reported, not silently exceeded.
    let cap = ctx.max_units;
    let evaluate = |n: u32| evaluate_with(ctx, year, n, m);
    if lower_bound > cap {
        // No fleet within the cap can carry the traffic at the planned utilization, whatever
        // the simulated latency of the cap says.
        return Ok((StopReason::CapacityCap, evaluate(cap)?));
    }
    let mut n = lower_bound.clamp(1, cap);
    let mut failed_below: Option<u32> = None;
    let mut best: Evaluation;
    // Grow until the SLO is met. A failing size below the cap is only grown past, unless the
    // service time alone might break the end-to-end bound (which takes its whole run to say):
    // such a size may stop as soon as it certainly fails.
    loop {
        let e = if n < cap && slo.latency_s.is_none() {
            evaluate_unless(ctx, year, n, m)?
        } else {
            Some(evaluate(n)?)
        };
        if let Some(e) = e {
            if e.meets(slo) {
                best = e;
                break;
            }
            if e.service_breaks(slo) {
                return Ok((StopReason::Infeasible, e));
            }
            if n >= cap {
                let why = if e.report.unstable {
                    StopReason::Unstable
                } else {
                    StopReason::CapacityCap
                };
                return Ok((why, e));
            }
        }
        failed_below = Some(n);
        n = (n + (n / 2).max(1)).min(cap);
    }
    // Bisect between the largest size that failed and the smallest that met; a failing size is
    // only a bound, so it may stop as soon as it certainly fails.
    if let Some(mut lo) = failed_below {
        let mut hi = best.units;
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            match evaluate_unless(ctx, year, mid, m)? {
                Some(e) if e.meets(slo) => {
                    hi = mid;
                    best = e;
                }
                _ => lo = mid,
            }
        }
    }
    Ok((StopReason::Met, best))
}

/// Latency against offered load at a fixed fleet: Poisson arrivals at fractions of the fleet's
/// roofline throughput (the "hockey stick").
pub fn latency_curve(ctx: &TierContext<'_>, units: u32) -> Vec<LoadPoint> {
    const LOADS: [f64; 10] = [0.1, 0.3, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.98];
    let capacity = ctx.unit_throughput_rps * units as f64;
    if !(capacity.is_finite() && capacity > 0.0) {
        return vec![];
    }
    let (prompt, output) = ctx.scenario.workload.mean_tokens();
    let seed = tier_year_seed(ctx.scenario.seed, ctx.tier_index, 0);
    let at_slo = |l: &sim::LatencyStats| l.extra.first().map(|(_, e)| e.value_s);
    // The points are independent runs with their own seeds: in parallel, in order.
    let points: Vec<Option<LoadPoint>> = LOADS
        .par_iter()
        .map(|&f| {
            let rate = f * capacity;
            // Enough requests for a steady p99 without dwarfing the plan itself, and no more
            // join-shortest-queue work than one evaluation may do (two replications).
            let scans = match ctx.dispatch {
                sim::Dispatch::JoinShortestQueue => f64::from(units.max(1)),
                _ => 1.0,
            };
            let count = 40_000u64
                .min((MAX_DISPATCH_SCANS_PER_EVALUATION / 2.0 / scans) as u64)
                .max(4_000);
            let warmup = 2_000.0 / rate;
            let fleet = FleetSpec {
                units,
                server: ctx.server.clone(),
                dispatch: ctx.dispatch,
                queue_cap: None,
                timeout_s: None,
            };
            let run = RunSpec {
                warmup_s: warmup,
                replications: 2,
                seed,
                // The contract's percentile, for the time to first token and per output token.
                quantiles: vec![ctx.scenario.slo.percentile / 100.0],
            };
            let r = sim::simulate(&fleet, &run, |rep| {
                sim::PoissonArrivals::new(seed, rep, rate, count).with_tokens(prompt, output)
            })
            .ok()?;
            (!r.unstable && r.counts.completed > 0).then_some(LoadPoint {
                offered_rps: rate,
                utilization: r.utilization.mean_utilization,
                p50_s: r.latency.p50.value_s,
                p95_s: r.latency.p95.value_s,
                p99_s: r.latency.p99.value_s,
                ttft_s: r.ttft.as_ref().and_then(at_slo),
                tpot_s: r.tpot.as_ref().and_then(at_slo),
            })
        })
        .collect();
    points.into_iter().flatten().collect()
}

/// Plan every tier and year by simulation; tier-years run in parallel and the result does not
/// depend on the number of threads. `tick` is called once per finished tier-year.
pub fn plan_all(
    scenario: &Scenario,
    replications: u32,
    tick: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<TierPlan>, SimError> {
    let contexts: Vec<TierContext<'_>> = (0..scenario.tiers.len())
        .map(|i| TierContext::new(scenario, i, replications))
        .collect();
    check_contexts(&contexts).map_err(|(_, e)| e)?;
    let jobs: Vec<(usize, u32)> = (0..contexts.len())
        .flat_map(|t| (1..=scenario.horizon_years).map(move |y| (t, y)))
        .collect();
    let done = AtomicUsize::new(0);
    let total = jobs.len();
    let years: Vec<Result<PlannedYear, SimError>> = jobs
        .par_iter()
        .map(|&(t, y)| {
            let r = plan_year(&contexts[t], y);
            tick(done.fetch_add(1, Ordering::Relaxed) + 1, total);
            r
        })
        .collect();
    let mut out = Vec::new();
    // Per tier, the fleet its latency curve is drawn at (none for a tier no fleet can serve).
    let mut curve_fleets: Vec<Option<u32>> = Vec::new();
    let mut years = years.into_iter();
    for ctx in &contexts {
        let planned: Vec<PlannedYear> = (&mut years)
            .take(scenario.horizon_years as usize)
            .collect::<Result<_, _>>()?;
        let adjustments: Vec<Adjustment> = planned
            .iter()
            .filter_map(|p| p.adjustment.clone())
            .collect();
        let plan: Vec<CapacityYear> = planned.into_iter().map(|p| p.year).collect();
        let last = plan.last().map_or(1, |c| c.units);
        // No curve for a tier no fleet can serve: its fleet size is only the utilization bound
        // (infeasible at any size, or capped before any simulation).
        let feasible = plan.iter().all(|c| {
            c.stop != StopReason::Infeasible
                && !(c.stop == StopReason::CapacityCap && c.latency.is_none())
        });
        curve_fleets.push(feasible.then_some(last));
        let cdf = plan
            .last()
            .and_then(|c| c.latency.as_ref())
            .map(|l| l.cdf.clone())
            .unwrap_or_default();
        out.push(TierPlan {
            index: ctx.tier_index,
            unit_throughput_rps: ctx.unit_throughput_rps,
            latency_curve: vec![],
            latency_cdf: cdf,
            years: plan,
            adjustments,
        });
    }
    // Every tier's curve at once: the tiers' points share the threads, instead of each tier
    // waiting for its slowest point before the next starts.
    out.par_iter_mut()
        .zip(contexts.par_iter().zip(curve_fleets.par_iter()))
        .for_each(|(plan, (ctx, fleet))| {
            if let Some(units) = *fleet {
                plan.latency_curve = latency_curve(ctx, units);
            }
        });
    Ok(out)
}

/// One planned tier-year and how its measurement was changed, if it was.
struct PlannedYear {
    year: CapacityYear,
    adjustment: Option<Adjustment>,
}

/// Plan one tier-year: search (or evaluate a fixed fleet), then derive the yearly fleet figures
/// the cost model needs. A tier that cannot meet the contract at any size, or whose utilization
/// bound is above `simulation.max_units`, is not simulated; nor is a year with too few requests
/// for the percentile, which is sized by the utilization bound.
fn plan_year(ctx: &TierContext<'_>, year: u32) -> Result<PlannedYear, SimError> {
    let s = ctx.scenario;
    let max_u = s.slo.max_utilization.value;
    let cap = ctx.max_units;
    let yt = s.traffic.year(year, s.simulation.window_s);
    let design = yt.design_rps;
    let analytic = units_for(design, ctx.unit_throughput_rps, max_u).max(1);
    let bound = utilization_bound(design, ctx.unit_throughput_rps, max_u);
    let mean = yt.mean_rps;
    let unsimulated =
        |units: u32, stop: StopReason, detail: Option<String>, utilization: f64| CapacityYear {
            year,
            peak_rps: yt.peak_rps,
            mean_rps: mean,
            units,
            analytic_units: analytic,
            stop,
            detail,
            latency: None,
            fleet: FleetYear {
                year,
                units,
                utilization,
                hourly_units: vec![],
                requests: super::served_requests(&yt, units as f64 * ctx.unit_throughput_rps),
            },
        };
    let infeasible = super::infeasibility(s, &ctx.tier.plan);
    if let (Some(why), None) = (&infeasible, ctx.tier.fixed_units) {
        return Ok(PlannedYear {
            year: unsimulated(analytic, StopReason::Infeasible, Some(why.clone()), 0.0),
            adjustment: None,
        });
    }
    if ctx.tier.fixed_units.is_none() && bound > cap as f64 {
        // Stop at once: no fleet within the cap carries the design traffic at the planned
        // utilization, so no simulation could change the answer.
        let detail = cap_detail(bound, cap, design, ctx.unit_throughput_rps, max_u);
        return Ok(PlannedYear {
            year: unsimulated(cap, StopReason::CapacityCap, Some(detail), 1.0),
            adjustment: None,
        });
    }
    let m = measurement(ctx, year, ctx.tier.fixed_units.unwrap_or(analytic));
    if m.falls_back() {
        return Ok(PlannedYear {
            year: analytic_year(ctx, &yt, analytic),
            adjustment: m.adjustment,
        });
    }
    let (stop, eval) = match ctx.tier.fixed_units {
        Some(n) => {
            let e = evaluate_with(ctx, year, n, &m)?;
            let stop = if e.meets(&s.slo) {
                StopReason::Fixed
            } else {
                StopReason::UnderProvisioned
            };
            (stop, e)
        }
        None => search_year_with(ctx, year, analytic, &m)?,
    };
    let units = eval.units;
    let r = &eval.report;
    let detail = match stop {
        StopReason::Met | StopReason::Fixed => None,
        StopReason::Infeasible => Some(format!(
            "the p{} of service time alone is {:.0} ms at {units} units, above the bound",
            s.slo.percentile,
            eval.service_slo_s * 1e3
        )),
        StopReason::UnderProvisioned => Some(format!(
            "{units} units give p{} = {:.0} ms{}",
            s.slo.percentile,
            eval.slo_s * 1e3,
            if r.unstable {
                " and cannot keep up with the traffic"
            } else {
                ""
            }
        )),
        StopReason::CapacityCap | StopReason::Unstable if r.unstable => Some(format!(
            "{units} units (simulation.max_units) cannot keep up with {design:.0} req/s: their roofline capacity is {:.0} req/s",
            units as f64 * ctx.unit_throughput_rps
        )),
        StopReason::CapacityCap | StopReason::Unstable => Some(format!(
            "{units} units (simulation.max_units) give p{} = {:.0} ms",
            s.slo.percentile,
            eval.slo_s * 1e3
        )),
    };
    // Yearly mean utilization: the simulated busy fraction at the design rate, scaled to the
    // year's mean rate.
    let utilization = if design > 0.0 {
        (r.utilization.mean_utilization * mean / design).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let hourly = if ctx.tier.fixed_units.is_some() {
        vec![]
    } else {
        hourly_units(
            &yt.hourly_rps,
            design / units as f64,
            ctx.unit_throughput_rps,
            max_u,
            ctx.tier.autoscale_interval_h as usize,
        )
    };
    Ok(PlannedYear {
        year: CapacityYear {
            year,
            peak_rps: yt.peak_rps,
            mean_rps: mean,
            units,
            analytic_units: analytic,
            stop,
            detail,
            // A run stopped before any measured request finished has no latency to show.
            latency: (r.counts.completed > 0).then(|| LatencyAtPlan {
                p50_s: r.latency.p50.value_s,
                p95_s: r.latency.p95.value_s,
                p99_s: r.latency.p99.value_s,
                slo_percentile_s: eval.slo_s,
                slo_ci95_s: eval.slo_ci95_s,
                utilization: r.utilization.mean_utilization,
                ttft_s: eval.ttft_s,
                tpot_s: eval.tpot_s,
                ttft_ci95_s: eval.ttft_ci95_s,
                tpot_ci95_s: eval.tpot_ci95_s,
                little_relative_error: r.little.relative_error,
                llm: r.llm,
                prefix_hit_rate: r.prefix_cache.map(|p| p.hit_rate),
                cdf: r
                    .latency_cdf
                    .iter()
                    .map(|p| (p.latency_s, p.quantile))
                    .collect(),
            }),
            fleet: FleetYear {
                year,
                units,
                utilization,
                hourly_units: hourly,
                requests: super::served_requests(&yt, units as f64 * ctx.unit_throughput_rps),
            },
        },
        adjustment: m.adjustment,
    })
}

/// A tier-year with too few requests for its percentile, sized without simulation: the
/// utilization bound (a lone request on an idle unit already meets the contract, so at this
/// traffic queueing adds next to nothing), or the fixed fleet if the scenario sets one.
fn analytic_year(ctx: &TierContext<'_>, yt: &YearTraffic, analytic: u32) -> CapacityYear {
    let s = ctx.scenario;
    let (year, mean) = (yt.year, yt.mean_rps);
    let max_u = s.slo.max_utilization.value;
    let (units, stop, detail, hourly) = match ctx.tier.fixed_units {
        Some(n) if n >= analytic => (n, StopReason::Fixed, None, vec![]),
        Some(n) => (
            n,
            StopReason::UnderProvisioned,
            Some(format!(
                "{n} units are below the utilization bound of {analytic} units"
            )),
            vec![],
        ),
        None => (
            analytic,
            StopReason::Met,
            None,
            hourly_units(
                &yt.hourly_rps,
                0.0,
                ctx.unit_throughput_rps,
                max_u,
                ctx.tier.autoscale_interval_h as usize,
            ),
        ),
    };
    let capacity = units as f64 * ctx.unit_throughput_rps;
    CapacityYear {
        year,
        peak_rps: yt.peak_rps,
        mean_rps: mean,
        units,
        analytic_units: analytic,
        stop,
        detail,
        latency: None,
        fleet: FleetYear {
            year,
            units,
            utilization: if capacity > 0.0 {
                (mean / capacity).clamp(0.0, 1.0)
            } else {
                0.0
            },
            hourly_units: hourly,
            requests: super::served_requests(yt, units as f64 * ctx.unit_throughput_rps),
        },
    }
}

/// One fleet size of one tier, simulated on one year's design traffic (a row of
/// `tco-sim simulate`).
#[derive(Debug, Clone, Serialize)]
pub struct SizeRun {
    pub tier: String,
    pub units: u32,
    pub year: u32,
    pub design_rps: f64,
    pub meets_slo: bool,
    /// Closed-loop runs (`simulate --concurrency`): requests in flight and the think time; the
    /// design traffic is then not used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closed_loop: Option<sim::ClosedLoop>,
    pub report: SimReport,
    /// Per replication, the measured requests served, when the sweep was asked to record them
    /// (`simulate --requests-csv`); empty otherwise.
    #[serde(skip)]
    pub requests: Vec<Vec<sim::Completion>>,
}

/// Every tier simulated over a range of fleet sizes on one year's design traffic.
#[derive(Debug, Clone)]
pub struct SizeSweep {
    pub year: u32,
    /// Mean rate of the year's design window \[req/s\].
    pub design_rps: f64,
    /// In tier order, then size order.
    pub runs: Vec<SizeRun>,
    /// Tiers not simulated because no fleet size can meet the contract, with the reason.
    pub skipped: Vec<String>,
    /// Set for a closed-loop sweep ([`sweep_closed`]): its clients and think time.
    pub closed_loop: Option<sim::ClosedLoop>,
}

/// Why a tier is left out of a size sweep — no fleet size can meet the contract — as the
/// sweep's skipped line; `None` when it can be simulated.
fn not_simulated(s: &Scenario, tier: &Tier) -> Option<String> {
    let why = super::infeasibility(s, &tier.plan)?;
    Some(format!(
        "{}: no fleet size meets {}: {why}",
        tier.name,
        s.slo.label()
    ))
}

/// Simulate each tier of `scenario` at the fleet sizes `units` (default: six sizes from the
/// smallest fleet that can carry the design traffic at all) on the design traffic of `year`.
/// Sizes run in parallel; `tick(done, total)` is called as each finishes.
pub fn sweep_sizes(
    scenario: &Scenario,
    year: u32,
    units: &[u32],
    tick: &(dyn Fn(usize, usize) + Sync),
) -> Result<SizeSweep, SimError> {
    sweep_sizes_with(scenario, year, units, tick, false)
}

/// [`sweep_sizes`], and with `record` each run's measured requests in [`SizeRun::requests`].
pub fn sweep_sizes_with(
    scenario: &Scenario,
    year: u32,
    units: &[u32],
    tick: &(dyn Fn(usize, usize) + Sync),
    record: bool,
) -> Result<SizeSweep, SimError> {
    let s = scenario;
    let design = s
        .traffic
        .design_window(year, s.simulation.window_s)
        .mean_rps;
    // Every (tier, size) to simulate, decided before any work so the bar knows its length.
    let mut jobs: Vec<(usize, u32)> = Vec::new();
    let mut contexts = Vec::new();
    let mut skipped = Vec::new();
    for (i, tier) in s.tiers.iter().enumerate() {
        if let Some(why) = not_simulated(s, tier) {
            skipped.push(why);
            continue;
        }
        let ctx = TierContext::new(s, i, s.simulation.replications);
        let sizes: Vec<u32> = if units.is_empty() {
            let first = units_for(design, ctx.unit_throughput_rps, 1.0).max(1);
            (first..first + 6).collect()
        } else {
            units.iter().copied().filter(|&u| u > 0).collect()
        };
        // One measurement per tier (at its smallest size), so every size sees the same window.
        let m = measurement(&ctx, year, sizes.iter().copied().min().unwrap_or(1));
        jobs.extend(sizes.iter().map(|&u| (contexts.len(), u)));
        contexts.push((ctx, m));
    }
    let done = AtomicUsize::new(0);
    let runs = jobs
        .par_iter()
        .map(|&(c, units)| {
            let (ctx, m) = &contexts[c];
            let (e, requests) = evaluate_recorded(ctx, year, units, m, record)?;
            tick(done.fetch_add(1, Ordering::Relaxed) + 1, jobs.len());
            Ok(SizeRun {
                tier: ctx.tier.name.clone(),
                units,
                year,
                design_rps: design,
                meets_slo: e.meets(&s.slo),
                closed_loop: None,
                report: e.report,
                requests,
            })
        })
        .collect::<Result<_, SimError>>()?;
    Ok(SizeSweep {
        year,
        design_rps: design,
        runs,
        skipped,
        closed_loop: None,
    })
}

/// Requests of a closed-loop run, in the order they are sent: token counts drawn as for the
/// design traffic (stream `SIZES`), arrival times left for the engine to set.
fn closed_requests<'a>(
    scenario: &'a Scenario,
    seed: u64,
    replication: u64,
) -> impl Iterator<Item = Request> + 'a {
    let mut sizes = Sizes::new(&scenario.workload, seed, replication);
    std::iter::repeat(Request::default()).map(move |r| match sizes.as_mut() {
        Some(s) => s.fill(r),
        None => r,
    })
}

/// Simulate each tier of `scenario` at the fleet sizes `units` under closed-loop load:
/// `clients` requests in flight with `think` between a response and the next request, for
/// `simulation.window_s` seconds (the first `simulation.warmup_s` not measured), at most
/// [`MAX_ARRIVALS_PER_EVALUATION`] requests over all replications. `meets_slo` judges the
/// result against the scenario's contract as an open-loop run would be.
pub fn sweep_closed(
    scenario: &Scenario,
    units: &[u32],
    clients: u32,
    think: sim::ThinkTime,
    tick: &(dyn Fn(usize, usize) + Sync),
) -> Result<SizeSweep, SimError> {
    sweep_closed_with(scenario, units, clients, think, tick, false)
}

/// [`sweep_closed`], and with `record` each run's measured requests in [`SizeRun::requests`].
pub fn sweep_closed_with(
    scenario: &Scenario,
    units: &[u32],
    clients: u32,
    think: sim::ThinkTime,
    tick: &(dyn Fn(usize, usize) + Sync),
    record: bool,
) -> Result<SizeSweep, SimError> {
    let s = scenario;
    let mut jobs: Vec<(usize, u32)> = Vec::new();
    let mut contexts = Vec::new();
    let mut skipped = Vec::new();
    for (i, tier) in s.tiers.iter().enumerate() {
        if let Some(why) = not_simulated(s, tier) {
            skipped.push(why);
            continue;
        }
        let ctx = TierContext::new(s, i, s.simulation.replications);
        jobs.extend(
            units
                .iter()
                .filter(|&&u| u > 0)
                .map(|&u| (contexts.len(), u)),
        );
        contexts.push(ctx);
    }
    let reps = s.simulation.replications.max(1);
    let closed = sim::ClosedLoop {
        clients,
        think,
        duration_s: s.simulation.window_s,
        max_requests: (MAX_ARRIVALS_PER_EVALUATION / f64::from(reps)) as u64,
    };
    let done = AtomicUsize::new(0);
    let runs = jobs
        .par_iter()
        .map(|&(c, units)| {
            let ctx = &contexts[c];
            let seed = tier_year_seed(s.seed, ctx.tier_index, 0);
            let fleet = FleetSpec {
                units,
                server: ctx.server.clone(),
                dispatch: ctx.dispatch,
                queue_cap: None,
                timeout_s: None,
            };
            let run = RunSpec {
                warmup_s: s.simulation.warmup_s,
                replications: reps,
                seed,
                quantiles: vec![s.slo.percentile / 100.0],
            };
            let requests = |rep| closed_requests(s, seed, rep);
            let (report, requests) = if record {
                sim::simulate_closed_recorded(&fleet, &run, &closed, requests)?
            } else {
                (
                    sim::simulate_closed(&fleet, &run, &closed, requests)?,
                    Vec::new(),
                )
            };
            let at = |l: &sim::LatencyStats| l.extra.first().map(|(_, e)| e.value_s);
            let e = Evaluation {
                units,
                slo_s: at(&report.latency).unwrap_or(f64::INFINITY),
                slo_ci95_s: None,
                service_slo_s: at(&report.service).unwrap_or(f64::INFINITY),
                ttft_s: report.ttft.as_ref().and_then(at),
                tpot_s: report.tpot.as_ref().and_then(at),
                ttft_ci95_s: None,
                tpot_ci95_s: None,
                report,
            };
            tick(done.fetch_add(1, Ordering::Relaxed) + 1, jobs.len());
            Ok(SizeRun {
                tier: ctx.tier.name.clone(),
                units,
                year: 1,
                design_rps: 0.0,
                meets_slo: e.meets(&s.slo),
                closed_loop: Some(closed.clone()),
                report: e.report,
                requests,
            })
        })
        .collect::<Result<_, SimError>>()?;
    Ok(SizeSweep {
        year: 1,
        design_rps: 0.0,
        runs,
        skipped,
        closed_loop: Some(closed),
    })
}
