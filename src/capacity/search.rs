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
use rand_distr::{Distribution, LogNormal};
use rayon::prelude::*;
use serde::Serialize;

use super::{
    CapacityYear, FleetYear, LatencyAtPlan, LoadPoint, StopReason, TierPlan, hourly_units,
    units_for,
};
use crate::perf::ServicePlan;
use crate::rng;
use crate::scenario::{Scenario, Tier};
use crate::sim::{
    self, Dispatch, FleetSpec, IterationCost, RunSpec, ServerModel, SimError, SimReport,
};
use crate::traffic::Request;
use crate::workload::{TokenCount, Workload};

/// The simulator's model of one unit of a tier, from its service plan.
pub fn server_model(plan: &ServicePlan) -> ServerModel {
    match plan {
        ServicePlan::Classic(p) if p.kind == crate::hardware::UnitKind::Cpu => {
            ServerModel::SharedBandwidth {
                chips: p.slots / p.cores_per_chip.max(1),
                cores_per_chip: p.cores_per_chip,
                time_at_busy_s: p.time_at_busy_s.clone(),
            }
        }
        ServicePlan::Classic(p) => ServerModel::Batching {
            devices: p.slots,
            max_batch: p.batching.max_batch,
            window_s: p.batching.window_s,
            batch_time_s: p.batch_time_s.clone(),
        },
        ServicePlan::Generative(p) => ServerModel::ContinuousBatching {
            replicas: p.replicas_per_unit,
            max_batch: p.max_batch,
            kv_capacity_tokens: p.kv_capacity_tokens,
            cost: IterationCost {
                fixed_s: p.fixed_s,
                prefill_s_per_token: p.prefill_s_per_token,
                decode_compute_s_per_seq: p.decode_compute_s_per_seq,
                weight_read_s: p.weight_read_s,
                kv_read_s_per_token: p.kv_read_s_per_token,
            },
        },
    }
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
        TierContext {
            scenario,
            tier,
            tier_index,
            server: server_model(&tier.plan),
            unit_throughput_rps: tier.plan.unit_throughput_rps(&scenario.workload),
            replications,
            dispatch: scenario.simulation.dispatch,
        }
    }
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
}

fn draw(c: &TokenCount, rng: &mut rand::rngs::Xoshiro256PlusPlus) -> u32 {
    match c {
        TokenCount::Fixed { tokens } => (*tokens).max(1),
        TokenCount::LogNormal { mean, cv, max } => {
            // A lognormal with this mean and CV: σ² = ln(1 + cv²), μ = ln(mean) − σ²/2.
            let s2 = (1.0 + cv * cv).ln();
            match LogNormal::new(mean.ln() - s2 / 2.0, s2.sqrt()) {
                Ok(d) => (d.sample(rng).round() as u32).clamp(1, *max),
                Err(_) => mean.round() as u32,
            }
        }
    }
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
            }),
            Workload::Classic { .. } => None,
        }
    }

    fn fill(&mut self, mut r: Request) -> Request {
        let has_own = r.input_tokens > 0 || r.output_tokens > 0;
        if !(self.from_trace && has_own) {
            r.input_tokens = draw(&self.prompt, &mut self.rng);
            r.output_tokens = draw(&self.output, &mut self.rng);
        }
        r
    }
}

/// The design arrivals of `year` for one replication, with request sizes where the workload
/// needs them.
pub fn design_arrivals<'a>(
    scenario: &'a Scenario,
    year: u32,
    seed: u64,
    replication: u64,
) -> impl Iterator<Item = Request> + 'a {
    let mut sizes = Sizes::new(&scenario.workload, seed, replication);
    scenario
        .traffic
        .design_arrivals(year, scenario.simulation.window_s, seed, replication)
        .map(move |r| match sizes.as_mut() {
            Some(s) => s.fill(r),
            None => r,
        })
}

/// Simulate `units` units of the tier on the design traffic of `year`.
pub fn evaluate(ctx: &TierContext<'_>, year: u32, units: u32) -> Result<Evaluation, SimError> {
    let s = ctx.scenario;
    let seed = tier_year_seed(s.seed, ctx.tier_index, year);
    let fleet = FleetSpec {
        units: units.max(1),
        server: ctx.server.clone(),
        dispatch: ctx.dispatch,
        queue_cap: None,
        timeout_s: None,
    };
    let run = RunSpec {
        warmup_s: s.simulation.warmup_s,
        replications: ctx.replications,
        seed,
        quantiles: vec![s.slo.percentile / 100.0],
    };
    let report = sim::simulate(&fleet, &run, |rep| design_arrivals(s, year, seed, rep))?;
    let at = |l: &sim::LatencyStats| l.extra.first().map(|(_, e)| *e);
    let slo = at(&report.latency);
    let service = at(&report.service);
    Ok(Evaluation {
        units: fleet.units,
        slo_s: slo.map_or(f64::INFINITY, |e| e.value_s),
        slo_ci95_s: slo.and_then(|e| e.ci95_half_width_s),
        service_slo_s: service.map_or(f64::INFINITY, |e| e.value_s),
        ttft_s: report.ttft.as_ref().and_then(at).map(|e| e.value_s),
        tpot_s: report.tpot.as_ref().and_then(at).map(|e| e.value_s),
        report,
    })
}

/// The smallest fleet meeting the SLO in `year`, and why the search stopped.
pub fn search_year(
    ctx: &TierContext<'_>,
    year: u32,
    lower_bound: u32,
) -> Result<(StopReason, Evaluation), SimError> {
    let slo = &ctx.scenario.slo;
    // The cap is the scenario's: a bound above it is reported, not silently exceeded.
    let cap = ctx.scenario.simulation.max_units.max(1);
    let mut n = lower_bound.clamp(1, cap);
    let mut failed_below: Option<u32> = None;
    let mut best: Evaluation;
    // Grow until the SLO is met.
    loop {
        let e = evaluate(ctx, year, n)?;
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
        failed_below = Some(n);
        n = (n + (n / 2).max(1)).min(cap);
    }
    // Bisect between the largest size that failed and the smallest that met.
    if let Some(mut lo) = failed_below {
        let mut hi = best.units;
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            let e = evaluate(ctx, year, mid)?;
            if e.meets(slo) {
                hi = mid;
                best = e;
            } else {
                lo = mid;
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
    let (prompt, output) = match &ctx.scenario.workload {
        Workload::Generative {
            prompt_tokens,
            output_tokens,
            ..
        } => (
            prompt_tokens.mean().round() as u32,
            output_tokens.mean().round().max(1.0) as u32,
        ),
        Workload::Classic { .. } => (0, 0),
    };
    let seed = tier_year_seed(ctx.scenario.seed, ctx.tier_index, 0);
    LOADS
        .iter()
        .filter_map(|&f| {
            let rate = f * capacity;
            // Enough requests for a steady p99 without dwarfing the plan itself.
            let count = 40_000u64;
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
                quantiles: vec![],
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
            })
        })
        .collect()
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
    let jobs: Vec<(usize, u32)> = (0..contexts.len())
        .flat_map(|t| (1..=scenario.horizon_years).map(move |y| (t, y)))
        .collect();
    let done = AtomicUsize::new(0);
    let total = jobs.len();
    let years: Vec<Result<CapacityYear, SimError>> = jobs
        .par_iter()
        .map(|&(t, y)| {
            let r = plan_year(&contexts[t], y);
            tick(done.fetch_add(1, Ordering::Relaxed) + 1, total);
            r
        })
        .collect();
    let mut out = Vec::new();
    let mut years = years.into_iter();
    for ctx in &contexts {
        let plan: Vec<CapacityYear> = (&mut years)
            .take(scenario.horizon_years as usize)
            .collect::<Result<_, _>>()?;
        let last = plan.last().map_or(1, |c| c.units);
        // No curve for a tier no fleet can serve: its fleet size is only the utilization bound.
        let feasible = plan.iter().all(|c| c.stop != StopReason::Infeasible);
        let curve = if feasible {
            latency_curve(ctx, last)
        } else {
            vec![]
        };
        let cdf = plan
            .last()
            .and_then(|c| c.latency.as_ref())
            .map(|l| l.cdf.clone())
            .unwrap_or_default();
        out.push(TierPlan {
            index: ctx.tier_index,
            unit_throughput_rps: ctx.unit_throughput_rps,
            latency_curve: curve,
            latency_cdf: cdf,
            years: plan,
        });
    }
    Ok(out)
}

/// Plan one tier-year: search (or evaluate a fixed fleet), then derive the yearly fleet figures
/// the cost model needs. A tier that cannot meet the contract at any size is not simulated.
fn plan_year(ctx: &TierContext<'_>, year: u32) -> Result<CapacityYear, SimError> {
    let s = ctx.scenario;
    let max_u = s.slo.max_utilization.value;
    let design = s
        .traffic
        .design_window(year, s.simulation.window_s)
        .mean_rps;
    let analytic = units_for(design, ctx.unit_throughput_rps, max_u).max(1);
    let mean = s.traffic.mean_rps(year);
    let infeasible = super::infeasibility(s, &ctx.tier.plan);
    if let (Some(why), None) = (&infeasible, ctx.tier.fixed_units) {
        return Ok(CapacityYear {
            year,
            peak_rps: s.traffic.peak_rps(year),
            mean_rps: mean,
            units: analytic,
            analytic_units: analytic,
            stop: StopReason::Infeasible,
            detail: Some(why.clone()),
            latency: None,
            fleet: FleetYear {
                year,
                units: analytic,
                utilization: 0.0,
                hourly_units: vec![],
                requests: s.traffic.requests_per_year(year),
            },
        });
    }
    let (stop, eval) = match ctx.tier.fixed_units {
        Some(n) => {
            let e = evaluate(ctx, year, n)?;
            let stop = if e.meets(&s.slo) {
                StopReason::Fixed
            } else {
                StopReason::UnderProvisioned
            };
            (stop, e)
        }
        None => search_year(ctx, year, analytic)?,
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
            &s.traffic.hourly_rates(year),
            design / units as f64,
            ctx.unit_throughput_rps,
            max_u,
            ctx.tier.autoscale_interval_h as usize,
        )
    };
    Ok(CapacityYear {
        year,
        peak_rps: s.traffic.peak_rps(year),
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
            little_relative_error: r.little.relative_error,
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
            requests: s.traffic.requests_per_year(year),
        },
    })
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
    pub report: SimReport,
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
        if let Some(why) = super::infeasibility(s, &tier.plan) {
            skipped.push(format!(
                "{}: no fleet size meets {}: {why}",
                tier.name,
                s.slo.label()
            ));
            continue;
        }
        let ctx = TierContext::new(s, i, s.simulation.replications);
        let sizes: Vec<u32> = if units.is_empty() {
            let first = units_for(design, ctx.unit_throughput_rps, 1.0).max(1);
            (first..first + 6).collect()
        } else {
            units.iter().copied().filter(|&u| u > 0).collect()
        };
        jobs.extend(sizes.iter().map(|&u| (contexts.len(), u)));
        contexts.push(ctx);
    }
    let done = AtomicUsize::new(0);
    let runs = jobs
        .par_iter()
        .map(|&(c, units)| {
            let ctx = &contexts[c];
            let e = evaluate(ctx, year, units)?;
            tick(done.fetch_add(1, Ordering::Relaxed) + 1, jobs.len());
            Ok(SizeRun {
                tier: ctx.tier.name.clone(),
                units,
                year,
                design_rps: design,
                meets_slo: e.meets(&s.slo),
                report: e.report,
            })
        })
        .collect::<Result<_, SimError>>()?;
    Ok(SizeSweep {
        year,
        design_rps: design,
        runs,
        skipped,
    })
}
