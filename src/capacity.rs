//! The capacity plan: how many units of a tier each year of the horizon needs to carry the
//! traffic within the latency contract.
//!
//! The analytic estimate is the utilization bound of `DESIGN.md`:
//! `units = ceil(design rate / (throughput per unit × max utilization))`, with the throughput of
//! one unit from the roofline at full batch (`perf`) and the design rate the mean rate of the
//! design window (the busiest stretch of the year, `simulation.window_s` long). It is a lower
//! bound on what the simulated plan needs, and is always shown beside it.
//!
//! Stage 5 of the pipeline: it reads the validated [`Scenario`] (with each tier's service plan)
//! and the simulator, and produces what the cost stage consumes — a [`TierPlan`] per tier with a
//! [`CapacityYear`] (and its [`FleetYear`]) per year.

pub mod search;

use serde::Serialize;

use crate::perf::ServicePlan;
use crate::scenario::{Scenario, Tier};

/// Why the search for a fleet size stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// The fleet meets the SLO (or, analytically, the utilization bound).
    Met,
    /// The scenario fixes the fleet size.
    Fixed,
    /// A fixed fleet is too small for the peak traffic.
    UnderProvisioned,
    /// Even an idle unit serves a lone request slower than the SLO bound.
    Infeasible,
    /// The search reached `simulation.max_units` without meeting the SLO.
    CapacityCap,
    /// The simulated fleet could not keep up with the traffic (queue grew without bound).
    Unstable,
}

impl StopReason {
    /// Whether a fleet stopped for this reason meets the contract.
    pub fn meets_slo(self) -> bool {
        matches!(self, StopReason::Met | StopReason::Fixed)
    }
}

/// Tail latency of the planned fleet in one year (from the simulator).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyAtPlan {
    pub p50_s: f64,
    pub p95_s: f64,
    pub p99_s: f64,
    /// The SLO percentile's value and its 95 % confidence half-width.
    pub slo_percentile_s: f64,
    pub slo_ci95_s: Option<f64>,
    /// Mean busy fraction of the fleet over the design window.
    pub utilization: f64,
    /// Generative workloads: time to first token and time per output token at the SLO
    /// percentile \[s\].
    pub ttft_s: Option<f64>,
    pub tpot_s: Option<f64>,
    /// Half-widths of the 95 % confidence intervals of `ttft_s` and `tpot_s`, from the spread
    /// between replications as for `slo_ci95_s` \[s\]; `None` without one (a single replication,
    /// or not a generative workload).
    pub ttft_ci95_s: Option<f64>,
    pub tpot_ci95_s: Option<f64>,
    /// |L − λW| / λW of the design run (Little's law, checked on every run).
    pub little_relative_error: f64,
    /// Generative workloads: tokens per second, KV-cache utilization and preemptions of the
    /// design run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm: Option<crate::sim::LlmStats>,
    /// Prefix caching on: the fraction of the design run's prompt tokens whose prefill a
    /// replica's prefix cache skipped ([`crate::sim::PrefixCacheStats::hit_rate`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix_hit_rate: Option<f64>,
    /// The latency CDF of the design run as (latency \[s\], quantile).
    #[serde(skip)]
    pub cdf: Vec<(f64, f64)>,
}

/// The plan of one tier for one year.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CapacityYear {
    pub year: u32,
    pub peak_rps: f64,
    pub mean_rps: f64,
    /// Units planned.
    pub units: u32,
    /// The utilization-bound lower estimate.
    pub analytic_units: u32,
    pub stop: StopReason,
    /// Why the search stopped where it did, in numbers, when it did not simply meet the SLO.
    pub detail: Option<String>,
    /// Tail latency at the planned fleet, when simulated.
    pub latency: Option<LatencyAtPlan>,
    #[serde(skip)]
    pub fleet: FleetYear,
}

/// What a tier needs in one year: the capacity plan's hand-over to the cost model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FleetYear {
    pub year: u32,
    /// Units needed at the design peak.
    pub units: u32,
    /// Mean utilization of those units over the year, in [0, 1].
    pub utilization: f64,
    /// Units needed hour by hour (8,760 values) when the fleet can follow the traffic
    /// (cloud autoscaling); empty means the full fleet runs all year.
    #[serde(skip)]
    pub hourly_units: Vec<u32>,
    /// Requests served in the year.
    pub requests: f64,
}

impl FleetYear {
    /// Instance-hours an autoscaled fleet runs in the year.
    pub fn instance_hours(&self) -> f64 {
        if self.hourly_units.is_empty() {
            self.units as f64 * crate::units::HOURS_PER_YEAR
        } else {
            self.hourly_units.iter().map(|&u| u as f64).sum()
        }
    }
}

/// Requests a fleet of `capacity_rps` (its roofline throughput) serves in a year of `traffic`:
/// hour by hour, the offered rate or the capacity, whichever is lower. Every plan — analytic or
/// simulated — counts served requests this one way, so the same fleet has the same cost per
/// million either way. Equal to the offered requests when no hour exceeds the capacity.
pub fn served_requests(traffic: &crate::traffic::YearTraffic, capacity_rps: f64) -> f64 {
    let offered = traffic.requests;
    let rates = &traffic.hourly_rps;
    let offered_h: f64 = rates.iter().sum();
    if offered_h <= 0.0 || rates.iter().all(|&r| r <= capacity_rps) {
        return offered;
    }
    let served_h: f64 = rates.iter().map(|&r| r.min(capacity_rps)).sum();
    offered * (served_h / offered_h)
}

/// One point of a latency-against-load curve.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadPoint {
    pub offered_rps: f64,
    pub utilization: f64,
    pub p50_s: f64,
    pub p95_s: f64,
    pub p99_s: f64,
    /// Generative workloads: time to first token and time per output token at the SLO
    /// percentile \[s\] (the contracted metrics, when the contract bounds them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttft_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tpot_s: Option<f64>,
}

/// A change the capacity stage made to how a tier-year was measured, so that every evaluation is
/// bounded in work and measures enough requests for its percentile. `results` turns each into a
/// note that says what was done.
#[derive(Debug, Clone, PartialEq)]
pub enum Adjustment {
    /// The design traffic held more arrivals than [`search::MAX_ARRIVALS_PER_EVALUATION`]
    /// (or, under join-shortest-queue, more dispatch work than
    /// [`search::MAX_DISPATCH_SCANS_PER_EVALUATION`]), so each fleet size was simulated on the
    /// busiest `to_s` seconds instead of `from_s`, with the warm-up cut in proportion.
    WindowShortened {
        year: u32,
        from_s: f64,
        to_s: f64,
        /// Arrivals the full window would have held over all replications.
        arrivals: f64,
    },
    /// The design window held too few requests for the percentile, so more replications (more
    /// simulated time at the same design rate) were run.
    ReplicationsRaised {
        year: u32,
        from: u32,
        to: u32,
        /// Completions the percentile needs ([`completions_needed`]).
        needed: f64,
    },
    /// Too few requests for the percentile even with the most replications allowed: the fleet is
    /// the utilization bound, and a lone request on an idle unit already meets the contract
    /// ([`infeasibility`] found nothing), so at this traffic queueing adds next to nothing.
    AnalyticFallback {
        year: u32,
        /// Completions the simulation would measure at the scenario's replications.
        expected: f64,
        needed: f64,
    },
}

impl Adjustment {
    /// The year of the horizon it applies to.
    pub fn year(&self) -> u32 {
        match self {
            Adjustment::WindowShortened { year, .. }
            | Adjustment::ReplicationsRaised { year, .. }
            | Adjustment::AnalyticFallback { year, .. } => *year,
        }
    }
}

/// Completions a simulated percentile needs to mean something: ten beyond it,
/// `10 / (1 − p/100)` (1,000 for p99, 10,000 for p99.9). With fewer, the percentile is set by a
/// handful of requests, and with none at all it reads as 0 ms.
pub fn completions_needed(percentile: f64) -> f64 {
    10.0 / (1.0 - percentile / 100.0).max(1e-9)
}

/// The plan of one tier over the horizon: what the capacity stage hands to `results`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TierPlan {
    /// Position of the tier in [`Scenario::tiers`].
    pub index: usize,
    /// Requests per second one unit sustains at full load (roofline).
    pub unit_throughput_rps: f64,
    /// Tail latency against offered load at the last year's fleet; empty for analytic plans.
    pub latency_curve: Vec<LoadPoint>,
    /// Latency distribution at the last year's fleet as (latency \[s\], quantile); empty for
    /// analytic plans.
    pub latency_cdf: Vec<(f64, f64)>,
    /// One entry per year of the horizon.
    pub years: Vec<CapacityYear>,
    /// How the measurement of some years was changed to bound its work or to measure enough
    /// requests, in year order.
    pub adjustments: Vec<Adjustment>,
}

/// Why no fleet size can meet the contract, if a request alone on an idle unit already breaks a
/// bound: the service time is a floor that queueing only adds to. Checked before simulating.
pub fn infeasibility(scenario: &Scenario, plan: &ServicePlan) -> Option<String> {
    let slo = &scenario.slo;
    let pct = format!("p{}", slo.percentile);
    let ms = crate::format::duration;
    let over = |what: &str, took: f64, bound: Option<f64>| {
        bound.filter(|b| took > *b).map(|b| {
            format!(
                "{what} alone takes {}, above the {pct} bound of {}",
                ms(took),
                ms(b)
            )
        })
    };
    match (plan, &scenario.workload) {
        (ServicePlan::Classic(p), _) => over("a request", p.lone_request_s(), slo.latency_s),
        (
            ServicePlan::Generative(g),
            crate::workload::Workload::Generative {
                prompt_tokens,
                output_tokens,
                ..
            },
        ) => {
            let (prompt, output) = (prompt_tokens.mean(), output_tokens.mean().max(1.0));
            over(
                "a mean-sized request",
                g.lone_request_s(prompt, output),
                slo.latency_s,
            )
            .or_else(|| {
                over(
                    "the first token of a mean-sized prompt",
                    g.lone_ttft_s(prompt),
                    slo.ttft_s,
                )
            })
            .or_else(|| {
                over(
                    "one decode step",
                    g.lone_tpot_s(prompt + output / 2.0),
                    slo.tpot_s,
                )
            })
        }
        (ServicePlan::Generative(_), _) => None,
    }
}

/// The utilization bound as a real number of units, `ceil(rate / (throughput × max
/// utilization))`, before any conversion to a count: it may exceed every fleet the simulator
/// plays (or be infinite for a unit that serves nothing), which the caller compares with
/// `simulation.max_units` rather than letting a `u32` saturate.
pub fn utilization_bound(rate: f64, throughput_per_unit: f64, max_utilization: f64) -> f64 {
    if rate <= 0.0 {
        return 0.0;
    }
    let n = (rate / (throughput_per_unit * max_utilization)).ceil();
    if n.is_nan() {
        f64::INFINITY
    } else {
        n.max(1.0)
    }
}

/// Why a tier-year stops at `simulation.max_units` without simulating: its utilization bound
/// alone is above the cap.
pub fn cap_detail(bound: f64, cap: u32, design_rps: f64, throughput: f64, max_u: f64) -> String {
    let units = if bound.is_finite() {
        crate::format::plain(bound)
    } else {
        "unboundedly many".into()
    };
    format!(
        "the utilization bound needs {units} units ({} at {} per unit and at most {} % busy), above simulation.max_units = {cap}: {cap} units cannot keep up at that utilization, so nothing was simulated",
        crate::format::rps(design_rps),
        crate::format::rps(throughput),
        crate::format::plain(max_u * 100.0),
        cap = crate::format::count(cap)
    )
}

/// Units the utilization bound requires for `rate` \[req/s\].
pub fn units_for(rate: f64, throughput_per_unit: f64, max_utilization: f64) -> u32 {
    if rate <= 0.0 {
        return 0;
    }
    let n = (rate / (throughput_per_unit * max_utilization)).ceil();
    if n.is_finite() {
        n.max(1.0).min(u32::MAX as f64) as u32
    } else {
        u32::MAX
    }
}

/// Units an autoscaled cloud fleet runs each hour: the planned fleet's per-unit rate at the SLO
/// applied to each hour's traffic (none when `per_unit_rps_at_slo` ≤ 0, as in the analytic
/// plan), never below the utilization bound or one unit, then held at the busiest hour of each
/// `interval_h`-hour block (the scale-up granularity).
pub fn hourly_units(
    rates: &[f64],
    per_unit_rps_at_slo: f64,
    unit_throughput_rps: f64,
    max_utilization: f64,
    interval_h: usize,
) -> Vec<u32> {
    let per_hour: Vec<u32> = rates
        .iter()
        .map(|&r| {
            let by_slo = if per_unit_rps_at_slo > 0.0 {
                (r / per_unit_rps_at_slo).ceil() as u32
            } else {
                1
            };
            by_slo
                .max(units_for(r, unit_throughput_rps, max_utilization))
                .max(1)
        })
        .collect();
    let step = interval_h.max(1);
    per_hour
        .chunks(step)
        .flat_map(|c| {
            let m = c.iter().copied().max().unwrap_or(1);
            std::iter::repeat_n(m, c.len())
        })
        .collect()
}

/// The analytic plan of every tier (the whole plan of an `--analytic` run, and the lower bound
/// of the simulated one).
pub fn analytic_tiers(scenario: &Scenario) -> Vec<TierPlan> {
    let traffic = scenario
        .traffic
        .years(scenario.horizon_years, scenario.simulation.window_s);
    scenario
        .tiers
        .iter()
        .enumerate()
        .map(|(index, tier)| TierPlan {
            index,
            unit_throughput_rps: tier.plan.unit_throughput_rps(&scenario.workload),
            years: analytic_plan(scenario, tier, &traffic),
            ..TierPlan::default()
        })
        .collect()
}

/// The analytic plan of a tier for every year of `traffic`, the scenario's traffic year by year
/// ([`TrafficSpec::years`](crate::traffic::TrafficSpec::years)).
pub fn analytic_plan(
    scenario: &Scenario,
    tier: &Tier,
    traffic: &[crate::traffic::YearTraffic],
) -> Vec<CapacityYear> {
    let throughput = tier.plan.unit_throughput_rps(&scenario.workload);
    let max_u = scenario.slo.max_utilization.value;
    let cap = scenario.simulation.max_units.max(1);
    let infeasible = infeasibility(scenario, &tier.plan);
    traffic
        .iter()
        .map(|yt| {
            let year = yt.year;
            let (peak, mean, design) = (yt.peak_rps, yt.mean_rps, yt.design_rps);
            let analytic = units_for(design, throughput, max_u).max(1);
            let bound = utilization_bound(design, throughput, max_u);
            let mut detail = infeasible.clone();
            let (units, stop, hourly) = match tier.fixed_units {
                Some(n) => {
                    let stop = if (n as f64) * throughput < design {
                        StopReason::UnderProvisioned
                    } else {
                        StopReason::Fixed
                    };
                    (n, stop, vec![])
                }
                None if infeasible.is_none() && bound > cap as f64 => {
                    // The analytic plan obeys the same cap as the simulated one, and a capped
                    // fleet never reads as met.
                    detail = Some(cap_detail(bound, cap, design, throughput, max_u));
                    (cap, StopReason::CapacityCap, vec![])
                }
                None => {
                    let stop = if infeasible.is_some() {
                        StopReason::Infeasible
                    } else {
                        StopReason::Met
                    };
                    // The cloud fleet follows the traffic hour by hour at the utilization bound.
                    let hourly = hourly_units(
                        &yt.hourly_rps,
                        0.0,
                        throughput,
                        max_u,
                        tier.autoscale_interval_h as usize,
                    );
                    (analytic, stop, hourly)
                }
            };
            let capacity = units as f64 * throughput;
            let requests = served_requests(yt, capacity);
            let served = requests / crate::units::YEAR_S;
            CapacityYear {
                year,
                peak_rps: peak,
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
                        (served / capacity).min(1.0)
                    } else {
                        0.0
                    },
                    hourly_units: hourly,
                    requests,
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hourly_units_follow_traffic_with_granularity() {
        // 100 req/s per unit at the SLO; the bound (1,000 req/s per unit at 80 %) never binds.
        let rates = [50.0, 150.0, 250.0, 90.0, 0.0, 410.0];
        assert_eq!(
            hourly_units(&rates, 100.0, 1000.0, 0.8, 1),
            vec![1, 2, 3, 1, 1, 5]
        );
        // Scaling only every 3 hours holds each block at its busiest hour.
        assert_eq!(
            hourly_units(&rates, 100.0, 1000.0, 0.8, 3),
            vec![3, 3, 3, 5, 5, 5]
        );
    }

    #[test]
    fn utilization_bound_in_units() {
        // 1,000 req/s on units of 300 req/s at 80 %: 1000 / 240 = 4.17 → 5.
        assert_eq!(units_for(1000.0, 300.0, 0.8), 5);
        assert_eq!(units_for(240.0, 300.0, 0.8), 1);
        assert_eq!(units_for(240.1, 300.0, 0.8), 2);
        assert_eq!(units_for(0.0, 300.0, 0.8), 0);
    }

    #[test]
    fn the_real_bound_does_not_saturate() {
        // 1e7 req/s on units of 300 req/s at 1e-300 busy: far past u32::MAX, kept as a real.
        let b = utilization_bound(1e7, 300.0, 1e-300);
        assert!(b > u32::MAX as f64, "{b}");
        assert_eq!(utilization_bound(1.0, 0.0, 0.7), f64::INFINITY);
        assert_eq!(utilization_bound(1000.0, 300.0, 0.8), 5.0);
        let d = cap_detail(4155.0, 1000, 2908.0, 700.0, 1e-6);
        assert!(
            d.contains("4,155 units") && d.contains("max_units = 1000"),
            "{d}"
        );
    }

    #[test]
    fn percentiles_need_ten_requests_beyond_them() {
        assert!((completions_needed(99.0) - 1000.0).abs() < 1e-6);
        assert!((completions_needed(50.0) - 20.0).abs() < 1e-9);
    }
}
