//! The `[traffic]` table of a scenario as written (`TrafficFile`), and its validation into a
//! [`TrafficSpec`]. The scenario module embeds [`TrafficFile`] under `[traffic]` and calls
//! [`validate`]; every error names the field (`traffic.mean_rps`), its line and column in the
//! scenario (or the line of a trace file), and what would be valid.
//!
//! Exactly one source of traffic is given: synthetic fields (`peak_rps` …), or a
//! `[traffic.trace]` table, or a `[traffic.rate_series]` table.
//!
//! ```toml
//! [traffic]
//! pattern = "diurnal"        # "constant" | "diurnal" (the default when a diurnal field is given)
//! peak_rps = 2000            # peak rate of the busiest day of year 1 [req/s]
//! mean_rps = 800             # diurnal: daily mean of the busiest day [req/s]
//! trough_rps = 100           # diurnal: daily minimum [req/s] (default 0 when mean_rps is given)
//! peak_hour = 14             # diurnal: clock hour holding the peak, 0-23 (default 14; peak at 14:30)
//! weekly = [1.0, 1.0, 1.0, 1.0, 1.0, 0.7, 0.6]   # Monday first; divided by the largest
//! growth_per_year = 0.3      # compound yearly growth, a fraction (0.3 = 30 %/year)
//! iat_cv = 1.0               # inter-arrival CV (1 = Poisson); synthetic and rate series
//!
//! [traffic.bursts]           # synthetic only; the first burst is centred on the daily peak
//! multiplier = 3.0           # rate multiplier during a burst, ≥ 1
//! duration_s = 120           # length of one burst [s]
//! per_day = 4                # bursts a day, evenly spaced
//! ```
//!
//! ```toml
//! [traffic.trace]            # a recorded request trace instead of synthetic fields
//! path = "../traces/azure-llm-2023/AzureLLMInferenceTrace_conv.csv"  # relative to the scenario
//! format = "azure"           # "azure" | "csv" | "mooncake"
//! speedup = 1.0              # replay this many times faster (timestamps divided by it)
//! loop = true                # repeat back to back to fill the design window (default true)
//! start_at_zero = true       # first request at t = 0 (default true)
//! # format = "csv" only:
//! timestamp_column = "arrival"   # header name of the arrival-time column
//! timestamp_unit = "ms"          # "s" | "ms" | "us" | "datetime" (YYYY-MM-DD HH:MM:SS[.f])
//! input_tokens_column = "prompt" # optional; 0 tokens without it
//! output_tokens_column = "completion"  # optional
//! ```
//!
//! ```toml
//! [traffic.rate_series]      # measured rates per window instead
//! path = "servegen/language/m-large"  # a file, or a folder whose *.csv files are summed
//! format = "servegen"        # "servegen" (no header) | "csv" (header: time_s,rate_rps[,iat_cv])
//! window_cv = false          # use each window's fitted inter-arrival CV (single files only)
//! ```

use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use super::arrivals::{Burstiness, MAX_IAT_CV, MIN_IAT_CV};
use super::curve::{Bursts, CurveError, DailyShape, Diurnal, RateCurve, Weekly};
use super::series::{RateSeries, SeriesBurstiness, SeriesFormat, SeriesTraffic};
use super::trace::{
    CsvColumns, ReplayOptions, TimeUnit, Trace, TraceFormat, TraceFormatKind, TraceTraffic,
};
use super::{Growth, MAX_RPS, MIN_RPS, TrafficKind, TrafficSpec};
use crate::input::{InputError, NumberCheck, SourceFile};

/// The largest accepted growth per year (300 %/year). Larger values are almost always a
/// percentage typed where a fraction was meant.
pub const MAX_GROWTH_PER_YEAR: f64 = 3.0;
/// The smallest accepted growth per year (traffic falling by 90 % a year).
pub const MIN_GROWTH_PER_YEAR: f64 = -0.9;
/// The clock hour of the daily peak when `peak_hour` is not given (early afternoon, as in most
/// interactive services; the hour only shifts the phase of the day).
pub const DEFAULT_PEAK_HOUR: f64 = 14.0;
/// The largest trace speedup.
pub const MAX_SPEEDUP: f64 = 1e6;

/// The `[traffic]` table as written. Field docs give units; the module docs give an example.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrafficFile {
    /// Shape of a synthetic day: `"constant"` or `"diurnal"`; default `"diurnal"` when
    /// `mean_rps`, `trough_rps` or `peak_hour` is given, else `"constant"`.
    pub pattern: Option<Spanned<PatternName>>,
    /// Synthetic: the peak rate of the busiest day of year 1 [req/s] (for a constant pattern,
    /// the rate).
    pub peak_rps: Option<Spanned<f64>>,
    /// Diurnal: the daily mean of the busiest day [req/s]; with `peak_rps` (and `trough_rps`) it
    /// fixes the shape exponent.
    pub mean_rps: Option<Spanned<f64>>,
    /// Diurnal: the daily minimum [req/s]; default 0 when `mean_rps` is given.
    pub trough_rps: Option<Spanned<f64>>,
    /// Diurnal: the clock hour (0–23) holding the peak; the peak itself is at its half hour.
    /// Default 14.
    pub peak_hour: Option<Spanned<f64>>,
    /// Synthetic: 7 day multipliers ≥ 0, Monday first, divided by the largest so the busiest
    /// day is 1.
    pub weekly: Option<Spanned<Vec<Spanned<f64>>>>,
    /// Synthetic: short bursts on top of the daily shape.
    pub bursts: Option<Spanned<BurstsFile>>,
    /// Compound growth per year as a fraction (0.3 = 30 %/year), −0.9 to 3. Rates of year `y`
    /// are multiplied by `(1+g)^(y−1)`; a trace is replayed that much faster instead.
    pub growth_per_year: Option<Spanned<f64>>,
    /// Inter-arrival coefficient of variation, 0.01–20 (1 = Poisson, default). Synthetic
    /// traffic and rate series; a trace keeps its recorded arrivals.
    pub iat_cv: Option<Spanned<f64>>,
    /// A recorded request trace instead of synthetic fields.
    pub trace: Option<Spanned<TraceFile>>,
    /// A measured rate series instead of synthetic fields.
    pub rate_series: Option<Spanned<RateSeriesFile>>,
}

/// Daily shape names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PatternName {
    Constant,
    Diurnal,
}

/// `[traffic.bursts]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BurstsFile {
    /// Rate multiplier during a burst, ≥ 1.
    pub multiplier: Spanned<f64>,
    /// Length of one burst \[s\], > 0.
    pub duration_s: Spanned<f64>,
    /// Bursts a day, a whole number ≥ 1; together shorter than a day.
    pub per_day: Spanned<f64>,
}

/// `[traffic.trace]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceFile {
    /// The trace file, relative to the scenario file's folder.
    pub path: Spanned<String>,
    pub format: Spanned<TraceFormatKind>,
    /// Replay this many times faster than recorded (timestamps divided by it), > 0; default 1.
    pub speedup: Option<Spanned<f64>>,
    /// Repeat the trace back to back to fill the design window; default true.
    #[serde(rename = "loop")]
    pub looped: Option<Spanned<bool>>,
    /// Shift the trace so its first request arrives at 0; default true.
    pub start_at_zero: Option<Spanned<bool>>,
    /// `format = "csv"`: header name of the arrival-time column.
    pub timestamp_column: Option<Spanned<String>>,
    /// `format = "csv"`: unit of the timestamps.
    pub timestamp_unit: Option<Spanned<TimeUnit>>,
    /// `format = "csv"`: header name of the prompt-token column (optional).
    pub input_tokens_column: Option<Spanned<String>>,
    /// `format = "csv"`: header name of the output-token column (optional).
    pub output_tokens_column: Option<Spanned<String>>,
}

/// `[traffic.rate_series]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateSeriesFile {
    /// A series file, or a folder whose `*.csv` files are summed window by window; relative to
    /// the scenario file's folder.
    pub path: Spanned<String>,
    pub format: Spanned<SeriesFormat>,
    /// Use each window's fitted inter-arrival CV (a single file with an `iat_cv` column);
    /// default false.
    pub window_cv: Option<Spanned<bool>>,
}

const SYNTHETIC_FIELDS: &str = "pattern, peak_rps, mean_rps, trough_rps, peak_hour, weekly, bursts";

/// Validate a `[traffic]` table read from `src`; relative paths resolve against `base_dir`
/// (the scenario file's folder).
pub fn validate(
    src: &SourceFile,
    f: &TrafficFile,
    base_dir: &Path,
) -> Result<TrafficSpec, InputError> {
    let growth = growth(src, f)?;
    let synthetic_field = first_synthetic_field(f);
    let kind = match (&f.trace, &f.rate_series, synthetic_field) {
        (None, None, None) => {
            return Err(src
                .error_at(None, "traffic", "no traffic is given")
                .with_help("give peak_rps (a synthetic curve), a [traffic.trace] table (a recorded trace) or a [traffic.rate_series] table (measured rates)"));
        }
        (Some(_), Some(s), _) => {
            return Err(src
                .error(
                    s,
                    "traffic.rate_series",
                    "a rate series cannot be combined with [traffic.trace]",
                )
                .with_help("give one source of traffic: a trace or a rate series"));
        }
        (Some(_), None, Some((name, span))) | (None, Some(_), Some((name, span))) => {
            let other = if f.trace.is_some() {
                "[traffic.trace] replays a recorded trace"
            } else {
                "[traffic.rate_series] gives measured rates"
            };
            return Err(src
                .error_at(
                    Some(span),
                    format!("traffic.{name}"),
                    format!("`{name}` describes synthetic traffic, but {other}"),
                )
                .with_help(format!(
                    "remove either the synthetic fields ({SYNTHETIC_FIELDS}) or the table"
                )));
        }
        (Some(t), None, None) => {
            if let Some(cv) = &f.iat_cv {
                return Err(src
                    .error(cv, "traffic.iat_cv", "a trace keeps its recorded arrivals: iat_cv does not apply")
                    .with_help("iat_cv sets the burstiness of synthetic traffic and rate series; remove it"));
            }
            TrafficKind::Trace(trace(src, t, base_dir, growth)?)
        }
        (None, Some(s), None) => TrafficKind::RateSeries(rate_series(src, f, s, base_dir, growth)?),
        (None, None, Some(_)) => synthetic(src, f, growth)?,
    };
    Ok(TrafficSpec::new(kind))
}

/// The highest rate of any year of the horizon must stay within [`MAX_RPS`]: each number can be
/// in range while their product is not (a 1,000× burst on 1,000 req/s, or 300 %/year compounded
/// over 20 years multiplies the rate by 10¹²). The error points at the number that compounds:
/// the growth when there is one, else the multiplier, speedup or data that sets the peak.
pub fn check_peak(
    src: &SourceFile,
    f: &TrafficFile,
    spec: &TrafficSpec,
    horizon_years: u32,
) -> Result<(), InputError> {
    let (year, peak) =
        (1..=horizon_years)
            .map(|y| (y, spec.peak_rps(y)))
            .fold((1, 0.0), |best, (y, p)| {
                // A NaN peak (an overflowed product) must win, so it is reported, not skipped.
                if p.is_nan() || p > best.1 {
                    (y, p)
                } else {
                    best
                }
            });
    if peak.is_finite() && peak <= MAX_RPS {
        return Ok(());
    }
    let growth = f
        .growth_per_year
        .as_ref()
        .filter(|g| *g.get_ref() > 0.0 && year > 1);
    let (span, field) = if let Some(g) = growth {
        (g.span(), "traffic.growth_per_year")
    } else if let Some(b) = &f.bursts {
        (b.get_ref().multiplier.span(), "traffic.bursts.multiplier")
    } else if let Some(p) = &f.peak_rps {
        (p.span(), "traffic.peak_rps")
    } else if let Some(t) = &f.trace {
        match &t.get_ref().speedup {
            Some(s) => (s.span(), "traffic.trace.speedup"),
            None => (t.get_ref().path.span(), "traffic.trace.path"),
        }
    } else if let Some(r) = &f.rate_series {
        (r.get_ref().path.span(), "traffic.rate_series.path")
    } else {
        (0..0, "traffic")
    };
    Err(src
        .error_at(
            Some(span),
            field,
            format!(
                "the traffic peaks at {} req/s in year {year}, above the largest rate planned for",
                super::fmt_rate(peak)
            ),
        )
        .with_help(format!(
            "valid: a peak of at most {} req/s in every year of the horizon (growth and bursts included); lower the rate, the growth or horizon_years",
            super::fmt_rate(MAX_RPS)
        )))
}

fn growth(src: &SourceFile, f: &TrafficFile) -> Result<Growth, InputError> {
    let Some(g) = &f.growth_per_year else {
        return Ok(Growth::NONE);
    };
    let x = *g.get_ref();
    if x.is_finite() && x > MAX_GROWTH_PER_YEAR && x <= 1000.0 {
        return Err(src
            .error(g, "traffic.growth_per_year", format!("= {x} is out of range: growth is a fraction per year"))
            .with_help(format!(
                "{x} looks like a percentage: {} means {x} % a year; valid: {MIN_GROWTH_PER_YEAR} to {MAX_GROWTH_PER_YEAR} (−90 % to +300 % a year)",
                x / 100.0
            )));
    }
    let per_year = NumberCheck {
        source: src,
        field: "traffic.growth_per_year",
    }
    .range(
        g,
        Some(MIN_GROWTH_PER_YEAR),
        false,
        Some(MAX_GROWTH_PER_YEAR),
        "a fraction per year from −0.9 to 3 (0.3 means 30 % a year)",
    )?;
    Ok(Growth { per_year })
}

/// The first synthetic field present, with its span.
fn first_synthetic_field(f: &TrafficFile) -> Option<(&'static str, std::ops::Range<usize>)> {
    let spans = [
        ("pattern", f.pattern.as_ref().map(Spanned::span)),
        ("peak_rps", f.peak_rps.as_ref().map(Spanned::span)),
        ("mean_rps", f.mean_rps.as_ref().map(Spanned::span)),
        ("trough_rps", f.trough_rps.as_ref().map(Spanned::span)),
        ("peak_hour", f.peak_hour.as_ref().map(Spanned::span)),
        ("weekly", f.weekly.as_ref().map(Spanned::span)),
        ("bursts", f.bursts.as_ref().map(Spanned::span)),
    ];
    spans
        .into_iter()
        .filter_map(|(n, s)| s.map(|s| (n, s)))
        .min_by_key(|(_, s)| s.start)
}

fn burstiness(src: &SourceFile, f: &TrafficFile) -> Result<Burstiness, InputError> {
    let Some(cv) = &f.iat_cv else {
        return Ok(Burstiness::POISSON);
    };
    let x = NumberCheck {
        source: src,
        field: "traffic.iat_cv",
    }
    .range(
        cv,
        Some(MIN_IAT_CV),
        false,
        Some(MAX_IAT_CV),
        "an inter-arrival CV from 0.01 to 20 (1 = Poisson, > 1 burstier)",
    )?;
    Burstiness::new(x).map_err(|e| src.error(cv, "traffic.iat_cv", e.to_string()))
}

fn synthetic(src: &SourceFile, f: &TrafficFile, growth: Growth) -> Result<TrafficKind, InputError> {
    let Some(peak) = &f.peak_rps else {
        let (name, span) = first_synthetic_field(f).unwrap_or(("traffic", 0..0));
        return Err(src
            .error_at(
                Some(span),
                format!("traffic.{name}"),
                "synthetic traffic needs peak_rps",
            )
            .with_help("peak_rps = the peak request rate of the busiest day of year 1 [req/s]"));
    };
    let check = |field| NumberCheck { source: src, field };
    let peak_rps = check("traffic.peak_rps").range(
        peak,
        Some(MIN_RPS),
        false,
        Some(MAX_RPS),
        "a request rate from 0.000001 to 10,000,000 [req/s]",
    )?;
    // Without `pattern`, any diurnal field makes the day diurnal: `peak_rps` + `mean_rps` is
    // the common way to describe a daily cycle.
    let diurnal_field = f.mean_rps.is_some() || f.trough_rps.is_some() || f.peak_hour.is_some();
    let pattern = match &f.pattern {
        Some(p) => *p.get_ref(),
        None if diurnal_field => PatternName::Diurnal,
        None => PatternName::Constant,
    };
    let shape = match pattern {
        PatternName::Constant => {
            for (name, v) in [
                ("mean_rps", &f.mean_rps),
                ("trough_rps", &f.trough_rps),
                ("peak_hour", &f.peak_hour),
            ] {
                if let Some(v) = v {
                    return Err(src
                        .error(v, format!("traffic.{name}"), format!("`{name}` only applies to pattern = \"diurnal\""))
                        .with_help("a constant pattern runs at peak_rps all day; set pattern = \"diurnal\" for a daily cycle"));
                }
            }
            DailyShape::constant(peak_rps)
                .map_err(|e| src.error(peak, "traffic.peak_rps", e.to_string()))?
        }
        PatternName::Diurnal => DailyShape::Diurnal(diurnal(src, f, peak, peak_rps)?),
    };
    let weekly = match &f.weekly {
        None => Weekly::FLAT,
        Some(w) => weekly(src, w)?,
    };
    let bursts = f.bursts.as_ref().map(|b| bursts(src, b)).transpose()?;
    Ok(TrafficKind::Synthetic {
        curve: RateCurve::new(shape, weekly, bursts, growth),
        burstiness: burstiness(src, f)?,
    })
}

fn diurnal(
    src: &SourceFile,
    f: &TrafficFile,
    peak: &Spanned<f64>,
    peak_rps: f64,
) -> Result<Diurnal, InputError> {
    let check = |field| NumberCheck { source: src, field };
    let hour = f
        .peak_hour
        .as_ref()
        .map_or(DEFAULT_PEAK_HOUR, |h| *h.get_ref());
    let mean = f
        .mean_rps
        .as_ref()
        .map(|m| {
            check("traffic.mean_rps").positive(m, "a request rate > 0 [req/s], below peak_rps")
        })
        .transpose()?;
    let trough = f
        .trough_rps
        .as_ref()
        .map(|t| {
            check("traffic.trough_rps")
                .non_negative(t, "a request rate ≥ 0 [req/s], below mean_rps")
        })
        .transpose()?;
    Diurnal::new(peak_rps, mean, trough, hour).map_err(|e| {
        let at = |v: &Option<Spanned<f64>>| v.as_ref().map(Spanned::span).unwrap_or(peak.span());
        let (span, field, help) = match &e {
            CurveError::MeanNotBelowPeak { .. } | CurveError::Mean(_) => (
                at(&f.mean_rps),
                "traffic.mean_rps",
                "the daily mean lies below the peak; valid: 0 < mean_rps < peak_rps".to_string(),
            ),
            CurveError::Trough(_) | CurveError::TroughNotBelowMean { .. } | CurveError::TroughNotBelowPeak { .. } => (
                at(&f.trough_rps),
                "traffic.trough_rps",
                "valid: 0 ≤ trough_rps < mean_rps < peak_rps".to_string(),
            ),
            CurveError::MeanOutOfReach { mean, peak, min, max, .. } => {
                let mut help = format!(
                    "valid for this peak and trough: mean_rps from {min:.4} to {max:.4} req/s"
                );
                let plain = 2.0 * mean - peak;
                if plain > 0.0 && mean > max {
                    help.push_str(&format!(
                        "; for a mean this close to the peak, raise trough_rps (trough_rps = {plain} gives a plain raised cosine) or use pattern = \"constant\""
                    ));
                }
                (at(&f.mean_rps), "traffic.mean_rps", help)
            }
            CurveError::PeakHour(_) => (
                f.peak_hour.as_ref().map(Spanned::span).unwrap_or(peak.span()),
                "traffic.peak_hour",
                "valid: a whole hour 0-23 (the peak is at its half hour)".to_string(),
            ),
            CurveError::Underdetermined => (
                f.pattern.as_ref().map(Spanned::span).unwrap_or(peak.span()),
                "traffic.pattern",
                "give mean_rps (the daily mean; the trough is then 0 unless trough_rps is given) or trough_rps (then the day is a plain raised cosine with mean (peak + trough)/2)".to_string(),
            ),
            _ => (peak.span(), "traffic.peak_rps", "valid: a request rate > 0 [req/s]".to_string()),
        };
        src.error_at(Some(span), field, e.to_string()).with_help(help)
    })
}

fn weekly(src: &SourceFile, w: &Spanned<Vec<Spanned<f64>>>) -> Result<Weekly, InputError> {
    let days = w.get_ref();
    if days.len() != 7 {
        return Err(src
            .error(
                w,
                "traffic.weekly",
                format!("{} day multipliers given, 7 needed", days.len()),
            )
            .with_help("valid: 7 multipliers > 0, Monday first, e.g. [1, 1, 1, 1, 1, 0.7, 0.6]"));
    }
    let mut values = Vec::with_capacity(7);
    for (i, d) in days.iter().enumerate() {
        let field = format!("traffic.weekly[{i}]");
        values.push(
            NumberCheck {
                source: src,
                field: &field,
            }
            .range(
                d,
                Some(0.0),
                true,
                Some(1e6),
                "a day multiplier > 0 (a day without traffic is out of scope), up to 1,000,000",
            )?,
        );
    }
    Weekly::new(&values).map_err(|e| {
        src.error(w, "traffic.weekly", e.to_string())
            .with_help("at least one day needs traffic; the multipliers are divided by the largest")
    })
}

fn bursts(src: &SourceFile, b: &Spanned<BurstsFile>) -> Result<Bursts, InputError> {
    let b = b.get_ref();
    let m = NumberCheck {
        source: src,
        field: "traffic.bursts.multiplier",
    }
    .range(
        &b.multiplier,
        Some(1.0),
        false,
        Some(1000.0),
        "a rate multiplier from 1 to 1000",
    )?;
    let d = NumberCheck {
        source: src,
        field: "traffic.bursts.duration_s",
    }
    .range(
        &b.duration_s,
        Some(0.0),
        true,
        Some(crate::units::DAY_S),
        "seconds > 0, shorter than a day",
    )?;
    let n = NumberCheck {
        source: src,
        field: "traffic.bursts.per_day",
    }
    .range(
        &b.per_day,
        Some(1.0),
        false,
        Some(crate::units::DAY_S),
        "a whole number of bursts a day ≥ 1",
    )?;
    Bursts::new(m, d, n).map_err(|e| match e {
        CurveError::BurstsPerDay(_) => src
            .error(&b.per_day, "traffic.bursts.per_day", e.to_string())
            .with_help("valid: a whole number of bursts a day ≥ 1"),
        CurveError::BurstsFillDay { per_day, .. } => src
            .error(&b.duration_s, "traffic.bursts.duration_s", e.to_string())
            .with_help(format!(
                "valid: duration_s below {} s for {per_day} bursts a day; for traffic that high all day, raise peak_rps instead",
                crate::units::DAY_SECONDS / u64::from(per_day.max(1))
            )),
        other => src.error(&b.multiplier, "traffic.bursts", other.to_string()),
    })
}

/// Resolve a data path against the scenario's folder; a missing path is an error at the field.
fn data_path(
    src: &SourceFile,
    path: &Spanned<String>,
    field: &str,
    base_dir: &Path,
) -> Result<std::path::PathBuf, InputError> {
    let p = base_dir.join(path.get_ref());
    if !p.exists() {
        return Err(src
            .error(
                path,
                field,
                format!("no such file or folder: {}", p.display()),
            )
            .with_help("paths are relative to the scenario file's folder"));
    }
    Ok(p)
}

fn trace(
    src: &SourceFile,
    t: &Spanned<TraceFile>,
    base_dir: &Path,
    growth: Growth,
) -> Result<TraceTraffic, InputError> {
    let t = t.get_ref();
    let csv_fields = [
        (
            "timestamp_column",
            t.timestamp_column.as_ref().map(Spanned::span),
        ),
        (
            "timestamp_unit",
            t.timestamp_unit.as_ref().map(Spanned::span),
        ),
        (
            "input_tokens_column",
            t.input_tokens_column.as_ref().map(Spanned::span),
        ),
        (
            "output_tokens_column",
            t.output_tokens_column.as_ref().map(Spanned::span),
        ),
    ];
    let format = match t.format.get_ref() {
        TraceFormatKind::Azure | TraceFormatKind::Mooncake => {
            if let Some((name, Some(span))) = csv_fields.iter().find(|(_, s)| s.is_some()) {
                return Err(src
                    .error_at(
                        Some(span.clone()),
                        format!("traffic.trace.{name}"),
                        format!("`{name}` applies to format = \"csv\" only"),
                    )
                    .with_help("the azure and mooncake formats have fixed columns; remove it"));
            }
            if *t.format.get_ref() == TraceFormatKind::Azure {
                TraceFormat::Azure
            } else {
                TraceFormat::Mooncake
            }
        }
        TraceFormatKind::Csv => {
            let (Some(col), Some(unit)) = (&t.timestamp_column, &t.timestamp_unit) else {
                return Err(src
                    .error(&t.format, "traffic.trace.format", "format = \"csv\" needs timestamp_column and timestamp_unit")
                    .with_help("timestamp_column = the header name of the arrival times; timestamp_unit = \"s\", \"ms\", \"us\" or \"datetime\""));
            };
            TraceFormat::Csv(CsvColumns {
                timestamp: col.get_ref().clone(),
                unit: *unit.get_ref(),
                input_tokens: t.input_tokens_column.as_ref().map(|c| c.get_ref().clone()),
                output_tokens: t.output_tokens_column.as_ref().map(|c| c.get_ref().clone()),
            })
        }
    };
    let speedup = match &t.speedup {
        Some(s) => NumberCheck {
            source: src,
            field: "traffic.trace.speedup",
        }
        .range(
            s,
            Some(0.0),
            true,
            Some(MAX_SPEEDUP),
            "a factor > 0 (3 replays at 3× the recorded rate)",
        )?,
        None => 1.0,
    };
    let path = data_path(src, &t.path, "traffic.trace.path", base_dir)?;
    if path.is_dir() {
        return Err(src
            .error(
                &t.path,
                "traffic.trace.path",
                "this is a folder; a trace is one file",
            )
            .with_help("name the trace file"));
    }
    let trace = Trace::read(&path, format)?;
    let options = ReplayOptions {
        speedup,
        looped: t.looped.as_ref().is_none_or(|l| *l.get_ref()),
        start_at_zero: t.start_at_zero.as_ref().is_none_or(|s| *s.get_ref()),
    };
    if !options.start_at_zero && trace.first_s() < 0.0 {
        let at = t.start_at_zero.as_ref().map(Spanned::span);
        return Err(src
            .error_at(
                at,
                "traffic.trace.start_at_zero",
                format!(
                    "the trace starts at {} s, before time 0, so it cannot keep its recorded times",
                    trace.first_s()
                ),
            )
            .with_help("set start_at_zero = true"));
    }
    Ok(TraceTraffic {
        trace,
        options,
        growth,
    })
}

fn rate_series(
    src: &SourceFile,
    f: &TrafficFile,
    s: &Spanned<RateSeriesFile>,
    base_dir: &Path,
    growth: Growth,
) -> Result<SeriesTraffic, InputError> {
    let s = s.get_ref();
    let path = data_path(src, &s.path, "traffic.rate_series.path", base_dir)?;
    let window_cv = s.window_cv.as_ref().is_some_and(|w| *w.get_ref());
    if window_cv {
        let at = s.window_cv.as_ref().map(Spanned::span);
        if let Some(cv) = &f.iat_cv {
            return Err(src
                .error(cv, "traffic.iat_cv", "iat_cv contradicts window_cv = true")
                .with_help("use either one CV for the whole series (iat_cv) or each window's (window_cv = true)"));
        }
        if path.is_dir() {
            return Err(src
                .error_at(at, "traffic.rate_series.window_cv", "per-window CVs cannot be used with a folder of series")
                .with_help("a sum of many clients is closer to Poisson than any one client; give one file, or set iat_cv for the sum"));
        }
    }
    let series = RateSeries::read(&path, *s.format.get_ref(), window_cv)?;
    let burstiness = if window_cv {
        SeriesBurstiness::PerWindow
    } else {
        SeriesBurstiness::Uniform(burstiness(src, f)?)
    };
    Ok(SeriesTraffic {
        series,
        growth,
        burstiness,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Scenario {
        traffic: TrafficFile,
    }

    fn check(text: &str) -> Result<TrafficSpec, InputError> {
        let src = SourceFile::from_text("s.toml", text);
        let s: Scenario = src.parse()?;
        validate(&src, &s.traffic, Path::new("."))
    }

    #[test]
    fn format_and_unit_names_are_the_domain_enums_spellings() {
        let e = check("[traffic.rate_series]\npath = \"x\"\nformat = \"servegenn\"\n").unwrap_err();
        assert_eq!(e.message, "unknown value `servegenn`");
        assert_eq!(e.field.as_deref(), Some("traffic.rate_series.format"));
        assert!(
            e.help
                .as_deref()
                .unwrap()
                .starts_with("did you mean `servegen`?")
        );
        let e = check(
            "[traffic.trace]\npath = \"x\"\nformat = \"csv\"\ntimestamp_column = \"t\"\ntimestamp_unit = \"sec\"\n",
        )
        .unwrap_err();
        assert_eq!(e.position, Some((5, 18)));
        assert!(
            e.help.as_deref().unwrap().contains("s, ms, us, datetime"),
            "{e}"
        );
        let e = check("[traffic.trace]\npath = \"x\"\nformat = \"azur\"\n").unwrap_err();
        assert!(
            e.help
                .as_deref()
                .unwrap()
                .starts_with("did you mean `azure`?"),
            "{e}"
        );
    }

    #[test]
    fn the_documented_example_validates() {
        let spec = check(
            "[traffic]\npattern = \"diurnal\"\npeak_rps = 2000\nmean_rps = 800\npeak_hour = 14\ntrough_rps = 100\nweekly = [1.0, 1.0, 1.0, 1.0, 1.0, 0.7, 0.6]\ngrowth_per_year = 0.3\niat_cv = 1.0\n[traffic.bursts]\nmultiplier = 3.0\nduration_s = 120\nper_day = 4\n",
        )
        .unwrap();
        assert_eq!(spec.peak_rps(1), 6000.0);
        assert!(
            spec.description().contains("peak 2000 req/s at 14:30"),
            "{}",
            spec.description()
        );
    }

    #[test]
    fn integers_are_accepted_where_numbers_are_expected() {
        let spec = check("[traffic]\npeak_rps = 50\n").unwrap();
        assert_eq!(spec.peak_rps(1), 50.0);
        assert_eq!(spec.mean_rps(3), 50.0);
    }

    #[test]
    fn mean_above_peak_names_the_field_and_the_range() {
        let e = check(
            "[traffic]\npattern = \"diurnal\"\npeak_rps = 100\nmean_rps = 150\npeak_hour = 9\n",
        )
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("traffic.mean_rps"));
        assert_eq!(e.position, Some((4, 12)));
        assert!(e.message.contains("not below the peak"), "{}", e.message);
        assert!(e.help.clone().unwrap().contains("0 < mean_rps < peak_rps"));
    }

    #[test]
    fn trough_above_mean_is_refused() {
        let e = check("[traffic]\npattern = \"diurnal\"\npeak_rps = 100\nmean_rps = 40\ntrough_rps = 50\npeak_hour = 9\n")
            .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("traffic.trough_rps"));
        assert_eq!(e.position.map(|p| p.0), Some(5));
    }

    #[test]
    fn percent_looking_growth_says_what_a_fraction_means() {
        let e = check("[traffic]\npeak_rps = 100\ngrowth_per_year = 30\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("traffic.growth_per_year"));
        let help = e.help.clone().unwrap();
        assert!(help.contains("0.3 means 30 % a year"), "{help}");
    }

    #[test]
    fn synthetic_and_trace_together_are_refused() {
        let e = check(
            "[traffic]\npeak_rps = 100\n[traffic.trace]\npath = \"x.csv\"\nformat = \"azure\"\n",
        )
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("traffic.peak_rps"));
        assert_eq!(e.position, Some((2, 12)));
        assert!(e.message.contains("[traffic.trace]"), "{}", e.message);
    }

    #[test]
    fn no_traffic_at_all_is_refused() {
        let e = check("[traffic]\ngrowth_per_year = 0.1\n").unwrap_err();
        assert_eq!(e.message, "no traffic is given");
    }

    #[test]
    fn diurnal_fields_on_a_constant_pattern_are_refused() {
        let e = check("[traffic]\npattern = \"constant\"\npeak_rps = 100\nmean_rps = 50\n")
            .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("traffic.mean_rps"));
        assert!(e.help.clone().unwrap().contains("pattern = \"diurnal\""));
    }

    #[test]
    fn peak_and_mean_alone_describe_a_diurnal_day_peaking_at_14() {
        // The starter scenario's table: peak 400, mean 150 → trough 0, k = 2 (m(2) = 3/8).
        let spec =
            check("[traffic]\npeak_rps = 400\nmean_rps = 150\ngrowth_per_year = 0.3\n").unwrap();
        let TrafficKind::Synthetic { curve, .. } = &spec.kind else {
            panic!("{spec:?}");
        };
        let DailyShape::Diurnal(d) = curve.shape() else {
            panic!("{curve:?}");
        };
        assert_eq!(d.peak_hour(), DEFAULT_PEAK_HOUR as u8);
        assert!((d.exponent() - 2.0).abs() < 1e-9, "{}", d.exponent());
        assert!((spec.mean_rps(2) - 150.0 * 1.3).abs() < 1e-6);
        let e = check("[traffic]\npeak_rps = 400\nmean_rps = -150\n").unwrap_err();
        assert_eq!(e.position, Some((3, 12)));
        assert!(e.message.contains("-150") && e.help.clone().unwrap().starts_with("valid:"));
        let e = check("[traffic]\npeak_rps = \"lots\"\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("traffic.peak_rps"));
        assert!(e.message.contains("expected"), "{}", e.message);
    }

    #[test]
    fn unknown_pattern_suggests_the_nearest() {
        let e = check("[traffic]\npattern = \"diurnl\"\npeak_rps = 100\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("traffic.pattern"));
        assert!(
            e.help
                .clone()
                .unwrap()
                .starts_with("did you mean `diurnal`?")
        );
    }

    #[test]
    fn a_mean_too_close_to_the_peak_suggests_a_trough() {
        let e = check(
            "[traffic]\npattern = \"diurnal\"\npeak_rps = 1000\nmean_rps = 900\npeak_hour = 9\n",
        )
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("traffic.mean_rps"));
        assert!(e.help.clone().unwrap().contains("trough_rps = 800"));
    }

    #[test]
    fn bursts_that_fill_the_day_are_refused() {
        let e = check("[traffic]\npeak_rps = 100\n[traffic.bursts]\nmultiplier = 2\nduration_s = 7200\nper_day = 12\n")
            .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("traffic.bursts.duration_s"));
        assert_eq!(e.position.map(|p| p.0), Some(5));
    }

    #[test]
    fn weekly_needs_seven_days() {
        let e = check("[traffic]\npeak_rps = 100\nweekly = [1, 1, 1]\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("traffic.weekly"));
        let e = check("[traffic]\npeak_rps = 100\nweekly = [1, 1, 1, 1, -1, 1, 1]\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("traffic.weekly[4]"));
    }

    #[test]
    fn iat_cv_out_of_range_is_refused() {
        let e = check("[traffic]\npeak_rps = 100\niat_cv = 0\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("traffic.iat_cv"));
    }
}
