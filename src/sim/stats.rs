//! Statistics: what one replication records, and how replications merge into a [`SimReport`].
//!
//! Latencies go into hdrhistograms (u64 ns, 3 significant digits, `saturating_record`), one set
//! per replication, merged by integer addition so the merge order cannot change a count. Time
//! averages (number in system, queue length, busy servers) are integrated exactly in integer
//! ns·count. Every ratio is guarded so a report never contains NaN.

use hdrhistogram::Histogram;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::service::NS_PER_S;

/// Largest latency a histogram tracks \[ns\] (10^14 ns ≈ 27.8 h); longer ones are clamped to it
/// and reported in a warning.
pub(crate) const HIST_HIGH_NS: u64 = 100_000_000_000_000;
/// Significant decimal digits kept by the histograms: relative resolution 2^-10 ≈ 0.1 %.
const HIST_SIGFIG: u8 = 3;

/// The percentiles every [`LatencyStats`] reports, as quantiles.
const QUANTILES: [f64; 5] = [0.50, 0.90, 0.95, 0.99, 0.999];

/// A point estimate with the half-width of its 95 % confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// The estimate over all replications merged \[s\].
    pub value_s: f64,
    /// Half-width of the 95 % confidence interval from the spread between replications
    /// (Student t with R − 1 degrees of freedom) \[s\]; `None` with a single replication.
    pub ci95_half_width_s: Option<f64>,
}

/// Distribution of one duration (latency, queueing delay, service time, ...).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyStats {
    /// Requests measured.
    pub count: u64,
    /// Mean (exact, from the sum of integer nanoseconds).
    pub mean: Estimate,
    /// Median.
    pub p50: Estimate,
    /// 90th percentile.
    pub p90: Estimate,
    /// 95th percentile.
    pub p95: Estimate,
    /// 99th percentile.
    pub p99: Estimate,
    /// 99.9th percentile.
    pub p999: Estimate,
    /// The extra quantiles asked for in [`RunSpec::quantiles`](crate::sim::RunSpec::quantiles),
    /// as (quantile, estimate), in the order asked.
    pub extra: Vec<(f64, Estimate)>,
    /// Smallest value (exact) \[s\].
    pub min_s: f64,
    /// Largest value (exact) \[s\].
    pub max_s: f64,
}

/// What happened to the requests that arrived after the warm-up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// All arrivals, warm-up included.
    pub arrived_total: u64,
    /// Arrivals after the warm-up (the measured requests).
    pub arrived: u64,
    /// Measured requests served to completion.
    pub completed: u64,
    /// Measured requests rejected because their queue was full.
    pub rejected_queue_full: u64,
    /// Measured requests rejected because their context can never fit the KV cache.
    pub rejected_too_large: u64,
    /// Measured requests dropped after waiting `timeout_s`.
    pub timed_out: u64,
    /// Measured requests still in the system when an unstable replication was stopped.
    pub unfinished: u64,
}

/// Busy fraction of each unit over the measured window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnitStats {
    /// Per unit: busy server-time / (servers per unit × measured time).
    pub utilization: Vec<f64>,
    /// Over the whole fleet.
    pub mean_utilization: f64,
}

/// Requests waiting (not in service) over the measured window, over the whole fleet.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct QueueStats {
    /// Time-average number waiting.
    pub mean_waiting: f64,
    /// Most waiting at any instant.
    pub max_waiting: u64,
}

/// Little's law L = λW checked on the measured window (Little, "A proof for the queuing formula
/// L = λW", Operations Research 9(3), 1961).
///
/// L is the time-average number of requests in the system (waiting or in service, warm-up
/// requests included) over the window from the end of warm-up to the last departure; λ is the
/// rate at which measured requests were accepted over that window; W is their mean time in the
/// system (timed-out requests count with the time they spent). The two sides differ only by the
/// warm-up requests still in the system when the window opens, so the relative error shrinks as
/// 1/(requests measured).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LittleCheck {
    /// Time-average number in system.
    pub l: f64,
    /// Accepted arrival rate \[1/s\].
    pub lambda_per_s: f64,
    /// Mean time in system \[s\].
    pub w_s: f64,
    /// |L − λW| / (λW); 0 when both are 0.
    pub relative_error: f64,
}

/// One point of the merged latency CDF, for charts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CdfPoint {
    /// End-to-end latency \[s\].
    pub latency_s: f64,
    /// Fraction of measured requests at or below it.
    pub quantile: f64,
}

/// Everything a simulation run measured, merged over replications.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimReport {
    /// Replications merged.
    pub replications: u32,
    /// Measured window summed over replications \[s\].
    pub measured_time_s: f64,
    /// What happened to the requests.
    pub counts: Counts,
    /// Measured requests completed per second of measured window \[1/s\].
    pub throughput_per_s: f64,
    /// End-to-end latency: arrival to completion.
    pub latency: LatencyStats,
    /// Queueing delay: arrival to start of service (admission to a batch).
    pub queueing: LatencyStats,
    /// Service time: start of service to completion.
    pub service: LatencyStats,
    /// Time to first token (continuous batching only).
    pub ttft: Option<LatencyStats>,
    /// Time per output token after the first (continuous batching, requests with more than one
    /// output token).
    pub tpot: Option<LatencyStats>,
    /// Busy fraction per unit.
    pub utilization: UnitStats,
    /// Queue length.
    pub queue: QueueStats,
    /// Little's law check.
    pub little: LittleCheck,
    /// Offered load ρ = λ / (fleet's maximum throughput), where the server model gives one.
    pub offered_load: Option<f64>,
    /// True when the offered load is at least the fleet's capacity with nothing to shed it, or
    /// when a replication was stopped by the queue guard: the numbers then describe a queue that
    /// grows without bound and must not be read as a steady state.
    pub unstable: bool,
    /// Plain-language warnings (unstable system, no measured requests, clamped latencies).
    pub warnings: Vec<String>,
    /// Merged end-to-end latency CDF, ~120 points from the median region to the maximum.
    pub latency_cdf: Vec<CdfPoint>,
    /// Tokens per second, KV-cache utilization and preemptions (continuous batching only).
    pub llm: Option<LlmStats>,
    /// Prefix caching's token hit rate (continuous batching with prefix caching, once a measured
    /// request was admitted).
    pub prefix_cache: Option<super::prefix::PrefixCacheStats>,
}

/// A histogram plus exact count, sum, min and max (the histogram's own are bucket-rounded).
#[derive(Debug, Clone)]
pub(crate) struct Durations {
    hist: Histogram<u64>,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
    clamped: u64,
}

impl Durations {
    pub fn new() -> Self {
        // The bounds are constants that hdrhistogram accepts; failure would be a programming
        // error caught by every test.
        let hist = Histogram::new_with_bounds(1, HIST_HIGH_NS, HIST_SIGFIG)
            .unwrap_or_else(|e| unreachable!("histogram bounds are constant and valid: {e}"));
        Durations {
            hist,
            sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            clamped: 0,
        }
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.hist.saturating_record(ns);
        self.sum_ns += u128::from(ns);
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        if ns > HIST_HIGH_NS {
            self.clamped += 1;
        }
    }

    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// Whether `ns`, were it the quantile's value, would be reported above `bound_s`: it is
    /// above the bound and so is the middle of its bucket (what [`Durations::quantiles_s`]
    /// reports before clamping to the maximum, which is at least `ns`). Values beyond the
    /// histogram's range are left out (never said to be above), which only errs towards "not".
    #[inline]
    pub fn reports_above(&self, ns: u64, bound_s: f64) -> bool {
        ns <= HIST_HIGH_NS
            && ns as f64 / NS_PER_S > bound_s
            && self.hist.median_equivalent(ns) as f64 / NS_PER_S > bound_s
    }

    /// The middle of the bucket of `ns` \[ns\].
    #[cfg(test)]
    pub fn hist_median_equivalent(&self, ns: u64) -> u64 {
        self.hist.median_equivalent(ns)
    }

    fn mean_s(&self) -> f64 {
        let n = self.count();
        if n == 0 {
            0.0
        } else {
            (self.sum_ns as f64 / n as f64) / NS_PER_S
        }
    }

    /// Quantiles \[s\], each the middle of its histogram bucket, clamped to the exact min and max
    /// (so a run in which every request took the same time reports that time exactly).
    fn quantiles_s(&self, qs: &[f64]) -> Vec<f64> {
        if self.count() == 0 {
            return vec![0.0; qs.len()];
        }
        self.hist
            .value_at_quantiles(qs.iter().copied())
            .map(|v| {
                let mid = self.hist.median_equivalent(v);
                mid.clamp(self.min_ns, self.max_ns) as f64 / NS_PER_S
            })
            .collect()
    }

    fn merge(&mut self, other: &Durations) {
        // Both histograms have the same bounds, so `add` cannot fail; a failure would only lose
        // counts, never panic.
        let _ = self.hist.add(&other.hist);
        self.sum_ns += other.sum_ns;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        self.clamped += other.clamped;
    }
}

/// What one replication measured.
#[derive(Debug, Clone)]
pub(crate) struct RepResult {
    pub latency: Durations,
    pub queueing: Durations,
    pub service: Durations,
    pub ttft: Option<Durations>,
    pub tpot: Option<Durations>,
    pub counts: Counts,
    /// Measured window \[ns\].
    pub window_ns: u64,
    /// ∫ number in system dt over the window \[ns·requests\].
    pub area_in_system: u128,
    /// ∫ number waiting dt over the window \[ns·requests\].
    pub area_waiting: u128,
    pub max_waiting: u64,
    /// Σ time in system of measured, accepted requests \[ns\].
    pub sojourn_sum_ns: u128,
    /// Measured requests accepted (not rejected at arrival).
    pub accepted: u64,
    /// Per unit ∫ busy servers dt over the window \[ns·servers\].
    pub busy_area: Vec<u128>,
    /// From the end of warm-up to the last measured arrival \[ns\], for the offered load.
    pub arrival_span_ns: u64,
    /// Stopped by the queue guard.
    pub guard_tripped: bool,
    /// Prompt tokens of measured completed requests.
    pub input_tokens: u64,
    /// Output tokens of measured completed requests (at least one each).
    pub output_tokens: u64,
    /// Continuous batching: ∫ KV cache in use dt over the window, summed over replicas, in the
    /// allocation's units (blocks or tokens) \[ns·units\].
    pub kv_area: u128,
    /// Continuous batching: most KV tokens one replica held at once in the window.
    pub kv_peak_tokens: u64,
    /// Continuous batching: sequences preempted in the window.
    pub preemptions: u64,
    /// Prefix caching's counts, once a measured request was admitted with it on.
    pub prefix: Option<super::prefix::PrefixCounts>,
}

impl RepResult {
    pub fn new(units: usize, tokens: bool) -> Self {
        RepResult {
            latency: Durations::new(),
            queueing: Durations::new(),
            service: Durations::new(),
            ttft: tokens.then(Durations::new),
            tpot: tokens.then(Durations::new),
            counts: Counts {
                arrived_total: 0,
                arrived: 0,
                completed: 0,
                rejected_queue_full: 0,
                rejected_too_large: 0,
                timed_out: 0,
                unfinished: 0,
            },
            window_ns: 0,
            area_in_system: 0,
            area_waiting: 0,
            max_waiting: 0,
            sojourn_sum_ns: 0,
            accepted: 0,
            busy_area: vec![0; units],
            arrival_span_ns: 0,
            guard_tripped: false,
            input_tokens: 0,
            output_tokens: 0,
            kv_area: 0,
            kv_peak_tokens: 0,
            preemptions: 0,
            prefix: None,
        }
    }
}

/// What the merge needs to know about the fleet.
pub(crate) struct FleetShape {
    pub servers_per_unit: u64,
    /// Maximum throughput of one unit \[1/s\], when the server model defines one.
    pub unit_capacity_per_s: Option<f64>,
    pub units: u32,
    /// A queue cap or timeout sheds load, so an overloaded fleet stays bounded.
    pub sheds_load: bool,
    /// Continuous batching: KV-cache replicas over the fleet and the capacity of one, in the
    /// allocation's units and in tokens per unit.
    pub kv: Option<KvShape>,
}

/// The KV caches of a continuous-batching fleet, for the utilization.
pub(crate) struct KvShape {
    pub replicas: u64,
    /// Capacity of one replica in allocation units (blocks, or tokens).
    pub capacity_units: u64,
    /// Tokens per allocation unit.
    pub unit_tokens: u64,
}

/// What a generative (continuous-batching) run did with tokens and its KV cache.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LlmStats {
    /// Prompt tokens of the measured completed requests per second of measured window.
    pub input_tokens_per_s: f64,
    /// Output tokens of the measured completed requests per second of measured window.
    pub output_tokens_per_s: f64,
    /// Time-average fraction of the fleet's KV cache in use over the measured window (paged:
    /// blocks held; reserve: tokens reserved).
    pub kv_utilization_mean: f64,
    /// Largest fraction of one replica's KV cache in use at any iteration of the window.
    pub kv_utilization_peak: f64,
    /// Sequences preempted (KV cache exhausted, recomputed later) in the measured windows of
    /// all replications.
    pub preemptions: u64,
    /// Preemptions per measured completed request.
    pub preemptions_per_request: f64,
    /// Time-average sequences admitted to a replica (prefilling or decoding) over the measured
    /// window, per replica: (L − L_q) / replicas, the requests in the system less those waiting
    /// for admission. The operating point the accuracy suite's rows are compared at (their
    /// concurrency or batch).
    pub mean_running_per_replica: f64,
}

/// Half-width of the 95 % confidence interval of the mean of `xs`:
/// t_{0.975, R−1} · s / √R, with s the sample standard deviation (Student, 1908; any statistics
/// text, e.g. Law, *Simulation Modeling and Analysis*, 5th ed., 2015, §9.4.1).
fn ci95_half_width(xs: &[f64]) -> Option<f64> {
    let r = xs.len();
    if r < 2 {
        return None;
    }
    let n = r as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    let t = StudentsT::new(0.0, 1.0, n - 1.0).ok()?.inverse_cdf(0.975);
    let h = t * (var / n).sqrt();
    h.is_finite().then_some(h)
}

/// Per replication: the [`QUANTILES`], the mean, then the extra quantiles \[s\], for the
/// confidence intervals.
type RepSummary = Vec<f64>;

fn summary(d: &Durations, extra: &[f64]) -> RepSummary {
    let mut v = d.quantiles_s(&QUANTILES);
    v.push(d.mean_s());
    v.extend(d.quantiles_s(extra));
    v
}

fn latency_stats(merged: &Durations, per_rep: &[RepSummary], extra: &[f64]) -> LatencyStats {
    let values = merged.quantiles_s(&QUANTILES);
    let extra_values = merged.quantiles_s(extra);
    let est = |i: usize, value_s: f64| Estimate {
        value_s,
        ci95_half_width_s: ci95_half_width(&per_rep.iter().map(|q| q[i]).collect::<Vec<_>>()),
    };
    let count = merged.count();
    LatencyStats {
        count,
        mean: est(5, merged.mean_s()),
        p50: est(0, values[0]),
        p90: est(1, values[1]),
        p95: est(2, values[2]),
        p99: est(3, values[3]),
        p999: est(4, values[4]),
        extra: extra
            .iter()
            .zip(extra_values)
            .enumerate()
            .map(|(i, (&q, v))| (q, est(6 + i, v)))
            .collect(),
        min_s: if count == 0 {
            0.0
        } else {
            merged.min_ns as f64 / NS_PER_S
        },
        max_s: merged.max_ns as f64 / NS_PER_S,
    }
}

/// The quantiles of the chart CDF: every percent, then every 0.1 % to 99.9 %, every 0.01 % to
/// 99.99 %, and the maximum: dense where tail-latency contracts are written.
fn cdf_grid() -> Vec<f64> {
    let mut q: Vec<f64> = (1..=99).map(|i| f64::from(i) / 100.0).collect();
    q.extend((991..=999).map(|i| f64::from(i) / 1000.0));
    q.extend((9991..=9999).map(|i| f64::from(i) / 10000.0));
    q.push(1.0);
    q
}

fn ratio(num: f64, den: f64) -> f64 {
    if den > 0.0 && num.is_finite() {
        num / den
    } else {
        0.0
    }
}

/// A merged histogram and the per-replication summaries of one duration.
struct Merged {
    all: Durations,
    per_rep: Vec<RepSummary>,
    extra: Vec<f64>,
}

impl Merged {
    fn new(extra: &[f64]) -> Self {
        Merged {
            all: Durations::new(),
            per_rep: Vec::new(),
            extra: extra.to_vec(),
        }
    }

    fn add(&mut self, d: &Durations) {
        self.all.merge(d);
        self.per_rep.push(summary(d, &self.extra));
    }

    fn stats(&self) -> LatencyStats {
        latency_stats(&self.all, &self.per_rep, &self.extra)
    }
}

/// Merges replications one at a time, in replication order, so that memory holds one merged
/// set of histograms plus a few numbers per replication however many replications run, and every
/// floating-point sum is taken in the same order at any thread count.
pub(crate) struct Merger {
    shape: FleetShape,
    reps: u32,
    window_s: f64,
    counts: Counts,
    latency: Merged,
    queueing: Merged,
    service: Merged,
    ttft: Option<Merged>,
    tpot: Option<Merged>,
    busy: Vec<u128>,
    area_n_s: f64,
    area_q_s: f64,
    max_waiting: u64,
    accepted: u64,
    sojourn_s: f64,
    arrival_span_s: f64,
    tripped: u32,
    input_tokens: u64,
    output_tokens: u64,
    /// ∫ KV in use dt \[s·units\].
    kv_area_s: f64,
    kv_peak_tokens: u64,
    preemptions: u64,
    prefix: Option<super::prefix::PrefixCounts>,
}

impl Merger {
    pub fn new(shape: FleetShape, tokens: bool, extra_quantiles: &[f64]) -> Self {
        let merged = || Merged::new(extra_quantiles);
        Merger {
            reps: 0,
            window_s: 0.0,
            counts: Counts {
                arrived_total: 0,
                arrived: 0,
                completed: 0,
                rejected_queue_full: 0,
                rejected_too_large: 0,
                timed_out: 0,
                unfinished: 0,
            },
            latency: merged(),
            queueing: merged(),
            service: merged(),
            ttft: tokens.then(merged),
            tpot: tokens.then(merged),
            busy: vec![0; shape.units as usize],
            area_n_s: 0.0,
            area_q_s: 0.0,
            max_waiting: 0,
            accepted: 0,
            sojourn_s: 0.0,
            arrival_span_s: 0.0,
            tripped: 0,
            input_tokens: 0,
            output_tokens: 0,
            kv_area_s: 0.0,
            kv_peak_tokens: 0,
            preemptions: 0,
            prefix: None,
            shape,
        }
    }

    /// Fold in the next replication (callers go in replication order).
    pub fn add(&mut self, x: &RepResult) {
        self.reps += 1;
        self.window_s += x.window_ns as f64 / NS_PER_S;
        let c = &mut self.counts;
        c.arrived_total += x.counts.arrived_total;
        c.arrived += x.counts.arrived;
        c.completed += x.counts.completed;
        c.rejected_queue_full += x.counts.rejected_queue_full;
        c.rejected_too_large += x.counts.rejected_too_large;
        c.timed_out += x.counts.timed_out;
        c.unfinished += x.counts.unfinished;
        self.latency.add(&x.latency);
        self.queueing.add(&x.queueing);
        self.service.add(&x.service);
        if let (Some(m), Some(d)) = (self.ttft.as_mut(), x.ttft.as_ref()) {
            m.add(d);
        }
        if let (Some(m), Some(d)) = (self.tpot.as_mut(), x.tpot.as_ref()) {
            m.add(d);
        }
        for (b, a) in self.busy.iter_mut().zip(&x.busy_area) {
            *b += a;
        }
        self.area_n_s += x.area_in_system as f64 / NS_PER_S;
        self.area_q_s += x.area_waiting as f64 / NS_PER_S;
        self.max_waiting = self.max_waiting.max(x.max_waiting);
        self.accepted += x.accepted;
        self.sojourn_s += x.sojourn_sum_ns as f64 / NS_PER_S;
        self.arrival_span_s += x.arrival_span_ns as f64 / NS_PER_S;
        self.tripped += u32::from(x.guard_tripped);
        self.input_tokens += x.input_tokens;
        self.output_tokens += x.output_tokens;
        self.kv_area_s += x.kv_area as f64 / NS_PER_S;
        self.kv_peak_tokens = self.kv_peak_tokens.max(x.kv_peak_tokens);
        self.preemptions += x.preemptions;
        if let Some(c) = x.prefix {
            let m = self.prefix.get_or_insert_default();
            m.prompt_tokens += c.prompt_tokens;
            m.hit_tokens += c.hit_tokens;
        }
    }

    /// The report over every replication added.
    pub fn finish(self) -> SimReport {
        let shape = &self.shape;
        let window_s = self.window_s;
        let counts = self.counts;
        let units = shape.units as usize;
        let server_time_s = shape.servers_per_unit as f64 * window_s;
        let utilization: Vec<f64> = self
            .busy
            .iter()
            .map(|&b| ratio(b as f64 / NS_PER_S, server_time_s))
            .collect();
        let mean_utilization = ratio(
            self.busy.iter().map(|&b| b as f64).sum::<f64>() / NS_PER_S,
            server_time_s * units as f64,
        );

        let l = ratio(self.area_n_s, window_s);
        let lambda = ratio(self.accepted as f64, window_s);
        let w = ratio(self.sojourn_s, self.accepted as f64);
        let lw = lambda * w;
        let little = LittleCheck {
            l,
            lambda_per_s: lambda,
            w_s: w,
            relative_error: if lw > 0.0 {
                ratio((l - lw).abs(), lw)
            } else if l > 0.0 {
                1.0
            } else {
                0.0
            },
        };

        let offered_load = shape.unit_capacity_per_s.and_then(|cap| {
            let lambda_offered = ratio(counts.arrived as f64, self.arrival_span_s);
            let capacity = cap * f64::from(shape.units);
            (lambda_offered > 0.0 && capacity > 0.0).then(|| lambda_offered / capacity)
        });

        let mut warnings = Vec::new();
        let mut unstable = false;
        if self.tripped > 0 {
            unstable = true;
            warnings.push(format!(
                "the system is unstable: more than {} requests waited (or {} were inside) at once \
                 in {} of {} replications, so they were stopped early; arrivals exceed what the \
                 fleet can serve and the latencies describe a queue that grows without bound",
                super::QUEUE_GUARD,
                super::IN_SYSTEM_GUARD,
                self.tripped,
                self.reps
            ));
        }
        if let Some(rho) = offered_load
            && rho >= 1.0
        {
            if shape.sheds_load {
                warnings.push(format!(
                    "the fleet is overloaded: offered load ρ = {rho:.3} ≥ 1; the queue cap or \
                     timeout keeps it bounded by turning requests away"
                ));
            } else {
                unstable = true;
                warnings.push(format!(
                    "the system is unstable: offered load ρ = {rho:.3} ≥ 1 exceeds the fleet's \
                     capacity, so the queue grows without bound and no steady state exists"
                ));
            }
        }
        if counts.arrived == 0 {
            warnings.push(
                "no requests arrived after the warm-up; the statistics are empty (shorten \
                 warmup_s or lengthen the traffic)"
                    .to_string(),
            );
        }
        let clamped =
            self.latency.all.clamped + self.queueing.all.clamped + self.service.all.clamped;
        if clamped > 0 {
            warnings.push(format!(
                "{clamped} durations exceeded {} s and were clamped in the percentiles",
                HIST_HIGH_NS as f64 / NS_PER_S
            ));
        }

        let grid = cdf_grid();
        let latency_cdf = if self.latency.all.count() == 0 {
            Vec::new()
        } else {
            self.latency
                .all
                .quantiles_s(&grid)
                .into_iter()
                .zip(grid)
                .map(|(latency_s, quantile)| CdfPoint {
                    latency_s,
                    quantile,
                })
                .collect()
        };

        let llm = shape.kv.as_ref().map(|kv| LlmStats {
            input_tokens_per_s: ratio(self.input_tokens as f64, window_s),
            output_tokens_per_s: ratio(self.output_tokens as f64, window_s),
            kv_utilization_mean: ratio(
                self.kv_area_s,
                (kv.replicas * kv.capacity_units) as f64 * window_s,
            )
            .min(1.0),
            kv_utilization_peak: ratio(
                self.kv_peak_tokens as f64,
                (kv.capacity_units * kv.unit_tokens) as f64,
            )
            .min(1.0),
            preemptions: self.preemptions,
            preemptions_per_request: ratio(self.preemptions as f64, counts.completed as f64),
            mean_running_per_replica: ratio(
                (little.l - ratio(self.area_q_s, window_s)).max(0.0),
                kv.replicas as f64,
            ),
        });
        SimReport {
            llm,
            replications: self.reps,
            measured_time_s: window_s,
            throughput_per_s: ratio(counts.completed as f64, window_s),
            counts,
            latency: self.latency.stats(),
            queueing: self.queueing.stats(),
            service: self.service.stats(),
            ttft: self.ttft.as_ref().map(Merged::stats),
            tpot: self.tpot.as_ref().map(Merged::stats),
            utilization: UnitStats {
                utilization,
                mean_utilization,
            },
            queue: QueueStats {
                mean_waiting: ratio(self.area_q_s, window_s),
                max_waiting: self.max_waiting,
            },
            little,
            offered_load,
            unstable,
            warnings,
            latency_cdf,
            prefix_cache: self
                .prefix
                .map(super::prefix::PrefixCacheStats::from_counts),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ci_matches_a_hand_computed_t_interval() {
        // xs = 1, 2, 3: mean 2, s = 1, t_{0.975,2} = 4.302653, half-width = 4.302653/√3.
        let h = ci95_half_width(&[1.0, 2.0, 3.0]).unwrap_or(f64::NAN);
        assert!((h - 4.302_653 / 3f64.sqrt()).abs() < 1e-5, "{h}");
        assert_eq!(ci95_half_width(&[1.0]), None);
        assert_eq!(ci95_half_width(&[2.0, 2.0]), Some(0.0));
    }

    #[test]
    fn equal_durations_give_exact_quantiles() {
        let mut d = Durations::new();
        for _ in 0..10 {
            d.record(10_000_000);
        }
        assert_eq!(d.quantiles_s(&[0.5, 0.99]), vec![0.01, 0.01]);
        assert_eq!(d.mean_s(), 0.01);
    }

    #[test]
    fn quantiles_are_within_histogram_resolution() {
        let mut d = Durations::new();
        for v in 1..=100_000u64 {
            d.record(v * 1000);
        }
        let q = d.quantiles_s(&[0.5, 0.99]);
        assert!((q[0] / 0.05 - 1.0).abs() < 1e-3, "{q:?}");
        assert!((q[1] / 0.099 - 1.0).abs() < 1e-3, "{q:?}");
    }

    #[test]
    fn cdf_grid_is_increasing_and_ends_at_one() {
        let g = cdf_grid();
        assert!(g.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(g.last(), Some(&1.0));
        assert!((100..=200).contains(&g.len()));
    }
}
