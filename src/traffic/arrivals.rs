//! Arrival generation: a rate that is constant on each of a sequence of segments becomes a lazy,
//! sorted stream of [`Request`]s — a non-homogeneous Poisson process, or, with burstiness, a Gamma
//! renewal process run in the same rescaled time. Used by synthetic curves and rate series; traces
//! are replayed elsewhere ([`super::trace`]).
//!
//! # Method: time-rescaling
//!
//! With rate λ(t) [req/s] and integrated rate Λ(t) = ∫₀ᵗ λ(u) du \[requests\], the points
//! `t_i = Λ⁻¹(s_i)` form a non-homogeneous Poisson process of rate λ exactly when the `s_i` form a
//! unit-rate Poisson process (Çinlar 1975, *Introduction to Stochastic Processes*, §4.7; used as a
//! goodness-of-fit test by Brown, Barbieri, Ventura, Kass & Frank 2002, "The time-rescaling
//! theorem and its application to neural spike train data analysis", *Neural Computation* 14).
//! On a segment `[a, b)` of constant rate `r`, Λ is linear, so the inverse is exact:
//! `t = a + (s − Λ(a)) / r`. The generator keeps only "how much Λ is left until the next event"
//! and walks segment by segment, so it never sums large Λ values (no loss of precision over a
//! year) and never holds more than one segment.
//!
//! # Burstiness
//!
//! Real traffic is burstier than Poisson (the Azure conversation trace has IDC 16 at 60 s). With an
//! inter-arrival CV `c ≠ 1`, the gaps in Λ-time are Gamma(shape `k = 1/c²`, scale `θ = c²`): mean
//! 1, standard deviation `c`. Because the mean gap in Λ-time is still 1, the expected count over
//! any stretch is still Λ of that stretch: burstiness changes the clumping, not the rate curve's
//! mean. On a constant-rate stretch the gaps in real time have CV exactly `c`. The process starts
//! in equilibrium: the first gap is a uniform fraction of a length-biased gap,
//! `U · Gamma(k + 1, θ)` (Cox 1962, *Renewal Theory*, §5.2: the forward-recurrence time of a
//! stationary renewal process), so that even the first seconds of a window carry the right mean.
//! For `c = 1` the gaps are exponential and this is the Poisson process above.
//!
//! Times are reported as integer nanoseconds since the window's origin, rounded to nearest; the
//! rounding is monotone, so the stream stays sorted.

use rand::RngExt;
use rand::rngs::Xoshiro256PlusPlus;
use rand_distr::{Distribution, Exp1, Gamma};

use super::Request;
use crate::rng;

/// The smallest inter-arrival CV accepted (gaps almost regular).
pub const MIN_IAT_CV: f64 = 0.01;
/// The largest inter-arrival CV accepted. Beyond it Gamma(1/c², c²) returns 0.0 for most draws
/// (underflow), so "more bursty" would only mean "more requests at the same nanosecond". The
/// burstiest public trace we ship statistics for (Azure code, 2023) has CV 13.2.
pub const MAX_IAT_CV: f64 = 20.0;

/// A stretch `[start_s, end_s)` with a constant rate and inter-arrival CV.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    /// Start \[s\], on the generator's clock.
    pub start_s: f64,
    /// End \[s\], exclusive.
    pub end_s: f64,
    /// Rate on the segment [req/s], ≥ 0.
    pub rate_rps: f64,
    /// Inter-arrival CV for gaps drawn on this segment (1 = Poisson); clamped to
    /// [`MIN_IAT_CV`]..=[`MAX_IAT_CV`].
    pub iat_cv: f64,
}

/// How clumped arrivals are, for a given rate: the coefficient of variation of inter-arrival
/// times of the renewal process run in rescaled time (1 = Poisson).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Burstiness {
    iat_cv: f64,
}

/// An inter-arrival CV outside [`MIN_IAT_CV`]..=[`MAX_IAT_CV`] (or not finite).
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("inter-arrival CV {0} is outside {MIN_IAT_CV}..={MAX_IAT_CV}")]
pub struct BurstinessError(pub f64);

impl Burstiness {
    /// Poisson arrivals.
    pub const POISSON: Burstiness = Burstiness { iat_cv: 1.0 };

    /// Gamma-renewal arrivals with inter-arrival CV `iat_cv`.
    pub fn new(iat_cv: f64) -> Result<Self, BurstinessError> {
        if iat_cv.is_finite() && (MIN_IAT_CV..=MAX_IAT_CV).contains(&iat_cv) {
            Ok(Burstiness { iat_cv })
        } else {
            Err(BurstinessError(iat_cv))
        }
    }

    /// The inter-arrival CV (1 = Poisson).
    pub fn iat_cv(&self) -> f64 {
        self.iat_cv
    }

    /// For reports: "Poisson arrivals" or "Gamma-renewal arrivals, inter-arrival CV 2".
    pub fn description(&self) -> String {
        if self.iat_cv == 1.0 {
            "Poisson arrivals".into()
        } else {
            format!("Gamma-renewal arrivals, inter-arrival CV {}", self.iat_cv)
        }
    }
}

impl Default for Burstiness {
    fn default() -> Self {
        Burstiness::POISSON
    }
}

/// Draws gaps in Λ-time (mean 1) for one CV; rebuilt only when the CV changes.
#[derive(Debug, Clone)]
enum GapSampler {
    Exponential,
    Gamma {
        cv: f64,
        gap: Gamma<f64>,
        /// Length-biased gap, Gamma(k+1, θ), for the equilibrium first gap.
        length_biased: Gamma<f64>,
    },
}

impl GapSampler {
    fn for_cv(cv: f64) -> GapSampler {
        let cv = if cv.is_finite() {
            cv.clamp(MIN_IAT_CV, MAX_IAT_CV)
        } else {
            1.0
        };
        if cv == 1.0 {
            return GapSampler::Exponential;
        }
        let shape = 1.0 / (cv * cv);
        let scale = cv * cv;
        // Both parameters are finite and > 0 by the clamp above, so construction cannot fail;
        // the fallback keeps this total anyway.
        match (Gamma::new(shape, scale), Gamma::new(shape + 1.0, scale)) {
            (Ok(gap), Ok(length_biased)) => GapSampler::Gamma {
                cv,
                gap,
                length_biased,
            },
            _ => GapSampler::Exponential,
        }
    }

    fn matches(&self, cv: f64) -> bool {
        match self {
            GapSampler::Exponential => cv == 1.0 || !cv.is_finite(),
            GapSampler::Gamma { cv: c, .. } => *c == cv.clamp(MIN_IAT_CV, MAX_IAT_CV),
        }
    }

    fn draw(&self, rng: &mut Xoshiro256PlusPlus, first: bool) -> f64 {
        match self {
            GapSampler::Exponential => Exp1.sample(rng),
            GapSampler::Gamma {
                gap, length_biased, ..
            } => {
                if first {
                    let u: f64 = rng.random();
                    u * length_biased.sample(rng)
                } else {
                    gap.sample(rng)
                }
            }
        }
    }
}

/// Arrivals over a sequence of constant-rate [`Segment`]s (see the module documentation).
///
/// Segments must come in time order; a hole between two segments counts as rate 0. The iterator
/// ends when the segments do, so it ends for any finite segment source.
#[derive(Debug)]
pub struct NhppArrivals<S> {
    segments: S,
    current: Option<Segment>,
    /// Current time on the generator's clock \[s\].
    pos_s: f64,
    /// Arrival times are reported relative to this \[s\].
    origin_s: f64,
    /// Λ still to cover before the next event; `None` when a new gap must be drawn.
    pending: Option<f64>,
    first: bool,
    sampler: GapSampler,
    rng: Xoshiro256PlusPlus,
}

impl<S: Iterator<Item = Segment>> NhppArrivals<S> {
    /// Arrivals over `segments`, reported in ns since `origin_s`, with random draws from
    /// `rng::stream(seed, replication, rng::streams::ARRIVALS)`.
    pub fn new(segments: S, origin_s: f64, seed: u64, replication: u64) -> Self {
        NhppArrivals {
            segments,
            current: None,
            pos_s: origin_s,
            origin_s,
            pending: None,
            first: true,
            sampler: GapSampler::Exponential,
            rng: rng::stream(seed, replication, rng::streams::ARRIVALS),
        }
    }

    fn draw_gap(&mut self, cv: f64) -> f64 {
        if !self.sampler.matches(cv) {
            self.sampler = GapSampler::for_cv(cv);
        }
        let gap = self.sampler.draw(&mut self.rng, self.first);
        self.first = false;
        gap
    }
}

impl<S: Iterator<Item = Segment>> Iterator for NhppArrivals<S> {
    type Item = Request;

    fn next(&mut self) -> Option<Request> {
        loop {
            let seg = match self.current {
                Some(s) => s,
                None => {
                    let s = self.segments.next()?;
                    self.pos_s = self.pos_s.max(s.start_s);
                    self.current = Some(s);
                    s
                }
            };
            let need = match self.pending {
                Some(n) => n,
                None => self.draw_gap(seg.iat_cv),
            };
            let rate = if seg.rate_rps.is_finite() && seg.rate_rps > 0.0 {
                seg.rate_rps
            } else {
                0.0
            };
            let room_s = (seg.end_s - self.pos_s).max(0.0);
            let capacity = rate * room_s;
            if rate > 0.0 && need < capacity {
                // The event falls inside this segment: invert the linear Λ.
                self.pos_s = (self.pos_s + need / rate).min(seg.end_s);
                self.pending = None;
                let t = (self.pos_s - self.origin_s).max(0.0);
                return Some(Request {
                    arrival_ns: (t * 1e9).round() as u64,
                    input_tokens: 0,
                    output_tokens: 0,
                    prefix: 0,
                });
            }
            self.pending = Some(need - capacity);
            self.pos_s = self.pos_s.max(seg.end_s);
            self.current = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn constant(rate: f64, len_s: f64, cv: f64) -> impl Iterator<Item = Segment> {
        // Many 1 s segments, as the curves produce them, so crossing segments is exercised.
        (0..len_s as u64).map(move |i| Segment {
            start_s: i as f64,
            end_s: i as f64 + 1.0,
            rate_rps: rate,
            iat_cv: cv,
        })
    }

    #[test]
    fn same_seed_same_arrivals_other_seed_other_arrivals() {
        let a: Vec<_> = NhppArrivals::new(constant(50.0, 100.0, 1.0), 0.0, 7, 0).collect();
        let b: Vec<_> = NhppArrivals::new(constant(50.0, 100.0, 1.0), 0.0, 7, 0).collect();
        let c: Vec<_> = NhppArrivals::new(constant(50.0, 100.0, 1.0), 0.0, 7, 1).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn arrivals_are_sorted_and_inside_the_window() {
        let v: Vec<_> = NhppArrivals::new(constant(200.0, 30.0, 3.0), 0.0, 1, 0).collect();
        assert!(v.windows(2).all(|w| w[0].arrival_ns <= w[1].arrival_ns));
        assert!(v.iter().all(|r| r.arrival_ns <= 30_000_000_000));
    }

    #[test]
    fn zero_rate_and_holes_give_no_arrivals_there() {
        let segs = vec![
            Segment {
                start_s: 0.0,
                end_s: 10.0,
                rate_rps: 100.0,
                iat_cv: 1.0,
            },
            Segment {
                start_s: 10.0,
                end_s: 20.0,
                rate_rps: 0.0,
                iat_cv: 1.0,
            },
            // A hole from 20 to 30 s counts as rate 0.
            Segment {
                start_s: 30.0,
                end_s: 40.0,
                rate_rps: 100.0,
                iat_cv: 1.0,
            },
        ];
        let v: Vec<_> = NhppArrivals::new(segs.into_iter(), 0.0, 3, 0).collect();
        assert!(v.len() > 1500, "{}", v.len());
        assert!(
            v.iter()
                .all(|r| r.arrival_ns < 10_000_000_000 || r.arrival_ns >= 30_000_000_000)
        );
    }

    #[test]
    fn an_all_zero_or_empty_source_ends_at_once() {
        let segs = vec![Segment {
            start_s: 0.0,
            end_s: 1e9,
            rate_rps: 0.0,
            iat_cv: 1.0,
        }];
        assert_eq!(NhppArrivals::new(segs.into_iter(), 0.0, 3, 0).count(), 0);
        assert_eq!(NhppArrivals::new(std::iter::empty(), 0.0, 3, 0).count(), 0);
        // Nonsense segments (NaN rate, CV) are treated as rate 0 and Poisson, never a panic.
        let segs = vec![Segment {
            start_s: 0.0,
            end_s: 10.0,
            rate_rps: f64::NAN,
            iat_cv: f64::NAN,
        }];
        assert_eq!(NhppArrivals::new(segs.into_iter(), 0.0, 3, 0).count(), 0);
    }

    #[test]
    fn times_are_relative_to_the_origin() {
        let segs = vec![Segment {
            start_s: 1000.0,
            end_s: 1010.0,
            rate_rps: 10.0,
            iat_cv: 1.0,
        }];
        let v: Vec<_> = NhppArrivals::new(segs.into_iter(), 1000.0, 3, 0).collect();
        assert!(!v.is_empty());
        assert!(v.iter().all(|r| r.arrival_ns <= 10_000_000_000));
    }

    #[test]
    fn burstiness_accepts_its_range_only() {
        assert!(Burstiness::new(1.0).is_ok());
        assert!(Burstiness::new(MAX_IAT_CV).is_ok());
        assert!(Burstiness::new(0.0).is_err());
        assert!(Burstiness::new(f64::NAN).is_err());
        assert!(Burstiness::new(21.0).is_err());
    }
}
