//! How uncertain an input is: the distributions a scenario's `[uncertainty]` table may give an
//! input, the ranges declared with the inputs themselves, and the general rule for every input
//! whose basis is "estimate". An early stage (beside [`crate::cost::inputs`], which declares its
//! ranges with these types): scenario validation builds [`Dist`]s, and the analysis in
//! [`crate::uncertainty`] samples them.
//!
//! Every distribution is sampled through its inverse CDF, `x = F⁻¹(u)` for `u` in (0, 1), so a
//! Latin hypercube (one stratum of `u` per sample) works for all of them alike, and the tornado
//! and the flip-point search take their ends from the same function: the support of a bounded
//! distribution, P10/P90 of an unbounded one (tornado) or P1/P99 (flip search).
//!
//! ```text
//! uniform     F⁻¹(u) = a + u (b − a)
//! triangular  F⁻¹(u) = a + √(u (b − a)(m − a))            for u < (m − a)/(b − a)
//!                      b − √((1 − u)(b − a)(b − m))       otherwise
//! normal      F⁻¹(u) = μ + σ Φ⁻¹(u)
//! lognormal   F⁻¹(u) = exp(μ_ln + σ_ln Φ⁻¹(u)),  σ_ln² = ln(1 + sd²/mean²),  μ_ln = ln mean − σ_ln²/2
//! PERT        F⁻¹(u) = a + (b − a) · B⁻¹(u; α, β),  α = 1 + 4 (m − a)/(b − a),  β = 1 + 4 (b − m)/(b − a)
//! ```
//!
//! (triangular and PERT: Vose, *Risk Analysis*, 3rd ed., 2008, §9.1; lognormal from its mean and
//! standard deviation: Johnson, Kotz & Balakrishnan, *Continuous Univariate Distributions* 1,
//! 1994, ch. 14.)

use serde::Serialize;
use statrs::distribution::{Beta, ContinuousCDF, Normal};

use crate::hardware::UnitKind;
use crate::hardware::numbers::Valid;

/// A default uncertainty declared with an input, in the unit the input is written in: a
/// triangular distribution from `low` to `high` with its mode at the input's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeclaredRange {
    pub low: f64,
    pub high: f64,
    /// Where the range comes from.
    pub why: &'static str,
}

/// The general rule for an estimate without a declared range: triangular from
/// [`ESTIMATE_LOW`] × value to [`ESTIMATE_HIGH`] × value, mode at the value.
///
/// The factors are the outer bounds of an AACE International Class 4 estimate ("study or
/// feasibility", 1–15 % of the definition known): −15 % to −30 % low, +20 % to +50 % high. A
/// figure nobody measured for this fleet is at best such an estimate; the outer bounds are taken
/// because the figures here are not even estimated for the scenario at hand.
pub const ESTIMATE_LOW: f64 = 0.7;
/// See [`ESTIMATE_LOW`].
pub const ESTIMATE_HIGH: f64 = 1.5;
/// Where [`ESTIMATE_LOW`] and [`ESTIMATE_HIGH`] come from.
pub const ESTIMATE_RULE: &str = "estimate: triangular −30 %/+50 % around the value, the outer bounds of an AACE International Class 4 estimate (Recommended Practice 18R-97, expected accuracy −15 to −30 % low, +20 to +50 % high; https://studylib.net/doc/25469138/aace18r-97, rev. 2011-11-29)";

/// The spread of a constant the accuracy suite fitted (basis "fit"), pooled over every held-out
/// throughput row: what an input outside any profile takes, and the figure `tco-sim accuracy`
/// prints first.
///
/// A fitted constant reproduces its own rows exactly, so their error says nothing of how sure
/// it is; the held-out rows do. This is the RMS of ln(published / predicted) over all the
/// suite's held-out throughput rows (Offline, Server, tokens/s Offline, Server and at a
/// concurrency): how far the planner, with every fitted constant at its value, missed the
/// throughputs it was not tuned on. A profile's constants take the figure of the rows most like
/// the scenario ([`fit_log_sd`]). `tco-sim accuracy` prints the figures it measures beside
/// these, and `tests/accuracy.rs` fails when they part.
pub const FIT_LOG_SD: f64 = 0.2092;
/// The fewest held-out throughput rows a cell (a kind of hardware and a class of model) needs
/// for a σ of its own; below it the class's pooled figure applies.
pub const FIT_MIN_ROWS_PER_KIND: usize = 8;
/// The σ over every held-out classic (non-generative) throughput row, Offline and Server.
pub const FIT_LOG_SD_CLASSIC: f64 = 0.1667;
/// The σ over every held-out generative throughput row (LLM tokens/s).
pub const FIT_LOG_SD_GENERATIVE: f64 = 0.2146;
/// The σ of GPU profiles' fitted constants for a classic model: the RMS over the suite's
/// held-out GPU classic throughput rows.
pub const FIT_LOG_SD_GPU_CLASSIC: f64 = 0.1325;
/// The σ of GPU profiles' fitted constants for a generative model, over the held-out GPU LLM
/// throughput rows.
pub const FIT_LOG_SD_GPU_GENERATIVE: f64 = 0.2146;
/// The σ of accelerator (ASIC) profiles' fitted constants for a classic model, over their
/// held-out classic throughput rows.
pub const FIT_LOG_SD_ACCELERATOR_CLASSIC: f64 = 0.2622;
/// Where the fit rule's figures come from, as the reports say it.
pub const FIT_RULE: &str = "fit: lognormal with its median at the fitted value and σ in ln terms the RMS of ln(published / predicted) over the accuracy suite's held-out throughput rows of the same kind of hardware and the same class of model (data/accuracy.toml, `tco-sim accuracy`) — GPU classic σ = 0.1325 (84 rows), GPU generative σ = 0.2146 (732 rows), accelerator classic σ = 0.2622 (21 rows) — or over that class on every kind, for a cell with fewer than 8 rows (classic σ = 0.1667 over 105; CPU classic, accelerator and CPU generative: no throughput row, generative σ = 0.2146 over 732): how far the planner with its fitted constants missed measurements it was not tuned on";

/// The fit rule's σ for a constant of a profile of kind `kind` planning a generative model or
/// not: the cell's own where it has enough held-out throughput rows, else the class's
/// ([`class_log_sd`]).
pub fn fit_log_sd(kind: UnitKind, generative: bool) -> f64 {
    match (kind, generative) {
        (UnitKind::Gpu, false) => FIT_LOG_SD_GPU_CLASSIC,
        (UnitKind::Gpu, true) => FIT_LOG_SD_GPU_GENERATIVE,
        (UnitKind::Accelerator, false) => FIT_LOG_SD_ACCELERATOR_CLASSIC,
        (UnitKind::Cpu, _) | (UnitKind::Accelerator, true) => class_log_sd(generative),
    }
}

/// The fit rule's σ over every held-out throughput row of a class of model, on any kind of
/// hardware: [`FIT_LOG_SD_GENERATIVE`] or [`FIT_LOG_SD_CLASSIC`].
pub fn class_log_sd(generative: bool) -> f64 {
    if generative {
        FIT_LOG_SD_GENERATIVE
    } else {
        FIT_LOG_SD_CLASSIC
    }
}

/// A distribution of one input's value, in the unit the input is written in.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "dist", rename_all = "kebab-case")]
pub enum Dist {
    Uniform {
        low: f64,
        high: f64,
    },
    Triangular {
        low: f64,
        mode: f64,
        high: f64,
    },
    Normal {
        mean: f64,
        sd: f64,
    },
    /// The value's own mean and standard deviation (not those of its logarithm).
    #[serde(rename = "lognormal")]
    LogNormal {
        mean: f64,
        sd: f64,
    },
    Pert {
        low: f64,
        mode: f64,
        high: f64,
    },
}

/// Why a distribution's parameters are impossible, and what is valid.
#[derive(Debug, Clone, PartialEq)]
pub struct BadDist {
    pub message: String,
    pub help: String,
}

impl Dist {
    /// Check the parameters: finite, `low ≤ mode ≤ high`, `sd ≥ 0`, a lognormal's mean > 0.
    pub fn check(&self) -> Result<(), BadDist> {
        let bad = |m: String, h: &str| {
            Err(BadDist {
                message: m,
                help: h.to_string(),
            })
        };
        let params = self.params();
        if let Some((k, v)) = params.iter().find(|(_, v)| !v.is_finite()) {
            return bad(
                format!("{k} = {v} is not a finite number"),
                "give finite numbers",
            );
        }
        match *self {
            Dist::Uniform { low, high } if low > high => bad(
                format!("low = {low} is above high = {high}"),
                "valid: low ≤ high",
            ),
            Dist::Triangular { low, mode, high } | Dist::Pert { low, mode, high }
                if !(low <= mode && mode <= high) =>
            {
                bad(
                    format!("low = {low}, mode = {mode}, high = {high} are not in order"),
                    "valid: low ≤ mode ≤ high",
                )
            }
            Dist::Normal { sd, .. } | Dist::LogNormal { sd, .. } if sd < 0.0 => bad(
                format!("sd = {sd} is negative"),
                "valid: a standard deviation ≥ 0",
            ),
            Dist::LogNormal { mean, .. } if mean <= 0.0 => bad(
                format!("mean = {mean} is not positive"),
                "valid: a lognormal's mean > 0 (a lognormal value is always positive)",
            ),
            _ => Ok(()),
        }
    }

    /// Its parameters by name, in the order they are written.
    pub fn params(&self) -> Vec<(&'static str, f64)> {
        match *self {
            Dist::Uniform { low, high } => vec![("low", low), ("high", high)],
            Dist::Triangular { low, mode, high } | Dist::Pert { low, mode, high } => {
                vec![("low", low), ("mode", mode), ("high", high)]
            }
            Dist::Normal { mean, sd } | Dist::LogNormal { mean, sd } => {
                vec![("mean", mean), ("sd", sd)]
            }
        }
    }

    /// "triangular 0.3–0.5–0.7", "normal 0.4 ± 0.15": for tables.
    pub fn label(&self) -> String {
        let g = |x: f64| crate::format::plain(x);
        match *self {
            Dist::Uniform { low, high } => format!("uniform {}–{}", g(low), g(high)),
            Dist::Triangular { low, mode, high } => {
                format!("triangular {}–{}–{}", g(low), g(mode), g(high))
            }
            Dist::Pert { low, mode, high } => format!("PERT {}–{}–{}", g(low), g(mode), g(high)),
            Dist::Normal { mean, sd } => format!("normal {} ± {}", g(mean), g(sd)),
            Dist::LogNormal { mean, sd } => format!("lognormal {} ± {}", g(mean), g(sd)),
        }
    }

    /// Whether it has a lowest and a highest value.
    pub fn is_bounded(&self) -> bool {
        !matches!(self, Dist::Normal { .. } | Dist::LogNormal { .. })
    }

    /// The value at cumulative probability `u` (clamped into \[0, 1\]; an unbounded
    /// distribution is taken at 1e-9 and 1 − 1e-9 instead of its infinite ends).
    pub fn quantile(&self, u: f64) -> f64 {
        let u = u.clamp(0.0, 1.0);
        let open = u.clamp(1e-9, 1.0 - 1e-9);
        match *self {
            Dist::Uniform { low, high } => low + u * (high - low),
            Dist::Triangular { low, mode, high } => {
                let w = high - low;
                if w <= 0.0 {
                    return low;
                }
                if u < (mode - low) / w {
                    low + (u * w * (mode - low)).sqrt()
                } else {
                    high - ((1.0 - u) * w * (high - mode)).sqrt()
                }
            }
            Dist::Normal { mean, sd } => {
                if sd <= 0.0 {
                    return mean;
                }
                mean + sd * std_normal_inverse(open)
            }
            Dist::LogNormal { mean, sd } => {
                let s2 = (1.0 + (sd / mean).powi(2)).ln();
                let mu = mean.ln() - s2 / 2.0;
                (mu + s2.sqrt() * std_normal_inverse(open)).exp()
            }
            Dist::Pert { low, mode, high } => {
                let w = high - low;
                if w <= 0.0 {
                    return low;
                }
                let a = 1.0 + 4.0 * (mode - low) / w;
                let b = 1.0 + 4.0 * (high - mode) / w;
                match Beta::new(a, b) {
                    Ok(beta) => low + w * beta.inverse_cdf(u),
                    Err(_) => mode,
                }
            }
        }
    }

    /// The ends of the tornado: the support of a bounded distribution, P10 and P90 of an
    /// unbounded one.
    pub fn tornado_ends(&self) -> (f64, f64) {
        if self.is_bounded() {
            (self.quantile(0.0), self.quantile(1.0))
        } else {
            (self.quantile(0.1), self.quantile(0.9))
        }
    }

    /// Where the flip-point search looks: the support of a bounded distribution, P1 to P99 of
    /// an unbounded one.
    pub fn search_ends(&self) -> (f64, f64) {
        if self.is_bounded() {
            (self.quantile(0.0), self.quantile(1.0))
        } else {
            (self.quantile(0.01), self.quantile(0.99))
        }
    }

    /// The default of an estimate with value `value`: its declared range, or the general rule,
    /// clamped to what the input accepts. `None` when the range has no width (a value of 0
    /// under the general rule): nothing to vary.
    pub fn for_estimate(
        value: f64,
        declared: Option<DeclaredRange>,
        valid: &Valid,
    ) -> Option<Dist> {
        let (low, high) = match declared {
            Some(d) => (d.low.min(value), d.high.max(value)),
            None => {
                let (a, b) = (value * ESTIMATE_LOW, value * ESTIMATE_HIGH);
                (a.min(b), a.max(b))
            }
        };
        let (low, high) = (clamp(low, valid), clamp(high, valid));
        (high > low).then_some(Dist::Triangular {
            low,
            mode: value.clamp(low, high),
            high,
        })
    }

    /// The default of a constant the accuracy suite fitted on a profile of kind `kind`, with
    /// value `value`, for a scenario of a generative model or not: a lognormal with its median
    /// at the value and [`fit_log_sd`] in ln terms. `None` for a value ≤ 0, which no
    /// multiplicative spread moves.
    pub fn for_fit(value: f64, kind: UnitKind, generative: bool) -> Option<Dist> {
        Dist::lognormal_median(value, fit_log_sd(kind, generative))
    }

    /// A lognormal with its median at `value` and `log_sd` as the standard deviation of its
    /// logarithm (held as the value's own mean and standard deviation). `None` for a value ≤ 0
    /// or a spread that is not a positive finite number.
    pub fn lognormal_median(value: f64, log_sd: f64) -> Option<Dist> {
        if !(value > 0.0 && value.is_finite() && log_sd > 0.0 && log_sd.is_finite()) {
            return None;
        }
        let s2 = log_sd * log_sd;
        let mean = value * (0.5 * s2).exp();
        Some(Dist::LogNormal {
            mean,
            sd: mean * s2.exp_m1().sqrt(),
        })
    }
}

/// Φ⁻¹, the standard normal quantile.
fn std_normal_inverse(u: f64) -> f64 {
    Normal::standard().inverse_cdf(u)
}

/// A sampled value kept inside what the input accepts: at or above its lower bound (just above
/// a strict one), at or below its upper bound, rounded when it must be whole.
pub fn clamp(x: f64, valid: &Valid) -> f64 {
    let mut x = x;
    if let Some(min) = valid.min {
        let floor = if valid.strict_min {
            min + (min.abs() * 1e-9).max(1e-12)
        } else {
            min
        };
        x = x.max(floor);
    }
    if let Some(max) = valid.max {
        x = x.min(max);
    }
    if valid.whole {
        x = x.round();
        if let Some(min) = valid.min
            && (x < min || (valid.strict_min && x <= min))
        {
            x = (min + 1.0).floor();
        }
        if let Some(max) = valid.max
            && x > max
        {
            x = max.floor();
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_match_closed_forms() {
        let t = Dist::Triangular {
            low: 0.0,
            mode: 1.0,
            high: 4.0,
        };
        // F(1) = (1 − 0)² / (4 · 1) = 0.25.
        assert!((t.quantile(0.25) - 1.0).abs() < 1e-12);
        assert_eq!(t.quantile(0.0), 0.0);
        assert_eq!(t.quantile(1.0), 4.0);
        let n = Dist::Normal {
            mean: 10.0,
            sd: 2.0,
        };
        assert!((n.quantile(0.5) - 10.0).abs() < 1e-9);
        // Φ⁻¹(0.9) = 1.281552.
        assert!((n.quantile(0.9) - (10.0 + 2.0 * 1.281_551_565_5)).abs() < 1e-6);
        let l = Dist::LogNormal { mean: 2.0, sd: 0.0 };
        assert!((l.quantile(0.3) - 2.0).abs() < 1e-12);
        // A symmetric PERT has its median at the mode.
        let p = Dist::Pert {
            low: 1.0,
            mode: 2.0,
            high: 3.0,
        };
        assert!((p.quantile(0.5) - 2.0).abs() < 1e-6);
        let u = Dist::Uniform {
            low: 2.0,
            high: 4.0,
        };
        assert_eq!(u.quantile(0.25), 2.5);
        assert_eq!(u.tornado_ends(), (2.0, 4.0));
    }

    #[test]
    fn impossible_parameters_are_refused() {
        assert!(
            Dist::Uniform {
                low: 2.0,
                high: 1.0
            }
            .check()
            .is_err()
        );
        let e = Dist::Normal {
            mean: 1.0,
            sd: -1.0,
        }
        .check()
        .unwrap_err();
        assert_eq!(e.message, "sd = -1 is negative");
        assert!(
            Dist::Triangular {
                low: 0.0,
                mode: 3.0,
                high: 2.0
            }
            .check()
            .is_err()
        );
        assert!(Dist::LogNormal { mean: 0.0, sd: 1.0 }.check().is_err());
        assert!(
            Dist::Uniform {
                low: 1.0,
                high: 1.0
            }
            .check()
            .is_ok()
        );
    }

    #[test]
    fn fitted_constants_get_a_lognormal_with_their_value_as_median() {
        for (kind, generative, sd) in [
            (UnitKind::Gpu, false, FIT_LOG_SD_GPU_CLASSIC),
            (UnitKind::Gpu, true, FIT_LOG_SD_GPU_GENERATIVE),
            (UnitKind::Accelerator, false, FIT_LOG_SD_ACCELERATOR_CLASSIC),
            (UnitKind::Accelerator, true, FIT_LOG_SD_GENERATIVE),
            (UnitKind::Cpu, false, FIT_LOG_SD_CLASSIC),
            (UnitKind::Cpu, true, FIT_LOG_SD_GENERATIVE),
        ] {
            let d = Dist::for_fit(0.4872, kind, generative).unwrap();
            assert!(d.check().is_ok());
            // The median is the fitted value and ln(value) has the cell's spread: P10 and P90
            // sit at exp(∓1.2816 σ) times it.
            assert!((d.quantile(0.5) / 0.4872 - 1.0).abs() < 1e-12);
            let (p10, p90) = d.tornado_ends();
            let z = 1.281_551_565_545;
            assert!((p10 / 0.4872 - (-z * sd).exp()).abs() < 1e-9);
            assert!((p90 / 0.4872 - (z * sd).exp()).abs() < 1e-9);
            assert!(FIT_RULE.contains(&format!("σ = {sd}")), "{sd}");
        }
        assert_eq!(Dist::for_fit(0.0, UnitKind::Gpu, false), None);
        assert_eq!(Dist::for_fit(f64::NAN, UnitKind::Gpu, true), None);
        assert!(FIT_RULE.contains(&format!("fewer than {FIT_MIN_ROWS_PER_KIND}")));
    }

    #[test]
    fn estimates_get_the_rule_clamped_to_the_valid_range() {
        let frac = Valid::from_to(0.001, 1.0, "f");
        let d = Dist::for_estimate(0.8, None, &frac).unwrap();
        assert_eq!(
            d,
            Dist::Triangular {
                low: 0.8 * 0.7,
                mode: 0.8,
                high: 1.0
            }
        );
        assert_eq!(Dist::for_estimate(0.0, None, &frac), None);
        let declared = DeclaredRange {
            low: 0.06,
            high: 0.12,
            why: "",
        };
        assert_eq!(
            Dist::for_estimate(0.08, Some(declared), &frac),
            Some(Dist::Triangular {
                low: 0.06,
                mode: 0.08,
                high: 0.12
            })
        );
        let whole = Valid::from_to(1.0, 30.0, "w").whole();
        assert_eq!(clamp(4.4, &whole), 4.0);
        assert_eq!(clamp(0.2, &whole), 1.0);
        assert!(clamp(0.0, &Valid::above(0.0, "x")) > 0.0);
    }
}
