//! Measured rate series: request rates per time window (ServeGen's 10-minute windows per client,
//! or any CSV of rates), read from one file or summed over a folder of files, repeated to cover a
//! year and turned into arrivals.
//!
//! # Model
//!
//! Window `i` covers `[s_i, s_{i+1})` with rate `r_i` [req/s]; the last window is as long as the
//! one before it, and the series repeats with period `P = s_{n−1} + (s_{n−1} − s_{n−2}) − s_0`.
//! Times are shifted so the first window starts at the start of the year (00:00 on a Monday;
//! ServeGen does not document its time zone, and its aggregate's busiest hour of day comes out
//! at 19:00 with `t = 0` as midnight). The integrated rate is exact for this piecewise-constant
//! rate, `Λ(x) = ⌊x/P⌋·Λ(P) + Λ(x mod P)`, so hourly means and yearly totals are exact integrals.
//!
//! Arrivals are a non-homogeneous Poisson process with this piecewise-constant rate (see
//! [`super::arrivals`]), or a Gamma renewal process in rescaled time for burstiness: either one
//! inter-arrival CV for the whole series, or — for a single ServeGen client file — the CV fitted
//! to each window (`iat_cv`, column 3), clamped to [`MAX_IAT_CV`]. A folder's per-window CVs are
//! not used: the superposition of many independent clients is much closer to Poisson than any one
//! of them (Cox & Lewis 1966, §8.4), so a client's CV would overstate the aggregate's clumping.
//!
//! Yearly growth `G(y) = (1+g)^(y−1)` multiplies every rate. (A request trace grows by replaying
//! faster instead; a rate series must not, because compressing its time would shrink its daily
//! cycle below 24 hours.)

use std::cmp::Ordering;
use std::path::Path;

use super::arrivals::{Burstiness, MAX_IAT_CV, NhppArrivals, Segment};
use super::read::{
    csv_error, csv_reader, empty_file_error, field_error, header_column, marked_line, next_record,
    parse_f64, record_mark, record_span,
};
use super::{DesignWindow, Growth, MAX_RPS, MAX_WINDOW_S, YEAR_S, clamp_window};
use crate::input::{InputError, SourceFile};

/// The file formats of a rate series, named in a scenario as [`SeriesFormat::label`] says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeriesFormat {
    /// ServeGen `chunk-<N>-trace.csv`: no header, `window_start_s,rate_rps,iat_cv,pattern,shape,scale`.
    ServeGen,
    /// A CSV with a header holding `time_s` and `rate_rps` columns (and optionally `iat_cv`).
    Csv,
}

impl SeriesFormat {
    pub fn label(self) -> &'static str {
        match self {
            SeriesFormat::ServeGen => "servegen",
            SeriesFormat::Csv => "csv",
        }
    }
}

/// One window as read.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Row {
    start_s: f64,
    rate_rps: f64,
    iat_cv: Option<f64>,
}

/// A validated rate series: windows in time order, rates ≥ 0 and not all 0.
#[derive(Debug, Clone, PartialEq)]
pub struct RateSeries {
    name: String,
    format: SeriesFormat,
    files: usize,
    /// Window starts, shifted so the first is 0 \[s\].
    starts_s: Vec<f64>,
    rates_rps: Vec<f64>,
    /// Fitted inter-arrival CV of each window (single files that carry one).
    iat_cvs: Option<Vec<f64>>,
    period_s: f64,
    /// Λ at each window start; the last entry is Λ(P) \[requests\].
    cumulative: Vec<f64>,
    /// Windows markedly longer than the shortest one: missing windows in the data.
    gaps: Option<Gaps>,
}

/// Windows longer than [`GAP_FACTOR`] times the series' shortest window. A measured series
/// normally has one window length (ServeGen's 600 s); a longer one is a stretch with no rows,
/// read as the rate of the window before it continuing, which a report should say.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Gaps {
    count: usize,
    /// The shortest window \[s\].
    usual_s: f64,
    /// Start and length of the first long window \[s\].
    first_start_s: f64,
    first_len_s: f64,
}

/// How much longer than the shortest window a window must be to count as a gap.
const GAP_FACTOR: f64 = 1.5;

impl RateSeries {
    /// Read a series from a file, or from every `*.csv` file of a folder (summed window by
    /// window; the files must share their windows). `with_cv` also reads each window's
    /// inter-arrival CV (single files only).
    pub fn read(
        path: &Path,
        format: SeriesFormat,
        with_cv: bool,
    ) -> Result<RateSeries, InputError> {
        let name = path.display().to_string();
        if !path.is_dir() {
            let src = SourceFile::read(path)?;
            let rows = parse(&src, format, with_cv)?;
            return RateSeries::from_rows(short_name(path), format, 1, rows)
                .map_err(|e| e.in_file(name));
        }
        if with_cv {
            return Err(InputError::new(
                "per-window inter-arrival CVs cannot be used with a folder of series",
            )
            .in_file(name)
            .with_help(
                "a sum of many clients is closer to Poisson than any one client; give one file, or set iat_cv for the sum",
            ));
        }
        let mut paths: Vec<_> = std::fs::read_dir(path)
            .map_err(|e| {
                InputError::new(format!("cannot list the folder: {e}")).in_file(name.clone())
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "csv"))
            .collect();
        paths.sort();
        let Some(first_path) = paths.first() else {
            return Err(InputError::new("the folder holds no .csv files")
                .in_file(name)
                .with_help(
                    "a rate-series folder holds one CSV file per client, summed window by window",
                ));
        };
        let first_src = SourceFile::read(first_path)?;
        let mut sum = parse(&first_src, format, false)?;
        for p in &paths[1..] {
            let src = SourceFile::read(p)?;
            let rows = parse(&src, format, false)?;
            if rows.len() != sum.len() {
                return Err(InputError::new(format!(
                    "{} windows, but {} has {}",
                    rows.len(),
                    first_src.name,
                    sum.len()
                ))
                .in_file(src.name.clone())
                .with_help("files in a rate-series folder are summed window by window and must share their windows"));
            }
            for (i, (acc, row)) in sum.iter_mut().zip(&rows).enumerate() {
                if row.start_s != acc.start_s {
                    return Err(InputError::new(format!(
                        "window {} starts at {} s, but in {} at {} s",
                        i + 1,
                        row.start_s,
                        first_src.name,
                        acc.start_s
                    ))
                    .in_file(src.name.clone())
                    .with_help("files in a rate-series folder are summed window by window and must share their windows"));
                }
                acc.rate_rps += row.rate_rps;
            }
        }
        if let Some((i, acc)) = sum.iter().enumerate().find(|(_, r)| r.rate_rps > MAX_RPS) {
            return Err(InputError::new(format!(
                "window {} (at {} s) sums to {} req/s over the folder's files",
                i + 1,
                acc.start_s,
                acc.rate_rps
            ))
            .in_file(name)
            .with_help(RATE_HELP));
        }
        let short = format!("{} ({} files)", short_name(path), paths.len());
        RateSeries::from_rows(short, format, paths.len(), sum).map_err(|e| e.in_file(name))
    }

    /// A series from window starts and rates (and optionally CVs), in time order.
    pub fn new(
        name: String,
        starts_s: &[f64],
        rates_rps: &[f64],
        iat_cvs: Option<&[f64]>,
    ) -> Result<RateSeries, InputError> {
        if starts_s.len() != rates_rps.len() || iat_cvs.is_some_and(|c| c.len() != starts_s.len()) {
            return Err(InputError::new(
                "window starts, rates and CVs differ in number",
            ));
        }
        let rows = (0..starts_s.len())
            .map(|i| Row {
                start_s: starts_s[i],
                rate_rps: rates_rps[i],
                iat_cv: iat_cvs.map(|c| c[i]),
            })
            .collect::<Vec<_>>();
        if let Some(r) = rows.iter().find(|r| {
            !((0.0..=MAX_WINDOW_S).contains(&r.start_s) && (0.0..=MAX_RPS).contains(&r.rate_rps))
                || r.iat_cv.is_some_and(|c| !(c.is_finite() && c > 0.0))
        }) {
            return Err(InputError::new(format!(
                "window at {} s: start, rate {} req/s or CV {:?} is not valid",
                r.start_s, r.rate_rps, r.iat_cv
            ))
            .with_help(
                "window starts are seconds from 0 to 100 years; rates are from 0 to 10,000,000 req/s; CVs are numbers > 0",
            ));
        }
        if let Some(i) = rows.windows(2).position(|w| w[1].start_s <= w[0].start_s) {
            return Err(InputError::new(format!(
                "window {} does not start after window {}",
                i + 2,
                i + 1
            )));
        }
        RateSeries::from_rows(name, SeriesFormat::Csv, 1, rows)
    }

    /// Checks that need the whole series, then the integrated rate.
    fn from_rows(
        name: String,
        format: SeriesFormat,
        files: usize,
        rows: Vec<Row>,
    ) -> Result<RateSeries, InputError> {
        if rows.len() < 2 {
            return Err(InputError::new(format!(
                "the rate series has {} window(s): at least two are needed to know a window's length",
                rows.len()
            ))
            .with_help("one row per window: its start time and its mean rate"));
        }
        if rows.iter().all(|r| r.rate_rps == 0.0) {
            return Err(
                InputError::new("every rate in the series is 0: it carries no traffic")
                    .with_help("rates are mean requests per second in each window"),
            );
        }
        let s0 = rows[0].start_s;
        let starts_s: Vec<f64> = rows.iter().map(|r| r.start_s - s0).collect();
        let n = starts_s.len();
        let period_s = starts_s[n - 1] + (starts_s[n - 1] - starts_s[n - 2]);
        let rates_rps: Vec<f64> = rows.iter().map(|r| r.rate_rps).collect();
        let iat_cvs = rows[0]
            .iat_cv
            .is_some()
            .then(|| rows.iter().map(|r| r.iat_cv.unwrap_or(1.0)).collect());
        let mut cumulative = Vec::with_capacity(n + 1);
        let mut acc = 0.0;
        for i in 0..n {
            cumulative.push(acc);
            let end = starts_s.get(i + 1).copied().unwrap_or(period_s);
            acc += rates_rps[i] * (end - starts_s[i]);
        }
        cumulative.push(acc);
        let lengths: Vec<f64> = starts_s.windows(2).map(|w| w[1] - w[0]).collect();
        let usual_s = lengths.iter().copied().fold(f64::INFINITY, f64::min);
        let long: Vec<usize> = (0..lengths.len())
            .filter(|&i| lengths[i] > GAP_FACTOR * usual_s)
            .collect();
        let gaps = long.first().map(|&i| Gaps {
            count: long.len(),
            usual_s,
            first_start_s: starts_s[i] + s0,
            first_len_s: lengths[i],
        });
        Ok(RateSeries {
            name,
            format,
            files,
            starts_s,
            rates_rps,
            iat_cvs,
            period_s,
            cumulative,
            gaps,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of windows.
    pub fn len(&self) -> usize {
        self.starts_s.len()
    }

    /// Never true: a series has at least two windows.
    pub fn is_empty(&self) -> bool {
        self.starts_s.is_empty()
    }

    /// The length of one repetition of the series \[s\].
    pub fn period_s(&self) -> f64 {
        self.period_s
    }

    /// Whether each window carries its own inter-arrival CV.
    pub fn has_window_cv(&self) -> bool {
        self.iat_cvs.is_some()
    }

    fn window_end(&self, i: usize) -> f64 {
        self.starts_s.get(i + 1).copied().unwrap_or(self.period_s)
    }

    /// The window holding `r` ∈ [0, P).
    fn window_at(&self, r: f64) -> usize {
        self.starts_s.partition_point(|&s| s <= r).saturating_sub(1)
    }

    /// Λ(x) for x ≥ 0 (growth 1) \[requests\].
    pub fn integrated(&self, x_s: f64) -> f64 {
        if x_s.is_nan() || x_s <= 0.0 {
            return 0.0;
        }
        let copies = (x_s / self.period_s).floor();
        let r = (x_s - copies * self.period_s).clamp(0.0, self.period_s);
        let i = self.window_at(r);
        copies * self.cumulative[self.len()]
            + self.cumulative[i]
            + self.rates_rps[i] * (r - self.starts_s[i]).max(0.0)
    }

    /// Mean rate over one period [req/s].
    pub fn mean_rps(&self) -> f64 {
        self.cumulative[self.len()] / self.period_s
    }

    /// The highest window rate [req/s].
    pub fn peak_rps(&self) -> f64 {
        self.rates_rps.iter().copied().fold(0.0, f64::max)
    }

    /// The start in [0, P) of the `duration_s` stretch with the most requests. For a
    /// piecewise-constant rate the maximum of `Λ(s + w) − Λ(s)` is reached with `s` or `s + w` on
    /// a window edge, so only those starts are tried.
    fn busiest_start(&self, duration_s: f64) -> f64 {
        if duration_s >= self.period_s || duration_s <= 0.0 {
            return 0.0;
        }
        let p = self.period_s;
        let mut best = (f64::NEG_INFINITY, 0.0);
        for &edge in &self.starts_s {
            for s in [edge, (edge - duration_s).rem_euclid(p)] {
                let n = self.integrated(s + duration_s) - self.integrated(s);
                if n > best.0 + 1e-9 * n.abs() {
                    best = (n, s);
                }
            }
        }
        best.1
    }
}

fn short_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Parse one series file.
fn parse(src: &SourceFile, format: SeriesFormat, with_cv: bool) -> Result<Vec<Row>, InputError> {
    if let Some(e) = empty_file_error(src, "the rate series has no rows") {
        return Err(e.with_help("one row per window: its start time [s] and its mean rate [req/s]"));
    }
    let mut reader = csv_reader(&src.text, format == SeriesFormat::Csv);
    let (t_col, r_col, cv_col, names) = match format {
        SeriesFormat::ServeGen => (0, 1, Some(2), ["window_start_s", "rate_rps", "iat_cv"]),
        SeriesFormat::Csv => {
            let headers = reader.headers().map_err(|e| csv_error(src, &e))?.clone();
            let need = |n: &str| {
                header_column(
                    src,
                    &headers,
                    n,
                    "a rate-series CSV has a header with time_s and rate_rps (and optionally iat_cv)",
                )
            };
            let t = need("time_s")?;
            let r = need("rate_rps")?;
            let cv = if with_cv { Some(need("iat_cv")?) } else { None };
            (t, r, cv, ["time_s", "rate_rps", "iat_cv"])
        }
    };
    let mut rows: Vec<Row> = Vec::new();
    let mut prev_mark = 0;
    let mut record = csv::StringRecord::new();
    while next_record(src, &mut reader, &mut record)? {
        let get = |i: usize, name: &str| -> Result<f64, InputError> {
            let text = record.get(i).ok_or_else(|| {
                src.error_at(
                    record_span(&src.text, &record),
                    name,
                    format!("this row has no column {}", i + 1),
                )
            })?;
            parse_f64(text).map_err(|m| field_error(src, &record, i, name, m))
        };
        let start_s = get(t_col, names[0])?;
        let rate_rps = get(r_col, names[1])?;
        if !(0.0..=MAX_WINDOW_S).contains(&start_s) {
            let what = if start_s < 0.0 {
                format!("window start {start_s} s is negative")
            } else {
                format!("window start {start_s} s is out of range")
            };
            return Err(field_error(src, &record, t_col, names[0], what).with_help(
                "valid: seconds from 0 (the start of the measurement) to 3,155,760,000 (100 years)",
            ));
        }
        if rate_rps > MAX_RPS {
            return Err(field_error(
                src,
                &record,
                r_col,
                names[1],
                format!("rate {rate_rps} req/s is out of range"),
            )
            .with_help(RATE_HELP));
        }
        if rate_rps < 0.0 {
            return Err(field_error(
                src,
                &record,
                r_col,
                names[1],
                format!("rate {rate_rps} req/s is negative"),
            )
            .with_help("valid: a mean request rate ≥ 0"));
        }
        if let Some(prev) = rows.last()
            && start_s <= prev.start_s
        {
            return Err(field_error(
                src,
                &record,
                t_col,
                names[0],
                format!(
                    "window start {start_s} s is not after the start on line {} ({} s)",
                    marked_line(src, prev_mark),
                    prev.start_s
                ),
            )
            .with_help("windows must be in time order, one row each"));
        }
        let iat_cv = match cv_col.filter(|_| with_cv) {
            Some(c) => {
                let cv = get(c, names[2])?;
                if rate_rps > 0.0 && cv <= 0.0 {
                    return Err(field_error(src, &record, c, names[2], format!("inter-arrival CV {cv} is not > 0"))
                        .with_help("valid: the coefficient of variation of inter-arrival times, > 0 (1 = Poisson)"));
                }
                Some(if rate_rps > 0.0 { cv } else { 1.0 })
            }
            None => None,
        };
        prev_mark = record_mark(&record);
        rows.push(Row {
            start_s,
            rate_rps,
            iat_cv,
        });
    }
    if rows.is_empty() {
        return Err(src
            .error_at(None, "", "the rate series has no rows")
            .with_help("one row per window: its start time [s] and its mean rate [req/s]"));
    }
    Ok(rows)
}

const RATE_HELP: &str =
    "valid: a mean request rate from 0 to 10,000,000 req/s (ten times the busiest public service)";

/// Where a rate series' arrival burstiness comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SeriesBurstiness {
    /// One inter-arrival CV for every window.
    Uniform(Burstiness),
    /// Each window's fitted CV (clamped to [`MAX_IAT_CV`]).
    PerWindow,
}

/// A rate series with its growth and burstiness: the measured-rate kind of traffic.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesTraffic {
    pub series: RateSeries,
    pub growth: Growth,
    pub burstiness: SeriesBurstiness,
}

impl SeriesTraffic {
    /// The busiest `window_s` of the series (growth does not move it).
    pub fn design_window(&self, year: u32, window_s: f64) -> DesignWindow {
        let duration_s = clamp_window(window_s);
        let start_s = self.series.busiest_start(duration_s);
        let mean_rps = if duration_s > 0.0 {
            self.growth.factor(year)
                * (self.series.integrated(start_s + duration_s) - self.series.integrated(start_s))
                / duration_s
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

    /// Constant-rate segments over `[start_s, start_s + duration_s)` of `year`. Lazy.
    pub fn segments(&self, year: u32, start_s: f64, duration_s: f64) -> SeriesSegments<'_> {
        let duration_s = clamp_window(duration_s);
        SeriesSegments {
            traffic: self,
            growth: self.growth.factor(year),
            t_s: start_s,
            end_s: start_s + duration_s,
        }
    }

    /// Arrivals over `[start_s, start_s + duration_s)` of `year`, in ns since `start_s`.
    pub fn arrivals(
        &self,
        year: u32,
        start_s: f64,
        duration_s: f64,
        seed: u64,
        replication: u64,
    ) -> NhppArrivals<SeriesSegments<'_>> {
        NhppArrivals::new(
            self.segments(year, start_s, duration_s),
            start_s,
            seed,
            replication,
        )
    }

    /// Mean rate of each hour of `year` [req/s] (exact integrals of the repeated series).
    pub fn hourly_rates(&self, year: u32) -> Vec<f64> {
        let g = self.growth.factor(year);
        super::hourly_from_cumulative(|t_s| g * self.series.integrated(t_s))
    }

    /// The highest window rate of `year` [req/s].
    pub fn peak_rps(&self, year: u32) -> f64 {
        self.growth.factor(year) * self.series.peak_rps()
    }

    /// Expected requests in `year`.
    pub fn requests_per_year(&self, year: u32) -> f64 {
        self.growth.factor(year) * self.series.integrated(YEAR_S)
    }

    /// One line for reports.
    pub fn description(&self) -> String {
        let s = &self.series;
        let mut d = format!(
            "rate series {} ({}): {} windows over {:.1} days, mean {} req/s, peak {} req/s, repeated over the year",
            s.name,
            s.format.label(),
            s.len(),
            s.period_s / crate::units::DAY_S,
            super::fmt_rate(s.mean_rps()),
            super::fmt_rate(s.peak_rps())
        );
        match self.burstiness {
            SeriesBurstiness::Uniform(b) => d.push_str(&format!("; {}", b.description())),
            SeriesBurstiness::PerWindow => d.push_str("; each window's fitted inter-arrival CV"),
        }
        if self.growth.per_year != 0.0 {
            d.push_str(&format!(
                "; growth {:.1} %/year",
                self.growth.per_year * 100.0
            ));
        }
        d
    }

    /// Caveats for reports.
    pub fn notes(&self) -> Vec<String> {
        let s = &self.series;
        let mut v = vec![format!(
            "the {:.1}-day series is repeated back to back over the year, its first window at 00:00 on a Monday",
            s.period_s / crate::units::DAY_S
        )];
        if let Some(g) = s.gaps {
            v.push(format!(
                "{} window(s) of the series are longer than its usual {} s (the first, at {} s, lasts {} s): the data has gaps, and each is read as the rate of the window before it continuing",
                g.count,
                super::fmt_rate(g.usual_s),
                super::fmt_rate(g.first_start_s),
                super::fmt_rate(g.first_len_s),
            ));
        }
        if s.files > 1 {
            v.push(format!(
                "{} files summed window by window; arrivals are Poisson unless iat_cv is set, since a sum of many clients is close to Poisson",
                s.files
            ));
        }
        if let (SeriesBurstiness::PerWindow, Some(cvs)) = (self.burstiness, &s.iat_cvs) {
            let (mut clamped, mut total) = (0.0, 0.0);
            for (i, &cv) in cvs.iter().enumerate() {
                let n = s.rates_rps[i] * (s.window_end(i) - s.starts_s[i]);
                total += n;
                if cv > MAX_IAT_CV {
                    clamped += n;
                }
            }
            if clamped > 0.0 {
                v.push(format!(
                    "windows carrying {:.1} % of the requests have a fitted inter-arrival CV above {MAX_IAT_CV}; they are generated with CV {MAX_IAT_CV}",
                    100.0 * clamped / total
                ));
            }
        }
        v
    }
}

/// Lazy constant-rate segments of a [`SeriesTraffic`] over a window.
#[derive(Debug, Clone)]
pub struct SeriesSegments<'a> {
    traffic: &'a SeriesTraffic,
    growth: f64,
    t_s: f64,
    end_s: f64,
}

impl Iterator for SeriesSegments<'_> {
    type Item = Segment;

    fn next(&mut self) -> Option<Segment> {
        if self.t_s.partial_cmp(&self.end_s) != Some(Ordering::Less) {
            return None;
        }
        let s = &self.traffic.series;
        let t = self.t_s;
        let copies = (t / s.period_s).floor();
        let base = copies * s.period_s;
        let i = s.window_at((t - base).clamp(0.0, s.period_s));
        let mut end = (base + s.window_end(i)).min(self.end_s);
        if end.partial_cmp(&t) != Some(Ordering::Greater) {
            // Rounding at a window edge: move to the next window's start.
            end = (base + s.window_end((i + 1) % s.len()))
                .min(self.end_s)
                .max(t + 1e-6);
        }
        let iat_cv = match (self.traffic.burstiness, &s.iat_cvs) {
            (SeriesBurstiness::Uniform(b), _) => b.iat_cv(),
            (SeriesBurstiness::PerWindow, Some(cvs)) => cvs[i],
            (SeriesBurstiness::PerWindow, None) => 1.0,
        };
        self.t_s = end;
        Some(Segment {
            start_s: t,
            end_s: end,
            rate_rps: self.growth * s.rates_rps[i],
            iat_cv,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::HOUR_S;

    fn series() -> RateSeries {
        // 4 windows of 600 s: 10, 0, 30, 20 req/s.
        RateSeries::new(
            "s".into(),
            &[600.0, 1200.0, 1800.0, 2400.0],
            &[10.0, 0.0, 30.0, 20.0],
            None,
        )
        .unwrap()
    }

    #[test]
    fn integrates_exactly_and_repeats() {
        let s = series();
        assert_eq!(s.period_s(), 2400.0);
        assert_eq!(s.integrated(600.0), 6000.0);
        assert_eq!(s.integrated(1500.0), 6000.0 + 300.0 * 30.0);
        assert_eq!(s.integrated(2400.0), 36_000.0);
        assert_eq!(s.integrated(2400.0 + 300.0), 36_000.0 + 3000.0);
        assert_eq!(s.mean_rps(), 15.0);
        assert_eq!(s.peak_rps(), 30.0);
    }

    #[test]
    fn busiest_span_can_straddle_windows_and_the_wrap() {
        let s = series();
        // 1200 s: windows 3 + 4 (30, 20) beat anything else.
        assert_eq!(s.busiest_start(1200.0), 1200.0);
        // 600 s: window 3 alone.
        assert_eq!(s.busiest_start(600.0), 1200.0);
        // 1800 s: 30, 20, then wrap to 10 (= 36,000) beats 0, 30, 20.
        assert_eq!(s.busiest_start(1800.0), 1200.0);
    }

    #[test]
    fn yearly_figures_agree() {
        let t = SeriesTraffic {
            series: series(),
            growth: Growth { per_year: 0.5 },
            burstiness: SeriesBurstiness::Uniform(Burstiness::POISSON),
        };
        let hourly = t.hourly_rates(2);
        let total: f64 = hourly.iter().sum::<f64>() * HOUR_S;
        assert!((total - t.requests_per_year(2)).abs() < 1e-6 * total);
        assert!((t.requests_per_year(2) - 1.5 * 15.0 * YEAR_S).abs() < 1e-6 * total);
        assert_eq!(t.peak_rps(2), 45.0);
        let w = t.design_window(1, 600.0);
        assert_eq!((w.start_s, w.mean_rps), (1200.0, 30.0));
        // Segments over two periods tile the window and integrate to Λ.
        let segs: Vec<Segment> = t.segments(1, 300.0, 4800.0).collect();
        assert!(segs.windows(2).all(|p| p[0].end_s == p[1].start_s));
        let lambda: f64 = segs
            .iter()
            .map(|s| s.rate_rps * (s.end_s - s.start_s))
            .sum();
        assert!((lambda - (s_int(&t, 5100.0) - s_int(&t, 300.0))).abs() < 1e-6);
    }

    fn s_int(t: &SeriesTraffic, x: f64) -> f64 {
        t.series.integrated(x)
    }

    #[test]
    fn bad_series_are_refused() {
        assert!(RateSeries::new("s".into(), &[0.0], &[1.0], None).is_err());
        assert!(RateSeries::new("s".into(), &[0.0, 10.0], &[0.0, 0.0], None).is_err());
        assert!(RateSeries::new("s".into(), &[0.0, 10.0], &[1.0, -1.0], None).is_err());
        assert!(RateSeries::new("s".into(), &[0.0, 10.0], &[1.0, f64::NAN], None).is_err());
        assert!(RateSeries::new("s".into(), &[10.0, 0.0], &[1.0, 1.0], None).is_err());
    }
}
