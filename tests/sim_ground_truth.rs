//! Ground truth: the simulator against closed-form queueing theory, with fixed seeds and every
//! tolerance in one place ([`tolerance`]). DESIGN.md: "the simulator is wrong until it does".
//!
//! * M/M/1: sojourn ~ Exp(μ − λ), so p99 = ln(100)/(μ − λ).
//! * M/M/c, c = 1, 8, 128: sojourn percentiles from the Erlang-C sojourn distribution
//!   ([`common::mmc_sojourn_quantile`]).
//! * M/D/1 and M/G/1 (log-normal): mean wait from Pollaczek–Khinchine,
//!   W_q = λ·E[S²] / (2(1 − ρ)).
//! * D/D/1: every latency exactly.
//! * Little's law L = λW on every run.
//!
//! `cargo test --release --test sim_ground_truth -- --ignored --nocapture measure_seed_spread`
//! re-measures the seed-to-seed spread that the tolerances come from.

mod common;

use common::{mgc, mmc_sojourn_quantile, run};
use tco_sim::sim::{self, Engine, PoissonArrivals, ServiceDist, SimReport};

/// Every tolerance of this file, relative (|simulated / theory − 1|).
///
/// How they were set: each case below was run with 16 seeds (1..=16, the `measure_seed_spread`
/// test, release build) at exactly the size the tests use, and the relative error against theory
/// was summarised by its mean (bias) and standard deviation σ over seeds. A tolerance is
/// |bias| + 3σ of that measurement, rounded up (to the next 0.05 % at least), so a correct simulator fails
/// a check for a fresh seed about 3 times in 1000; a real error (wrong Erlang C, a lost event, a
/// FIFO violation) moves the numbers by far more. The fixed seeds below (11–16) were among the
/// measured ones. The measured figures are written next to each constant.
mod tolerance {
    /// M/M/1 at ρ = 0.8, 8 × 6·10^6 requests: p99 of sojourn.
    /// Measured: bias +0.04 %, σ 0.33 % → 1.04 %. (At 10^7 requests σ was 0.54 %: the 1 % aim
    /// needs ~5·10^7 requests at this utilization, about 1 s of release-mode simulation.)
    pub const MM1_P99: f64 = 0.011;
    /// M/M/c (c = 1, ρ = 0.7), 8 × 1.5·10^6 requests: p50, p95, p99.
    /// Measured: bias +0.01 / −0.02 / −0.05 %, σ 0.11 / 0.22 / 0.30 % → 0.35 / 0.68 / 0.94 %.
    pub const MMC1: [f64; 3] = [0.0040, 0.0070, 0.0095];
    /// M/M/c (c = 8, ρ = 0.8), 4 × 10^6 requests: p50, p95, p99.
    /// Measured: bias −0.05 / −0.07 / −0.08 %, σ 0.23 / 0.26 / 0.28 % → 0.74 / 0.86 / 0.91 %.
    pub const MMC8: [f64; 3] = [0.0075, 0.0090, 0.0095];
    /// M/M/c (c = 128, ρ = 0.9), 10^6 requests: p50, p95, p99.
    /// Measured: bias +0.07 / +0.01 / −0.03 %, σ 0.22 / 0.15 / 0.19 % → 0.71 / 0.44 / 0.59 %.
    pub const MMC128: [f64; 3] = [0.0075, 0.0045, 0.0060];
    /// M/D/1 at ρ = 0.8, 8 × 10^6 requests: mean wait (Pollaczek–Khinchine).
    /// Measured: bias +0.03 %, σ 0.37 % → 1.15 %.
    pub const MD1_WAIT: f64 = 0.012;
    /// M/G/1, log-normal service (cv 1), ρ = 0.7, 8 × 10^6 requests: mean wait.
    /// Measured: bias +0.04 %, σ 0.33 % → 1.02 %.
    pub const MG1_WAIT: f64 = 0.0105;
    /// Little's law, |L − λW| / λW, on every run above. Not noise but an edge effect: warm-up
    /// requests still inside when the window opens add area without adding to W, about W/T
    /// (10 ms / 87 s ≈ 1.2·10^-4 for the M/M/128 case). Measured worst over all cases and seeds:
    /// 1.38·10^-4; the tolerance leaves 3.6× room.
    pub const LITTLE: f64 = 5e-4;
}

/// Mean service time of every case [s]. Milliseconds keep the integer-ns rounding of service
/// and arrival times at a relative 10^-6, far below every tolerance.
const MEAN_S: f64 = 0.010;

/// Warm-up, in arrivals: 10^4 arrivals is at most 1 % of every run and many relaxation times
/// (1/(μ(1 − √ρ)²) ≈ 0.9 s ≈ 72 arrivals for M/M/1 at ρ = 0.8; Gross et al. 2008, §2.12).
const WARMUP_ARRIVALS: f64 = 10_000.0;

/// Largest Little's-law error seen by this process (printed by `measure_seed_spread`).
static WORST_LITTLE: std::sync::Mutex<f64> = std::sync::Mutex::new(0.0);

/// One queueing case: c servers, utilization ρ, `per_rep` requests in each of `reps`
/// replications.
#[derive(Clone, Copy)]
struct Case {
    c: u32,
    rho: f64,
    per_rep: u64,
    reps: u32,
}

impl Case {
    fn lambda(&self) -> f64 {
        self.rho * f64::from(self.c) / MEAN_S
    }

    fn simulate(&self, service: ServiceDist, seed: u64) -> SimReport {
        let lambda = self.lambda();
        let n = self.per_rep;
        // The event engine, not the fast FIFO recursion that `simulate` would pick for these
        // fleets: the engine is what the other server models run on, and tests/sim_fast_path.rs
        // shows the recursion gives the engine's numbers exactly.
        let report = sim::simulate_with(
            &mgc(self.c, service),
            &run(WARMUP_ARRIVALS / lambda, self.reps, seed),
            Engine::General,
            |rep| PoissonArrivals::new(seed, rep, lambda, n),
        );
        let report = match report {
            Ok(r) => r,
            Err(e) => panic!("simulation failed: {e}"),
        };
        assert!(!report.unstable, "{:?}", report.warnings);
        if let Ok(mut worst) = WORST_LITTLE.lock() {
            *worst = worst.max(report.little.relative_error);
        }
        assert!(
            report.little.relative_error < tolerance::LITTLE,
            "Little's law: L = {} but λW = {} × {} (relative error {})",
            report.little.l,
            report.little.lambda_per_s,
            report.little.w_s,
            report.little.relative_error
        );
        report
    }
}

const MM1: Case = Case {
    c: 1,
    rho: 0.8,
    per_rep: 6_000_000,
    reps: 8,
};
const MMC1: Case = Case {
    c: 1,
    rho: 0.7,
    per_rep: 1_500_000,
    reps: 8,
};
const MMC8: Case = Case {
    c: 8,
    rho: 0.8,
    per_rep: 1_000_000,
    reps: 4,
};
const MMC128: Case = Case {
    c: 128,
    rho: 0.9,
    per_rep: 1_000_000,
    reps: 1,
};
const MD1: Case = Case {
    c: 1,
    rho: 0.8,
    per_rep: 1_000_000,
    reps: 8,
};
const MG1: Case = Case {
    c: 1,
    rho: 0.7,
    per_rep: 1_000_000,
    reps: 8,
};

/// Log-normal coefficient of variation of the M/G/1 case.
const MG1_CV: f64 = 1.0;

fn exp_service() -> ServiceDist {
    ServiceDist::Exponential { mean_s: MEAN_S }
}

/// Relative errors of the M/M/c sojourn p50, p95, p99 against theory.
fn mmc_errors(case: Case, seed: u64) -> [f64; 3] {
    let r = case.simulate(exp_service(), seed);
    let mu = 1.0 / MEAN_S;
    let sim = [
        r.latency.p50.value_s,
        r.latency.p95.value_s,
        r.latency.p99.value_s,
    ];
    let qs = [0.50, 0.95, 0.99];
    let mut out = [0.0; 3];
    for i in 0..3 {
        let theory = mmc_sojourn_quantile(case.c, case.lambda(), mu, qs[i]);
        out[i] = sim[i] / theory - 1.0;
    }
    out
}

/// Relative error of the M/M/1 p99 against ln(100)/(μ − λ) (Kleinrock, *Queueing Systems* vol. 1,
/// 1975, eq. 3.25: the M/M/1 sojourn time is exponential with rate μ − λ).
fn mm1_p99_error(seed: u64) -> f64 {
    let r = MM1.simulate(exp_service(), seed);
    let theory = 100f64.ln() / (1.0 / MEAN_S - MM1.lambda());
    r.latency.p99.value_s / theory - 1.0
}

/// Pollaczek–Khinchine mean wait W_q = λE[S²] / (2(1 − ρ)) [s] (Kleinrock 1975, eq. 5.73;
/// Gross et al. 2008, §5.1.1).
fn pk_wait(lambda: f64, second_moment: f64, rho: f64) -> f64 {
    lambda * second_moment / (2.0 * (1.0 - rho))
}

fn md1_wait_error(seed: u64) -> f64 {
    let r = MD1.simulate(ServiceDist::Deterministic { s: MEAN_S }, seed);
    let theory = pk_wait(MD1.lambda(), MEAN_S * MEAN_S, MD1.rho);
    r.queueing.mean.value_s / theory - 1.0
}

fn mg1_wait_error(seed: u64) -> f64 {
    let r = MG1.simulate(
        ServiceDist::LogNormal {
            mean_s: MEAN_S,
            cv: MG1_CV,
        },
        seed,
    );
    // E[S²] = Var + mean² = (1 + cv²)·mean².
    let second = (1.0 + MG1_CV * MG1_CV) * MEAN_S * MEAN_S;
    let theory = pk_wait(MG1.lambda(), second, MG1.rho);
    r.queueing.mean.value_s / theory - 1.0
}

fn check(name: &str, err: f64, tol: f64) {
    assert!(
        err.abs() <= tol,
        "{name}: relative error {:+.3} % exceeds the tolerance {:.3} %",
        err * 100.0,
        tol * 100.0
    );
}

#[test]
fn mm1_p99_is_ln100_over_mu_minus_lambda() {
    check("M/M/1 p99", mm1_p99_error(11), tolerance::MM1_P99);
}

#[test]
fn mmc_c1_sojourn_percentiles_match_erlang_c() {
    let e = mmc_errors(MMC1, 12);
    for (i, name) in ["p50", "p95", "p99"].iter().enumerate() {
        check(&format!("M/M/1 ρ=0.7 {name}"), e[i], tolerance::MMC1[i]);
    }
}

#[test]
fn mmc_c8_sojourn_percentiles_match_erlang_c() {
    let e = mmc_errors(MMC8, 13);
    for (i, name) in ["p50", "p95", "p99"].iter().enumerate() {
        check(&format!("M/M/8 {name}"), e[i], tolerance::MMC8[i]);
    }
}

#[test]
fn mmc_c128_sojourn_percentiles_match_erlang_c() {
    let e = mmc_errors(MMC128, 14);
    for (i, name) in ["p50", "p95", "p99"].iter().enumerate() {
        check(&format!("M/M/128 {name}"), e[i], tolerance::MMC128[i]);
    }
}

#[test]
fn md1_mean_wait_is_pollaczek_khinchine() {
    check("M/D/1 Wq", md1_wait_error(15), tolerance::MD1_WAIT);
}

#[test]
fn mg1_lognormal_mean_wait_is_pollaczek_khinchine() {
    check("M/G/1 Wq", mg1_wait_error(16), tolerance::MG1_WAIT);
}

/// D/D/1 with service longer than the gap: request i (1-based) arrives at 10·i ms and leaves at
/// 10 + 15·i ms, so its latency is exactly 10 + 5·i ms; with service shorter than the gap every
/// latency is the service time.
#[test]
fn dd1_latencies_are_exact() {
    let fleet = mgc(1, ServiceDist::Deterministic { s: 0.015 });
    let trace = sim::simulate_traced(&fleet, 1, sim::DeterministicArrivals::new(10_000_000, 50));
    let trace = trace.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(trace.len(), 50);
    for (k, c) in trace.iter().enumerate() {
        let i = k as u64 + 1;
        assert_eq!(c.request.arrival_ns, 10_000_000 * i);
        assert_eq!(c.end_ns, 10_000_000 + 15_000_000 * i, "request {i}");
    }

    let fleet = mgc(1, ServiceDist::Deterministic { s: 0.004 });
    let r = sim::simulate(&fleet, &run(0.0, 2, 1), |_| {
        sim::DeterministicArrivals::new(10_000_000, 1000)
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.latency.count, 2000);
    assert_eq!(r.latency.mean.value_s, 0.004);
    assert_eq!(r.latency.p99.value_s, 0.004);
    assert_eq!(r.latency.max_s, 0.004);
    assert_eq!(r.queueing.max_s, 0.0);
    // Busy 4 ms of every 10 ms; the window ends at the last departure (10 s + 4 ms).
    let util = r.utilization.mean_utilization;
    assert!((util - 0.4 * 10.0 / 10.004).abs() < 1e-12, "{util}");
    assert!(r.little.relative_error < 1e-12);
}

/// Re-measures the seed-to-seed spread behind [`tolerance`]. Slow (minutes in release); run by
/// hand, never in CI.
#[test]
#[ignore = "measurement, not a check: run by hand to re-derive the tolerances"]
fn measure_seed_spread() {
    fn summary(name: &str, xs: &[f64]) {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let sd = (xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0)).sqrt();
        let worst = xs.iter().fold(0.0f64, |a, x| a.max(x.abs()));
        println!(
            "{name:<16} bias {:+.3} %  sd {:.3} %  |bias|+3sd {:.3} %  worst {:.3} %",
            mean * 100.0,
            sd * 100.0,
            (mean.abs() + 3.0 * sd) * 100.0,
            worst * 100.0
        );
    }
    let seeds: Vec<u64> = (1..=16).collect();
    let col = |v: &[[f64; 3]], i: usize| v.iter().map(|x| x[i]).collect::<Vec<_>>();
    let mm1: Vec<f64> = seeds.iter().map(|&s| mm1_p99_error(s)).collect();
    summary("M/M/1 p99", &mm1);
    for (name, case) in [("M/M/1 0.7", MMC1), ("M/M/8", MMC8), ("M/M/128", MMC128)] {
        let v: Vec<[f64; 3]> = seeds.iter().map(|&s| mmc_errors(case, s)).collect();
        summary(&format!("{name} p50"), &col(&v, 0));
        summary(&format!("{name} p95"), &col(&v, 1));
        summary(&format!("{name} p99"), &col(&v, 2));
    }
    let md1: Vec<f64> = seeds.iter().map(|&s| md1_wait_error(s)).collect();
    summary("M/D/1 Wq", &md1);
    let mg1: Vec<f64> = seeds.iter().map(|&s| mg1_wait_error(s)).collect();
    summary("M/G/1 Wq", &mg1);
    println!(
        "Little's law: worst relative error {:.2e}",
        WORST_LITTLE.lock().map_or(f64::NAN, |w| *w)
    );
}
