//! The PDF's cash-flow table: the recommended option and the runner-up year by year, with the
//! payback period, the incremental NPV and the IRR of owning against renting — all from
//! `results.cash_flow` ([`crate::results::cashflow`]), the figures `results.json`,
//! `cash-flow.csv` and `report.xlsx` show.

use super::layout::{BODY, CHOSEN_FILL, Column, INK, Layout, Row, Table};
use crate::format::{self, usd};
use crate::results::RunResults;
use crate::results::cashflow::OptionCashFlow;

/// The section, where the summary ends; nothing without a recommendation.
pub fn section(l: &mut Layout, r: &RunResults) {
    let Some(cf) = &r.cash_flow else {
        return;
    };
    // Kept with its paragraph and the table (about ten rows, which move as a whole rather
    // than leave the heading and paragraph alone at a page's foot).
    l.heading(
        "Cash flows: the recommendation against the runner-up",
        2,
        260.0,
    );
    let rate = format::percent(r.scenario.costs.discount_rate.value, 1);
    l.paragraph(
        &format!(
            "Cash paid (positive) or received (negative) by point of time. Row 0 is the start of \
             year 1; row y holds year y's running costs, discounted at mid-year, and what is paid \
             or received at its end (the next year's capex and prepayments, sales of retired \
             hardware, and in the last year the resale of what is still owned). Rows after the \
             horizon are reservation payments still owed. Discounted at {rate}; the discounted \
             sum is each option's net present cost.{}",
            if r.scenario.costs.tax_rate.value > 0.0 {
                " After tax."
            } else {
                ""
            }
        ),
        BODY,
        false,
        INK,
        0.0,
    );
    l.gap(4.0);
    let name = |f: &OptionCashFlow| format!("{} {}", f.tier, f.option);
    let mut columns = vec![
        Column::right("Row"),
        Column::right(format!("{}: at the point", name(&cf.recommended))),
        Column::right("through the year"),
        Column::right("discounted"),
    ];
    if let Some(u) = &cf.runner_up {
        columns.push(Column::right(format!("{}: at the point", name(u))));
        columns.push(Column::right("through the year"));
        columns.push(Column::right("discounted"));
        columns.push(Column::right(
            "Runner-up − recommended, cumulative discounted",
        ));
    }
    let n = cf
        .recommended
        .rows
        .len()
        .max(cf.runner_up.as_ref().map_or(0, |u| u.rows.len()));
    let cell =
        |f: &OptionCashFlow, i: usize, pick: fn(&crate::results::cashflow::CashFlowRow) -> f64| {
            f.rows.get(i).map_or("–".to_string(), |x| usd(pick(x)))
        };
    let mut rows = vec![];
    for i in 0..n {
        let mut cells = vec![
            i.to_string(),
            cell(&cf.recommended, i, |x| x.lump_usd),
            cell(&cf.recommended, i, |x| x.through_year_usd),
            cell(&cf.recommended, i, |x| x.discounted_usd),
        ];
        if let Some(u) = &cf.runner_up {
            cells.push(cell(u, i, |x| x.lump_usd));
            cells.push(cell(u, i, |x| x.through_year_usd));
            cells.push(cell(u, i, |x| x.discounted_usd));
            let cum = |f: &OptionCashFlow| {
                f.rows
                    .iter()
                    .take(i + 1)
                    .map(|x| x.discounted_usd)
                    .sum::<f64>()
            };
            cells.push(usd(cum(u) - cum(&cf.recommended)));
        }
        rows.push(Row::new(cells));
    }
    let mut total = vec![
        "NPC".to_string(),
        String::new(),
        String::new(),
        usd(cf.recommended.net_present_cost_usd),
    ];
    if let Some(u) = &cf.runner_up {
        total.extend([
            String::new(),
            String::new(),
            usd(u.net_present_cost_usd),
            cf.incremental_npv_usd.map_or(String::new(), usd),
        ]);
    }
    rows.push(Row {
        cells: total,
        fill: Some(CHOSEN_FILL),
        bold: true,
        bold_cols: vec![],
    });
    l.table(&Table {
        columns,
        rows,
        size: 7.0,
    });
    l.gap(4.0);
    let years = |x: f64| format!("{} years", format::grouped(x, 1));
    let mut lines = vec![];
    if let Some(v) = cf.incremental_npv_usd {
        lines.push(format!(
            "Incremental NPV (runner-up − recommended): {} — the margin of the recommendation.",
            usd(v)
        ));
    }
    match (&cf.own, &cf.rent) {
        (Some(own), Some(rent)) => {
            lines.push(format!(
                "Payback of owning ({own}) against renting ({rent}): {}.",
                match (cf.payback_years, cf.discounted_payback_years) {
                    (Some(p), Some(d)) => format!("{} ({} discounted)", years(p), years(d)),
                    (Some(p), None) => format!("{} (not within the horizon discounted)", years(p)),
                    _ => format!("none — {}", cf.payback_note),
                }
            ));
            lines.push(format!(
                "IRR of owning against renting: {}.",
                match cf.irr {
                    Some(irr) => format!("{} a year ({})", format::percent(irr, 1), cf.irr_note),
                    None => format!("none — {}", cf.irr_note),
                }
            ));
        }
        _ => lines.push(format!("Payback and IRR: n/a — {}.", cf.irr_note)),
    }
    for line in lines {
        l.paragraph(&line, BODY, false, INK, 0.0);
    }
}
