//! The uncertainty analysis (issue 12): the tornado's swing is exact where the cost is linear in
//! an input, a flip point set as the input's value flips the recommendation, Monte Carlo
//! collapses onto the deterministic answer as the ranges shrink, the answer does not depend on
//! the thread count, every shipped scenario's uncertain inputs resolve, and bad
//! `[uncertainty]` entries are located.

use std::path::Path;

use tco_sim::cost;
use tco_sim::hardware::DeploymentOption;
use tco_sim::input::SourceFile;
use tco_sim::results::{self, Method, RunResults};
use tco_sim::scenario::Scenario;
use tco_sim::scenario::uncertainty::{InputPath, RangeOrigin, Target, UncertainInput};
use tco_sim::uncertainty::{Model, ranges::Dist};

fn shipped(name: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name);
    Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

fn shipped_names() -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios"))
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".toml"))
            .collect();
    v.sort();
    v
}

fn from_text(text: &str) -> Result<Scenario, tco_sim::input::InputError> {
    Scenario::from_source(&SourceFile::from_text("u.toml", text))
}

fn analytic(s: &Scenario) -> RunResults {
    results::plan(s, Method::Analytic, &|_, _| {}).unwrap()
}

/// An on-prem tier against an on-demand tier: only on-prem pays for electricity.
const LINEAR: &str = r#"name = "linear"
horizon_years = 3
[workload]
preset = "resnet-50"
precision = "int8"
[traffic]
peak_rps = 300
[slo]
percentile = 99
latency_ms = 200
[[tier]]
name = "owned"
profile = "altra-q80-30-1u"
options = ["on-prem"]
[[tier]]
name = "rented"
profile = "oci-a1-flex-16c"
options = ["on-demand"]
[uncertainty]
"costs.electricity_usd_per_kwh" = { low = 0.05, high = 0.25 }
"#;

#[test]
fn a_tornado_on_a_linear_input_gives_the_exact_swing() {
    let s = from_text(LINEAR).unwrap();
    let r = analytic(&s);
    let inputs: Vec<UncertainInput> = s
        .uncertain_inputs()
        .into_iter()
        .filter(|u| u.path.key == "costs.electricity_usd_per_kwh")
        .collect();
    assert_eq!(inputs.len(), 1);
    let model = Model::new(&s, &r, Method::Analytic);
    let sens = model.sensitivity(&inputs).unwrap();
    let row = &sens.tornado[0];
    assert_eq!((row.low_value, row.high_value), (0.05, 0.25));
    // By hand: on-prem energy cost is kWh_y · price · (1 + e)^(y−1) (e: the electricity price
    // trend), discounted at mid-year; on-demand pays none of it. The scenario is pre-tax (the
    // default tax rate is 0), so the net present cost moves by
    // Σ_y kWh_y · (1 + e)^(y−1) · (1 + r)^−(y − ½) per $/kWh.
    assert_eq!(s.costs.tax_rate.value, 0.0);
    let owned = r.tiers.iter().find(|t| t.name == "owned").unwrap();
    let on_prem = &owned.options[0];
    let rate = s.costs.discount_rate.value;
    let e = s.costs.electricity_price_change_per_year.value;
    let kwh_pv: f64 = on_prem
        .yearly
        .iter()
        .map(|y| {
            y.energy_kwh * (1.0 + e).powi(y.year as i32 - 1) * cost::mid_year_factor(rate, y.year)
        })
        .sum();
    let expected = kwh_pv * (0.25 - 0.05);
    assert!(kwh_pv > 0.0);
    assert!(
        (row.swing_usd - expected).abs() <= 1e-6 * expected,
        "swing {} vs {expected}",
        row.swing_usd
    );
    // The on-prem option's own figure moves by exactly that; the on-demand one not at all.
    let (owned_npv, rented_npv) = if sens.best.tier == "owned" {
        (
            (
                row.best_npv_low_usd.unwrap(),
                row.best_npv_high_usd.unwrap(),
            ),
            (
                row.runner_up_npv_low_usd.unwrap(),
                row.runner_up_npv_high_usd.unwrap(),
            ),
        )
    } else {
        (
            (
                row.runner_up_npv_low_usd.unwrap(),
                row.runner_up_npv_high_usd.unwrap(),
            ),
            (
                row.best_npv_low_usd.unwrap(),
                row.best_npv_high_usd.unwrap(),
            ),
        )
    };
    assert!((owned_npv.1 - owned_npv.0 - expected).abs() <= 1e-6 * expected);
    assert_eq!(rented_npv.0, rented_npv.1);
}

/// Set one input in a copy of the scenario, rebuild its service plans, and plan it again.
fn replanned(s: &Scenario, u: &UncertainInput, value: f64) -> RunResults {
    let mut s2 = s.clone();
    s2.set_input(u.path.target, value);
    assert!(s2.rebuild_service_plans().iter().all(|&ok| ok));
    analytic(&s2)
}

#[test]
fn a_flip_point_fed_back_flips_the_recommendation() {
    let mut checked = 0;
    for name in ["llama70b-chat.toml", "embedding-api.toml", "starter.toml"] {
        let s = shipped(name);
        let r = analytic(&s);
        let base = r.recommendation.as_ref().unwrap().best.clone();
        let inputs = s.uncertain_inputs();
        let model = Model::new(&s, &r, Method::Analytic);
        let sens = model.sensitivity(&inputs).unwrap();
        for f in sens.flip_points.iter().filter(|f| f.flips) {
            let u = inputs.iter().find(|u| u.path.key == f.input).unwrap();
            let v = f.value.unwrap();
            let again = replanned(&s, u, v);
            let rec = again.recommendation.as_ref().map(|r| &r.best);
            assert!(
                rec.is_none_or(|b| (b.tier.as_str(), b.option) != (base.tier.as_str(), base.option)),
                "{name}: {} at {v} should flip {} {}",
                f.input,
                base.tier,
                base.option
            );
            let to = f.to.as_ref().unwrap();
            let b = rec.unwrap();
            assert_eq!(
                (b.tier.as_str(), b.option),
                (to.tier.as_str(), to.option),
                "{name} {}",
                f.input
            );
            // And the base value does not flip it.
            let (at_base, _) = model.with_value(u, f.base_value);
            assert_eq!(at_base.unwrap().tier, base.tier);
            checked += 1;
        }
    }
    assert!(
        checked > 0,
        "no shipped scenario flips: the test checked nothing"
    );
}

#[test]
fn the_model_recommends_what_the_run_recommends() {
    for name in shipped_names() {
        let s = shipped(&name);
        let r = analytic(&s);
        let model = Model::new(&s, &r, Method::Analytic);
        let rec = r
            .recommendation
            .as_ref()
            .map(|r| (r.best.tier.clone(), r.best.option));
        let mine = model.base_best().map(|b| (b.tier, b.option));
        assert_eq!(rec, mine, "{name}");
    }
}

/// Every input's distribution replaced by a triangle of relative half-width `w` around its
/// value (a zero-width triangle when `w` is 0).
fn narrowed(s: &Scenario, w: f64) -> Vec<UncertainInput> {
    s.uncertain_inputs()
        .into_iter()
        .map(|mut u| {
            let v = s.input_value(u.path.target).0;
            let (a, b) = (v * (1.0 - w), v * (1.0 + w));
            u.dist = Dist::Triangular {
                low: a.min(b),
                mode: v,
                high: a.max(b),
            };
            u
        })
        .collect()
}

#[test]
fn monte_carlo_p50_converges_to_the_deterministic_answer() {
    for name in ["starter.toml", "llama70b-chat.toml"] {
        let s = shipped(name);
        let r = analytic(&s);
        let model = Model::new(&s, &r, Method::Analytic);
        let base_best = model.base_best().unwrap();
        let mut last_error = f64::INFINITY;
        for w in [0.2, 0.02, 0.002] {
            let mc = model.monte_carlo(&narrowed(&s, w), 200, 3);
            let err = mc
                .options
                .iter()
                .map(|o| ((o.npv_p50 - o.npv_base) / o.npv_base).abs())
                .fold(0.0, f64::max);
            assert!(
                err <= last_error + 1e-12,
                "{name}: w = {w}: {err} > {last_error}"
            );
            last_error = err;
        }
        assert!(last_error < 2e-3, "{name}: {last_error}");
        // At zero width every sample is the base run.
        let mc = model.monte_carlo(&narrowed(&s, 0.0), 50, 3);
        for o in &mc.options {
            assert_eq!(o.npv_p10, o.npv_base, "{name} {} {}", o.tier, o.option);
            assert_eq!(o.npv_p90, o.npv_base);
        }
        let best = mc
            .options
            .iter()
            .find(|o| o.tier == base_best.tier && o.option == base_best.option)
            .unwrap();
        assert_eq!(best.p_cheapest, 1.0);
        assert!(
            mc.options
                .iter()
                .all(|o| o.p_slo_met.is_none_or(|p| p == 1.0))
        );
    }
}

#[test]
fn monte_carlo_is_identical_at_one_and_two_threads() {
    let s = shipped("starter.toml");
    let r = analytic(&s);
    let inputs = s.uncertain_inputs();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let model = Model::new(&s, &r, Method::Analytic);
            let mc = model.monte_carlo(&inputs, 120, s.seed);
            let sens = model.sensitivity(&inputs);
            (
                serde_json::to_string(&mc).unwrap(),
                serde_json::to_string(&sens).unwrap(),
            )
        })
    };
    assert_eq!(run(1), run(2));
}

#[test]
fn every_uncertainty_path_of_every_shipped_scenario_resolves() {
    for name in shipped_names() {
        let s = shipped(&name);
        let paths = s.input_paths();
        let inputs = s.uncertain_inputs();
        assert!(!inputs.is_empty(), "{name} has no uncertain input");
        for u in &inputs {
            assert!(
                paths.iter().any(|p| p.key == u.path.key),
                "{name}: {}",
                u.path.key
            );
            u.dist.check().unwrap();
            let (v, _, _) = s.input_value(u.path.target);
            assert!(v.is_finite(), "{name}: {}", u.path.key);
            // Setting the base value back changes nothing.
            let mut s2 = s.clone();
            s2.set_input(u.path.target, v);
            assert_eq!(s2.input_value(u.path.target).0, v, "{name}: {}", u.path.key);
        }
        // Every path this scenario has can be given a range in `[uncertainty]`.
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("scenarios")
                .join(&name),
        )
        .unwrap();
        if text.contains("[uncertainty]") {
            continue;
        }
        let mut table = String::from("\n[uncertainty]\n");
        for p in &paths {
            let (v, _, _) = s.input_value(p.target);
            let valid = s.input_valid(p.target);
            let x = tco_sim::uncertainty::ranges::clamp(v, &valid);
            table.push_str(&format!(
                "\"{}\" = {{ low = {x:?}, high = {x:?} }}\n",
                p.key.replace('"', "\\\"")
            ));
        }
        // Beside a link to the traces, so the scenario's relative paths still resolve.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("scenarios")).unwrap();
        std::os::unix::fs::symlink(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("traces"),
            dir.path().join("traces"),
        )
        .unwrap();
        let file = dir.path().join("scenarios").join(&name);
        std::fs::write(&file, format!("{text}{table}")).unwrap();
        let with = Scenario::load(&file).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(with.uncertainty.len(), paths.len(), "{name}");
    }
}

fn error(table: &str) -> tco_sim::input::InputError {
    let text = LINEAR.replace(
        "\"costs.electricity_usd_per_kwh\" = { low = 0.05, high = 0.25 }\n",
        table,
    );
    from_text(&text).unwrap_err()
}

#[test]
fn a_bad_path_is_located_and_suggested() {
    let e = error("\"costs.electricty_usd_per_kwh\" = { low = 0.05, high = 0.25 }\n");
    assert_eq!(e.position, Some((20, 1)));
    assert_eq!(
        e.field.as_deref(),
        Some("uncertainty.\"costs.electricty_usd_per_kwh\"")
    );
    assert!(e.message.contains("no input of this scenario"), "{e}");
    assert!(
        e.help
            .as_deref()
            .unwrap()
            .starts_with("did you mean `costs.electricity_usd_per_kwh`?"),
        "{e}"
    );
    let e = error("\"tier.owned.efficiency.compte\" = { low = 0.3, high = 0.5 }\n");
    assert!(
        e.help
            .as_deref()
            .unwrap()
            .starts_with("did you mean `tier.owned.efficiency.compute`?"),
        "{e}"
    );
}

/// A number the tier's profile sets but this plan never reads is refused with the reason, at
/// its line: a range on it would move nothing (issue 10: a key without effect is an error).
#[test]
fn a_number_without_effect_is_refused_with_why() {
    let e = error("\"tier.owned.efficiency.serial_fraction\" = { low = 0.01, high = 0.1 }\n");
    assert_eq!(e.position, Some((20, 1)), "{e}");
    assert!(
        e.message.contains("has no effect on this scenario's plan"),
        "{e}"
    );
    assert!(
        e.help.as_deref().unwrap().contains("one core per request"),
        "{e}"
    );
    // Nor is it offered to the analysis; the efficiency ResNet-50 reads is.
    let s = from_text(LINEAR).unwrap();
    let keys: Vec<String> = s.input_paths().into_iter().map(|p| p.key).collect();
    assert!(
        !keys.iter().any(|k| k.ends_with("serial_fraction")),
        "{keys:?}"
    );
    assert!(
        keys.contains(&"tier.owned.efficiency.compute".to_string()),
        "{keys:?}"
    );
}

#[test]
fn an_impossible_range_is_located_with_what_is_valid() {
    let e = error("\"costs.pue\" = { low = 1.8, high = 1.2 }\n");
    assert_eq!(e.position, Some((20, 15)));
    assert_eq!(e.message, "low = 1.8 is above high = 1.2");
    assert_eq!(e.help.as_deref(), Some("valid: low ≤ high"));
    let e = error("\"traffic.growth_per_year\" = { dist = \"normal\", mean = 0.4, sd = -0.1 }\n");
    assert_eq!(e.message, "sd = -0.1 is negative");
    let e = error("\"costs.pue\" = { dist = \"triangle\", low = 1.2, mode = 1.5, high = 1.8 }\n");
    assert_eq!(e.field.as_deref(), Some("uncertainty.\"costs.pue\".dist"));
    assert!(
        e.help
            .as_deref()
            .unwrap()
            .starts_with("did you mean `triangular`?"),
        "{e}"
    );
    let e = error("\"costs.pue\" = { low = 0.2, high = 0.5 }\n");
    assert!(e.message.contains("outside what the input accepts"), "{e}");
    assert_eq!(
        e.help.as_deref(),
        Some("valid: a PUE from 1.0 to 5.0 (typical 1.1–2.0)")
    );
    let e = error("\"costs.pue\" = { dist = \"triangular\", low = 1.2, high = 1.8 }\n");
    assert_eq!(e.message, "`mode` is missing");
    let e = error("\"costs.pue\" = { low = 1.2, high = 1.8, sd = 1 }\n");
    assert_eq!(e.field.as_deref(), Some("uncertainty.\"costs.pue\".sd"));
}

#[test]
fn sampled_values_stay_inside_the_valid_range() {
    // A normal range reaching below 0 is clamped: on-demand prices never go negative.
    let text = LINEAR.replace(
        "\"costs.electricity_usd_per_kwh\" = { low = 0.05, high = 0.25 }\n",
        "\"costs.electricity_usd_per_kwh\" = { dist = \"normal\", mean = 0.05, sd = 0.2 }\n",
    );
    let s = from_text(&text).unwrap();
    let r = analytic(&s);
    let model = Model::new(&s, &r, Method::Analytic);
    let inputs = s.uncertain_inputs();
    let sens = model.sensitivity(&inputs).unwrap();
    let row = sens
        .tornado
        .iter()
        .find(|t| t.input == "costs.electricity_usd_per_kwh")
        .unwrap();
    assert_eq!(row.low_value, 0.0);
    let mc = model.monte_carlo(&inputs, 100, 1);
    assert!(
        mc.options
            .iter()
            .all(|o| o.npv_p10.is_finite() && o.npv_p10 > 0.0)
    );
    assert!(
        mc.options
            .iter()
            .all(|o| o.option != DeploymentOption::OnPrem || o.npv_p10 <= o.npv_base)
    );
}

#[test]
fn a_simulated_plan_rescaled_at_its_base_inputs_is_the_base_plan() {
    let s = shipped("starter.toml");
    let method = Method::Simulated {
        replications: s.simulation.replications,
    };
    let r = results::plan(&s, method, &|_, _| {}).unwrap();
    let base: Vec<f64> = r
        .tiers
        .iter()
        .flat_map(|t| t.options.iter().map(|o| o.net_present_cost_usd))
        .collect();
    let model = Model::new(&s, &r, method);
    let inputs = s.uncertain_inputs();
    let perf: Vec<&UncertainInput> = inputs
        .iter()
        .filter(|u| u.path.target.is_performance())
        .collect();
    assert!(!perf.is_empty());
    for u in perf {
        let (best, npv) = model.with_value(u, s.input_value(u.path.target).0);
        assert_eq!(npv, base, "{}", u.path.key);
        assert_eq!(best, model.base_best(), "{}", u.path.key);
    }
    // No flip sits at the base value itself: a flip needs the input to move.
    let sens = model.sensitivity(&inputs).unwrap();
    for f in sens.flip_points.iter().filter(|f| f.flips) {
        assert_ne!(f.value, Some(f.base_value), "{}", f.input);
    }
}

/// With the analytic method a re-plan is exact: setting one performance input in the model
/// gives every option the cost a fresh plan of the changed scenario gives it. Checked for the
/// traffic's growth (the model then reads the changed traffic) and for the other performance
/// inputs (it reads the base scenario's traffic, computed once), on every shipped scenario.
#[test]
fn an_analytic_replan_costs_what_a_fresh_plan_costs() {
    let mut growth_checked = 0;
    for name in shipped_names() {
        let s = shipped(&name);
        let r = analytic(&s);
        let model = Model::new(&s, &r, Method::Analytic);
        // No shipped scenario gives its growth a range: the test gives it one (±50 %).
        let g = s.traffic.growth().per_year;
        let growth = UncertainInput {
            path: InputPath {
                key: "traffic.growth_per_year".into(),
                target: Target::Growth,
            },
            dist: Dist::Uniform {
                low: g * 0.5,
                high: g * 1.5 + 0.1,
            },
            origin: RangeOrigin::Declared {
                why: "this test".into(),
            },
        };
        let inputs = s.uncertain_inputs();
        for u in inputs
            .iter()
            .filter(|u| u.path.target.is_performance())
            .chain([&growth])
        {
            let (lo, hi) = u.dist.tornado_ends();
            for v in [lo, hi] {
                let v = tco_sim::uncertainty::ranges::clamp(v, &s.input_valid(u.path.target));
                let (_, npv) = model.with_value(u, v);
                let slots = |r: &RunResults| -> Vec<(String, DeploymentOption)> {
                    r.tiers
                        .iter()
                        .flat_map(|t| t.options.iter().map(|o| (t.name.clone(), o.option)))
                        .collect()
                };
                let mine: std::collections::BTreeMap<_, f64> =
                    slots(&r).into_iter().zip(npv).collect();
                let again = replanned(&s, u, v);
                let fresh = slots(&again).into_iter().zip(
                    again
                        .tiers
                        .iter()
                        .flat_map(|t| t.options.iter().map(|o| o.net_present_cost_usd)),
                );
                // The fresh plan may leave out an option the base showed (a hybrid that
                // coincides with another); every one it shows, the model costs the same.
                for (slot, cost) in fresh {
                    assert_eq!(
                        mine.get(&slot),
                        Some(&cost),
                        "{name}: {} = {v}, {slot:?}",
                        u.path.key
                    );
                }
            }
            growth_checked += usize::from(u.path.key == "traffic.growth_per_year");
        }
    }
    assert!(growth_checked >= 5, "{growth_checked}");
}

/// The serial fraction is an uncertain input only where a pass is split across cores (a
/// generative replica on a CPU chip, or a classic tier of several cores per request): on a
/// classic tier of one core per request it moves nothing and would show a bar of zero.
#[test]
fn the_serial_fraction_is_offered_only_where_it_acts() {
    let keys = |s: &Scenario| -> Vec<String> {
        s.input_paths()
            .into_iter()
            .map(|p| p.key)
            .filter(|k| k.ends_with(".efficiency.serial_fraction"))
            .collect()
    };
    // llama70b-chat: the Altra Max runs Llama-2-70B on all its cores.
    assert_eq!(
        keys(&shipped("llama70b-chat.toml")),
        vec!["tier.Altra Max M128 on-prem.efficiency.serial_fraction".to_string()]
    );
    // starter: CPU tiers of ResNet-style requests, one core each.
    let mut s = shipped("starter.toml");
    assert!(keys(&s).is_empty(), "{:?}", keys(&s));
    let cpu = s
        .tiers
        .iter()
        .position(|t| t.profile.serial_fraction.is_some())
        .expect("a CPU tier");
    s.tiers[cpu].batching.cores_per_request = 4;
    assert_eq!(keys(&s).len(), 1, "{:?}", keys(&s));
}

/// A constant the accuracy suite fitted (basis "fit") is varied by the fit rule — lognormal
/// around its value with the suite's held-out throughput spread — once per profile, never left
/// fixed: a fitted constant reproduces its own rows, and only the held-out rows say how sure it
/// is.
#[test]
fn fitted_constants_are_varied_by_the_suites_held_out_error() {
    use tco_sim::cite::Basis;
    for name in [
        "llama70b-chat.toml",
        "starter.toml",
        "azure-trace-llama8b.toml",
    ] {
        let s = shipped(name);
        let inputs = s.uncertain_inputs();
        let profile_number = |t: Target| match t {
            Target::Profile { tier, number } => Some((s.tiers[tier].profile.name.clone(), number)),
            _ => None,
        };
        let mut fitted_paths: Vec<(String, usize)> = s
            .input_paths()
            .into_iter()
            .filter(|p| s.input_value(p.target).1 == Basis::Fit)
            .filter_map(|p| profile_number(p.target))
            .collect();
        fitted_paths.sort();
        fitted_paths.dedup();
        assert!(!fitted_paths.is_empty(), "{name} has no fitted constant");
        let mut varied: Vec<(String, usize)> = inputs
            .iter()
            .filter(|u| matches!(u.origin, RangeOrigin::FitRule { .. }))
            .map(|u| {
                let (v, basis, _) = s.input_value(u.path.target);
                assert_eq!(basis, Basis::Fit, "{name}: {}", u.path.key);
                let kind = match u.path.target {
                    Target::Profile { tier, .. } => s.tiers[tier].profile.kind,
                    _ => panic!("a fitted constant outside a profile: {}", u.path.key),
                };
                let generative =
                    matches!(s.workload, tco_sim::workload::Workload::Generative { .. });
                assert_eq!(
                    Some(u.dist),
                    Dist::for_fit(v, kind, generative),
                    "{name}: {}",
                    u.path.key
                );
                profile_number(u.path.target).expect("a profile number")
            })
            .collect();
        varied.sort();
        assert_eq!(varied, fitted_paths, "{name}");
    }
    // The H100's transformer GEMM efficiency, fitted to MLPerf BERT-99 Offline, is among them.
    let s = shipped("llama70b-chat.toml");
    assert!(
        s.uncertain_inputs()
            .iter()
            .any(|u| u.path.key.ends_with("efficiency.compute_matmul")
                && matches!(u.origin, RangeOrigin::FitRule { .. })),
        "{:?}",
        s.uncertain_inputs()
            .iter()
            .map(|u| &u.path.key)
            .collect::<Vec<_>>()
    );
}

/// A generative tier on a profile with an iteration overhead (the H100's) never pays the batch
/// overhead, so the analysis varies the one it pays; a classic tier the reverse.
#[test]
fn the_overhead_a_tier_pays_is_the_one_varied() {
    let s = shipped("mooncake-prefix-llama8b.toml");
    let keys: Vec<String> = s.input_paths().into_iter().map(|p| p.key).collect();
    let owned = |suffix: &str| {
        keys.iter()
            .any(|k| k.starts_with("tier.8x H100") && k.ends_with(suffix))
    };
    assert!(owned("efficiency.iteration_overhead_ms"), "{keys:?}");
    assert!(owned("efficiency.stream_overhead_us"), "{keys:?}");
    assert!(!owned("efficiency.batch_overhead_ms"), "{keys:?}");
    let t = &s.tiers[0];
    assert!(t.profile.iteration_overhead_s.is_some());
    let why = s
        .why_inert(t, &tco_sim::hardware::numbers::BATCH_OVERHEAD)
        .unwrap();
    assert!(why.contains("iteration_overhead_ms"), "{why}");
    // ResNet-50 on the same profile: the batch overhead is read, the iteration overhead not.
    let classic = from_text(LINEAR).unwrap();
    let mut tier = classic.tiers[0].clone();
    tier.profile = t.profile.clone();
    assert!(
        classic
            .why_inert(&tier, &tco_sim::hardware::numbers::ITERATION_OVERHEAD)
            .unwrap()
            .contains("batch_overhead_ms")
    );
    assert!(
        classic
            .why_inert(&tier, &tco_sim::hardware::numbers::BATCH_OVERHEAD)
            .is_none()
    );
    // The streaming cost is a generative iteration's: a classic tier does not draw it.
    assert!(
        classic
            .why_inert(&tier, &tco_sim::hardware::numbers::STREAM_OVERHEAD)
            .is_some()
    );
    assert!(
        s.why_inert(t, &tco_sim::hardware::numbers::STREAM_OVERHEAD)
            .is_none()
    );
}
