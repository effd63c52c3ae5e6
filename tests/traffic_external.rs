//! Checks against the larger public traces that are *not* shipped (Azure code, Mooncake,
//! ServeGen m-large): our readers and statistics must reproduce the figures published with them
//! in the shared trace collection's README. CI has only the repository, so these tests are
//! `#[ignore]`d and read the collection from a folder named by an environment variable:
//!
//! ```text
//! TCO_SIM_TRACES=<folder with the shared traces> cargo test --test traffic_external -- --ignored
//! ```

use std::path::PathBuf;

use tco_sim::traffic::series::{SeriesBurstiness, SeriesFormat};
use tco_sim::traffic::{
    Burstiness, Growth, RateSeries, ReplayOptions, SeriesTraffic, Trace, TraceFormat, TraceTraffic,
    TrafficKind, TrafficSpec, TrafficStats,
};

fn shared(file: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("TCO_SIM_TRACES")?;
    Some(PathBuf::from(dir).join(file))
}

fn near(x: f64, published: f64, half_unit: f64) -> bool {
    (x - published).abs() <= half_unit
}

#[test]
#[ignore = "needs TCO_SIM_TRACES"]
fn azure_code_trace_matches_its_published_statistics() {
    let Some(p) = shared("AzureLLMInferenceTrace_code.csv") else {
        return eprintln!("TCO_SIM_TRACES is not set: skipped");
    };
    let s = Trace::read(&p, TraceFormat::Azure)
        .unwrap()
        .stats()
        .unwrap();
    assert_eq!(s.count, 8_819);
    assert!(near(s.mean_rps, 2.57, 0.005), "{}", s.mean_rps);
    assert_eq!((s.peak_1s, s.peak_1min), (67, 632));
    assert!(near(s.iat_cv, 13.2, 0.05), "{}", s.iat_cv);
    assert!(near(s.idc_1s.unwrap(), 13.2, 0.05));
    assert!(near(s.idc_10s.unwrap(), 71.6, 0.05));
    assert!(near(s.idc_60s.unwrap(), 164.0, 0.5));
}

#[test]
#[ignore = "needs TCO_SIM_TRACES"]
fn mooncake_trace_matches_and_spreading_removes_the_false_bursts() {
    let Some(p) = shared("conversation_trace.jsonl") else {
        return eprintln!("TCO_SIM_TRACES is not set: skipped");
    };
    let trace = Trace::read(&p, TraceFormat::Mooncake).unwrap();
    let raw = trace.stats().unwrap();
    assert_eq!(raw.count, 12_031);
    assert!(near(raw.mean_rps, 3.40, 0.005), "{}", raw.mean_rps);
    assert_eq!((raw.peak_1s, raw.peak_1min), (28, 247));
    assert!(near(raw.iat_cv, 3.03, 0.005), "{}", raw.iat_cv);
    assert!(near(raw.idc_1s.unwrap(), 7.9, 0.05));
    assert!(near(raw.idc_10s.unwrap(), 2.10, 0.005));
    // 2.8950 here: the published 2.90 sits on the rounding boundary.
    assert!(
        near(raw.idc_60s.unwrap(), 2.90, 0.0051),
        "{:?}",
        raw.idc_60s
    );
    assert!(near(raw.mean_input_tokens, 12_035.1, 0.05));
    assert!(near(raw.mean_output_tokens, 342.6, 0.05));
    // Replayed with each 3 s step spread over the step: close to Poisson below 3 s, while the
    // minute-scale drift is kept.
    let tt = TraceTraffic {
        trace,
        options: ReplayOptions {
            looped: false,
            ..Default::default()
        },
        growth: Growth::NONE,
    };
    let spread = TrafficStats::from_requests(tt.replay(1, 1e6, 1, 0)).unwrap();
    assert!(
        spread.iat_cv < 1.1 && spread.idc_1s.unwrap() < 1.2,
        "{spread:?}"
    );
    assert!(near(spread.idc_60s.unwrap(), 2.90, 0.2), "{spread:?}");
}

#[test]
#[ignore = "needs TCO_SIM_TRACES"]
fn servegen_aggregate_matches_its_published_statistics() {
    let Some(p) = shared("servegen/language/m-large") else {
        return eprintln!("TCO_SIM_TRACES is not set: skipped");
    };
    let series = RateSeries::read(&p, SeriesFormat::ServeGen, false).unwrap();
    assert_eq!(series.len(), 2_016);
    assert!(
        near(series.mean_rps(), 195.8, 0.05),
        "{}",
        series.mean_rps()
    );
    assert!(
        near(series.peak_rps(), 583.0, 0.05),
        "{}",
        series.peak_rps()
    );
    assert!(near(
        series.integrated(series.period_s()) / 1e8,
        2.37,
        0.005
    ));
    let spec = TrafficSpec::new(TrafficKind::RateSeries(SeriesTraffic {
        series,
        growth: Growth::NONE,
        burstiness: SeriesBurstiness::Uniform(Burstiness::POISSON),
    }));
    // Mean by hour of day over the 14 days (t = 0 as 00:00): 154 req/s at 08:00, 224 at 19:00.
    let hourly = spec.hourly_rates(1);
    let mut by_hour = [0.0; 24];
    for (i, r) in hourly[..14 * 24].iter().enumerate() {
        by_hour[i % 24] += r / 14.0;
    }
    let argmin = (0..24)
        .min_by(|&a, &b| by_hour[a].total_cmp(&by_hour[b]))
        .unwrap();
    let argmax = (0..24)
        .max_by(|&a, &b| by_hour[a].total_cmp(&by_hour[b]))
        .unwrap();
    assert_eq!((argmin, argmax), (8, 19));
    assert!(
        near(by_hour[8], 154.0, 0.5) && near(by_hour[19], 224.0, 0.5),
        "{by_hour:?}"
    );
}
