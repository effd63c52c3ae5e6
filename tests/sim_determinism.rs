//! Same seed, same numbers, at any thread count: every server model and dispatcher, run with 6
//! replications on a 1-thread and a 4-thread rayon pool, must give byte-identical reports (JSON
//! and Debug, so every f64 bit counts). And a different seed must give different numbers, or the
//! test would pass for a simulator that ignored its seed.

mod common;

use common::{mgc, run};
use tco_sim::sim::{
    self, Dispatch, FleetSpec, IterationCost, PoissonArrivals, Scheduler, ServerModel, ServiceDist,
    SimReport, Variability,
};

/// Every fleet of [`plain_fleets`], then the three that take a service-time spread again with
/// one (log-normal or empirical), whose draws come from the service stream.
fn fleets() -> Vec<FleetSpec> {
    let mut v = plain_fleets();
    let spread: Vec<FleetSpec> = v
        .iter()
        .filter_map(|f| {
            let mut f = f.clone();
            match &mut f.server {
                ServerModel::SharedBandwidth { variability, .. } => {
                    *variability = Variability::LogNormal { cv: 0.5 }
                }
                ServerModel::Batching { variability, .. } => {
                    *variability = Variability::LogNormal { cv: 0.3 }
                }
                ServerModel::ContinuousBatching { variability, .. } => {
                    *variability = Variability::Empirical {
                        relative: vec![0.9, 1.0, 1.3],
                    }
                }
                ServerModel::Slots { .. } => return None,
            }
            Some(f)
        })
        .collect();
    v.extend(spread);
    v
}

fn plain_fleets() -> Vec<FleetSpec> {
    let base = mgc(
        4,
        ServiceDist::LogNormal {
            mean_s: 0.01,
            cv: 1.5,
        },
    );
    vec![
        base.clone(),
        FleetSpec {
            units: 4,
            dispatch: Dispatch::PowerOfTwoChoices,
            timeout_s: Some(0.05),
            ..mgc(1, ServiceDist::Exponential { mean_s: 0.01 })
        },
        FleetSpec {
            units: 3,
            dispatch: Dispatch::JoinShortestQueue,
            queue_cap: Some(5),
            server: ServerModel::SharedBandwidth {
                variability: Variability::None,
                chips: 2,
                cores_per_chip: 2,
                time_at_busy_s: vec![0.004, 0.006],
            },
            ..base.clone()
        },
        FleetSpec {
            units: 2,
            dispatch: Dispatch::RoundRobin,
            server: ServerModel::Batching {
                variability: Variability::None,
                devices: 1,
                max_batch: 4,
                window_s: 0.002,
                batch_time_s: vec![0.004, 0.005, 0.006, 0.007],
            },
            ..base.clone()
        },
        FleetSpec {
            units: 2,
            server: ServerModel::ContinuousBatching {
                variability: Variability::None,
                prefix_cache: None,
                replicas: 1,
                max_batch: 8,
                kv_capacity_tokens: 4000,
                scheduler: Scheduler::legacy(),
                cost: IterationCost {
                    fixed_s: 0.0005,
                    prefill_s_per_token: 0.000_01,
                    decode_compute_s_per_seq: 0.0001,
                    weight_read_s: 0.002,
                    kv_read_s_per_token: 0.000_001,
                    attention_s_per_pair: 0.0,
                    collective_s_per_token: 0.0,
                    compiled_context_tokens: 0.0,
                    stream_s_per_seq: 0.0,
                    attention_block_s_per_token: 0.0,
                },
            },
            ..base.clone()
        },
        // vLLM's scheduler: chunked prefill under a 128-token budget and paged KV in 16-token
        // blocks, with a cache small enough (1,200 tokens) that sequences are preempted.
        FleetSpec {
            units: 2,
            server: ServerModel::ContinuousBatching {
                variability: Variability::None,
                replicas: 1,
                max_batch: 8,
                kv_capacity_tokens: 1_200,
                prefix_cache: None,
                scheduler: Scheduler {
                    max_batched_tokens: Some(128),
                    chunked_prefill: true,
                    kv: tco_sim::sim::KvAllocation::Paged { block_tokens: 16 },
                },
                cost: IterationCost {
                    fixed_s: 0.0005,
                    prefill_s_per_token: 0.000_01,
                    decode_compute_s_per_seq: 0.0001,
                    weight_read_s: 0.002,
                    kv_read_s_per_token: 0.000_001,
                    attention_s_per_pair: 1e-9,
                    collective_s_per_token: 0.0,
                    compiled_context_tokens: 0.0,
                    stream_s_per_seq: 0.0,
                    attention_block_s_per_token: 0.0,
                },
            },
            ..base
        },
    ]
}

fn simulate(fleet: &FleetSpec, seed: u64, threads: usize) -> SimReport {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    pool.install(|| {
        sim::simulate(fleet, &run(0.5, 6, seed), |rep| {
            PoissonArrivals::new(seed, rep, 300.0, 5_000).with_tokens(200, 20)
        })
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn reports_are_byte_identical_at_1_and_4_threads() {
    for fleet in fleets() {
        let one = simulate(&fleet, 42, 1);
        let four = simulate(&fleet, 42, 4);
        let json_one = serde_json::to_string(&one).unwrap_or_else(|e| panic!("{e}"));
        let json_four = serde_json::to_string(&four).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(json_one, json_four, "{:?}", fleet.server);
        assert_eq!(format!("{one:?}"), format!("{four:?}"));
        assert!(one.counts.completed > 0);
        if let ServerModel::ContinuousBatching {
            kv_capacity_tokens: 1_200,
            ..
        } = fleet.server
        {
            assert!(one.llm.is_some_and(|l| l.preemptions > 0), "{:?}", one.llm);
        }
        let other = simulate(&fleet, 43, 1);
        assert_ne!(
            serde_json::to_string(&other).unwrap_or_default(),
            json_one,
            "{:?}",
            fleet.server
        );
    }
}

/// Closed-loop runs too: think times have their own stream, so 1 and 4 threads agree.
#[test]
fn closed_loop_reports_are_byte_identical_at_1_and_4_threads() {
    let closed = sim::ClosedLoop {
        clients: 6,
        think: sim::ThinkTime::Exponential { mean_s: 0.01 },
        duration_s: 5.0,
        max_requests: 5_000,
    };
    for fleet in fleets() {
        let go = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap_or_else(|e| panic!("{e}"));
            pool.install(|| {
                sim::simulate_closed(&fleet, &run(0.5, 6, 42), &closed, |_| {
                    std::iter::repeat(tco_sim::traffic::Request {
                        arrival_ns: 0,
                        input_tokens: 200,
                        output_tokens: 20,
                        prefix: 0,
                    })
                })
            })
            .unwrap_or_else(|e| panic!("{e}"))
        };
        let one = serde_json::to_string(&go(1)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(one, serde_json::to_string(&go(4)).unwrap_or_default());
    }
}

/// More replications than one parallel chunk (64): merging chunk by chunk must still be
/// independent of the thread count, and the confidence interval must narrow as replications
/// are added (by about √(130/10) ≈ 3.6).
#[test]
fn many_replications_merge_identically_and_narrow_the_interval() {
    let fleet = mgc(2, ServiceDist::Exponential { mean_s: 0.01 });
    let go = |reps, threads| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        pool.install(|| {
            sim::simulate(&fleet, &run(0.0, reps, 3), |rep| {
                PoissonArrivals::new(3, rep, 150.0, 2_000)
            })
        })
        .unwrap_or_else(|e| panic!("{e}"))
    };
    let one = go(130, 1);
    assert_eq!(format!("{one:?}"), format!("{:?}", go(130, 4)));
    assert_eq!(one.replications, 130);
    assert_eq!(one.counts.arrived, 130 * 2_000);
    let wide = go(10, 2).latency.p99.ci95_half_width_s.unwrap_or(0.0);
    let narrow = one.latency.p99.ci95_half_width_s.unwrap_or(f64::INFINITY);
    assert!(narrow < wide / 2.0, "{narrow} vs {wide}");
}
