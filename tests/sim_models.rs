//! Exact tests of the server models, dispatchers, queue caps, timeouts, warm-up and the overload
//! guard: deterministic inputs whose every completion time can be worked out by hand (the
//! "fake executor" habit of STYLE.md). Times are in milliseconds in the comments.

mod common;

use common::{at_ms, mgc, ms, run};
use tco_sim::sim::{
    self, Completion, DeterministicArrivals, Dispatch, FleetSpec, IterationCost, Outcome,
    PoissonArrivals, Scheduler, ServerModel, ServiceDist, SimReport, Variability,
};
use tco_sim::traffic::Request;

fn trace(fleet: &FleetSpec, arrivals: Vec<Request>) -> Vec<Completion> {
    sim::simulate_traced(fleet, 1, arrivals).unwrap_or_else(|e| panic!("{e}"))
}

/// The completion of the request that arrived at `arrival_ms`.
fn of(t: &[Completion], arrival_ms: f64) -> Completion {
    match t.iter().find(|c| c.request.arrival_ns == ms(arrival_ms)) {
        Some(c) => *c,
        None => panic!("no request arrived at {arrival_ms} ms"),
    }
}

fn report(
    fleet: &FleetSpec,
    reps: u32,
    arrivals: impl Fn(u64) -> Vec<Request> + Sync,
) -> SimReport {
    sim::simulate(fleet, &run(0.0, reps, 1), |rep| arrivals(rep).into_iter())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn fleet(units: u32, server: ServerModel, dispatch: Dispatch) -> FleetSpec {
    FleetSpec {
        units,
        server,
        dispatch,
        queue_cap: None,
        timeout_s: None,
    }
}

// ---------------------------------------------------------------- shared bandwidth

fn cpu(chips: u32, table: &[f64]) -> ServerModel {
    ServerModel::SharedBandwidth {
        chips,
        cores_per_chip: table.len() as u32,
        time_at_busy_s: table.to_vec(),
        variability: Variability::None,
    }
}

/// t(1) = 1 s, t(2) = 2 s. A starts at 0 and runs alone at rate 1 until B arrives at 0.5 s
/// (A has 0.5 left); both then run at rate 1/2, so A finishes at 0.5 + 0.5·2 = 1.5 s. B has done
/// 0.5 by then and finishes alone at 2.0 s.
#[test]
fn shared_bandwidth_two_overlapping_requests() {
    let f = fleet(1, cpu(1, &[1.0, 2.0]), Dispatch::SharedQueue);
    let t = trace(&f, vec![at_ms(0.0), at_ms(500.0)]);
    assert_eq!(of(&t, 0.0).end_ns, ms(1500.0));
    assert_eq!(of(&t, 500.0).end_ns, ms(2000.0));
    assert_eq!(of(&t, 500.0).start_ns, ms(500.0));
}

/// t(1) = 1 s, t(2) = 1.5 s, B at 0.25 s: A has 0.75 left at rate 1/1.5 → done at 1.375 s; B has
/// done 0.75 by then, 0.25 left alone → 1.625 s.
#[test]
fn shared_bandwidth_rate_changes_mid_request() {
    let f = fleet(1, cpu(1, &[1.0, 1.5]), Dispatch::SharedQueue);
    let t = trace(&f, vec![at_ms(0.0), at_ms(250.0)]);
    assert_eq!(of(&t, 0.0).end_ns, ms(1375.0));
    assert_eq!(of(&t, 250.0).end_ns, ms(1625.0));
}

/// Three requests together on a chip with t(3) = 3 s all finish at 3 s; a fourth waits for a
/// free core (three cores) and then runs alone: 3 + 1 = 4 s.
#[test]
fn shared_bandwidth_full_chip_queues() {
    let f = fleet(1, cpu(1, &[1.0, 2.0, 3.0]), Dispatch::SharedQueue);
    let t = trace(&f, vec![at_ms(0.0), at_ms(0.0), at_ms(0.0), at_ms(1.0)]);
    assert_eq!(t.iter().filter(|c| c.end_ns == ms(3000.0)).count(), 3);
    let d = of(&t, 1.0);
    assert_eq!((d.start_ns, d.end_ns), (ms(3000.0), ms(4000.0)));
}

/// Two chips: the second request goes to the idle chip, so neither slows the other.
#[test]
fn shared_bandwidth_spreads_over_chips() {
    let f = fleet(1, cpu(2, &[1.0, 2.0]), Dispatch::SharedQueue);
    let t = trace(&f, vec![at_ms(0.0), at_ms(0.0)]);
    assert!(t.iter().all(|c| c.end_ns == ms(1000.0)), "{t:?}");
}

// ---------------------------------------------------------------- batching

fn accel(devices: u32, window_ms: f64) -> ServerModel {
    ServerModel::Batching {
        devices,
        max_batch: 4,
        window_s: window_ms / 1e3,
        batch_time_s: vec![0.010, 0.012, 0.014, 0.016],
        variability: Variability::None,
    }
}

/// Arrivals at 1, 2, 3, 4: the fourth fills the batch at 4, which runs 16 → all done at 20.
#[test]
fn batching_full_batch_starts_at_once() {
    let f = fleet(1, accel(1, 10.0), Dispatch::SharedQueue);
    let t = trace(&f, (1..=4).map(|i| at_ms(f64::from(i))).collect());
    assert!(
        t.iter()
            .all(|c| c.start_ns == ms(4.0) && c.end_ns == ms(20.0)),
        "{t:?}"
    );
}

/// Arrivals at 1, 2: held until the oldest has waited the 10 ms window (11), batch of 2 runs 12
/// → 23.
#[test]
fn batching_waits_for_the_window() {
    let f = fleet(1, accel(1, 10.0), Dispatch::SharedQueue);
    let t = trace(&f, vec![at_ms(1.0), at_ms(2.0)]);
    assert!(
        t.iter()
            .all(|c| c.start_ns == ms(11.0) && c.end_ns == ms(23.0)),
        "{t:?}"
    );
}

/// Batch 1..4 runs 4 → 20. The request of 5 has outwaited its window by 20, so it runs alone at
/// once (20 → 30). The one of 25 finds the device free at 30 but has waited only 5, so it is held
/// to 35 and runs 35 → 45.
#[test]
fn batching_busy_device_then_window() {
    let f = fleet(1, accel(1, 10.0), Dispatch::SharedQueue);
    let arrivals = [1.0, 2.0, 3.0, 4.0, 5.0, 25.0].map(at_ms).to_vec();
    let t = trace(&f, arrivals);
    let e = of(&t, 5.0);
    assert_eq!((e.start_ns, e.end_ns), (ms(20.0), ms(30.0)));
    let g = of(&t, 25.0);
    assert_eq!((g.start_ns, g.end_ns), (ms(35.0), ms(45.0)));
}

/// Window 0 and two devices: every request starts alone at once on a free device.
#[test]
fn batching_zero_window_never_waits() {
    let f = fleet(1, accel(2, 0.0), Dispatch::SharedQueue);
    let t = trace(&f, vec![at_ms(1.0), at_ms(2.0)]);
    assert_eq!(of(&t, 1.0).end_ns, ms(11.0));
    assert_eq!(of(&t, 2.0).end_ns, ms(12.0));
    assert_ne!(of(&t, 1.0).unit, None);
}

// ---------------------------------------------------------------- continuous batching

fn llm(max_batch: u32, kv: u64, cost: IterationCost) -> ServerModel {
    ServerModel::ContinuousBatching {
        replicas: 1,
        max_batch,
        kv_capacity_tokens: kv,
        scheduler: Scheduler::legacy(),
        cost,
        variability: Variability::None,
        prefix_cache: None,
    }
}

/// fixed 1 ms; prefill 0.1 ms/token; weights 2 ms; decode compute and KV reads free.
fn simple_cost() -> IterationCost {
    IterationCost {
        fixed_s: 0.001,
        prefill_s_per_token: 0.0001,
        decode_compute_s_per_seq: 0.0,
        weight_read_s: 0.002,
        kv_read_s_per_token: 0.0,
        attention_s_per_pair: 0.0,
        collective_s_per_token: 0.0,
        compiled_context_tokens: 0.0,
        stream_s_per_seq: 0.0,
        attention_block_s_per_token: 0.0,
    }
}

fn tok(arrival_ms: f64, input: u32, output: u32) -> Request {
    Request {
        input_tokens: input,
        output_tokens: output,
        ..at_ms(arrival_ms)
    }
}

/// A alone (10 in, 3 out): prefill iteration 1 + max(1, 2) = 3 → first token at 3; two decode
/// iterations of 1 + max(0, 2) = 3 → done at 9. TTFT 3, TPOT (9 − 3)/2 = 3.
#[test]
fn continuous_single_request_exact() {
    let f = fleet(1, llm(8, 1000, simple_cost()), Dispatch::SharedQueue);
    let t = trace(&f, vec![tok(0.0, 10, 3)]);
    assert_eq!(t[0].end_ns, ms(9.0));
    assert_eq!(t[0].first_token_ns, Some(ms(3.0)));
    let r = report(&f, 1, |_| vec![tok(0.0, 10, 3)]);
    let (ttft, tpot) = match (&r.ttft, &r.tpot) {
        (Some(a), Some(b)) => (a.mean.value_s, b.mean.value_s),
        _ => panic!("continuous batching must report TTFT and TPOT"),
    };
    assert!((ttft - 0.003).abs() < 1e-12 && (tpot - 0.003).abs() < 1e-12);
}

/// B (30 in, 1 out) arrives at 1 while A's prefill runs; it joins at the next iteration (3),
/// whose time is 1 + max(30·0.1 + 0, 2) = 4 → B's only token at 7 (latency 6, queueing 2). A
/// gets token 2 at 7 and token 3 after 1 + max(0, 2) → 10.
#[test]
fn continuous_joins_at_iteration_boundary() {
    let f = fleet(1, llm(8, 1000, simple_cost()), Dispatch::SharedQueue);
    let t = trace(&f, vec![tok(0.0, 10, 3), tok(1.0, 30, 1)]);
    let a = of(&t, 0.0);
    let b = of(&t, 1.0);
    assert_eq!(
        (b.start_ns, b.end_ns, b.first_token_ns),
        (ms(3.0), ms(7.0), Some(ms(7.0)))
    );
    assert_eq!((a.first_token_ns, a.end_ns), (Some(ms(3.0)), ms(10.0)));
}

/// KV capacity 40 tokens: A reserves 13, B needs 31, so B waits for A to finish (9) and then
/// runs 1 + max(3, 2) = 4 → 13. With max_batch 1 the same happens for lack of a batch slot.
#[test]
fn continuous_waits_for_kv_room_and_batch_slots() {
    for (max_batch, kv) in [(8, 40), (1, 1000)] {
        let f = fleet(1, llm(max_batch, kv, simple_cost()), Dispatch::SharedQueue);
        let t = trace(&f, vec![tok(0.0, 10, 3), tok(1.0, 30, 1)]);
        let b = of(&t, 1.0);
        assert_eq!(
            (b.start_ns, b.end_ns),
            (ms(9.0), ms(13.0)),
            "max_batch {max_batch}"
        );
    }
}

/// The memory term counts every running sequence's context: A (10 in, 2 out) with KV reads of
/// 0.1 ms/token and no weights. Prefill: 1 + the GEMMs max(10·0.1, 0) = 1 + the attention
/// max(0, 10·0.1) = 1 → 3 (the KV read does not hide under the GEMMs); decode:
/// 1 + 0 + max(0, 11·0.1) = 2.1 → 5.1.
#[test]
fn continuous_memory_term_counts_context() {
    let cost = IterationCost {
        fixed_s: 0.001,
        prefill_s_per_token: 0.0001,
        decode_compute_s_per_seq: 0.0,
        weight_read_s: 0.0,
        kv_read_s_per_token: 0.0001,
        attention_s_per_pair: 0.0,
        collective_s_per_token: 0.0,
        compiled_context_tokens: 0.0,
        stream_s_per_seq: 0.0,
        attention_block_s_per_token: 0.0,
    };
    let f = fleet(1, llm(8, 1000, cost), Dispatch::SharedQueue);
    let t = trace(&f, vec![tok(0.0, 10, 2)]);
    assert_eq!((t[0].first_token_ns, t[0].end_ns), (Some(ms(3.0)), ms(5.1)));
}

/// A context larger than the KV cache can never run: rejected and counted, not left to hang.
#[test]
fn continuous_rejects_what_never_fits() {
    let f = fleet(1, llm(8, 40, simple_cost()), Dispatch::SharedQueue);
    let t = trace(&f, vec![tok(0.0, 30, 11), tok(1.0, 10, 3)]);
    assert_eq!(of(&t, 0.0).outcome, Outcome::RejectedTooLarge);
    assert_eq!(of(&t, 1.0).outcome, Outcome::Served);
    let r = report(&f, 1, |_| vec![tok(0.0, 30, 11), tok(1.0, 10, 3)]);
    assert_eq!(r.counts.rejected_too_large, 1);
    assert_eq!(r.counts.completed, 1);
}

// ---------------------------------------------------------------- caps, timeouts, warm-up

fn one_slot(service_ms: f64) -> FleetSpec {
    mgc(
        1,
        ServiceDist::Deterministic {
            s: service_ms / 1e3,
        },
    )
}

/// Service 10, timeout 5: A (0) is served 0 → 10; B (1) and C (2) are still waiting at 6 and 7
/// and are dropped then.
#[test]
fn timeout_drops_waiting_requests_on_time() {
    let f = FleetSpec {
        timeout_s: Some(0.005),
        ..one_slot(10.0)
    };
    let t = trace(&f, vec![at_ms(0.0), at_ms(1.0), at_ms(2.0)]);
    assert_eq!(of(&t, 0.0).outcome, Outcome::Served);
    for (a, end) in [(1.0, 6.0), (2.0, 7.0)] {
        let c = of(&t, a);
        assert_eq!((c.outcome, c.end_ns), (Outcome::TimedOut, ms(end)));
    }
    let r = report(&f, 1, |_| vec![at_ms(0.0), at_ms(1.0), at_ms(2.0)]);
    assert_eq!((r.counts.completed, r.counts.timed_out), (1, 2));
    assert!(r.little.relative_error < 1e-12, "{:?}", r.little);
}

/// Queue cap 1: B waits, C finds the queue full. Cap 0 on two slots is a loss system: the third
/// concurrent request is turned away.
#[test]
fn queue_cap_rejects_when_full() {
    let f = FleetSpec {
        queue_cap: Some(1),
        ..one_slot(10.0)
    };
    let t = trace(&f, vec![at_ms(0.0), at_ms(1.0), at_ms(2.0)]);
    assert_eq!(of(&t, 1.0).outcome, Outcome::Served);
    assert_eq!(of(&t, 2.0).outcome, Outcome::RejectedQueueFull);

    let loss = FleetSpec {
        queue_cap: Some(0),
        ..mgc(2, ServiceDist::Deterministic { s: 0.010 })
    };
    let r = report(&loss, 1, |_| vec![at_ms(0.0), at_ms(1.0), at_ms(2.0)]);
    assert_eq!((r.counts.completed, r.counts.rejected_queue_full), (2, 1));
}

/// Arrivals every 10 ms from 10 to 1000; warm-up 0.5 s counts the 51 from 500 on.
#[test]
fn warmup_requests_are_simulated_but_not_counted() {
    let f = one_slot(1.0);
    let r = sim::simulate(&f, &run(0.5, 1, 1), |_| {
        DeterministicArrivals::new(ms(10.0), 100)
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((r.counts.arrived_total, r.counts.arrived), (100, 51));
    assert_eq!(r.latency.count, 51);
    // The window runs from 0.5 s to the last departure at 1.001 s; busy 51 ms of it.
    assert!(
        (r.measured_time_s - 0.501).abs() < 1e-12,
        "{}",
        r.measured_time_s
    );
    assert!((r.utilization.mean_utilization - 0.051 / 0.501).abs() < 1e-12);
}

// ---------------------------------------------------------------- dispatch

fn units_of(t: &[Completion]) -> Vec<Option<u32>> {
    let mut t = t.to_vec();
    t.sort_by_key(|c| c.request.arrival_ns);
    t.iter().map(|c| c.unit).collect()
}

#[test]
fn round_robin_takes_units_in_turn() {
    let f = FleetSpec {
        dispatch: Dispatch::RoundRobin,
        units: 3,
        ..one_slot(1.0)
    };
    let t = trace(&f, (0..6).map(|i| at_ms(10.0 * f64::from(i))).collect());
    assert_eq!(units_of(&t), [0, 1, 2, 0, 1, 2].map(Some).to_vec());
}

/// Service 10. A → unit 0; B → unit 1 (unit 0 has one); C → unit 0 (tie, lowest index); D → unit
/// 1 (unit 0 has two). C waits for A and starts at 10.
#[test]
fn join_shortest_queue_balances() {
    let f = FleetSpec {
        dispatch: Dispatch::JoinShortestQueue,
        units: 2,
        ..one_slot(10.0)
    };
    let t = trace(&f, [0.0, 1.0, 2.0, 3.0].map(at_ms).to_vec());
    assert_eq!(units_of(&t), [0, 1, 0, 1].map(Some).to_vec());
    assert_eq!(of(&t, 2.0).start_ns, ms(10.0));
}

/// With two units, power-of-two choices always compares both, so the second request goes to the
/// idle unit whichever is drawn first; and a fixed seed gives the same choices every time.
#[test]
fn power_of_two_choices_prefers_the_emptier_and_is_reproducible() {
    let f = FleetSpec {
        dispatch: Dispatch::PowerOfTwoChoices,
        units: 2,
        ..one_slot(10.0)
    };
    for seed in 0..20 {
        let t = sim::simulate_traced(&f, seed, vec![at_ms(0.0), at_ms(1.0)])
            .unwrap_or_else(|e| panic!("{e}"));
        let u = units_of(&t);
        assert_ne!(u[0], u[1], "seed {seed}");
    }
    let big = FleetSpec {
        units: 8,
        ..f.clone()
    };
    let go = |seed| {
        sim::simulate_traced(&big, seed, PoissonArrivals::new(seed, 0, 700.0, 2000))
            .map(|t| units_of(&t))
            .unwrap_or_else(|e| panic!("{e}"))
    };
    assert_eq!(go(3), go(3));
    assert_ne!(go(3), go(4));
}

/// M/M/8 at ρ = 0.9: one shared queue beats join-shortest-queue, which beats round robin, in p99
/// (Winston 1977 proves JSQ optimal among per-unit queues for exponential service; a shared
/// queue never leaves a unit idle while a request waits). The margins are large (tens of %),
/// far beyond the noise of 2·10^5 requests.
#[test]
fn shared_queue_beats_jsq_beats_round_robin() {
    let p99 = |dispatch| {
        let f = FleetSpec {
            units: 8,
            dispatch,
            ..mgc(1, ServiceDist::Exponential { mean_s: 0.01 })
        };
        sim::simulate(&f, &run(1.0, 1, 5), |rep| {
            PoissonArrivals::new(5, rep, 720.0, 200_000)
        })
        .map(|r| r.latency.p99.value_s)
        .unwrap_or_else(|e| panic!("{e}"))
    };
    let shared = p99(Dispatch::SharedQueue);
    let jsq = p99(Dispatch::JoinShortestQueue);
    let rr = p99(Dispatch::RoundRobin);
    let p2c = p99(Dispatch::PowerOfTwoChoices);
    assert!(
        shared < jsq && jsq < rr,
        "shared {shared} jsq {jsq} rr {rr}"
    );
    assert!(jsq < p2c, "jsq {jsq} p2c {p2c}");
}

// ---------------------------------------------------------------- overload

/// ρ = 2 with no cap: the run ends (the iterator is finite), flagged unstable with a warning.
#[test]
fn overload_is_flagged_unstable() {
    let f = mgc(1, ServiceDist::Exponential { mean_s: 0.01 });
    let r = sim::simulate(&f, &run(0.0, 1, 1), |rep| {
        PoissonArrivals::new(1, rep, 200.0, 50_000)
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(r.unstable);
    assert!(
        r.warnings.iter().any(|w| w.contains("unstable")),
        "{:?}",
        r.warnings
    );
    let rho = r.offered_load.unwrap_or(0.0);
    assert!((rho - 2.0).abs() < 0.05, "{rho}");
}

/// An endless stream into a fleet that cannot keep up stops at the queue guard instead of
/// running forever or exhausting memory; the same for continuous batching.
#[test]
fn endless_overload_stops_at_the_queue_guard() {
    let endless = || {
        (1u64..).map(|i| Request {
            arrival_ns: i * 1000,
            input_tokens: 8,
            output_tokens: 8,
            prefix: 0,
        })
    };
    let slow = mgc(1, ServiceDist::Deterministic { s: 1.0 });
    let r = sim::simulate(&slow, &run(0.0, 1, 1), |_| endless()).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.unstable && r.counts.unfinished > 0, "{:?}", r.counts);
    assert!(r.warnings.iter().any(|w| w.contains("unstable")));

    let f = fleet(1, llm(4, 1000, simple_cost()), Dispatch::SharedQueue);
    let r = sim::simulate(&f, &run(0.0, 1, 1), |_| endless()).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.unstable, "{:?}", r.warnings);
}

/// ρ = 2 with a queue cap: bounded, so not unstable, but warned as overloaded and shedding load.
#[test]
fn overload_with_cap_is_bounded_and_warned() {
    let f = FleetSpec {
        queue_cap: Some(10),
        ..mgc(1, ServiceDist::Exponential { mean_s: 0.01 })
    };
    let r = sim::simulate(&f, &run(0.0, 1, 1), |rep| {
        PoissonArrivals::new(1, rep, 200.0, 20_000)
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(!r.unstable);
    assert!(r.counts.rejected_queue_full > 5_000, "{:?}", r.counts);
    assert!(r.queue.max_waiting <= 10);
    assert!(
        r.warnings.iter().any(|w| w.contains("overloaded")),
        "{:?}",
        r.warnings
    );
}

/// A warm-up longer than the traffic leaves nothing to measure: the report says so and holds no
/// NaN or infinity anywhere.
#[test]
fn empty_measurement_has_no_nan() {
    let f = mgc(2, ServiceDist::Exponential { mean_s: 0.01 });
    let r = sim::simulate(&f, &run(100.0, 3, 1), |rep| {
        PoissonArrivals::new(1, rep, 100.0, 1000)
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let text = format!("{r:?}");
    assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");
    assert!(r.warnings.iter().any(|w| w.contains("no requests")));
    assert!(r.latency_cdf.is_empty());
}

// ---------------------------------------------------------------- models agree where they meet

/// Shared bandwidth with t(k) constant, batching with max_batch 1 and no window, and continuous
/// batching with max_batch 1 and one-token requests all reduce to c deterministic FIFO servers:
/// M/D/c. Their latencies must equal the slots model's exactly, request for request.
#[test]
fn models_reduce_to_md_c_where_they_coincide() {
    let s = 0.004;
    let c = 3;
    let base = mgc(c, ServiceDist::Deterministic { s });
    let same_queue = [
        ServerModel::SharedBandwidth {
            variability: Variability::None,
            chips: 1,
            cores_per_chip: c,
            time_at_busy_s: vec![s; c as usize],
        },
        ServerModel::Batching {
            variability: Variability::None,
            devices: c,
            max_batch: 1,
            window_s: 0.0,
            batch_time_s: vec![s],
        },
        ServerModel::ContinuousBatching {
            variability: Variability::None,
            prefix_cache: None,
            replicas: c,
            max_batch: 1,
            kv_capacity_tokens: 10,
            scheduler: Scheduler::legacy(),
            cost: IterationCost {
                fixed_s: s,
                prefill_s_per_token: 0.0,
                decode_compute_s_per_seq: 0.0,
                weight_read_s: 0.0,
                kv_read_s_per_token: 0.0,
                attention_s_per_pair: 0.0,
                collective_s_per_token: 0.0,
                compiled_context_tokens: 0.0,
                stream_s_per_seq: 0.0,
                attention_block_s_per_token: 0.0,
            },
        },
    ];
    let go = |f: &FleetSpec| {
        sim::simulate(f, &run(1.0, 2, 9), |rep| {
            PoissonArrivals::new(9, rep, 600.0, 20_000).with_tokens(0, 1)
        })
        .unwrap_or_else(|e| panic!("{e}"))
    };
    let reference = go(&base);
    assert!(reference.latency.p99.value_s > s, "the case must queue");
    for server in same_queue {
        let f = FleetSpec {
            server,
            ..base.clone()
        };
        let r = go(&f);
        assert_eq!(r.latency, reference.latency, "{:?}", f.server);
        assert_eq!(r.queueing, reference.queueing, "{:?}", f.server);
        assert_eq!(r.counts, reference.counts, "{:?}", f.server);
    }
}
