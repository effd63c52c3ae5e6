//! report.xlsx recalculated by a spreadsheet engine (LibreOffice headless): every option's
//! live net present cost equals results.json's to the cent in every shipped scenario, and an
//! edited Assumptions cell (the electricity price, the discount rate) moves the totals to what
//! tco-sim computes with that value.
//!
//! Needs `soffice` (Debian: `apt-get install libreoffice-calc-nogui`; .ci/run installs it).
//! Without it the tests fail saying so, unless TCO_SIM_SKIP_LIBREOFFICE=1.

mod report_fixtures;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use report_fixtures::{SHIPPED, repo, shipped};
use tco_sim::report::pdf::ReportDate;
use tco_sim::results::{Method, RunResults};

const DATE: ReportDate = ReportDate {
    year: 2026,
    month: 1,
    day: 1,
    hour: 0,
    minute: 0,
    second: 0,
};

/// Whether the engine is there; panics with what to install when it is not and skipping was
/// not asked for.
fn engine() -> bool {
    let found = Command::new("soffice")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        return true;
    }
    if std::env::var("TCO_SIM_SKIP_LIBREOFFICE").as_deref() == Ok("1") {
        eprintln!("soffice not found: skipped (TCO_SIM_SKIP_LIBREOFFICE=1)");
        return false;
    }
    panic!(
        "soffice (LibreOffice) is needed to recalculate report.xlsx: install it with \
         `apt-get install -y libreoffice-calc-nogui`, or set TCO_SIM_SKIP_LIBREOFFICE=1 to skip"
    );
}

/// Every sheet of the workbook as LibreOffice recalculates it on load, as rows of cells.
fn recalculated(book: &[u8]) -> HashMap<String, Vec<Vec<String>>> {
    let dir = tempfile::tempdir().unwrap();
    // A private profile that recalculates OOXML files on load ("always": 0) instead of showing
    // their cached results.
    let profile = dir.path().join("profile");
    std::fs::create_dir_all(profile.join("user")).unwrap();
    std::fs::write(
        profile.join("user/registrymodifications.xcu"),
        r#"<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
"#,
    )
    .unwrap();
    let xlsx = dir.path().join("report.xlsx");
    std::fs::write(&xlsx, book).unwrap();
    let out = dir.path().join("csv");
    // CSV of every sheet (the last token, -1), full precision (not "as shown").
    let status = Command::new("soffice")
        .arg(format!(
            "-env:UserInstallation=file://{}",
            profile.display()
        ))
        .args(["--headless", "--convert-to"])
        .arg("csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1")
        .arg("--outdir")
        .arg(&out)
        .arg(&xlsx)
        .output()
        .expect("soffice runs");
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let mut sheets = HashMap::new();
    for e in std::fs::read_dir(&out).unwrap() {
        let p = e.unwrap().path();
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        let name = stem.strip_prefix("report-").unwrap_or(&stem).to_string();
        let mut rd = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_path(&p)
            .unwrap();
        let rows = rd
            .records()
            .map(|r| r.unwrap().iter().map(str::to_string).collect())
            .collect();
        sheets.insert(name, rows);
    }
    sheets
}

/// The Summary's (sheet, tier, option, live net present cost) rows.
fn summary(sheets: &HashMap<String, Vec<Vec<String>>>) -> Vec<(String, String, String, f64)> {
    sheets["Summary"]
        .iter()
        .skip(4)
        .take_while(|r| r.first().is_some_and(|c| !c.is_empty()))
        .map(|r| {
            let v = r[4]
                .parse::<f64>()
                .unwrap_or_else(|_| panic!("not a number: {r:?}"));
            (r[0].clone(), r[1].clone(), r[2].clone(), v)
        })
        .collect()
}

fn npc(r: &RunResults, tier: &str, option: &str) -> f64 {
    r.tiers
        .iter()
        .find(|t| t.name == tier)
        .and_then(|t| t.options.iter().find(|o| o.option.to_string() == option))
        .unwrap_or_else(|| panic!("{tier} {option}"))
        .net_present_cost_usd
}

fn summary_value(sheets: &HashMap<String, Vec<Vec<String>>>, label: &str) -> Option<f64> {
    sheets["Summary"]
        .iter()
        .find(|r| r.first().is_some_and(|c| c.starts_with(label)))
        .and_then(|r| r.get(4)?.parse().ok())
}

#[test]
fn the_recalculated_workbook_reproduces_results_json_to_the_cent() {
    if !engine() {
        return;
    }
    for name in SHIPPED {
        let r = shipped(name);
        let book = tco_sim::report::xlsx::render(&r, &DATE).unwrap();
        let sheets = recalculated(&book);
        let rows = summary(&sheets);
        assert!(!rows.is_empty(), "{name}: no option sheets");
        for (sheet, tier, option, live) in &rows {
            let want = npc(&r, tier, option);
            assert!(
                (live - want).abs() < 0.005,
                "{name} {sheet}: recalculated {live} vs results.json {want}"
            );
        }
        let cf = r.cash_flow.as_ref().unwrap();
        if let Some(want) = cf.incremental_npv_usd {
            let got = summary_value(&sheets, "Incremental NPV").unwrap();
            assert!((got - want).abs() < 0.005, "{name}: {got} vs {want}");
        }
        if let Some(want) = cf.irr {
            let got = summary_value(&sheets, "IRR").expect("an IRR cell");
            assert!((got - want).abs() < 1e-6, "{name}: IRR() {got} vs {want}");
        }
    }
}

/// The scenario with one cost input set to `value`, planned as tco-sim plans it.
fn planned_with(name: &str, key: &str, value: f64) -> RunResults {
    let mut s =
        tco_sim::scenario::Scenario::load(&repo(&format!("scenarios/{name}.toml"))).unwrap();
    s.costs.get_mut(key).unwrap().value = value;
    tco_sim::results::plan(&s, Method::Analytic, &|_, _| {}).unwrap()
}

#[test]
fn an_edited_assumption_moves_the_totals_to_tco_sims() {
    if !engine() {
        return;
    }
    for (name, key, factor) in [
        ("h100-current-prices", "electricity_usd_per_kwh", 2.5),
        ("embedding-api", "discount_rate", 1.5),
    ] {
        let base = shipped(name);
        let old = base
            .scenario
            .costs
            .fields()
            .iter()
            .find(|(k, _)| *k == key)
            .unwrap()
            .1
            .value;
        let new = old * factor;
        // The workbook of the base run with one Assumptions cell edited; its cached results
        // are still the base run's.
        let book =
            tco_sim::report::xlsx::render_with(&base, &DATE, &[("costs", key, new)]).unwrap();
        let sheets = recalculated(&book);
        let moved = planned_with(name, key, new);
        let mut any_moved = false;
        for (sheet, tier, option, live) in summary(&sheets) {
            let want = npc(&moved, &tier, &option);
            assert!(
                (live - want).abs() < 0.005,
                "{name} {key} = {new}, {sheet}: recalculated {live} vs tco-sim {want}"
            );
            any_moved |= (want - npc(&base, &tier, &option)).abs() > 1.0;
        }
        assert!(any_moved, "{name}: {key} moved no total");
    }
}

#[test]
fn the_workbook_is_deterministic() {
    let r = shipped("seed-8xh100");
    let a = tco_sim::report::xlsx::render(&r, &DATE).unwrap();
    let b = tco_sim::report::xlsx::render(&r, &DATE).unwrap();
    assert_eq!(a, b);
    assert!(Path::new("Cargo.toml").exists());
}

/// The Summary lists every tier, not only those with an option sheet: each feasible option with
/// results.json's net present cost, and each infeasible tier marked "infeasible" with the reason
/// results.json gives (llama70b-chat's Ampere Altra Max cannot hold the model).
#[test]
fn the_summary_lists_infeasible_tiers_with_the_reason() {
    if !engine() {
        return;
    }
    let r = shipped("llama70b-chat");
    let infeasible: Vec<_> = r.tiers.iter().filter(|t| t.infeasible.is_some()).collect();
    assert!(
        !infeasible.is_empty(),
        "llama70b-chat has no infeasible tier"
    );
    let book = tco_sim::report::xlsx::render(&r, &DATE).unwrap();
    let sheets = recalculated(&book);
    let rows = &sheets["Summary"];
    for t in &infeasible {
        let why = t.infeasible.as_deref().unwrap();
        assert!(
            rows.iter().any(|row| row.first() == Some(&t.name)
                && row.get(2).map(String::as_str) == Some("infeasible")
                && row.get(3).map(String::as_str) == Some(why)),
            "no infeasible row for {} ({why}) in {rows:?}",
            t.name
        );
    }
    for t in r.tiers.iter().filter(|t| t.infeasible.is_none()) {
        for o in &t.options {
            let row = rows
                .iter()
                .find(|row| {
                    row.first() == Some(&t.name)
                        && row.get(1) == Some(&o.option.to_string())
                        && row.get(2).is_some_and(|s| s.ends_with("the contract"))
                })
                .unwrap_or_else(|| panic!("{} {} missing from the Summary", t.name, o.option));
            let v: f64 = row[5].parse().unwrap();
            assert!((v - o.net_present_cost_usd).abs() < 0.005, "{row:?}");
        }
    }
}
