//! The optional after-tax view (`tax_rate` > 0). Part of the cost stage (stage 6):
//! [`crate::cost::option_cost_for`] calls [`apply`] after the pre-tax totals are taken.
//!
//! Formulas (t = `tax_rate`; year y; discounting as in [`crate::cost`]):
//!
//! ```text
//! start-of-year_y = capex_y − resale_y + t · gain_y + (1 − t) · (prepaid + engineering)_y
//!                   (gain_y = sale proceeds − tax book value of the units sold)
//! running_y       = (1 − t) · running costs_y − t · depreciation_y
//!                   (depreciation_y: straight-line over depreciation_years, or MACRS 5-year,
//!                    of every unit owned in year y, at its own price)
//! after tax       = Σ_y start-of-year_y/(1+r)^(y−1) + running_y/(1+r)^(y−½)
//!                   + (1 − t) · reservations owed after the horizon (discounted)
//!                   − (resale at the end − t · (resale − tax book value)) / (1+r)^H
//! ```
//!
//! Costs are deductible when paid, hardware only through its depreciation; a sale pays tax on
//! its gain over the tax book value (a loss saves tax). The company is assumed to have other
//! taxable income, so every deduction is used in the year it arises.

use crate::cost::inputs::CostInputs;
use crate::cost::{OptionCost, end_of_year_factor, mid_year_factor, start_of_year_factor};

/// MACRS 5-year property, half-year convention: the share of the price deducted in each tax
/// year (IRS Publication 946, Table A-1).
pub const MACRS_5_YEAR: [f64; 6] = [0.20, 0.32, 0.192, 0.1152, 0.1152, 0.0576];

fn macrs(c: &CostInputs) -> bool {
    c.tax_depreciation.value >= 0.5
}

/// Share of a unit's price deducted in the year it is `age` years old at the start (0 in the
/// year it is bought).
pub fn depreciation_share(c: &CostInputs, age: usize) -> f64 {
    if macrs(c) {
        MACRS_5_YEAR.get(age).copied().unwrap_or(0.0)
    } else {
        let life = c.depreciation_years.value.max(1.0);
        if (age as f64) < life { 1.0 / life } else { 0.0 }
    }
}

/// Share of a unit's price not yet deducted after `age` full years: its tax book value.
pub fn book_share(c: &CostInputs, age: usize) -> f64 {
    let deducted: f64 = (0..age).map(|a| depreciation_share(c, a)).sum();
    (1.0 - deducted).clamp(0.0, 1.0)
}

/// The after-tax net present cost of an option whose pre-tax figures are final.
pub fn after_tax_net_present_cost(out: &OptionCost, c: &CostInputs) -> f64 {
    let t = c.tax_rate.value;
    let rate = c.discount_rate.value;
    let mut npc = 0.0;
    for y in &out.yearly {
        // Everything paid at the start of the year but the hardware (prepaid reservations,
        // engineering) is deducted as paid; the hardware through its depreciation.
        let paid = y.start_of_year_usd();
        let deductible = paid - y.capex_usd + y.resale_usd;
        let start = paid - t * deductible + t * y.sale_gain_usd;
        let running = (1.0 - t) * y.running_usd() - t * y.tax_depreciation_usd;
        npc += start * start_of_year_factor(rate, y.year) + running * mid_year_factor(rate, y.year);
    }
    let horizon = out.yearly.len() as u32;
    npc + (1.0 - t) * out.committed_beyond_horizon_pv_usd
        - (out.resale_value_usd - t * out.taxable_gain_at_end_usd)
            * end_of_year_factor(rate, horizon)
}

/// With a tax rate above 0: report the after-tax net present cost, and make it the ranking
/// figure (and the cost per million levelized on it).
pub fn apply(out: &mut OptionCost, c: &CostInputs) {
    let taxed = c.tax_rate.value > 0.0;
    if !taxed {
        out.npv_after_tax_usd = None;
        return;
    }
    let after = after_tax_net_present_cost(out, c);
    out.npv_after_tax_usd = Some(after);
    out.net_present_cost_usd = after;
    let rate = c.discount_rate.value;
    let requests_pv: f64 = out
        .yearly
        .iter()
        .map(|y| y.requests * mid_year_factor(rate, y.year))
        .sum();
    out.cost_per_million_usd = (requests_pv > 0.0).then(|| after / (requests_pv / 1e6));
}
