//! Energy and carbon of every option, and the cost lines beyond the hardware: software
//! licences, one-time porting and engineering, and on-prem network. Part of the cost stage
//! (stage 6): [`crate::cost::option_cost_for`] calls [`add_lines`] before the totals are taken
//! and [`summarize`] after.
//!
//! Formulas (year y; N_y units running, H = 8,760 h, P in kW):
//!
//! ```text
//! running unit-hours  R_y = installed_y · H                      (on-prem)
//!                         = instance-hours_y                     (on-demand)
//!                         = min(committed_y, units_y) · H + burst instance-hours_y  (reserved, hybrid)
//! busy unit-hours     B_y = min(units_y · H · u_y, R_y)          (the load the plan carries)
//! energy_kwh_y            = (R_y · P_idle + B_y · (P_max − P_idle)) · PUE
//!                           (on-prem: `pue`, the same power model as its energy cost;
//!                            cloud: `cloud_pue` — energy only, a cloud price already pays for it)
//! carbon_kg_y             = energy_kwh_y · grid_kg_co2e_per_kwh
//! software_usd_y          = R_y / H · licence per unit-year
//!                           (the tier's `software_usd_per_unit_year`, else, for a GPU profile,
//!                            `software_usd_per_gpu_year` × GPUs per unit; other kinds 0)
//! network_usd_y           = installed_y · network_usd_per_unit_year   (on-prem only)
//! engineering_usd_1       = the tier's `porting_usd`, once, at the start of year 1 (every option)
//! ```
//!
//! Per option over the horizon: energy per request = Σ energy_kwh · 3.6e6 J/kWh ÷ requests,
//! kWh per million requests = Σ energy_kwh ÷ (requests / 1e6), and [`rps_per_watt`]. Each is
//! absent (never NaN or infinite) when nothing is served.

use crate::capacity::FleetYear;
use crate::cost::inputs::CostInputs;
use crate::cost::{OptionCost, YearCost};
use crate::hardware::{DeploymentOption, Profile, UnitKind};
use crate::units::HOURS_PER_YEAR;

/// Joules in a kilowatt-hour.
const J_PER_KWH: f64 = 3.6e6;

/// What a tier sets for its own costs, beside the scenario's `[costs]`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TierCosts {
    /// All-in power and cooling per unit-hour \[USD/h\], replacing the on-prem energy cost
    /// (not its kWh).
    pub energy_override: Option<f64>,
    /// Software licences per unit-year \[USD\], replacing the per-GPU default for any kind.
    pub software_usd_per_unit_year: Option<f64>,
    /// One-time porting and engineering \[USD\], paid at the start of year 1.
    pub porting_usd: f64,
    /// The last year's peak request rate \[req/s\] (0 when unknown: no `rps_per_watt`).
    pub peak_rps: f64,
    /// Requests per second one unit sustains at full load (roofline).
    pub unit_throughput_rps: f64,
    /// On-prem spares per year (N + k), replacing the availability target's.
    pub spares: Option<u32>,
}

impl TierCosts {
    /// Licences per unit-year for this profile \[USD\].
    pub fn software_per_unit_year(&self, profile: &Profile, c: &CostInputs) -> f64 {
        self.software_usd_per_unit_year
            .unwrap_or(match profile.kind {
                UnitKind::Gpu => c.software_usd_per_gpu_year.value * profile.chips.value,
                UnitKind::Cpu | UnitKind::Accelerator => 0.0,
            })
    }
}

/// Unit-hours the option keeps running in a year (see the module formulas).
fn running_unit_hours(option: DeploymentOption, f: &FleetYear, y: &YearCost) -> f64 {
    match option {
        DeploymentOption::OnPrem => y.units as f64 * HOURS_PER_YEAR,
        DeploymentOption::OnDemand | DeploymentOption::Spot => y.instance_hours,
        DeploymentOption::Reserved1y
        | DeploymentOption::Reserved3y
        | DeploymentOption::Hybrid1y
        | DeploymentOption::Hybrid3y => {
            y.units.min(f.units) as f64 * HOURS_PER_YEAR + y.instance_hours
        }
    }
}

/// Facility energy of `running` unit-hours of which `busy` carry load \[kWh\].
pub fn facility_kwh(profile: &Profile, running: f64, busy: f64, pue: f64) -> f64 {
    let idle_kw = profile.idle_power_w.value / 1e3;
    let peak_kw = profile.peak_power_w.value / 1e3;
    (running * idle_kw + busy.min(running) * (peak_kw - idle_kw)) * pue
}

/// Fill each year's cloud energy, carbon, licences, network and engineering. On-prem energy is
/// already set by the on-prem formula (the same power model as its energy cost).
pub fn add_lines(
    out: &mut OptionCost,
    profile: &Profile,
    fleet: &[FleetYear],
    c: &CostInputs,
    tier: &TierCosts,
) {
    let option = out.option;
    let licence = tier.software_per_unit_year(profile, c);
    for (i, (f, y)) in fleet.iter().zip(out.yearly.iter_mut()).enumerate() {
        let running = running_unit_hours(option, f, y);
        if option.is_cloud() {
            let busy = f.units as f64 * HOURS_PER_YEAR * f.utilization.clamp(0.0, 1.0);
            y.energy_kwh = facility_kwh(profile, running, busy, c.cloud_pue.value);
        } else {
            y.network_usd = y.units as f64 * c.network_usd_per_unit_year.value;
        }
        y.carbon_kg = y.energy_kwh * c.grid_kg_co2e_per_kwh.value;
        y.software_usd = running / HOURS_PER_YEAR * licence;
        if i == 0 {
            y.engineering_usd = tier.porting_usd;
        }
    }
}

/// The option's energy and carbon over the horizon, per request and per watt (after the
/// totals, which count the requests).
pub fn summarize(out: &mut OptionCost, profile: &Profile, fleet: &[FleetYear], tier: &TierCosts) {
    out.energy_kwh = out.yearly.iter().map(|y| y.energy_kwh).sum();
    out.carbon_kg = out.yearly.iter().map(|y| y.carbon_kg).sum();
    let served = out.requests;
    let finite = |x: &f64| x.is_finite();
    out.energy_per_request_j = (served > 0.0)
        .then(|| out.energy_kwh * J_PER_KWH / served)
        .filter(finite);
    out.kwh_per_million_requests = (served > 0.0)
        .then(|| out.energy_kwh / (served / 1e6))
        .filter(finite);
    out.rps_per_watt = fleet
        .last()
        .and_then(|f| rps_per_watt(profile, f.units, tier.peak_rps, tier.unit_throughput_rps));
}

/// Requests per second per watt at the planned fleet: the peak rate served in the last year
/// (`peak_rps`, or the fleet's capacity `units × unit_throughput_rps` if that is lower) divided
/// by the IT power of that year's planned fleet while it carries it,
/// `units × (P_idle + (P_max − P_idle) · u)` with `u` = served ÷ capacity. IT power, not
/// facility power (no PUE), so it compares hardware rather than data centres; it is the same
/// for every option of a tier. Absent when nothing is served at the peak or the fleet draws
/// no power.
pub fn rps_per_watt(
    profile: &Profile,
    units: u32,
    peak_rps: f64,
    unit_throughput_rps: f64,
) -> Option<f64> {
    let capacity = units as f64 * unit_throughput_rps;
    let served = peak_rps.min(capacity);
    if !(served > 0.0 && served.is_finite()) {
        return None;
    }
    let u = (served / capacity).clamp(0.0, 1.0);
    let idle = profile.idle_power_w.value;
    let watts = units as f64 * (idle + (profile.peak_power_w.value - idle) * u);
    (watts > 0.0)
        .then(|| served / watts)
        .filter(|x| x.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::inputs::CostInputs;

    /// The cited defaults without on-prem spares, so one unit is one unit.
    fn default_costs() -> CostInputs {
        let mut c = crate::cost::inputs::default_costs();
        c.availability_target.value = 0.0;
        c
    }
    use crate::cost::option_cost_for;

    fn h100() -> Profile {
        let src = crate::input::SourceFile::from_text(
            "embedded:hgx-h100-8x",
            crate::hardware::embedded_text("hgx-h100-8x").unwrap(),
        );
        Profile::from_source(&src, Some("hgx-h100-8x")).unwrap()
    }

    fn years(n: u32, units: u32, utilization: f64, requests: f64) -> Vec<FleetYear> {
        (1..=n)
            .map(|year| FleetYear {
                year,
                units,
                utilization,
                hourly_units: vec![],
                requests,
            })
            .collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn energy_per_request_of_one_unit_at_fixed_utilization() {
        let p = h100();
        let c = default_costs();
        let (idle, peak) = (p.idle_power_w.value, p.peak_power_w.value);
        let fleet = years(1, 1, 0.5, 1e6);
        let tier = TierCosts::default();
        // One unit, all year, half busy: 8,760 h × (P_idle + ½ ΔP) × PUE.
        let it_kwh = 8760.0 * (idle + 0.5 * (peak - idle)) / 1e3;
        let op = option_cost_for(DeploymentOption::OnPrem, &p, &fleet, &c, &tier);
        assert!(
            close(op.energy_kwh, it_kwh * c.pue.value),
            "{}",
            op.energy_kwh
        );
        assert!(close(
            op.energy_per_request_j.unwrap(),
            it_kwh * c.pue.value * 3.6e6 / 1e6
        ));
        assert!(close(
            op.kwh_per_million_requests.unwrap(),
            it_kwh * c.pue.value
        ));
        // The cost is the same kWh at the electricity price.
        assert!(close(
            op.yearly[0].energy_usd,
            op.energy_kwh * c.electricity_usd_per_kwh.value
        ));
        // On demand, the same always-on fleet in the cloud's data centre.
        let od = option_cost_for(DeploymentOption::OnDemand, &p, &fleet, &c, &tier);
        assert!(close(od.energy_kwh, it_kwh * c.cloud_pue.value));
        assert_eq!(od.yearly[0].energy_usd, 0.0);
        // An all-in hourly power price replaces the cost, not the kWh.
        let seed = TierCosts {
            energy_override: Some(0.87),
            ..tier
        };
        let op87 = option_cost_for(DeploymentOption::OnPrem, &p, &fleet, &c, &seed);
        assert!(close(op87.energy_kwh, op.energy_kwh));
        assert!(close(op87.yearly[0].energy_usd, 8760.0 * 0.87));
    }

    #[test]
    fn autoscaled_cloud_energy_counts_instance_hours_and_the_load() {
        let p = h100();
        let c = default_costs();
        let (idle, peak) = (p.idle_power_w.value, p.peak_power_w.value);
        // Two units half the year, none the other half; the load is 20 % of the 2-unit peak
        // fleet over the year = 3,504 busy unit-hours of the 8,760 running.
        let mut hourly = vec![2u32; 4380];
        hourly.extend(vec![0u32; 4380]);
        let fleet = vec![FleetYear {
            year: 1,
            units: 2,
            utilization: 0.2,
            hourly_units: hourly,
            requests: 1e9,
        }];
        let od = option_cost_for(
            DeploymentOption::OnDemand,
            &p,
            &fleet,
            &c,
            &TierCosts::default(),
        );
        let busy = 2.0 * 8760.0 * 0.2;
        let want = (8760.0 * idle + busy * (peak - idle)) / 1e3 * c.cloud_pue.value;
        assert!(close(od.energy_kwh, want), "{} vs {want}", od.energy_kwh);
    }

    #[test]
    fn carbon_is_energy_times_grid_intensity() {
        let p = h100();
        let mut c = default_costs();
        c.grid_kg_co2e_per_kwh.value = 0.5;
        let fleet = years(3, 2, 0.3, 1e8);
        for option in [DeploymentOption::OnPrem, DeploymentOption::Reserved1y] {
            let o = option_cost_for(option, &p, &fleet, &c, &TierCosts::default());
            assert!(o.energy_kwh > 0.0);
            assert!(close(o.carbon_kg, o.energy_kwh * 0.5), "{option}");
            for y in &o.yearly {
                assert!(close(y.carbon_kg, y.energy_kwh * 0.5));
            }
        }
    }

    #[test]
    fn licences_are_paid_per_gpu_per_unit_year() {
        let p = h100();
        assert_eq!(p.kind, UnitKind::Gpu);
        let gpus = p.chips.value;
        let mut c = default_costs();
        c.software_usd_per_gpu_year.value = 4500.0;
        let fleet = years(5, 2, 0.5, 1e8);
        let op = option_cost_for(
            DeploymentOption::OnPrem,
            &p,
            &fleet,
            &c,
            &TierCosts::default(),
        );
        let software: f64 = op.yearly.iter().map(|y| y.software_usd).sum();
        assert!(close(software, 4500.0 * gpus * 2.0 * 5.0), "{software}");
        // It is in the totals.
        let free = option_cost_for(
            DeploymentOption::OnPrem,
            &p,
            &fleet,
            &default_costs(),
            &TierCosts::default(),
        );
        assert!(close(op.total_usd - free.total_usd, software));
        // A tier's per-unit price replaces the per-GPU one.
        let tier = TierCosts {
            software_usd_per_unit_year: Some(1000.0),
            ..TierCosts::default()
        };
        let op = option_cost_for(DeploymentOption::OnPrem, &p, &fleet, &c, &tier);
        let software: f64 = op.yearly.iter().map(|y| y.software_usd).sum();
        assert!(close(software, 1000.0 * 2.0 * 5.0));
        // On demand pays for the instance-hours it runs: half a year of one unit.
        let mut hourly = vec![1u32; 4380];
        hourly.extend(vec![0u32; 4380]);
        let half = vec![FleetYear {
            year: 1,
            units: 1,
            utilization: 0.1,
            hourly_units: hourly,
            requests: 1e6,
        }];
        let od = option_cost_for(DeploymentOption::OnDemand, &p, &half, &c, &tier);
        assert!(close(od.yearly[0].software_usd, 500.0));
    }

    #[test]
    fn porting_is_paid_once_at_the_start_of_year_one() {
        let p = h100();
        let c = default_costs();
        let fleet = years(3, 1, 0.5, 1e8);
        let tier = TierCosts {
            porting_usd: 250_000.0,
            ..TierCosts::default()
        };
        for option in [DeploymentOption::OnPrem, DeploymentOption::OnDemand] {
            let with = option_cost_for(option, &p, &fleet, &c, &tier);
            let without = option_cost_for(option, &p, &fleet, &c, &TierCosts::default());
            let eng: Vec<f64> = with.yearly.iter().map(|y| y.engineering_usd).collect();
            assert_eq!(eng, vec![250_000.0, 0.0, 0.0]);
            assert!(close(with.total_usd - without.total_usd, 250_000.0));
            // Paid at the start of year 1: not discounted at all.
            assert!(close(with.npv_usd - without.npv_usd, 250_000.0));
            assert!(close(
                with.yearly[0].discounted_usd - without.yearly[0].discounted_usd,
                250_000.0
            ));
        }
    }

    #[test]
    fn network_is_charged_per_installed_on_prem_unit_only() {
        let p = h100();
        let mut c = default_costs();
        c.network_usd_per_unit_year.value = 3000.0;
        let fleet = years(2, 3, 0.5, 1e8);
        let op = option_cost_for(
            DeploymentOption::OnPrem,
            &p,
            &fleet,
            &c,
            &TierCosts::default(),
        );
        assert!(op.yearly.iter().all(|y| close(y.network_usd, 9000.0)));
        let od = option_cost_for(
            DeploymentOption::OnDemand,
            &p,
            &fleet,
            &c,
            &TierCosts::default(),
        );
        assert!(od.yearly.iter().all(|y| y.network_usd == 0.0));
    }

    #[test]
    fn rps_per_watt_at_the_peak_of_the_planned_fleet() {
        let p = h100();
        let (idle, peak) = (p.idle_power_w.value, p.peak_power_w.value);
        // 4 units of 10 req/s carrying a 20 req/s peak: half busy.
        let want = 20.0 / (4.0 * (idle + 0.5 * (peak - idle)));
        assert!(close(rps_per_watt(&p, 4, 20.0, 10.0).unwrap(), want));
        // A peak above capacity is served at capacity, fully busy.
        let full = 40.0 / (4.0 * peak);
        assert!(close(rps_per_watt(&p, 4, 100.0, 10.0).unwrap(), full));
        assert_eq!(rps_per_watt(&p, 4, 0.0, 10.0), None);
        assert_eq!(rps_per_watt(&p, 0, 20.0, 10.0), None);
        assert_eq!(rps_per_watt(&p, 4, 20.0, 0.0), None);
    }

    #[test]
    fn a_tier_with_no_requests_has_no_per_request_figures() {
        let p = h100();
        let c = default_costs();
        let fleet = years(2, 1, 0.0, 0.0);
        for option in [DeploymentOption::OnPrem, DeploymentOption::OnDemand] {
            let o = option_cost_for(option, &p, &fleet, &c, &TierCosts::default());
            assert!(o.energy_kwh > 0.0, "idle units still draw power");
            assert_eq!(o.energy_per_request_j, None);
            assert_eq!(o.kwh_per_million_requests, None);
            assert_eq!(o.rps_per_watt, None);
            assert!(o.carbon_kg.is_finite() && o.cost_per_million_usd.is_none());
            assert!(o.yearly.iter().all(|y| y.energy_kwh.is_finite()));
        }
    }
}
