//! Shared helpers for the simulator's integration tests: closed-form queueing results to check
//! against, and small builders for fleets and runs.

#![allow(dead_code)] // each test binary uses a different subset

use tco_sim::sim::{Dispatch, FleetSpec, RunSpec, ServerModel, ServiceDist};
use tco_sim::traffic::Request;

/// Erlang-C probability that an arrival must wait in M/M/c with offered load a = λ/μ [Erlang].
///
/// Computed through the Erlang-B recursion B(0) = 1, B(k) = a·B(k−1) / (k + a·B(k−1)), then
/// C = B / (1 − ρ(1 − B)) with ρ = a/c, which is stable for large c (Gross, Shortle, Thompson &
/// Harris, *Fundamentals of Queueing Theory*, 4th ed., 2008, §2.3 and §2.6).
pub fn erlang_c(c: u32, a: f64) -> f64 {
    let mut b = 1.0;
    for k in 1..=c {
        b = a * b / (f64::from(k) + a * b);
    }
    let rho = a / f64::from(c);
    b / (1.0 - rho * (1.0 - b))
}

/// P(T > t) for the sojourn time T of a FIFO M/M/c queue with arrival rate λ and service rate μ
/// per server [1/s], t in seconds.
///
/// T = W_q + S with S ~ Exp(μ) independent of W_q, and W_q = 0 with probability 1 − C, otherwise
/// W_q ~ Exp(θ), θ = cμ − λ (Gross et al. 2008, §2.3.1). The sum of Exp(θ) and Exp(μ) has
/// survival (θe^{−μt} − μe^{−θt}) / (θ − μ) for θ ≠ μ and (1 + μt)e^{−μt} for θ = μ, so
///
/// ```text
/// P(T > t) = (1 − C)·e^{−μt} + C·P(Exp(θ) + Exp(μ) > t).
/// ```
pub fn mmc_sojourn_survival(c: u32, lambda: f64, mu: f64, t: f64) -> f64 {
    let cc = erlang_c(c, lambda / mu);
    let theta = f64::from(c) * mu - lambda;
    let sum = if (theta - mu).abs() < 1e-12 * mu {
        (1.0 + mu * t) * (-mu * t).exp()
    } else {
        (theta * (-mu * t).exp() - mu * (-theta * t).exp()) / (theta - mu)
    };
    (1.0 - cc) * (-mu * t).exp() + cc * sum
}

/// The q-quantile of the M/M/c sojourn time [s], by bisection on the survival function (which is
/// continuous and strictly decreasing, so bisection converges to the unique root).
pub fn mmc_sojourn_quantile(c: u32, lambda: f64, mu: f64, q: f64) -> f64 {
    let target = 1.0 - q;
    let mut lo = 0.0;
    let mut hi = 1.0 / mu;
    while mmc_sojourn_survival(c, lambda, mu, hi) > target {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mmc_sojourn_survival(c, lambda, mu, mid) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// One unit with `c` slots behind a shared FIFO queue: the textbook M/G/c.
pub fn mgc(c: u32, service: ServiceDist) -> FleetSpec {
    FleetSpec {
        units: 1,
        server: ServerModel::Slots { slots: c, service },
        dispatch: Dispatch::SharedQueue,
        queue_cap: None,
        timeout_s: None,
    }
}

/// A run with warm-up, replications and seed.
pub fn run(warmup_s: f64, replications: u32, seed: u64) -> RunSpec {
    RunSpec {
        warmup_s,
        replications,
        seed,
        quantiles: vec![],
    }
}

/// A request arriving at `ms` milliseconds, without tokens.
pub fn at_ms(ms: f64) -> Request {
    Request {
        arrival_ns: (ms * 1e6).round() as u64,
        input_tokens: 0,
        output_tokens: 0,
        prefix: 0,
    }
}

/// Milliseconds → integer nanoseconds.
pub fn ms(ms: f64) -> u64 {
    (ms * 1e6).round() as u64
}
