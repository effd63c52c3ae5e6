//! The PDF section "How sure is this?" (issue 12), right after the executive summary: the
//! recommendation sentence with its probability and nearest flip point (the sentence the
//! terminal prints, not recomputed), the widest tornado rows, the flip points, the Monte Carlo
//! spread of every option, the tornado and distribution charts, and how the ranges and samples
//! were made. Every figure is read from `results.sensitivity` and `results.uncertainty`.

use super::layout::{
    self, BODY, CONTENT_W, Column, INK, Layout, MARGIN_X, NOTE_FILL, Op, Row, SMALL, Table,
};
use crate::format::{self, MISSING, usd};
use crate::report::charts::tornado::{self, Measure};
use crate::report::charts::{ChartSet, distribution};
use crate::report::fonts;
use crate::results::RunResults;
use crate::uncertainty::ranges;

/// The charts this section places; the charts section leaves them out.
pub const CHARTS: [&str; 2] = [tornado::NAME, distribution::NAME];

/// The section's heading, as the contents and bookmarks list it.
pub const HEADING: &str = "How sure is this?";

/// Lay out the section where the summary ends (a new page unless most of this one is free).
pub fn section(l: &mut Layout, r: &RunResults, charts: &ChartSet) {
    l.section_break();
    l.heading(HEADING, 1, 120.0);
    let (Some(s), Some(u)) = (&r.sensitivity, &r.uncertainty) else {
        l.paragraph(
            "The uncertainty analysis did not run: the scenario gives no input a range and has \
             no estimated input, the run had --no-uncertainty, or no option meets the contract. \
             Every input is listed with its basis in the assumptions.",
            BODY,
            false,
            INK,
            0.0,
        );
        return;
    };
    if let Some(rec) = &r.recommendation {
        boxed(l, &rec.sentence);
    }
    l.paragraph(
        &format!(
            "Every uncertain input ({} here: the estimates, the performance constants fitted to \
             published benchmarks, and any input the scenario gives a range) is varied. One at a time, each goes to the low and the high end of its range \
             with every other input at base (the tornado), and the value where the \
             recommendation changes is searched for (the flip point). Then all are drawn at \
             once, {} times, to see how often each option is the cheapest (the Monte Carlo). \
             The ranking figure is the net present cost throughout.",
            s.tornado.len(),
            format::count(u.samples)
        ),
        BODY,
        false,
        INK,
        0.0,
    );

    if let Some(m) = Measure::of(r).filter(|m| m.shown().is_empty()) {
        l.heading("What moves the answer", 2, 30.0);
        l.paragraph(
            &format!(
                "None of the {} uncertain inputs moves the {} within its range, one at a time.",
                s.tornado.len(),
                if m.with_runner_up {
                    "margin over the runner-up"
                } else {
                    "recommended option's net present cost"
                }
            ),
            BODY,
            false,
            INK,
            0.0,
        );
    } else if let Some(m) = Measure::of(r) {
        let shown = m.shown();
        let what = m.what();
        // Kept with the chart that follows it.
        let keep = charts
            .charts
            .iter()
            .find(|c| c.name == tornado::NAME)
            .map_or(80.0, |c| {
                CONTENT_W * c.tree.size().height() / c.tree.size().width() + 60.0
            });
        l.heading("What moves the answer", 2, keep);
        let header = if m.with_runner_up { "Margin" } else { "Cost" };
        figure(l, charts, tornado::NAME);
        l.paragraph(
            &format!(
                "{} ({}) at each input's low and high end, every other input at base; base {}. \
                 {}The widest {} of {} inputs, by swing; all are in sensitivity.csv.",
                if m.with_runner_up {
                    "Margin: net present cost of the runner-up less the recommended"
                } else {
                    "Cost: the recommended option's net present cost"
                },
                what,
                usd(m.base),
                if m.with_runner_up {
                    "A negative margin means the runner-up is cheaper there. "
                } else {
                    ""
                },
                shown.len(),
                s.tornado.len()
            ),
            BODY,
            false,
            INK,
            0.0,
        );
        l.gap(3.0);
        let money = |x: Option<f64>| x.map_or(MISSING.to_string(), usd);
        let rows = shown
            .iter()
            .map(|(row, _)| {
                let (lo, hi) = m.ends(row);
                Row::new(vec![
                    row.input.clone(),
                    format::quantity_range(row.low_value, row.high_value, &row.unit),
                    money(lo),
                    money(hi),
                    usd(row.swing_usd),
                ])
            })
            .collect();
        l.table(&Table {
            columns: vec![
                Column::left("Input"),
                Column::left("Low – high"),
                Column::right(format!("{header} at low")),
                Column::right(format!("{header} at high")),
                Column::right("Swing"),
            ],
            rows,
            size: SMALL,
        });
    }

    l.heading("What would flip it", 2, 60.0);
    let flipping: Vec<_> = s.flip_points.iter().filter(|f| f.flips).collect();
    let shown: Vec<_> = s
        .flip_points
        .iter()
        .enumerate()
        .filter(|(i, f)| f.flips || *i < tornado::SHOWN)
        .map(|(_, f)| f)
        .collect();
    l.paragraph(
        &format!(
            "For each input, the value nearest its base at which the recommendation changes, \
             searched across its range with the others at base. {} of {} inputs flip it within \
             their ranges{}.",
            flipping.len(),
            s.flip_points.len(),
            if shown.len() < s.flip_points.len() {
                format!(
                    "; the {} not listed (the narrowest swings) do not",
                    s.flip_points.len() - shown.len()
                )
            } else {
                String::new()
            }
        ),
        BODY,
        false,
        INK,
        0.0,
    );
    l.gap(3.0);
    let rows = shown
        .iter()
        .map(|f| Row {
            cells: vec![
                f.input.clone(),
                format!(
                    "{} ({})",
                    format::quantity(f.base_value, &f.unit),
                    format::quantity_range(f.search_low, f.search_high, &f.unit)
                ),
                f.verdict.clone(),
            ],
            fill: f.flips.then_some(layout::ESTIMATE_FILL),
            bold: false,
            bold_cols: if f.flips { vec![3] } else { vec![] },
        })
        .collect();
    l.table(&Table {
        columns: vec![
            Column::left("Input"),
            Column::left("Base (range searched)"),
            Column::left("Flip point"),
        ],
        rows,
        size: SMALL,
    });

    l.heading("All inputs at once", 2, 80.0);
    l.paragraph(
        &format!(
            "Net present cost of every option over {} samples with all {} uncertain inputs \
             drawn together; P(cheapest) is the share of samples in which the option is the \
             cheapest that meets the contract{}.{}",
            format::count(u.samples),
            u.inputs.len(),
            if u.options.iter().any(|o| o.p_slo_met.is_some()) {
                ", P(SLO met) the share in which its tier's planned fleet still meets it"
            } else {
                ""
            },
            if u.samples_without_recommendation > 0 {
                format!(
                    " In {} samples no option met the contract.",
                    format::count(u.samples_without_recommendation)
                )
            } else {
                String::new()
            }
        ),
        BODY,
        false,
        INK,
        0.0,
    );
    l.gap(3.0);
    l.table(&monte_carlo_table(r));
    figure(l, charts, distribution::NAME);

    l.heading("How the ranges and samples are made", 2, 60.0);
    for b in method(r) {
        l.bullet(&b, BODY);
    }
}

/// The Monte Carlo table: one row per tier × option, the recommended one shaded.
fn monte_carlo_table(r: &RunResults) -> Table {
    let Some(u) = &r.uncertainty else {
        return Table {
            columns: vec![],
            rows: vec![],
            size: SMALL,
        };
    };
    let slo = u.options.iter().any(|o| o.p_slo_met.is_some());
    let mut columns = vec![
        Column::left("Tier · option"),
        Column::right("Base"),
        Column::right("P10"),
        Column::right("P50"),
        Column::right("P90"),
        Column::right("P(cheapest)"),
    ];
    if slo {
        columns.push(Column::right("P(SLO met)"));
    }
    let best = r.recommendation.as_ref().map(|rec| &rec.best);
    let rows = u
        .options
        .iter()
        .map(|o| {
            let mut cells = vec![
                format!("{} · {}", o.tier, o.option),
                usd(o.npv_base),
                usd(o.npv_p10),
                usd(o.npv_p50),
                usd(o.npv_p90),
                format::percent(o.p_cheapest, 1),
            ];
            if slo {
                cells.push(
                    o.p_slo_met
                        .map_or(MISSING.into(), |p| format::percent(p, 1)),
                );
            }
            let chosen = best.is_some_and(|b| b.tier == o.tier && b.option == o.option);
            Row {
                cells,
                fill: chosen.then_some(layout::CHOSEN_FILL),
                bold: chosen,
                bold_cols: vec![],
            }
        })
        .collect();
    Table {
        columns,
        rows,
        size: SMALL,
    }
}

/// The method, from the results: sampling, where each range comes from, the tornado's ends
/// and the flip search.
fn method(r: &RunResults) -> Vec<String> {
    let Some(u) = &r.uncertainty else {
        return vec![];
    };
    let mut out = vec![format!(
        "Sampling: {} samples on a Latin hypercube ({}): each input's range is cut into {} \
         equally likely strata and every stratum is drawn once, in an order shuffled per input; \
         the samples come from the run's seed, so the answer is the same at any thread count.",
        format::count(u.samples),
        u.method,
        format::count(u.samples)
    )];
    let rule = u
        .inputs
        .iter()
        .filter(|i| i.range_source.starts_with("estimate rule"))
        .count();
    if rule > 0 {
        out.push(format!(
            "Ranges of {rule} inputs by the general rule for an {}. Each is clamped to the \
             values the input accepts (a share stays at or below 1).",
            ranges::ESTIMATE_RULE
        ));
    }
    let fitted: Vec<&str> = u
        .inputs
        .iter()
        .filter(|i| i.range_source.starts_with("fit rule"))
        .map(|i| i.input.as_str())
        .collect();
    if !fitted.is_empty() {
        out.push(format!(
            "Ranges of {} constants fitted to published benchmarks ({}) by the rule for a {}.",
            fitted.len(),
            fitted.join(", "),
            ranges::FIT_RULE
        ));
    }
    let listed = |i: &&crate::uncertainty::InputRange| {
        !i.range_source.starts_with("estimate rule") && !i.range_source.starts_with("fit rule")
    };
    let own: Vec<String> = u
        .inputs
        .iter()
        .filter(listed)
        .map(|i| format!("{} {} {} ({})", i.input, i.label, i.unit, i.range_source))
        .collect();
    if !own.is_empty() {
        out.push(format!(
            "Ranges of their own (declared with the input from its source, a measured \
             number's own spread, or set in the scenario's [uncertainty] table): {}.",
            own.join("; ")
        ));
    }
    out.push(
        "Tornado ends: the lowest and highest value of a bounded distribution (uniform, \
         triangular, PERT), P10 and P90 of an unbounded one (normal, lognormal). Flip points: \
         searched over the whole support, or P1 to P99, on a grid each side of the base and \
         then bisected."
            .into(),
    );
    out.push(match &u.replan {
        Some(how) => format!(
            "Cost inputs re-cost the planned fleets; performance inputs (efficiencies, peaks, \
             traffic growth, …) re-plan each tier first ({how}), which is where P(SLO met) comes \
             from."
        ),
        None => "Only cost inputs vary: the planned fleets are re-costed, never re-planned.".into(),
    });
    out
}

/// The recommendation sentence in a tinted box.
fn boxed(l: &mut Layout, sentence: &str) {
    let pad = 8.0;
    let size = 10.0;
    let lines = fonts::wrap(sentence, CONTENT_W - 2.0 * pad, size, false);
    // Keep the box on one page (1.3: about the layout's line height), then size it to the lines
    // as laid out and put it under them.
    l.ensure(2.0 * pad + lines.len() as f32 * size * 1.3);
    let (top, first) = (l.y, l.pages.last().map_or(0, |p| p.ops.len()));
    l.gap(pad);
    l.as_paragraph(|l| {
        for s in lines {
            l.line(MARGIN_X + pad, size, false, INK, &s);
        }
    });
    l.gap(pad);
    let rect = Op::Rect {
        x: MARGIN_X,
        y: top,
        w: CONTENT_W,
        h: l.y - top,
        fill: NOTE_FILL,
    };
    let page = l.page();
    l.push_on(page, Some(first), rect, layout::Mark::Artifact);
    l.gap(6.0);
}

/// Place the chart `name` with its figure number and caption, registered for the contents as
/// the charts section registers its figures; nothing when it was not drawn (the charts section
/// lists it among the charts not shown, with the reason).
fn figure(l: &mut Layout, charts: &ChartSet, name: &str) {
    let Some((i, c)) = charts
        .charts
        .iter()
        .enumerate()
        .find(|(_, c)| c.name == name)
    else {
        return;
    };
    l.gap(6.0);
    super::content::place_figure(l, i, c);
}
