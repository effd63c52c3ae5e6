//! Properties that hold for every fleet, whatever its model, dispatcher, cap or timeout
//! (proptest draws them): requests are conserved, Little's law holds exactly when nothing is cut
//! off by a warm-up, utilization is a fraction, percentiles are ordered, latency is queueing plus
//! service, and the histogram's percentiles agree with the exact order statistics of the same
//! run to within its resolution.

mod common;

use proptest::prelude::*;
use tco_sim::sim::{
    self, Dispatch, FleetSpec, IterationCost, Outcome, PoissonArrivals, Scheduler, ServerModel,
    ServiceDist, Variability,
};

fn server() -> impl Strategy<Value = ServerModel> {
    prop_oneof![
        (1u32..4, 0usize..4, 0.001f64..0.02).prop_map(|(slots, kind, mean_s)| {
            let service = match kind {
                0 => ServiceDist::Exponential { mean_s },
                1 => ServiceDist::Deterministic { s: mean_s },
                2 => ServiceDist::LogNormal { mean_s, cv: 2.0 },
                _ => ServiceDist::Empirical {
                    samples_s: vec![mean_s / 2.0, mean_s, mean_s * 1.5],
                },
            };
            ServerModel::Slots { slots, service }
        }),
        (1u32..3, 1usize..5, 0.002f64..0.02).prop_map(|(chips, cores, t1)| {
            ServerModel::SharedBandwidth {
                chips,
                cores_per_chip: cores as u32,
                // Bandwidth-bound beyond two cores: t(k) grows with k.
                time_at_busy_s: (1..=cores)
                    .map(|k| t1 * (k as f64 / 2.0).max(1.0))
                    .collect(),
                // The properties hold with a spread of the work too.
                variability: Variability::LogNormal { cv: 0.5 },
            }
        }),
        (1u32..3, 1usize..6, 0.0f64..0.005, 0.002f64..0.01).prop_map(
            |(devices, max_batch, window_s, t1)| ServerModel::Batching {
                devices,
                max_batch: max_batch as u32,
                window_s,
                batch_time_s: (0..max_batch)
                    .map(|b| t1 * (1.0 + 0.2 * b as f64))
                    .collect(),
                variability: Variability::LogNormal { cv: 0.3 },
            }
        ),
        (1u32..3, 1u32..8, 300u64..3000).prop_map(|(replicas, max_batch, kv)| {
            ServerModel::ContinuousBatching {
                replicas,
                max_batch,
                kv_capacity_tokens: kv,
                scheduler: Scheduler::legacy(),
                cost: IterationCost {
                    fixed_s: 0.0005,
                    prefill_s_per_token: 0.000_005,
                    decode_compute_s_per_seq: 0.000_05,
                    weight_read_s: 0.001,
                    kv_read_s_per_token: 0.000_000_5,
                    attention_s_per_pair: 0.0,
                    collective_s_per_token: 0.0,
                    compiled_context_tokens: 0.0,
                    stream_s_per_seq: 0.0,
                    attention_block_s_per_token: 0.0,
                },
                variability: Variability::Empirical {
                    relative: vec![0.8, 1.0, 1.4],
                },
                prefix_cache: None,
            }
        }),
    ]
}

fn fleet() -> impl Strategy<Value = FleetSpec> {
    (
        1u32..4,
        server(),
        0usize..4,
        proptest::option::of(0u32..6),
        proptest::option::of(0.03f64..0.2),
    )
        .prop_map(|(units, server, d, queue_cap, timeout_s)| FleetSpec {
            units,
            server,
            dispatch: [
                Dispatch::SharedQueue,
                Dispatch::JoinShortestQueue,
                Dispatch::RoundRobin,
                Dispatch::PowerOfTwoChoices,
            ][d],
            queue_cap,
            timeout_s,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_fleet_keeps_its_books(f in fleet(), rate in 20.0f64..600.0, seed in 0u64..1000) {
        let r = sim::simulate(&f, &common::run(0.0, 1, seed), |rep| {
            PoissonArrivals::new(seed, rep, rate, 2_000).with_tokens(100, 20)
        });
        let r = match r {
            Ok(r) => r,
            Err(e) => return Err(TestCaseError::fail(format!("{e}"))),
        };
        let c = &r.counts;
        prop_assert_eq!(c.arrived, 2_000);
        prop_assert_eq!(
            c.completed + c.rejected_queue_full + c.rejected_too_large + c.timed_out + c.unfinished,
            c.arrived
        );
        // No warm-up: every request in the system is a measured one, so L = λW exactly (up to
        // floating-point rounding).
        prop_assert!(r.little.relative_error < 1e-9, "{:?}", r.little);
        for u in &r.utilization.utilization {
            prop_assert!((0.0..=1.0 + 1e-12).contains(u), "{u}");
        }
        let l = &r.latency;
        let ordered = [l.min_s, l.p50.value_s, l.p90.value_s, l.p95.value_s, l.p99.value_s,
            l.p999.value_s, l.max_s];
        prop_assert!(ordered.windows(2).all(|w| w[0] <= w[1]), "{ordered:?}");
        if l.count > 0 {
            let sum = r.queueing.mean.value_s + r.service.mean.value_s;
            prop_assert!((sum - l.mean.value_s).abs() <= 1e-9 * l.mean.value_s.max(1e-9));
        }
        if let Some(cap) = f.queue_cap {
            let stations = if f.dispatch == Dispatch::SharedQueue { 1 } else { u64::from(f.units) };
            prop_assert!(r.queue.max_waiting <= u64::from(cap) * stations);
        }
        let text = format!("{r:?}");
        prop_assert!(!text.contains("NaN") && !text.contains("inf"));
    }

    #[test]
    fn histogram_percentiles_match_exact_order_statistics(
        f in fleet(), rate in 20.0f64..400.0, seed in 0u64..1000,
    ) {
        let arrivals = PoissonArrivals::new(seed, 0, rate, 3_000).with_tokens(100, 20);
        let trace = sim::simulate_traced(&f, seed, arrivals.clone());
        let report = sim::simulate(&f, &common::run(0.0, 1, seed), |_| arrivals.clone());
        let (trace, report) = match (trace, report) {
            (Ok(t), Ok(r)) => (t, r),
            (Err(e), _) | (_, Err(e)) => return Err(TestCaseError::fail(format!("{e}"))),
        };
        let mut latencies: Vec<u64> = trace
            .iter()
            .filter(|c| c.outcome == Outcome::Served)
            .map(|c| c.end_ns - c.request.arrival_ns)
            .collect();
        prop_assert_eq!(latencies.len() as u64, report.latency.count);
        prop_assume!(!latencies.is_empty());
        latencies.sort_unstable();
        let n = latencies.len();
        let quantiles = [
            (0.50, report.latency.p50.value_s),
            (0.99, report.latency.p99.value_s),
            (0.999, report.latency.p999.value_s),
        ];
        for (q, hdr_s) in quantiles {
            // hdrhistogram's rank: the ceil(q·n)-th smallest value.
            let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
            let exact_s = latencies[rank - 1] as f64 / 1e9;
            // 3 significant digits: the bucket holding a value is at most 2^-10 of it wide.
            prop_assert!(
                (hdr_s - exact_s).abs() <= exact_s * 2f64.powi(-10) + 1e-9,
                "q {q}: hdr {hdr_s} exact {exact_s}"
            );
        }
    }
}
