//! Encoder sequence lengths (issue 10 item 1): a fixed length costs what the preset always did,
//! a distribution's mean FLOPs are the average of each length's, padding to the maximum charges
//! every request the maximum, padding attention per batch charges a batch its longest item's
//! kernel, and request sizes drawn per request spread the latency (p99 > p50) at low load even
//! without a service-time CV.

use tco_sim::rng;
use tco_sim::sim::{self, Dispatch, FleetSpec, PoissonArrivals, RunSpec, ServerModel, Variability};
use tco_sim::workload::{LengthDist, LengthSampler, Padding, SequenceLengths, classic_preset};

fn lengths(dist: LengthDist, max: u32, padding: Padding) -> SequenceLengths {
    SequenceLengths {
        dist,
        max,
        padding,
        attention_lengths: vec![],
        from_trace: false,
        sorted: false,
    }
}

#[test]
fn a_fixed_length_at_the_preset_length_costs_todays_flops() {
    let mut m = classic_preset("bert-large").unwrap();
    let today = (m.flops_per_item.value, m.activation_elements_per_item.value);
    assert_eq!(
        m.mean_item_cost(),
        today,
        "no distribution: the preset's figures"
    );
    m.lengths = Some(lengths(
        LengthDist::Fixed { tokens: 128 },
        384,
        Padding::None,
    ));
    let (f, a) = m.mean_item_cost();
    assert!((f / today.0 - 1.0).abs() < 1e-12 && (a / today.1 - 1.0).abs() < 1e-12);
    // At 384 tokens: linear part x3, attention x9 (the accuracy table's 2.464e11 by hand).
    m.lengths = Some(lengths(
        LengthDist::Fixed { tokens: 384 },
        384,
        Padding::None,
    ));
    let (f384, _) = m.mean_item_cost();
    assert!((f384 / 2.464e11 - 1.0).abs() < 0.005, "{f384}");
}

#[test]
fn a_distribution_costs_the_mean_of_its_lengths() {
    let mut m = classic_preset("bert-base").unwrap();
    let at = |m: &mut tco_sim::workload::ClassicModel, l: u32| {
        m.lengths = Some(lengths(LengthDist::Fixed { tokens: l }, 512, Padding::None));
        m.mean_item_cost().0
    };
    let (f100, f300) = (at(&mut m, 100), at(&mut m, 300));
    m.lengths = Some(lengths(
        LengthDist::Empirical {
            tokens: vec![100, 300],
        },
        512,
        Padding::None,
    ));
    let (mean, _) = m.mean_item_cost();
    assert!((mean - 0.5 * (f100 + f300)).abs() / mean < 1e-12);
    // Quadratic attention: the mean of the two costs more than the cost at the mean length.
    assert!(mean > at(&mut m, 200));
    // A lognormal's table sums to 1 and its mean length is close to the asked one.
    let l = lengths(
        LengthDist::LogNormal {
            mean: 175.0,
            cv: 0.4,
        },
        384,
        Padding::None,
    );
    let p = l.pmf();
    assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    let mean_len: f64 = p.iter().enumerate().map(|(i, p)| (i + 1) as f64 * p).sum();
    assert!((mean_len / 175.0 - 1.0).abs() < 0.02, "{mean_len}");
}

#[test]
fn padding_to_the_maximum_charges_every_request_the_maximum() {
    let mut m = classic_preset("bert-large").unwrap();
    m.lengths = Some(lengths(
        LengthDist::Fixed { tokens: 384 },
        384,
        Padding::None,
    ));
    let full = m.mean_item_cost();
    m.lengths = Some(lengths(
        LengthDist::LogNormal {
            mean: 150.0,
            cv: 0.5,
        },
        384,
        Padding::Max,
    ));
    let padded = m.mean_item_cost();
    assert!((padded.0 / full.0 - 1.0).abs() < 1e-12 && (padded.1 / full.1 - 1.0).abs() < 1e-12);
    assert!(
        m.relative_work_by_length().is_none(),
        "padded: every request the same"
    );
    m.lengths.as_mut().unwrap().padding = Padding::None;
    let w = m.relative_work_by_length().unwrap();
    assert!(m.mean_item_cost().0 < full.0);
    // Work by length has mean 1 over the distribution.
    let p = m.lengths.as_ref().unwrap().pmf();
    let mean: f64 = w.iter().zip(&p).map(|(w, p)| w * p).sum();
    assert!((mean - 1.0).abs() < 1e-9, "{mean}");
}

fn p50_p99(relative_work: Option<Vec<f64>>, l: &SequenceLengths) -> (f64, f64) {
    let fleet = FleetSpec {
        units: 1,
        server: ServerModel::Batching {
            devices: 1,
            max_batch: 1,
            window_s: 0.0,
            batch_time_s: vec![0.010],
            variability: match relative_work {
                Some(relative_work) => Variability::BySize {
                    relative_work,
                    spread: Box::new(Variability::None),
                    batch_attention: None,
                },
                None => Variability::None,
            },
        },
        dispatch: Dispatch::SharedQueue,
        queue_cap: None,
        timeout_s: None,
    };
    let run = RunSpec {
        warmup_s: 10.0,
        replications: 1,
        seed: 3,
        quantiles: vec![],
    };
    let sampler = LengthSampler::new(l);
    // 0.2 req/s on a 10 ms server: 0.2 % busy, so fewer than 1 % of requests ever wait.
    let rep = sim::simulate(&fleet, &run, |r| {
        let s = sampler.clone();
        let mut g = rng::stream(3, r, rng::streams::SIZES);
        PoissonArrivals::new(3, r, 0.2, 20_000).map(move |mut q| {
            q.input_tokens = s.draw(&mut g);
            q
        })
    })
    .unwrap();
    (rep.latency.p50.value_s, rep.latency.p99.value_s)
}

#[test]
fn per_request_sizes_spread_the_latency_at_low_load() {
    let mut m = classic_preset("bert-large").unwrap();
    let l = lengths(
        LengthDist::LogNormal {
            mean: 175.0,
            cv: 0.4,
        },
        384,
        Padding::None,
    );
    m.lengths = Some(l.clone());
    let (p50, p99) = p50_p99(m.relative_work_by_length(), &l);
    assert!(p99 > 1.5 * p50, "p50 {p50} p99 {p99}");
    // Without sizes (or padded) every request takes the same time: p99 = p50.
    let (q50, q99) = p50_p99(None, &l);
    assert!((q99 - q50).abs() < 1e-6, "{q50} {q99}");
}

/// Two lengths, 100 and 300 tokens, equally likely, with kernels at 128 and 384 keys (as
/// TensorRT's variable-length BERT picks them): the numbers below are worked by hand.
fn two_lengths_batch_padded() -> tco_sim::workload::ClassicModel {
    let mut m = classic_preset("bert-large").unwrap();
    let mut l = lengths(
        LengthDist::Empirical {
            tokens: vec![100, 300],
        },
        384,
        Padding::Batch,
    );
    l.attention_lengths = vec![128, 384];
    m.lengths = Some(l);
    m
}

#[test]
fn padding_attention_per_batch_charges_an_item_its_own_kernel_and_a_batch_its_longest() {
    let mut m = two_lengths_batch_padded();
    let pt = m.per_token.clone().unwrap();
    let f0 = m.flops_per_item.value;
    // Alone (or in a length-sorted batch) an item attends over its own kernel: 100 tokens over
    // 128 keys, 300 over 384; its GEMMs at its own length.
    let own = |l: f64, s: f64| f0 * (pt.flops_scale(l) + pt.attention_per_key(l) * (s - l));
    let (mean, _) = m.mean_item_cost();
    let by_hand = 0.5 * (own(100.0, 128.0) + own(300.0, 384.0));
    assert!((mean / by_hand - 1.0).abs() < 1e-12, "{mean} vs {by_hand}");
    m.lengths.as_mut().unwrap().padding = Padding::None;
    assert!(
        m.mean_item_cost().0 < mean,
        "own kernels cost more than own lengths"
    );
    m.lengths.as_mut().unwrap().padding = Padding::Batch;

    // In arrival order, a batch of two holds one of each half the time; then the 100-token
    // item attends over 384 keys, 256 more than its own 128. Per item, on average:
    // 1/2 x 1/2 x per_key(100) x 256 = 64 x per_key(100), in units of the mean item.
    let a = m
        .batch_attention(3)
        .expect("padding per batch, arrival order");
    let per_key_100 = f0 * pt.attention_per_key(100.0) / mean;
    assert!((a.per_key[99] / per_key_100 - 1.0).abs() < 1e-12);
    assert_eq!(
        (a.keys[99], a.keys[127], a.keys[128], a.keys[299]),
        (128, 128, 384, 384)
    );
    assert_eq!(a.mean_surplus[0], 0.0, "one item pads nothing");
    assert!((a.mean_surplus[1] / (64.0 * per_key_100) - 1.0).abs() < 1e-9);
    // Three items: the 100-token one pays unless both others are short too; each item is that
    // one with probability 1/2, and pays with probability 3/4.
    assert!((a.mean_surplus[2] / (0.5 * 0.75 * 256.0 * per_key_100) - 1.0).abs() < 1e-9);

    // A length-sorted query (MLPerf Offline) pays no batch padding; neither does any other mode.
    m.lengths.as_mut().unwrap().sorted = true;
    assert!(m.batch_attention(3).is_none());
    m.lengths.as_mut().unwrap().sorted = false;
    m.lengths.as_mut().unwrap().padding = Padding::None;
    assert!(m.batch_attention(3).is_none());
}

/// A saturated device batching two at a time in arrival order runs its batches at the planned
/// mean time (the plan holds the mean padding), while a batch holding a long item makes the
/// short one attend over the long kernel.
#[test]
fn a_saturated_device_padding_per_batch_runs_at_the_planned_rate() {
    let m = two_lengths_batch_padded();
    let a = m.batch_attention(2).unwrap();
    let relative_work = m.relative_work_by_length().unwrap();
    let t2 = 0.010 * (1.0 + a.mean_surplus[1]);
    let fleet = FleetSpec {
        units: 1,
        server: ServerModel::Batching {
            devices: 1,
            max_batch: 2,
            window_s: 1.0,
            batch_time_s: vec![0.010 * (1.0 + a.mean_surplus[0]), t2],
            variability: Variability::BySize {
                relative_work,
                spread: Box::new(Variability::None),
                batch_attention: Some(a),
            },
        },
        dispatch: Dispatch::SharedQueue,
        queue_cap: None,
        timeout_s: None,
    };
    let run = RunSpec {
        warmup_s: 1.0,
        replications: 1,
        seed: 5,
        quantiles: vec![],
    };
    let l = m.lengths.clone().unwrap();
    let sampler = LengthSampler::new(&l);
    // Offered 20 % above the planned capacity of 2 / t2: the device never idles.
    let rate = 1.2 * 2.0 / t2;
    let rep = sim::simulate(&fleet, &run, |r| {
        let s = sampler.clone();
        let mut g = rng::stream(5, r, rng::streams::SIZES);
        PoissonArrivals::new(5, r, rate, 40_000).map(move |mut q| {
            q.input_tokens = s.draw(&mut g);
            q
        })
    })
    .unwrap();
    // Every batch is full (the queue never empties), so a request's service is a batch's time.
    let mean = rep.service.mean.value_s;
    assert!(
        (mean / t2 - 1.0).abs() < 0.01,
        "mean batch {mean} s, planned {t2} s"
    );
    // Half the batches hold one of each length and pay the long kernel for both: the spread of
    // batch times is real (a fixed-time batch would have p99 = p50).
    assert!(rep.service.p99.value_s > rep.service.p50.value_s);
}

fn bert_scenario(extra: &str) -> Result<tco_sim::scenario::Scenario, tco_sim::input::InputError> {
    bert_scenario_with("sequence_tokens = { mean = 175, cv = 0.4 }", extra)
}

fn bert_scenario_with(
    lengths: &str,
    extra: &str,
) -> Result<tco_sim::scenario::Scenario, tco_sim::input::InputError> {
    let text = format!(
        r#"name = "padding test"
horizon_years = 1
[workload]
preset = "bert-large"
precision = "int8"
{lengths}
max_sequence_tokens = 384
{extra}
[traffic]
pattern = "constant"
peak_rps = 300
[slo]
percentile = 99
latency_ms = 200
[[tier]]
profile = "aws-g6.xlarge"
"#
    );
    tco_sim::scenario::Scenario::from_source(&tco_sim::input::SourceFile::from_text(
        "padding.toml",
        text,
    ))
}

/// `padding = "batch"` takes the kernels' key lengths; the lengths alone (without that padding),
/// out of order, or not covering the longest sequence are refused where they are written.
#[test]
fn attention_lengths_are_read_with_batch_padding_and_refused_without_it() {
    let s = bert_scenario("padding = \"batch\"\nattention_lengths = [128, 192, 256, 384]").unwrap();
    let tco_sim::workload::Workload::Classic { model, .. } = &s.workload else {
        panic!("bert-large is a classic model");
    };
    let l = model.lengths.as_ref().unwrap();
    assert_eq!(l.padding, Padding::Batch);
    assert_eq!(l.attention_lengths, vec![128, 192, 256, 384]);
    assert!(!l.sorted, "a served tier batches in arrival order");
    for (extra, message) in [
        (
            "attention_lengths = [128, 384]",
            "has no effect unless padding = \"batch\"",
        ),
        (
            "padding = \"batch\"\nattention_lengths = [384, 128]",
            "must be ascending whole numbers of tokens, the last at least max_sequence_tokens",
        ),
        (
            "padding = \"batch\"\nattention_lengths = [128, 256]",
            "must be ascending whole numbers of tokens, the last at least max_sequence_tokens",
        ),
    ] {
        let e = bert_scenario(extra).unwrap_err();
        assert_eq!(
            e.field.as_deref(),
            Some("workload.attention_lengths"),
            "{e}"
        );
        assert_eq!(e.message, message);
        let line = 8 + extra.lines().count() - 1;
        assert_eq!(e.position.map(|(l, _)| l), Some(line), "{e}");
    }
}

/// Each of the three documented forms of `sequence_tokens` reads (none did while the enum's
/// parts carried their own spans), and a bad part is refused at the value's position.
#[test]
fn sequence_tokens_reads_a_length_a_lognormal_and_a_list() {
    let dist = |lengths: &str| {
        let s = bert_scenario_with(lengths, "").unwrap();
        let tco_sim::workload::Workload::Classic { model, .. } = s.workload else {
            panic!("bert-large is a classic model");
        };
        model.lengths.unwrap().dist
    };
    assert_eq!(
        dist("sequence_tokens = 128"),
        LengthDist::Fixed { tokens: 128 }
    );
    assert_eq!(
        dist("sequence_tokens = { mean = 175, cv = 0.4 }"),
        LengthDist::LogNormal {
            mean: 175.0,
            cv: 0.4
        }
    );
    assert_eq!(
        dist("sequence_tokens = { values = [100, 300] }"),
        LengthDist::Empirical {
            tokens: vec![100, 300]
        }
    );
    let e = bert_scenario_with("sequence_tokens = { mean = 1750, cv = 0.4 }", "").unwrap_err();
    assert_eq!(e.field.as_deref(), Some("workload.sequence_tokens.mean"));
    assert_eq!(e.position, Some((6, 19)));
}
