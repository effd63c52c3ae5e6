//! Service-time sampling for [`ServiceDist`], prepared once per replication so the hot loop only
//! draws numbers (statrs-style: choose the sampler once, outside the loop).

use rand::RngExt;
use rand::rngs::Xoshiro256PlusPlus;
use rand_distr::{Distribution, Exp1, LogNormal};

use super::{BatchAttention, ServiceDist, Variability};

/// Nanoseconds per second.
pub(crate) const NS_PER_S: f64 = 1.0e9;

/// Round a non-negative number of nanoseconds to the nearest integer. `x + 0.5` then truncation
/// rather than `f64::round`, which is a libm call on baseline x86-64 and showed up at 4 % of the
/// benchmark's time. `as` saturates (NaN → 0), so nothing can wrap or panic.
#[inline(always)]
pub(crate) fn round_ns(x: f64) -> u64 {
    (x + 0.5) as u64
}

/// Seconds → integer nanoseconds, rounded to nearest.
#[inline]
pub(crate) fn to_ns(s: f64) -> u64 {
    round_ns(s * NS_PER_S)
}

/// A ready-to-draw service-time distribution, in nanoseconds.
#[derive(Debug, Clone)]
pub(crate) enum ServiceSampler {
    /// Exp(1) scaled by the mean \[ns\]; rand_distr's ziggurat sampler.
    Exponential { mean_ns: f64 },
    /// A constant \[ns\].
    Deterministic { ns: u64 },
    /// exp(N(μ, σ²)) \[ns\], with μ, σ chosen to give the requested mean and cv.
    LogNormal { dist: LogNormal<f64> },
    /// One of the samples \[ns\], uniformly.
    Empirical { ns: Vec<u64> },
}

impl ServiceSampler {
    /// Prepare a sampler. `d` has been validated.
    ///
    /// Log-normal parameters from the mean m and coefficient of variation v:
    /// σ² = ln(1 + v²), μ = ln(m) − σ²/2, so that E\[S\] = exp(μ + σ²/2) = m and
    /// sd/mean = sqrt(exp(σ²) − 1) = v (Johnson, Kotz & Balakrishnan, *Continuous Univariate
    /// Distributions* vol. 1, 2nd ed., 1994, ch. 14).
    pub fn new(d: &ServiceDist) -> Self {
        match d {
            ServiceDist::Exponential { mean_s } => ServiceSampler::Exponential {
                mean_ns: mean_s * NS_PER_S,
            },
            ServiceDist::Deterministic { s } => ServiceSampler::Deterministic { ns: to_ns(*s) },
            ServiceDist::LogNormal { mean_s, cv } => {
                let sigma2 = (1.0 + cv * cv).ln();
                let mu = (mean_s * NS_PER_S).ln() - sigma2 / 2.0;
                match LogNormal::new(mu, sigma2.sqrt()) {
                    Ok(dist) => ServiceSampler::LogNormal { dist },
                    // Unreachable for validated input (σ is finite and ≥ 0); fall back to the
                    // mean rather than panic.
                    Err(_) => ServiceSampler::Deterministic { ns: to_ns(*mean_s) },
                }
            }
            ServiceDist::Empirical { samples_s } => ServiceSampler::Empirical {
                ns: samples_s.iter().map(|&s| to_ns(s)).collect(),
            },
        }
    }

    /// Draw one service time \[ns\].
    #[inline]
    pub fn sample(&self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        match self {
            ServiceSampler::Exponential { mean_ns } => {
                let x: f64 = Exp1.sample(rng);
                round_ns(x * mean_ns)
            }
            ServiceSampler::Deterministic { ns } => *ns,
            ServiceSampler::LogNormal { dist } => round_ns(dist.sample(rng)),
            ServiceSampler::Empirical { ns } => ns[rng.random_range(0..ns.len())],
        }
    }
}

/// A ready-to-draw [`Variability`]: the mean-1 multiplier of one unit of work.
#[derive(Debug, Clone)]
pub(crate) enum Multiplier {
    /// Always 1, drawing nothing.
    One,
    /// exp(N(−σ²/2, σ²)), mean 1.
    LogNormal { dist: LogNormal<f64> },
    /// One of the factors (samples over their mean), uniformly.
    Empirical { factors: Vec<f64> },
    /// Work by request size (`Variability::BySize`), times a spread.
    BySize {
        work: Vec<f64>,
        spread: Box<Multiplier>,
        attention: Option<BatchAttention>,
    },
}

impl Multiplier {
    /// Prepare a multiplier. `v` has been validated; the log-normal parameters are those of
    /// [`ServiceSampler::new`] with mean 1.
    pub fn new(v: &Variability) -> Self {
        match v {
            Variability::None => Multiplier::One,
            Variability::LogNormal { cv } if *cv == 0.0 => Multiplier::One,
            Variability::LogNormal { cv } => {
                let sigma2 = (1.0 + cv * cv).ln();
                match LogNormal::new(-sigma2 / 2.0, sigma2.sqrt()) {
                    Ok(dist) => Multiplier::LogNormal { dist },
                    // Unreachable for validated input; the mean rather than a panic.
                    Err(_) => Multiplier::One,
                }
            }
            Variability::BySize {
                relative_work,
                spread,
                batch_attention,
            } => {
                if relative_work.is_empty() {
                    return Multiplier::new(spread);
                }
                Multiplier::BySize {
                    work: relative_work.clone(),
                    spread: Box::new(Multiplier::new(spread)),
                    attention: batch_attention.clone(),
                }
            }
            Variability::Empirical { relative } => {
                let mean = relative.iter().sum::<f64>() / relative.len().max(1) as f64;
                if relative.is_empty() || !(mean > 0.0 && mean.is_finite()) {
                    return Multiplier::One;
                }
                Multiplier::Empirical {
                    factors: relative.iter().map(|x| x / mean).collect(),
                }
            }
        }
    }

    /// Whether every draw is exactly 1 (and draws nothing).
    #[inline]
    pub fn is_one(&self) -> bool {
        matches!(self, Multiplier::One)
    }

    /// Draw one multiplier; 1.0 without touching `rng` when there is no variability. Work by
    /// size draws only its spread here: [`Multiplier::draw_for`] knows the request.
    #[inline]
    pub fn draw(&self, rng: &mut Xoshiro256PlusPlus) -> f64 {
        match self {
            Multiplier::One => 1.0,
            Multiplier::LogNormal { dist } => dist.sample(rng),
            Multiplier::Empirical { factors } => factors[rng.random_range(0..factors.len())],
            Multiplier::BySize { spread, .. } => spread.draw(rng),
        }
    }

    /// The size part of a request of `tokens` input tokens (1 unless work is by size).
    #[inline]
    pub fn size_of(&self, tokens: u32) -> f64 {
        match self {
            Multiplier::BySize { work, .. } => {
                work[(tokens.max(1) as usize - 1).min(work.len() - 1)]
            }
            _ => 1.0,
        }
    }

    /// The size part of a batch of requests of these input tokens: the mean of its items'
    /// sizes, plus the attention its longest item pads the others to when the runtime pads
    /// attention per batch, over the mean padding the plan's batch time already holds (1 unless
    /// work is by size).
    pub fn batch_size_of(&self, tokens: impl Iterator<Item = u32> + Clone) -> f64 {
        let Multiplier::BySize {
            work, attention, ..
        } = self
        else {
            return 1.0;
        };
        let at = |t: u32| (t.max(1) as usize - 1).min(work.len() - 1);
        // One pass for the items' own work, their count and the longest.
        let (own, count, longest) = tokens.clone().fold((0.0, 0usize, 0usize), |(w, c, m), t| {
            let i = at(t);
            (w + work[i], c + 1, m.max(i))
        });
        let n = count.max(1) as f64;
        let Some(a) = attention else {
            return own / n;
        };
        let keys = a.keys[longest.min(a.keys.len() - 1)];
        let pad: f64 = tokens
            .map(|t| {
                let i = at(t).min(a.keys.len() - 1);
                a.per_key[i] * keys.saturating_sub(a.keys[i]) as f64
            })
            .sum();
        (own + pad) / n / (1.0 + a.planned(count))
    }

    /// The multiplier of one request of `tokens` input tokens: its size times a draw.
    #[inline]
    pub fn draw_for(&self, tokens: u32, rng: &mut Xoshiro256PlusPlus) -> f64 {
        self.size_of(tokens) * self.draw(rng)
    }

    /// `ns` scaled by one draw \[ns\]; `ns` itself when there is no variability.
    #[inline]
    pub fn scale_ns(&self, ns: u64, rng: &mut Xoshiro256PlusPlus) -> u64 {
        if self.is_one() {
            ns
        } else {
            round_ns(ns as f64 * self.draw(rng))
        }
    }
}

/// Mean of a service distribution \[s\], for the offered-load check.
pub(crate) fn mean_s(d: &ServiceDist) -> f64 {
    match d {
        ServiceDist::Exponential { mean_s } => *mean_s,
        ServiceDist::Deterministic { s } => *s,
        ServiceDist::LogNormal { mean_s, .. } => *mean_s,
        ServiceDist::Empirical { samples_s } => {
            samples_s.iter().sum::<f64>() / samples_s.len().max(1) as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng;

    fn sample_mean_cv(d: &ServiceDist, n: usize) -> (f64, f64) {
        let s = ServiceSampler::new(d);
        let mut r = rng::stream(1, 0, rng::streams::SERVICE);
        let xs: Vec<f64> = (0..n).map(|_| s.sample(&mut r) as f64 / NS_PER_S).collect();
        let m = xs.iter().sum::<f64>() / n as f64;
        let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1) as f64;
        (m, v.sqrt() / m)
    }

    #[test]
    fn lognormal_has_the_requested_mean_and_cv() {
        let (m, cv) = sample_mean_cv(
            &ServiceDist::LogNormal {
                mean_s: 0.02,
                cv: 0.5,
            },
            200_000,
        );
        assert!((m / 0.02 - 1.0).abs() < 0.01, "mean {m}");
        assert!((cv / 0.5 - 1.0).abs() < 0.03, "cv {cv}");
    }

    #[test]
    fn exponential_has_cv_one() {
        let (m, cv) = sample_mean_cv(&ServiceDist::Exponential { mean_s: 0.01 }, 200_000);
        assert!((m / 0.01 - 1.0).abs() < 0.01, "mean {m}");
        assert!((cv - 1.0).abs() < 0.02, "cv {cv}");
    }

    #[test]
    fn multipliers_have_mean_one() {
        let mut r = rng::stream(1, 0, rng::streams::SERVICE);
        let m = Multiplier::new(&Variability::LogNormal { cv: 0.8 });
        let n = 400_000;
        let xs: Vec<f64> = (0..n).map(|_| m.draw(&mut r)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        assert!((mean - 1.0).abs() < 0.01, "mean {mean}");
        assert!((var.sqrt() / 0.8 - 1.0).abs() < 0.05, "cv {}", var.sqrt());
        let e = Multiplier::new(&Variability::Empirical {
            relative: vec![2.0, 6.0],
        });
        let mut seen = [0u32; 2];
        for _ in 0..1000 {
            let x = e.draw(&mut r);
            seen[usize::from(x > 1.0)] += 1;
            assert!(x == 0.5 || x == 1.5, "{x}");
        }
        assert!(seen[0] > 400 && seen[1] > 400, "{seen:?}");
        // No variability draws nothing: the stream is where it was.
        let mut a = rng::stream(1, 0, rng::streams::SERVICE);
        let b = a.clone();
        assert_eq!(
            Multiplier::new(&Variability::lognormal(0.0)).draw(&mut a),
            1.0
        );
        assert_eq!(a, b);
    }

    #[test]
    fn empirical_draws_only_its_samples() {
        let d = ServiceDist::Empirical {
            samples_s: vec![0.001, 0.003],
        };
        let s = ServiceSampler::new(&d);
        let mut r = rng::stream(1, 0, rng::streams::SERVICE);
        let mut seen = [0u32; 2];
        for _ in 0..1000 {
            match s.sample(&mut r) {
                1_000_000 => seen[0] += 1,
                3_000_000 => seen[1] += 1,
                other => panic!("unexpected sample {other}"),
            }
        }
        assert!(seen[0] > 400 && seen[1] > 400, "{seen:?}");
        assert!((mean_s(&d) - 0.002).abs() < 1e-12);
    }
}
