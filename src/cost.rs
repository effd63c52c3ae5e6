//! The cost model: what each deployment option of a tier costs, year by year, nominal and
//! discounted, and where on-prem breaks even against the cloud. Pure functions of the capacity
//! plan, the profile's prices and the scenario's cost assumptions. Stage 6: it reads the
//! capacity plan's [`FleetYear`]s and hands [`OptionCost`]s to `results`.
//!
//! Formulas (all yearly, year y = 1..=H; symbols as in `DESIGN.md`, Cost model):
//!
//! ```text
//! on-prem   installed_y   = max(installed_{y-1}, units_y)            (servers are not sold)
//!           purchased_y   = installed_y − installed_{y-1} + bought_{y−L}   (refresh after L years)
//!           capex_y       = purchased_y · price · (1 + install_share)
//!           maintenance_y = installed_y · price · maintenance_share
//!           energy_y      = installed_y · 8760 h · (P_idle + (P_max − P_idle)·u_y) · PUE · $/kWh
//!                           (or installed_y · 8760 h · all-in $/unit-h when the tier gives one)
//!           space_y       = installed_y · P_max · $/kW-month · 12
//!           staff_y       = installed_y / units_per_admin · admin cost
//! on-demand cloud_y       = instance-hours_y · $/h   (hour by hour from the traffic curve)
//! reserved  cloud_y       = committed_y · 8760 h · $/h   (commitments of T years, paid used or not)
//! hybrid    cloud_y       = base_y · 8760 · $/h_reserved + Σ_h max(0, units_h − base_y) · $/h_on-demand
//! cloud     egress_y      = requests_y · bytes/request / 1e9 · $/GB
//! every     software_y    = units running_y · licence per unit-year      (see `efficiency`)
//!           engineering_1 = the tier's porting_usd, once, at the start of year 1
//! on-prem   network_y     = installed_y · network $/unit-year
//! every     energy_kwh_y  = (running unit-hours · P_idle + busy unit-hours · (P_max − P_idle)) · PUE
//!                           (on-prem `pue`, cloud `cloud_pue`; carbon_y = energy_kwh_y · grid intensity)
//! NPV       Σ_y (capex + engineering)_y/(1+r)^(y−1) + (everything else)_y/(1+r)^(y−½)
//! ```
//!
//! Capex is paid at the start of its year; running costs accrue through the year, so they are
//! discounted at mid-year (the usual mid-year convention of capital budgeting).
//!
//! The break-even — each option's net present cost as a straight line in hours of use per day
//! — is in [`break_even`].

pub mod break_even;
pub mod efficiency;
pub mod inputs;

use serde::Serialize;

use crate::capacity::FleetYear;
pub use crate::cost::break_even::{
    CostLine, ExactBreakEven, cloud_line, exact_break_even, on_prem_line, simplified_break_even,
};
pub use crate::cost::efficiency::TierCosts;
use crate::cost::inputs::CostInputs;
use crate::hardware::{DeploymentOption, Profile};
use crate::units::HOURS_PER_YEAR;

/// One year of one option.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct YearCost {
    pub year: u32,
    /// Units installed (on-prem), committed (reserved), or at the peak (on-demand).
    pub units: u32,
    /// Units bought this year (on-prem), or newly committed (reserved).
    pub units_added: u32,
    /// On-demand instance-hours.
    pub instance_hours: f64,
    pub capex_usd: f64,
    pub maintenance_usd: f64,
    pub energy_usd: f64,
    pub space_usd: f64,
    pub staff_usd: f64,
    pub cloud_usd: f64,
    pub egress_usd: f64,
    /// Software licences for the units running (see [`efficiency`]).
    pub software_usd: f64,
    /// One-time porting and engineering (the tier's `porting_usd`), paid at the start of
    /// year 1.
    pub engineering_usd: f64,
    /// On-prem network running cost beyond the installation share.
    pub network_usd: f64,
    pub total_usd: f64,
    pub discounted_usd: f64,
    pub requests: f64,
    /// Facility energy (IT × PUE) of the units running \[kWh\], from the power model even
    /// when the tier pays an all-in hourly power price; cloud options use `cloud_pue`.
    pub energy_kwh: f64,
    /// `energy_kwh` × `grid_kg_co2e_per_kwh` \[kg CO2e\].
    pub carbon_kg: f64,
}

impl YearCost {
    /// What is paid at the start of the year (discounted from the year's start): capex and
    /// one-time engineering.
    pub fn start_of_year_usd(&self) -> f64 {
        self.capex_usd + self.engineering_usd
    }

    /// What accrues through the year (discounted at mid-year): every other line.
    pub fn running_usd(&self) -> f64 {
        self.maintenance_usd
            + self.energy_usd
            + self.space_usd
            + self.staff_usd
            + self.cloud_usd
            + self.egress_usd
            + self.software_usd
            + self.network_usd
    }
}

/// One deployment option of one tier over the horizon.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OptionCost {
    pub option: DeploymentOption,
    pub yearly: Vec<YearCost>,
    pub total_usd: f64,
    pub npv_usd: f64,
    pub requests: f64,
    /// Levelized cost per million requests served: the net present cost over the requests
    /// served, each year's discounted like its running costs (mid-year), so that within a tier
    /// it ranks the options exactly as the net present cost does. Absent when nothing is served.
    pub cost_per_million_usd: Option<f64>,
    /// Reservations that run past the horizon: owed, outside the in-horizon totals, and counted
    /// (discounted) in the ranking figure.
    pub committed_beyond_horizon_usd: f64,
    /// The same payments discounted to today, each at the middle of the year it falls in.
    pub committed_beyond_horizon_pv_usd: f64,
    /// Reservation payments owed in each year after the horizon (years H+1, H+2, …).
    #[serde(skip)]
    pub beyond_horizon_usd: Vec<f64>,
    /// On-prem: what the hardware installed at the end of the horizon would sell for then, at
    /// market (`resale_decline_per_year`). Credited, discounted, in the ranking figure.
    pub resale_value_usd: f64,
    /// On-prem: straight-line book value of that hardware at the end of the horizon (purchase
    /// price over `depreciation_years`), for the accounts. It does not enter the ranking: cash
    /// does not depend on how the hardware is depreciated.
    pub book_value_usd: f64,
    /// The ranking figure, net present cost: the cash flows inside the horizon discounted
    /// (`npv_usd`), plus the reservation payments owed after it (discounted), less the market
    /// resale value of the hardware owned at its end (discounted from the end). Every option is
    /// valued as if the service stopped at the horizon: what is owed is paid, what is owned is
    /// sold. Options are ranked on it, cost per million is levelized on it, the charts and the
    /// break-even use it.
    pub net_present_cost_usd: f64,
    /// Hybrid: the reserved base chosen per year.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reserved_base: Vec<u32>,
    /// Facility energy over the horizon \[kWh\] (Σ yearly `energy_kwh`).
    pub energy_kwh: f64,
    /// Facility energy per request served \[J\]; absent when nothing is served.
    pub energy_per_request_j: Option<f64>,
    /// Facility energy per million requests served \[kWh\]; absent when nothing is served.
    pub kwh_per_million_requests: Option<f64>,
    /// Requests per second per watt of IT power at the last year's peak (see
    /// [`efficiency::rps_per_watt`]); absent when nothing is served at the peak.
    pub rps_per_watt: Option<f64>,
    /// Carbon over the horizon \[kg CO2e\] (Σ yearly `carbon_kg`).
    pub carbon_kg: f64,
}

/// Cost of one option. `energy_override` is an all-in power-and-cooling price per unit-hour.
/// The tier's other settings are left at their defaults (see [`option_cost_for`]).
pub fn option_cost(
    option: DeploymentOption,
    profile: &Profile,
    fleet: &[FleetYear],
    inputs: &CostInputs,
    energy_override: Option<f64>,
) -> OptionCost {
    let tier = TierCosts {
        energy_override,
        ..TierCosts::default()
    };
    option_cost_for(option, profile, fleet, inputs, &tier)
}

/// Cost of one option of a tier, with the tier's own cost settings: its all-in power price,
/// licence override, porting cost and peak load.
pub fn option_cost_for(
    option: DeploymentOption,
    profile: &Profile,
    fleet: &[FleetYear],
    inputs: &CostInputs,
    tier: &TierCosts,
) -> OptionCost {
    let energy_override = tier.energy_override;
    let price = profile.price(option).map_or(0.0, |c| c.value);
    let mut out = match option {
        DeploymentOption::OnPrem => on_prem(price, profile, fleet, inputs, energy_override),
        DeploymentOption::OnDemand => on_demand(price, fleet, inputs),
        DeploymentOption::Reserved1y | DeploymentOption::Reserved3y => {
            let term = option.term_years().unwrap_or(1);
            let targets: Vec<u32> = fleet.iter().map(|f| f.units).collect();
            reserved(option, price, term, &targets, fleet, inputs)
        }
        DeploymentOption::Hybrid1y | DeploymentOption::Hybrid3y => {
            let od = profile
                .prices
                .on_demand_usd_per_hour
                .as_ref()
                .map_or(0.0, |c| c.value);
            hybrid(option, price, od, fleet, inputs)
        }
    };
    efficiency::add_lines(&mut out, profile, fleet, inputs, tier);
    finish(&mut out, inputs.discount_rate.value);
    efficiency::summarize(&mut out, profile, fleet, tier);
    out
}

fn empty(option: DeploymentOption, fleet: &[FleetYear]) -> OptionCost {
    OptionCost {
        option,
        yearly: fleet
            .iter()
            .map(|f| YearCost {
                year: f.year,
                requests: f.requests,
                ..YearCost::default()
            })
            .collect(),
        total_usd: 0.0,
        npv_usd: 0.0,
        requests: 0.0,
        cost_per_million_usd: None,
        committed_beyond_horizon_usd: 0.0,
        committed_beyond_horizon_pv_usd: 0.0,
        beyond_horizon_usd: vec![],
        resale_value_usd: 0.0,
        book_value_usd: 0.0,
        net_present_cost_usd: 0.0,
        reserved_base: vec![],
        energy_kwh: 0.0,
        energy_per_request_j: None,
        kwh_per_million_requests: None,
        rps_per_watt: None,
        carbon_kg: 0.0,
    }
}

fn on_prem(
    price: f64,
    profile: &Profile,
    fleet: &[FleetYear],
    c: &CostInputs,
    energy_override: Option<f64>,
) -> OptionCost {
    let mut out = empty(DeploymentOption::OnPrem, fleet);
    let life = c.depreciation_years.value.max(1.0) as usize;
    let idle_kw = profile.idle_power_w.value / 1e3;
    let peak_kw = profile.peak_power_w.value / 1e3;
    let mut bought: Vec<u32> = Vec::with_capacity(fleet.len());
    let mut installed = 0u32;
    for (i, (f, y)) in fleet.iter().zip(out.yearly.iter_mut()).enumerate() {
        let growth = f.units.saturating_sub(installed);
        installed = installed.max(f.units);
        let refresh = if i >= life { bought[i - life] } else { 0 };
        let purchased = growth + refresh;
        bought.push(purchased);
        let n = installed as f64;
        let u = spread_utilization(f, installed);
        y.units = installed;
        y.units_added = purchased;
        y.capex_usd = purchased as f64 * price * (1.0 + c.install_share_of_capex.value);
        y.maintenance_usd = n * price * c.maintenance_share_per_year.value;
        // Energy from the power model; an all-in hourly price replaces its cost, not its kWh.
        y.energy_kwh = n * HOURS_PER_YEAR * (idle_kw + (peak_kw - idle_kw) * u) * c.pue.value;
        y.energy_usd = match energy_override {
            Some(per_hour) => n * HOURS_PER_YEAR * per_hour,
            None => y.energy_kwh * c.electricity_usd_per_kwh.value,
        };
        y.space_usd = n * peak_kw * c.colocation_usd_per_kw_month.value * 12.0;
        y.staff_usd = n / c.units_per_admin.value * c.admin_cost_usd_per_year.value;
    }
    // A unit bought in year y (1-based) is written off by the end of year y + L − 1, and is
    // H − y + 1 years old at the end of the horizon. Units bought L or more years before the end
    // have been replaced; those bought since are still installed.
    let horizon = fleet.len();
    let keep = 1.0 - c.resale_decline_per_year.value;
    for (i, &n) in bought.iter().enumerate() {
        let remaining = (i + life).saturating_sub(horizon) as f64 / life as f64;
        out.book_value_usd += n as f64 * price * remaining;
        if i + life >= horizon {
            let age = (horizon - i) as i32;
            out.resale_value_usd += n as f64 * price * keep.powi(age);
        }
    }
    out
}

/// The year's load spread over every installed unit: the utilization on-prem energy is paid
/// at, and the break-even's on-prem operating point.
fn spread_utilization(f: &FleetYear, installed: u32) -> f64 {
    if installed == 0 {
        0.0
    } else {
        (f.utilization * f.units as f64 / installed as f64).clamp(0.0, 1.0)
    }
}

fn egress(f: &FleetYear, c: &CostInputs) -> f64 {
    f.requests * c.egress_bytes_per_request.value / 1e9 * c.egress_usd_per_gb.value
}

fn on_demand(price: f64, fleet: &[FleetYear], c: &CostInputs) -> OptionCost {
    let mut out = empty(DeploymentOption::OnDemand, fleet);
    for (f, y) in fleet.iter().zip(out.yearly.iter_mut()) {
        y.units = f.units;
        y.instance_hours = f.instance_hours();
        y.cloud_usd = y.instance_hours * price;
        y.egress_usd = egress(f, c);
    }
    out
}

/// Reservations bought in lots of `term` years so that the active commitment reaches each
/// year's target; a lot runs its full term, even past the horizon.
fn commitments(targets: &[u32], term: u32) -> (Vec<u32>, Vec<u32>, Vec<(usize, u32)>) {
    let term = term.max(1) as usize;
    let mut lots: Vec<(usize, u32)> = Vec::new();
    let mut active = Vec::with_capacity(targets.len());
    let mut added = Vec::with_capacity(targets.len());
    for (y, &target) in targets.iter().enumerate() {
        let live: u32 = lots
            .iter()
            .filter(|(start, _)| y < start + term)
            .map(|(_, n)| n)
            .sum();
        let new = target.saturating_sub(live);
        if new > 0 {
            lots.push((y, new));
        }
        active.push(live + new);
        added.push(new);
    }
    (active, added, lots)
}

fn reserved(
    option: DeploymentOption,
    price: f64,
    term: u32,
    targets: &[u32],
    fleet: &[FleetYear],
    c: &CostInputs,
) -> OptionCost {
    let mut out = empty(option, fleet);
    let (active, added, lots) = commitments(targets, term);
    for (i, (f, y)) in fleet.iter().zip(out.yearly.iter_mut()).enumerate() {
        y.units = active[i];
        y.units_added = added[i];
        y.cloud_usd = active[i] as f64 * HOURS_PER_YEAR * price;
        y.egress_usd = egress(f, c);
    }
    let horizon = fleet.len();
    let mut owed = vec![0.0; (term as usize).saturating_sub(1)];
    for (start, n) in &lots {
        for year in horizon..start + term as usize {
            owed[year - horizon] += *n as f64 * HOURS_PER_YEAR * price;
        }
    }
    while owed.last() == Some(&0.0) {
        owed.pop();
    }
    out.committed_beyond_horizon_usd = owed.iter().sum();
    out.beyond_horizon_usd = owed;
    out
}

/// The 1-year base that minimises one year's cost: a newsvendor problem. Committing the `b`-th
/// unit costs 8,760·p_r and saves p_od for every hour in which at least `b` units are needed, so
/// it pays iff hours(units_h ≥ b) · p_od > 8,760 · p_r (Talluri & van Ryzin 2004, §2.2).
pub fn best_base(hourly_units: &[u32], peak: u32, reserved: f64, on_demand: f64) -> u32 {
    if hourly_units.is_empty() {
        // The fleet runs all year: reserving all of it is cheapest iff reserved < on-demand.
        return if reserved < on_demand { peak } else { 0 };
    }
    // hours(units_h ≥ b) ≥ k exactly when the k-th busiest hour needs at least b units, so the
    // largest b that pays is the busiest hour's need at the smallest k that pays. Sorting the
    // hours (8,760 at most) keeps the memory independent of the fleet size, which a histogram
    // indexed by units is not (16 GiB for a 4-billion-unit fleet).
    let mut needs: Vec<u32> = hourly_units.iter().map(|&u| u.min(peak)).collect();
    needs.sort_unstable_by(|a, b| b.cmp(a));
    let pays = |hours: usize| hours as u32 as f64 * on_demand > HOURS_PER_YEAR * reserved;
    if pays(0) {
        // Committing costs nothing (or pays back with no hours): reserve the whole peak.
        return peak;
    }
    needs
        .iter()
        .enumerate()
        .filter(|&(i, _)| pays(i + 1))
        .map(|(_, &b)| b)
        .max()
        .unwrap_or(0)
}

fn hybrid(
    option: DeploymentOption,
    reserved_price: f64,
    od_price: f64,
    fleet: &[FleetYear],
    c: &CostInputs,
) -> OptionCost {
    let term = option.term_years().unwrap_or(1);
    let bases: Vec<u32> = fleet
        .iter()
        .map(|f| best_base(&f.hourly_units, f.units, reserved_price, od_price))
        .collect();
    let cost_with = |targets: &[u32]| {
        let mut out = reserved(option, reserved_price, term, targets, fleet, c);
        for ((f, y), &base) in fleet
            .iter()
            .zip(out.yearly.iter_mut())
            .zip(&out_bases(targets, term))
        {
            let burst_hours: f64 = if f.hourly_units.is_empty() {
                f.units.saturating_sub(base) as f64 * HOURS_PER_YEAR
            } else {
                f.hourly_units
                    .iter()
                    .map(|&u| u.saturating_sub(base) as f64)
                    .sum()
            };
            y.instance_hours = burst_hours;
            y.cloud_usd += burst_hours * od_price;
        }
        out.reserved_base = out_bases(targets, term);
        out
    };
    // With multi-year terms a lot bought for one year's optimum binds later years, so the
    // per-year optimum is a heuristic; pure on-demand (base 0) and pure reserved (base = peak)
    // are evaluated too, so hybrid is never dearer than either.
    let peaks: Vec<u32> = fleet.iter().map(|f| f.units).collect();
    let zeros = vec![0u32; fleet.len()];
    [bases, peaks, zeros]
        .iter()
        .map(|t| cost_with(t))
        // Chosen on the same footing as every total: cash inside the horizon. Payments a lot
        // owes past the horizon buy service past it and are reported, not counted.
        .min_by(|a, b| {
            let cash = |o: &OptionCost| o.yearly.iter().map(|y| y.cloud_usd).sum::<f64>();
            cash(a).total_cmp(&cash(b))
        })
        .unwrap_or_else(|| empty(option, fleet))
}

fn out_bases(targets: &[u32], term: u32) -> Vec<u32> {
    commitments(targets, term).0
}

/// Discount factor of a payment at the start of `year` (1-based): capex.
pub fn start_of_year_factor(rate: f64, year: u32) -> f64 {
    (1.0 + rate).powf(-(year as f64 - 1.0))
}

/// Discount factor of costs accruing through `year` (1-based), taken at mid-year.
pub fn mid_year_factor(rate: f64, year: u32) -> f64 {
    (1.0 + rate).powf(-(year as f64 - 0.5))
}

/// Discount factor of a value at the end of `year` (1-based): the resale at the horizon.
pub fn end_of_year_factor(rate: f64, year: u32) -> f64 {
    (1.0 + rate).powf(-(year as f64))
}

/// Totals, discounting, the ranking figure and cost per million requests.
fn finish(out: &mut OptionCost, rate: f64) {
    let mut total = 0.0;
    let mut npv = 0.0;
    let mut requests = 0.0;
    let mut requests_pv = 0.0;
    for y in &mut out.yearly {
        let start = y.start_of_year_usd();
        let running = y.running_usd();
        y.total_usd = start + running;
        y.discounted_usd =
            start * start_of_year_factor(rate, y.year) + running * mid_year_factor(rate, y.year);
        total += y.total_usd;
        npv += y.discounted_usd;
        requests += y.requests;
        requests_pv += y.requests * mid_year_factor(rate, y.year);
    }
    let horizon = out.yearly.len() as u32;
    out.total_usd = total;
    out.npv_usd = npv;
    out.committed_beyond_horizon_pv_usd = out
        .beyond_horizon_usd
        .iter()
        .zip(horizon + 1..)
        .map(|(owed, year)| owed * mid_year_factor(rate, year))
        .sum();
    out.net_present_cost_usd = npv + out.committed_beyond_horizon_pv_usd
        - out.resale_value_usd * end_of_year_factor(rate, horizon);
    out.requests = requests;
    out.cost_per_million_usd =
        (requests_pv > 0.0).then(|| out.net_present_cost_usd / (requests_pv / 1e6));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commitments_buy_lots_that_last_their_term() {
        // Needs 2, 3, 3, 5, 5 with 3-year lots: buy 2 in y1 and 1 in y2; the y1 lot expires
        // after y3, so y4 needs 5 − 1 = 4 new; the y2 lot expires after y4, so y5 buys 1.
        let (active, added, lots) = commitments(&[2, 3, 3, 5, 5], 3);
        assert_eq!(added, vec![2, 1, 0, 4, 1]);
        assert_eq!(active, vec![2, 3, 3, 5, 5]);
        assert_eq!(lots, vec![(0, 2), (1, 1), (3, 4), (4, 1)]);
    }

    #[test]
    fn residual_value_is_straight_line_book_value() {
        use crate::cite::{Basis, Cited, Source};
        let cited = |v: f64| Cited {
            value: v,
            basis: Basis::Cited,
            source: Source {
                key: "t".into(),
                title: "t".into(),
                url: None,
                date: "2026".into(),
            },
            note: None,
        };
        let mut inputs = crate::cost::inputs::default_costs();
        inputs.depreciation_years = cited(4.0);
        let src = crate::input::SourceFile::from_text(
            "embedded:hgx-h100-8x",
            crate::hardware::embedded_text("hgx-h100-8x").unwrap(),
        );
        let profile = Profile::from_source(&src, Some("hgx-h100-8x")).unwrap();
        let fleet: Vec<FleetYear> = (1..=5)
            .map(|year| FleetYear {
                year,
                units: 1,
                utilization: 0.5,
                hourly_units: vec![],
                requests: 1e6,
            })
            .collect();
        let c = option_cost(DeploymentOption::OnPrem, &profile, &fleet, &inputs, None);
        // Bought in year 1, refreshed in year 5 (life 4): the refresh has 3 of 4 years left.
        assert_eq!(
            c.yearly.iter().map(|y| y.units_added).collect::<Vec<_>>(),
            vec![1, 0, 0, 0, 1]
        );
        let price = profile.prices.purchase_usd.as_ref().unwrap().value;
        assert!((c.book_value_usd - 0.75 * price).abs() < 1e-6);
        // Capex carries the installation share; every year pays maintenance on the installed unit.
        assert!(
            (c.yearly[0].capex_usd - price * (1.0 + inputs.install_share_of_capex.value)).abs()
                < 1e-6
        );
        assert!(
            c.yearly
                .iter()
                .all(|y| (y.maintenance_usd - 0.1 * price).abs() < 1e-6)
        );
    }

    #[test]
    fn newsvendor_base_commits_units_busy_often_enough() {
        // 8,760 hours: 2 units half the year, 6 units the other half. Reserved costs 0.6 of
        // on-demand: commit a unit iff it is needed more than 60 % of hours → base 2.
        let mut hours = vec![2u32; 4380];
        hours.extend(vec![6u32; 4380]);
        assert_eq!(best_base(&hours, 6, 0.6, 1.0), 2);
        // Cheap reservations (0.4): units busy 50 % of hours pay off → base 6.
        assert_eq!(best_base(&hours, 6, 0.4, 1.0), 6);
        // Always-on fleet: all or nothing.
        assert_eq!(best_base(&[], 4, 0.6, 1.0), 4);
        assert_eq!(best_base(&[], 4, 1.2, 1.0), 0);
    }
}
