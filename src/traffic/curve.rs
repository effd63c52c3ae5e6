//! Synthetic rate curves: the traffic a planner forecasts — a daily shape (constant or diurnal),
//! a weekly pattern, short bursts and compound yearly growth — and the questions the rest of the
//! program asks of it (rate at an instant, the design window, hourly means, yearly totals).
//!
//! # The curve
//!
//! For year `y` (1-based) and time `t` \[s\] since the start of the year, with day `d = ⌊t/86400⌋`
//! and hour of day `h = (t mod 86400)/3600`:
//!
//! ```text
//! λ_y(t) = G(y) · W[d mod 7] · B(t) · D(h)                                       [req/s]
//!
//! D(h) = T + (P − T) · c(h)^k,   c(h) = (1 + cos(2π (h − h_p) / 24)) / 2           (diurnal)
//! D(h) = P                                                                         (constant)
//! ```
//!
//! - `P` peak rate, `T` trough rate [req/s]; `k > 0` the shape exponent (dimensionless).
//! - `h_p = peak_hour + 0.5`: the daily peak sits in the middle of the clock hour `peak_hour`, so
//!   the busiest clock hour of [`RateCurve::hourly_rates`] is `peak_hour` itself.
//! - `c(h) = cos²(π (h − h_p)/24)` is a raised cosine: 1 at the peak, 0 twelve hours later. Raising
//!   it to `k` keeps the peak `P` and the trough `T` and narrows the busy part of the day as `k`
//!   grows. Its daily mean has a closed form,
//!   `mean(c^k) = (1/π) ∫₀^π cos^{2k} u du = Γ(k + ½) / (√π · Γ(k + 1)) =: m(k)`
//!   (Gradshteyn & Ryzhik 2007, 3.621.1), which decreases from 1 (k = 0) through ½ (k = 1) to 0,
//!   so the daily mean is `M = T + (P − T)·m(k)` exactly and, given `P`, `M` and `T`, `k` solves
//!   `m(k) = (M − T)/(P − T)` (bisection; unique because `m` is strictly decreasing). Without a
//!   mean, `k = 1` (`M = (P + T)/2`). `k` is kept within [`K_MIN`]..=[`K_MAX`].
//! - `W[0..7]`: weekly multipliers, Monday first, **normalised so the busiest day is 1** — so `P`
//!   is always the peak of the busiest day and `M` its mean. Every year starts on a Monday.
//! - `B(t)`: the burst multiplier `b` inside a burst, else 1. Bursts are **placed
//!   deterministically**, the same every day: `n` bursts a day of `duration` seconds, centred at
//!   the daily peak `h_p` and then every `24/n` hours (a constant day centres the first at 12:00).
//!   Deterministic placement makes the design window reproducible and always include one burst —
//!   the worst case a planner must absorb — and makes the number of bursts per year exact.
//! - `G(y) = (1 + g)^(y−1)`: compound growth ([`Growth`]), constant within a year.
//!
//! Integrals of `D` over an interval use composite Simpson's rule on ≤ 30 s steps (D is smooth
//! and periodic; the error is below 1e-9 relative for every `k` allowed); `W`, `B` and `G` are
//! constant between the break points (midnights, burst edges), which are integrated exactly.

use std::cmp::Ordering;
use std::fmt::Write as _;

use statrs::function::gamma::ln_gamma;

use super::arrivals::{Burstiness, NhppArrivals, Segment};
use super::{DesignWindow, Growth, MAX_WINDOW_S, clamp_window};
use crate::units::{DAY_S, HOUR_S, YEAR_DAYS, YEAR_HOURS, YEAR_S};

/// The smallest shape exponent: `c^0.5 = |cos(π(h − h_p)/24)|`, daily mean `2/π ≈ 0.64` of the
/// swing. Smaller `k` would make the day flat with a sharp notch at the trough.
pub const K_MIN: f64 = 0.5;
/// The largest shape exponent: a daily peak about 20 minutes wide at half height
/// (`m(1000) ≈ 0.018`).
pub const K_MAX: f64 = 1000.0;

/// A curve parameter that cannot describe a traffic pattern. Field-free messages: the scenario
/// validation ([`super::file`]) adds the field name and position.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CurveError {
    #[error("peak rate {0} req/s is not a number > 0")]
    Peak(f64),
    #[error("mean rate {0} req/s is not a number > 0")]
    Mean(f64),
    #[error("mean rate {mean} req/s is not below the peak {peak} req/s")]
    MeanNotBelowPeak { mean: f64, peak: f64 },
    #[error("trough rate {0} req/s is not a number ≥ 0")]
    Trough(f64),
    #[error("trough rate {trough} req/s is not below the mean {mean} req/s")]
    TroughNotBelowMean { trough: f64, mean: f64 },
    #[error("trough rate {trough} req/s is not below the peak {peak} req/s")]
    TroughNotBelowPeak { trough: f64, peak: f64 },
    #[error("a diurnal day needs a mean or a trough rate besides the peak")]
    Underdetermined,
    /// `M` lies outside what `k ∈ [K_MIN, K_MAX]` can reach for this `P` and `T`.
    #[error(
        "mean rate {mean} req/s cannot be reached by a smooth daily cycle from {trough} to {peak} req/s"
    )]
    MeanOutOfReach {
        mean: f64,
        trough: f64,
        peak: f64,
        /// The reachable range of means [req/s].
        min: f64,
        max: f64,
    },
    #[error("peak hour {0} is not a whole hour 0-23")]
    PeakHour(f64),
    #[error("a weekly pattern has 7 day multipliers (Monday first), not {0}")]
    WeeklyLength(usize),
    #[error("weekly multiplier {value} (day {index}) is not a number ≥ 0")]
    WeeklyValue { index: usize, value: f64 },
    #[error("every weekly multiplier is 0: no day has traffic")]
    WeeklyAllZero,
    #[error("burst multiplier {0} is not a number ≥ 1")]
    BurstMultiplier(f64),
    #[error("burst duration {0} s is not a number > 0")]
    BurstDuration(f64),
    #[error("bursts per day {0} is not a whole number ≥ 1")]
    BurstsPerDay(f64),
    #[error("{per_day} bursts of {duration_s} s a day cover the whole day")]
    BurstsFillDay { per_day: u32, duration_s: f64 },
}

/// The daily mean of `c(h)^k` as a fraction of the swing: `m(k) = Γ(k+½)/(√π Γ(k+1))`.
pub fn raised_cosine_mean(k: f64) -> f64 {
    (ln_gamma(k + 0.5) - ln_gamma(k + 1.0) - 0.5 * std::f64::consts::PI.ln()).exp()
}

/// A diurnal day: raised cosine to the power `k` between a trough and a peak (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Diurnal {
    peak_rps: f64,
    trough_rps: f64,
    peak_hour: u8,
    k: f64,
}

impl Diurnal {
    /// A day from its peak and either its mean (then `k` is solved; the trough defaults to 0) or
    /// its trough (then `k = 1`), or both. `peak_hour` is the clock hour (0–23) holding the peak.
    pub fn new(
        peak_rps: f64,
        mean_rps: Option<f64>,
        trough_rps: Option<f64>,
        peak_hour: f64,
    ) -> Result<Self, CurveError> {
        if !(peak_rps.is_finite() && peak_rps > 0.0) {
            return Err(CurveError::Peak(peak_rps));
        }
        if !(peak_hour.is_finite() && peak_hour.fract() == 0.0 && (0.0..=23.0).contains(&peak_hour))
        {
            return Err(CurveError::PeakHour(peak_hour));
        }
        let peak_hour = peak_hour as u8;
        if let Some(t) = trough_rps {
            if !(t.is_finite() && t >= 0.0) {
                return Err(CurveError::Trough(t));
            }
            if t >= peak_rps {
                return Err(CurveError::TroughNotBelowPeak {
                    trough: t,
                    peak: peak_rps,
                });
            }
        }
        let Some(mean) = mean_rps else {
            return match trough_rps {
                Some(t) => Ok(Diurnal {
                    peak_rps,
                    trough_rps: t,
                    peak_hour,
                    k: 1.0,
                }),
                None => Err(CurveError::Underdetermined),
            };
        };
        if !(mean.is_finite() && mean > 0.0) {
            return Err(CurveError::Mean(mean));
        }
        if mean >= peak_rps {
            return Err(CurveError::MeanNotBelowPeak {
                mean,
                peak: peak_rps,
            });
        }
        let trough = trough_rps.unwrap_or(0.0);
        if trough >= mean {
            return Err(CurveError::TroughNotBelowMean { trough, mean });
        }
        let swing = peak_rps - trough;
        let target = (mean - trough) / swing;
        let (m_lo, m_hi) = (raised_cosine_mean(K_MAX), raised_cosine_mean(K_MIN));
        if !(m_lo..=m_hi).contains(&target) {
            return Err(CurveError::MeanOutOfReach {
                mean,
                trough,
                peak: peak_rps,
                min: trough + swing * m_lo,
                max: trough + swing * m_hi,
            });
        }
        Ok(Diurnal {
            peak_rps,
            trough_rps: trough,
            peak_hour,
            k: solve_k(target),
        })
    }

    pub fn peak_rps(&self) -> f64 {
        self.peak_rps
    }

    pub fn trough_rps(&self) -> f64 {
        self.trough_rps
    }

    /// Daily mean `T + (P − T)·m(k)` [req/s].
    pub fn mean_rps(&self) -> f64 {
        self.trough_rps + (self.peak_rps - self.trough_rps) * raised_cosine_mean(self.k)
    }

    /// The clock hour holding the peak (the peak itself is at `peak_hour:30`).
    pub fn peak_hour(&self) -> u8 {
        self.peak_hour
    }

    /// The shape exponent `k`.
    pub fn exponent(&self) -> f64 {
        self.k
    }

    /// `D(h)` at `tod_s` seconds after midnight [req/s].
    fn rate_at(&self, tod_s: f64) -> f64 {
        let h = tod_s / HOUR_S;
        let phase = 2.0 * std::f64::consts::PI * (h - (self.peak_hour as f64 + 0.5)) / 24.0;
        let c = ((1.0 + phase.cos()) / 2.0).clamp(0.0, 1.0);
        self.trough_rps + (self.peak_rps - self.trough_rps) * c.powf(self.k)
    }
}

/// Solve `m(k) = target` for `k` in [K_MIN, K_MAX] by bisection on `ln k` (m is strictly
/// decreasing); 200 halvings of a bounded interval, so it always ends.
fn solve_k(target: f64) -> f64 {
    let (mut lo, mut hi) = (K_MIN.ln(), K_MAX.ln());
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if raised_cosine_mean(mid.exp()) > target {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-15 {
            break;
        }
    }
    (0.5 * (lo + hi)).exp()
}

/// The shape of one day, before weekly, burst and growth multipliers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DailyShape {
    /// The same rate all day [req/s].
    Constant { rps: f64 },
    /// A daily cycle.
    Diurnal(Diurnal),
}

impl DailyShape {
    /// A constant day; the rate must be a number > 0.
    pub fn constant(rps: f64) -> Result<Self, CurveError> {
        if rps.is_finite() && rps > 0.0 {
            Ok(DailyShape::Constant { rps })
        } else {
            Err(CurveError::Peak(rps))
        }
    }

    fn rate_at(&self, tod_s: f64) -> f64 {
        match self {
            DailyShape::Constant { rps } => *rps,
            DailyShape::Diurnal(d) => d.rate_at(tod_s),
        }
    }

    /// The highest rate of the day, before bursts [req/s].
    pub fn peak_rps(&self) -> f64 {
        match self {
            DailyShape::Constant { rps } => *rps,
            DailyShape::Diurnal(d) => d.peak_rps,
        }
    }

    /// The daily mean before bursts [req/s].
    pub fn mean_rps(&self) -> f64 {
        match self {
            DailyShape::Constant { rps } => *rps,
            DailyShape::Diurnal(d) => d.mean_rps(),
        }
    }

    /// Seconds after midnight of the daily peak: `peak_hour:30`, or 12:00 for a constant day
    /// (where it only anchors the bursts).
    pub fn anchor_s(&self) -> f64 {
        match self {
            DailyShape::Constant { .. } => 12.0 * HOUR_S,
            DailyShape::Diurnal(d) => (d.peak_hour as f64 + 0.5) * HOUR_S,
        }
    }
}

/// Weekly day multipliers, Monday first, normalised so the busiest day is 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weekly {
    days: [f64; 7],
    /// The largest multiplier as given; the given ones were divided by it.
    given_max: f64,
}

impl Weekly {
    /// Every day the same.
    pub const FLAT: Weekly = Weekly {
        days: [1.0; 7],
        given_max: 1.0,
    };

    /// Seven multipliers ≥ 0, Monday first, at least one > 0; they are divided by the largest.
    pub fn new(given: &[f64]) -> Result<Self, CurveError> {
        if given.len() != 7 {
            return Err(CurveError::WeeklyLength(given.len()));
        }
        let mut days = [0.0; 7];
        for (i, &v) in given.iter().enumerate() {
            if !(v.is_finite() && v >= 0.0) {
                return Err(CurveError::WeeklyValue { index: i, value: v });
            }
            days[i] = v;
        }
        let max = days.iter().copied().fold(0.0, f64::max);
        if max <= 0.0 {
            return Err(CurveError::WeeklyAllZero);
        }
        for d in &mut days {
            *d /= max;
        }
        Ok(Weekly {
            days,
            given_max: max,
        })
    }

    /// The multiplier of day `day` of a year (day 0 is a Monday).
    pub fn factor(&self, day: i64) -> f64 {
        self.days[day.rem_euclid(7) as usize]
    }

    /// The normalised multipliers, Monday first.
    pub fn days(&self) -> [f64; 7] {
        self.days
    }

    /// The largest multiplier as given (1 when no rescaling happened).
    pub fn given_max(&self) -> f64 {
        self.given_max
    }

    /// The first busiest day of the week (0 = Monday).
    pub fn peak_day(&self) -> usize {
        self.days.iter().position(|&d| d == 1.0).unwrap_or(0)
    }

    pub fn is_flat(&self) -> bool {
        self.days == [1.0; 7]
    }
}

impl Default for Weekly {
    fn default() -> Self {
        Weekly::FLAT
    }
}

/// Short bursts on top of the daily shape, placed deterministically (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bursts {
    /// Rate multiplier during a burst, ≥ 1.
    pub multiplier: f64,
    /// Length of one burst \[s\].
    pub duration_s: f64,
    /// Bursts per day, ≥ 1.
    pub per_day: u32,
}

impl Bursts {
    /// Checked bursts: multiplier ≥ 1, duration > 0, per_day ≥ 1, and together shorter than a day.
    pub fn new(multiplier: f64, duration_s: f64, per_day: f64) -> Result<Self, CurveError> {
        if !(multiplier.is_finite() && multiplier >= 1.0) {
            return Err(CurveError::BurstMultiplier(multiplier));
        }
        if !(duration_s.is_finite() && duration_s > 0.0) {
            return Err(CurveError::BurstDuration(duration_s));
        }
        if !(per_day.is_finite() && per_day >= 1.0 && per_day.fract() == 0.0 && per_day <= DAY_S) {
            return Err(CurveError::BurstsPerDay(per_day));
        }
        let per_day = per_day as u32;
        if duration_s * per_day as f64 >= DAY_S {
            return Err(CurveError::BurstsFillDay {
                per_day,
                duration_s,
            });
        }
        Ok(Bursts {
            multiplier,
            duration_s,
            per_day,
        })
    }

    /// Burst intervals within one day, `[start, end)` seconds after midnight, sorted, split at
    /// midnight when a burst wraps around it.
    fn intervals(&self, anchor_s: f64) -> Vec<(f64, f64)> {
        let mut v = Vec::with_capacity(self.per_day as usize + 1);
        let spacing = DAY_S / self.per_day as f64;
        for i in 0..self.per_day {
            let centre = (anchor_s + i as f64 * spacing).rem_euclid(DAY_S);
            let (a, b) = (
                centre - self.duration_s / 2.0,
                centre + self.duration_s / 2.0,
            );
            if a < 0.0 {
                v.push((a + DAY_S, DAY_S));
                v.push((0.0, b));
            } else if b > DAY_S {
                v.push((a, DAY_S));
                v.push((0.0, b - DAY_S));
            } else {
                v.push((a, b));
            }
        }
        v.sort_by(|x, y| x.0.total_cmp(&y.0));
        v
    }
}

/// A validated synthetic rate curve (module docs give the formula).
#[derive(Debug, Clone, PartialEq)]
pub struct RateCurve {
    shape: DailyShape,
    weekly: Weekly,
    bursts: Option<Bursts>,
    growth: Growth,
    /// Burst intervals within a day (seconds after midnight), sorted, disjoint.
    burst_intervals: Vec<(f64, f64)>,
    /// Times of day where `B` changes, sorted, ending with `DAY_S`.
    day_breaks: Vec<f64>,
    /// Mean rate of each clock hour of a day with weekly multiplier 1 and growth 1, bursts
    /// included [req/s].
    day_hourly: [f64; 24],
}

impl RateCurve {
    /// A curve from validated parts.
    pub fn new(shape: DailyShape, weekly: Weekly, bursts: Option<Bursts>, growth: Growth) -> Self {
        let burst_intervals = bursts
            .map(|b| b.intervals(shape.anchor_s()))
            .unwrap_or_default();
        let mut day_breaks: Vec<f64> = burst_intervals
            .iter()
            .flat_map(|&(a, b)| [a, b])
            .filter(|&x| x > 0.0 && x < DAY_S)
            .collect();
        day_breaks.push(DAY_S);
        day_breaks.sort_by(f64::total_cmp);
        day_breaks.dedup();
        let mut curve = RateCurve {
            shape,
            weekly,
            bursts,
            growth,
            burst_intervals,
            day_breaks,
            day_hourly: [0.0; 24],
        };
        for h in 0..24 {
            let a = h as f64 * HOUR_S;
            curve.day_hourly[h] = curve.day_integral(a, a + HOUR_S) / HOUR_S;
        }
        curve
    }

    pub fn shape(&self) -> &DailyShape {
        &self.shape
    }

    pub fn weekly(&self) -> &Weekly {
        &self.weekly
    }

    pub fn bursts(&self) -> Option<&Bursts> {
        self.bursts.as_ref()
    }

    pub fn growth(&self) -> Growth {
        self.growth
    }

    /// Replace the yearly growth (nothing else depends on it).
    pub fn set_growth(&mut self, growth: Growth) {
        self.growth = growth;
    }

    fn burst_factor(&self, tod_s: f64) -> f64 {
        let Some(b) = self.bursts else {
            return 1.0;
        };
        let i = self.burst_intervals.partition_point(|&(a, _)| a <= tod_s);
        match i.checked_sub(1).map(|j| self.burst_intervals[j]) {
            Some((_, end)) if tod_s < end => b.multiplier,
            _ => 1.0,
        }
    }

    /// Instantaneous rate λ_y(t) at `t_s` seconds since the start of year `year` [req/s].
    pub fn rate_at(&self, year: u32, t_s: f64) -> f64 {
        let day = (t_s / DAY_S).floor();
        let tod = t_s - day * DAY_S;
        self.growth.factor(year)
            * self.weekly.factor(day as i64)
            * self.burst_factor(tod)
            * self.shape.rate_at(tod)
    }

    /// ∫ D(h) dh over `[a, b]` seconds after midnight, by composite Simpson on ≤ 30 s steps.
    fn shape_integral(&self, a: f64, b: f64) -> f64 {
        if b <= a {
            return 0.0;
        }
        if let DailyShape::Constant { rps } = self.shape {
            return rps * (b - a);
        }
        let n = (((b - a) / 30.0).ceil() as usize).max(1) * 2;
        let h = (b - a) / n as f64;
        let mut sum = self.shape.rate_at(a) + self.shape.rate_at(b);
        for i in 1..n {
            let w = if i % 2 == 1 { 4.0 } else { 2.0 };
            sum += w * self.shape.rate_at(a + i as f64 * h);
        }
        sum * h / 3.0
    }

    /// ∫ D·B over `[a, b]` within one day (0 ≤ a ≤ b ≤ 86,400), split at burst edges.
    fn day_integral(&self, a: f64, b: f64) -> f64 {
        let mut total = 0.0;
        let mut t = a;
        while t < b {
            let next = self.next_break_in_day(t).min(b);
            if next <= t {
                break;
            }
            total += self.burst_factor(0.5 * (t + next)) * self.shape_integral(t, next);
            t = next;
        }
        total
    }

    /// Requests of a whole day with weekly multiplier 1 and growth 1.
    fn day_total(&self) -> f64 {
        self.day_hourly.iter().sum::<f64>() * HOUR_S
    }

    /// The first break point of `B` after `tod_s` within the day (at most `DAY_S`).
    fn next_break_in_day(&self, tod_s: f64) -> f64 {
        let i = self.day_breaks.partition_point(|&x| x <= tod_s);
        self.day_breaks.get(i).copied().unwrap_or(DAY_S)
    }

    /// Expected requests ∫ λ_y over `[a_s, b_s)` (seconds since the start of the year; the
    /// year's curve continues past its end with the same growth). At most [`MAX_WINDOW_S`] is
    /// integrated; a non-finite start gives 0.
    pub fn expected_requests(&self, year: u32, a_s: f64, b_s: f64) -> f64 {
        if !a_s.is_finite() {
            return 0.0;
        }
        let b_s = b_s.min(a_s + MAX_WINDOW_S);
        let g = self.growth.factor(year);
        let mut total = 0.0;
        let mut t = a_s;
        while t < b_s {
            let day = (t / DAY_S).floor();
            let day_start = day * DAY_S;
            let end = (day_start + DAY_S).min(b_s);
            let (ta, tb) = ((t - day_start).max(0.0), (end - day_start).min(DAY_S));
            // Whole days come from the precomputed hourly means; only partial days integrate.
            let day_requests = if ta == 0.0 && tb == DAY_S {
                self.day_total()
            } else {
                self.day_integral(ta, tb)
            };
            total += self.weekly.factor(day as i64) * day_requests;
            if end <= t {
                break;
            }
            t = end;
        }
        g * total
    }

    /// The design window of `year`: `window_s` centred on the daily peak of the busiest weekday
    /// of the first week (kept inside the year). Bursts are centred on the peak too, so for a
    /// one-hour window this is the busiest clock hour `peak_hour`, with a burst in its middle.
    pub fn design_window(&self, year: u32, window_s: f64) -> DesignWindow {
        let duration_s = clamp_window(window_s);
        let centre = self.weekly.peak_day() as f64 * DAY_S + self.shape.anchor_s();
        let start_s = if duration_s >= YEAR_S {
            0.0
        } else {
            (centre - duration_s / 2.0).clamp(0.0, YEAR_S - duration_s)
        };
        let mean_rps = if duration_s > 0.0 {
            self.expected_requests(year, start_s, start_s + duration_s) / duration_s
        } else {
            0.0
        };
        DesignWindow {
            year,
            start_s,
            duration_s,
            mean_rps,
        }
    }

    /// Constant-rate segments over `[start_s, start_s + duration_s)` of year `year`: 1 s steps
    /// (each at the exact mean of `D` over the step, by Simpson's rule), split at midnights and
    /// burst edges so `W` and `B` are exact. Lazy.
    pub fn segments(
        &self,
        year: u32,
        start_s: f64,
        duration_s: f64,
        burstiness: Burstiness,
    ) -> CurveSegments<'_> {
        let duration_s = clamp_window(duration_s);
        CurveSegments {
            curve: self,
            growth: self.growth.factor(year),
            iat_cv: burstiness.iat_cv(),
            start_s,
            t_s: start_s,
            end_s: start_s + duration_s,
        }
    }

    /// Arrivals over `[start_s, start_s + duration_s)` of year `year`, in ns since `start_s`.
    pub fn arrivals(
        &self,
        year: u32,
        start_s: f64,
        duration_s: f64,
        burstiness: Burstiness,
        seed: u64,
        replication: u64,
    ) -> NhppArrivals<CurveSegments<'_>> {
        NhppArrivals::new(
            self.segments(year, start_s, duration_s, burstiness),
            start_s,
            seed,
            replication,
        )
    }

    /// Mean rate of each of the 8,760 hours of `year` [req/s].
    pub fn hourly_rates(&self, year: u32) -> Vec<f64> {
        let g = self.growth.factor(year);
        (0..YEAR_HOURS)
            .map(|i| g * self.weekly.factor((i / 24) as i64) * self.day_hourly[i % 24])
            .collect()
    }

    /// The highest instantaneous rate of `year`, bursts included [req/s]. Bursts are centred on
    /// the daily peak, so this is `G(y)·P·b`.
    pub fn peak_rps(&self, year: u32) -> f64 {
        let b = self.bursts.map_or(1.0, |b| b.multiplier);
        self.growth.factor(year) * self.shape.peak_rps() * b
    }

    /// Expected requests in `year`.
    pub fn requests_per_year(&self, year: u32) -> f64 {
        let week_days: f64 = (0..YEAR_DAYS as i64).map(|d| self.weekly.factor(d)).sum();
        self.growth.factor(year) * self.day_total() * week_days
    }

    /// Mean rate over `year` [req/s].
    pub fn mean_rps(&self, year: u32) -> f64 {
        self.requests_per_year(year) / YEAR_S
    }

    /// One line for reports.
    pub fn description(&self) -> String {
        let mut s = match &self.shape {
            DailyShape::Constant { rps } => format!("constant {} req/s", super::fmt_rate(*rps)),
            DailyShape::Diurnal(d) => format!(
                "diurnal day: peak {} req/s at {:02}:30, mean {}, trough {} (shape exponent k = {:.3})",
                super::fmt_rate(d.peak_rps),
                d.peak_hour,
                super::fmt_rate(d.mean_rps()),
                super::fmt_rate(d.trough_rps),
                d.k
            ),
        };
        if !self.weekly.is_flat() {
            let days: Vec<String> = self
                .weekly
                .days
                .iter()
                .map(|d| {
                    format!("{:.3}", d)
                        .trim_end_matches('0')
                        .trim_end_matches('.')
                        .to_string()
                })
                .collect();
            let _ = write!(s, "; weekly Mon–Sun ×[{}]", days.join(", "));
        }
        if let Some(b) = self.bursts {
            let _ = write!(
                s,
                "; {} burst{} a day of {}× for {} s",
                b.per_day,
                if b.per_day == 1 { "" } else { "s" },
                b.multiplier,
                b.duration_s
            );
        }
        if self.growth.per_year != 0.0 {
            let _ = write!(s, "; growth {:.1} %/year", self.growth.per_year * 100.0);
        }
        s
    }

    /// Caveats for reports.
    pub fn notes(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.weekly.given_max != 1.0 {
            v.push(format!(
                "weekly multipliers were divided by their largest value ({}) so the busiest day is 1: peak and mean rates are those of the busiest day",
                self.weekly.given_max
            ));
        }
        if let Some(b) = self.bursts {
            v.push(format!(
                "bursts are placed the same way every day: the first centred on the daily peak, then every {:.2} h; the design window includes one",
                24.0 / b.per_day as f64
            ));
        }
        if !self.weekly.is_flat() {
            v.push("every simulated year starts on a Monday".into());
        }
        v
    }
}

/// Lazy constant-rate segments of a [`RateCurve`] over a window (see [`RateCurve::segments`]).
#[derive(Debug, Clone)]
pub struct CurveSegments<'a> {
    curve: &'a RateCurve,
    growth: f64,
    iat_cv: f64,
    start_s: f64,
    t_s: f64,
    end_s: f64,
}

impl Iterator for CurveSegments<'_> {
    type Item = Segment;

    fn next(&mut self) -> Option<Segment> {
        if self.t_s.partial_cmp(&self.end_s) != Some(Ordering::Less) {
            return None;
        }
        let t = self.t_s;
        let day = (t / DAY_S).floor();
        let day_start = day * DAY_S;
        let tod = t - day_start;
        // The next 1 s grid point (counted from the window start), break point or window end.
        let grid = self.start_s + ((t - self.start_s).floor() + 1.0);
        let brk = day_start + self.curve.next_break_in_day(tod);
        let mut end = grid.min(brk).min(self.end_s);
        if end.partial_cmp(&t) != Some(Ordering::Greater) {
            // Only reachable through rounding at a break point; step on so the walk always ends.
            end = (t + 1.0).min(self.end_s).max(next_up(t));
        }
        let (a, b) = (tod, (end - day_start).min(DAY_S));
        let mean_shape = if b > a {
            simpson3(|x| self.curve.shape.rate_at(x), a, b)
        } else {
            self.curve.shape.rate_at(a)
        };
        let rate = self.growth
            * self.curve.weekly.factor(day as i64)
            * self.curve.burst_factor(0.5 * (a + b))
            * mean_shape;
        self.t_s = end;
        Some(Segment {
            start_s: t,
            end_s: end,
            rate_rps: rate,
            iat_cv: self.iat_cv,
        })
    }
}

/// The mean of `f` over `[a, b]` by Simpson's rule with one panel (exact for cubics; on a 1 s step
/// of the daily shape the error is far below 1e-12 relative).
fn simpson3(f: impl Fn(f64) -> f64, a: f64, b: f64) -> f64 {
    (f(a) + 4.0 * f(0.5 * (a + b)) + f(b)) / 6.0
}

/// The next representable f64 above `x` (x finite).
fn next_up(x: f64) -> f64 {
    if x == 0.0 {
        f64::from_bits(1)
    } else if x > 0.0 {
        f64::from_bits(x.to_bits() + 1)
    } else {
        f64::from_bits(x.to_bits() - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn raised_cosine_mean_closed_form_matches_known_values() {
        assert!(close(raised_cosine_mean(1.0), 0.5, 1e-12));
        assert!(close(raised_cosine_mean(2.0), 3.0 / 8.0, 1e-12));
        assert!(close(
            raised_cosine_mean(0.5),
            2.0 / std::f64::consts::PI,
            1e-12
        ));
    }

    #[test]
    fn diurnal_hits_peak_and_mean_exactly() {
        for (peak, mean, trough) in [
            (2000.0, 800.0, Some(100.0)),
            (2000.0, 800.0, None),
            (10.0, 1.0, None),
            (1000.0, 600.0, Some(300.0)),
        ] {
            let d = Diurnal::new(peak, Some(mean), trough, 14.0).unwrap();
            assert!(close(d.mean_rps(), mean, 1e-12), "{d:?}");
            let curve = RateCurve::new(DailyShape::Diurnal(d), Weekly::FLAT, None, Growth::NONE);
            // The peak instant is 14:30; the numeric daily mean agrees with the closed form.
            assert!(close(curve.rate_at(1, 14.5 * HOUR_S), peak, 1e-12));
            assert!(
                close(curve.rate_at(1, 2.5 * HOUR_S), trough.unwrap_or(0.0), 1e-9)
                    || trough.is_none() && curve.rate_at(1, 2.5 * HOUR_S) < 1e-6 * peak
            );
            let day: f64 = curve.day_hourly.iter().sum::<f64>() / 24.0;
            assert!(close(day, mean, 1e-9), "{day} vs {mean}");
            // The busiest clock hour is peak_hour.
            let busiest = (0..24)
                .max_by(|&a, &b| curve.day_hourly[a].total_cmp(&curve.day_hourly[b]))
                .unwrap();
            assert_eq!(busiest, 14);
        }
    }

    #[test]
    fn diurnal_from_peak_and_trough_is_a_plain_raised_cosine() {
        let d = Diurnal::new(100.0, None, Some(20.0), 9.0).unwrap();
        assert_eq!(d.exponent(), 1.0);
        assert!(close(d.mean_rps(), 60.0, 1e-12));
    }

    #[test]
    fn diurnal_rejects_contradictions() {
        assert!(matches!(
            Diurnal::new(100.0, Some(120.0), None, 3.0),
            Err(CurveError::MeanNotBelowPeak { .. })
        ));
        assert!(matches!(
            Diurnal::new(100.0, Some(50.0), Some(60.0), 3.0),
            Err(CurveError::TroughNotBelowMean { .. })
        ));
        assert!(matches!(
            Diurnal::new(100.0, None, None, 3.0),
            Err(CurveError::Underdetermined)
        ));
        assert!(matches!(
            Diurnal::new(100.0, Some(50.0), None, 24.0),
            Err(CurveError::PeakHour(_))
        ));
        // Mean 90 % of the peak with a trough of 0 needs k < K_MIN.
        match Diurnal::new(100.0, Some(90.0), None, 3.0) {
            Err(CurveError::MeanOutOfReach { min, max, .. }) => {
                assert!(close(max, 100.0 * 2.0 / std::f64::consts::PI, 1e-9));
                assert!(min > 0.0 && min < 2.0);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn weekly_is_normalised_to_its_busiest_day() {
        let w = Weekly::new(&[1.2, 1.2, 1.2, 1.2, 1.2, 0.6, 0.6]).unwrap();
        assert_eq!(w.days()[0], 1.0);
        assert_eq!(w.days()[5], 0.5);
        assert_eq!(w.given_max(), 1.2);
        assert_eq!(w.factor(7), 1.0);
        assert_eq!(w.factor(-1), 0.5);
        assert!(matches!(
            Weekly::new(&[1.0; 6]),
            Err(CurveError::WeeklyLength(6))
        ));
        assert!(matches!(
            Weekly::new(&[0.0; 7]),
            Err(CurveError::WeeklyAllZero)
        ));
    }

    fn example_curve() -> RateCurve {
        let d = Diurnal::new(2000.0, Some(800.0), Some(100.0), 14.0).unwrap();
        RateCurve::new(
            DailyShape::Diurnal(d),
            Weekly::new(&[1.0, 1.0, 1.0, 1.0, 1.0, 0.7, 0.6]).unwrap(),
            Some(Bursts::new(3.0, 120.0, 4.0).unwrap()),
            Growth { per_year: 0.3 },
        )
    }

    #[test]
    fn hourly_rates_sum_to_requests_per_year() {
        let c = example_curve();
        for year in [1, 3] {
            let hourly = c.hourly_rates(year);
            assert_eq!(hourly.len(), 8760);
            let total: f64 = hourly.iter().sum::<f64>() * HOUR_S;
            assert!(close(total, c.requests_per_year(year), 1e-12));
            assert!(close(
                c.expected_requests(year, 0.0, YEAR_S),
                c.requests_per_year(year),
                1e-9
            ));
        }
        // Growth is compound.
        assert!(close(
            c.requests_per_year(3),
            1.69 * c.requests_per_year(1),
            1e-12
        ));
    }

    #[test]
    fn yearly_totals_follow_from_the_parameters() {
        // Without bursts: requests/year = mean · 86,400 · Σ weekly over 365 days.
        let d = Diurnal::new(2000.0, Some(800.0), Some(100.0), 14.0).unwrap();
        let w = Weekly::new(&[1.0, 1.0, 1.0, 1.0, 1.0, 0.7, 0.6]).unwrap();
        let c = RateCurve::new(DailyShape::Diurnal(d), w, None, Growth::NONE);
        let week_days = 52.0 * 6.3 + 1.0;
        assert!(close(
            c.requests_per_year(1),
            800.0 * DAY_S * week_days,
            1e-9
        ));
        // Each burst adds (b − 1)·∫ D over the burst; at the peak D ≈ P, so 4 bursts of 120 s at
        // 3× add a little under 4·2·120·2000 per weekday-1 day.
        let with = example_curve();
        let extra_per_day = (with.requests_per_year(1) - c.requests_per_year(1)) / week_days;
        assert!(extra_per_day < 4.0 * 2.0 * 120.0 * 2000.0);
        assert!(extra_per_day > 2.0 * 120.0 * 2000.0 * 0.99);
    }

    #[test]
    fn peak_includes_bursts_and_design_window_is_centred_on_it() {
        let c = example_curve();
        assert!(close(c.peak_rps(1), 6000.0, 1e-12));
        assert!(close(c.peak_rps(2), 7800.0, 1e-12));
        // The instantaneous rate reaches it at the peak instant of a Monday.
        assert!(close(c.rate_at(1, 14.5 * HOUR_S), 6000.0, 1e-12));
        let w = c.design_window(1, 3600.0);
        assert_eq!(w.start_s, 14.0 * HOUR_S);
        assert_eq!(w.duration_s, 3600.0);
        // The busiest clock hour of the year is that window.
        let hourly = c.hourly_rates(1);
        let max = hourly.iter().copied().fold(0.0, f64::max);
        assert!(close(w.mean_rps, max, 1e-9));
        assert!(close(w.mean_rps, hourly[14], 1e-9));
    }

    #[test]
    fn segments_tile_the_window_and_integrate_to_the_expected_count() {
        let c = example_curve();
        let w = c.design_window(2, 7200.0);
        let segs: Vec<Segment> = c
            .segments(2, w.start_s, w.duration_s, Burstiness::POISSON)
            .collect();
        assert_eq!(segs[0].start_s, w.start_s);
        assert_eq!(segs.last().unwrap().end_s, w.start_s + w.duration_s);
        assert!(segs.windows(2).all(|p| p[0].end_s == p[1].start_s));
        let lambda: f64 = segs
            .iter()
            .map(|s| s.rate_rps * (s.end_s - s.start_s))
            .sum();
        let expected = c.expected_requests(2, w.start_s, w.start_s + w.duration_s);
        assert!(close(lambda, expected, 1e-9), "{lambda} vs {expected}");
    }

    #[test]
    fn nonsense_bounds_end_instead_of_hanging() {
        let c = example_curve();
        assert_eq!(c.expected_requests(1, f64::NAN, 10.0), 0.0);
        let capped = c.expected_requests(1, 0.0, f64::INFINITY);
        assert!(capped.is_finite() && capped > 0.0);
        assert_eq!(
            c.segments(1, f64::NAN, 10.0, Burstiness::POISSON).count(),
            0
        );
        assert_eq!(c.segments(1, 0.0, f64::NAN, Burstiness::POISSON).count(), 0);
    }

    #[test]
    fn bursts_wrapping_midnight_are_split() {
        let b = Bursts::new(2.0, 600.0, 1.0).unwrap();
        let iv = b.intervals(0.0);
        assert_eq!(iv, vec![(0.0, 300.0), (DAY_S - 300.0, DAY_S)]);
        assert!(matches!(
            Bursts::new(2.0, 3600.0, 24.0),
            Err(CurveError::BurstsFillDay { .. })
        ));
        assert!(matches!(
            Bursts::new(0.5, 60.0, 1.0),
            Err(CurveError::BurstMultiplier(_))
        ));
        assert!(matches!(
            Bursts::new(2.0, 60.0, 1.5),
            Err(CurveError::BurstsPerDay(_))
        ));
    }
}
