//! Break-even: each option's ranking figure as a straight line in hours per day of full use of
//! its planned fleet, the exact crossing of two such lines, and seed 004's simplified form.
//! Part of stage 6 (cost): it reads finished [`OptionCost`]s and the capacity plan's
//! [`FleetYear`]s; `results::break_even_table` pairs on-prem with every cloud option.
//!
//! Every line is in present-value dollars, on the ranking basis, and passes through the
//! option's net present cost at its actual operating point:
//!
//! ```text
//! h ∈ [0, 24]   hours per day of full use of the planned fleet;  m_y = mid_year_factor(r, y)
//! line(h)       = fixed + h · slope,   fixed = NPC − slope · h_actual,  so line(h_actual) = NPC
//! on-prem       slope    = Σ_y n_y · 365 · (P_max − P_idle) · PUE · $/kWh · m_y
//!                          (0 with an all-in hourly power price: it is paid around the clock)
//!               h_actual = 24 · Σ_y n_y m_y u_y / Σ_y n_y m_y
//!                          (n_y installed, u_y the year's load spread over them: the
//!                           energy-weighted mean utilization, as the dynamic energy is what scales)
//! on-demand     slope    = Σ_y U_y · 365 · $/h_od · m_y                 (U_y planned units)
//! reserved      slope    = 0                                    (the commitment is paid anyway)
//! hybrid        slope    = Σ_y max(0, U_y − base_y) · 365 · $/h_od · m_y   (the burst)
//! every cloud   h_actual = 24 · Σ_y m_y · IH_y / Σ_y m_y · U_y · 8760
//!                          (IH_y the instance-hours the tier's autoscaled fleet runs; a fixed
//!                           fleet runs 24 h/day)
//! ```
//!
//! Only hourly use scales with h. Everything else — egress and any per-request cost at the
//! actual traffic, licences, porting, network, the resale credit, reservations owed after the
//! horizon — is in `fixed`, because the line is built from the net present cost minus the part
//! that scales: a new cost line is picked up without a change here.
//!
//! Seed 004's simplified form, 24 h × on-prem ÷ cloud at 24 h/day, is kept on the seed's own
//! basis (nominal cash inside the horizon, egress excluded): it is what the references table
//! compares with the published 4.9 / 6.2 / 8.9 h/day. It is a break-even only against on-demand,
//! whose cost is proportional to the hours used.

use serde::Serialize;

use crate::capacity::FleetYear;
use crate::cost::inputs::CostInputs;
use crate::cost::{OptionCost, mid_year_factor, spread_utilization};
use crate::hardware::{DeploymentOption, Profile};
use crate::units::{DAY_HOURS, HOURS_PER_YEAR};

/// The exact break-even in hours of use per day between an on-prem fleet and a cloud option.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum ExactBreakEven {
    /// The two cost the same at this many hours per day; on-prem is cheaper above it
    /// (`on_prem_cheaper_above`) or below it.
    At {
        hours_per_day: f64,
        on_prem_cheaper_above: bool,
    },
    /// On-prem is cheaper at every daily use from 0 to 24 h.
    OnPremAlwaysCheaper,
    /// The cloud option is cheaper at every daily use from 0 to 24 h.
    CloudAlwaysCheaper,
}

/// An option's net present cost as a straight line in hours per day of full use of its planned
/// fleet, h ∈ [0, 24]: `fixed_usd + h · per_hour_day_usd` (see the module formulas).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CostLine {
    /// Present value of everything that does not scale with use \[USD\].
    pub fixed_usd: f64,
    /// Present value of one more hour per day of full use, every day of the horizon \[USD\].
    pub per_hour_day_usd: f64,
    /// Where the option actually runs \[h/day\]; the line there is its net present cost.
    pub actual_hours_per_day: f64,
    /// Seed 004's basis, for its simplified form only: the nominal cash inside the horizon at
    /// 24 h/day of full use, egress excluded \[USD\].
    pub seed_basis_full_use_usd: f64,
}

impl CostLine {
    pub fn at(&self, hours_per_day: f64) -> f64 {
        self.fixed_usd + hours_per_day * self.per_hour_day_usd
    }

    /// The line at the option's actual operating point: its net present cost.
    pub fn at_actual_use(&self) -> f64 {
        self.at(self.actual_hours_per_day)
    }
}

/// One year's part of the cost that scales with use, nominal \[USD\]: as paid, and what it
/// would be at 24 h/day of full use of the planned fleet.
struct UseYear {
    actual_usd: f64,
    full_usd: f64,
}

/// Build the line from the option's ranking figure, its yearly use-scaled part and the
/// weights (Σ w_y · share_y / Σ w_y) of its actual operating point.
fn line(cost: &OptionCost, rate: f64, uses: &[UseYear], point: &[(f64, f64)]) -> CostLine {
    let slope: f64 = cost
        .yearly
        .iter()
        .zip(uses)
        .map(|(y, u)| u.full_usd / DAY_HOURS * mid_year_factor(rate, y.year))
        .sum();
    let weight: f64 = point.iter().map(|(w, _)| w).sum();
    let actual = if weight > 0.0 {
        DAY_HOURS * point.iter().map(|(w, share)| w * share).sum::<f64>() / weight
    } else {
        0.0
    };
    let seed_basis = cost
        .yearly
        .iter()
        .zip(uses)
        .map(|(y, u)| y.total_usd - y.egress_usd - u.actual_usd + u.full_usd)
        .sum();
    CostLine {
        fixed_usd: cost.net_present_cost_usd - slope * actual,
        per_hour_day_usd: slope,
        actual_hours_per_day: actual,
        seed_basis_full_use_usd: seed_basis,
    }
}

/// On-prem as a cost line: only the dynamic part of the energy, `(P_max − P_idle)·PUE·$/kWh`
/// per busy unit-hour, scales with use; an all-in hourly power price is paid around the clock,
/// as seed 004 does. The operating point is 24 h × the installed fleet's mean utilization,
/// years weighted by installed units and their discount factor.
pub fn on_prem_line(
    profile: &Profile,
    cost: &OptionCost,
    fleet: &[FleetYear],
    inputs: &CostInputs,
    energy_override: Option<f64>,
) -> CostLine {
    let rate = inputs.discount_rate.value;
    let dynamic_kw = (profile.peak_power_w.value - profile.idle_power_w.value).max(0.0) / 1e3;
    let per_unit_year = match energy_override {
        Some(_) => 0.0,
        None => {
            HOURS_PER_YEAR * dynamic_kw * inputs.pue.value * inputs.electricity_usd_per_kwh.value
        }
    };
    let mut uses = Vec::with_capacity(cost.yearly.len());
    let mut point = Vec::with_capacity(cost.yearly.len());
    let escalation = 1.0 + inputs.electricity_price_change_per_year.value;
    for (i, (y, f)) in cost.yearly.iter().zip(fleet).enumerate() {
        let n = y.units as f64;
        let u = spread_utilization(f, y.units);
        // The year's electricity price, escalated as the on-prem energy cost is.
        let full = n * per_unit_year * escalation.powi(i as i32);
        uses.push(UseYear {
            actual_usd: full * u,
            full_usd: full,
        });
        point.push((n * mid_year_factor(rate, y.year), u));
    }
    line(cost, rate, &uses, &point)
}

/// A cloud option as a cost line: on-demand pays each hour of use of the planned fleet; a
/// reservation is paid whether used or not (flat); a hybrid pays its base whatever the use and
/// its burst above the base per hour. Every option of a tier has the same operating point: the
/// instance-hours its autoscaled fleet runs over the planned fleet's hours, years weighted by
/// planned units and their discount factor.
pub fn cloud_line(
    profile: &Profile,
    cost: &OptionCost,
    fleet: &[FleetYear],
    inputs: &CostInputs,
) -> CostLine {
    let rate = inputs.discount_rate.value;
    let od = profile
        .prices
        .on_demand_usd_per_hour
        .as_ref()
        .map_or(0.0, |c| c.value);
    let g = profile.prices.change_per_year();
    let mut uses = Vec::with_capacity(cost.yearly.len());
    let mut point = Vec::with_capacity(cost.yearly.len());
    for (i, (y, f)) in cost.yearly.iter().zip(fleet).enumerate() {
        let planned = f.units as f64;
        let share = if f.units == 0 {
            0.0
        } else {
            (f.instance_hours() / (planned * HOURS_PER_YEAR)).clamp(0.0, 1.0)
        };
        let use_year = match cost.option {
            DeploymentOption::OnPrem
            | DeploymentOption::Reserved1y
            | DeploymentOption::Reserved3y => UseYear {
                actual_usd: 0.0,
                full_usd: 0.0,
            },
            // Instance fees and the storage of the running instances are paid per
            // instance-hour, at the year's price (trend and spot overhead included): scaled from
            // the hours run to the planned fleet's full hours.
            DeploymentOption::OnDemand | DeploymentOption::Spot => {
                let actual = y.cloud_usd + y.storage_usd;
                UseYear {
                    actual_usd: actual,
                    full_usd: if share > 0.0 { actual / share } else { 0.0 },
                }
            }
            DeploymentOption::Hybrid1y | DeploymentOption::Hybrid3y => {
                let base = cost.reserved_base.get(i).copied().unwrap_or(y.units);
                let od_y = super::price_in_year(od, g, i);
                UseYear {
                    actual_usd: y.instance_hours * od_y,
                    full_usd: f.units.saturating_sub(base) as f64 * HOURS_PER_YEAR * od_y,
                }
            }
        };
        uses.push(use_year);
        point.push((planned * mid_year_factor(rate, y.year), share));
    }
    line(cost, rate, &uses, &point)
}

/// Solve `on_prem.at(h) = cloud.at(h)` for h in [0, 24].
pub fn exact_break_even(on_prem: CostLine, cloud: CostLine) -> ExactBreakEven {
    let slope = on_prem.per_hour_day_usd - cloud.per_hour_day_usd;
    let gap = cloud.fixed_usd - on_prem.fixed_usd;
    let cheaper_at = |h: f64| on_prem.at(h) <= cloud.at(h);
    if slope.abs() < 1e-9 {
        return if gap >= 0.0 {
            ExactBreakEven::OnPremAlwaysCheaper
        } else {
            ExactBreakEven::CloudAlwaysCheaper
        };
    }
    let h = gap / slope;
    if (0.0..=DAY_HOURS).contains(&h) {
        ExactBreakEven::At {
            hours_per_day: h,
            on_prem_cheaper_above: slope < 0.0,
        }
    } else if cheaper_at(DAY_HOURS / 2.0) {
        ExactBreakEven::OnPremAlwaysCheaper
    } else {
        ExactBreakEven::CloudAlwaysCheaper
    }
}

/// Seed 004's simplified break-even on its own basis: 24 h × on-prem cash ÷ cloud cash, both at
/// 24 h/day of full use ([`CostLine::seed_basis_full_use_usd`]). It may exceed 24 (on-prem
/// never pays off); it means a break-even only against on-demand.
pub fn simplified_break_even(on_prem: CostLine, cloud: CostLine) -> Option<f64> {
    let cloud_24 = cloud.seed_basis_full_use_usd;
    (cloud_24 > 0.0).then(|| DAY_HOURS * on_prem.seed_basis_full_use_usd / cloud_24)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(fixed: f64, slope: f64) -> CostLine {
        CostLine {
            fixed_usd: fixed,
            per_hour_day_usd: slope,
            actual_hours_per_day: 0.0,
            seed_basis_full_use_usd: fixed + 24.0 * slope,
        }
    }

    #[test]
    fn exact_break_even_solves_the_line_crossing() {
        let op = flat(100.0, 1.0);
        let od = flat(0.0, 11.0);
        assert_eq!(
            exact_break_even(op, od),
            ExactBreakEven::At {
                hours_per_day: 10.0,
                on_prem_cheaper_above: true
            }
        );
        assert_eq!(
            exact_break_even(op, flat(90.0, 0.0)),
            ExactBreakEven::CloudAlwaysCheaper
        );
        assert_eq!(
            exact_break_even(op, flat(1000.0, 0.0)),
            ExactBreakEven::OnPremAlwaysCheaper
        );
        // A reservation dearer than idle on-prem but cheaper than busy on-prem: on-prem wins
        // only below the crossing.
        assert_eq!(
            exact_break_even(op, flat(112.0, 0.0)),
            ExactBreakEven::At {
                hours_per_day: 12.0,
                on_prem_cheaper_above: false
            }
        );
    }

    #[test]
    fn the_seed_form_is_the_ratio_of_full_use_cash() {
        // 24 × 124 / 264 = 11.27…; no cloud cash, no figure.
        let s = simplified_break_even(flat(100.0, 1.0), flat(0.0, 11.0)).unwrap();
        assert!((s - 24.0 * 124.0 / 264.0).abs() < 1e-12);
        assert_eq!(simplified_break_even(flat(1.0, 0.0), flat(0.0, 0.0)), None);
    }
}
