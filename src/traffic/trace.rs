//! Measured request traces: reading them (the Azure LLM inference CSV, a generic CSV, the Mooncake
//! JSONL) and replaying them as arrivals — time-scaled, looped back to back, with yearly growth as
//! a faster replay.
//!
//! # Replay
//!
//! A trace of `n` requests at recorded times `t_0 ≤ … ≤ t_{n−1}` \[ns\] is replayed with relative
//! times `r_i = t_i − t_0`, repeated every period
//!
//! ```text
//! P = r_{n−1} + τ        τ = r_{n−1}/(n − 1)   (the mean gap; a spread trace uses its step)
//! ```
//!
//! so copy `k` of request `i` arrives at `(o + k·P + r_i) / s` with `s` the speed and `o` the
//! offset (0 when `start_at_zero`, else `t_0`, so the first request keeps its recorded time
//! since the format's epoch). One copy lasts `P`, so the looped trace keeps the recorded mean rate
//! `(n − 1)/r_{n−1}` exactly. The speed in year `y` is `s = speedup · (1 + g)^(y−1)`: growth
//! replays the trace faster (time-compressed), which keeps its request sizes and its clumping per
//! request and raises the rate by the growth factor. Yearly figures (hourly rates, requests per
//! year) always repeat the trace over the whole year, whether or not the design replay loops.
//!
//! # Quantised timestamps (Mooncake)
//!
//! The Mooncake conversation trace records arrivals in steps of about 3 s (1,180 distinct
//! timestamps for 12,031 requests). Replayed as is, each step would be a burst of up to 28
//! simultaneous requests that never happened. Given the number of Poisson arrivals in an
//! interval, their times are independent and uniform over it (Ross 1996, *Stochastic Processes*,
//! Thm 2.3.1), so each step's requests are **spread uniformly at random** over the step (seeded
//! from the ARRIVALS stream, fresh draws in every loop copy, requests kept in file order). A step
//! is the time to the next distinct timestamp, capped at the trace's median step so a recording
//! gap is not mistaken for a step; the last step is the median step.

use std::path::Path;
use std::sync::Arc;

use rand::RngExt;
use rand::rngs::Xoshiro256PlusPlus;
use serde::Deserialize;

use super::prefix::{MOONCAKE_BLOCK_TOKENS, PrefixBlocks, PrefixBlocksBuilder};
use super::read::{
    check_tokens, csv_error, csv_reader, empty_file_error, field_error, header_column,
    lines_with_offsets, marked_line, next_record, parse_datetime_ns, parse_f64, parse_tokens,
    record_mark, record_span, to_ns,
};
use super::stats::{StatsError, TrafficStats};
use super::{DesignWindow, Growth, Request, YEAR_S, clamp_window};
use crate::input::{InputError, SourceFile};
use crate::rng;

/// How a CSV trace's timestamp column is written; a scenario names it as [`TimeUnit::label`]
/// says (`timestamp_unit = "ms"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum TimeUnit {
    #[serde(rename = "s")]
    Seconds,
    #[serde(rename = "ms")]
    Millis,
    #[serde(rename = "us")]
    Micros,
    /// `YYYY-MM-DD HH:MM:SS[.fffffff]` (the Azure format), no time zone.
    #[serde(rename = "datetime")]
    DateTime,
}

impl TimeUnit {
    /// The name used in scenario files.
    pub fn label(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "s",
            TimeUnit::Millis => "ms",
            TimeUnit::Micros => "us",
            TimeUnit::DateTime => "datetime",
        }
    }

    fn parse_ns(self, text: &str) -> Result<i64, String> {
        match self {
            TimeUnit::Seconds => to_ns(parse_f64(text)?, 1e9),
            TimeUnit::Millis => to_ns(parse_f64(text)?, 1e6),
            TimeUnit::Micros => to_ns(parse_f64(text)?, 1e3),
            TimeUnit::DateTime => parse_datetime_ns(text),
        }
    }
}

/// Which columns of a generic CSV trace hold what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvColumns {
    /// Header name of the arrival-time column.
    pub timestamp: String,
    pub unit: TimeUnit,
    /// Header name of the prompt-token column; without it requests carry 0 input tokens.
    pub input_tokens: Option<String>,
    /// Header name of the output-token column; without it requests carry 0 output tokens.
    pub output_tokens: Option<String>,
}

/// The file formats a trace can be read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceFormat {
    /// Azure LLM inference trace 2023: `TIMESTAMP,ContextTokens,GeneratedTokens`, datetime stamps.
    Azure,
    /// Any CSV with a header; the columns are named.
    Csv(CsvColumns),
    /// Mooncake JSONL: `{"timestamp": ms, "input_length", "output_length", "hash_ids": [..]}`.
    Mooncake,
}

/// Which reader a trace file needs, as a scenario names it (`format = "azure"`): the variant of
/// a [`TraceFormat`] without the columns a CSV names beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceFormatKind {
    Azure,
    Csv,
    Mooncake,
}

impl TraceFormat {
    /// The reader without its columns.
    pub fn kind(&self) -> TraceFormatKind {
        match self {
            TraceFormat::Azure => TraceFormatKind::Azure,
            TraceFormat::Csv(_) => TraceFormatKind::Csv,
            TraceFormat::Mooncake => TraceFormatKind::Mooncake,
        }
    }

    pub fn label(&self) -> &'static str {
        match self {
            TraceFormat::Azure => "Azure LLM CSV",
            TraceFormat::Csv(_) => "CSV",
            TraceFormat::Mooncake => "Mooncake JSONL",
        }
    }
}

/// One recorded request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRecord {
    /// Recorded arrival time since the format's epoch (Unix epoch for datetimes) \[ns\].
    pub time_ns: i64,
    pub input_tokens: u32,
    pub output_tokens: u32,
}

/// A validated trace: at least two requests at distinct times, sorted.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    name: String,
    format: TraceFormat,
    /// Recorded times of the first request [ns since the format's epoch].
    first_ns: i64,
    /// Times relative to the first request \[ns\], sorted.
    rel_ns: Vec<i64>,
    input_tokens: Vec<u32>,
    output_tokens: Vec<u32>,
    /// Median step of quantised timestamps, when the requests of a step are spread over it.
    spread_step_ns: Option<i64>,
    /// Time after the last request before the trace repeats \[ns\] (τ in the module docs).
    tail_ns: i64,
    /// Prompt prefix blocks per request (Mooncake `hash_ids`), when the trace has them.
    prefix: Option<Arc<PrefixBlocks>>,
}

impl Trace {
    /// Read and validate a trace file; messages name the file as the path is written.
    pub fn read(path: &Path, format: TraceFormat) -> Result<Trace, InputError> {
        let src = SourceFile::read(path)?;
        Trace::parse(&src, format)
    }

    /// Parse and validate a trace held in a [`SourceFile`].
    pub fn parse(src: &SourceFile, format: TraceFormat) -> Result<Trace, InputError> {
        let mut prefix = None;
        let records = match &format {
            TraceFormat::Azure => parse_csv(
                src,
                &CsvColumns {
                    timestamp: "TIMESTAMP".into(),
                    unit: TimeUnit::DateTime,
                    input_tokens: Some("ContextTokens".into()),
                    output_tokens: Some("GeneratedTokens".into()),
                },
                "an Azure LLM trace starts with the header TIMESTAMP,ContextTokens,GeneratedTokens",
            )?,
            TraceFormat::Csv(cols) => parse_csv(
                src,
                cols,
                "name the trace's columns with timestamp_column, input_tokens_column and output_tokens_column",
            )?,
            TraceFormat::Mooncake => {
                let (records, blocks) = parse_mooncake(src)?;
                prefix = blocks;
                records
            }
        };
        let spread = matches!(format, TraceFormat::Mooncake);
        let name = Path::new(&src.name)
            .file_name()
            .map_or(src.name.clone(), |n| n.to_string_lossy().into_owned());
        let mut trace = Trace::from_records(name, format, records, spread)
            .map_err(|e| e.in_file(src.name.clone()))?;
        trace.prefix = prefix.map(Arc::new);
        Ok(trace)
    }

    /// A trace from records already in time order. `spread` spreads the requests sharing a
    /// timestamp over the step to the next one (module docs).
    pub fn from_records(
        name: String,
        format: TraceFormat,
        records: Vec<TraceRecord>,
        spread: bool,
    ) -> Result<Trace, InputError> {
        if records.is_empty() {
            return Err(InputError::new("the trace has no requests")
                .with_help("expected one request per line (after the header, for CSV)"));
        }
        if let Some(i) = records.windows(2).position(|w| w[1].time_ns < w[0].time_ns) {
            return Err(InputError::new(format!(
                "request {} arrives before request {}: the trace is not sorted by time",
                i + 2,
                i + 1
            )));
        }
        let first_ns = records[0].time_ns;
        let rel_ns: Vec<i64> = records.iter().map(|r| r.time_ns - first_ns).collect();
        let span = *rel_ns.last().unwrap_or(&0);
        if span <= 0 {
            return Err(InputError::new(format!(
                "all {} requests of the trace arrive at the same time: a replay needs at least two distinct times",
                records.len()
            )));
        }
        let spread_step_ns = if spread { median_step(&rel_ns) } else { None };
        let n = rel_ns.len() as i64;
        let tail_ns =
            spread_step_ns.unwrap_or(((span as f64) / (n - 1) as f64).round().max(1.0) as i64);
        Ok(Trace {
            name,
            format,
            first_ns,
            input_tokens: records.iter().map(|r| r.input_tokens).collect(),
            output_tokens: records.iter().map(|r| r.output_tokens).collect(),
            rel_ns,
            spread_step_ns,
            tail_ns,
            prefix: None,
        })
    }

    /// The prompt prefix blocks of every request (Mooncake `hash_ids`), if the trace has them.
    pub fn prefix_blocks(&self) -> Option<&Arc<PrefixBlocks>> {
        self.prefix.as_ref()
    }

    /// Forget the prefix blocks: requests then carry none ([`Request::prefix`] = 0), as when
    /// prefix caching is off.
    pub fn drop_prefix_blocks(&mut self) {
        self.prefix = None;
    }

    /// The [`Request::prefix`] of request `i`.
    #[inline]
    fn prefix_ref(&self, i: usize) -> u32 {
        if self.prefix.is_some() {
            PrefixBlocks::reference(i)
        } else {
            0
        }
    }

    /// Fraction of one copy's prompt tokens an unbounded cache shared by the whole fleet would
    /// hit, in file order: the upper bound on the hit rate of any prefix cache (`None` without
    /// prefix blocks).
    pub fn unbounded_prefix_hit_fraction(&self) -> Option<f64> {
        self.prefix
            .as_ref()
            .map(|p| p.unbounded_hit_fraction(&self.input_tokens))
    }

    /// The file name the trace was read from.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn format(&self) -> &TraceFormat {
        &self.format
    }

    /// Requests in one copy of the trace.
    pub fn len(&self) -> usize {
        self.rel_ns.len()
    }

    /// Never true: a trace holds at least two requests.
    pub fn is_empty(&self) -> bool {
        self.rel_ns.is_empty()
    }

    /// Last minus first recorded arrival \[s\].
    pub fn span_s(&self) -> f64 {
        *self.rel_ns.last().unwrap_or(&0) as f64 / 1e9
    }

    /// Recorded time of the first request since the format's epoch \[s\].
    pub fn first_s(&self) -> f64 {
        self.first_ns as f64 / 1e9
    }

    /// One copy's length `P` \[s\] (module docs).
    pub fn period_s(&self) -> f64 {
        self.period_ns() as f64 / 1e9
    }

    fn period_ns(&self) -> i64 {
        self.rel_ns.last().copied().unwrap_or(0) + self.tail_ns
    }

    /// The median step of quantised timestamps that are spread, if any \[s\].
    pub fn spread_step_s(&self) -> Option<f64> {
        self.spread_step_ns.map(|s| s as f64 / 1e9)
    }

    /// The requests as recorded (times relative to the first request, no spreading).
    pub fn requests(&self) -> impl Iterator<Item = Request> + '_ {
        self.rel_ns.iter().enumerate().map(|(i, &t)| Request {
            arrival_ns: t as u64,
            input_tokens: self.input_tokens[i],
            output_tokens: self.output_tokens[i],
            prefix: self.prefix_ref(i),
        })
    }

    /// Statistics of the trace as recorded (a validated trace is sorted with two distinct
    /// times, so this succeeds).
    pub fn stats(&self) -> Result<TrafficStats, StatsError> {
        TrafficStats::from_requests(self.requests())
    }

    /// The index one past the group of requests sharing the timestamp of request `i`.
    fn group_end(&self, i: usize) -> usize {
        let t = self.rel_ns[i];
        i + self.rel_ns[i..].partition_point(|&x| x == t)
    }

    /// Requests of one copy with relative time < `r_ns` (no spreading).
    fn count_before_in_copy(&self, r_ns: f64) -> usize {
        self.rel_ns.partition_point(|&x| (x as f64) < r_ns)
    }
}

impl Trace {
    /// Where the busiest `span_ns` of trace time starts in one copy \[ns since its first
    /// request\], and how many requests it holds. Counted across the end of the copy into the next
    /// when the trace loops. Two pointers over the copy (and its successor): O(requests).
    fn busiest_stretch(&self, span_ns: f64, looped: bool) -> (i64, usize) {
        let n = self.rel_ns.len();
        let period = self.period_ns();
        // NaN and non-positive spans hold nothing.
        if n == 0 || span_ns.is_nan() || span_ns <= 0.0 {
            return (0, 0);
        }
        if looped && span_ns >= period as f64 {
            // The window holds whole copies, whatever its start, and a remainder shorter than a
            // copy, which is busiest where the trace is.
            let copies = (span_ns / period as f64).floor();
            let (start, rest) = self.busiest_stretch(span_ns - copies * period as f64, true);
            return (start, copies as usize * n + rest);
        }
        // Arrival time of the j-th request of the copy and its successor.
        let at = |j: usize| -> f64 {
            if j < n {
                self.rel_ns[j] as f64
            } else {
                (self.rel_ns[j - n] + period) as f64
            }
        };
        let limit = if looped { 2 * n } else { n };
        let (mut best_start, mut best) = (0i64, 0usize);
        let mut end = 0usize;
        for i in 0..n {
            end = end.max(i);
            while end < limit && end < i + n && at(end) < at(i) + span_ns {
                end += 1;
            }
            if end - i > best {
                best = end - i;
                best_start = self.rel_ns[i];
            }
        }
        (best_start, best)
    }
}

/// The median of the positive steps between distinct timestamps.
fn median_step(rel_ns: &[i64]) -> Option<i64> {
    let mut steps: Vec<i64> = rel_ns
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|&d| d > 0)
        .collect();
    if steps.is_empty() {
        return None;
    }
    let mid = steps.len() / 2;
    let (_, m, _) = steps.select_nth_unstable(mid);
    Some(*m)
}

/// Parse a CSV trace with a header: the named columns, one request per row.
fn parse_csv(
    src: &SourceFile,
    cols: &CsvColumns,
    header_help: &str,
) -> Result<Vec<TraceRecord>, InputError> {
    if let Some(e) = empty_file_error(src, "the trace has no requests") {
        return Err(e.with_help(format!(
            "expected a header line, then one request per line; {header_help}"
        )));
    }
    let mut reader = csv_reader(&src.text, true);
    let headers = reader.headers().map_err(|e| csv_error(src, &e))?.clone();
    let column = |name: &str| header_column(src, &headers, name, header_help);
    let t_col = column(&cols.timestamp)?;
    let in_col = cols.input_tokens.as_deref().map(column).transpose()?;
    let out_col = cols.output_tokens.as_deref().map(column).transpose()?;
    let mut records = Vec::new();
    let mut last: Option<(i64, usize)> = None;
    let mut record = csv::StringRecord::new();
    while next_record(src, &mut reader, &mut record)? {
        let t_text = record.get(t_col).unwrap_or("");
        let time_ns = cols.unit.parse_ns(t_text).map_err(|m| {
            field_error(src, &record, t_col, &cols.timestamp, m).with_help(format!(
                "timestamps in this column are read as {}",
                unit_help(cols.unit)
            ))
        })?;
        if let Some((prev, prev_mark)) = last
            && time_ns < prev
        {
            return Err(field_error(
                src,
                &record,
                t_col,
                &cols.timestamp,
                format!(
                    "`{t_text}` is earlier than the timestamp on line {}",
                    marked_line(src, prev_mark)
                ),
            )
            .with_help("the rows of a trace must be sorted by arrival time"));
        }
        last = Some((time_ns, record_mark(&record)));
        let tokens = |c: Option<usize>, name: &Option<String>| -> Result<u32, InputError> {
            match (c, name) {
                (Some(i), Some(n)) => parse_tokens(record.get(i).unwrap_or(""))
                    .map_err(|m| field_error(src, &record, i, n, m)),
                _ => Ok(0),
            }
        };
        let input_tokens = tokens(in_col, &cols.input_tokens)?;
        let output_tokens = tokens(out_col, &cols.output_tokens)?;
        // With token columns, a row of 0 and 0 is a request that asks and answers nothing: a
        // placeholder or a logging fault, which would otherwise be served as a free request.
        if let Some((c, name)) = in_col
            .zip(cols.input_tokens.as_ref())
            .or(out_col.zip(cols.output_tokens.as_ref()))
            && input_tokens == 0
            && output_tokens == 0
        {
            return Err(
                field_error(src, &record, c, name, NO_TOKENS.to_string()).with_help(NO_TOKENS_HELP)
            );
        }
        records.push(TraceRecord {
            time_ns,
            input_tokens,
            output_tokens,
        });
    }
    if records.is_empty() {
        return Err(src
            .error_at(
                record_span(&src.text, &record),
                "",
                "the trace has no requests",
            )
            .with_help("expected a header line, then one request per line"));
    }
    Ok(records)
}

const NO_TOKENS: &str = "a request with 0 input and 0 output tokens";
const NO_TOKENS_HELP: &str = "every request of a trace with token counts carries at least one token; remove the row or fix its counts";

fn unit_help(unit: TimeUnit) -> &'static str {
    match unit {
        TimeUnit::Seconds => "seconds (timestamp_unit = \"s\")",
        TimeUnit::Millis => "milliseconds (timestamp_unit = \"ms\")",
        TimeUnit::Micros => "microseconds (timestamp_unit = \"us\")",
        TimeUnit::DateTime => "date-times YYYY-MM-DD HH:MM:SS[.fffffff]",
    }
}

/// One line of the Mooncake trace; other keys are skipped.
#[derive(Deserialize)]
struct MooncakeLine {
    /// Arrival time since the start of the trace [ms].
    timestamp: f64,
    input_length: u32,
    output_length: u32,
    /// Hashes of the prompt's 512-token blocks (see [`super::prefix`]); optional, but on every
    /// line or on none.
    #[serde(default)]
    hash_ids: Option<Vec<u64>>,
}

/// Parse the Mooncake JSONL trace: one JSON object per line; blank lines are skipped. The
/// prefix blocks come back when the lines carry `hash_ids`.
fn parse_mooncake(
    src: &SourceFile,
) -> Result<(Vec<TraceRecord>, Option<PrefixBlocks>), InputError> {
    if let Some(e) = empty_file_error(src, "the trace has no requests") {
        return Err(e.with_help("expected one JSON object per line"));
    }
    let mut records = Vec::new();
    let mut last: Option<(i64, usize)> = None;
    let mut blocks = PrefixBlocksBuilder::default();
    // Whether the first line had `hash_ids`, and its line number.
    let mut with_ids: Option<(bool, usize)> = None;
    for (line_no, (offset, line)) in lines_with_offsets(&src.text).enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row: MooncakeLine = serde_json::from_str(line).map_err(|e| {
            let col = e.column().saturating_sub(1).min(line.len());
            src.error_at(Some(offset + col..offset + col + 1), "", format!("malformed JSON line: {e}"))
                .with_help(
                    "each line is {\"timestamp\": <ms>, \"input_length\": <tokens>, \"output_length\": <tokens>, …}",
                )
        })?;
        let span = || {
            let at = line.find("\"timestamp\"").unwrap_or(0);
            Some(offset + at..offset + at + "\"timestamp\"".len())
        };
        let time_ns =
            to_ns(row.timestamp, 1e6).map_err(|m| src.error_at(span(), "timestamp", m))?;
        if let Some((prev, prev_line)) = last
            && time_ns < prev
        {
            return Err(src
                .error_at(
                    span(),
                    "timestamp",
                    format!(
                        "{} ms is earlier than the timestamp on line {prev_line}",
                        row.timestamp
                    ),
                )
                .with_help("the lines of a trace must be sorted by arrival time"));
        }
        last = Some((time_ns, line_no + 1));
        let length_span = |key: &str| {
            let at = line.find(key).unwrap_or(0);
            Some(offset + at..offset + at + key.len())
        };
        for (key, n) in [
            ("\"input_length\"", row.input_length),
            ("\"output_length\"", row.output_length),
        ] {
            check_tokens(n)
                .map_err(|m| src.error_at(length_span(key), key.trim_matches('"'), m))?;
        }
        if row.input_length == 0 && row.output_length == 0 {
            return Err(src
                .error_at(length_span("\"input_length\""), "input_length", NO_TOKENS)
                .with_help(NO_TOKENS_HELP));
        }
        let here = row.hash_ids.is_some();
        let (first, first_line) = *with_ids.get_or_insert((here, line_no + 1));
        if here != first {
            let (has, lacks) = if first {
                (first_line, line_no + 1)
            } else {
                (line_no + 1, first_line)
            };
            return Err(src
                .error_at(
                    length_span("\"input_length\""),
                    "hash_ids",
                    format!("line {has} has `hash_ids` and line {lacks} has none"),
                )
                .with_help("give `hash_ids` on every line of the trace or on none"));
        }
        if let Some(ids) = &row.hash_ids {
            let want = row.input_length.div_ceil(MOONCAKE_BLOCK_TOKENS) as usize;
            if ids.len() != want {
                return Err(src
                    .error_at(length_span("\"hash_ids\""), "hash_ids", format!(
                        "{} block ids for {} input tokens, where blocks of {MOONCAKE_BLOCK_TOKENS} tokens make {want}",
                        ids.len(),
                        row.input_length
                    ))
                    .with_help(format!(
                        "Mooncake traces give one id per {MOONCAKE_BLOCK_TOKENS}-token prompt block: ⌈input_length / {MOONCAKE_BLOCK_TOKENS}⌉ ids"
                    )));
            }
            blocks.push(ids).ok_or_else(|| {
                src.error_at(
                    length_span("\"hash_ids\""),
                    "hash_ids",
                    "more than 4,294,967,295 block ids in one trace",
                )
                .with_help("split the trace")
            })?;
        }
        records.push(TraceRecord {
            time_ns,
            input_tokens: row.input_length,
            output_tokens: row.output_length,
        });
    }
    if records.is_empty() {
        return Err(src
            .error_at(None, "", "the trace has no requests")
            .with_help("expected one JSON object per line"));
    }
    let blocks = matches!(with_ids, Some((true, _))).then(|| blocks.finish(MOONCAKE_BLOCK_TOKENS));
    Ok((records, blocks))
}

/// How a trace is replayed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplayOptions {
    /// Replay this many times faster than recorded (timestamps divided by it), > 0.
    pub speedup: f64,
    /// Repeat the trace back to back to fill the design window.
    pub looped: bool,
    /// Shift the trace so its first request arrives at time 0 (else it keeps its recorded time
    /// since the format's epoch, which must then be ≥ 0).
    pub start_at_zero: bool,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            speedup: 1.0,
            looped: true,
            start_at_zero: true,
        }
    }
}

/// A trace with its replay options and growth: the measured-trace kind of traffic.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceTraffic {
    pub trace: Trace,
    pub options: ReplayOptions,
    pub growth: Growth,
}

impl TraceTraffic {
    /// The replay speed of `year`: `speedup · G(y)`.
    pub fn speed(&self, year: u32) -> f64 {
        self.options.speedup * self.growth.factor(year)
    }

    fn offset_ns(&self) -> i64 {
        if self.options.start_at_zero {
            0
        } else {
            self.trace.first_ns.max(0)
        }
    }

    /// The replay of `year` over `[0, window_s)` [ns since the window's start].
    pub fn replay(&self, year: u32, window_s: f64, seed: u64, replication: u64) -> TraceReplay<'_> {
        let window_ns = (clamp_window(window_s) * 1e9).round() as u64;
        TraceReplay {
            trace: &self.trace,
            speed: self.speed(year),
            looped: self.options.looped,
            offset_ns: self.offset_ns(),
            window_ns,
            copy: 0,
            index: 0,
            group_start: 0,
            group_end: 0,
            spread: Vec::new(),
            rng: rng::stream(seed, replication, rng::streams::ARRIVALS),
            done: window_ns == 0,
        }
    }

    /// Requests of the replay with (scaled) arrival time < `x_s` (recorded times, no spreading).
    fn count_before(&self, year: u32, x_s: f64, looped: bool) -> f64 {
        let period = self.trace.period_ns() as f64;
        let x = x_s * 1e9 * self.speed(year) - self.offset_ns() as f64;
        if x.is_nan() || x <= 0.0 || period <= 0.0 {
            return 0.0;
        }
        let n = self.trace.len() as f64;
        let copies = (x / period).floor();
        if !looped && copies >= 1.0 {
            return n;
        }
        let rest = x - copies * period;
        copies * n + self.trace.count_before_in_copy(rest) as f64
    }

    /// The design window of `year`: the busiest `window_s` of the replay at the year's speed
    /// (counted across the loop), so no hour of the year is busier than the traffic the fleet is
    /// planned on.
    pub fn design_window(&self, year: u32, window_s: f64) -> DesignWindow {
        let duration_s = clamp_window(window_s);
        let speed = self.speed(year);
        let (start_ns, count) = self
            .trace
            .busiest_stretch(duration_s * 1e9 * speed, self.options.looped);
        DesignWindow {
            year,
            start_s: start_ns as f64 / 1e9 / speed,
            duration_s,
            mean_rps: if duration_s > 0.0 {
                count as f64 / duration_s
            } else {
                0.0
            },
        }
    }

    /// The design traffic of `year`: the replay over its busiest `window_s` (see
    /// [`design_window`](Self::design_window)), times from the window's start \[ns\].
    pub fn design_replay(
        &self,
        year: u32,
        window_s: f64,
        seed: u64,
        replication: u64,
    ) -> TraceReplay<'_> {
        let speed = self.speed(year);
        let (start_ns, _) = self
            .trace
            .busiest_stretch(clamp_window(window_s) * 1e9 * speed, self.options.looped);
        let mut r = self.replay(year, window_s, seed, replication);
        r.index = self.trace.rel_ns.partition_point(|&x| x < start_ns);
        r.offset_ns = -start_ns;
        r
    }

    /// Mean rate of each hour of `year`, the trace repeated over the year [req/s].
    pub fn hourly_rates(&self, year: u32) -> Vec<f64> {
        super::hourly_from_cumulative(|t_s| self.count_before(year, t_s, true))
    }

    /// Requests in `year`, the trace repeated over the year.
    pub fn requests_per_year(&self, year: u32) -> f64 {
        self.count_before(year, YEAR_S, true)
    }

    /// The busiest fixed 1-minute bin of one copy at the year's speed, per second [req/s].
    pub fn peak_rps(&self, year: u32) -> f64 {
        let speed = self.speed(year);
        let scaled = self.trace.requests().map(|r| Request {
            arrival_ns: (r.arrival_ns as f64 / speed).round() as u64,
            ..r
        });
        match TrafficStats::from_requests(scaled) {
            Ok(s) => s.peak_1min as f64 / 60.0,
            // At an extreme speed all requests can fall on one nanosecond.
            Err(_) => self.trace.len() as f64 / 60.0,
        }
    }

    /// One line for reports.
    pub fn description(&self) -> String {
        let t = &self.trace;
        let mut s = format!(
            "trace {} ({}): {} requests over {:.1} s ({} req/s as recorded)",
            t.name,
            t.format.label(),
            t.len(),
            t.span_s(),
            super::fmt_rate((t.len() - 1) as f64 / t.span_s())
        );
        if self.options.speedup != 1.0 {
            s.push_str(&format!(", replayed {}× faster", self.options.speedup));
        }
        s.push_str(if self.options.looped {
            ", looped"
        } else {
            ", played once"
        });
        if self.growth.per_year != 0.0 {
            s.push_str(&format!(
                "; growth {:.1} %/year as a faster replay",
                self.growth.per_year * 100.0
            ));
        }
        s
    }

    /// Caveats for reports.
    pub fn notes(&self) -> Vec<String> {
        let t = &self.trace;
        let mut v = Vec::new();
        if let Some(step) = t.spread_step_s() {
            v.push(format!(
                "the trace's timestamps come in steps of about {step:.1} s; the requests of each step are spread uniformly at random (seeded) over the step, as a Poisson process would place them, instead of arriving together"
            ));
        }
        if let Some(p) = &t.prefix {
            v.push(format!(
                "the trace names each request's {}-token prompt blocks ({} distinct): with prefix caching a replica skips the prefill of leading blocks it still holds; a looped replay repeats the same prompts, which an LRU cache smaller than one copy's blocks does not notice",
                p.block_tokens(),
                p.distinct_blocks()
            ));
        }
        if let TraceFormat::Csv(c) = &t.format {
            if c.input_tokens.is_none() {
                v.push("the trace has no input-token column: requests carry 0 input tokens".into());
            }
            if c.output_tokens.is_none() {
                v.push(
                    "the trace has no output-token column: requests carry 0 output tokens".into(),
                );
            }
        }
        v.push(format!(
            "yearly figures repeat the {:.1}-minute trace back to back over the whole year",
            t.period_s() / 60.0
        ));
        if self.growth.per_year != 0.0 {
            v.push(
                "growth replays the trace faster each year ((1+g)^(y−1) times): the same requests, closer together"
                    .into(),
            );
        }
        v
    }
}

/// The arrivals of a trace replay (see [`TraceTraffic::replay`]).
#[derive(Debug)]
pub struct TraceReplay<'a> {
    trace: &'a Trace,
    speed: f64,
    looped: bool,
    offset_ns: i64,
    window_ns: u64,
    copy: u64,
    index: usize,
    /// The group of requests sharing a timestamp whose spread offsets are in `spread`.
    group_start: usize,
    group_end: usize,
    spread: Vec<i64>,
    rng: Xoshiro256PlusPlus,
    done: bool,
}

impl TraceReplay<'_> {
    /// Spread offsets for the group starting at `self.index`: sorted uniforms over its step.
    fn spread_group(&mut self, step_ns: i64) {
        let t = self.trace;
        let end = t.group_end(self.index);
        let to_next = t
            .rel_ns
            .get(end)
            .map_or(step_ns, |&next| next - t.rel_ns[self.index]);
        let width = to_next.min(step_ns).max(0) as f64;
        self.spread.clear();
        for _ in self.index..end {
            let u: f64 = self.rng.random();
            self.spread.push((u * width) as i64);
        }
        self.spread.sort_unstable();
        self.group_start = self.index;
        self.group_end = end;
    }
}

impl Iterator for TraceReplay<'_> {
    type Item = Request;

    fn next(&mut self) -> Option<Request> {
        if self.done {
            return None;
        }
        let n = self.trace.len();
        if self.index >= n {
            if !self.looped {
                self.done = true;
                return None;
            }
            self.copy += 1;
            self.index = 0;
            self.group_end = 0;
        }
        let i = self.index;
        let jitter = match self.trace.spread_step_ns {
            Some(step) => {
                if i >= self.group_end || i < self.group_start {
                    self.spread_group(step);
                }
                self.spread[i - self.group_start]
            }
            None => 0,
        };
        let t = self.offset_ns as i128
            + self.copy as i128 * self.trace.period_ns() as i128
            + self.trace.rel_ns[i] as i128
            + jitter as i128;
        let arrival_ns = if self.speed == 1.0 {
            u64::try_from(t).unwrap_or(u64::MAX)
        } else {
            (t as f64 / self.speed).round() as u64
        };
        if arrival_ns >= self.window_ns {
            self.done = true;
            return None;
        }
        self.index += 1;
        Some(Request {
            arrival_ns,
            input_tokens: self.trace.input_tokens[i],
            output_tokens: self.trace.output_tokens[i],
            prefix: self.trace.prefix_ref(i),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::YEAR_HOURS;

    #[test]
    fn the_design_window_is_the_busiest_stretch_across_the_loop() {
        // Requests at 0, 1, 2 s, a lull, then 8.5, 9, 9.5 s; a copy lasts 9.5 s + the mean gap
        // (1.9 s) = 11.4 s, so the next copy's first request comes at 11.4 s.
        let t = trace(&[0, 1000, 2000, 8500, 9000, 9500], false);
        assert_eq!(t.period_ns(), 11_400_000_000);
        // Played once, the busiest 3 s hold 3 requests ([0, 3) comes first); looped, [8.5, 11.5)
        // also catches the next copy's first request: 4.
        assert_eq!(t.busiest_stretch(3e9, false), (0, 3));
        assert_eq!(t.busiest_stretch(3e9, true), (8_500_000_000, 4));
        // A window longer than a copy counts whole copies, then the busiest stretch of what is
        // left: 2 copies (22.8 s) + 2.2 s holding 3 (from 0 s; from 8.5 s it holds 3 too).
        assert_eq!(t.busiest_stretch(25e9, true), (0, 2 * 6 + 3));
        // 1 copy + 3.6 s: the remainder is best placed at 8.5 s, catching 8.5, 9, 9.5 and 11.4.
        assert_eq!(t.busiest_stretch(15e9, true), (8_500_000_000, 6 + 4));
        let tt = traffic(t, ReplayOptions::default(), 0.0);
        let w = tt.design_window(1, 3.0);
        assert!((w.start_s - 8.5).abs() < 1e-9 && (w.mean_rps - 4.0 / 3.0).abs() < 1e-12);
        // The design replay starts there, its times measured from the window's start.
        assert_eq!(
            times(tt.design_replay(1, 3.0, 0, 0)),
            vec![0, 500, 1000, 2900]
        );
    }

    fn trace(times_ms: &[i64], spread: bool) -> Trace {
        let records = times_ms
            .iter()
            .enumerate()
            .map(|(i, &t)| TraceRecord {
                time_ns: t * 1_000_000,
                input_tokens: i as u32,
                output_tokens: 1,
            })
            .collect();
        Trace::from_records("t".into(), TraceFormat::Mooncake, records, spread).unwrap()
    }

    fn traffic(t: Trace, options: ReplayOptions, g: f64) -> TraceTraffic {
        TraceTraffic {
            trace: t,
            options,
            growth: Growth { per_year: g },
        }
    }

    fn times(it: impl Iterator<Item = Request>) -> Vec<u64> {
        it.map(|r| r.arrival_ns / 1_000_000).collect()
    }

    #[test]
    fn loops_back_to_back_with_the_mean_gap_between_copies() {
        // 4 requests over 300 ms: mean gap 100 ms, period 400 ms.
        let tt = traffic(
            trace(&[1000, 1100, 1250, 1300], false),
            ReplayOptions::default(),
            0.0,
        );
        assert_eq!(tt.trace.period_s(), 0.4);
        let v = times(tt.replay(1, 1.0, 0, 0));
        assert_eq!(v, vec![0, 100, 250, 300, 400, 500, 650, 700, 800, 900]);
        // Tokens follow their request through the copies.
        let toks: Vec<u32> = tt.replay(1, 1.0, 0, 0).map(|r| r.input_tokens).collect();
        assert_eq!(toks, vec![0, 1, 2, 3, 0, 1, 2, 3, 0, 1]);
    }

    #[test]
    fn speedup_growth_no_loop_and_recorded_start() {
        let t = trace(&[1000, 1100, 1250, 1300], false);
        let once = ReplayOptions {
            looped: false,
            ..Default::default()
        };
        assert_eq!(
            times(traffic(t.clone(), once, 0.0).replay(1, 10.0, 0, 0)),
            vec![0, 100, 250, 300]
        );
        // Speedup 2 and growth 100 %/year: year 2 plays 4× faster.
        let fast = ReplayOptions {
            speedup: 2.0,
            ..once
        };
        assert_eq!(
            times(traffic(t.clone(), fast, 1.0).replay(2, 10.0, 0, 0)),
            vec![0, 25, 62, 75]
        );
        let recorded = ReplayOptions {
            start_at_zero: false,
            ..once
        };
        assert_eq!(
            times(traffic(t, recorded, 0.0).replay(1, 10.0, 0, 0)),
            vec![1000, 1100, 1250, 1300]
        );
    }

    #[test]
    fn yearly_counts_match_the_looped_replay() {
        let tt = traffic(
            trace(&[0, 100, 250, 300], false),
            ReplayOptions::default(),
            0.3,
        );
        // 4 requests every 0.4 s = 10 req/s in year 1, 13 in year 2.
        assert!((tt.requests_per_year(1) - 10.0 * YEAR_S).abs() < 1.0);
        assert!((tt.requests_per_year(2) - 13.0 * YEAR_S).abs() < 1.0);
        let hourly = tt.hourly_rates(2);
        assert_eq!(hourly.len(), YEAR_HOURS);
        let total: f64 = hourly.iter().sum::<f64>() * 3600.0;
        assert!((total - tt.requests_per_year(2)).abs() < 1e-6 * total);
        // The design window counts what the replay yields.
        let w = tt.design_window(2, 60.0);
        let n = tt.replay(2, 60.0, 0, 0).count() as f64;
        assert!(
            (w.mean_rps * 60.0 - n).abs() < 1e-9,
            "{} vs {n}",
            w.mean_rps * 60.0
        );
    }

    #[test]
    fn spread_keeps_requests_inside_their_step_and_in_order() {
        // Two steps of 3 s with 3 and 2 requests.
        let tt = traffic(
            trace(&[0, 0, 0, 3000, 3000], true),
            ReplayOptions::default(),
            0.0,
        );
        assert_eq!(tt.trace.spread_step_s(), Some(3.0));
        assert_eq!(tt.trace.period_s(), 6.0);
        let v: Vec<u64> = tt.replay(1, 12.0, 5, 0).map(|r| r.arrival_ns).collect();
        assert_eq!(v.len(), 10);
        assert!(v.windows(2).all(|w| w[0] <= w[1]));
        for (k, &t) in v.iter().enumerate() {
            let step = [0, 0, 0, 1, 1][k % 5] + 2 * (k / 5) as u64;
            assert!(
                (step * 3_000_000_000..(step + 1) * 3_000_000_000).contains(&t),
                "{k}: {t}"
            );
        }
        // Seeded: the same seed gives the same spread, another seed another.
        let again: Vec<u64> = tt.replay(1, 12.0, 5, 0).map(|r| r.arrival_ns).collect();
        let other: Vec<u64> = tt.replay(1, 12.0, 6, 0).map(|r| r.arrival_ns).collect();
        assert_eq!(v, again);
        assert_ne!(v, other);
    }

    #[test]
    fn degenerate_traces_are_refused() {
        let one = vec![TraceRecord {
            time_ns: 5,
            input_tokens: 1,
            output_tokens: 1,
        }];
        assert!(Trace::from_records("t".into(), TraceFormat::Azure, one, false).is_err());
        assert!(Trace::from_records("t".into(), TraceFormat::Azure, vec![], false).is_err());
    }

    #[test]
    fn zero_window_gives_nothing() {
        let tt = traffic(trace(&[0, 100], false), ReplayOptions::default(), 0.0);
        assert_eq!(tt.replay(1, 0.0, 0, 0).count(), 0);
        assert_eq!(tt.replay(1, f64::NAN, 0, 0).count(), 0);
    }
}
