//! Stopping a run as soon as it is certain to miss a latency bound.
//!
//! The fleet-size search throws away every size that fails the contract except what it needs to
//! say why it stopped, so a run that has already failed need not finish. A run fails a bound
//! when the reported quantile q of a metric (end-to-end latency, TTFT or TPOT), over all its
//! replications merged, is above the bound. The reported quantile is the middle of the
//! histogram bucket holding the ⌈q·N⌉-th smallest of the N recorded values, clamped to the
//! recorded minimum and maximum ([`Durations`]). Call a recorded value *over* when it is above
//! the bound and so is the middle of its bucket: a larger value is over too, so when more than
//! N − ⌈q·N⌉ values are over, the ⌈q·N⌉-th smallest is one of them, and the reported quantile
//! (at least the smaller of its bucket's middle and the maximum) is above the bound, however
//! the rest of the run goes.
//!
//! N is not known until the run ends, but it is at most A, the measured arrivals (counted
//! before the run), and N − ⌈q·N⌉ never decreases as N grows. So the run stops once more than
//! A − ⌈q·A⌉ + [`MARGIN`] values are over, counted across its replications as they run. The
//! decision is the same at any thread count and in any interleaving of the replications: a run
//! is stopped only when its full result would fail, and a stopped run's report is never shown.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::stats::Durations;

/// Values over a bound beyond the least that decides the quantile: ⌈q·N⌉ is computed in
/// floating point, as the histogram does, and may round one either way of the exact rank at A
/// and at N; two spare values cover both.
const MARGIN: u64 = 2;

/// The bounds a run is stopped at: the quantile (in (0, 1]) and, per metric, the bound it must
/// not exceed \[s\] (`None`: not bounded).
#[derive(Debug, Clone, PartialEq)]
pub struct Cutoff {
    pub quantile: f64,
    pub latency_s: Option<f64>,
    pub ttft_s: Option<f64>,
    pub tpot_s: Option<f64>,
}

/// Upper bounds on how many values each metric will record, over all replications: the
/// measured arrivals, and those of them with more than one output token (the only ones with a
/// time per output token).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Expected {
    pub measured: u64,
    pub multi_token: u64,
}

/// One bounded metric: its bound, how many values may be over it before the run has failed,
/// and how many are, across replications.
#[derive(Debug)]
struct Rule {
    bound_s: f64,
    limit: u64,
    over: AtomicU64,
}

impl Rule {
    fn new(bound_s: Option<f64>, quantile: f64, expected: u64) -> Option<Rule> {
        let bound_s = bound_s?;
        if expected == 0 || !bound_s.is_finite() {
            return None;
        }
        // The histogram's rank of the quantile among `expected` values.
        let rank = ((quantile.clamp(0.0, 1.0) * expected as f64).ceil() as u64).max(1);
        Some(Rule {
            bound_s,
            limit: expected.saturating_sub(rank) + MARGIN,
            over: AtomicU64::new(0),
        })
    }

    /// Count `ns` (just recorded in `d`) if it is over the bound; true once too many are.
    #[inline]
    fn observe(&self, ns: u64, d: &Durations) -> bool {
        d.reports_above(ns, self.bound_s)
            && self.over.fetch_add(1, Ordering::Relaxed) + 1 > self.limit
    }
}

/// The shared state of one stopped-early run: its rules, and whether any has fired.
#[derive(Debug)]
pub(crate) struct CutoffState {
    latency: Option<Rule>,
    ttft: Option<Rule>,
    tpot: Option<Rule>,
    fired: AtomicBool,
}

impl CutoffState {
    /// The rules of `cutoff` for a run recording at most `expected` values per metric (`tokens`:
    /// the run records TTFT and TPOT).
    pub fn new(cutoff: &Cutoff, expected: Expected, tokens: bool) -> Arc<Self> {
        let q = cutoff.quantile;
        let token_rule = |b, n| if tokens { Rule::new(b, q, n) } else { None };
        Arc::new(CutoffState {
            latency: Rule::new(cutoff.latency_s, q, expected.measured),
            ttft: token_rule(cutoff.ttft_s, expected.measured),
            tpot: token_rule(cutoff.tpot_s, expected.multi_token),
            fired: AtomicBool::new(false),
        })
    }

    /// Whether the run has failed a bound (in any replication).
    pub fn fired(&self) -> bool {
        self.fired.load(Ordering::Relaxed)
    }

    /// A measured request was recorded with this latency, TTFT and TPOT \[ns\] into these
    /// histograms; true when the run has failed (here or in another replication).
    #[inline]
    pub fn observe(
        &self,
        latency: (u64, &Durations),
        ttft: Option<(u64, &Durations)>,
        tpot: Option<(u64, &Durations)>,
    ) -> bool {
        let hit = |rule: &Option<Rule>, v: Option<(u64, &Durations)>| match (rule, v) {
            (Some(r), Some((ns, d))) => r.observe(ns, d),
            _ => false,
        };
        if hit(&self.latency, Some(latency)) | hit(&self.ttft, ttft) | hit(&self.tpot, tpot) {
            self.fired.store(true, Ordering::Relaxed);
            return true;
        }
        self.fired()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn durations(values: &[u64]) -> Durations {
        let mut d = Durations::new();
        for &v in values {
            d.record(v);
        }
        d
    }

    /// The limit is the number of values that may be over the bound with the quantile still
    /// possibly within it, plus the margin.
    #[test]
    fn the_limit_leaves_the_quantile_undecided_until_exceeded() {
        let r = Rule::new(Some(1.0), 0.99, 1000).expect("a rule");
        assert_eq!(r.limit, 10 + MARGIN);
        assert!(Rule::new(None, 0.99, 1000).is_none());
        assert!(Rule::new(Some(1.0), 0.99, 0).is_none());
        let one = Rule::new(Some(1.0), 0.5, 1).expect("a rule");
        assert_eq!(one.limit, MARGIN);
    }

    /// A value counts as over only when it and its bucket's middle are both above the bound.
    #[test]
    fn over_means_reported_above() {
        let d = durations(&[]);
        let bound_s = 1.0;
        assert!(!d.reports_above(999_000_000, bound_s));
        assert!(!d.reports_above(1_000_000_000, bound_s));
        assert!(d.reports_above(1_100_000_000, bound_s));
        // Just above the bound, in the bound's own bucket whose middle may be below it.
        let just = 1_000_000_001;
        let mid = d.hist_median_equivalent(just);
        assert_eq!(d.reports_above(just, bound_s), mid > 1_000_000_000);
    }

    /// Fired once more than the limit are over, across observers, and then for everyone.
    #[test]
    fn fires_after_the_limit_for_every_replication() {
        let cutoff = Cutoff {
            quantile: 0.9,
            latency_s: Some(1.0),
            ttft_s: None,
            tpot_s: None,
        };
        let state = CutoffState::new(
            &cutoff,
            Expected {
                measured: 20,
                multi_token: 0,
            },
            false,
        );
        let d = durations(&[]);
        let limit = 20 - 18 + MARGIN;
        for _ in 0..limit {
            assert!(!state.observe((2_000_000_000, &d), None, None));
            assert!(!state.observe((10, &d), None, None));
        }
        assert!(state.observe((2_000_000_000, &d), None, None));
        assert!(state.fired());
        assert!(
            state.observe((10, &d), None, None),
            "another replication sees it"
        );
    }
}
