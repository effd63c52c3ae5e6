//! The terminal summary: tier × option with units per year, five-year total, NPV, cost per
//! million requests; the break-even table; the recommendation and the notes.

use comfy_table::{CellAlignment, ContentArrangement, Table, presets};

use crate::cost::ExactBreakEven;
use crate::results::{RunResults, usd, usd_cents};

fn table() -> Table {
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .force_no_tty();
    t
}

fn right_align(t: &mut Table, from: usize) {
    for c in t.column_iter_mut().skip(from) {
        c.set_cell_alignment(CellAlignment::Right);
    }
}

/// "4.9 h/day (on-prem cheaper above)" and friends.
pub fn exact_label(e: &ExactBreakEven) -> String {
    match e {
        ExactBreakEven::At {
            hours_per_day,
            on_prem_cheaper_above,
        } => format!(
            "{hours_per_day:.1} h/day (on-prem cheaper {})",
            if *on_prem_cheaper_above {
                "above"
            } else {
                "below"
            }
        ),
        ExactBreakEven::OnPremAlwaysCheaper => "on-prem cheaper at any use".into(),
        ExactBreakEven::CloudAlwaysCheaper => "cloud cheaper at any use".into(),
    }
}

/// Milliseconds with sensible precision.
pub fn ms(s: f64) -> String {
    let m = s * 1e3;
    if m >= 100.0 {
        format!("{m:.0} ms")
    } else if m >= 10.0 {
        format!("{m:.1} ms")
    } else {
        format!("{m:.2} ms")
    }
}

/// The whole summary as text.
pub fn render(r: &RunResults) -> String {
    let s = &r.scenario;
    let mut out = format!(
        "{}\n  workload: {} ({}) · traffic: {} · SLO: {} · horizon: {} years · capacity: {}\n\n",
        s.name, s.workload, s.precision, s.traffic, s.slo, s.horizon_years, s.capacity_method
    );
    let years = s.horizon_years;
    let mut t = table();
    let simulated = r
        .tiers
        .iter()
        .any(|t| t.capacity.iter().any(|c| c.latency.is_some()));
    let mut header = vec![
        "tier".to_string(),
        "option".into(),
        format!("units y1..y{years}"),
        "lower bound".into(),
    ];
    if simulated {
        header.push(format!("p99 y{years}"));
    }
    let residual = r
        .tiers
        .iter()
        .flat_map(|t| &t.options)
        .any(|o| o.residual_value_usd > 0.0);
    header.push(format!("{years}-yr total"));
    if residual {
        header.push(format!("residual y{years}"));
    }
    header.extend(["NPV".into(), "$ / M req".into(), "meets SLO".into()]);
    t.set_header(header);
    for tier in &r.tiers {
        let units: Vec<String> = tier.capacity.iter().map(|c| c.units.to_string()).collect();
        let bound: Vec<String> = tier
            .capacity
            .iter()
            .map(|c| c.analytic_units.to_string())
            .collect();
        for o in &tier.options {
            let mut row = vec![
                tier.name.clone(),
                o.option.label().to_string(),
                units.join(" "),
                bound.join(" "),
            ];
            if simulated {
                row.push(
                    tier.capacity
                        .last()
                        .and_then(|c| c.latency.as_ref())
                        .map_or("–".into(), |l| ms(l.p99_s)),
                );
            }
            row.push(usd(o.total_usd));
            if residual {
                row.push(if o.residual_value_usd > 0.0 {
                    usd(o.residual_value_usd)
                } else {
                    "–".into()
                });
            }
            row.extend([
                usd(o.npv_usd),
                o.cost_per_million_usd.map_or("–".into(), usd_cents),
                if tier.meets_slo() {
                    "yes".into()
                } else {
                    "no".into()
                },
            ]);
            t.add_row(row);
        }
    }
    right_align(&mut t, 2);
    out.push_str(&t.to_string());
    out.push('\n');

    if !r.break_even.is_empty() {
        let mut b = table();
        b.set_header(vec![
            "on-prem",
            "against",
            "break-even (seed form)",
            "break-even (exact)",
        ]);
        for be in &r.break_even {
            b.add_row(vec![
                be.on_prem_tier.clone(),
                format!("{} {}", be.cloud_tier, be.cloud_option),
                be.simplified_hours_per_day
                    .map_or("–".into(), |h| format!("{h:.1} h/day")),
                exact_label(&be.exact),
            ]);
        }
        right_align(&mut b, 2);
        out.push_str("\nBreak-even daily use, on-prem against each cloud option:\n");
        out.push_str(&b.to_string());
        out.push('\n');
    }
    if !r.references.is_empty() {
        let mut c = table();
        c.set_header(vec![
            "reference",
            "tier / option",
            "published",
            "this run",
            "change",
            "published break-even",
            "this run (seed form / exact)",
        ]);
        for x in &r.references {
            c.add_row(vec![
                x.label.clone(),
                format!("{} {}", x.tier, x.option),
                x.reference_total_usd.map_or("–".into(), usd),
                usd(x.total_usd),
                x.total_change
                    .map_or("–".into(), |f| format!("{:+.1} %", f * 100.0)),
                x.reference_break_even_hours_per_day
                    .map_or("–".into(), |h| format!("{h:.1} h/day")),
                match (&x.break_even_simplified_hours_per_day, &x.break_even_exact) {
                    (Some(h), Some(e)) => format!("{h:.1} h/day / {}", exact_label(e)),
                    _ => "–".into(),
                },
            ]);
        }
        right_align(&mut c, 2);
        out.push_str("\nAgainst published figures:\n");
        out.push_str(&c.to_string());
        out.push('\n');
    }
    if let Some(rec) = &r.recommendation {
        out.push_str(&format!("\nRecommendation: {}\n", rec.sentence));
    } else {
        out.push_str("\nRecommendation: no option meets the SLO in every year.\n");
    }
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}
