//! Measured results of a proof-of-concept run, read for `tco-sim calibrate --from` (issue 10).
//!
//! Three formats, told apart by their content, never by the file name alone:
//!
//! - **MLPerf LoadGen `mlperf_log_summary.txt`** (`MLPerf Results Summary` in its header):
//!   Offline `Samples per second`, or Server `Scheduled samples per second` with
//!   `target_latency (ns)` (the bound on the 99th percentile, MLPerf Inference rules §3) and the
//!   latency percentiles; an LLM Server summary (`ttft_latency (ns)` in place of
//!   `target_latency`) `Completed samples per second` under its p99 TTFT and TPOT bounds, over
//!   its `min_duration`. An LLM summary's tokens per second give its output tokens per
//!   request. `Result is : INVALID` is refused unless the caller allows it. The
//!   summary does not name the model; the MLCommons results tree does
//!   (`results/<system>/<model>/<scenario>/performance/run_1/`), so the model is the folder
//!   of the path that names an MLPerf benchmark.
//! - **vLLM `benchmark_serving.py --save-result` JSON**: one object, or one per line (as its
//!   `--append-result` writes). A run at `request_rate = "inf"` measures the saturated throughput
//!   (`request_throughput`); a run at a finite Poisson rate measures median TTFT and TPOT at that
//!   rate; a closed-loop run (`max_concurrency` = C, `request_rate = "inf"`) measures the
//!   throughput and the median TTFT and TPOT with C requests in flight. Token counts per
//!   request are the file's own (`total_input_tokens / completed`).
//! - **CSV** (docs/calibrate.md): a header with `model`, `batch` or `concurrency`,
//!   `throughput_rps`, and optionally `p50_ms`, `p90_ms`, `p99_ms`. A `concurrency` row is a
//!   closed-loop measurement (C requests in flight, no think time).
//!
//! Every error names the file and, where there is one, the line (and shows it).

use std::collections::BTreeMap;
use std::path::Path;

use crate::input::{InputError, SourceFile};

/// Which format a file was read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    MlperfSummary,
    VllmJson,
    Csv,
}

impl Format {
    pub fn label(self) -> &'static str {
        match self {
            Format::MlperfSummary => "MLPerf LoadGen summary",
            Format::VllmJson => "vLLM benchmark_serving JSON",
            Format::Csv => "tco-sim calibration CSV",
        }
    }
}

/// Which latency of a generative request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenLatency {
    Ttft,
    Tpot,
}

/// What one measured point says.
#[derive(Debug, Clone, PartialEq)]
pub enum Observed {
    /// Requests per second one unit sustains: at full load (`batch` and `concurrency` both
    /// `None`), at a fixed batch per device, or with `concurrency` requests kept in flight.
    Throughput {
        rps: f64,
        batch: Option<u32>,
        concurrency: Option<u32>,
    },
    /// The highest Poisson rate \[req/s\] whose `percentile` of end-to-end latency stays within
    /// `bound_s` (MLPerf Server).
    RateUnderBound {
        rps: f64,
        bound_s: f64,
        percentile: f64,
    },
    /// The highest Poisson rate \[req/s\] whose 99th percentiles of TTFT and TPOT stay within
    /// `ttft_s` and `tpot_s` (MLPerf LLM Server), LoadGen having run at least `duration_s`.
    RateUnderTokenBounds {
        rps: f64,
        ttft_s: f64,
        tpot_s: f64,
        duration_s: f64,
    },
    /// The median of a token latency \[s\] at a Poisson rate \[req/s\] (vLLM at a finite rate).
    MedianAtRate {
        rate: f64,
        metric: TokenLatency,
        value_s: f64,
    },
    /// The median of a token latency \[s\] with `concurrency` requests kept in flight (vLLM
    /// `--max-concurrency`, closed loop).
    MedianAtConcurrency {
        concurrency: u32,
        metric: TokenLatency,
        value_s: f64,
    },
}

impl Observed {
    /// The measured figure in the unit the table shows (req/s or ms).
    pub fn figure(&self) -> f64 {
        match self {
            Observed::Throughput { rps, .. }
            | Observed::RateUnderBound { rps, .. }
            | Observed::RateUnderTokenBounds { rps, .. } => *rps,
            Observed::MedianAtRate { value_s, .. }
            | Observed::MedianAtConcurrency { value_s, .. } => value_s * 1e3,
        }
    }
}

/// One measured point, where it was read, and what it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub file: String,
    /// 1-based line of the figure in its file.
    pub line: usize,
    /// A short description for the before/after table, e.g. `Server p99 <= 15 ms`.
    pub label: String,
    pub observed: Observed,
    /// Mean prompt and output tokens per request of a generative run.
    pub tokens: Option<(f64, f64)>,
    /// Mean output tokens per request an MLPerf LLM summary implies (its tokens per second over
    /// its samples per second) and the line of its tokens figure: the summary does not give the
    /// prompt, so the scenario's lengths are used, and this is checked against them.
    pub output_per_request: Option<(f64, usize)>,
    /// Every running sequence's token was handed out at every step of the measured run, so its
    /// host cost (`efficiency.stream_overhead_us`) was paid: a serving benchmark's client (vLLM,
    /// a CSV of a serving run) and MLPerf's LLM Server harnesses (NVIDIA's turns streaming on for
    /// every scenario but Offline, AMD's queues every step's tokens: data/accuracy.toml, "MLPerf's
    /// LLM Server harnesses stream"). LoadGen Offline runs in process and returns each answer
    /// whole.
    pub streamed: bool,
}

/// A file of measurements.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFile {
    pub file: String,
    pub format: Format,
    /// The model as the file (or its path) names it.
    pub model: String,
    /// The line naming the model, when the file has one.
    pub model_line: Option<usize>,
    /// When it was measured, if the file says (`YYYY-MM-DD`).
    pub date: Option<String>,
    pub points: Vec<Point>,
}

/// The MLPerf benchmark folder names and the tco-sim model they measure (the model name a
/// scenario's workload must carry). BERT in MLPerf runs SQuAD at sequence 384, which the
/// `bert-large` preset (sequence 128) is not, so it maps to a model that must say 384.
const MLPERF_MODELS: &[(&str, &str)] = &[
    ("resnet50", "ResNet-50"),
    ("bert-99", "BERT-large (sequence 384)"),
    ("bert-99.9", "BERT-large (sequence 384)"),
    ("llama2-70b-99", "Llama-2-70B"),
    ("llama2-70b-99.9", "Llama-2-70B"),
    ("gptj-99", "GPT-J"),
    ("gptj-99.9", "GPT-J"),
    ("retinanet", "RetinaNet"),
    ("3d-unet-99", "3D-UNet"),
    ("3d-unet-99.9", "3D-UNet"),
    ("dlrm-v2-99", "DLRM-v2"),
    ("dlrm-v2-99.9", "DLRM-v2"),
    ("stable-diffusion-xl", "Stable Diffusion XL"),
    ("mixtral-8x7b", "Mixtral-8x7B"),
];

/// Read a file of measurements. `allow_invalid` accepts an MLPerf run LoadGen judged INVALID.
pub fn read(path: &Path, allow_invalid: bool) -> Result<RunFile, InputError> {
    let src = SourceFile::read(path)?;
    parse(&src, allow_invalid)
}

/// Parse measurements held in memory; `src.name` is the path the model may be read from.
pub fn parse(src: &SourceFile, allow_invalid: bool) -> Result<RunFile, InputError> {
    let text = src.text.trim_start();
    if src.text.contains("MLPerf Results Summary") {
        mlperf(src, allow_invalid)
    } else if text.starts_with('{') {
        vllm(src)
    } else if text
        .lines()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .is_some_and(|h| h.contains("throughput_rps"))
    {
        csv(src)
    } else {
        Err(InputError::new("unknown format of measurements")
            .in_file(&src.name)
            .with_help(
                "valid: an MLPerf LoadGen mlperf_log_summary.txt, a vLLM benchmark_serving.py --save-result JSON, or a CSV with a throughput_rps column (docs/calibrate.md)",
            ))
    }
}

/// The byte range of 1-based line `n` of `text`.
fn line_span(text: &str, n: usize) -> std::ops::Range<usize> {
    let mut start = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == n {
            return start..start + l.trim_end().len().max(1);
        }
        start += l.len();
    }
    start..start
}

pub(crate) fn at_line(src: &SourceFile, line: usize, field: &str, message: String) -> InputError {
    src.error_at(Some(line_span(&src.text, line)), field, message)
}

fn missing(src: &SourceFile, field: &str, help: &str) -> InputError {
    InputError::new(format!("{field} is missing"))
        .in_file(&src.name)
        .with_help(help.to_string())
}

/// A finite number > 0, or a located error.
fn positive(src: &SourceFile, line: usize, field: &str, raw: &str) -> Result<f64, InputError> {
    match raw.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(at_line(
            src,
            line,
            field,
            format!("`{}` is not a positive number", raw.trim()),
        )
        .with_help("valid: a finite number > 0")),
    }
}

fn mlperf(src: &SourceFile, allow_invalid: bool) -> Result<RunFile, InputError> {
    // `key : value` lines; the first occurrence of a key wins.
    let mut kv: BTreeMap<String, (String, usize)> = BTreeMap::new();
    for (i, l) in src.text.lines().enumerate() {
        if let Some((k, v)) = l.split_once(':') {
            kv.entry(k.trim().to_string())
                .or_insert_with(|| (v.trim().to_string(), i + 1));
        }
    }
    let get = |k: &str| kv.get(k).cloned();
    let (scenario, sc_line) = get("Scenario").ok_or_else(|| {
        missing(
            src,
            "Scenario",
            "valid: a LoadGen summary has `Scenario : Offline` or `Scenario : Server`",
        )
    })?;
    let (result, r_line) = get("Result is")
        .ok_or_else(|| missing(src, "Result is", "valid: `Result is : VALID` (or INVALID)"))?;
    if result != "VALID" {
        if result != "INVALID" {
            return Err(at_line(
                src,
                r_line,
                "Result is",
                format!("`{result}` is not a LoadGen verdict"),
            )
            .with_help("valid: VALID or INVALID"));
        }
        if !allow_invalid {
            return Err(at_line(
                src,
                r_line,
                "Result is",
                "LoadGen judged this run INVALID (a constraint was not met), so its figure is not what the system sustains".into(),
            )
            .with_help("rerun at a target LoadGen accepts, or pass --allow-invalid to fit it anyway"));
        }
    }
    let model = model_from_path(&src.name).ok_or_else(|| {
        InputError::new("the summary does not say which model was measured, and no folder of its path names an MLPerf benchmark")
            .in_file(&src.name)
            .with_help(format!(
                "keep the MLCommons layout …/<model>/<Offline|Server>/performance/run_1/mlperf_log_summary.txt; valid model folders: {}",
                MLPERF_MODELS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
            ))
    })?;
    // A required positive figure and its line.
    let number = |key: &str, help: &str| -> Result<(f64, usize), InputError> {
        let (v, line) = get(key).ok_or_else(|| missing(src, key, help))?;
        Ok((positive(src, line, key, &v)?, line))
    };
    let point = |line, label, observed, output_per_request| Point {
        file: src.name.clone(),
        line,
        label,
        observed,
        tokens: None,
        output_per_request,
        // LoadGen's harnesses stream every token in Server, none in Offline.
        streamed: scenario == "Server",
    };
    let point = match scenario.as_str() {
        "Offline" => {
            let (rps, line) = number(
                "Samples per second",
                "valid: an Offline summary states `Samples per second: N`",
            )?;
            point(
                line,
                "Offline samples/s".into(),
                Observed::Throughput {
                    rps,
                    batch: None,
                    concurrency: None,
                },
                // An LLM summary also counts the output tokens.
                output_per_request(src, &get, "Tokens per second", rps)?,
            )
        }
        // An LLM Server summary (MLPerf Inference v4.0 on): LoadGen bounds the 99th percentiles
        // of the first-token latency and the time per output token, and its result is the
        // completed samples per second.
        "Server" if get("ttft_latency (ns)").is_some() => {
            let (rps, line) = number(
                "Completed samples per second",
                "valid: an LLM Server summary states `Completed samples per second : N`",
            )?;
            let bound = |key: &str| -> Result<f64, InputError> {
                let help = format!(
                    "valid: the Test Parameters Used section of an LLM Server summary states `{key}: N`"
                );
                Ok(number(key, &help)?.0 / 1e9)
            };
            let (ttft_s, tpot_s) = (bound("ttft_latency (ns)")?, bound("tpot_latency (ns)")?);
            let duration_s = number(
                "min_duration (ms)",
                "valid: the Test Parameters Used section states `min_duration (ms): N`",
            )?
            .0 / 1e3;
            point(
                line,
                format!(
                    "Server p99 TTFT {} / TPOT {} ms",
                    crate::format::plain(ttft_s * 1e3),
                    crate::format::plain(tpot_s * 1e3)
                ),
                Observed::RateUnderTokenBounds {
                    rps,
                    ttft_s,
                    tpot_s,
                    duration_s,
                },
                output_per_request(src, &get, "Completed tokens per second", rps)?,
            )
        }
        "Server" => {
            let (rps, line) = number(
                "Scheduled samples per second",
                "valid: a Server summary states `Scheduled samples per second : N`",
            )?;
            let bound_s = number(
                "target_latency (ns)",
                "valid: the Test Parameters Used section states `target_latency (ns): N` (an LLM summary states `ttft_latency (ns)` and `tpot_latency (ns)` instead)",
            )?
            .0 / 1e9;
            point(
                line,
                format!("Server p99 <= {} ms", crate::format::plain(bound_s * 1e3)),
                Observed::RateUnderBound {
                    rps,
                    bound_s,
                    percentile: 99.0,
                },
                None,
            )
        }
        other => {
            return Err(at_line(
                src,
                sc_line,
                "Scenario",
                format!("scenario `{other}` measures no throughput the fit can use"),
            )
            .with_help("valid: Offline or Server"));
        }
    };
    Ok(RunFile {
        file: src.name.clone(),
        format: Format::MlperfSummary,
        model: model.into(),
        model_line: None,
        date: None,
        points: vec![point],
    })
}

/// Output tokens per request of an LLM summary: its `key` tokens per second over its samples
/// per second `rps`, with the line of the tokens figure; `None` for a summary without tokens.
fn output_per_request(
    src: &SourceFile,
    get: &impl Fn(&str) -> Option<(String, usize)>,
    key: &str,
    rps: f64,
) -> Result<Option<(f64, usize)>, InputError> {
    get(key)
        .map(|(v, line)| Ok((positive(src, line, key, &v)? / rps, line)))
        .transpose()
}

/// The tco-sim model of the first folder of `path` that names an MLPerf benchmark.
fn model_from_path(path: &str) -> Option<&'static str> {
    path.split(['/', '\\']).find_map(|c| {
        MLPERF_MODELS
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(c))
            .map(|(_, m)| *m)
    })
}

fn vllm(src: &SourceFile) -> Result<RunFile, InputError> {
    // One object for the whole file, or one per line.
    let objects: Vec<(usize, serde_json::Value)> =
        match serde_json::from_str::<serde_json::Value>(&src.text) {
            Ok(v) => vec![(1, v)],
            Err(_) => src
                .text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .map(|(i, l)| {
                    serde_json::from_str(l).map(|v| (i + 1, v)).map_err(|e| {
                        at_line(src, i + 1, "", format!("not valid JSON: {e}")).with_help(
                            "valid: one benchmark_serving.py result object, or one per line",
                        )
                    })
                })
                .collect::<Result<_, _>>()?,
        };
    let mut model: Option<(String, usize)> = None;
    let mut date = None;
    let mut points = Vec::new();
    for (line, o) in &objects {
        let line = *line;
        let num =
            |k: &str| -> Result<f64, InputError> {
                match o.get(k) {
                    Some(serde_json::Value::Number(n)) => n
                        .as_f64()
                        .filter(|v| v.is_finite() && *v > 0.0)
                        .ok_or_else(|| {
                            at_line(src, line, k, format!("{k} = {n} is not a positive number"))
                                .with_help("valid: a finite number > 0")
                        }),
                    Some(v) => Err(at_line(src, line, k, format!("{k} = {v} is not a number"))
                        .with_help("valid: a finite number > 0")),
                    None => Err(at_line(src, line, k, format!("{k} is missing")).with_help(
                        format!("valid: a benchmark_serving.py --save-result object has `{k}`"),
                    )),
                }
            };
        let id = match o.get("model_id") {
            Some(serde_json::Value::String(s)) => s.clone(),
            _ => {
                return Err(at_line(src, line, "model_id", "model_id is missing".into())
                    .with_help(
                        "valid: the model's name, e.g. \"meta-llama/Meta-Llama-3-8B-Instruct\"",
                    ));
            }
        };
        match &model {
            Some((m, l)) if *m != id => {
                return Err(at_line(
                    src,
                    line,
                    "model_id",
                    format!("this result measures `{id}`, line {l} measures `{m}`"),
                )
                .with_help("valid: one model per file"));
            }
            Some(_) => {}
            None => model = Some((id, line)),
        }
        if date.is_none()
            && let Some(serde_json::Value::String(d)) = o.get("date")
            && d.len() >= 8
            && d[..8].bytes().all(|b| b.is_ascii_digit())
        {
            date = Some(format!("{}-{}-{}", &d[..4], &d[4..6], &d[6..8]));
        }
        let completed = num("completed")?;
        let tokens = (
            num("total_input_tokens")? / completed,
            num("total_output_tokens")? / completed,
        );
        let concurrency = match o.get("max_concurrency") {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::Number(n))
                if n.as_u64().is_some_and(|c| (1..=1_000_000).contains(&c)) =>
            {
                n.as_u64().map(|c| c as u32)
            }
            Some(c) => {
                return Err(at_line(
                    src,
                    line,
                    "max_concurrency",
                    format!("max_concurrency = {c} is not a whole number of requests"),
                )
                .with_help("valid: null (open loop) or a whole number from 1 to 1,000,000"));
            }
        };
        let rate = match o.get("request_rate") {
            Some(serde_json::Value::String(s)) if s == "inf" => None,
            Some(serde_json::Value::Number(_)) => Some(num("request_rate")?),
            _ => {
                return Err(at_line(
                    src,
                    line,
                    "request_rate",
                    "request_rate is missing or not a number".into(),
                )
                .with_help("valid: a number > 0, or \"inf\" (every request sent at once)"));
            }
        };
        match (rate, concurrency) {
            (Some(r), Some(c)) => {
                return Err(at_line(
                    src,
                    line,
                    "max_concurrency",
                    format!(
                        "this run is both paced (request_rate = {}) and capped at {c} requests in flight, which is neither an open nor a closed loop the fit can simulate",
                        crate::format::plain(r)
                    ),
                )
                .with_help("fit a closed-loop run (request_rate \"inf\" with max_concurrency) or a Poisson run (max_concurrency null)"));
            }
            (None, Some(c)) => {
                points.push(Point {
                    file: src.name.clone(),
                    line,
                    label: format!("vLLM req/s at concurrency {c}"),
                    observed: Observed::Throughput {
                        rps: num("request_throughput")?,
                        batch: None,
                        concurrency: Some(c),
                    },
                    tokens: Some(tokens),
                    output_per_request: None,
                    streamed: true,
                });
                for (key, metric, name) in [
                    ("median_ttft_ms", TokenLatency::Ttft, "TTFT"),
                    ("median_tpot_ms", TokenLatency::Tpot, "TPOT"),
                ] {
                    points.push(Point {
                        file: src.name.clone(),
                        line,
                        label: format!("vLLM median {name} ms at concurrency {c}"),
                        observed: Observed::MedianAtConcurrency {
                            concurrency: c,
                            metric,
                            value_s: num(key)? / 1e3,
                        },
                        tokens: Some(tokens),
                        output_per_request: None,
                        streamed: true,
                    });
                }
            }
            (None, None) => points.push(Point {
                file: src.name.clone(),
                line,
                label: "vLLM saturated req/s".into(),
                observed: Observed::Throughput {
                    rps: num("request_throughput")?,
                    batch: None,
                    concurrency: None,
                },
                tokens: Some(tokens),
                output_per_request: None,
                streamed: true,
            }),
            (Some(rate), None) => {
                for (key, metric, name) in [
                    ("median_ttft_ms", TokenLatency::Ttft, "TTFT"),
                    ("median_tpot_ms", TokenLatency::Tpot, "TPOT"),
                ] {
                    points.push(Point {
                        file: src.name.clone(),
                        line,
                        label: format!(
                            "vLLM median {name} ms at {} req/s",
                            crate::format::plain(rate)
                        ),
                        observed: Observed::MedianAtRate {
                            rate,
                            metric,
                            value_s: num(key)? / 1e3,
                        },
                        tokens: Some(tokens),
                        output_per_request: None,
                        streamed: true,
                    });
                }
            }
        }
    }
    let (model, model_line) =
        model.ok_or_else(|| missing(src, "model_id", "valid: at least one result object"))?;
    Ok(RunFile {
        file: src.name.clone(),
        format: Format::VllmJson,
        model,
        model_line: Some(model_line),
        date,
        points,
    })
}

fn csv(src: &SourceFile) -> Result<RunFile, InputError> {
    let mut rows = src
        .text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let (h_line, header) = rows.next().map(|(i, l)| (i + 1, l)).unwrap_or((1, ""));
    let cols: Vec<String> = header.split(',').map(|c| c.trim().to_string()).collect();
    let col = |name: &str| cols.iter().position(|c| c == name);
    const KNOWN: [&str; 7] = [
        "model",
        "batch",
        "concurrency",
        "throughput_rps",
        "p50_ms",
        "p90_ms",
        "p99_ms",
    ];
    if let Some(bad) = cols.iter().find(|c| !KNOWN.contains(&c.as_str())) {
        return Err(
            at_line(src, h_line, "header", format!("unknown column `{bad}`"))
                .with_help(format!("valid columns: {}", KNOWN.join(", "))),
        );
    }
    let need = |name: &str| {
        col(name).ok_or_else(|| {
            at_line(
                src,
                h_line,
                "header",
                format!("the `{name}` column is missing"),
            )
            .with_help(
                "valid header: model,batch|concurrency,throughput_rps[,p50_ms,p90_ms,p99_ms]",
            )
        })
    };
    let m_col = need("model")?;
    let t_col = need("throughput_rps")?;
    let (b_col, c_col) = (col("batch"), col("concurrency"));
    if b_col.is_some() == c_col.is_some() {
        return Err(at_line(
            src,
            h_line,
            "header",
            "give exactly one of the `batch` and `concurrency` columns".into(),
        )
        .with_help("batch: requests per batch on each device; concurrency: requests kept in flight on the unit"));
    }
    let mut model: Option<(String, usize)> = None;
    let mut points = Vec::new();
    for (i, l) in rows {
        let line = i + 1;
        let cells: Vec<&str> = l.split(',').map(str::trim).collect();
        if cells.len() != cols.len() {
            return Err(at_line(
                src,
                line,
                "",
                format!("{} cells, the header has {}", cells.len(), cols.len()),
            )
            .with_help("valid: one cell per header column"));
        }
        let m = cells[m_col].to_string();
        match &model {
            Some((first, fl)) if *first != m => {
                return Err(at_line(
                    src,
                    line,
                    "model",
                    format!("`{m}` differs from `{first}` on line {fl}"),
                )
                .with_help("valid: one model per file"));
            }
            Some(_) => {}
            None => model = Some((m, line)),
        }
        let whole = |c: usize, name: &str| -> Result<u32, InputError> {
            cells[c]
                .parse::<u32>()
                .ok()
                .filter(|v| (1..=crate::hardware::MAX_BATCH.max(1_000_000)).contains(v))
                .ok_or_else(|| {
                    at_line(
                        src,
                        line,
                        name,
                        format!("`{}` is not a whole number ≥ 1", cells[c]),
                    )
                    .with_help("valid: a whole number from 1 to 1,000,000")
                })
        };
        let batch = b_col.map(|c| whole(c, "batch")).transpose()?;
        let concurrency = c_col.map(|c| whole(c, "concurrency")).transpose()?;
        let rps = positive(src, line, "throughput_rps", cells[t_col])?;
        for name in ["p50_ms", "p90_ms", "p99_ms"] {
            if let Some(c) = col(name)
                && !cells[c].is_empty()
            {
                positive(src, line, name, cells[c])?;
            }
        }
        points.push(Point {
            file: src.name.clone(),
            line,
            label: match (batch, concurrency) {
                (Some(b), _) => format!("batch {b} req/s"),
                (_, Some(c)) => format!("concurrency {c} req/s"),
                _ => "req/s".into(),
            },
            observed: Observed::Throughput {
                rps,
                batch,
                concurrency,
            },
            tokens: None,
            output_per_request: None,
            streamed: true,
        });
    }
    let (model, model_line) = model.ok_or_else(|| {
        at_line(src, h_line, "", "no data rows".into())
            .with_help("valid: at least one row under the header")
    })?;
    Ok(RunFile {
        file: src.name.clone(),
        format: Format::Csv,
        model,
        model_line: Some(model_line),
        date: None,
        points,
    })
}

/// A model name reduced to letters and digits, lowercase, without an organisation prefix, a
/// `Meta-` prefix, a fine-tuning suffix, a checkpoint version after the size or the tuning
/// (`-v0.1`) or a parenthesised note: `meta-llama/Meta-Llama-3-8B-Instruct` and `Llama-3-8B`
/// both become `llama38b`, `mistralai/Mistral-7B-Instruct-v0.2` and `Mistral-7B` `mistral7b`.
/// A version that names the model itself (`DeepSeek-V3`) stays.
pub fn model_key(name: &str) -> String {
    let base = name.rsplit('/').next().unwrap_or(name);
    let base = base.split('(').next().unwrap_or(base);
    let mut s: String = base
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    if let Some(rest) = s.strip_prefix("meta")
        && rest.starts_with("llama")
    {
        s = rest.to_string();
    }
    // A trailing `v<digits>` is a checkpoint's version when it follows the size (`7b`) or a
    // tuning suffix, as Mistral's checkpoints are named.
    if let Some(at) = s.rfind('v')
        && at + 1 < s.len()
        && s[at + 1..].bytes().all(|b| b.is_ascii_digit())
    {
        let head = &s[..at];
        let after_size =
            head.ends_with('b') && head[..head.len() - 1].ends_with(|c: char| c.is_ascii_digit());
        if after_size || head.ends_with("instruct") || head.ends_with("chat") {
            s.truncate(at);
        }
    }
    for suffix in ["instruct", "chathf", "chat", "hf"] {
        if let Some(rest) = s.strip_suffix(suffix) {
            s = rest.to_string();
        }
    }
    s
}

/// Whether a measured model is the workload's model. A parenthesised note of the measured name
/// (`(sequence 384)`) must appear in the workload's name too.
pub fn same_model(measured: &str, workload: &str) -> bool {
    if model_key(measured) != model_key(workload) {
        return false;
    }
    match measured.split_once('(') {
        Some((_, note)) => {
            let want: String = note.chars().filter(char::is_ascii_digit).collect();
            let have: String = workload
                .split_once('(')
                .map(|(_, n)| n.chars().filter(char::is_ascii_digit).collect())
                .unwrap_or_default();
            want.is_empty() || want == have
        }
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_match_across_spellings() {
        assert!(same_model(
            "meta-llama/Meta-Llama-3-8B-Instruct",
            "Llama-3-8B"
        ));
        assert!(same_model(
            "meta-llama/Llama-3.2-3B-Instruct",
            "Llama-3.2-3B"
        ));
        assert!(same_model("ResNet-50", "ResNet-50 (224x224)"));
        assert!(!same_model("ResNet-50", "BERT-base (sequence 128)"));
        assert!(!same_model(
            "BERT-large (sequence 384)",
            "BERT-large (sequence 128)"
        ));
        assert!(!same_model("Llama-3-8B", "Llama-2-70B"));
        // Mistral's checkpoints carry a version after the size or the tuning.
        assert!(same_model(
            "mistralai/Mistral-7B-Instruct-v0.2",
            "Mistral-7B"
        ));
        assert!(same_model("mistralai/Mistral-7B-v0.1", "Mistral-7B"));
        assert!(same_model("meta-llama/Llama-2-13b-chat-hf", "Llama-2-13B"));
        assert!(!same_model("mistralai/Mistral-7B-v0.1", "Llama-2-7B"));
        // A version that is the model's name is kept: V2 is not V3.
        assert!(!same_model("deepseek-ai/DeepSeek-V3", "DeepSeek-V2"));
    }

    #[test]
    fn the_model_comes_from_the_mlcommons_folder() {
        assert_eq!(
            model_from_path(
                "closed/NVIDIA/results/X/resnet50/Server/performance/run_1/mlperf_log_summary.txt"
            ),
            Some("ResNet-50")
        );
        assert_eq!(model_from_path("x/summary.txt"), None);
    }

    #[test]
    fn lines_are_located() {
        let t = "a\nbb\nccc\n";
        assert_eq!(&t[line_span(t, 2)], "bb");
        assert_eq!(&t[line_span(t, 3)], "ccc");
    }
}
