//! `sim::simulate_unless`: a run stopped early only when its whole result would miss a bound,
//! and otherwise exactly the whole run's report. Checked against `sim::simulate` on fleets on
//! both sides of the bounds, for the generative engine (TTFT, TPOT) and for slots behind
//! per-unit queues (end-to-end latency).

mod common;

use tco_sim::sim::{
    self, Cutoff, Dispatch, FleetSpec, IterationCost, KvAllocation, PoissonArrivals, RunSpec,
    Scheduler, ServerModel, ServiceDist, SimReport, Variability,
};
use tco_sim::traffic::Request;

fn llm(units: u32) -> FleetSpec {
    FleetSpec {
        units,
        server: ServerModel::ContinuousBatching {
            replicas: 1,
            max_batch: 16,
            kv_capacity_tokens: 16_384,
            cost: IterationCost {
                fixed_s: 0.004,
                prefill_s_per_token: 0.000_02,
                decode_compute_s_per_seq: 0.000_5,
                weight_read_s: 0.0,
                kv_read_s_per_token: 0.0,
                attention_s_per_pair: 0.0,
                collective_s_per_token: 0.0,
                compiled_context_tokens: 0.0,
                stream_s_per_seq: 0.0,
                attention_block_s_per_token: 0.0,
            },
            variability: Variability::lognormal(0.3),
            scheduler: Scheduler {
                max_batched_tokens: Some(2048),
                chunked_prefill: true,
                kv: KvAllocation::Paged { block_tokens: 16 },
            },
            prefix_cache: None,
        },
        dispatch: Dispatch::JoinShortestQueue,
        queue_cap: None,
        timeout_s: None,
    }
}

fn run(quantile: f64) -> RunSpec {
    RunSpec {
        warmup_s: 5.0,
        replications: 2,
        seed: 17,
        quantiles: vec![quantile],
    }
}

/// Poisson arrivals with prompt and output lengths that vary (some of one output token).
fn requests(rep: u64, rate: f64) -> impl Iterator<Item = Request> {
    PoissonArrivals::new(3, rep, rate, 3_000).map(|mut r| {
        let h = r.arrival_ns / 1_000 % 997;
        r.input_tokens = 50 + (h * 7 % 600) as u32;
        r.output_tokens = 1 + (h * 13 % 120) as u32;
        r
    })
}

fn extra(l: &sim::LatencyStats) -> f64 {
    l.extra[0].1.value_s
}

/// What the whole run says against the cutoff's bounds: true when it misses one.
fn misses(r: &SimReport, c: &Cutoff) -> bool {
    let over = |v: Option<f64>, b: Option<f64>| matches!((v, b), (Some(v), Some(b)) if v > b);
    over(Some(extra(&r.latency)), c.latency_s)
        || over(r.ttft.as_ref().map(extra), c.ttft_s)
        || over(r.tpot.as_ref().map(extra), c.tpot_s)
}

/// Each case both ways; returns (stopped early, whole and failing, whole and meeting).
fn check(fleet: &FleetSpec, run: &RunSpec, cutoff: &Cutoff, rate: f64) -> (u32, u32, u32) {
    let whole = sim::simulate(fleet, run, |rep| requests(rep, rate)).expect("simulates");
    let early =
        sim::simulate_unless(fleet, run, cutoff, |rep| requests(rep, rate)).expect("simulates");
    let fails = misses(&whole, cutoff);
    match early {
        None => {
            assert!(
                fails,
                "stopped early but the whole run meets the bounds ({} units, {rate}/s)",
                fleet.units
            );
            (1, 0, 0)
        }
        Some(r) => {
            assert_eq!(r, whole, "an unstopped run is the whole run");
            (0, u32::from(fails), u32::from(!fails))
        }
    }
}

#[test]
fn llm_runs_stop_only_when_certain_to_fail_ttft_or_tpot() {
    let mut total = (0, 0, 0);
    for (units, rate) in [
        (1, 10.0),
        (1, 20.0),
        (1, 30.0),
        (2, 30.0),
        (2, 50.0),
        (4, 50.0),
    ] {
        for cutoff in [
            Cutoff {
                quantile: 0.99,
                latency_s: None,
                ttft_s: Some(0.3),
                tpot_s: Some(0.015),
            },
            Cutoff {
                quantile: 0.9,
                latency_s: None,
                ttft_s: None,
                tpot_s: Some(0.010),
            },
        ] {
            let (a, b, c) = check(&llm(units), &run(cutoff.quantile), &cutoff, rate);
            total = (total.0 + a, total.1 + b, total.2 + c);
        }
    }
    // Not vacuous: some runs stop, some meet the bounds.
    assert!(total.0 >= 2, "stopped early: {total:?}");
    assert!(total.2 >= 2, "met: {total:?}");
}

#[test]
fn slot_runs_stop_only_when_certain_to_fail_the_latency_bound() {
    let mut total = (0, 0, 0);
    for units in 1..=6 {
        let mut fleet = common::mgc(1, ServiceDist::Exponential { mean_s: 0.010 });
        fleet.units = units;
        fleet.dispatch = Dispatch::JoinShortestQueue;
        let cutoff = Cutoff {
            quantile: 0.95,
            latency_s: Some(0.040),
            ttft_s: Some(0.001), // no tokens: not a bound of this fleet
            tpot_s: None,
        };
        let (a, b, c) = check(&fleet, &run(0.95), &cutoff, 250.0);
        total = (total.0 + a, total.1 + b, total.2 + c);
    }
    assert!(total.0 >= 1 && total.2 >= 1, "{total:?}");
}

/// Slots behind one queue are played by the fast recursion, whole: its report, even failing.
#[test]
fn fast_recursion_fleets_are_played_whole() {
    let fleet = common::mgc(2, ServiceDist::Exponential { mean_s: 0.010 });
    let cutoff = Cutoff {
        quantile: 0.99,
        latency_s: Some(0.001),
        ttft_s: None,
        tpot_s: None,
    };
    let whole = sim::simulate(&fleet, &run(0.99), |rep| requests(rep, 150.0)).expect("runs");
    let early = sim::simulate_unless(&fleet, &run(0.99), &cutoff, |rep| requests(rep, 150.0))
        .expect("runs");
    assert!(misses(&whole, &cutoff));
    assert_eq!(early, Some(whole));
}
