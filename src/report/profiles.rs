//! The `tco-sim profiles` tables: the list of shipped and local hardware profiles with their
//! headline numbers and prices, and one profile in full with every number's source and date.
//!
//! Stage 8 (report): renders validated [`Profile`]s; `app` loads them and prints the text.

use comfy_table::{ContentArrangement, Table, presets};

use crate::cite::Cited;
use crate::format::usd;
use crate::hardware::{DeploymentOption, Precision, Profile};

/// A price cell: dollars per hour for cloud options, whole dollars for a purchase, "–" when
/// the profile has no price for the option.
fn price(c: Option<&Cited>, per_hour: bool) -> String {
    match c {
        Some(c) if per_hour => format!("${:.4}/h", c.value),
        Some(c) => usd(c.value),
        None => "–".into(),
    }
}

/// One row per profile, then a line saying how to see one in full.
pub fn list(profiles: &[Profile]) -> String {
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled);
    t.set_header(vec![
        "name",
        "kind",
        "chips",
        "slots",
        "fp16 TF/unit",
        "int8 TOPS/unit",
        "mem GB/unit",
        "BW GB/s/unit",
        "purchase",
        "on-demand",
        "reserved 1y",
        "reserved 3y",
        "from",
    ]);
    for p in profiles {
        let peak = |pr: Precision| {
            p.unit_peak(pr)
                .map_or("–".into(), |v| format!("{:.1}", v / 1e12))
        };
        let from = if p.origin.starts_with("embedded:") {
            "shipped"
        } else {
            "local"
        };
        t.add_row(vec![
            p.name.clone(),
            p.kind.label().into(),
            format!("{} x {}", p.chip_count(), p.chip_model),
            p.slots().to_string(),
            peak(Precision::Fp16),
            peak(Precision::Int8),
            format!("{:.0}", p.unit_memory_bytes() / 1e9),
            format!(
                "{:.0}",
                p.memory_bandwidth_per_chip.value * p.chips.value / 1e9
            ),
            price(p.price(DeploymentOption::OnPrem), false),
            price(p.price(DeploymentOption::OnDemand), true),
            price(p.price(DeploymentOption::Reserved1y), true),
            price(p.price(DeploymentOption::Reserved3y), true),
            from.into(),
        ]);
    }
    format!("{t}\n`tco-sim profiles <name>` shows every number with its source and date.\n")
}

/// One profile in full: what it is, every cited number, its batching and calibration.
pub fn detail(p: &Profile) -> String {
    let mut out = format!(
        "{} — {}\n  kind: {} · {} x {} · {} execution slots · loaded from {}\n",
        p.name,
        p.description,
        p.kind.label(),
        p.chip_count(),
        p.chip_model,
        p.slots(),
        p.origin
    );
    if let Some(region) = &p.prices.region {
        out.push_str(&format!("  prices for region {region}\n"));
    }
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled);
    t.set_header(vec!["field", "value", "basis", "source", "date", "note"]);
    for (field, c) in p.cited_numbers() {
        t.add_row(vec![
            field,
            format!("{}", c.value),
            c.basis.label().to_string(),
            c.source.title.clone(),
            c.source.date.clone(),
            c.note.clone().unwrap_or_default(),
        ]);
    }
    out.push_str(&format!("{t}\n"));
    let b = &p.batching;
    out.push_str(&format!(
        "  batching (serving configuration): max batch {}, window {} ms{}\n",
        b.max_batch,
        b.window_s * 1e3,
        if b.compiled_batch_sizes.is_empty() {
            String::new()
        } else {
            format!(", compiled shapes {:?}", b.compiled_batch_sizes)
        }
    ));
    if let Some(c) = &p.calibration {
        out.push_str(&format!(
            "  calibrated on {} ({}) with {}\n",
            c.host, c.date, c.method
        ));
    }
    out
}
