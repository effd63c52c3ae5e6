//! Service-time variability (issue 10 item 1) and closed-loop load (item 5), checked against
//! queueing theory with fixed seeds:
//!
//! * a mean-1 log-normal multiplier on a CPU core's work, or on an accelerator's batch, turns the
//!   single-server model into M/G/1, whose mean wait is Pollaczek–Khinchine's
//!   W_q = λE\[S²\] / (2(1 − ρ)) with E\[S²\] = (1 + cv²)·mean² (Kleinrock, *Queueing Systems*
//!   vol. 1, 1975, eq. 5.73);
//! * with the spread the tail separates from the median (p99 > p50) while the mean service time
//!   stays the roofline's; without it (cv = 0) every number is the same as with no variability;
//! * a closed loop obeys the interactive response-time law X = C / (R + Z) (Denning & Buzen,
//!   ACM Computing Surveys 10(3), 1978), and with exponential service and think times it is the
//!   machine-repairman model (finite-source M/M/1), whose throughput is
//!   X = (1 − p₀)/S with p₀ = 1 / Σₙ C!/(C−n)! (S/Z)ⁿ (Gross, Shortle, Thompson & Harris,
//!   *Fundamentals of Queueing Theory*, 4th ed., 2008, §3.7).

mod common;

use common::run;
use tco_sim::sim::{
    self, ClosedLoop, DeterministicArrivals, Dispatch, FleetSpec, PoissonArrivals, ServerModel,
    ServiceDist, SimReport, ThinkTime, Variability,
};
use tco_sim::traffic::Request;

const MEAN_S: f64 = 0.010;

fn one_core(variability: Variability) -> FleetSpec {
    FleetSpec {
        units: 1,
        server: ServerModel::SharedBandwidth {
            chips: 1,
            cores_per_chip: 1,
            time_at_busy_s: vec![MEAN_S],
            variability,
        },
        dispatch: Dispatch::SharedQueue,
        queue_cap: None,
        timeout_s: None,
    }
}

fn one_device(variability: Variability) -> FleetSpec {
    FleetSpec {
        units: 1,
        server: ServerModel::Batching {
            devices: 1,
            max_batch: 1,
            window_s: 0.0,
            batch_time_s: vec![MEAN_S],
            variability,
        },
        dispatch: Dispatch::SharedQueue,
        queue_cap: None,
        timeout_s: None,
    }
}

fn poisson(fleet: &FleetSpec, rho: f64, per_rep: u64, reps: u32, seed: u64) -> SimReport {
    let lambda = rho / MEAN_S;
    sim::simulate(fleet, &run(20.0, reps, seed), |rep| {
        PoissonArrivals::new(seed, rep, lambda, per_rep)
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

/// M/G/1 with log-normal service at ρ = 0.7 and cv = 1: the simulated mean wait is
/// Pollaczek–Khinchine's within twice the 95 % confidence half-width between replications (and
/// within 5 %), for the per-request spread of a CPU core and the per-batch spread of a device.
#[test]
fn mg1_lognormal_multiplier_mean_wait_is_pollaczek_khinchine() {
    let (rho, cv) = (0.7, 1.0);
    let lambda = rho / MEAN_S;
    let theory = lambda * (1.0 + cv * cv) * MEAN_S * MEAN_S / (2.0 * (1.0 - rho));
    for fleet in [
        one_core(Variability::LogNormal { cv }),
        one_device(Variability::LogNormal { cv }),
    ] {
        let r = poisson(&fleet, rho, 200_000, 8, 11);
        let got = r.queueing.mean.value_s;
        let ci = r.queueing.mean.ci95_half_width_s.unwrap_or(0.0);
        assert!(
            (got - theory).abs() <= (2.0 * ci).max(1e-9) && (got / theory - 1.0).abs() < 0.05,
            "{:?}: mean wait {got:.6} s, Pollaczek–Khinchine {theory:.6} s, ci95 ±{ci:.6}",
            fleet.server
        );
        // The multiplier has mean 1: the mean service time is the roofline's.
        assert!(
            (r.service.mean.value_s / MEAN_S - 1.0).abs() < 0.01,
            "{}",
            r.service.mean.value_s
        );
    }
}

/// Requests that never queue (one every 50 ms on a 10 ms core): without variability every one
/// takes exactly 10 ms, so p50 = p99; with cv = 0.5 the p99 is well above the median, near the
/// log-normal's own p99/p50 = exp(2.326·σ) = 3.0 for σ² = ln 1.25.
#[test]
fn p99_exceeds_p50_only_with_a_spread() {
    let go = |v: Variability, fleet: fn(Variability) -> FleetSpec| {
        sim::simulate(&fleet(v), &run(0.0, 2, 5), |_| {
            DeterministicArrivals::new(50_000_000, 20_000)
        })
        .unwrap_or_else(|e| panic!("{e}"))
    };
    for fleet in [one_core as fn(Variability) -> FleetSpec, one_device] {
        let flat = go(Variability::None, fleet);
        assert_eq!(flat.latency.p50.value_s, flat.latency.p99.value_s);
        assert!((flat.latency.p50.value_s - MEAN_S).abs() < 1e-4);
        let spread = go(Variability::LogNormal { cv: 0.5 }, fleet);
        let ratio = spread.latency.p99.value_s / spread.latency.p50.value_s;
        assert!((2.6..3.4).contains(&ratio), "p99/p50 = {ratio}");
    }
}

/// cv = 0 is no variability at all: the same report, bit for bit, for every model that takes a
/// spread (no random number is drawn).
#[test]
fn cv_zero_reproduces_the_deterministic_plan_exactly() {
    assert_eq!(Variability::lognormal(0.0), Variability::None);
    let with = |v: Variability| {
        [one_core(v.clone()), one_device(v)]
            .iter()
            .map(|f| serde_json::to_string(&poisson(f, 0.8, 20_000, 2, 3)).unwrap_or_default())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        with(Variability::None),
        with(Variability::LogNormal { cv: 0.0 })
    );
    // And a spread does change the answer (the test could not pass for an ignored cv).
    assert_ne!(
        with(Variability::None),
        with(Variability::LogNormal { cv: 0.3 })
    );
}

/// Empirical spread: measured times are divided by their mean, so the mean is kept and only the
/// shape is taken.
#[test]
fn empirical_spread_keeps_the_mean() {
    let fleet = one_core(Variability::Empirical {
        relative: vec![7.0, 9.0, 10.0, 14.0],
    });
    let r = sim::simulate(&fleet, &run(0.0, 2, 9), |_| {
        DeterministicArrivals::new(50_000_000, 20_000)
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert!((r.service.mean.value_s / MEAN_S - 1.0).abs() < 0.01);
    assert!(
        (r.latency.min_s - 0.7 * MEAN_S).abs() < 1e-6,
        "{}",
        r.latency.min_s
    );
    assert!(
        (r.latency.max_s - 1.4 * MEAN_S).abs() < 1e-6,
        "{}",
        r.latency.max_s
    );
}

fn closed(fleet: &FleetSpec, clients: u32, think: ThinkTime, seed: u64) -> SimReport {
    let c = ClosedLoop {
        clients,
        think,
        duration_s: 400.0,
        max_requests: 1_000_000,
    };
    sim::simulate_closed(fleet, &run(20.0, 4, seed), &c, |_| {
        std::iter::repeat(Request::default())
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

/// The interactive response-time law X = C / (R + Z), for fixed and exponential think times
/// and no think time at all, on a CPU with a spread and on a batching accelerator. Z is the
/// mean think time, R the mean response time the run measured.
#[test]
fn closed_loop_obeys_the_response_time_law() {
    let cpu = FleetSpec {
        units: 2,
        server: ServerModel::SharedBandwidth {
            chips: 1,
            cores_per_chip: 4,
            time_at_busy_s: vec![0.004, 0.005, 0.006, 0.008],
            variability: Variability::LogNormal { cv: 0.4 },
        },
        dispatch: Dispatch::JoinShortestQueue,
        queue_cap: None,
        timeout_s: None,
    };
    let accel = FleetSpec {
        units: 1,
        server: ServerModel::Batching {
            devices: 2,
            max_batch: 4,
            window_s: 0.001,
            batch_time_s: vec![0.004, 0.005, 0.006, 0.007],
            variability: Variability::LogNormal { cv: 0.1 },
        },
        dispatch: Dispatch::SharedQueue,
        queue_cap: None,
        timeout_s: None,
    };
    for fleet in [cpu, accel] {
        for think in [
            ThinkTime::None,
            ThinkTime::Fixed { s: 0.02 },
            ThinkTime::Exponential { mean_s: 0.02 },
        ] {
            let clients = 12;
            let r = closed(&fleet, clients, think, 21);
            let x = r.throughput_per_s;
            let law = f64::from(clients) / (r.latency.mean.value_s + think.mean_s());
            assert!(
                (x / law - 1.0).abs() < 0.01,
                "{think:?}: X = {x:.2}/s, C/(R+Z) = {law:.2}/s"
            );
            // Never more in flight than there are clients.
            assert!(r.queue.max_waiting < u64::from(clients));
        }
    }
}

/// Finite-source M/M/1 (machine repairman): C = 5 clients, exponential think Z = 40 ms,
/// exponential service S = 10 ms. Throughput X = (1 − p₀)/S, p₀ = 1 / Σₙ₌₀..C C!/(C−n)!·(S/Z)ⁿ.
#[test]
fn closed_mm1_matches_the_machine_repairman_model() {
    let (c, s, z) = (5u32, 0.010, 0.040);
    let mut term = 1.0;
    let mut sum = 1.0;
    for n in 1..=c {
        term *= f64::from(c - n + 1) * s / z;
        sum += term;
    }
    let p0 = 1.0 / sum;
    let x_theory = (1.0 - p0) / s;
    let r_theory = f64::from(c) / x_theory - z;
    let fleet = common::mgc(1, ServiceDist::Exponential { mean_s: s });
    let r = closed(&fleet, c, ThinkTime::Exponential { mean_s: z }, 4);
    let x = r.throughput_per_s;
    let resp = r.latency.mean.value_s;
    assert!(
        (x / x_theory - 1.0).abs() < 0.01,
        "X = {x:.3}/s, machine repairman {x_theory:.3}/s"
    );
    assert!(
        (resp / r_theory - 1.0).abs() < 0.03,
        "R = {resp:.5} s, machine repairman {r_theory:.5} s"
    );
}

/// A closed loop without clients, or with a NaN think time, is refused with the field named.
#[test]
fn closed_loop_rejects_bad_settings() {
    let fleet = one_core(Variability::None);
    let bad = |c: ClosedLoop| {
        sim::simulate_closed(&fleet, &run(0.0, 1, 1), &c, |_| {
            std::iter::repeat(Request::default())
        })
        .map(|_| ())
        .unwrap_err()
        .to_string()
    };
    let ok = ClosedLoop {
        clients: 1,
        think: ThinkTime::None,
        duration_s: 1.0,
        max_requests: 10,
    };
    assert!(
        bad(ClosedLoop {
            clients: 0,
            ..ok.clone()
        })
        .contains("closed.clients")
    );
    assert!(
        bad(ClosedLoop {
            think: ThinkTime::Exponential { mean_s: f64::NAN },
            ..ok
        })
        .contains("closed.think.mean_s")
    );
}

/// A variability cv outside 0..=10 is refused by the simulator, naming the field.
#[test]
fn a_bad_cv_is_refused() {
    let e = sim::check(
        &one_core(Variability::LogNormal { cv: f64::INFINITY }),
        &run(0.0, 1, 1),
    )
    .unwrap_err();
    assert!(e.to_string().contains("server.variability.cv"), "{e}");
}

fn scenario_text(workload_extra: &str, tier_extra: &str) -> String {
    format!(
        r#"name = "variance test"
horizon_years = 1
seed = 3
[workload]
preset = "all-minilm-l6-v2"
precision = "int8"
{workload_extra}
[traffic]
pattern = "constant"
peak_rps = 300
[slo]
percentile = 99
latency_ms = 200
[[tier]]
profile = "altra-max-m128-30-1u"
{tier_extra}
[simulation]
window_s = 60
warmup_s = 5
replications = 2
"#
    )
}

fn load(text: &str) -> Result<tco_sim::scenario::Scenario, tco_sim::input::InputError> {
    tco_sim::scenario::Scenario::from_source(&tco_sim::input::SourceFile::from_text(
        "variance.toml",
        text.to_string(),
    ))
}

/// `token_cv` (and every other token key) on a classic model would have no effect: it is refused
/// with its line and column and a pointer to `service_cv`, never silently ignored.
#[test]
fn token_keys_on_a_classic_model_are_refused_where_they_are() {
    for (key, line) in [
        ("token_cv = 0.5", "token_cv"),
        ("max_tokens = 512", "max_tokens"),
        ("prompt_tokens = 100", "prompt_tokens"),
        ("tokens_from_trace = false", "tokens_from_trace"),
    ] {
        let e = load(&scenario_text(key, "")).unwrap_err();
        assert_eq!(
            e.field.as_deref(),
            Some(format!("workload.{line}").as_str())
        );
        assert_eq!(e.message, "token counts apply only to generative models");
        assert!(
            e.help.as_deref().unwrap_or("").contains("service_cv"),
            "{e}"
        );
        if key != "tokens_from_trace = false" {
            assert_eq!(e.position, Some((7, key.find('=').map_or(1, |i| i + 3))));
        }
    }
    // A source for a service_cv the tier does not set is refused too.
    let e = load(&scenario_text("", "service_cv_source = \"our PoC\"")).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("tier[0].service_cv_source"));
}

/// The profile's default CV reaches the plan, a tier's `service_cv` replaces it (and is listed
/// under the tier in the inputs), and a range error names the tier's field.
#[test]
fn a_tier_service_cv_replaces_the_profile_default() {
    use tco_sim::perf::ServicePlan;
    let cv_of = |s: &tco_sim::scenario::Scenario| match &s.tiers[0].plan {
        ServicePlan::Classic(p) => p.variability.clone(),
        ServicePlan::Generative(p) => p.variability.clone(),
    };
    let default = load(&scenario_text("", "")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(default.tiers[0].profile.service_cv.value, 0.25);
    assert_eq!(cv_of(&default), Variability::LogNormal { cv: 0.25 });
    let zero = load(&scenario_text(
        "",
        "service_cv = 0\nservice_cv_source = \"measured flat\"",
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cv_of(&zero), Variability::None);
    assert!(
        zero.input_records()
            .iter()
            .any(|i| i.field == "service_cv" && i.value == 0.0)
    );
    let e = load(&scenario_text("", "service_cv = 11")).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("tier[0].service_cv"));
    assert_eq!(e.position, Some((16, 14)));
}

/// Through the planner: the design run of a CPU tier with its default spread has p99 > p50,
/// and with `service_cv = 0` the CPU's latency has no tail beyond queueing (p50 = p99 at this
/// light load, as before the spread existed).
#[test]
fn the_planned_cpu_tier_has_a_tail_only_with_a_spread() {
    use tco_sim::capacity::search::{TierContext, evaluate};
    let run = |tier_extra: &str| {
        let s = load(&scenario_text("", tier_extra)).unwrap_or_else(|e| panic!("{e}"));
        let ctx = TierContext::new(&s, 0, 2);
        let e = evaluate(&ctx, 1, 1).unwrap_or_else(|e| panic!("{e}"));
        (e.report.latency.p50.value_s, e.report.latency.p99.value_s)
    };
    let (p50, p99) = run("");
    assert!(p99 > 1.5 * p50, "p50 {p50}, p99 {p99}");
    let (p50, p99) = run("service_cv = 0");
    assert_eq!(p50, p99);
}

/// The measurement of issue 10 (a benchmark, not a test: `cargo test --release --test
/// service_variance -- --ignored --nocapture sustained`): on one unit of each shipped tier of
/// `embedding-api.toml`, the highest Poisson rate whose p99 stays within a bound, as a share of
/// the unit's saturation (roofline) throughput, with the profile's default spread and with none.
/// Bounds: the scenario's 100 ms, and a tight one of 3× the lone request's time.
#[test]
#[ignore = "a measurement; prints a table"]
fn sustained_rate_under_a_p99_bound() {
    use tco_sim::capacity::search::TierContext;
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/embedding-api.toml");
    let base = tco_sim::scenario::Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    println!("| tier | bound | cv | sustained / saturation |");
    println!("|---|---|---|---|");
    for (i, tier) in base.tiers.iter().enumerate() {
        let lone = match &tier.plan {
            tco_sim::perf::ServicePlan::Classic(p) => p.lone_request_s(),
            tco_sim::perf::ServicePlan::Generative(_) => continue,
        };
        for bound in [0.100, 3.0 * lone] {
            for cv in [0.0, tier.profile.service_cv.value] {
                let mut s = base.clone();
                s.tiers[i].profile.service_cv.value = cv;
                s.rebuild_service_plans();
                let ctx = TierContext::new(&s, i, 2);
                let sat = ctx.unit_throughput_rps;
                let fleet = FleetSpec {
                    units: 1,
                    server: ctx.server.clone(),
                    dispatch: Dispatch::SharedQueue,
                    queue_cap: None,
                    timeout_s: None,
                };
                let p99 = |f: f64| {
                    let rate = f * sat;
                    let n = 60_000u64;
                    let r = sim::simulate(&fleet, &run(5_000.0 / rate, 2, 7), |rep| {
                        PoissonArrivals::new(7, rep, rate, n)
                    })
                    .unwrap_or_else(|e| panic!("{e}"));
                    if r.unstable {
                        f64::INFINITY
                    } else {
                        r.latency.p99.value_s
                    }
                };
                let (mut lo, mut hi) = (0.0, 1.0);
                for _ in 0..12 {
                    let mid = 0.5 * (lo + hi);
                    if p99(mid) <= bound {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                println!(
                    "| {} | {:.1} ms | {cv} | {:.1} % |",
                    tier.name,
                    bound * 1e3,
                    lo * 100.0
                );
            }
        }
    }
}

/// The tier's plan spread, whatever the plan kind.
fn plan_variability(s: &tco_sim::scenario::Scenario) -> Variability {
    use tco_sim::perf::ServicePlan;
    match &s.tiers[0].plan {
        ServicePlan::Classic(p) => p.variability.clone(),
        ServicePlan::Generative(p) => p.variability.clone(),
    }
}

/// Measured times given inline become the plan's empirical spread (their shape: the simulator
/// divides by their mean, so the roofline keeps the mean), are listed in the inputs as their
/// sample CV with basis "measured", and replace the profile's `service_cv` there.
#[test]
fn measured_service_times_become_the_empirical_spread() {
    let times = [8.0, 9.0, 10.0, 10.0, 11.0, 12.0, 30.0];
    let list = times.map(|t| t.to_string()).join(", ");
    let s = load(&scenario_text(
        "",
        &format!(
            "service_times = {{ values = [{list}] }}\nservice_times_source = \"our PoC, 2026-11\""
        ),
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        plan_variability(&s),
        Variability::Empirical {
            relative: times.to_vec()
        }
    );
    let n = times.len() as f64;
    let mean = times.iter().sum::<f64>() / n;
    let sd = (times.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let inputs = s.input_records();
    let rec = inputs
        .iter()
        .find(|i| i.field == "service_times (CV)")
        .unwrap_or_else(|| panic!("no service_times input in {inputs:?}"));
    assert!((rec.value - sd / mean).abs() < 1e-12, "{}", rec.value);
    assert!(
        !inputs.iter().any(|i| i.field == "service_cv"),
        "the profile's service_cv is replaced, not listed beside the times"
    );
}

/// Through the planner: a skewed measured spread gives the CPU tier a tail (p99 > p50) at the
/// same light load where `service_cv = 0` gives none, and the mean service time stays the
/// roofline's (the times' unit does not matter).
#[test]
fn measured_service_times_give_the_planned_tier_its_tail() {
    use tco_sim::capacity::search::{TierContext, evaluate};
    let run = |tier_extra: &str| {
        let s = load(&scenario_text("", tier_extra)).unwrap_or_else(|e| panic!("{e}"));
        let ctx = TierContext::new(&s, 0, 2);
        let e = evaluate(&ctx, 1, 1).unwrap_or_else(|e| panic!("{e}"));
        (
            e.report.latency.p50.value_s,
            e.report.latency.p99.value_s,
            e.report.service.mean.value_s,
        )
    };
    let (_, _, flat_mean) = run("service_cv = 0");
    // Nine of ten requests at 1 unit, one at 5: mean 1.4 units.
    let skewed = "service_times = { values = [1, 1, 1, 1, 1, 1, 1, 1, 1, 5] }";
    let (p50, p99, mean) = run(skewed);
    assert!(p99 > 2.0 * p50, "p50 {p50}, p99 {p99}");
    assert!(
        (mean / flat_mean - 1.0).abs() < 0.02,
        "mean {mean} vs {flat_mean}"
    );
    // Scaling every time by 1000 (ms to µs, say) changes nothing.
    let scaled =
        "service_times = { values = [1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 5000] }";
    assert_eq!(run(scaled), (p50, p99, mean));
}

/// Times from a CSV column, read relative to the scenario's folder, give the same plan as the
/// same times inline; the file's errors name the file, the line and the column.
#[test]
fn measured_service_times_from_a_csv_column() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let write = |name: &str, text: &str| {
        std::fs::write(dir.path().join(name), text).unwrap_or_else(|e| panic!("{e}"));
        dir.path().join(name)
    };
    write("poc.csv", "request,latency_ms\n1,9.5\n2,10.5\n3,31\n");
    let scenario = write(
        "s.toml",
        &scenario_text(
            "",
            "service_times = { file = \"poc.csv\", column = \"latency_ms\" }",
        ),
    );
    let s = tco_sim::scenario::Scenario::load(&scenario).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        plan_variability(&s),
        Variability::Empirical {
            relative: vec![9.5, 10.5, 31.0]
        }
    );
    let rec = s
        .input_records()
        .into_iter()
        .find(|i| i.field == "service_times (CV)")
        .unwrap_or_else(|| panic!("no service_times input"));
    assert!(rec.source.contains("poc.csv"), "{}", rec.source);

    // A value that is not a time: the CSV's own line and column.
    write("poc.csv", "request,latency_ms\n1,9.5\n2,fast\n");
    let e = tco_sim::scenario::Scenario::load(&scenario).unwrap_err();
    assert!(
        e.file.as_deref().is_some_and(|f| f.ends_with("poc.csv")),
        "{e}"
    );
    assert_eq!(e.position.map(|p| p.0), Some(3), "{e}");
    assert!(e.message.contains("`fast` is not a measured time"), "{e}");
    // A column the header lacks: the header's line, and the columns it has.
    write("poc.csv", "request,latency\n1,9.5\n2,10\n");
    let e = tco_sim::scenario::Scenario::load(&scenario).unwrap_err();
    assert_eq!(e.position.map(|p| p.0), Some(1), "{e}");
    assert!(
        e.help.as_deref().unwrap_or("").contains("request, latency"),
        "{e}"
    );
    // A missing file: the scenario's field.
    std::fs::remove_file(dir.path().join("poc.csv")).unwrap_or_else(|e| panic!("{e}"));
    let e = tco_sim::scenario::Scenario::load(&scenario).unwrap_err();
    assert_eq!(
        e.field.as_deref(),
        Some("tier[0].service_times.file"),
        "{e}"
    );
}

/// Every way of giving the times wrongly is refused where it is written.
#[test]
fn bad_service_times_are_refused_where_they_are() {
    let cases = [
        (
            "service_times = { values = [1, 2] }\nservice_cv = 0.3",
            "tier[0].service_cv",
        ),
        (
            "service_times = { values = [1, -2, 3] }",
            "tier[0].service_times.values[1]",
        ),
        ("service_times = { values = [1] }", "tier[0].service_times"),
        ("service_times = { }", "tier[0].service_times"),
        (
            "service_times = { values = [1, 2], file = \"t.csv\" }",
            "tier[0].service_times.values",
        ),
        (
            "service_times = { file = \"t.csv\" }",
            "tier[0].service_times.file",
        ),
        (
            "service_times = { values = [1, 2], column = \"ms\" }",
            "tier[0].service_times.column",
        ),
        (
            "service_times_source = \"our PoC\"",
            "tier[0].service_times_source",
        ),
    ];
    for (extra, field) in cases {
        let e = load(&scenario_text("", extra)).unwrap_err();
        assert_eq!(e.field.as_deref(), Some(field), "{extra}: {e}");
        assert!(
            e.position.is_some_and(|(line, _)| line >= 16),
            "{extra}: {e}"
        );
    }
    // An unknown key inside the table is refused by name.
    let e = load(&scenario_text(
        "",
        "service_times = { values = [1, 2], unit = \"ms\" }",
    ))
    .unwrap_err();
    assert!(e.to_string().contains("unit"), "{e}");
}
