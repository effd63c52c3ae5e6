//! What the report says, page by page: the title page with the recommendation and contents,
//! the executive summary, the assumptions, the charts and the method with its caveats. Every
//! number comes from [`RunResults`], formatted as the terminal table formats it, so the PDF,
//! `results.json` and the terminal agree.

use super::ReportDate;
use super::layout::{
    self, BODY, CONTENT_W, Column, ESTIMATE_FILL, GREY, INK, Layout, MARGIN_X, NOTE_FILL, Op,
    PAGE_W, RULE, Row, SMALL, Table,
};
use crate::cite::Basis;
use crate::format::{self, MISSING, usd, usd_cents};
use crate::report::charts::ChartSet;
use crate::report::fonts;
use crate::results::RunResults;
use crate::results::decision;

/// Lay the whole report out on A4.
pub fn lay_out(r: &RunResults, charts: &ChartSet, date: &ReportDate) -> Layout {
    lay_out_on(r, charts, date, layout::Paper::A4)
}

/// Lay the whole report out on `paper`: page 1 is the decision, page 2 the scenario and the
/// contents, then the sections.
pub fn lay_out_on(
    r: &RunResults,
    charts: &ChartSet,
    date: &ReportDate,
    paper: layout::Paper,
) -> Layout {
    let mut l = Layout::on(paper);
    l.figure_numbers = figure_numbers(r, charts);
    title_page(&mut l, r);
    l.new_page();
    let contents_at = scenario_page(&mut l, r, date);
    let contents_page = l.page();
    // The contents' place in the reading order; filled in once the pages are known.
    let contents_block = l.block(layout::BlockKind::Paragraph, 1);
    l.new_page();
    // The body a committee reads: the decision, the summary, how sure it is, the cash flows,
    // the key charts and the method. The detail behind it follows in the appendices.
    summary(&mut l, r);
    super::uncertainty::section(&mut l, r, charts);
    super::cashflow::section(&mut l, r);
    figures(&mut l, r, charts, Part::Body);
    method(&mut l, r, charts);
    l.section_break();
    l.heading(APPENDICES, 1, 120.0);
    l.paragraph(
        "The detail behind the body: every input with its source (A), the charts of each tier \
         (B), and the energy, carbon and break-even tables (C).",
        BODY,
        false,
        INK,
        0.0,
    );
    l.gap(6.0);
    assumptions(&mut l, r);
    figures(&mut l, r, charts, Part::Appendix);
    appendix_tables(&mut l, r, charts);
    contents(&mut l, contents_page, contents_at, contents_block);
    l
}

/// The heading that ends the body: what follows it is the appendices.
pub const APPENDICES: &str = "Appendices";

/// The body or the appendix, for the charts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Body,
    Appendix,
}

/// Whether chart `name` is a key chart, shown in the body: the comparisons a decision rests on
/// (cumulative cost, break-even, cost per million, the latency distribution against the
/// contract) and the recommended tier's cost breakdown. The capacity and design-day charts,
/// the latency curves and the other tiers' breakdowns are detail, in appendix B.
fn key_chart(r: &RunResults, name: &str) -> bool {
    match name {
        "cumulative-cost" | "break-even" | "cost-per-million" | "latency-cdf" => true,
        _ => r.recommendation.as_ref().is_some_and(|rec| {
            name == format!(
                "cost-breakdown-{}",
                crate::report::charts::draw::slug(&rec.best.tier)
            )
        }),
    }
}

/// Appendix C: the energy and carbon of every option, and the break-even table.
fn appendix_tables(l: &mut Layout, r: &RunResults, charts: &ChartSet) {
    let has_energy = r.tiers.iter().any(|t| !t.options.is_empty());
    if !has_energy && r.break_even.is_empty() {
        return;
    }
    l.section_break();
    l.heading("C  Energy, carbon and break-even", 1, 120.0);
    energy_and_carbon(l, r);
    break_even_table(l, r, charts);
}

/// The footer of page `i` of `n`: provenance on the left, "page i of n" on the right.
pub fn footer(r: &RunResults, i: usize, n: usize, page_h: f32) -> Vec<Op> {
    let y = page_h - 40.0;
    let size = 7.5;
    let right = format!("page {} of {n}", i + 1);
    let rw = fonts::text_width(&right, size, false);
    let left = fonts::ellipsize(
        &format!("tco-sim {} · {}", r.tool_version, r.scenario.name),
        CONTENT_W - rw - 20.0,
        size,
        false,
    );
    vec![
        Op::Line {
            x1: MARGIN_X,
            y1: y,
            x2: MARGIN_X + CONTENT_W,
            y2: y,
            width: 0.5,
            color: RULE,
        },
        Op::Text {
            x: MARGIN_X,
            y: y + 12.0,
            size,
            bold: false,
            color: GREY,
            text: left,
        },
        Op::Text {
            x: PAGE_W - MARGIN_X - rw,
            y: y + 12.0,
            size,
            bold: false,
            color: GREY,
            text: right,
        },
    ]
}

/// An input's value by scope and field, if the run recorded it.
/// A key: value line with the value wrapped beside the key.
fn fact(l: &mut Layout, key: &str, value: &str) {
    let key_w = 118.0;
    let lines = fonts::wrap(value, CONTENT_W - key_w, BODY, false);
    l.ensure(lines.len() as f32 * BODY * 1.3);
    let top = l.y;
    l.as_paragraph(|l| {
        l.line(MARGIN_X, BODY, true, INK, key);
        l.y = top;
        for v in lines {
            l.line(MARGIN_X + key_w, BODY, false, INK, &v);
        }
    });
    l.gap(1.5);
}

/// Page 1, the decision: what to buy, what it commits to, by how much it wins, how sure it is,
/// the three risks to weigh, and where the prices come from.
fn title_page(l: &mut Layout, r: &RunResults) {
    let s = &r.scenario;
    l.gap(20.0);
    l.line(
        MARGIN_X,
        10.0,
        false,
        GREY,
        "tco-sim procurement report · where to serve the model, and what it will cost",
    );
    l.gap(8.0);
    l.paragraph(&s.name, 19.0, true, INK, 0.0);
    l.gap(10.0);

    // The recommendation in a tinted box.
    let sentence = r.recommendation.as_ref().map_or_else(
        || "No option meets the SLO in every year: see the notes in the executive summary.".into(),
        |rec| rec.sentence.clone(),
    );
    let pad = 10.0;
    let lines = fonts::wrap(&sentence, CONTENT_W - 2.0 * pad, 11.0, false);
    let h = 2.0 * pad + 13.0 * 1.3 + lines.len() as f32 * 11.0 * 1.3 + 4.0;
    l.ensure(h);
    l.push(Op::Rect {
        x: MARGIN_X,
        y: l.y,
        w: CONTENT_W,
        h,
        fill: NOTE_FILL,
    });
    l.gap(pad);
    l.line(MARGIN_X + pad, 13.0, true, INK, "Recommendation");
    l.gap(4.0);
    l.as_paragraph(|l| {
        for s in lines {
            l.line(MARGIN_X + pad, 11.0, false, INK, &s);
        }
    });
    l.gap(pad + 8.0);

    if let Some(rec) = &r.recommendation {
        let best = r
            .tiers
            .iter()
            .find(|t| t.name == rec.best.tier)
            .and_then(|t| t.options.iter().find(|o| o.option == rec.best.option));
        fact(l, "Recommended", &decision::label_of(&rec.best));
        if let Some(c) = decision::commitment(r) {
            let mut v = format!("{} up front in year 1; {}", usd(c.upfront_usd), c.term);
            if c.owed_after_horizon_usd > 0.0 {
                v.push_str(&format!(
                    "; {} still owed after year {} (in the net present cost, not in the cash)",
                    usd(c.owed_after_horizon_usd),
                    s.horizon_years
                ));
            } else {
                v.push_str(&format!("; nothing owed after year {}", s.horizon_years));
            }
            fact(l, "Commitment", &v);
        }
        fact(
            l,
            &format!("{}-year cash", s.horizon_years),
            &match best {
                Some(o) => format!("{} (NPV {})", usd(rec.best.total_usd), usd(o.npv_usd)),
                None => usd(rec.best.total_usd),
            },
        );
        fact(
            l,
            "Net present cost",
            &match best {
                Some(o) => ranking_explained(o, s.horizon_years),
                None => usd(rec.best.net_present_cost_usd),
            },
        );
        if let Some(o) = best {
            let mut unit_costs = vec![];
            if let Some(cpm) = o.cost_per_million_usd {
                unit_costs.push(format!("{} per million requests", usd_cents(cpm)));
            }
            if let Some(cpt) = o.cost_per_million_tokens_usd {
                unit_costs.push(format!("{} per million tokens", usd_cents(cpt)));
            }
            if !unit_costs.is_empty() {
                fact(l, "Unit cost", &unit_costs.join("; "));
            }
        }
        if let (Some(ru), Some(m), Some(f)) = (&rec.runner_up, rec.margin_usd, rec.margin_fraction)
        {
            fact(
                l,
                "Margin",
                &format!(
                    "{} ({}) less than the runner-up, {}",
                    usd(m),
                    format::percent(f, 1),
                    decision::label_of(ru)
                ),
            );
        }
        fact(
            l,
            "How sure",
            &decision::how_sure(r).unwrap_or_else(|| {
                "not analysed in this run (run without --no-uncertainty for the probability \
                 and the flip points)"
                    .into()
            }),
        );
        if let Some(p) = decision::price_basis(r) {
            fact(l, "Prices", &p);
        }
        fact(l, "Latency contract", &s.slo);
    }

    let risks = decision::top_risks(r);
    if !risks.is_empty() {
        l.gap(8.0);
        l.line(MARGIN_X, 11.5, true, INK, "Top risks");
        l.gap(2.0);
        for t in &risks {
            l.bullet(t, BODY);
        }
    }
    let flagged = decision::flagged_inputs(r);
    if !flagged.is_empty() {
        l.gap(4.0);
        l.paragraph(
            &format!(
                "Warning: {} input{} marked OUTLIER or STALE by {} source ({}); {} labelled in \
                 the assumptions (appendix A).",
                flagged.len(),
                if flagged.len() == 1 { " is" } else { "s are" },
                if flagged.len() == 1 { "its" } else { "their" },
                flagged
                    .iter()
                    .map(|(i, f)| format!("{} · {}: {f}", i.scope, i.field))
                    .collect::<Vec<_>>()
                    .join("; "),
                if flagged.len() == 1 {
                    "it is"
                } else {
                    "they are"
                },
            ),
            BODY,
            true,
            INK,
            0.0,
        );
    }
    let estimates = r
        .inputs
        .iter()
        .filter(|i| i.basis == Basis::Estimate)
        .count();
    if estimates > 0 {
        l.gap(4.0);
        l.paragraph(
            &format!(
                "{estimates} of {} inputs are estimates; they are shaded in the assumptions \
                 (appendix A).",
                r.inputs.len()
            ),
            BODY,
            false,
            GREY,
            0.0,
        );
    }
}

/// Page 2: the scenario in brief; returns where the contents list goes.
fn scenario_page(l: &mut Layout, r: &RunResults, date: &ReportDate) -> f32 {
    let s = &r.scenario;
    l.line(MARGIN_X, 13.0, true, INK, "The scenario");
    l.gap(4.0);
    if let Some(d) = &s.description {
        l.paragraph(d, 10.0, false, GREY, 0.0);
        l.gap(6.0);
    }
    fact(l, "Workload", &format!("{} ({})", s.workload, s.precision));
    fact(l, "Traffic", &s.traffic);
    fact(l, "Latency contract", &s.slo);
    fact(l, "Horizon", &format!("{} years", s.horizon_years));
    fact(l, "Fleet sizing", &s.capacity_method);
    fact(l, "Scenario file", &s.file);
    fact(l, "Seed", &s.seed.to_string());
    fact(l, "Report date", &date.iso());
    fact(l, "Tool", &format!("{} {}", r.tool, r.tool_version));
    l.gap(16.0);
    l.y
}

/// Write the contents list onto its page, now that the sections' pages are known. Titles wrap
/// rather than being cut; a list longer than the page goes on in the PDF's bookmarks, and says so.
fn contents(l: &mut Layout, page: usize, at: f32, block: usize) {
    // Sections and figures; the sub-headings are in the PDF's bookmarks.
    let entries: Vec<(String, u8, usize)> = l
        .sections
        .iter()
        .filter(|s| s.level <= 1 || s.title.starts_with("Figure "))
        .map(|s| (s.title.clone(), s.level, s.page))
        .collect();
    let mut ops = vec![];
    let mut y = at;
    let size = 9.5;
    let line_h = size * 1.45;
    ops.push(Op::Text {
        x: MARGIN_X,
        y: y + 12.0,
        size: 12.0,
        bold: true,
        color: INK,
        text: "Contents".into(),
    });
    y += 20.0;
    let bottom = l.page_h - layout::MARGIN_BOTTOM;
    let total = entries.len();
    for (k, (title, level, page)) in entries.into_iter().enumerate() {
        let indent = if level <= 1 { 0.0 } else { 14.0 };
        let bold = level <= 1;
        let num = format!("{}", page + 1);
        let nw = fonts::text_width(&num, size, bold);
        let room = CONTENT_W - indent - nw - 30.0;
        let lines = fonts::wrap(&title, room, size, bold);
        if y + lines.len() as f32 * line_h > bottom - line_h && k + 1 < total {
            ops.push(Op::Text {
                x: MARGIN_X,
                y: y + size,
                size,
                bold: false,
                color: GREY,
                text: format!("{} more entries are in the PDF's bookmarks.", total - k),
            });
            break;
        }
        let n = lines.len();
        for (j, t) in lines.into_iter().enumerate() {
            ops.push(Op::Text {
                x: MARGIN_X + indent + if j > 0 { 10.0 } else { 0.0 },
                y: y + size,
                size,
                bold,
                color: INK,
                text: t.clone(),
            });
            if j + 1 < n {
                y += line_h;
                continue;
            }
            let tw = fonts::text_width(&t, size, bold) + if j > 0 { 10.0 } else { 0.0 };
            let base = y + size;
            // Dot leaders from the title's last line to the page number.
            let dot = fonts::text_width(" .", size, false);
            let (x0, x1) = (
                MARGIN_X + indent + tw + 6.0,
                MARGIN_X + CONTENT_W - nw - 6.0,
            );
            if x1 > x0 + dot {
                let n = ((x1 - x0) / dot).floor() as usize;
                ops.push(Op::Text {
                    x: x1 - n as f32 * dot,
                    y: base,
                    size,
                    bold: false,
                    color: RULE,
                    text: " .".repeat(n),
                });
            }
            ops.push(Op::Text {
                x: MARGIN_X + CONTENT_W - nw,
                y: base,
                size,
                bold,
                color: INK,
                text: num.clone(),
            });
        }
        y += line_h;
    }
    // The list is one paragraph of the structure, placed where the page reads it (its block
    // was reserved there); the dot leaders are decoration.
    let m = l.leaf(block, 0);
    for op in ops {
        let mark = match &op {
            Op::Text { color, .. } if *color == RULE => layout::Mark::Artifact,
            _ => m,
        };
        l.push_on(page, None, op, mark);
    }
}

/// "Figure 2" for the chart named `name`, or a plain description when it was not drawn.
fn figure_ref(l: &Layout, charts: &ChartSet, name: &str) -> String {
    charts
        .charts
        .iter()
        .position(|c| c.name == name)
        .map_or_else(
            || "the break-even chart".into(),
            |i| {
                format!(
                    "Figure {}",
                    l.figure_numbers.get(i).copied().unwrap_or(i + 1)
                )
            },
        )
}

fn summary(l: &mut Layout, r: &RunResults) {
    let years = r.scenario.horizon_years;
    l.heading("1  Executive summary", 1, 80.0);
    l.paragraph(
        &format!(
            "Each tier and deployment option over {years} years. Totals are cash spent in \
             nominal US dollars; NPV discounts them at {} a year (capex at the start of its year, \
             running costs at mid-year). Options are ranked on net present cost (the NPV, \
             less the resale of owned hardware at the end, plus reservations owed after it), \
             among tiers that meet the latency contract ({}) in every year. The \
             recommended row is shaded.",
            format::percent_short(r.scenario.costs.discount_rate.value, 1),
            r.scenario.slo
        ),
        BODY,
        false,
        INK,
        0.0,
    );
    l.gap(6.0);

    l.heading("Cost by tier and option", 2, 60.0);
    let simulated = r
        .tiers
        .iter()
        .any(|t| t.capacity.iter().any(|c| c.latency.is_some()));
    let options = || r.tiers.iter().flat_map(|t| &t.options);
    let resale = options().any(|o| o.resale_value_usd > 0.0);
    let owed = options().any(|o| o.committed_beyond_horizon_usd > 0.0);
    let tokens = options().any(|o| o.cost_per_million_tokens_usd.is_some());
    let sc = &r.scenario;
    let pct = format::percentile(sc.slo_percentile);
    // The contracted metrics, each with its bound: what the "meets SLO" verdict judges.
    let metrics: Vec<(String, Metric)> = [
        (sc.slo_latency_s, Metric::EndToEnd, "end-to-end"),
        (sc.slo_ttft_s, Metric::Ttft, "TTFT"),
        (sc.slo_tpot_s, Metric::Tpot, "TPOT"),
    ]
    .into_iter()
    .filter_map(|(b, m, name)| {
        b.map(|b| {
            (
                format!("{name} {pct} y{years} (≤ {})", format::duration(b)),
                m,
            )
        })
    })
    .collect();
    let mut cols = vec![
        Column::left("Tier"),
        Column::left("Option"),
        Column::right(format!("Units y1–y{years}")),
    ];
    if simulated {
        cols.extend(metrics.iter().map(|(h, _)| Column::right(h.clone())));
    }
    cols.push(Column::right(format!("{years}-year cash")));
    cols.push(Column::right("Net present cost"));
    cols.push(Column::right("$ / M requests"));
    if tokens {
        cols.push(Column::right("$ / M tokens"));
    }
    cols.push(Column::left("Meets SLO"));
    let best = r
        .recommendation
        .as_ref()
        .map(|rec| (rec.best.tier.clone(), rec.best.option));
    let mut rows = vec![];
    let mut not_costed = vec![];
    for t in &r.tiers {
        if let Some(why) = &t.infeasible {
            // No fleet of this tier meets the contract: no units, no costs, and the reason.
            let mut cells = vec![t.name.clone(), "infeasible".into(), MISSING.into()];
            cells.resize(cols.len() - 1, MISSING.into());
            cells.push("no (see below)".into());
            rows.push(Row {
                cells,
                fill: None,
                bold: false,
                bold_cols: vec![1],
            });
            not_costed.push(format!("{}: {why}.", t.name));
            continue;
        }
        if t.options.is_empty() {
            let mut cells = vec![t.name.clone(), "(no option priced)".into(), MISSING.into()];
            cells.resize(cols.len(), MISSING.into());
            rows.push(Row::new(cells));
            continue;
        }
        let status = decision::tier_status(t, &sc.bounds());
        for o in &t.options {
            // What the option pays for: on-prem's installed units include its spares.
            let paid: Vec<String> = o.yearly.iter().map(|y| format::count(y.units)).collect();
            let mut cells = vec![t.name.clone(), o.option.label().into(), paid.join(" ")];
            if simulated {
                let l = t.capacity.last().and_then(|c| c.latency.as_ref());
                for (_, m) in &metrics {
                    cells.push(l.map_or(MISSING.into(), |l| m.show(l)));
                }
            }
            cells.push(usd(o.total_usd));
            cells.push(usd(o.net_present_cost_usd));
            cells.push(o.cost_per_million_usd.map_or(MISSING.into(), usd_cents));
            if tokens {
                cells.push(
                    o.cost_per_million_tokens_usd
                        .map_or(MISSING.into(), usd_cents),
                );
            }
            cells.push(status.label().into());
            let chosen = best
                .as_ref()
                .is_some_and(|(bt, bo)| *bt == t.name && *bo == o.option);
            rows.push(Row {
                cells,
                fill: chosen.then_some(layout::CHOSEN_FILL),
                bold: chosen,
                bold_cols: vec![],
            });
        }
    }
    if rows.is_empty() {
        l.paragraph("The run has no tiers.", BODY, false, INK, 0.0);
    } else {
        l.table(&Table {
            columns: cols,
            rows,
            size: SMALL,
        });
        if !not_costed.is_empty() {
            l.paragraph(
                "Not costed, because no fleet size meets the contract:",
                SMALL,
                true,
                INK,
                0.0,
            );
            for n in &not_costed {
                l.bullet(n, SMALL);
            }
        }
        if simulated {
            l.paragraph(
                &format!(
                    "Latency: the {pct} of the last year's planned fleet on its design traffic, \
                     with its 95 % confidence half-width where the replications give one. \
                     \"marginal\": the measured value meets the bound but its confidence interval \
                     crosses it. Tokens: prompt and output at the workload's mean counts."
                ),
                SMALL,
                false,
                GREY,
                0.0,
            );
            l.gap(4.0);
        }
        ranking_table(l, r, resale, owed);
    }

    if !r.references.is_empty() {
        l.heading("Against published figures", 2, 60.0);
        l.paragraph(
            "The published figures the scenario names, beside this run's. A large change is \
             expected where this run counts costs the publication leaves out.",
            BODY,
            false,
            INK,
            0.0,
        );
        l.gap(3.0);
        let rows = r
            .references
            .iter()
            .map(|x| Row::new(crate::report::table::reference_cells(x)))
            .collect();
        l.table(&Table {
            columns: vec![
                Column::left("Reference"),
                Column::left("Tier · option"),
                Column::right("Published total"),
                Column::right("This run"),
                Column::right("Change"),
                Column::right("Published break-even"),
                Column::left("This run's break-even (seed form; exact)"),
            ],
            rows,
            size: SMALL,
        });
    }

    if !r.notes.is_empty() {
        l.heading("Notes", 2, 30.0);
        for n in &r.notes {
            l.bullet(&n.to_string(), BODY);
        }
    }
}

/// The break-even daily use of each on-prem tier against the cloud (seed 004 §4).
fn break_even_table(l: &mut Layout, r: &RunResults, charts: &ChartSet) {
    if !r.break_even.is_empty() {
        l.heading("Break-even daily use", 2, 60.0);
        l.paragraph(
            &format!(
                "Each option's net present cost, the figure the options are ranked on, as a \
                 straight line in hours per day of full use of its planned fleet ({}). Only \
                 hourly use scales: on-prem's dynamic power, on-demand's instance-hours, a \
                 hybrid's burst; egress and every other cost is fixed at the actual traffic. \
                 Exact: where the on-prem and cloud lines cross. In use: where each side \
                 actually runs (on-prem: 24 h × its mean utilization; cloud: the autoscaled \
                 instance-hours over the planned fleet's); as they run: which is cheaper there, \
                 the ranking's verdict. Seed form (seed 004): 24 h × on-prem cash ÷ cloud cash \
                 at 24 h/day, shown against on-demand only, where it is a break-even. A \
                 cross-hardware row compares fleets of different hardware and size.",
                figure_ref(l, charts, "break-even")
            ),
            BODY,
            false,
            INK,
            0.0,
        );
        l.gap(3.0);
        let rows = r
            .break_even
            .iter()
            .map(|b| {
                Row::new(
                    crate::report::table::break_even_cells(b)
                        .into_iter()
                        .map(|c| c.replace('\n', " — "))
                        .collect(),
                )
            })
            .collect();
        l.table(&Table {
            columns: vec![
                Column::left("On-prem tier"),
                Column::left("Against"),
                Column::left("Exact"),
                Column::right("In use (on-prem; cloud)"),
                Column::left("As they run"),
                Column::right("Seed form"),
            ],
            rows,
            size: SMALL,
        });
    }
}

/// A contracted latency metric.
#[derive(Debug, Clone, Copy)]
enum Metric {
    EndToEnd,
    Ttft,
    Tpot,
}

impl Metric {
    /// The metric's value at plan, with its interval where one was measured.
    fn show(self, l: &crate::capacity::LatencyAtPlan) -> String {
        match self {
            Metric::EndToEnd => format::duration_ci(l.slo_percentile_s, l.slo_ci95_s),
            Metric::Ttft => l
                .ttft_s
                .map_or(MISSING.into(), |v| format::duration_ci(v, l.ttft_ci95_s)),
            Metric::Tpot => l
                .tpot_s
                .map_or(MISSING.into(), |v| format::duration_ci(v, l.tpot_ci95_s)),
        }
    }
}

/// Energy and carbon of every option (seed 004 §5), the cells the terminal shows.
fn energy_and_carbon(l: &mut Layout, r: &RunResults) {
    let rows: Vec<Row> = r
        .tiers
        .iter()
        .flat_map(|t| {
            t.options
                .iter()
                .map(|o| Row::new(crate::report::table::efficiency_cells(&t.name, o)))
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let c = &r.scenario.costs;
    l.heading("Energy and carbon", 2, 60.0);
    l.paragraph(
        &format!(
            "Facility energy of the units each option keeps running over {} years (IT power from \
             the profile's idle and peak power at the planned load, times a PUE of {} on-prem and \
             {} in the cloud), per request served, and carbon at {} kg CO2e per kWh \
             (location-based). Requests per second per watt divide the last year's peak rate by \
             the IT power of the planned fleet carrying it, so they compare hardware, not data \
             centres. The cloud's energy is not in its cost: the hourly price already pays for it.",
            r.scenario.horizon_years,
            format::trim(c.pue.value),
            format::trim(c.cloud_pue.value),
            format::trim(c.grid_kg_co2e_per_kwh.value),
        ),
        BODY,
        false,
        INK,
        0.0,
    );
    l.gap(3.0);
    l.table(&Table {
        columns: vec![
            Column::left("Tier"),
            Column::left("Option"),
            Column::right("Energy (MWh)"),
            Column::right("J per request"),
            Column::right("kWh per million"),
            Column::right("Req/s per W (peak)"),
            Column::right("t CO2e"),
        ],
        rows,
        size: SMALL,
    });
}

fn assumptions(l: &mut Layout, r: &RunResults) {
    l.section_break();
    l.heading("A  Assumptions", 1, 120.0);
    let estimates = r
        .inputs
        .iter()
        .filter(|i| i.basis == Basis::Estimate)
        .count();
    l.paragraph(
        &format!(
            "Every input the run used, with its value, its basis, its source and the source's \
             date. Basis: cited (taken from the source as written), derived (computed from cited \
             figures; the arithmetic is in the note), estimate (no firm source), measured (on \
             real hardware), user input (given in the scenario), fit (fitted to published \
             benchmarks by the accuracy suite, varied by its held-out error in the uncertainty \
             analysis). {estimates} of the {} inputs \
             are estimates: their rows are shaded and marked ESTIMATE. Inputs whose source or \
             note marks them OUTLIER or STALE are shaded too, with the flag beside their basis. \
             Replace them with your own figures where you have them; the answer depends on them.",
            r.inputs.len()
        ),
        BODY,
        false,
        INK,
        0.0,
    );
    l.gap(6.0);
    if r.inputs.is_empty() {
        l.paragraph("The run recorded no inputs.", BODY, false, INK, 0.0);
        return;
    }
    let rows = r
        .inputs
        .iter()
        .map(|i| {
            let estimate = i.basis == Basis::Estimate;
            let mut source = i.source.clone();
            if !i.date.is_empty() {
                source.push_str(&format!(" ({})", i.date));
            }
            if let Some(n) = &i.note {
                source.push_str(&format!(". Note: {n}"));
            }
            let flag = decision::input_flag(i);
            let (field, unit) = field_and_unit(&i.field);
            let basis = match (estimate, flag) {
                (_, Some(f)) => format!("{} — {f}", i.basis.label()),
                (true, None) => "ESTIMATE".into(),
                (false, None) => i.basis.label().into(),
            };
            Row {
                cells: vec![
                    format!("{} · {field}", i.scope),
                    format::quantity(i.value, unit),
                    basis,
                    source,
                ],
                fill: (estimate || flag.is_some()).then_some(ESTIMATE_FILL),
                bold: false,
                bold_cols: if estimate || flag.is_some() {
                    vec![2]
                } else {
                    vec![]
                },
            }
        })
        .collect();
    l.table(&Table {
        columns: vec![
            Column::left("Input"),
            Column::right("Value"),
            Column::left("Basis"),
            Column::left("Source (date) and note"),
        ],
        rows,
        size: 7.5,
    });
}

/// Place chart `i` with its figure number and caption, registered for the contents and the
/// bookmarks at the place it lands (the charts section and "How sure is this?" both use it).
pub(super) fn place_figure(l: &mut Layout, i: usize, c: &crate::report::charts::Chart) {
    let size = c.tree.size();
    let aspect = size.height() / size.width();
    let n = l.figure_numbers.get(i).copied().unwrap_or(i + 1);
    let caption = format!("Figure {n} ({}). {}", c.name, c.caption);
    l.figure(i, aspect, &caption, &c.title);
    // Registered where the chart landed (the layout may have moved it to a new page).
    let y = l
        .pages
        .last()
        .and_then(|p| {
            p.ops.iter().rev().find_map(|op| match op {
                Op::Chart { index, y, .. } if *index == i => Some(*y),
                _ => None,
            })
        })
        .unwrap_or(l.y);
    l.sections.push(layout::Section {
        title: format!("Figure {n}: {}", c.title),
        level: 2,
        page: l.page(),
        y,
    });
}

/// Figure numbers in the order the charts are placed: the uncertainty charts in "How sure is
/// this?", the key charts (section 2), then the detail charts (appendix B). `numbers[i]` is
/// chart `i`'s.
fn figure_numbers(r: &RunResults, charts: &ChartSet) -> Vec<usize> {
    let uncertain = |name: &str| super::uncertainty::CHARTS.contains(&name);
    let mut order: Vec<usize> = vec![];
    for name in super::uncertainty::CHARTS {
        order.extend(charts.charts.iter().position(|c| c.name == name));
    }
    for key in [true, false] {
        order.extend(
            charts
                .charts
                .iter()
                .enumerate()
                .filter(|(_, c)| !uncertain(&c.name) && key_chart(r, &c.name) == key)
                .map(|(i, _)| i),
        );
    }
    let mut numbers = vec![0; charts.charts.len()];
    for (k, &i) in order.iter().enumerate() {
        numbers[i] = k + 1;
    }
    numbers
}

/// The charts of `part`: the key charts in the body (section 2), the other tiers' detail in
/// appendix B, which also lists the charts not drawn.
fn figures(l: &mut Layout, r: &RunResults, charts: &ChartSet, part: Part) {
    let shown: Vec<(usize, &crate::report::charts::Chart)> = charts
        .charts
        .iter()
        .enumerate()
        // The tornado and the distribution are placed in "How sure is this?".
        .filter(|(_, c)| !super::uncertainty::CHARTS.contains(&c.name.as_str()))
        .filter(|(_, c)| (part == Part::Body) == key_chart(r, &c.name))
        .collect();
    if part == Part::Appendix && shown.is_empty() && charts.skipped.is_empty() {
        return;
    }
    l.section_break();
    // The heading stays with its first chart at the smallest size the layout would draw it.
    let keep = shown.first().map_or(200.0, |(i, c)| {
        let size = c.tree.size();
        let n = l.figure_numbers.get(*i).copied().unwrap_or(i + 1);
        let caption = format!("Figure {n} ({}). {}", c.name, c.caption);
        l.figure_min_height(size.height() / size.width(), &caption)
    });
    match part {
        Part::Body => l.heading("2  Key charts", 1, keep),
        Part::Appendix => l.heading("B  Detail charts", 1, keep),
    }
    if charts.charts.is_empty() {
        l.paragraph("This run has no data to chart.", BODY, false, INK, 0.0);
    } else if shown.is_empty() {
        l.paragraph(
            "Every chart of this run is in the body (section 2).",
            BODY,
            false,
            INK,
            0.0,
        );
    }
    for (i, c) in shown {
        place_figure(l, i, c);
    }
    if part == Part::Appendix && !charts.skipped.is_empty() {
        // Charts left out for the same reason share one line.
        let mut lines: Vec<(Vec<String>, String)> = vec![];
        for s in &charts.skipped {
            let what = format!("{} ({})", s.what, s.name);
            match lines.iter_mut().find(|(_, r)| *r == s.reason) {
                Some((w, _)) => w.push(what),
                None => lines.push((vec![what], s.reason.clone())),
            }
        }
        let lines: Vec<String> = lines
            .into_iter()
            .map(|(w, r)| {
                let mut w = w.join("; ");
                if let Some(first) = w.get(..1) {
                    w = first.to_uppercase() + &w[1..];
                }
                format!("{w}: {r}.")
            })
            .collect();
        let h: f32 = lines.iter().map(|t| Layout::bullet_height(t, BODY)).sum();
        l.heading("Charts not shown", 2, h);
        for t in &lines {
            l.bullet(t, BODY);
        }
    }
}

fn method(l: &mut Layout, r: &RunResults, charts: &ChartSet) {
    let years = r.scenario.horizon_years;
    l.section_break();
    l.heading("3  Method and caveats", 1, 120.0);
    l.heading("How the numbers are made", 2, 60.0);
    let bullets = [
        format!(
            "Capacity: each tier's fleet for each year is sized to carry that year's busiest-hour \
             traffic within the latency contract, by the {} method, planning at most {} utilization. Cloud fleets on demand \
             follow the traffic hour by hour, never below one instance.",
            r.scenario.capacity_method,
            format::percent(r.scenario.max_utilization, 0)
        ),
        "On-prem: each year the fleet is the planned units plus the spares the availability \
         target asks for; units past their refresh life retire, and surplus units are sold at \
         market or kept idle (retire_surplus); only what is missing is bought, at that year's \
         price; capex is purchase price plus an installation and network share. Each installed \
         unit pays maintenance (a share of its price), energy (idle power, plus the busy share of \
         the dynamic power for the units carrying load, times PUE, times the year's electricity \
         price), colocation space per kW of peak power, and a fractional share of an \
         administrator."
            .into(),
        "Cloud: on-demand pays each instance-hour used; a reservation pays its committed \
         instances every hour of its term, used or not, with the upfront share paid when it is \
         bought (reserved_upfront_share); a hybrid reserves a \
         base chosen to minimise cost and bursts on demand above it. Cloud options also pay \
         egress per GB of responses."
            .into(),
        "Totals are nominal cash. NPV discounts capex from the start of its year and running \
         costs from mid-year. Cost per million requests is the net present cost divided by the \
         requests served, each year's discounted at mid-year."
            .into(),
        "Break-even: each option's net present cost is written as a straight line in hours per \
         day of full use of its planned fleet (what does not scale with use, egress included, \
         + hours × the present value of an hour a day), through the option's net present cost \
         at its actual use, and the lines are solved for their crossing."
            .into(),
    ];
    for b in &bullets {
        l.bullet(b, BODY);
    }
    if let Some(b) = prefix_caching_bullet(r) {
        l.bullet(&b, BODY);
    }
    if let Some(b) = replicas_bullet(r) {
        l.bullet(&b, BODY);
    }
    if let Some(b) = evidence_bullet(r) {
        l.bullet(&b, BODY);
    }

    l.heading("What the model leaves out", 2, 60.0);
    let mut caveats: Vec<String> = vec![];
    caveats.push(format!(
        "Options are ranked on net present cost: the cash inside the {years} years discounted at \
         {rate}, less what the owned hardware would sell for at the end of year {years} \
         ({resale_pct} of its remaining value lost a year), plus the reservation payments still \
         owed after it. Every option is valued as if the service stopped at the horizon. Book \
         value (straight-line over {life} years) is for the accounts and does not enter it.",
        rate = format::percent(r.scenario.costs.discount_rate.value, 0),
        resale_pct = format::percent(r.scenario.costs.resale_decline_per_year.value, 0),
        life = r.scenario.costs.depreciation_years.value,
    ));
    caveats.extend([
        "Cloud network and storage: internet egress (the provider's schedule, or the flat \
         egress_usd_per_gb the scenario sets) and block storage per running instance; load \
         balancers and data transfer between zones are not modelled. Cluster networking is \
         inside the on-prem installation share."
            .to_string(),
        "Cloud hourly prices follow the profile's price.change_per_year where it gives one (a \
         reservation keeps the price of the year it is bought); otherwise prices are held \
         constant. No inflation or negotiated discounts."
            .into(),
        "Taxes only when the scenario sets tax_rate (then the ranking is after tax); no \
         financing costs, and no costs of selling used hardware beyond its lower price."
            .into(),
        "Cloud capacity is assumed to be there when asked for: no autoscaling lag, no shortage \
         of reserved capacity. Spot is costed only where a tier lists it, with an interruption \
         overhead, and is not recommended unless the tier sets spot_meets_slo."
            .into(),
        "Failures are covered by on-prem spares sized for the availability target from a unit \
         failure rate and repair time (a tier may set its own spares); maintenance windows and \
         cloud instance failures only by the utilization headroom."
            .into(),
    ]);
    let simulated = r
        .tiers
        .iter()
        .any(|t| !t.latency_curve.is_empty() || !t.latency_cdf.is_empty());
    if !simulated {
        caveats.push(format!(
            "Tail latency was not simulated in this run (fleet sizing: {}): fleets meet the \
             contract by the utilization bound, and the latency charts are not shown.",
            r.scenario.capacity_method
        ));
    }
    for c in &caveats {
        l.bullet(c, BODY);
    }

    l.heading("Which figures are estimates", 2, 40.0);
    let est: Vec<String> = r
        .inputs
        .iter()
        .filter(|i| i.basis == Basis::Estimate)
        .map(|i| {
            // As the assumptions table writes it: "efficiency.batch_overhead = 0.5 ms".
            let (field, unit) = field_and_unit(&i.field);
            format!(
                "{} · {field} = {}",
                i.scope,
                format::quantity(i.value, unit)
            )
        })
        .collect();
    if est.is_empty() {
        l.paragraph(
            "None: every input is cited, derived, measured or given by the user.",
            BODY,
            false,
            INK,
            0.0,
        );
    } else {
        l.paragraph(
            &format!(
                "{} inputs have no firm source (shaded in appendix A): {}.",
                est.len(),
                est.join("; ")
            ),
            BODY,
            false,
            INK,
            0.0,
        );
    }
    l.heading("Reproducing this report", 2, 40.0);
    l.paragraph(
        &format!(
            "Running \"tco-sim {} --seed {}\" with tco-sim {} writes this report again, beside \
             results.json (every number in it, with every input and its source), results.csv, \
             cash-flow.csv, sensitivity.csv and uncertainty.csv, report.xlsx and the {} charts \
             as SVG and PNG. With SOURCE_DATE_EPOCH set, the PDF and the workbook are \
             byte-identical.",
            r.scenario.file,
            r.scenario.seed,
            r.tool_version,
            charts.charts.len()
        ),
        BODY,
        false,
        INK,
        0.0,
    );
}

/// "$1,234,567: NPV $1.4M, less resale $300,000, plus $208,289 owed after year 5" — the ranking
/// figure with the adjustments that lead to it from the NPV of the cash.
/// An input's name and the unit declared in it: "chip.memory [B]" → ("chip.memory", "B"), so
/// the value is written in that unit, scaled where it has SI prefixes ("256 GB").
/// The prefix-cache hit rate at each tier's planned fleets (the design run of every year), as
/// results.json's `capacity[].latency.prefix_hit_rate` has it; `None` when no tier ran with
/// prefix caching.
fn prefix_caching_bullet(r: &RunResults) -> Option<String> {
    let per_tier: Vec<String> = r
        .tiers
        .iter()
        .filter_map(|t| {
            let rates: Vec<f64> = t
                .capacity
                .iter()
                .filter_map(|c| c.latency.as_ref()?.prefix_hit_rate)
                .collect();
            let lo = rates.iter().copied().reduce(f64::min)?;
            let hi = rates.iter().copied().reduce(f64::max)?;
            let range = if format::percent(lo, 1) == format::percent(hi, 1) {
                format::percent(lo, 1)
            } else {
                format::percent_range(lo, hi, 1)
            };
            Some(format!("{} {range}", t.name))
        })
        .collect();
    (!per_tier.is_empty()).then(|| {
        format!(
            "Prefix caching: a prompt's leading blocks already in a replica's KV cache (kept, \
             least recently used first out, in the cache room running sequences leave free, as \
             vLLM's automatic prefix caching does) are not prefilled again; requests match by the \
             trace's block hashes. Share of prompt tokens that hit, at the planned fleets over \
             the years: {}.",
            per_tier.join("; ")
        )
    })
}

/// How each generative tier's units are split into model replicas, from results.json's
/// `tiers[].replicas` (the terminal prints the same [`crate::results::ReplicaLayout::label`]);
/// `None` for a classic workload.
fn replicas_bullet(r: &RunResults) -> Option<String> {
    let per_tier: Vec<String> = r
        .tiers
        .iter()
        .filter_map(|t| Some(format!("{}: {}", t.name, t.replicas.as_ref()?.label())))
        .collect();
    (!per_tier.is_empty()).then(|| {
        format!(
            "Model replicas: a model too large for one device, or faster split, runs tensor \
             parallel over several, paying two all-reduces per layer per iteration over the \
             unit's links (a fixed latency each, and the activations at the links' bandwidth). \
             {}.",
            per_tier.join("; ")
        )
    })
}

/// Each generative tier's operating point and the accuracy suite's held-out rows near it, from
/// results.json's `tiers[].suite_evidence` (the terminal prints the same
/// [`crate::accuracy::Evidence::summary`]); `None` without a generative tier.
fn evidence_bullet(r: &RunResults) -> Option<String> {
    let per_tier: Vec<String> = r
        .tiers
        .iter()
        .filter_map(|t| {
            Some(format!(
                "{}: {}",
                t.name,
                t.suite_evidence.as_ref()?.summary()
            ))
        })
        .collect();
    (!per_tier.is_empty()).then(|| {
        format!(
            "Accuracy near the operating point: how far the planner missed published throughputs \
             it was not tuned on (`tco-sim accuracy`), on the same kind of hardware with half to \
             twice the sequences in flight (their concurrency, or their batch) that each tier \
             runs per replica. A positive error is optimistic: the planner predicted more than \
             was measured. {}.",
            per_tier.join("; ")
        )
    })
}

fn field_and_unit(field: &str) -> (&str, &str) {
    match field.rsplit_once(" [") {
        Some((f, u)) => (f, u.trim_end_matches(']')),
        None => (field, ""),
    }
}

fn ranking_explained(o: &crate::cost::OptionCost, years: u32) -> String {
    let mut parts = vec![format!("NPV of cash {}", usd(o.npv_usd))];
    if o.resale_value_usd > 0.0 {
        parts.push(format!(
            "less resale {} at year {years}",
            usd(o.resale_value_usd)
        ));
    }
    if o.committed_beyond_horizon_usd > 0.0 {
        parts.push(format!(
            "plus {} owed after year {years}",
            usd(o.committed_beyond_horizon_usd)
        ));
    }
    format!("{} ({})", usd(o.net_present_cost_usd), parts.join(", "))
}

/// How each option's net present cost follows from the NPV of its cash: less the resale of the
/// hardware it owns at the horizon, plus the reservations it owes after it.
fn ranking_table(l: &mut Layout, r: &RunResults, resale: bool, owed: bool) {
    let years = r.scenario.horizon_years;
    let mut cols = vec![Column::left("Tier · option"), Column::right("NPV of cash")];
    if resale {
        cols.push(Column::right(format!("− resale at year {years}")));
    }
    if owed {
        cols.push(Column::right(format!("+ owed after year {years}")));
    }
    cols.push(Column::right("= net present cost"));
    let or_missing = |x: f64| if x > 0.0 { usd(x) } else { MISSING.into() };
    let rows = r
        .tiers
        .iter()
        .flat_map(|t| t.options.iter().map(move |o| (t, o)))
        .map(|(t, o)| {
            let mut cells = vec![decision::choice_label(&t.name, o.option), usd(o.npv_usd)];
            if resale {
                cells.push(or_missing(o.resale_value_usd));
            }
            if owed {
                cells.push(or_missing(o.committed_beyond_horizon_usd));
            }
            cells.push(usd(o.net_present_cost_usd));
            Row::new(cells)
        })
        .collect();
    l.paragraph(
        "The resale and the payments owed are shown at their value in the year they fall; the \
         net present cost discounts them to today.",
        SMALL,
        false,
        INK,
        0.0,
    );
    l.table(&Table {
        columns: cols,
        rows,
        size: SMALL,
    });
}
