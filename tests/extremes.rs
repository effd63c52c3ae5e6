//! Extreme inputs of issue 15, each with its expected outcome: work stays bounded (a utilization
//! bound above `simulation.max_units` stops the search before any simulation, every evaluation
//! has an arrival budget), a capped fleet never reads as met, tiny traffic is sized rather than
//! called infeasible, `validate` runs the checks `run` runs, and CLI counts of zero are user
//! errors (exit 2). Work is bounded by counts (arrivals simulated), never by timing.

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;
use tco_sim::capacity::search::{self, MAX_ARRIVALS_PER_EVALUATION, TierContext};
use tco_sim::capacity::{Adjustment, StopReason, TierPlan};
use tco_sim::input::SourceFile;
use tco_sim::results::{self, Method, Note, RunResults};
use tco_sim::scenario::Scenario;

const STARTER: &str = include_str!("../scenarios/starter.toml");
const EMBEDDING: &str = include_str!("../scenarios/embedding-api.toml");

/// `text` with each `(from, to)` replaced once; panics if `from` is missing, so a changed
/// shipped scenario cannot silently turn a test into a no-op.
fn edit(text: &str, edits: &[(&str, &str)]) -> String {
    let mut out = text.to_string();
    for (from, to) in edits {
        assert!(out.contains(from), "`{from}` is not in the scenario");
        out = out.replacen(from, to, 1);
    }
    out
}

fn scenario(text: &str) -> Scenario {
    Scenario::from_source(&SourceFile::from_text("extreme.toml", text))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The starter scenario with `simulation.max_units = 1000`, the cap the cases ran with.
fn starter_capped(edits: &[(&str, &str)]) -> String {
    edit(STARTER, edits) + "\n[simulation]\nmax_units = 1000\n"
}

fn simulated(s: &Scenario) -> RunResults {
    results::plan(
        s,
        Method::Simulated {
            replications: s.simulation.replications,
        },
        &|_, _| {},
    )
    .unwrap()
}

/// Every tier-year stops at the cap without a simulation, within the cap, and nothing is costed
/// or recommended.
fn assert_capped_unsimulated(r: &RunResults, cap: u32) {
    for t in &r.tiers {
        for c in &t.capacity {
            assert_eq!(
                c.stop,
                StopReason::CapacityCap,
                "{} year {}",
                t.name,
                c.year
            );
            assert!(c.units <= cap, "{} plans {} units", t.name, c.units);
            assert!(c.analytic_units > cap);
            assert!(
                c.latency.is_none(),
                "{} year {} was simulated",
                t.name,
                c.year
            );
            assert!(
                c.detail
                    .as_deref()
                    .unwrap()
                    .contains("nothing was simulated")
            );
        }
        assert!(!t.meets_slo() && t.options.is_empty(), "{}", t.name);
    }
    assert!(r.recommendation.is_none());
}

#[test]
fn peak_of_ten_million_requests_stops_at_the_cap_without_simulating() {
    let s = scenario(&starter_capped(&[
        ("peak_rps = 400", "peak_rps = 1e7"),
        ("mean_rps = 150", "mean_rps = 3750000"),
        // 1e7 req/s is the largest rate accepted; growth would take it past the bound.
        ("growth_per_year = 0.3", "growth_per_year = 0"),
    ]));
    assert_capped_unsimulated(&simulated(&s), 1000);
}

#[test]
fn the_analytic_plan_caps_at_max_units_and_never_says_met_above_it() {
    // Today's bug: 1,187 units above max_units = 1000, "met".
    let s = scenario(&starter_capped(&[
        ("peak_rps = 400", "peak_rps = 1e7"),
        ("mean_rps = 150", "mean_rps = 3750000"),
        // 1e7 req/s is the largest rate accepted; growth would take it past the bound.
        ("growth_per_year = 0.3", "growth_per_year = 0"),
    ]));
    let r = results::plan(&s, Method::Analytic, &|_, _| {}).unwrap();
    for t in &r.tiers {
        for c in &t.capacity {
            assert!(c.units <= 1000, "{} plans {}", t.name, c.units);
            if c.analytic_units > 1000 {
                assert_eq!(c.stop, StopReason::CapacityCap);
            }
        }
    }
    assert_capped_unsimulated(&r, 1000);
}

#[test]
fn a_tiny_max_utilization_is_capped_not_met() {
    // Today's bug: 1,000 units against a lower bound of 4,155, "met". 1e-6 is now refused
    // (`tests/ranges.rs`); the smallest accepted ceiling on heavy traffic must still cap.
    let s = scenario(&starter_capped(&[
        ("max_utilization = 0.7", "max_utilization = 0.01"),
        ("peak_rps = 400", "peak_rps = 1e6"),
        ("mean_rps = 150", "mean_rps = 375000"),
        ("growth_per_year = 0.3", "growth_per_year = 0"),
    ]));
    let r = simulated(&s);
    assert_capped_unsimulated(&r, 1000);
    let note = r
        .notes
        .iter()
        .find(|n| matches!(n, Note::TierNotCosted { .. }))
        .unwrap();
    assert!(
        note.to_string()
            .contains("above simulation.max_units = 1000"),
        "{note}"
    );
}

#[test]
fn max_utilization_of_1e_300_on_embedding_api_is_refused_at_once() {
    // It used to pass `validate` and run for minutes; now validation refuses it with the range.
    let text = edit(
        EMBEDDING,
        &[("max_utilization = 0.7", "max_utilization = 1e-300")],
    );
    let e = Scenario::from_source(&SourceFile::from_text("extreme.toml", text)).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("slo.max_utilization") && msg.contains("from 0.01 to 1"),
        "{msg}"
    );
}

#[test]
fn a_rate_series_at_ten_million_requests_stops_at_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("series.csv");
    let mut rows = String::from("time_s,rate_rps\n");
    for i in 0..144 {
        rows.push_str(&format!("{},10000000\n", i * 600));
    }
    std::fs::write(&csv, rows).unwrap();
    let text = edit(
        STARTER,
        &[
            ("pattern = \"diurnal\"", ""),
            ("peak_rps = 400", ""),
            ("mean_rps = 150", ""),
            ("peak_hour = 14", ""),
            ("growth_per_year = 0.3", "growth_per_year = 0"),
            (
                "[slo]",
                &format!(
                    "[traffic.rate_series]\npath = {:?}\nformat = \"csv\"\n\n[slo]",
                    csv.display().to_string()
                ),
            ),
        ],
    );
    let s = scenario(&text);
    let r = simulated(&s);
    let cap = s.simulation.max_units;
    for t in &r.tiers {
        let c = &t.capacity[0];
        if c.analytic_units > cap {
            // Above the cap: stopped before any simulation.
            assert_eq!(c.stop, StopReason::CapacityCap, "{}", t.name);
            assert!(c.latency.is_none());
        } else {
            // Within it: simulated on a window cut to the arrival budget, and said so.
            assert!(
                r.notes
                    .iter()
                    .any(|n| matches!(n, Note::WindowShortened { tier, .. } if *tier == t.name)),
                "{}: {:?}",
                t.name,
                r.notes
            );
        }
    }
}

/// The tier-years whose window the budget shortened.
fn shortened(t: &TierPlan) -> Vec<u32> {
    t.adjustments
        .iter()
        .filter(|a| matches!(a, Adjustment::WindowShortened { .. }))
        .map(Adjustment::year)
        .collect()
}

#[test]
fn growth_of_three_hundred_percent_a_year_over_twenty_years_is_bounded() {
    // Over 20 years this peaks at 1.1e14 req/s: refused at `growth_per_year`, at once.
    let twenty = edit(
        STARTER,
        &[
            ("horizon_years = 5", "horizon_years = 20"),
            ("growth_per_year = 0.3", "growth_per_year = 3"),
        ],
    );
    let e = Scenario::from_source(&SourceFile::from_text("extreme.toml", twenty)).unwrap_err();
    assert!(e.to_string().contains("growth_per_year"), "{e}");
    // Over 8 years it ends at 6.6e6 req/s, inside the bound: the plan must still be bounded.
    let s = scenario(&edit(
        STARTER,
        &[
            ("horizon_years = 5", "horizon_years = 8"),
            ("growth_per_year = 0.3", "growth_per_year = 3"),
        ],
    ));
    let plans = search::plan_all(&s, s.simulation.replications, &|_, _| {}).unwrap();
    let mut budget_bound = 0;
    for p in &plans {
        // Nothing is met above the cap.
        for y in &p.years {
            assert!(
                y.units <= s.simulation.max_units,
                "year {} plans {}",
                y.year,
                y.units
            );
        }
        let ctx = TierContext::new(&s, p.index, s.simulation.replications);
        for y in shortened(p) {
            // Each shortened year simulates no more than the budget (Poisson noise aside).
            let c = &p.years[y as usize - 1];
            let e = search::evaluate(&ctx, y, c.units).unwrap();
            let arrived = e.report.counts.arrived_total as f64;
            assert!(arrived <= 1.01 * MAX_ARRIVALS_PER_EVALUATION, "{arrived}");
            assert!(e.report.counts.completed as f64 >= 1000.0);
            budget_bound += 1;
        }
    }
    assert!(budget_bound > 0, "the budget never bound");
    let r = results::assemble(&s, plans, "simulated");
    assert!(
        r.notes
            .iter()
            .any(|n| matches!(n, Note::WindowShortened { .. })
                && n.to_string().contains("busiest")),
        "{:?}",
        r.notes
    );
}

#[test]
fn tiny_traffic_is_sized_for_every_seed_not_called_infeasible() {
    let text = edit(
        STARTER,
        &[
            ("peak_rps = 400", "peak_rps = 0.001"),
            ("mean_rps = 150", "mean_rps = 0.0005"),
        ],
    );
    for seed in 1..=6 {
        let mut s = scenario(&text);
        s.seed = seed;
        let r = simulated(&s);
        for (t, tier) in r.tiers.iter().zip(&s.tiers) {
            if tco_sim::capacity::infeasibility(&s, &tier.plan).is_some() {
                continue;
            }
            assert!(t.meets_slo(), "seed {seed}: {} {:?}", t.name, t.infeasible);
            assert!(!t.options.is_empty());
            for c in &t.capacity {
                assert_eq!(c.stop, StopReason::Met);
                assert!(c.units >= 1 && c.units == c.analytic_units);
            }
        }
        assert!(r.recommendation.is_some(), "seed {seed}");
        assert!(
            r.notes
                .iter()
                .any(|n| matches!(n, Note::TooFewRequests { .. })),
            "seed {seed}"
        );
        let json = tco_sim::report::data::json(&r);
        assert!(!json.contains("p99 = 0 ms"), "seed {seed}");
    }
}

#[test]
fn few_requests_raise_the_replications_instead_of_measuring_a_handful() {
    // 0.2 req/s × 540 measured seconds × 4 replications ≈ 430 requests, under the 1,000 a p99
    // needs: ten replications are run instead.
    let s = scenario(&edit(
        STARTER,
        &[
            ("peak_rps = 400", "peak_rps = 0.2"),
            ("mean_rps = 150", "mean_rps = 0.1"),
            ("horizon_years = 5", "horizon_years = 1"),
        ],
    ));
    let ctx = TierContext::new(&s, 0, s.simulation.replications);
    let m = search::measurement(&ctx, 1, 1);
    let Some(Adjustment::ReplicationsRaised { from, to, .. }) = m.adjustment else {
        panic!("{m:?}");
    };
    assert_eq!(from, 4);
    assert!(to > 4 && to <= search::MAX_REPLICATIONS);
    assert_eq!(m.replications, to);
    let r = simulated(&s);
    assert!(r.tiers[0].meets_slo());
    assert!(
        r.notes
            .iter()
            .any(|n| matches!(n, Note::ReplicationsRaised { .. }))
    );
}

#[test]
fn the_hybrid_base_does_not_allocate_by_fleet_size() {
    // A histogram indexed by units would allocate 16 GiB for this fleet.
    let hours = vec![4_000_000_000u32; 8760];
    assert_eq!(
        tco_sim::cost::best_base(&hours, 4_000_000_000, 1.0, 2.0),
        4_000_000_000
    );
    // Half the year at 2 units, half at 6: units 3..=6 are needed 4,380 h, which pays only when
    // on-demand costs more than twice the reserved rate.
    let mut hours = vec![2u32; 4380];
    hours.extend(vec![6u32; 4380]);
    assert_eq!(tco_sim::cost::best_base(&hours, 6, 1.0, 1.5), 2);
    assert_eq!(tco_sim::cost::best_base(&hours, 6, 1.0, 2.5), 6);
}

fn tco() -> Command {
    let mut c = Command::cargo_bin("tco-sim").unwrap();
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn write(dir: &Path, text: &str) -> std::path::PathBuf {
    let p = dir.join("extreme.toml");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn validate_and_run_reject_a_batching_window_the_simulator_cannot_play() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        &edit(
            STARTER,
            &[(
                "options = [\"on-demand\", \"reserved-3y\"]",
                "options = [\"on-demand\", \"reserved-3y\"]\nwindow_ms = 2e9",
            )],
        ),
    );
    let located = || {
        predicate::str::contains("extreme.toml")
            .and(predicate::str::contains("tier[2].window_ms"))
            .and(predicate::str::contains("valid: milliseconds from 0 to"))
    };
    tco()
        .arg("validate")
        .arg(&p)
        .assert()
        .code(2)
        .stderr(located());
    tco()
        .args(["run", "--no-report", "-q"])
        .arg(&p)
        .assert()
        .code(2)
        .stderr(located());
}

#[test]
fn zero_replications_is_a_user_error() {
    tco()
        .args([
            "run",
            "scenarios/starter.toml",
            "--no-report",
            "--replications",
            "0",
        ])
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(
            predicate::str::contains("--replications 0").and(predicate::str::contains("1 to 1000")),
        );
}

#[test]
fn simulating_zero_units_is_a_user_error() {
    tco()
        .args(["simulate", "scenarios/starter.toml", "--units", "0,2"])
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("--units 0"));
}
