//! Summary statistics of a request stream or trace: how many requests, how fast, how peaky, how
//! bursty. Used to describe a trace in reports, to check generated arrivals against their
//! settings, and to check our trace readers against the statistics published with the traces
//! (`traces/README.md`).
//!
//! Definitions (the same as the shared trace README, which computed them with numpy):
//! - mean rate `= (n − 1) / (t_last − t_first)` [req/s];
//! - peak 1 s / 1 min: the largest count in fixed bins of 1 s / 60 s aligned to the first arrival
//!   (the last, partial bin included);
//! - IAT CV: population standard deviation / mean of the gaps between consecutive arrivals
//!   (1 for a Poisson process);
//! - IDC(w), the index of dispersion of counts: population variance / mean of the counts in bins
//!   of `w` seconds aligned to the first arrival, full bins only, i.e. the bins before the one
//!   holding the last arrival (1 at every `w` for a Poisson process; Cox & Lewis 1966,
//!   *The Statistical Analysis of Series of Events*, §4.5).
//!
//! One pass, O(1) memory: the stream may be a lazily generated year.

use super::Request;

/// Statistics of a sorted request stream (module docs give the definitions).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrafficStats {
    pub count: u64,
    /// Last minus first arrival \[s\].
    pub span_s: f64,
    /// `(count − 1) / span` [req/s].
    pub mean_rps: f64,
    /// Largest count in a fixed 1 s bin.
    pub peak_1s: u64,
    /// Largest count in a fixed 60 s bin.
    pub peak_1min: u64,
    /// Mean inter-arrival time \[s\].
    pub iat_mean_s: f64,
    /// Coefficient of variation of inter-arrival times.
    pub iat_cv: f64,
    /// Index of dispersion of counts in 1 s bins (`None` without a full bin or without arrivals
    /// in the full bins).
    pub idc_1s: Option<f64>,
    /// … in 10 s bins.
    pub idc_10s: Option<f64>,
    /// … in 60 s bins.
    pub idc_60s: Option<f64>,
    /// Mean prompt tokens per request.
    pub mean_input_tokens: f64,
    /// Mean generated tokens per request.
    pub mean_output_tokens: f64,
}

/// Why statistics could not be computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StatsError {
    #[error("{0} request(s) at distinct times: statistics need at least two")]
    TooFew(u64),
    #[error("request {index} arrives before the one before it: the stream is not sorted")]
    Unsorted { index: u64 },
}

/// Counts per fixed bin, folded into sums as bins close.
#[derive(Debug, Clone, Copy)]
struct Bins {
    width_ns: u64,
    bin: u64,
    count: u64,
    closed: u64,
    sum: f64,
    sum_sq: f64,
    max: u64,
}

impl Bins {
    fn new(width_ns: u64) -> Self {
        Bins {
            width_ns,
            bin: 0,
            count: 0,
            closed: 0,
            sum: 0.0,
            sum_sq: 0.0,
            max: 0,
        }
    }

    fn add(&mut self, since_first_ns: u64) {
        let b = since_first_ns / self.width_ns;
        if b != self.bin {
            // Close the current bin and the empty ones skipped over.
            let c = self.count as f64;
            self.sum += c;
            self.sum_sq += c * c;
            self.closed += b - self.bin;
            self.bin = b;
            self.count = 0;
        }
        self.count += 1;
        self.max = self.max.max(self.count);
    }

    /// IDC over the closed (full) bins.
    fn idc(&self) -> Option<f64> {
        if self.closed == 0 || self.sum <= 0.0 {
            return None;
        }
        let n = self.closed as f64;
        let mean = self.sum / n;
        let var = (self.sum_sq / n - mean * mean).max(0.0);
        Some(var / mean)
    }
}

impl TrafficStats {
    /// Statistics of a stream sorted by arrival time.
    pub fn from_requests<I: IntoIterator<Item = Request>>(requests: I) -> Result<Self, StatsError> {
        let mut it = requests.into_iter();
        let Some(first) = it.next() else {
            return Err(StatsError::TooFew(0));
        };
        let t0 = first.arrival_ns;
        let mut bins = [
            Bins::new(1_000_000_000),
            Bins::new(10_000_000_000),
            Bins::new(60_000_000_000),
        ];
        for b in &mut bins {
            b.add(0);
        }
        let (mut count, mut last) = (1u64, t0);
        let (mut tok_in, mut tok_out) = (first.input_tokens as f64, first.output_tokens as f64);
        // Welford's running mean and sum of squared deviations of the gaps [s].
        let (mut gap_mean, mut gap_m2) = (0.0f64, 0.0f64);
        for r in it {
            if r.arrival_ns < last {
                return Err(StatsError::Unsorted { index: count });
            }
            let gap = (r.arrival_ns - last) as f64 / 1e9;
            let k = count as f64; // gaps so far + 1
            let delta = gap - gap_mean;
            gap_mean += delta / k;
            gap_m2 += delta * (gap - gap_mean);
            for b in &mut bins {
                b.add(r.arrival_ns - t0);
            }
            tok_in += r.input_tokens as f64;
            tok_out += r.output_tokens as f64;
            last = r.arrival_ns;
            count += 1;
        }
        let span_s = (last - t0) as f64 / 1e9;
        if count < 2 || span_s <= 0.0 {
            return Err(StatsError::TooFew(if span_s <= 0.0 { 1 } else { count }));
        }
        let gaps = (count - 1) as f64;
        let gap_sd = (gap_m2 / gaps).max(0.0).sqrt();
        Ok(TrafficStats {
            count,
            span_s,
            mean_rps: gaps / span_s,
            peak_1s: bins[0].max,
            peak_1min: bins[2].max,
            iat_mean_s: gap_mean,
            iat_cv: gap_sd / gap_mean,
            idc_1s: bins[0].idc(),
            idc_10s: bins[1].idc(),
            idc_60s: bins[2].idc(),
            mean_input_tokens: tok_in / count as f64,
            mean_output_tokens: tok_out / count as f64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(times_ms: &[u64]) -> Vec<Request> {
        times_ms
            .iter()
            .map(|&t| Request {
                arrival_ns: t * 1_000_000,
                input_tokens: 10,
                output_tokens: 2,
                prefix: 0,
            })
            .collect()
    }

    #[test]
    fn regular_arrivals_have_zero_cv_and_zero_dispersion() {
        // One arrival every 100 ms for 120 s.
        let times: Vec<u64> = (0..=1200).map(|i| i * 100).collect();
        let s = TrafficStats::from_requests(at(&times)).unwrap();
        assert_eq!(s.count, 1201);
        assert_eq!(s.span_s, 120.0);
        assert!((s.mean_rps - 10.0).abs() < 1e-12);
        assert!(s.iat_cv < 1e-9);
        assert_eq!(s.peak_1s, 10);
        assert_eq!(s.peak_1min, 600);
        assert_eq!(s.idc_1s, Some(0.0));
        assert_eq!(s.mean_input_tokens, 10.0);
    }

    #[test]
    fn counts_fold_empty_bins_into_the_dispersion() {
        // 0, 0.5 s, then a 2.5 s silence, then 3.1 s: 1 s bins 0..2 hold [2, 0, 0] (bin 3 holds
        // the last arrival and is not full), mean 2/3, variance 8/9, IDC 4/3.
        let s = TrafficStats::from_requests(at(&[0, 500, 3100])).unwrap();
        let idc = s.idc_1s.unwrap();
        assert!((idc - 4.0 / 3.0).abs() < 1e-12, "{idc}");
        assert_eq!(s.peak_1s, 2);
        assert_eq!(s.idc_10s, None);
    }

    #[test]
    fn bad_streams_are_refused_not_panicked_on() {
        assert_eq!(
            TrafficStats::from_requests(Vec::new()),
            Err(StatsError::TooFew(0))
        );
        assert_eq!(
            TrafficStats::from_requests(at(&[5, 5])),
            Err(StatsError::TooFew(1))
        );
        assert_eq!(
            TrafficStats::from_requests(at(&[5, 7, 6])),
            Err(StatsError::Unsorted { index: 2 })
        );
    }
}
