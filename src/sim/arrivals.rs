//! Simple arrival streams for tests, benchmarks and examples: a homogeneous Poisson process and
//! evenly spaced arrivals; and the closed-loop source ([`ClosedLoop`]), whose arrivals are fed
//! back by completions inside the engine. Real traffic (rate curves, traces) comes from `traffic`; these exist so
//! the simulator can be checked against queueing theory on its own. Both are lazy iterators, so a
//! run of 10^8 requests holds one request at a time.

use rand::rngs::Xoshiro256PlusPlus;
use rand_distr::{Distribution, Exp1};
use serde::Serialize;

use super::service::{NS_PER_S, round_ns};
use crate::rng;
use crate::traffic::Request;

/// Poisson arrivals at a constant rate: exponential inter-arrival times with mean 1/rate.
///
/// The clock is accumulated in `f64` seconds and each arrival rounded to the nearest nanosecond,
/// so rounding does not drift the rate (truncating each gap would lose ~0.5 ns per arrival).
#[derive(Debug, Clone)]
pub struct PoissonArrivals {
    rng: Xoshiro256PlusPlus,
    mean_gap_s: f64,
    t_s: f64,
    left: u64,
    input_tokens: u32,
    output_tokens: u32,
}

impl PoissonArrivals {
    /// `count` arrivals at `rate_per_s` \[1/s\], from stream [`rng::streams::ARRIVALS`] of
    /// (`seed`, `replication`). A rate that is not finite and > 0 yields no arrivals.
    pub fn new(seed: u64, replication: u64, rate_per_s: f64, count: u64) -> Self {
        let ok = rate_per_s.is_finite() && rate_per_s > 0.0;
        PoissonArrivals {
            rng: rng::stream(seed, replication, rng::streams::ARRIVALS),
            mean_gap_s: if ok { 1.0 / rate_per_s } else { 0.0 },
            t_s: 0.0,
            left: if ok { count } else { 0 },
            input_tokens: 0,
            output_tokens: 0,
        }
    }

    /// Give every request these token counts (for continuous batching).
    pub fn with_tokens(mut self, input_tokens: u32, output_tokens: u32) -> Self {
        self.input_tokens = input_tokens;
        self.output_tokens = output_tokens;
        self
    }
}

impl Iterator for PoissonArrivals {
    type Item = Request;

    #[inline]
    fn next(&mut self) -> Option<Request> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let gap: f64 = Exp1.sample(&mut self.rng);
        self.t_s += gap * self.mean_gap_s;
        Some(Request {
            arrival_ns: round_ns(self.t_s * NS_PER_S),
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            prefix: 0,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.left).unwrap_or(usize::MAX);
        (n, Some(n))
    }
}

/// `count` arrivals every `interval_ns`, the first at `interval_ns` (a D/x/x arrival process).
#[derive(Debug, Clone)]
pub struct DeterministicArrivals {
    interval_ns: u64,
    next: u64,
    left: u64,
    input_tokens: u32,
    output_tokens: u32,
}

impl DeterministicArrivals {
    /// `count` arrivals, evenly spaced by `interval_ns` \[ns\].
    pub fn new(interval_ns: u64, count: u64) -> Self {
        DeterministicArrivals {
            interval_ns,
            next: interval_ns,
            left: count,
            input_tokens: 0,
            output_tokens: 0,
        }
    }

    /// Give every request these token counts (for continuous batching).
    pub fn with_tokens(mut self, input_tokens: u32, output_tokens: u32) -> Self {
        self.input_tokens = input_tokens;
        self.output_tokens = output_tokens;
        self
    }
}

impl Iterator for DeterministicArrivals {
    type Item = Request;

    fn next(&mut self) -> Option<Request> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let t = self.next;
        self.next = self.next.saturating_add(self.interval_ns);
        Some(Request {
            arrival_ns: t,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            prefix: 0,
        })
    }
}

/// Think time of a closed-loop client: how long it waits after a response before it sends its
/// next request.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ThinkTime {
    /// The next request goes out the moment the last one completes (a benchmark client at fixed
    /// concurrency, e.g. vLLM's `benchmark_serving.py --max-concurrency`).
    None,
    /// Always `s` seconds.
    Fixed {
        /// \[s\]
        s: f64,
    },
    /// Exponential with mean `mean_s` (the classic interactive-terminal model).
    Exponential {
        /// \[s\]
        mean_s: f64,
    },
}

impl ThinkTime {
    /// Mean think time \[s\].
    pub fn mean_s(&self) -> f64 {
        match self {
            ThinkTime::None => 0.0,
            ThinkTime::Fixed { s } => *s,
            ThinkTime::Exponential { mean_s } => *mean_s,
        }
    }

    /// One think time \[ns\], from stream [`rng::streams::THINK`]; draws nothing unless
    /// exponential.
    #[inline]
    pub(crate) fn draw_ns(&self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        match self {
            ThinkTime::None => 0,
            ThinkTime::Fixed { s } => round_ns(s * NS_PER_S),
            ThinkTime::Exponential { mean_s } => {
                let x: f64 = Exp1.sample(rng);
                round_ns(x * mean_s * NS_PER_S)
            }
        }
    }
}

/// Closed-loop load: `clients` clients each keep one request in the system. A client sends its
/// first request after one think time from the start, and its next one a think time after each
/// response (or after its request was turned away or timed out). No request is sent after
/// `duration_s`, nor more than `max_requests` per replication; the run ends when the last sent
/// request has left. The interactive response-time law X = C / (R + Z) then holds for the
/// measured throughput X, mean response time R and mean think time Z (Denning & Buzen, "The
/// operational analysis of queueing network models", ACM Computing Surveys 10(3), 1978).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClosedLoop {
    /// Requests in flight at once (the concurrency). At least 1.
    pub clients: u32,
    /// What a client waits between a response and its next request.
    pub think: ThinkTime,
    /// No request is sent after this time \[s\].
    pub duration_s: f64,
    /// Most requests sent per replication.
    pub max_requests: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_rate_is_as_asked() {
        let n = 200_000u64;
        let last = PoissonArrivals::new(3, 0, 1000.0, n)
            .last()
            .map(|r| r.arrival_ns);
        let rate = n as f64 / (last.unwrap_or(1) as f64 / NS_PER_S);
        assert!((rate / 1000.0 - 1.0).abs() < 0.01, "rate {rate}");
    }

    #[test]
    fn bad_rate_yields_nothing() {
        assert_eq!(PoissonArrivals::new(3, 0, f64::NAN, 10).count(), 0);
        assert_eq!(PoissonArrivals::new(3, 0, 0.0, 10).count(), 0);
    }

    #[test]
    fn deterministic_is_evenly_spaced() {
        let v: Vec<u64> = DeterministicArrivals::new(5, 3)
            .map(|r| r.arrival_ns)
            .collect();
        assert_eq!(v, vec![5, 10, 15]);
    }
}
