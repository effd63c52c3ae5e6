//! The capacity plan of one tier again, after a performance input changed, without simulating.
//!
//! With the analytic method the plan is recomputed exactly ([`capacity::analytic_plan`]: the
//! utilization bound is cheap). A simulated plan is scaled from the base plan instead, using the
//! latency-against-load curve the base run measured at its last year's fleet:
//!
//! ```text
//! σ        = T₀ / T₁                      service-time factor (T: a unit's roofline throughput)
//! x        = λ / (N · T₀)                 offered load of a fleet of N units at design rate λ
//! c(x)     = the curve's latency at load x (p99, p95 or p50: the SLO percentile's column),
//!            made non-decreasing and interpolated linearly
//! latency of N units, new inputs  ≈  v_y · σ · c(λ₁ / (N · T₁)) / c(x_y)
//! ```
//!
//! with `v_y` the latency the base plan measured in year y at its load `x_y` (each bound —
//! end-to-end, TTFT, TPOT — scaled the same way). Latency at load ρ with a service time σ times
//! longer behaves like σ × latency at load σ·ρ (a queue's latency is its service time times a
//! function of its load, exactly so for M/M/c and M/D/c); dividing by `c(x_y)` calibrates the
//! curve, measured at the last year's fleet, to each year's fleet. A fleet meets the contract
//! when `c(x) ≤ h · c(x_y) / σ`, `h` being the base plan's headroom (bound / measured, the
//! tightest bound); the planned fleet (the base `N_y`) meets it in a sample when its new load
//! `λ₁ / (N_y · T₁)` does. The re-planned fleet scales the base fleet's need by the capacity
//! the new inputs need:
//!
//! ```text
//! r  = (λ₁ / T₁ / x*₁) / (λ₀ / T₀ / x*₀),     x*ₛ = the highest load meeting the contract
//! N′ = min(N_y, ⌈(N_y − ½) · r⌉)               while the planned fleet still meets it
//!      max(N_y + 1, ⌈(N_y − ½) · r⌉, ⌈λ₁ / (T₁ x*₁)⌉)   once it does not
//! ```
//!
//! (the base search found N_y units meeting the contract and N_y − 1 not, so the base need is
//! taken as N_y − ½), never below the new utilization bound: at the base inputs it is the base
//! plan exactly, and the fleet changes by whole units only once the need moves past them. Years the base run did not simulate (too few requests for the
//! percentile) are sized by the utilization bound, as the base run sized them.

use crate::capacity::{self, CapacityYear, FleetYear, LoadPoint};
use crate::scenario::Scenario;
use crate::traffic::YearTraffic;

/// A tier's plan under changed inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Replanned {
    /// One per year; what the cost model reads.
    pub fleets: Vec<FleetYear>,
    /// Whether the re-planned fleet meets the contract every year (the tier can be recommended).
    pub eligible: bool,
    /// Whether the base plan's fleet still meets it every year.
    pub planned_meets: bool,
    /// The last year's peak rate \[req/s\] and a unit's roofline throughput \[req/s\], for
    /// the cost model's per-watt figures.
    pub peak_rps: f64,
    pub unit_throughput_rps: f64,
}

/// The base plan of a tier, as the base run left it.
#[derive(Debug, Clone, Copy)]
pub struct BasePlan<'a> {
    pub years: &'a [CapacityYear],
    pub latency_curve: &'a [LoadPoint],
    pub unit_throughput_rps: f64,
    /// Whether the base run simulated (else it used the utilization bound).
    pub simulated: bool,
    /// The base scenario's traffic, year by year.
    pub traffic: &'a [YearTraffic],
}

/// Re-plan tier `tier` of `s` (inputs changed, service plans rebuilt) from its base plan in the
/// base scenario `b`; `traffic` is `s`'s traffic year by year (the base's when unchanged).
pub fn replan(
    b: &Scenario,
    s: &Scenario,
    tier: usize,
    base: BasePlan<'_>,
    traffic: &[YearTraffic],
) -> Replanned {
    let t = &s.tiers[tier];
    let t1 = t.plan.unit_throughput_rps(&s.workload);
    let max_u = s.slo.max_utilization.value;
    let infeasible = capacity::infeasibility(s, &t.plan).is_some();
    let analytic = capacity::analytic_plan(s, t, traffic);
    let peak_rps = analytic.last().map_or(0.0, |c| c.peak_rps);
    let bound_met = |units: u32, design: f64| units as f64 * t1 * max_u >= design;
    let curve = Curve::new(
        base.latency_curve,
        base.years.last().map_or(1, |c| c.units),
        base.unit_throughput_rps,
        b.slo.percentile,
    );
    if !base.simulated || curve.is_none() {
        let eligible = analytic.iter().all(|c| c.stop.meets_slo());
        let planned_meets = !infeasible
            && base
                .years
                .iter()
                .zip(traffic)
                .all(|(c, yt)| bound_met(c.units, yt.design_rps));
        return Replanned {
            fleets: analytic.into_iter().map(|c| c.fleet).collect(),
            eligible,
            planned_meets,
            peak_rps,
            unit_throughput_rps: t1,
        };
    }
    let curve = curve.expect("checked above");
    let t0 = base.unit_throughput_rps;
    let sigma = if t1 > 0.0 { t0 / t1 } else { f64::INFINITY };
    let mut fleets = Vec::with_capacity(base.years.len());
    let mut eligible = !infeasible && t1 > 0.0;
    let mut planned_meets = eligible;
    for (((c, a), yt0), yt) in base
        .years
        .iter()
        .zip(&analytic)
        .zip(base.traffic)
        .zip(traffic)
    {
        let y = c.year;
        let design0 = yt0.design_rps;
        let design1 = yt.design_rps;
        let mean1 = yt.mean_rps;
        let Some(l) = c.latency.as_ref().filter(|_| design0 > 0.0 && c.units > 0) else {
            // Not simulated in the base run: the utilization bound, as the base run did.
            let (units, met) = match t.fixed_units {
                Some(n) => (n, n >= a.analytic_units),
                None => (a.analytic_units, !infeasible),
            };
            eligible &= met;
            planned_meets &= bound_met(c.units, design1) && !infeasible;
            let cap = units as f64 * t1;
            fleets.push(FleetYear {
                year: y,
                units,
                utilization: if cap > 0.0 {
                    (mean1 / cap).clamp(0.0, 1.0)
                } else {
                    0.0
                },
                hourly_units: match t.fixed_units {
                    Some(_) => vec![],
                    None => capacity::hourly_units(
                        &yt.hourly_rps,
                        0.0,
                        t1,
                        max_u,
                        t.autoscale_interval_h as usize,
                    ),
                },
                requests: capacity::served_requests(yt, cap),
            });
            continue;
        };
        let x_y = design0 / (c.units as f64 * t0);
        let c_y = curve.at(x_y).unwrap_or(curve.last_value());
        let headroom = [
            (b.slo.latency_s, Some(l.slo_percentile_s)),
            (b.slo.ttft_s, l.ttft_s),
            (b.slo.tpot_s, l.tpot_s),
        ]
        .iter()
        .filter_map(|(bound, v)| match (bound, v) {
            (Some(b), Some(v)) if *v > 0.0 => Some(b / v),
            _ => None,
        })
        .fold(f64::INFINITY, f64::min);
        let headroom = if headroom.is_finite() { headroom } else { 1.0 };
        let threshold = |sig: f64| headroom * c_y / sig;
        let meets_at = |n: u32| {
            let x = design1 / (n as f64 * t1);
            curve.at(x).is_some_and(|v| v <= threshold(sigma))
        };
        let still_meets = meets_at(c.units);
        planned_meets &= still_meets;
        let units = match t.fixed_units {
            Some(n) => {
                eligible &= meets_at(n);
                n
            }
            None => match (
                curve.highest_load_within(threshold(1.0)),
                curve.highest_load_within(threshold(sigma)),
            ) {
                (Some(x0), Some(x1)) if x1 > 0.0 => {
                    // The capacity needed relative to the base's; the base search found the
                    // fleet of N_y units meeting the contract and N_y − 1 not, so its need is
                    // taken as N_y − ½, and a fleet grows or shrinks by whole units only when
                    // the need moves past them.
                    let ratio = (design1 / t1 / x1) / (design0 / t0 / x0);
                    let need = ((c.units as f64 - 0.5) * ratio).ceil().max(1.0);
                    let cap = s.simulation.max_units.max(1) as f64;
                    let n = if still_meets {
                        need.min(c.units as f64)
                    } else {
                        let by_curve = (design1 / (t1 * x1)).ceil();
                        need.max(by_curve).max(c.units as f64 + 1.0)
                    };
                    if n > cap {
                        eligible = false;
                    }
                    (n.min(cap) as u32).max(a.analytic_units)
                }
                _ => {
                    eligible = false;
                    a.analytic_units
                }
            },
        };
        let busy = l.utilization * sigma * (design1 / design0) * c.units as f64 / units as f64;
        let utilization = if design1 > 0.0 {
            (busy * mean1 / design1).clamp(0.0, 1.0)
        } else {
            0.0
        };
        fleets.push(FleetYear {
            year: y,
            units,
            utilization,
            hourly_units: match t.fixed_units {
                Some(_) => vec![],
                None => capacity::hourly_units(
                    &yt.hourly_rps,
                    design1 / units as f64,
                    t1,
                    max_u,
                    t.autoscale_interval_h as usize,
                ),
            },
            requests: capacity::served_requests(yt, units as f64 * t1),
        });
    }
    Replanned {
        fleets,
        eligible,
        planned_meets,
        peak_rps,
        unit_throughput_rps: t1,
    }
}

/// The base run's latency curve against offered load (a fraction of the fleet's roofline
/// capacity), non-decreasing.
struct Curve {
    points: Vec<(f64, f64)>,
}

impl Curve {
    fn new(curve: &[LoadPoint], units: u32, throughput: f64, percentile: f64) -> Option<Curve> {
        let capacity = units as f64 * throughput;
        if curve.len() < 2 || capacity.is_nan() || capacity <= 0.0 {
            return None;
        }
        let mut top = 0.0f64;
        let points: Vec<(f64, f64)> = curve
            .iter()
            .map(|p| {
                let v = if percentile >= 99.0 {
                    p.p99_s
                } else if percentile >= 95.0 {
                    p.p95_s
                } else {
                    p.p50_s
                };
                top = top.max(v);
                (p.offered_rps / capacity, top)
            })
            .collect();
        (points
            .iter()
            .all(|&(x, v)| x.is_finite() && v.is_finite() && v > 0.0))
        .then_some(Curve { points })
    }

    fn last_value(&self) -> f64 {
        self.points.last().map_or(0.0, |p| p.1)
    }

    /// Latency at load `x`; `None` above the curve's last load (no measurement says the fleet
    /// keeps up there). Below the first load, the first point's latency.
    fn at(&self, x: f64) -> Option<f64> {
        let first = self.points[0];
        if x <= first.0 {
            return Some(first.1);
        }
        self.points.windows(2).find_map(|w| {
            let ((x0, v0), (x1, v1)) = (w[0], w[1]);
            (x <= x1).then(|| {
                if x1 > x0 {
                    v0 + (v1 - v0) * (x - x0) / (x1 - x0)
                } else {
                    v1
                }
            })
        })
    }

    /// The highest load whose latency is at most `v` (the curve's last load when all of it is);
    /// `None` when even the lightest load is above `v`.
    fn highest_load_within(&self, v: f64) -> Option<f64> {
        let first = self.points[0];
        if first.1 > v {
            return None;
        }
        for w in self.points.windows(2) {
            let ((x0, v0), (x1, v1)) = (w[0], w[1]);
            if v1 > v {
                return Some(if v1 > v0 {
                    x0 + (x1 - x0) * (v - v0) / (v1 - v0)
                } else {
                    x0
                });
            }
        }
        self.points.last().map(|p| p.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(offered_rps: f64, p99_s: f64) -> LoadPoint {
        LoadPoint {
            offered_rps,
            utilization: 0.0,
            p50_s: p99_s / 2.0,
            p95_s: p99_s / 1.5,
            p99_s,
            ttft_s: None,
            tpot_s: None,
        }
    }

    #[test]
    fn the_curve_interpolates_and_inverts() {
        // 10 units of 10 req/s: load = offered / 100.
        let pts = [point(10.0, 1.0), point(50.0, 2.0), point(90.0, 10.0)];
        let c = Curve::new(&pts, 10, 10.0, 99.0).unwrap();
        assert_eq!(c.at(0.05), Some(1.0));
        assert!((c.at(0.3).unwrap() - 1.5).abs() < 1e-12);
        assert_eq!(c.at(0.95), None);
        assert!((c.highest_load_within(1.5).unwrap() - 0.3).abs() < 1e-12);
        assert_eq!(c.highest_load_within(0.5), None);
        assert_eq!(c.highest_load_within(20.0), Some(0.9));
    }
}
