//! The cost model: what each deployment option of a tier costs, year by year, nominal and
//! discounted, and where on-prem breaks even against the cloud. Pure functions of the capacity
//! plan, the profile's prices and the scenario's cost assumptions. Stage 6: it reads the
//! capacity plan's [`FleetYear`]s and hands [`OptionCost`]s to `results`.
//!
//! Formulas (all yearly, year y = 1..=H; symbols as in `DESIGN.md`, Cost model):
//!
//! ```text
//! on-prem   (at the start of year y, lots of units each with its year bought and its price)
//!           life          = refresh_years + extend_life_years
//!           retire          every unit aged ≥ life; then, if retire_surplus, the oldest units
//!                           beyond needed_y = units_y + spares_y
//!           bought_y      = needed_y − units still owned     (only what is missing)
//!           price_y       = price · (1 + hardware_price_change)^(y−1)
//!           installed_y   = units owned after buying (≥ needed_y; more only when surplus is kept)
//!           resale_y      = Σ retired · lot price · (1 − resale_decline)^age   (cash in)
//!           capex_y       = bought_y · price_y · (1 + install_share)
//!           maintenance_y = Σ installed units · their lot price · maintenance_share
//!                           (purchase price, without installation; spares and idle included)
//!           energy_y      = 8760 h · (installed_y · P_idle + units_y · u_y · (P_max − P_idle))
//!                           · PUE · $/kWh · (1 + e)^(y−1)     (e = electricity_price_change)
//!                           (or installed_y · 8760 h · all-in $/unit-h · (1 + e)^(y−1))
//!           space_y       = installed_y · P_max · $/kW-month · 12
//!           staff_y       = installed_y / units_per_admin · admin cost
//!           spares_y      = smallest k: P(Binomial(units_y + k, p) > k) ≤ 1 − availability_target,
//!                           p = λ·repair_days / (365 + λ·repair_days)   (or the tier's `spares`)
//!           resale value  = Σ owned at the end · lot price · (1 − resale_decline)^age  (ranked)
//!           book value    = Σ owned at the end · lot price · straight line over
//!                           depreciation_years                                  (reported)
//! prices    p_y           = p · (1 + g)^(y−1)   (g = the profile's price.change_per_year, else 0)
//! on-demand cloud_y       = instance-hours_y · p_y   (hour by hour from the traffic curve)
//! spot      cloud_y       = instance-hours_y · p_spot,y · (1 + spot_interruption_overhead)
//! reserved  a lot of n units bought in year s for T years, upfront share u, discount d(u):
//!           rate_s        = p_s · (1 − d(u))               (kept for the whole term)
//!           prepaid_s     = u · n · rate_s · 8760 · T     (paid at the start of year s)
//!           cloud_y       = Σ_live lots (1 − u) · n · rate_s · 8760   (paid used or not)
//! hybrid    cloud_y       = reserved base as above + Σ_h max(0, units_h − base_y) · p_od,y
//! cloud     storage_y     = running instance-hours_y · GB/unit · $/GB-month · 12 / 8760
//!           egress_y      = 12 · schedule(served requests_y · bytes/request / 1e9 / 12)   (per
//!                           month: free allowance, then tiers; flat $/GB when [costs] sets
//!                           egress_usd_per_gb)
//!           support_y     = support share · (cloud + prepaid + storage + egress)_y
//! every     software_y    = units running_y · licence per unit-year      (see `efficiency`)
//!           engineering_1 = the tier's porting_usd, once, at the start of year 1
//! on-prem   network_y     = installed_y · network $/unit-year
//! every     energy_kwh_y  = (running unit-hours · P_idle + busy unit-hours · (P_max − P_idle)) · PUE
//!                           (on-prem `pue`, cloud `cloud_pue`; carbon_y = energy_kwh_y · grid intensity)
//! NPV       Σ_y (capex + prepaid + engineering − resale)_y/(1+r)^(y−1) + (everything else)_y/(1+r)^(y−½)
//! ranking   net present cost = NPV + Σ_{y>H} owed_y/(1+r)^(y−½) − resale_H/(1+r)^H
//! per M     cost per million = net present cost / Σ_y served_y/(1+r)^(y−½) × 1e6
//! after tax with tax_rate > 0, see [`tax`]: the ranking figure is then after tax
//! ```
//!
//! Capex and reservation prepayments are paid at the start of their year; running costs accrue
//! through the year, so they are discounted at mid-year (the usual mid-year convention of
//! capital budgeting).
//!
//! The break-even — each option's net present cost as a straight line in hours of use per day
//! — is in [`break_even`].

pub mod break_even;
pub mod efficiency;
pub mod inputs;
pub mod tax;

use serde::Serialize;

use crate::capacity::FleetYear;
pub use crate::cost::break_even::{
    CostLine, ExactBreakEven, cloud_line, exact_break_even, on_prem_line, simplified_break_even,
};
pub use crate::cost::efficiency::TierCosts;
use crate::cost::inputs::CostInputs;
use crate::hardware::egress::EgressSchedule;
use crate::hardware::{DeploymentOption, Profile};
use crate::units::{DAYS_PER_YEAR, HOURS_PER_YEAR};

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
    /// Reservation payments made when a lot is bought (the upfront share of its whole term).
    pub prepaid_usd: f64,
    /// Block storage of the running cloud instances.
    pub storage_usd: f64,
    pub egress_usd: f64,
    /// Software licences for the units running (see [`efficiency`]).
    pub software_usd: f64,
    /// One-time porting and engineering (the tier's `porting_usd`), paid at the start of
    /// year 1.
    pub engineering_usd: f64,
    /// On-prem network running cost beyond the installation share.
    pub network_usd: f64,
    /// The provider's support plan, as a share of the cloud spend.
    pub support_usd: f64,
    /// On-prem: of `units`, those kept as spares for the availability target (or the tier's
    /// `spares`). They are bought, powered (idle), maintained and housed, and carry no load.
    pub spare_units: u32,
    /// On-prem: units retired at the start of the year (at the end of their service life, or
    /// surplus to a shrinking fleet) and sold.
    pub units_retired: u32,
    /// On-prem: what the retired units sold for, at market for their age — a cash inflow at
    /// the start of the year (subtracted from the year's total).
    pub resale_usd: f64,
    /// On-prem: sale proceeds less the tax book value of the units sold (for the after-tax view).
    #[serde(skip)]
    pub sale_gain_usd: f64,
    /// On-prem: tax depreciation of the units owned this year (for the after-tax view).
    #[serde(skip)]
    pub tax_depreciation_usd: f64,
    /// On-prem: what the units installed this year were bought for (each lot at its own price,
    /// without installation), the base of maintenance (for the workbook's formulas).
    #[serde(skip)]
    pub installed_purchase_usd: f64,
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
    /// reservation prepayments and one-time engineering, less what retired hardware sells for.
    pub fn start_of_year_usd(&self) -> f64 {
        self.capex_usd + self.prepaid_usd + self.engineering_usd - self.resale_usd
    }

    /// What accrues through the year (discounted at mid-year): every other line.
    pub fn running_usd(&self) -> f64 {
        self.maintenance_usd
            + self.energy_usd
            + self.space_usd
            + self.staff_usd
            + self.cloud_usd
            + self.storage_usd
            + self.egress_usd
            + self.software_usd
            + self.network_usd
            + self.support_usd
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
    /// Generative workloads: the same figure per million tokens (prompt and output), from the
    /// same numbers over the workload's mean tokens per request; set by `results`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_per_million_tokens_usd: Option<f64>,
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
    /// With `tax_rate` > 0: the net present cost after tax (see [`tax`]), which is then also
    /// `net_present_cost_usd`, the ranking figure. Absent in a pre-tax run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub npv_after_tax_usd: Option<f64>,
    /// On-prem: the end-of-horizon resale value less its tax book value.
    #[serde(skip)]
    pub taxable_gain_at_end_usd: f64,
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
    let price = profile.price(option).map_or(0.0, |c| c.value);
    let g = profile.prices.change_per_year();
    let od = profile
        .prices
        .on_demand_usd_per_hour
        .as_ref()
        .map_or(0.0, |c| c.value);
    let mut out = match option {
        DeploymentOption::OnPrem => on_prem(price, profile, fleet, inputs, tier),
        DeploymentOption::OnDemand => on_demand(option, price, g, 0.0, fleet),
        DeploymentOption::Spot => on_demand(
            option,
            price,
            g,
            inputs.spot_interruption_overhead.value,
            fleet,
        ),
        DeploymentOption::Reserved1y | DeploymentOption::Reserved3y => {
            let term = option.term_years().unwrap_or(1);
            let targets: Vec<u32> = fleet.iter().map(|f| f.units).collect();
            reserved(option, price, g, term, &targets, fleet, inputs)
        }
        DeploymentOption::Hybrid1y | DeploymentOption::Hybrid3y => {
            hybrid(option, price, od, g, fleet, inputs)
        }
    };
    if option.is_cloud() {
        cloud_extras(&mut out, fleet, inputs, profile.prices.egress);
    }
    efficiency::add_lines(&mut out, profile, fleet, inputs, tier);
    finish(&mut out, inputs.discount_rate.value);
    tax::apply(&mut out, inputs);
    efficiency::summarize(&mut out, profile, fleet, tier);
    out
}

/// An hourly price in year `index + 1` of the horizon under a yearly change `g`.
pub fn price_in_year(price: f64, g: f64, index: usize) -> f64 {
    price * (1.0 + g).powi(index as i32)
}

/// An option that costs nothing in any year of `fleet` (the start every option is built from).
pub fn empty(option: DeploymentOption, fleet: &[FleetYear]) -> OptionCost {
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
        cost_per_million_tokens_usd: None,
        committed_beyond_horizon_usd: 0.0,
        committed_beyond_horizon_pv_usd: 0.0,
        beyond_horizon_usd: vec![],
        resale_value_usd: 0.0,
        book_value_usd: 0.0,
        net_present_cost_usd: 0.0,
        npv_after_tax_usd: None,
        taxable_gain_at_end_usd: 0.0,
        reserved_base: vec![],
        energy_kwh: 0.0,
        energy_per_request_j: None,
        kwh_per_million_requests: None,
        rps_per_watt: None,
        carbon_kg: 0.0,
    }
}

/// Units bought together: the year (0-based) they were bought, how many are still owned, and
/// the price each was bought for.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Lot {
    year: usize,
    units: u32,
    price: f64,
}

/// Share of the time a unit is down: λ·r / (365 + λ·r) for λ failures a year of r days each —
/// the steady-state unavailability MTTR / (MTBF + MTTR) of a repairable unit, always below 1.
pub fn unit_down_probability(failures_per_year: f64, repair_days: f64) -> f64 {
    let down_days = (failures_per_year * repair_days).max(0.0);
    if down_days.is_finite() {
        down_days / (DAYS_PER_YEAR + down_days)
    } else {
        0.0
    }
}

pub use crate::cost::inputs::MAX_SPARES;

/// Fleets larger than this are sized with the normal approximation of the binomial.
const EXACT_SPARES_UNITS: u32 = 100_000;

/// Spares for `working` units: the smallest k such that P(more than k of the `working + k`
/// units are down) ≤ 1 − `target`, each unit down independently with probability `down`
/// (binomial). A target of 0 (or a unit that is never down) buys none.
pub fn spares_for(working: u32, down: f64, target: f64) -> u32 {
    let usable = target > 0.0 && down > 0.0 && down < 1.0;
    if working == 0 || !usable {
        return 0;
    }
    let allowed = 1.0 - target;
    let enough = |k: u32| {
        let n = working.saturating_add(k);
        binomial_tail_above(n, k, down) <= allowed
    };
    // P(more than k of n + k down) falls as k grows (one more unit, one more allowed down),
    // so the smallest k is found by doubling, then bisection.
    let mut hi = 1u32;
    while !enough(hi) {
        if hi >= MAX_SPARES {
            return MAX_SPARES;
        }
        hi = hi.saturating_mul(2).min(MAX_SPARES);
    }
    if enough(0) {
        return 0;
    }
    let mut lo = 0u32; // not enough
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if enough(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// P(X > k) for X ~ Binomial(n, p): exact (summed in log space) up to
/// [`EXACT_SPARES_UNITS`] trials, the normal approximation with continuity correction beyond.
fn binomial_tail_above(n: u32, k: u32, p: f64) -> f64 {
    if k >= n {
        return 0.0;
    }
    if n > EXACT_SPARES_UNITS {
        let (nf, kf) = (n as f64, k as f64);
        let sd = (nf * p * (1.0 - p)).sqrt();
        return normal_upper_tail((kf + 0.5 - nf * p) / sd);
    }
    // P(X ≤ k) = Σ_{j ≤ k} pmf(j), pmf(j+1) = pmf(j) · (n − j)/(j + 1) · p/(1 − p).
    let ln_ratio = (p / (1.0 - p)).ln();
    let mut ln_pmf = n as f64 * (1.0 - p).ln();
    let mut terms = Vec::with_capacity(k as usize + 1);
    for j in 0..=k {
        terms.push(ln_pmf);
        ln_pmf += ((n - j) as f64 / (j + 1) as f64).ln() + ln_ratio;
    }
    let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let cdf = (top.exp() * terms.iter().map(|t| (t - top).exp()).sum::<f64>()).min(1.0);
    (1.0 - cdf).max(0.0)
}

/// P(Z > z) for a standard normal Z (Abramowitz & Stegun 7.1.26 for erfc, |error| < 1.5e-7).
fn normal_upper_tail(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * erfc
    } else {
        1.0 - 0.5 * erfc
    }
}

/// The spares a tier keeps for `working` units: the tier's `spares`, else the availability
/// target's (see [`spares_for`]) with the failure rate of the profile's kind.
pub fn spares(profile: &Profile, working: u32, c: &CostInputs, tier: &TierCosts) -> u32 {
    if let Some(k) = tier.spares {
        return if working == 0 { 0 } else { k };
    }
    let failures = match profile.kind {
        crate::hardware::UnitKind::Cpu => c.cpu_unit_failures_per_year.value,
        crate::hardware::UnitKind::Gpu | crate::hardware::UnitKind::Accelerator => {
            c.gpu_unit_failures_per_year.value
        }
    };
    let down = unit_down_probability(failures, c.repair_days.value);
    spares_for(working, down, c.availability_target.value)
}

/// Straight-line book value left of `price` at `age` years over a `life`-year book life.
fn book_share(age: usize, life: f64) -> f64 {
    ((life - age as f64) / life).clamp(0.0, 1.0)
}

fn on_prem(
    price: f64,
    profile: &Profile,
    fleet: &[FleetYear],
    c: &CostInputs,
    tier: &TierCosts,
) -> OptionCost {
    let mut out = empty(DeploymentOption::OnPrem, fleet);
    let life = (c.refresh_years.value + c.extend_life_years.value).max(1.0) as usize;
    let book_life = c.depreciation_years.value.max(1.0);
    let keep = 1.0 - c.resale_decline_per_year.value;
    let retire_surplus = c.retire_surplus.value >= 0.5;
    let idle_kw = profile.idle_power_w.value / 1e3;
    let peak_kw = profile.peak_power_w.value / 1e3;
    let mut lots: Vec<Lot> = Vec::new();
    for (i, (f, y)) in fleet.iter().zip(out.yearly.iter_mut()).enumerate() {
        // 1. Units at the end of their service life retire at the start of the year and are
        //    sold at market at that age.
        let mut proceeds = 0.0;
        let mut gain = 0.0;
        let mut retired = 0u32;
        lots.retain(|l| {
            let age = i - l.year;
            if age >= life {
                let value = l.units as f64 * l.price * keep.powi(age as i32);
                proceeds += value;
                gain += value - l.units as f64 * l.price * tax::book_share(c, age);
                retired += l.units;
                false
            } else {
                true
            }
        });
        // 2. The fleet this year needs: the planned units plus their spares.
        let spare = spares(profile, f.units, c, tier);
        let needed = f.units.saturating_add(spare);
        let owned: u32 = lots.iter().map(|l| l.units).sum();
        // 3. A shrinking fleet retires its surplus, oldest first (worth least, due soonest),
        //    or keeps it installed and idle.
        if owned > needed && retire_surplus {
            let mut surplus = owned - needed;
            for l in lots.iter_mut() {
                let n = l.units.min(surplus);
                let age = i - l.year;
                let value = n as f64 * l.price * keep.powi(age as i32);
                proceeds += value;
                gain += value - n as f64 * l.price * tax::book_share(c, age);
                retired += n;
                l.units -= n;
                surplus -= n;
            }
            lots.retain(|l| l.units > 0);
        }
        // 4. Buy only what is missing, at this year's price.
        let bought = needed.saturating_sub(lots.iter().map(|l| l.units).sum());
        let lot_price = price * (1.0 + c.hardware_price_change_per_year.value).powi(i as i32);
        if bought > 0 {
            lots.push(Lot {
                year: i,
                units: bought,
                price: lot_price,
            });
        }
        let installed: u32 = lots.iter().map(|l| l.units).sum();
        let n = installed as f64;
        // The load is carried by the planned units (spares and idle units draw idle power).
        let working = f.units.min(installed) as f64;
        let u = f.utilization.clamp(0.0, 1.0);
        let escalation = (1.0 + c.electricity_price_change_per_year.value).powi(i as i32);
        y.units = installed;
        y.units_added = bought;
        y.units_retired = retired;
        y.spare_units = spare;
        y.resale_usd = proceeds;
        y.sale_gain_usd = gain;
        y.tax_depreciation_usd = lots
            .iter()
            .map(|l| l.units as f64 * l.price * tax::depreciation_share(c, i - l.year))
            .sum();
        y.capex_usd = bought as f64 * lot_price * (1.0 + c.install_share_of_capex.value);
        y.installed_purchase_usd = lots.iter().map(|l| l.units as f64 * l.price).sum::<f64>();
        y.maintenance_usd = y.installed_purchase_usd * c.maintenance_share_per_year.value;
        // Energy from the power model; an all-in hourly price replaces its cost, not its kWh.
        y.energy_kwh =
            HOURS_PER_YEAR * (n * idle_kw + working * u * (peak_kw - idle_kw)) * c.pue.value;
        y.energy_usd = escalation
            * match tier.energy_override {
                Some(per_hour) => n * HOURS_PER_YEAR * per_hour,
                None => y.energy_kwh * c.electricity_usd_per_kwh.value,
            };
        y.space_usd = n * peak_kw * c.colocation_usd_per_kw_month.value * 12.0;
        y.staff_usd = n / c.units_per_admin.value * c.admin_cost_usd_per_year.value;
    }
    // What is still owned at the end of the horizon: a lot bought in year i (0-based) is H − i
    // years old then.
    let horizon = fleet.len();
    for l in &lots {
        let age = horizon - l.year;
        out.resale_value_usd += l.units as f64 * l.price * keep.powi(age as i32);
        out.book_value_usd += l.units as f64 * l.price * book_share(age, book_life);
    }
    out.taxable_gain_at_end_usd = out.resale_value_usd
        - lots
            .iter()
            .map(|l| l.units as f64 * l.price * tax::book_share(c, horizon - l.year))
            .sum::<f64>();
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

/// Whether the scenario set a flat egress price, which then overrides every schedule.
fn flat_egress(c: &CostInputs) -> bool {
    c.egress_usd_per_gb.source.key == "scenario"
}

/// A year's egress: the profile's schedule month by month (a twelfth of the year's bytes each
/// month), or the flat price per GB when the scenario sets one or the profile names no schedule.
pub fn egress(f: &FleetYear, c: &CostInputs, schedule: Option<&EgressSchedule>) -> f64 {
    let gb = f.requests * c.egress_bytes_per_request.value / 1e9;
    match schedule {
        Some(s) if !flat_egress(c) => 12.0 * s.monthly_usd(gb / 12.0),
        _ => gb * c.egress_usd_per_gb.value,
    }
}

/// The lines every cloud option pays on top of its instances: block storage for each running
/// instance, egress of the served responses, and the support plan on all of it.
fn cloud_extras(
    out: &mut OptionCost,
    fleet: &[FleetYear],
    c: &CostInputs,
    schedule: Option<&EgressSchedule>,
) {
    let per_instance_hour =
        c.cloud_storage_gb_per_unit.value * c.cloud_storage_usd_per_gb_month.value * 12.0
            / HOURS_PER_YEAR;
    let option = out.option;
    for (f, y) in fleet.iter().zip(out.yearly.iter_mut()) {
        // Committed units run all year; on-demand, spot and a hybrid's burst run by the hour.
        let running_hours = match option {
            DeploymentOption::OnDemand | DeploymentOption::Spot => y.instance_hours,
            _ => y.units as f64 * HOURS_PER_YEAR + y.instance_hours,
        };
        y.storage_usd = running_hours * per_instance_hour;
        y.egress_usd = egress(f, c, schedule);
        y.support_usd = c.cloud_support_share.value
            * (y.cloud_usd + y.prepaid_usd + y.storage_usd + y.egress_usd);
    }
}

/// On-demand or spot: instance-hours at the year's price, times `1 + overhead`.
fn on_demand(
    option: DeploymentOption,
    price: f64,
    g: f64,
    overhead: f64,
    fleet: &[FleetYear],
) -> OptionCost {
    let mut out = empty(option, fleet);
    for (i, (f, y)) in fleet.iter().zip(out.yearly.iter_mut()).enumerate() {
        y.units = f.units;
        y.instance_hours = f.instance_hours();
        y.cloud_usd = y.instance_hours * price_in_year(price, g, i) * (1.0 + overhead);
    }
    out
}

/// The share paid upfront and the discount it buys for a reservation of `term` years: the
/// discount runs linearly from none (no upfront) through the Partial Upfront figure (share 0.5)
/// to the All Upfront one (share 1).
fn upfront(c: &CostInputs, term: u32) -> (f64, f64) {
    let share = c.reserved_upfront_share.value.clamp(0.0, 1.0);
    let (partial, all) = if term >= 3 {
        (
            c.reserved_3y_partial_upfront_discount.value,
            c.reserved_3y_all_upfront_discount.value,
        )
    } else {
        (
            c.reserved_1y_partial_upfront_discount.value,
            c.reserved_1y_all_upfront_discount.value,
        )
    };
    let discount = if share <= 0.5 {
        share / 0.5 * partial
    } else {
        partial + (share - 0.5) / 0.5 * (all - partial)
    };
    (share, discount)
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
    g: f64,
    term: u32,
    targets: &[u32],
    fleet: &[FleetYear],
    c: &CostInputs,
) -> OptionCost {
    let mut out = empty(option, fleet);
    let (active, added, lots) = commitments(targets, term);
    for (i, y) in out.yearly.iter_mut().enumerate() {
        y.units = active[i];
        y.units_added = added[i];
    }
    let (share, discount) = upfront(c, term);
    let horizon = fleet.len();
    let term = term.max(1) as usize;
    let mut owed = vec![0.0; term.saturating_sub(1)];
    for &(start, n) in &lots {
        // A lot keeps the price of the year it is bought in for its whole term.
        let year_cost =
            n as f64 * HOURS_PER_YEAR * price_in_year(price, g, start) * (1.0 - discount);
        out.yearly[start].prepaid_usd += share * year_cost * term as f64;
        let hourly = (1.0 - share) * year_cost;
        for y in &mut out.yearly[start..(start + term).min(horizon)] {
            y.cloud_usd += hourly;
        }
        // Only the hourly part is still owed after the horizon: the upfront part was paid.
        for year in horizon..start + term {
            owed[year - horizon] += hourly;
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
    g: f64,
    fleet: &[FleetYear],
    c: &CostInputs,
) -> OptionCost {
    let term = option.term_years().unwrap_or(1);
    let (_, discount) = upfront(c, term);
    // Prices move together, so the year's ratio (and the base) is the same with or without a
    // trend; the effective reserved rate includes what the upfront payment buys.
    let bases: Vec<u32> = fleet
        .iter()
        .enumerate()
        .map(|(i, f)| {
            best_base(
                &f.hourly_units,
                f.units,
                price_in_year(reserved_price, g, i) * (1.0 - discount),
                price_in_year(od_price, g, i),
            )
        })
        .collect();
    let cost_with = |targets: &[u32]| {
        let mut out = reserved(option, reserved_price, g, term, targets, fleet, c);
        for (i, ((f, y), &base)) in fleet
            .iter()
            .zip(out.yearly.iter_mut())
            .zip(&out_bases(targets, term))
            .enumerate()
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
            y.cloud_usd += burst_hours * price_in_year(od_price, g, i);
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
            let cash = |o: &OptionCost| {
                o.yearly
                    .iter()
                    .map(|y| y.cloud_usd + y.prepaid_usd)
                    .sum::<f64>()
            };
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
            log_sd: None,
        };
        let mut inputs = crate::cost::inputs::default_costs();
        inputs.depreciation_years = cited(4.0);
        inputs.refresh_years = cited(4.0);
        inputs.availability_target = cited(0.0);
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
        // Bought in year 1, refreshed in year 5 (life 4): the refresh has 3 of 4 years left,
        // and the retired unit sold at market at age 4.
        assert_eq!(
            c.yearly.iter().map(|y| y.units_added).collect::<Vec<_>>(),
            vec![1, 0, 0, 0, 1]
        );
        let price = profile.prices.purchase_usd.as_ref().unwrap().value;
        assert!((c.book_value_usd - 0.75 * price).abs() < 1e-6);
        assert!((c.yearly[4].resale_usd - 0.65_f64.powi(4) * price).abs() < 1e-6);
        assert_eq!(c.yearly[4].units_retired, 1);
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

    fn p5() -> Profile {
        let src = crate::input::SourceFile::from_text(
            "embedded:aws-p5.48xlarge",
            crate::hardware::embedded_text("aws-p5.48xlarge").unwrap(),
        );
        Profile::from_source(&src, Some("aws-p5.48xlarge")).unwrap()
    }

    fn always_on(years: u32, requests: f64) -> Vec<FleetYear> {
        (1..=years)
            .map(|year| FleetYear {
                year,
                units: 1,
                utilization: 0.5,
                hourly_units: vec![],
                requests,
            })
            .collect()
    }

    /// Cost inputs with every cloud extra at zero, so a test sees one line at a time.
    fn bare() -> CostInputs {
        let mut c = crate::cost::inputs::default_costs();
        c.cloud_storage_gb_per_unit.value = 0.0;
        c.egress_bytes_per_request.value = 0.0;
        c
    }

    #[test]
    fn p5_on_demand_falls_by_the_derived_trend() {
        let profile = p5();
        let g = profile.prices.change_per_year();
        assert_eq!(g, -0.168);
        let c = option_cost(
            DeploymentOption::OnDemand,
            &profile,
            &always_on(5, 0.0),
            &bare(),
            None,
        );
        // Year 3 pays 55.04 × (1 − 0.168)² = 55.04 × 0.692224 = $38.0000/h, all 8,760 h.
        let rate_y3 = c.yearly[2].cloud_usd / HOURS_PER_YEAR;
        assert!((rate_y3 - 55.04 * 0.692224).abs() < 1e-4, "{rate_y3}");
        assert!((c.yearly[0].cloud_usd - 55.04 * HOURS_PER_YEAR).abs() < 1e-6);
    }

    #[test]
    fn a_reservation_keeps_the_price_of_the_year_it_is_bought() {
        // 1-year lots bought every year follow the trend; one 3-year lot keeps year 1's price.
        let profile = p5();
        let fleet = always_on(3, 0.0);
        let r1 = option_cost(
            DeploymentOption::Reserved1y,
            &profile,
            &fleet,
            &bare(),
            None,
        );
        let r3 = option_cost(
            DeploymentOption::Reserved3y,
            &profile,
            &fleet,
            &bare(),
            None,
        );
        let y3_1y = 43.344 * 0.832f64.powi(2) * HOURS_PER_YEAR;
        assert!((r1.yearly[2].cloud_usd - y3_1y).abs() < 1e-6);
        assert!((r3.yearly[2].cloud_usd - 23.77728 * HOURS_PER_YEAR).abs() < 1e-6);
    }

    #[test]
    fn an_all_upfront_three_year_lot_is_paid_at_its_start() {
        let mut profile = p5();
        profile.prices.change_per_year = None;
        let mut c = bare();
        c.reserved_upfront_share.value = 1.0;
        c.discount_rate.value = 0.08;
        let fleet = always_on(3, 0.0);
        let r = option_cost(DeploymentOption::Reserved3y, &profile, &fleet, &c, None);
        // 23.77728 × (1 − 0.1296) = $20.69575/h × 8,760 h × 3 years = $543,884.17, paid at the
        // start of year 1, so its present value is the payment itself; nothing is paid hourly.
        let upfront = 23.77728 * (1.0 - 0.1296) * HOURS_PER_YEAR * 3.0;
        assert!((upfront - 543_884.17).abs() < 0.01, "{upfront}");
        assert!((r.yearly[0].prepaid_usd - upfront).abs() < 1e-6);
        assert!(r.yearly.iter().all(|y| y.cloud_usd == 0.0));
        assert!((r.npv_usd - upfront).abs() < 1e-6, "{}", r.npv_usd);
        assert_eq!(r.committed_beyond_horizon_usd, 0.0);
        // No upfront: $208,288.97 a year, discounted at mid-year, so a higher NPV here
        // (Σ 208,288.97 / 1.08^(y − ½) = $557,839.06).
        c.reserved_upfront_share.value = 0.0;
        let n = option_cost(DeploymentOption::Reserved3y, &profile, &fleet, &c, None);
        let yearly = 23.77728 * HOURS_PER_YEAR;
        let pv: f64 = (1..=3).map(|y| yearly / 1.08f64.powf(y as f64 - 0.5)).sum();
        assert!((n.npv_usd - pv).abs() < 1e-6 && (pv - 557_839.06).abs() < 0.01);
        assert!(n.npv_usd > r.npv_usd);
        // Partial upfront (0.5): half paid upfront at the 7.41 % discount.
        c.reserved_upfront_share.value = 0.5;
        let p = option_cost(DeploymentOption::Reserved3y, &profile, &fleet, &c, None);
        let rate = 23.77728 * (1.0 - 0.0741) * HOURS_PER_YEAR;
        assert!((p.yearly[0].prepaid_usd - 0.5 * rate * 3.0).abs() < 1e-6);
        assert!((p.yearly[1].cloud_usd - 0.5 * rate).abs() < 1e-6);
        // A horizon of 2 years: the all-upfront lot owes nothing after it, the no-upfront lot
        // owes its third year.
        let two = always_on(2, 0.0);
        c.reserved_upfront_share.value = 1.0;
        let a2 = option_cost(DeploymentOption::Reserved3y, &profile, &two, &c, None);
        assert_eq!(a2.committed_beyond_horizon_usd, 0.0);
        c.reserved_upfront_share.value = 0.0;
        let n2 = option_cost(DeploymentOption::Reserved3y, &profile, &two, &c, None);
        assert!((n2.committed_beyond_horizon_usd - yearly).abs() < 1e-6);
    }

    #[test]
    fn spot_pays_its_price_plus_the_interruption_overhead() {
        let mut profile = p5();
        profile.prices.change_per_year = None;
        let c = bare();
        let s = option_cost(
            DeploymentOption::Spot,
            &profile,
            &always_on(1, 0.0),
            &c,
            None,
        );
        // 8,760 h × $28.106467 × 1.10 = $270,833.92.
        assert!(
            (s.yearly[0].cloud_usd - 270_833.916).abs() < 1e-3,
            "{}",
            s.yearly[0].cloud_usd
        );
    }

    #[test]
    fn aws_and_oci_egress_for_the_same_traffic() {
        // 1.2e11 requests of 2,000 B = 240,000 GB a year = 20,000 GB a month.
        let f = &always_on(1, 1.2e11)[0];
        let c = crate::cost::inputs::default_costs();
        let aws = crate::hardware::egress::schedule("aws-internet");
        let oci = crate::hardware::egress::schedule("oci-internet");
        // AWS: 12 × ((10,000 − 100) × 0.09 + 10,000 × 0.085) = 12 × 1,741 = $20,892.
        assert!((egress(f, &c, aws) - 20_892.0).abs() < 1e-6);
        // OCI: 12 × (20,000 − 10,000) × 0.0085 = $1,020.
        assert!((egress(f, &c, oci) - 1_020.0).abs() < 1e-6);
        // No schedule: the flat default, 240,000 × 0.09 = $21,600.
        assert!((egress(f, &c, None) - 21_600.0).abs() < 1e-6);
        // Set in the scenario, the flat price overrides the schedule.
        let mut set = c.clone();
        set.egress_usd_per_gb = crate::cite::Cited::user(0.05, "s.toml:9".into());
        assert!((egress(f, &set, oci) - 12_000.0).abs() < 1e-6);
    }

    #[test]
    fn the_break_even_lines_price_the_trend_as_the_totals_do() {
        // An always-on fleet runs 24 h/day: there its line stands at the option's net present
        // cost, trend and upfront payments included.
        let profile = p5();
        let fleet = always_on(5, 0.0);
        let mut c = bare();
        c.reserved_upfront_share.value = 0.5;
        for o in [DeploymentOption::OnDemand, DeploymentOption::Reserved3y] {
            let cost = option_cost(o, &profile, &fleet, &c, None);
            let line = cloud_line(&profile, &cost, &fleet, &c);
            assert!(
                (line.at(24.0) - cost.net_present_cost_usd).abs() < 1e-6,
                "{o}: {} vs {}",
                line.at(24.0),
                cost.net_present_cost_usd
            );
        }
    }

    #[test]
    fn storage_and_support_are_added_to_cloud_options_only() {
        let mut profile = p5();
        profile.prices.change_per_year = None;
        let mut c = bare();
        c.cloud_storage_gb_per_unit.value = 200.0;
        c.cloud_support_share.value = 0.05;
        let od = option_cost(
            DeploymentOption::OnDemand,
            &profile,
            &always_on(1, 0.0),
            &c,
            None,
        );
        let y = &od.yearly[0];
        // 8,760 instance-hours × 200 GB × $0.08/GB-month × 12 / 8,760 = $192.
        assert!((y.storage_usd - 192.0).abs() < 1e-9);
        // Support: 5 % of (481,150.40 + 192) = $24,067.12.
        let fees = 55.04 * HOURS_PER_YEAR;
        assert!((y.support_usd - 0.05 * (fees + 192.0)).abs() < 1e-6);
        assert!((y.total_usd - 1.05 * (fees + 192.0)).abs() < 1e-6);
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
