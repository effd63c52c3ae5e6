//! Encoder sequence lengths (issue 10 item 1): a fixed length costs what the preset always did,
//! a distribution's mean FLOPs are the average of each length's, padding to the maximum charges
//! every request the maximum, and request sizes drawn per request spread the latency (p99 > p50)
//! at low load even without a service-time CV.

use tco_sim::rng;
use tco_sim::sim::{self, Dispatch, FleetSpec, PoissonArrivals, RunSpec, ServerModel, Variability};
use tco_sim::workload::{LengthDist, LengthSampler, Padding, SequenceLengths, classic_preset};

fn lengths(dist: LengthDist, max: u32, padding: Padding) -> SequenceLengths {
    SequenceLengths {
        dist,
        max,
        padding,
        from_trace: false,
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
