//! Year-by-year cash flows of the recommended option and the runner-up (`results.json`
//! `cash_flow`, `cash-flow.csv`, the PDF's cash-flow table and `report.xlsx` all show this one
//! computation), with the payback period, the incremental NPV and the IRR of owning against
//! renting.
//!
//! Built from the [`OptionCost`]s already computed, with the timing of [`crate::cost`]'s
//! `finish()`: payments at the start of a year (capex, prepayments, engineering, sales of
//! retired hardware) are discounted from that point, running costs at mid-year, the resale of
//! what is owned at the horizon from its end, payments owed after the horizon at the middle of
//! the year they fall in. Rows are points of time:
//!
//! ```text
//! row 0      the start of year 1 (today): year 1's start-of-year payments, factor 1
//! row y ≥ 1  year y's running costs (factor (1+r)^−(y−½)) and what is paid or received at its
//!            end, the start of year y+1: year y+1's start-of-year payments, and in row H the
//!            resale of the hardware still owned (factor (1+r)^−y)
//! row y > H  reservation payments owed after the horizon (mid-year)
//! NPC        Σ rows (lump · (1+r)^−y + running · (1+r)^−(y−½))  = the option's
//!            `net_present_cost_usd`, after tax when `tax_rate` > 0 (see [`crate::cost::tax`])
//! ```
//!
//! Owning against renting (when exactly one of the two options is on-prem): the incremental
//! flows are rent − own at each half-year point; the payback period is when their cumulative
//! sum (running costs accruing evenly through the year) first reaches zero, and the IRR is the
//! annual rate r at which Σ flow_t · (1+r)^−t = 0, root-found by bisection, absent (never NaN)
//! when the flows do not change sign.

use serde::Serialize;

use crate::cost::inputs::CostInputs;
use crate::cost::{OptionCost, end_of_year_factor, mid_year_factor};
use crate::hardware::DeploymentOption;
use crate::results::{Recommendation, TierResult};

/// One point of time of one option's cash flows (see the module table). Costs are positive,
/// cash received (resale) is subtracted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CashFlowRow {
    /// 0: the start of year 1; y ≥ 1: year y, and the point at its end.
    pub year: u32,
    /// Paid at this row's point (the start of year `year` + 1).
    pub capex_usd: f64,
    pub prepaid_usd: f64,
    pub engineering_usd: f64,
    /// Retired hardware sold at this row's point (cash in).
    pub resale_usd: f64,
    /// The hardware still owned at the horizon, sold at its end (row H only; cash in).
    pub residual_usd: f64,
    /// Year `year`'s running costs (every line but the start-of-year ones).
    pub running_usd: f64,
    /// Reservation payments owed in a year after the horizon.
    pub owed_usd: f64,
    /// With `tax_rate` > 0: the tax effect of this row's point payments and of its running
    /// costs (negative: tax saved). 0 in a pre-tax run.
    pub tax_at_point_usd: f64,
    pub tax_running_usd: f64,
    /// Net at this row's point: capex + prepaid + engineering − resale − residual + tax.
    pub lump_usd: f64,
    /// Net through the year: running + owed + tax.
    pub through_year_usd: f64,
    /// lump + through-year.
    pub nominal_usd: f64,
    /// (1+r)^−year, for the lump.
    pub point_factor: f64,
    /// (1+r)^−(year−½), for the through-year flows (0 in row 0, which has none).
    pub mid_year_factor: f64,
    pub discounted_usd: f64,
    pub cumulative_usd: f64,
    pub cumulative_discounted_usd: f64,
}

/// The cash flows of one option.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OptionCashFlow {
    pub tier: String,
    pub option: DeploymentOption,
    pub rows: Vec<CashFlowRow>,
    /// Σ nominal.
    pub nominal_usd: f64,
    /// Σ discounted: the option's ranking figure, `net_present_cost_usd`.
    pub net_present_cost_usd: f64,
}

/// One point of the incremental (rent − own) flows, every half year from today.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct IncrementalPoint {
    /// Years from today (0, 0.5, 1, …).
    pub t_years: f64,
    /// What renting pays less what owning pays at this point (positive: owning saves).
    pub saving_usd: f64,
}

/// The recommended option and the runner-up side by side (`results.json` `cash_flow`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CashFlow {
    pub recommended: OptionCashFlow,
    pub runner_up: Option<OptionCashFlow>,
    /// Runner-up − recommended net present cost (the recommendation's margin).
    pub incremental_npv_usd: Option<f64>,
    /// Which of the two owns hardware and which rents, when exactly one is on-prem.
    pub own: Option<String>,
    pub rent: Option<String>,
    /// Rent − own at each half-year point (empty without an own/rent pair).
    pub incremental: Vec<IncrementalPoint>,
    /// Years until owning has paid back its outlay against renting, undiscounted and
    /// discounted; absent with the reason in `payback_note`.
    pub payback_years: Option<f64>,
    pub discounted_payback_years: Option<f64>,
    pub payback_note: String,
    /// The annual IRR of owning against renting; absent with the reason in `irr_note`.
    pub irr: Option<f64>,
    pub irr_note: String,
}

/// The cash flows of one option (see the module table).
pub fn option_cash_flow(tier: &str, o: &OptionCost, c: &CostInputs) -> OptionCashFlow {
    let r = c.discount_rate.value;
    let t = c.tax_rate.value.max(0.0);
    let h = o.yearly.len();
    let last = h + o.beyond_horizon_usd.len();
    let mut rows = Vec::with_capacity(last + 1);
    let (mut cum, mut cum_pv, mut nominal, mut npc) = (0.0, 0.0, 0.0, 0.0);
    for year in 0..=last {
        let next = o.yearly.get(year);
        let this = year.checked_sub(1).and_then(|i| o.yearly.get(i));
        let capex = next.map_or(0.0, |y| y.capex_usd);
        let prepaid = next.map_or(0.0, |y| y.prepaid_usd);
        let engineering = next.map_or(0.0, |y| y.engineering_usd);
        let resale = next.map_or(0.0, |y| y.resale_usd);
        let residual = if year == h { o.resale_value_usd } else { 0.0 };
        let running = this.map_or(0.0, |y| y.running_usd());
        let owed = year
            .checked_sub(h + 1)
            .and_then(|k| o.beyond_horizon_usd.get(k))
            .copied()
            .unwrap_or(0.0);
        // After tax (crate::cost::tax): prepaid and engineering are deducted as paid, a sale
        // pays tax on its gain, running costs are deducted and depreciation saves tax.
        let (tax_point, tax_running) = if t > 0.0 {
            let gain = next.map_or(0.0, |y| y.sale_gain_usd)
                + if year == h {
                    o.taxable_gain_at_end_usd
                } else {
                    0.0
                };
            let dep = this.map_or(0.0, |y| y.tax_depreciation_usd);
            (
                t * (gain - prepaid - engineering),
                -t * (running + dep + owed),
            )
        } else {
            (0.0, 0.0)
        };
        let lump = capex + prepaid + engineering - resale - residual + tax_point;
        let through = running + owed + tax_running;
        let point_factor = end_of_year_factor(r, year as u32);
        let mid = if year == 0 {
            0.0
        } else {
            mid_year_factor(r, year as u32)
        };
        let discounted = lump * point_factor + through * mid;
        cum += lump + through;
        cum_pv += discounted;
        nominal += lump + through;
        npc += discounted;
        rows.push(CashFlowRow {
            year: year as u32,
            capex_usd: capex,
            prepaid_usd: prepaid,
            engineering_usd: engineering,
            resale_usd: resale,
            residual_usd: residual,
            running_usd: running,
            owed_usd: owed,
            tax_at_point_usd: tax_point,
            tax_running_usd: tax_running,
            lump_usd: lump,
            through_year_usd: through,
            nominal_usd: lump + through,
            point_factor,
            mid_year_factor: mid,
            discounted_usd: discounted,
            cumulative_usd: cum,
            cumulative_discounted_usd: cum_pv,
        });
    }
    OptionCashFlow {
        tier: tier.to_string(),
        option: o.option,
        rows,
        nominal_usd: nominal,
        net_present_cost_usd: npc,
    }
}

fn find<'a>(tiers: &'a [TierResult], tier: &str, o: DeploymentOption) -> Option<&'a OptionCost> {
    tiers
        .iter()
        .find(|t| t.name == tier)
        .and_then(|t| t.options.iter().find(|x| x.option == o))
}

/// The cash flows of the recommendation's best option and runner-up (the same two the
/// uncertainty analysis compares), or `None` without a recommendation.
pub fn cash_flow(
    rec: Option<&Recommendation>,
    tiers: &[TierResult],
    c: &CostInputs,
) -> Option<CashFlow> {
    let rec = rec?;
    let best = option_cash_flow(
        &rec.best.tier,
        find(tiers, &rec.best.tier, rec.best.option)?,
        c,
    );
    let runner = rec
        .runner_up
        .as_ref()
        .and_then(|u| find(tiers, &u.tier, u.option).map(|o| option_cash_flow(&u.tier, o, c)));
    let incremental_npv_usd = runner
        .as_ref()
        .map(|u| u.net_present_cost_usd - best.net_present_cost_usd);
    let mut out = CashFlow {
        recommended: best,
        runner_up: runner,
        incremental_npv_usd,
        own: None,
        rent: None,
        incremental: vec![],
        payback_years: None,
        discounted_payback_years: None,
        payback_note: String::new(),
        irr: None,
        irr_note: String::new(),
    };
    let Some(runner) = &out.runner_up else {
        let why = "there is no runner-up to compare with".to_string();
        out.payback_note = why.clone();
        out.irr_note = why;
        return Some(out);
    };
    let label = |f: &OptionCashFlow| format!("{} {}", f.tier, f.option);
    let owns = |f: &OptionCashFlow| f.option == DeploymentOption::OnPrem;
    let (own, rent) = match (owns(&out.recommended), owns(runner)) {
        (true, false) => (&out.recommended, runner),
        (false, true) => (runner, &out.recommended),
        (both, _) => {
            let why = if both {
                "both options own hardware: there is no owning against renting"
            } else {
                "neither option owns hardware: there is no owning against renting"
            }
            .to_string();
            out.payback_note = why.clone();
            out.irr_note = why;
            return Some(out);
        }
    };
    let points = incremental(own, rent);
    let (payback, payback_pv) = (
        payback(&points, None),
        payback(&points, Some(c.discount_rate.value)),
    );
    let saved_at_end: f64 = points.iter().map(|p| p.saving_usd).sum();
    out.payback_note = match payback {
        Some(0.0) => "owning needs no more cash up front than renting".into(),
        Some(_) => "cumulative cash saved by owning, running costs accruing evenly".into(),
        None => format!(
            "owning does not pay back its outlay against renting within the horizon (cumulative \
             cash saved by owning at the end: {})",
            crate::format::usd(saved_at_end)
        ),
    };
    let (irr, irr_note) = irr(&points);
    out.own = Some(label(own));
    out.rent = Some(label(rent));
    out.payback_years = payback;
    out.discounted_payback_years = payback_pv;
    out.irr = irr;
    out.irr_note = irr_note;
    out.incremental = points;
    Some(out)
}

/// Rent − own at every half-year point: lumps at whole years, running costs at mid-year.
fn incremental(own: &OptionCashFlow, rent: &OptionCashFlow) -> Vec<IncrementalPoint> {
    let last = own.rows.len().max(rent.rows.len());
    let row = |f: &OptionCashFlow, y: usize| {
        f.rows
            .get(y)
            .map_or((0.0, 0.0), |r| (r.lump_usd, r.through_year_usd))
    };
    let mut out = Vec::with_capacity(2 * last);
    for y in 0..last {
        let (own_lump, own_through) = row(own, y);
        let (rent_lump, rent_through) = row(rent, y);
        if y > 0 {
            out.push(IncrementalPoint {
                t_years: y as f64 - 0.5,
                saving_usd: rent_through - own_through,
            });
        }
        out.push(IncrementalPoint {
            t_years: y as f64,
            saving_usd: rent_lump - own_lump,
        });
    }
    out
}

/// Years until the cumulative saving first reaches zero (flows at mid-year accruing evenly
/// through their year), discounted at `rate` if given; `None` if it never does.
fn payback(points: &[IncrementalPoint], rate: Option<f64>) -> Option<f64> {
    let value = |p: &IncrementalPoint| match rate {
        Some(r) => p.saving_usd * (1.0 + r).powf(-p.t_years),
        None => p.saving_usd,
    };
    let mut cum = 0.0;
    for p in points {
        let v = value(p);
        let mid_year = p.t_years.fract() != 0.0;
        if cum < 0.0 && cum + v >= 0.0 {
            // A running flow accrues through the whole year around its mid-point.
            return Some(if mid_year {
                p.t_years - 0.5 + (-cum / v)
            } else {
                p.t_years
            });
        }
        cum += v;
        if p.t_years == 0.0 && cum >= 0.0 {
            return Some(0.0);
        }
    }
    None
}

fn npv_at(points: &[IncrementalPoint], r: f64) -> f64 {
    points
        .iter()
        .map(|p| p.saving_usd * (1.0 + r).powf(-p.t_years))
        .sum()
}

/// The annual rate at which the incremental flows are worth nothing today, with a note.
fn irr(points: &[IncrementalPoint]) -> (Option<f64>, String) {
    let pos = points.iter().any(|p| p.saving_usd > 0.0);
    let neg = points.iter().any(|p| p.saving_usd < 0.0);
    if !(pos && neg) {
        return (
            None,
            "the incremental flows do not change sign (owning is cheaper or dearer at every \
             point), so there is no IRR"
                .into(),
        );
    }
    // Scan from −99 % to +10,000 % a year; bisect every bracket; keep the root nearest 0.
    let grid: Vec<f64> = (0..=600)
        .map(|i| -0.99 + 102.0_f64.powf(i as f64 / 600.0) - 1.0)
        .collect();
    let mut roots = vec![];
    for w in grid.windows(2) {
        let (mut lo, mut hi) = (w[0], w[1]);
        let (flo, fhi) = (npv_at(points, lo), npv_at(points, hi));
        if !(flo.is_finite() && fhi.is_finite()) || flo.signum() == fhi.signum() {
            if flo == 0.0 {
                roots.push(lo);
            }
            continue;
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if npv_at(points, mid).signum() == flo.signum() {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        roots.push(0.5 * (lo + hi));
    }
    match roots
        .iter()
        .copied()
        .filter(|r| r.is_finite())
        .min_by(|a, b| a.abs().total_cmp(&b.abs()))
    {
        Some(r) if roots.len() == 1 => (
            Some(r),
            "the rate at which owning and renting cost the same today".into(),
        ),
        Some(r) => (
            Some(r),
            format!(
                "the incremental flows change sign more than once and {} rates solve; this is \
                 the one nearest 0",
                roots.len()
            ),
        ),
        None => (
            None,
            "no rate from −99 % to +10,000 % a year makes owning and renting cost the same".into(),
        ),
    }
}

/// `cash-flow.csv`: one line per option and row, then the payback, incremental NPV and IRR.
pub fn csv(cf: &CashFlow) -> String {
    let mut w = csv::Writer::from_writer(vec![]);
    let _ = w.write_record([
        "role",
        "tier",
        "option",
        "year",
        "capex_usd",
        "prepaid_usd",
        "engineering_usd",
        "resale_usd",
        "residual_usd",
        "running_usd",
        "owed_usd",
        "tax_at_point_usd",
        "tax_running_usd",
        "lump_usd",
        "through_year_usd",
        "nominal_usd",
        "point_factor",
        "mid_year_factor",
        "discounted_usd",
        "cumulative_usd",
        "cumulative_discounted_usd",
    ]);
    let options = std::iter::once(("recommended", &cf.recommended))
        .chain(cf.runner_up.iter().map(|u| ("runner-up", u)));
    for (role, f) in options {
        for r in &f.rows {
            let n = |x: f64| format!("{x:.2}");
            let k = |x: f64| format!("{x:.9}");
            let _ = w.write_record([
                role.to_string(),
                f.tier.clone(),
                f.option.to_string(),
                r.year.to_string(),
                n(r.capex_usd),
                n(r.prepaid_usd),
                n(r.engineering_usd),
                n(r.resale_usd),
                n(r.residual_usd),
                n(r.running_usd),
                n(r.owed_usd),
                n(r.tax_at_point_usd),
                n(r.tax_running_usd),
                n(r.lump_usd),
                n(r.through_year_usd),
                n(r.nominal_usd),
                k(r.point_factor),
                k(r.mid_year_factor),
                n(r.discounted_usd),
                n(r.cumulative_usd),
                n(r.cumulative_discounted_usd),
            ]);
        }
    }
    let mut text = String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default();
    let opt = |x: Option<f64>, d: usize| x.map_or(String::new(), |v| format!("{v:.d$}"));
    text.push_str(&format!(
        "\nincremental_npv_usd,{}\npayback_years,{}\ndiscounted_payback_years,{}\nirr,{}\n",
        opt(cf.incremental_npv_usd, 2),
        opt(cf.payback_years, 3),
        opt(cf.discounted_payback_years, 3),
        opt(cf.irr, 6),
    ));
    text
}
