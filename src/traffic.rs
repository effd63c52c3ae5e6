//! Traffic: synthetic rate curves turned into arrivals by a non-homogeneous Poisson process, and
//! measured traffic (request traces, rate series) replayed as recorded.
//!
//! Place in the pipeline: `scenario` validates the `[traffic]` table ([`file::validate`]) into a
//! [`TrafficSpec`]; the capacity planner simulates [`TrafficSpec::design_arrivals`] (the busiest
//! window of a year) and the cost model reads [`TrafficSpec::hourly_rates`] and
//! [`TrafficSpec::requests_per_year`] (on-demand autoscaling, cost per request).
//!
//! Calendar used throughout: a year is 365 days of 24 hours (8,760 h, no leap days); every year
//! starts on a Monday; year numbers are 1-based and year `y` carries the growth factor
//! `(1+g)^(y−1)` (see [`Growth`]). Times inside a year are seconds since its start.
//!
//! Submodules, in the order data flows through them:
//! - [`curve`]: synthetic rate curves (constant or diurnal day, weekly pattern, bursts, growth);
//! - [`series`]: a measured rate series (ServeGen 10-minute windows, or a CSV of rates);
//! - [`trace`]: a measured request trace (Azure LLM CSV, generic CSV, Mooncake JSONL) and its replay;
//! - [`prefix`]: the prompt prefix blocks of a trace (Mooncake `hash_ids`), for prefix caching;
//! - [`arrivals`]: the NHPP / Gamma-renewal arrival generator shared by curves and series;
//! - [`stats`]: count, rate, peaks, inter-arrival CV and index of dispersion of a request stream;
//! - [`file`](mod@file): the raw `[traffic]` TOML table and its validation into a [`TrafficSpec`].

pub mod arrivals;
pub mod curve;
pub mod file;
pub mod prefix;
pub(crate) mod read;
pub mod series;
pub mod stats;
pub mod trace;

use std::fmt;

use crate::units::{HOUR_S, YEAR_HOURS, YEAR_S};

pub use arrivals::{Burstiness, NhppArrivals, Segment};
pub use curve::{Bursts, DailyShape, Diurnal, RateCurve, Weekly};
pub use series::{RateSeries, SeriesTraffic};
pub use stats::TrafficStats;
pub use trace::{ReplayOptions, Trace, TraceFormat, TraceReplay, TraceTraffic};

/// One request as it enters the fleet. Integer nanoseconds, so event order never depends on
/// floating-point ties. Token counts are zero for classic (non-generative) workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Request {
    /// Arrival time since the start of the simulated window \[ns\].
    pub arrival_ns: u64,
    /// Prompt (input) tokens.
    pub input_tokens: u32,
    /// Generated (output) tokens.
    pub output_tokens: u32,
    /// The request's prompt prefix blocks, for prefix caching: 1 + its index in its trace's
    /// [`prefix::PrefixBlocks`]; 0 when it carries none (synthetic traffic, a trace without
    /// `hash_ids`, or prefix caching off).
    pub prefix: u32,
}

/// The longest window an arrival iterator covers \[s\] (100 years): beyond it nanosecond times
/// would approach `u64::MAX` (584 years).
pub const MAX_WINDOW_S: f64 = 100.0 * YEAR_S;

/// The highest request rate a scenario may plan for, in any year \[req/s\]: Google Search
/// answers about 100,000 queries a second on average (8.5 billion a day), and the busiest
/// public services peak near a million requests a second, so ten times the busiest. A synthetic
/// peak, a rate-series window, and the peak of every year of the horizon (growth and bursts
/// included) are held to it, so no in-range combination overflows a count.
pub const MAX_RPS: f64 = 1e7;
/// The lowest synthetic peak rate \[req/s\]: one request in 11.6 days; below it there is no
/// fleet to plan.
pub const MIN_RPS: f64 = 1e-6;
/// The most tokens one request of a trace may carry in or out: the longest published context
/// window is 10 million tokens.
pub const MAX_TRACE_TOKENS: u32 = 10_000_000;

/// Compound yearly growth of every rate: year `y` (1-based) carries the factor
///
/// ```text
/// G(y) = (1 + g)^(y − 1)
/// ```
///
/// with `g` the fractional growth per year (0.3 = 30 % a year). Year 1 is the year the traffic
/// was given for. Year 0 is treated as year 1, so no call can extrapolate backwards by accident.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Growth {
    /// Fractional growth per year, > −1.
    pub per_year: f64,
}

impl Growth {
    /// No growth.
    pub const NONE: Growth = Growth { per_year: 0.0 };

    /// The multiplier `G(y)` of year `year` (1-based).
    pub fn factor(&self, year: u32) -> f64 {
        let exponent = year.max(1) - 1;
        (1.0 + self.per_year).powi(exponent.min(i32::MAX as u32) as i32)
    }
}

/// The busiest stretch of one year: what the capacity planner simulates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DesignWindow {
    /// 1-based year.
    pub year: u32,
    /// Start of the window since the start of the year (for traces: since the start of the
    /// replay) \[s\].
    pub start_s: f64,
    /// Length of the window \[s\].
    pub duration_s: f64,
    /// Expected requests in the window divided by its length [req/s].
    pub mean_rps: f64,
}

/// One year of traffic as the capacity and cost plans read it, each figure computed once
/// ([`TrafficSpec::year`]). A plan reads the hourly rates twice per tier (the cloud fleet's
/// hours and the requests it serves), and the uncertainty analysis re-plans every tier for each
/// sample: for a trace each figure is a pass over its requests, and the hourly rates are 8,760
/// counts, so reading them once per year instead of once per use is most of that analysis's time.
#[derive(Debug, Clone, PartialEq)]
pub struct YearTraffic {
    /// 1-based year.
    pub year: u32,
    /// [`TrafficSpec::peak_rps`] [req/s].
    pub peak_rps: f64,
    /// [`TrafficSpec::requests_per_year`].
    pub requests: f64,
    /// [`TrafficSpec::mean_rps`] [req/s].
    pub mean_rps: f64,
    /// The mean rate of the [`TrafficSpec::design_window`] the year is planned on [req/s].
    pub design_rps: f64,
    /// [`TrafficSpec::hourly_rates`]: 8,760 hourly mean rates [req/s].
    pub hourly_rps: Vec<f64>,
}

/// Where the traffic comes from, validated.
#[derive(Debug, Clone, PartialEq)]
pub enum TrafficKind {
    /// A synthetic rate curve with an inter-arrival burstiness setting.
    Synthetic {
        curve: RateCurve,
        burstiness: Burstiness,
    },
    /// A recorded request trace, replayed.
    Trace(TraceTraffic),
    /// A measured rate series, turned into arrivals.
    RateSeries(SeriesTraffic),
}

/// The validated traffic of a scenario, whatever its kind: what the rest of the program asks of
/// traffic. Built by [`file::validate`] from a `[traffic]` table, or directly from the parts.
#[derive(Debug, Clone, PartialEq)]
pub struct TrafficSpec {
    pub kind: TrafficKind,
}

impl TrafficSpec {
    /// A spec from its kind.
    pub fn new(kind: TrafficKind) -> Self {
        TrafficSpec { kind }
    }

    /// The prompt prefix blocks the replayed requests refer to ([`Request::prefix`]): a trace's
    /// with `hash_ids`, else none.
    pub fn prefix_blocks(&self) -> Option<&std::sync::Arc<prefix::PrefixBlocks>> {
        match &self.kind {
            TrafficKind::Trace(t) => t.trace.prefix_blocks(),
            _ => None,
        }
    }

    /// Forget any prefix blocks, so requests carry none (prefix caching off).
    pub fn drop_prefix_blocks(&mut self) {
        if let TrafficKind::Trace(t) = &mut self.kind {
            t.trace.drop_prefix_blocks();
        }
    }

    /// The compound yearly growth of every rate.
    pub fn growth(&self) -> Growth {
        match &self.kind {
            TrafficKind::Synthetic { curve, .. } => curve.growth(),
            TrafficKind::Trace(t) => t.growth,
            TrafficKind::RateSeries(s) => s.growth,
        }
    }

    /// The same traffic with another yearly growth (the uncertainty analysis varies it; a
    /// growth's validity, > −1, is the caller's to keep).
    pub fn set_growth(&mut self, growth: Growth) {
        match &mut self.kind {
            TrafficKind::Synthetic { curve, .. } => curve.set_growth(growth),
            TrafficKind::Trace(t) => t.growth = growth,
            TrafficKind::RateSeries(s) => s.growth = growth,
        }
    }

    /// The window the capacity planner simulates for `year`, `window_s` long: the busiest
    /// `window_s` of the peak day for a synthetic curve (centred on the daily peak), the busiest
    /// `window_s` of the series for a rate series, and the busiest `window_s` of the replay for a
    /// trace.
    pub fn design_window(&self, year: u32, window_s: f64) -> DesignWindow {
        match &self.kind {
            TrafficKind::Synthetic { curve, .. } => curve.design_window(year, window_s),
            TrafficKind::Trace(t) => t.design_window(year, window_s),
            TrafficKind::RateSeries(s) => s.design_window(year, window_s),
        }
    }

    /// The design traffic of `year`: arrivals over the [`design_window`](Self::design_window),
    /// with times measured from the window's start. A lazy iterator (nothing is materialised), the
    /// same for the same `(seed, replication)`. Random draws come from
    /// `rng::stream(seed, replication, rng::streams::ARRIVALS)`.
    ///
    /// A `window_s` that is not a finite number > 0 gives no arrivals; windows longer than
    /// [`MAX_WINDOW_S`] are cut to it.
    pub fn design_arrivals(
        &self,
        year: u32,
        window_s: f64,
        seed: u64,
        replication: u64,
    ) -> Arrivals<'_> {
        let w = self.design_window(year, window_s);
        match &self.kind {
            TrafficKind::Synthetic { curve, burstiness } => {
                Arrivals(ArrivalsInner::Curve(curve.arrivals(
                    year,
                    w.start_s,
                    w.duration_s,
                    *burstiness,
                    seed,
                    replication,
                )))
            }
            TrafficKind::Trace(t) => Arrivals(ArrivalsInner::Trace(t.design_replay(
                year,
                w.duration_s,
                seed,
                replication,
            ))),
            TrafficKind::RateSeries(s) => Arrivals(ArrivalsInner::Series(s.arrivals(
                year,
                w.start_s,
                w.duration_s,
                seed,
                replication,
            ))),
        }
    }

    /// Mean request rate of each hour of `year` [req/s], 8,760 values: what on-demand
    /// autoscaling follows hour by hour.
    pub fn hourly_rates(&self, year: u32) -> Vec<f64> {
        match &self.kind {
            TrafficKind::Synthetic { curve, .. } => curve.hourly_rates(year),
            TrafficKind::Trace(t) => t.hourly_rates(year),
            TrafficKind::RateSeries(s) => s.hourly_rates(year),
        }
    }

    /// The highest rate of `year` at the finest resolution the traffic defines [req/s]: the
    /// instantaneous maximum of a synthetic curve (bursts included), the busiest window of a rate
    /// series, the busiest fixed 1-minute bin of a trace.
    pub fn peak_rps(&self, year: u32) -> f64 {
        match &self.kind {
            TrafficKind::Synthetic { curve, .. } => curve.peak_rps(year),
            TrafficKind::Trace(t) => t.peak_rps(year),
            TrafficKind::RateSeries(s) => s.peak_rps(year),
        }
    }

    /// Mean rate over `year` [req/s] = requests per year / [`YEAR_S`].
    pub fn mean_rps(&self, year: u32) -> f64 {
        self.requests_per_year(year) / YEAR_S
    }

    /// Expected requests in `year`: the integral of the rate over the year (for a trace, the
    /// recorded requests of the trace repeated back to back over the year).
    pub fn requests_per_year(&self, year: u32) -> f64 {
        match &self.kind {
            TrafficKind::Synthetic { curve, .. } => curve.requests_per_year(year),
            TrafficKind::Trace(t) => t.requests_per_year(year),
            TrafficKind::RateSeries(s) => s.requests_per_year(year),
        }
    }

    /// Every figure of `year` a plan reads, the design window `window_s` long: the same values
    /// as the functions it names, each computed once.
    pub fn year(&self, year: u32, window_s: f64) -> YearTraffic {
        let requests = self.requests_per_year(year);
        YearTraffic {
            year,
            peak_rps: self.peak_rps(year),
            requests,
            mean_rps: requests / YEAR_S,
            design_rps: self.design_window(year, window_s).mean_rps,
            hourly_rps: self.hourly_rates(year),
        }
    }

    /// [`year`](Self::year) for years 1 to `horizon_years`.
    pub fn years(&self, horizon_years: u32, window_s: f64) -> Vec<YearTraffic> {
        (1..=horizon_years)
            .map(|y| self.year(y, window_s))
            .collect()
    }

    /// One line for a report: the kind and its defining numbers.
    pub fn description(&self) -> String {
        match &self.kind {
            TrafficKind::Synthetic { curve, burstiness } => {
                format!("{}; {}", curve.description(), burstiness.description())
            }
            TrafficKind::Trace(t) => t.description(),
            TrafficKind::RateSeries(s) => s.description(),
        }
    }

    /// Caveats a report should print next to the results (how a trace was spread, how a weekly
    /// pattern was normalised, …); may be empty.
    pub fn notes(&self) -> Vec<String> {
        match &self.kind {
            TrafficKind::Synthetic { curve, .. } => curve.notes(),
            TrafficKind::Trace(t) => t.notes(),
            TrafficKind::RateSeries(s) => s.notes(),
        }
    }
}

impl fmt::Display for TrafficSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.description())
    }
}

/// The arrivals of one design window, whatever the traffic kind: sorted by time, lazily made.
pub struct Arrivals<'a>(ArrivalsInner<'a>);

enum ArrivalsInner<'a> {
    Curve(NhppArrivals<curve::CurveSegments<'a>>),
    Series(NhppArrivals<series::SeriesSegments<'a>>),
    Trace(TraceReplay<'a>),
}

impl Iterator for Arrivals<'_> {
    type Item = Request;

    fn next(&mut self) -> Option<Request> {
        match &mut self.0 {
            ArrivalsInner::Curve(a) => a.next(),
            ArrivalsInner::Series(a) => a.next(),
            ArrivalsInner::Trace(a) => a.next(),
        }
    }
}

/// The mean rate of each of the 8,760 hours of a year [req/s] from the cumulative count
/// `count(t)` of requests before `t` seconds since the start of the year.
pub(crate) fn hourly_from_cumulative(count: impl Fn(f64) -> f64) -> Vec<f64> {
    let mut before = count(0.0);
    (1..=YEAR_HOURS)
        .map(|h| {
            let n = count(h as f64 * HOUR_S);
            let rate = (n - before) / HOUR_S;
            before = n;
            rate
        })
        .collect()
}

/// Clamp a requested window length to what an iterator can cover: non-finite or ≤ 0 → 0.
pub(crate) fn clamp_window(window_s: f64) -> f64 {
    if window_s.is_finite() && window_s > 0.0 {
        window_s.min(MAX_WINDOW_S)
    } else {
        0.0
    }
}

/// Format a rate for descriptions: at least 3 significant figures, no exponent, 0 as `0`.
pub(crate) fn fmt_rate(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_is_compound_from_year_one() {
        let g = Growth { per_year: 0.3 };
        assert_eq!(g.factor(1), 1.0);
        assert_eq!(g.factor(0), 1.0);
        assert!((g.factor(2) - 1.3).abs() < 1e-12);
        assert!((g.factor(5) - 1.3f64.powi(4)).abs() < 1e-12);
    }

    #[test]
    fn window_clamp_refuses_nonsense() {
        assert_eq!(clamp_window(f64::NAN), 0.0);
        assert_eq!(clamp_window(-1.0), 0.0);
        assert_eq!(clamp_window(f64::INFINITY), 0.0);
        assert_eq!(clamp_window(1e30), MAX_WINDOW_S);
        assert_eq!(clamp_window(3600.0), 3600.0);
    }
}
