//! The fast FIFO recursion and the event engine must agree: same latencies, queueing delays and
//! service times (histograms compared whole), same counts, same per-unit utilization and time
//! averages, on every shape the fast path takes (one or many units, warm-up, replications,
//! deterministic and random service, caps and timeouts).

mod common;

use common::{mgc, run};
use tco_sim::sim::{self, Engine, FleetSpec, PoissonArrivals, ServiceDist, SimReport};

fn both(fleet: &FleetSpec, rate: f64, n: u64) -> (SimReport, SimReport) {
    let go = |engine| {
        sim::simulate_with(fleet, &run(0.2, 3, 17), engine, |rep| {
            PoissonArrivals::new(17, rep, rate, n)
        })
        .unwrap_or_else(|e| panic!("{e}"))
    };
    (go(Engine::Auto), go(Engine::General))
}

fn assert_same(fast: &SimReport, general: &SimReport, what: &str) {
    assert_eq!(fast.counts, general.counts, "{what}");
    assert_eq!(fast.latency, general.latency, "{what}");
    assert_eq!(fast.queueing, general.queueing, "{what}");
    assert_eq!(fast.service, general.service, "{what}");
    assert_eq!(fast.latency_cdf, general.latency_cdf, "{what}");
    assert_eq!(fast.measured_time_s, general.measured_time_s, "{what}");
    assert_eq!(fast.utilization, general.utilization, "{what}");
    assert_eq!(
        fast.queue.mean_waiting, general.queue.mean_waiting,
        "{what}"
    );
    assert_eq!(fast.little, general.little, "{what}");
    // The maximum queue may differ by the momentary newcomer when an arrival and a completion
    // share a nanosecond (the engine can see the queue one longer for zero time).
    assert!(
        fast.queue.max_waiting.abs_diff(general.queue.max_waiting) <= 1,
        "{what}: {} vs {}",
        fast.queue.max_waiting,
        general.queue.max_waiting
    );
}

#[test]
fn fast_path_matches_the_engine_on_mmc() {
    for (c, rate) in [(1, 90.0), (8, 720.0), (128, 11_500.0)] {
        let f = mgc(c, ServiceDist::Exponential { mean_s: 0.01 });
        let (fast, general) = both(&f, rate, 30_000);
        assert_same(&fast, &general, &format!("M/M/{c}"));
    }
}

#[test]
fn fast_path_matches_the_engine_over_several_units() {
    let f = FleetSpec {
        units: 4,
        ..mgc(
            2,
            ServiceDist::LogNormal {
                mean_s: 0.01,
                cv: 2.0,
            },
        )
    };
    let (fast, general) = both(&f, 700.0, 30_000);
    assert_same(&fast, &general, "4 units x 2 slots, log-normal");
    // Work spreads over the units in both.
    assert!(fast.utilization.utilization.iter().all(|&u| u > 0.5));
}

#[test]
fn fast_path_matches_the_engine_with_deterministic_service() {
    let f = mgc(3, ServiceDist::Deterministic { s: 0.004 });
    let (fast, general) = both(&f, 650.0, 30_000);
    assert_same(&fast, &general, "M/D/3");
}

#[test]
fn fast_path_matches_the_engine_with_cap_and_timeout() {
    for (cap, timeout) in [(Some(3), None), (None, Some(0.02)), (Some(5), Some(0.03))] {
        let f = FleetSpec {
            queue_cap: cap,
            timeout_s: timeout,
            ..mgc(2, ServiceDist::Exponential { mean_s: 0.01 })
        };
        // Overloaded (ρ = 1.2) so both the cap and the timeout bite often.
        let (fast, general) = both(&f, 240.0, 30_000);
        assert!(fast.counts.rejected_queue_full + fast.counts.timed_out > 1000);
        assert_same(&fast, &general, &format!("cap {cap:?} timeout {timeout:?}"));
    }
}
