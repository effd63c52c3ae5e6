//! The shipped Azure LLM conversation trace (`traces/azure-llm-2023/`): kept byte for byte,
//! summarised with the statistics published with it, and replayed (looped, sped up, grown).
//! Also the other trace formats (generic CSV, Mooncake JSONL) on small files written here.

use std::path::{Path, PathBuf};

use tco_sim::input::SourceFile;
use tco_sim::traffic::file::{TrafficFile, validate};
use tco_sim::traffic::trace::{CsvColumns, TimeUnit};
use tco_sim::traffic::{
    Growth, ReplayOptions, Request, Trace, TraceFormat, TraceTraffic, TrafficStats,
};

const AZURE_CONV: &str = "traces/azure-llm-2023/AzureLLMInferenceTrace_conv.csv";

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn azure_conv() -> Trace {
    Trace::read(&repo(AZURE_CONV), TraceFormat::Azure).unwrap()
}

/// The copy is the upstream file: its size, CRLF line endings and missing final newline (a git
/// checkout that normalised line endings would change all three).
#[test]
fn shipped_trace_is_the_upstream_bytes() {
    let bytes = std::fs::read(repo(AZURE_CONV)).unwrap();
    assert_eq!(bytes.len(), 719_188);
    assert!(bytes.starts_with(
        b"TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:15:46.6805900,374,44\r\n"
    ));
    assert_eq!(bytes.iter().filter(|&&b| b == b'\r').count(), 19_366);
    assert_eq!(bytes.iter().filter(|&&b| b == b'\n').count(), 19_366);
    assert!(bytes.ends_with(b",197,183"));
    let sums = std::fs::read_to_string(repo("traces/SHA256SUMS")).unwrap();
    assert!(sums.contains("2f1e5b666d4e3055fdbba98598ce2ec307767b9064e03e2fa46676dbcc7d0bf8  azure-llm-2023/AzureLLMInferenceTrace_conv.csv"));
    assert!(repo("traces/LICENSES/CC-BY-4.0.txt").is_file());
}

/// `TrafficStats` reproduces the statistics published with the trace (computed there with numpy),
/// each to the precision it is published with.
#[test]
fn stats_match_the_published_statistics() {
    let t = azure_conv();
    assert_eq!(t.len(), 19_366);
    let s = t.stats().unwrap();
    let near = |x: f64, published: f64, half_unit: f64| (x - published).abs() <= half_unit;
    assert_eq!(s.count, 19_366);
    assert!(near(s.span_s, 3_501.7, 0.05), "{}", s.span_s);
    assert!(near(s.mean_rps, 5.53, 0.005), "{}", s.mean_rps);
    assert_eq!(s.peak_1s, 16);
    assert_eq!(s.peak_1min, 507);
    assert!(near(s.iat_mean_s, 0.181, 0.0005), "{}", s.iat_mean_s);
    assert!(near(s.iat_cv, 1.09, 0.005), "{}", s.iat_cv);
    assert!(near(s.idc_1s.unwrap(), 1.39, 0.005), "{:?}", s.idc_1s);
    assert!(near(s.idc_10s.unwrap(), 3.86, 0.005), "{:?}", s.idc_10s);
    assert!(near(s.idc_60s.unwrap(), 16.1, 0.05), "{:?}", s.idc_60s);
    assert!(
        near(s.mean_input_tokens, 1_154.7, 0.05),
        "{}",
        s.mean_input_tokens
    );
    assert!(
        near(s.mean_output_tokens, 211.1, 0.05),
        "{}",
        s.mean_output_tokens
    );
    // The first request, tokens and all.
    let first: Request = t.requests().next().unwrap();
    assert_eq!(
        (first.arrival_ns, first.input_tokens, first.output_tokens),
        (0, 374, 44)
    );
    // Recorded start: 2023-11-16 18:15:46.68059 UTC-less = 1,700,158,546.68059 s since 1970.
    assert!((t.first_s() - 1_700_158_546.680_59).abs() < 1e-6);
}

fn traffic(options: ReplayOptions, growth: f64) -> TraceTraffic {
    TraceTraffic {
        trace: azure_conv(),
        options,
        growth: Growth { per_year: growth },
    }
}

/// Looping fills a 2-hour window with two copies and the start of a third, each copy one mean
/// gap after the last request of the one before, keeping the recorded mean rate.
#[test]
fn looped_replay_fills_the_window_at_the_recorded_rate() {
    let tt = traffic(ReplayOptions::default(), 0.0);
    let period = tt.trace.period_s();
    assert!(
        (period - (3_501.721_937 + 3_501.721_937 / 19_365.0)).abs() < 1e-6,
        "{period}"
    );
    let v: Vec<Request> = tt.replay(1, 7200.0, 0, 0).collect();
    let copy2 = &v[19_366..2 * 19_366];
    assert_eq!(copy2[0].input_tokens, 374);
    assert_eq!(copy2[0].arrival_ns, (period * 1e9).round() as u64);
    // Two whole copies keep the recorded mean rate (n − 1)/span = 5.530 req/s.
    let s = TrafficStats::from_requests(v[..2 * 19_366].iter().copied()).unwrap();
    assert!((s.mean_rps - 5.5301).abs() < 1e-4, "{}", s.mean_rps);
    assert!(v.last().unwrap().arrival_ns < 7_200_000_000_000);
    // The design window is the busiest 2 hours: two copies and the busiest stretch of the rest,
    // at least what the replay from the start holds, and exactly what the design replay plays.
    let w = tt.design_window(1, 7200.0);
    assert!(w.mean_rps * 7200.0 >= v.len() as f64);
    assert_eq!(
        w.mean_rps * 7200.0,
        tt.design_replay(1, 7200.0, 0, 0).count() as f64
    );
    // Played once, the replay stops after the recorded hour.
    let once = traffic(
        ReplayOptions {
            looped: false,
            ..Default::default()
        },
        0.0,
    );
    assert_eq!(once.replay(1, 7200.0, 0, 0).count(), 19_366);
}

/// Speedup 3 divides the timestamps by 3; growth of 50 %/year adds 1.5× in year 2.
#[test]
fn speedup_and_growth_compress_time() {
    let fast = traffic(
        ReplayOptions {
            speedup: 3.0,
            looped: false,
            ..Default::default()
        },
        0.5,
    );
    for (year, factor) in [(1, 3.0), (2, 4.5)] {
        let s = TrafficStats::from_requests(fast.replay(year, 1e6, 0, 0)).unwrap();
        assert!(
            (s.span_s - 3_501.721_937 / factor).abs() < 1e-6,
            "year {year}: {}",
            s.span_s
        );
        assert_eq!(s.count, 19_366);
        assert!((fast.peak_rps(year) * 60.0) >= 507.0 * factor * 0.9);
        let yearly = fast.requests_per_year(year);
        let expected = 19_366.0 * factor * 365.0 * 86_400.0 / fast.trace.period_s();
        assert!(
            (yearly - expected).abs() < 19_366.0,
            "{yearly} vs {expected}"
        );
    }
    // The busiest minute of the trace, per second, at speed 1.
    assert!((traffic(ReplayOptions::default(), 0.0).peak_rps(1) - 507.0 / 60.0).abs() < 1e-12);
}

/// The hourly rates the cost model uses: an hour-long trace repeated, so every hour carries
/// about the recorded mean rate, and the hours add up to the year.
#[test]
fn hourly_rates_repeat_the_trace() {
    let tt = traffic(ReplayOptions::default(), 0.0);
    let hourly = tt.hourly_rates(1);
    assert_eq!(hourly.len(), 8760);
    assert!(
        hourly.iter().all(|&r| (r - 5.53).abs() < 0.5),
        "{:?}",
        &hourly[..5]
    );
    let total: f64 = hourly.iter().sum::<f64>() * 3600.0;
    assert!((total - tt.requests_per_year(1)).abs() < 1e-3);
}

/// What a plan reads of a year, gathered once (`TrafficSpec::year`), is what each function
/// gives on its own, to the bit, in every year of a growing, sped-up trace.
#[test]
fn a_year_of_traffic_is_each_figure_computed_once() {
    let spec = tco_sim::traffic::TrafficSpec::new(tco_sim::traffic::TrafficKind::Trace(traffic(
        ReplayOptions {
            speedup: 1.7,
            ..Default::default()
        },
        0.4,
    )));
    let years = spec.years(3, 1800.0);
    assert_eq!(years.len(), 3);
    for (y, yt) in (1..=3).zip(&years) {
        assert_eq!(yt.year, y);
        assert_eq!(yt.peak_rps, spec.peak_rps(y));
        assert_eq!(yt.requests, spec.requests_per_year(y));
        assert_eq!(yt.mean_rps, spec.mean_rps(y));
        assert_eq!(yt.design_rps, spec.design_window(y, 1800.0).mean_rps);
        assert_eq!(yt.hourly_rps, spec.hourly_rates(y));
    }
    // The years differ (growth 40 %), so the check compared something.
    assert!(years[2].design_rps > years[0].design_rps * 1.9);
}

/// Through the `[traffic]` table, with the path relative to the scenario's folder.
#[test]
fn a_scenario_can_name_the_shipped_trace() {
    #[derive(serde::Deserialize)]
    struct S {
        traffic: TrafficFile,
    }
    let src = SourceFile::from_text(
        "scenario.toml",
        format!(
            "[traffic]\ngrowth_per_year = 0.2\n[traffic.trace]\npath = \"{AZURE_CONV}\"\nformat = \"azure\"\nspeedup = 2\n"
        ),
    );
    let f: S = src.parse().unwrap();
    let spec = validate(&src, &f.traffic, Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
    assert!(
        spec.description()
            .starts_with("trace AzureLLMInferenceTrace_conv.csv (Azure LLM CSV): 19366 requests"),
        "{}",
        spec.description()
    );
    let n = spec.design_arrivals(2, 600.0, 1, 0).count() as f64;
    // 10 minutes at 2 × 1.2 × the recorded rate (the first minutes run near the mean).
    assert!((n / 600.0 / (2.4 * 5.53) - 1.0).abs() < 0.25, "{n}");
    assert!(spec.notes().iter().any(|n| n.contains("repeat")));
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A generic CSV with named columns and millisecond stamps.
#[test]
fn generic_csv_with_named_columns() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "t.csv",
        "id,arrival_ms,prompt,completion\n1,1000,10,1\n2,1500.5,20,2\n3,4000,30,3\n",
    );
    let cols = CsvColumns {
        timestamp: "arrival_ms".into(),
        unit: TimeUnit::Millis,
        input_tokens: Some("prompt".into()),
        output_tokens: None,
    };
    let t = Trace::read(&p, TraceFormat::Csv(cols)).unwrap();
    let v: Vec<Request> = t.requests().collect();
    assert_eq!(
        v[1],
        Request {
            arrival_ns: 500_500_000,
            input_tokens: 20,
            output_tokens: 0,
            prefix: 0
        }
    );
    assert_eq!(t.span_s(), 3.0);
    let tt = TraceTraffic {
        trace: t,
        options: ReplayOptions::default(),
        growth: Growth::NONE,
    };
    assert!(tt.notes().iter().any(|n| n.contains("0 output tokens")));
}

/// Mooncake JSONL: quantised stamps are spread over their step, deterministically per seed, and
/// the caller gets a note saying so.
#[test]
fn mooncake_steps_are_spread_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for step in 0..4 {
        for i in 0..5 {
            text.push_str(&format!(
                "{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": 7, \"hash_ids\": [0]}}\n",
                step * 3000,
                100 + i
            ));
        }
    }
    let p = write(dir.path(), "conversation_trace.jsonl", &text);
    let tt = TraceTraffic {
        trace: Trace::read(&p, TraceFormat::Mooncake).unwrap(),
        options: ReplayOptions::default(),
        growth: Growth::NONE,
    };
    assert_eq!(tt.trace.spread_step_s(), Some(3.0));
    let v: Vec<Request> = tt.replay(1, 12.0, 9, 0).collect();
    assert_eq!(v.len(), 20);
    let distinct: std::collections::BTreeSet<u64> = v.iter().map(|r| r.arrival_ns).collect();
    assert_eq!(
        distinct.len(),
        20,
        "requests of a step no longer arrive together"
    );
    for (k, r) in v.iter().enumerate() {
        let step = (k / 5) as u64;
        assert!((step * 3_000_000_000..(step + 1) * 3_000_000_000).contains(&r.arrival_ns));
        assert_eq!(
            r.input_tokens,
            100 + (k % 5) as u32,
            "file order kept within a step"
        );
    }
    assert_eq!(v, tt.replay(1, 12.0, 9, 0).collect::<Vec<_>>());
    assert!(
        tt.notes()[0].contains("spread uniformly at random"),
        "{:?}",
        tt.notes()
    );
}
