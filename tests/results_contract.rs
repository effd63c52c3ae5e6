//! What `results.json` says of each fleet beside the plan — its utilization and its verdict on
//! the contract — is what the CSV, the terminal and the PDF say, from one computation each; a
//! pass whose confidence interval crosses a TTFT/TPOT bound reads "marginal" everywhere.

mod report_fixtures;

use report_fixtures::{SHIPPED, shipped, with_latency};
use tco_sim::results::decision::{SloStatus, tier_status};

fn json(r: &tco_sim::results::RunResults) -> serde_json::Value {
    serde_json::from_str(&tco_sim::report::data::json(r)).expect("results.json parses")
}

#[test]
fn utilization_in_the_json_is_the_csvs() {
    let mut rows = 0;
    for name in SHIPPED {
        let r = shipped(name);
        let j = json(&r);
        let csv = tco_sim::report::data::csv(&r);
        let mut reader = csv::Reader::from_reader(csv.as_bytes());
        let header = reader.headers().unwrap().clone();
        let col = |h: &str| header.iter().position(|x| x == h).unwrap();
        let (tier, year, util) = (col("tier"), col("year"), col("utilization_pct"));
        for rec in reader.records() {
            let rec = rec.unwrap();
            if rec[util].is_empty() {
                continue; // a tier not costed has no fleet to state
            }
            let t = j["tiers"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == rec[tier])
                .unwrap();
            let y: usize = rec[year].parse().unwrap();
            let u = t["utilization"][y - 1].as_f64().unwrap_or(f64::NAN);
            assert_eq!(
                tco_sim::format::fixed(u * 100.0, 2),
                rec[util],
                "{name}: {} year {y}",
                &rec[tier]
            );
            rows += 1;
        }
        // One value per capacity year, in order, and the definition the docs give.
        for (t, jt) in r.tiers.iter().zip(j["tiers"].as_array().unwrap()) {
            let us = jt["utilization"].as_array().unwrap();
            assert_eq!(us.len(), t.capacity.len(), "{name}: {}", t.name);
            for (c, u) in t.capacity.iter().zip(us) {
                let want = c.peak_rps / (c.units as f64 * t.unit_throughput_rps);
                if want.is_finite() {
                    assert!(
                        (u.as_f64().unwrap() - want).abs() < 1e-12,
                        "{name}: {}",
                        t.name
                    );
                }
            }
        }
    }
    assert!(rows > 100, "{rows} rows compared");
}

#[test]
fn a_tpot_pass_whose_interval_crosses_the_bound_reads_marginal_everywhere() {
    let mut r = with_latency(shipped("azure-trace-llama8b"));
    let bounds = r.scenario.bounds();
    assert_eq!(bounds.tpot_s, Some(0.1));
    let i = r
        .tiers
        .iter()
        .position(|t| t.meets_slo())
        .expect("a tier meets the contract");
    // Before: every tier passes plainly (the fixture's intervals stay clear of the bounds).
    assert_eq!(tier_status(&r.tiers[i], &bounds), SloStatus::Met);
    // TPOT p99 of 99.7 ms ± 0.5 ms against 100 ms in the last year.
    {
        let t = &mut r.tiers[i];
        let l = t.capacity.last_mut().unwrap().latency.as_mut().unwrap();
        l.tpot_s = Some(0.0997);
        l.tpot_ci95_s = Some(0.0005);
        t.judge(&bounds);
    }
    let t = &r.tiers[i];
    assert_eq!(tier_status(t, &bounds), SloStatus::Marginal);
    // results.json (added fields), the terminal, the PDF's decision risks.
    let j = json(&r);
    assert_eq!(j["tiers"][i]["slo_status"], "marginal");
    let years = j["tiers"][i]["slo_status_by_year"].as_array().unwrap();
    assert_eq!(years.last().unwrap(), "marginal");
    assert!(
        years[..years.len() - 1].iter().all(|s| s == "met"),
        "{years:?}"
    );
    assert_eq!(
        j["tiers"][i]["capacity"][years.len() - 1]["latency"]["tpot_ci95_s"],
        0.0005
    );
    let table = tco_sim::report::table::render(&r);
    assert!(table.contains("met (marginal)"), "{table}");
    let cell = format!(
        "{} ± {}",
        tco_sim::format::ms(0.0997),
        tco_sim::format::ms(0.0005)
    );
    assert!(table.contains(&cell), "{cell} not in {table}");
    // Without an interval (a trace replayed identically), the same value passes and says so.
    {
        let t = &mut r.tiers[i];
        let l = t.capacity.last_mut().unwrap().latency.as_mut().unwrap();
        l.tpot_ci95_s = Some(0.0);
        t.judge(&bounds);
    }
    assert_eq!(tier_status(&r.tiers[i], &bounds), SloStatus::Met);
    assert!(tco_sim::report::table::render(&r).contains("99.7 ms (no CI)"));
}

/// Page one's risks name a recommended fleet that misses the contract in more than 5 % of the
/// Monte Carlo samples (and say nothing at 95 % or above), and the fitted performance constants
/// that move the answer most when there is room for them.
#[test]
fn risks_name_a_fleet_short_in_the_samples_and_the_fitted_constants_that_move_it() {
    use tco_sim::results::decision::{FIT_RISK_SHARE, SLO_RISK_P, top_risks};
    let mut r = report_fixtures::shipped_uncertain("h100-current-prices", 100);
    let rec = r.recommendation.clone().expect("a recommendation");
    let set_p = |r: &mut tco_sim::results::RunResults, p: f64| {
        let u = r.uncertainty.as_mut().expect("the analysis ran");
        let o = u
            .options
            .iter_mut()
            .find(|o| o.tier == rec.best.tier && o.option == rec.best.option)
            .expect("the recommendation's row");
        o.p_slo_met = Some(p);
    };
    let short = |risks: &[String]| {
        risks
            .iter()
            .find(|l| l.contains("of the Monte Carlo samples the planned"))
            .cloned()
    };
    set_p(&mut r, SLO_RISK_P);
    assert_eq!(short(&top_risks(&r)), None, "{:#?}", top_risks(&r));
    set_p(&mut r, 0.9);
    let line = short(&top_risks(&r)).expect("a shortfall line");
    assert!(
        line.starts_with(&format!(
            "In 10.0 % of the Monte Carlo samples the planned {} fleet misses the contract",
            rec.best.tier
        )),
        "{line}"
    );
    // Estimated profile numbers are named by their tier path (the purchase price here).
    set_p(&mut r, 1.0);
    assert!(
        top_risks(&r).iter().any(|l| l.starts_with(&format!(
            "Estimated inputs that move the answer most: tier.{}.price.purchase_usd",
            rec.best.tier
        ))),
        "{:#?}",
        top_risks(&r)
    );
    // With nothing else to say, the fitted constant with the widest swing is named when the
    // swing is a tenth of the margin or more, and not when it is less.
    let s = r.sensitivity.as_mut().unwrap();
    s.flip_points.clear();
    s.tornado
        .retain(|t| t.input.ends_with("efficiency.compute_matmul") && t.swing_usd > 0.0);
    assert!(
        !s.tornado.is_empty(),
        "the H100's fitted matmul efficiency moves the margin"
    );
    let swing = s.tornado[0].swing_usd;
    let fitted = |r: &tco_sim::results::RunResults| {
        top_risks(r).iter().any(|l| {
            l.starts_with(
                "Performance constants fitted to published benchmarks that move the answer most: tier.",
            ) && l.contains("efficiency.compute_matmul")
        })
    };
    let with_margin = |r: &mut tco_sim::results::RunResults, m: f64| {
        r.recommendation.as_mut().unwrap().margin_usd = Some(m);
    };
    with_margin(&mut r, 0.99 * swing / FIT_RISK_SHARE);
    assert!(fitted(&r), "{:#?}", top_risks(&r));
    with_margin(&mut r, 1.01 * swing / FIT_RISK_SHARE);
    assert!(!fitted(&r), "{:#?}", top_risks(&r));
}
