//! Bad fleets and runs are refused with an error that names the field, before any event runs:
//! one test per class of mistake.

mod common;

use common::{at_ms, mgc, run};
use tco_sim::sim::{
    self, Dispatch, FleetSpec, IterationCost, RunSpec, Scheduler, ServerModel, ServiceDist,
    SimError, Variability,
};

fn check(fleet: &FleetSpec, r: &RunSpec) -> Result<(), SimError> {
    sim::simulate(fleet, r, |_| std::iter::empty()).map(|_| ())
}

/// The error's message, which must name `field`.
fn message_naming(result: Result<(), SimError>, field: &str) -> String {
    match result {
        Ok(()) => panic!("expected an error naming {field}"),
        Err(e) => {
            let m = e.to_string();
            assert!(m.contains(field), "{m:?} does not name {field}");
            m
        }
    }
}

fn exp() -> ServiceDist {
    ServiceDist::Exponential { mean_s: 0.01 }
}

fn ok_run() -> RunSpec {
    run(0.0, 1, 1)
}

fn cost() -> IterationCost {
    IterationCost {
        fixed_s: 0.001,
        prefill_s_per_token: 0.0,
        decode_compute_s_per_seq: 0.0,
        weight_read_s: 0.0,
        kv_read_s_per_token: 0.0,
        attention_s_per_pair: 0.0,
        collective_s_per_token: 0.0,
        compiled_context_tokens: 0.0,
        stream_s_per_seq: 0.0,
        attention_block_s_per_token: 0.0,
    }
}

#[test]
fn a_valid_fleet_passes() {
    assert_eq!(check(&mgc(2, exp()), &ok_run()), Ok(()));
}

#[test]
fn zero_counts_are_refused() {
    let f = FleetSpec {
        units: 0,
        ..mgc(1, exp())
    };
    message_naming(check(&f, &ok_run()), "units");
    message_naming(check(&mgc(0, exp()), &ok_run()), "server.slots");
    message_naming(check(&mgc(1, exp()), &run(0.0, 0, 1)), "run.replications");
    let zeros: [(ServerModel, &str); 5] = [
        (
            ServerModel::SharedBandwidth {
                variability: Variability::None,
                chips: 0,
                cores_per_chip: 1,
                time_at_busy_s: vec![1.0],
            },
            "server.chips",
        ),
        (
            ServerModel::Batching {
                variability: Variability::None,
                devices: 0,
                max_batch: 1,
                window_s: 0.0,
                batch_time_s: vec![1.0],
            },
            "server.devices",
        ),
        (
            ServerModel::Batching {
                variability: Variability::None,
                devices: 1,
                max_batch: 0,
                window_s: 0.0,
                batch_time_s: vec![],
            },
            "server.max_batch",
        ),
        (
            ServerModel::ContinuousBatching {
                variability: Variability::None,
                prefix_cache: None,
                replicas: 0,
                max_batch: 1,
                kv_capacity_tokens: 10,
                scheduler: Scheduler::legacy(),
                cost: cost(),
            },
            "server.replicas",
        ),
        (
            ServerModel::ContinuousBatching {
                variability: Variability::None,
                prefix_cache: None,
                replicas: 1,
                max_batch: 1,
                kv_capacity_tokens: 0,
                scheduler: Scheduler::legacy(),
                cost: cost(),
            },
            "server.kv_capacity_tokens",
        ),
    ];
    for (server, field) in zeros {
        let f = FleetSpec {
            server,
            ..mgc(1, exp())
        };
        message_naming(check(&f, &ok_run()), field);
    }
}

#[test]
fn tables_must_match_their_counts() {
    let cpu = FleetSpec {
        server: ServerModel::SharedBandwidth {
            variability: Variability::None,
            chips: 1,
            cores_per_chip: 4,
            time_at_busy_s: vec![1.0, 2.0],
        },
        ..mgc(1, exp())
    };
    let m = message_naming(check(&cpu, &ok_run()), "server.time_at_busy_s");
    assert!(m.contains("needs exactly 4"), "{m}");
    let accel = FleetSpec {
        server: ServerModel::Batching {
            variability: Variability::None,
            devices: 1,
            max_batch: 2,
            window_s: 0.0,
            batch_time_s: vec![],
        },
        ..mgc(1, exp())
    };
    message_naming(check(&accel, &ok_run()), "server.batch_time_s");
    let empirical = mgc(1, ServiceDist::Empirical { samples_s: vec![] });
    message_naming(check(&empirical, &ok_run()), "server.service.samples_s");
}

#[test]
fn nan_negative_and_infinite_numbers_are_refused() {
    for bad in [f64::NAN, -1.0, f64::INFINITY, 0.0, 2e6] {
        let f = mgc(1, ServiceDist::Exponential { mean_s: bad });
        message_naming(check(&f, &ok_run()), "server.service.mean_s");
    }
    let f = mgc(
        1,
        ServiceDist::LogNormal {
            mean_s: 0.01,
            cv: f64::NAN,
        },
    );
    message_naming(check(&f, &ok_run()), "server.service.cv");
    let f = mgc(
        1,
        ServiceDist::Empirical {
            samples_s: vec![0.1, -0.1],
        },
    );
    message_naming(check(&f, &ok_run()), "server.service.samples_s[1]");
    let f = FleetSpec {
        server: ServerModel::Batching {
            variability: Variability::None,
            devices: 1,
            max_batch: 1,
            window_s: -0.001,
            batch_time_s: vec![0.01],
        },
        ..mgc(1, exp())
    };
    message_naming(check(&f, &ok_run()), "server.window_s");
    let f = FleetSpec {
        server: ServerModel::SharedBandwidth {
            variability: Variability::None,
            chips: 1,
            cores_per_chip: 2,
            time_at_busy_s: vec![1.0, f64::NAN],
        },
        ..mgc(1, exp())
    };
    message_naming(check(&f, &ok_run()), "server.time_at_busy_s[1]");
    let f = FleetSpec {
        server: ServerModel::ContinuousBatching {
            variability: Variability::None,
            prefix_cache: None,
            replicas: 1,
            max_batch: 1,
            kv_capacity_tokens: 10,
            scheduler: Scheduler::legacy(),
            cost: IterationCost {
                kv_read_s_per_token: -1.0,
                attention_s_per_pair: 0.0,
                collective_s_per_token: 0.0,
                compiled_context_tokens: 0.0,
                stream_s_per_seq: 0.0,
                attention_block_s_per_token: 0.0,
                ..cost()
            },
        },
        ..mgc(1, exp())
    };
    message_naming(check(&f, &ok_run()), "server.cost.kv_read_s_per_token");
    let free = FleetSpec {
        server: ServerModel::ContinuousBatching {
            variability: Variability::None,
            prefix_cache: None,
            replicas: 1,
            max_batch: 1,
            kv_capacity_tokens: 10,
            scheduler: Scheduler::legacy(),
            cost: IterationCost {
                fixed_s: 0.0,
                ..cost()
            },
        },
        ..mgc(1, exp())
    };
    message_naming(check(&free, &ok_run()), "server.cost.fixed_s");
    message_naming(check(&mgc(1, exp()), &run(f64::NAN, 1, 1)), "run.warmup_s");
}

#[test]
fn timeouts_must_be_positive_and_longer_than_the_window() {
    for bad in [0.0, -1.0, f64::NAN] {
        let f = FleetSpec {
            timeout_s: Some(bad),
            ..mgc(1, exp())
        };
        message_naming(check(&f, &ok_run()), "timeout_s");
    }
    let f = FleetSpec {
        timeout_s: Some(0.005),
        server: ServerModel::Batching {
            variability: Variability::None,
            devices: 1,
            max_batch: 2,
            window_s: 0.005,
            batch_time_s: vec![0.01, 0.01],
        },
        dispatch: Dispatch::SharedQueue,
        ..mgc(1, exp())
    };
    let m = message_naming(check(&f, &ok_run()), "window_s");
    assert!(m.contains("timeout_s"), "{m}");
}

#[test]
fn batches_beyond_any_serving_stack_are_refused() {
    let f = FleetSpec {
        server: ServerModel::ContinuousBatching {
            variability: Variability::None,
            prefix_cache: None,
            replicas: 1,
            max_batch: sim::MAX_BATCH + 1,
            kv_capacity_tokens: 10,
            scheduler: Scheduler::legacy(),
            cost: cost(),
        },
        ..mgc(1, exp())
    };
    let m = message_naming(check(&f, &ok_run()), "server.max_batch");
    assert!(m.contains("65536"), "{m}");
}

#[test]
fn an_impossibly_large_fleet_is_refused() {
    let f = FleetSpec {
        units: 1 << 20,
        ..mgc(1 << 10, exp())
    };
    message_naming(check(&f, &ok_run()), "fleet");
}

#[test]
fn arrivals_out_of_order_are_an_error() {
    let r = sim::simulate(&mgc(1, exp()), &ok_run(), |_| {
        vec![at_ms(5.0), at_ms(4.0)].into_iter()
    });
    match r {
        Err(SimError::ArrivalsOutOfOrder {
            arrival_ns,
            previous_ns,
        }) => assert_eq!((arrival_ns, previous_ns), (4_000_000, 5_000_000)),
        other => panic!("expected ArrivalsOutOfOrder, got {other:?}"),
    }
}

#[test]
fn quantiles_outside_0_1_are_rejected() {
    let mut run = ok_run();
    run.quantiles = vec![0.99, 1.0];
    let fleet = FleetSpec {
        units: 1,
        server: ServerModel::Slots {
            slots: 1,
            service: exp(),
        },
        dispatch: Dispatch::SharedQueue,
        queue_cap: None,
        timeout_s: None,
    };
    let err = sim::simulate(&fleet, &run, |_| std::iter::empty()).unwrap_err();
    assert!(err.to_string().contains("run.quantiles"), "{err}");
}

/// A batch's padded-attention tables must have one entry per request size, finite non-negative
/// work, and keys that never shrink as the batch's longest request grows.
#[test]
fn padded_attention_tables_are_checked() {
    let fleet = |a: sim::BatchAttention| FleetSpec {
        server: ServerModel::Batching {
            variability: Variability::BySize {
                relative_work: vec![0.5, 1.5],
                spread: Box::new(Variability::None),
                batch_attention: Some(a),
            },
            devices: 1,
            max_batch: 2,
            window_s: 0.0,
            batch_time_s: vec![0.01, 0.02],
        },
        ..mgc(1, exp())
    };
    let good = sim::BatchAttention {
        per_key: vec![0.1, 0.2],
        keys: vec![2, 2],
        mean_surplus: vec![0.0, 0.0],
    };
    assert!(check(&fleet(good.clone()), &ok_run()).is_ok());
    let m = message_naming(
        check(
            &fleet(sim::BatchAttention {
                keys: vec![2],
                ..good.clone()
            }),
            &ok_run(),
        ),
        "server.variability.batch_attention.keys",
    );
    assert!(m.contains("one entry per request size"), "{m}");
    message_naming(
        check(
            &fleet(sim::BatchAttention {
                per_key: vec![0.1, f64::NAN],
                ..good.clone()
            }),
            &ok_run(),
        ),
        "server.variability.batch_attention.per_key[1]",
    );
    message_naming(
        check(
            &fleet(sim::BatchAttention {
                mean_surplus: vec![0.0, -1.0],
                ..good.clone()
            }),
            &ok_run(),
        ),
        "server.variability.batch_attention.mean_surplus[1]",
    );
    message_naming(
        check(
            &fleet(sim::BatchAttention {
                keys: vec![3, 2],
                ..good
            }),
            &ok_run(),
        ),
        "server.variability.batch_attention.keys[1]",
    );
}
